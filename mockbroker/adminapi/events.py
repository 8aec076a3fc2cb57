"""The event types of ``GET /events``, each declared once with what it says.

The core emits only these (:mod:`mockbroker.core.observe.events` refuses a filter naming any
other); the views, the OpenAPI document and the event wait list them from here.  A plain dict
in a module of its own: the core imports it as the broker starts, before any view is built.
"""

#: event type -> what it says, and the fields it carries
EVENT_TYPES = {
    "group_state": "a group changed state or generation (group, group_type, from, to, "
                   "generation, previous_generation, and its cause)",
    "member_joined": "a member joined a group (group, member_id, client_id, client_host, "
                     "group_instance_id)",
    "member_left": "a member left its group by itself: LeaveGroup, or a consumer-protocol "
                   "heartbeat leaving (group, member_id, client_id, reason)",
    "member_expired": "a member was removed because a deadline passed (its session, the "
                      "rebalance or the sync), or by the admin API (group, member_id, reason)",
    "member_removed": "a member was removed otherwise: replaced by a static member, fenced, "
                      "or its group deleted (group, member_id, reason)",
    "assignment": "a group's assignment changed (group, generation, assignments: "
                  "{member_id: {topic: [partitions]}})",
    "offsets_committed": "a group committed offsets that changed (group, offsets: "
                         "{topic: {partition: offset}}, transactional)",
    "topic_created": "a topic was created (topic, partitions)",
    "partitions_created": "a topic grew (topic, partitions: the new count)",
    "topic_deleted": "a topic was deleted (topic)",
    "segments_deleted": "retention deleted old log segments of a partition (topic, "
                        "partition, segments, log_start_offset, previous_log_start_offset)",
    "broker_stopped": "a broker went down (broker, controlled: a controlled shutdown, not a "
                      "crash)",
    "broker_started": "a broker came back (broker)",
    "broker_unregistered": "UnregisterBroker removed a broker from the cluster (broker)",
    "schema_registered": "the Schema Registry registered a new version of a subject (subject, "
                         "version, id, schema_type)",
    "schema_incompatible": "the Schema Registry refused a schema as incompatible with an "
                           "earlier version (subject, compatibility)",
    "schema_deleted": "a version of a subject was deleted (subject, version, permanent)",
    "subject_deleted": "a subject was deleted (subject, permanent)",
    "controller_unregistered": "UnregisterController removed a controller's registration "
                               "(controller; a running one registers again at once)",
    "leader_changed": "a partition got a new leader or leader epoch (topic, partition, leader, "
                      "previous_leader, leader_epoch, unclean: elected from outside the ISR)",
    "isr_changed": "a partition's ISR or eligible leader replicas changed (topic, partition, "
                   "isr, elr, leader)",
    "log_truncated": "a leader elected from outside the ISR ended the log before its end: "
                     "records lost (topic, partition, offset: the new end, offsets_lost)",
    "reassignment_started": "a partition reassignment started (topic, partition, target, "
                            "adding, removing)",
    "reassignment_completed": "a partition reassignment completed (topic, partition, "
                              "replicas)",
    "reassignment_cancelled": "a partition reassignment was cancelled (topic, partition, "
                              "replicas)",
    "coordinator_moved": "a group, transaction or share coordinator moved with the leader of "
                         "its internal partition (kind: group, transaction or share, partition, "
                         "broker, previous_broker)",
    "share_acquired": "a share group member acquired records (group, topic, partition, "
                      "member_id, ranges: [[first, last], ...])",
    "share_acknowledged": "a share group member acknowledged records (group, topic, partition, "
                          "member_id, batches: [[first, last, [types]], ...]; types 0 gap, "
                          "1 accept, 2 release, 3 reject, 4 renew)",
    "share_released": "a share group member's records went back when its share session ended "
                      "(group, topic, partition, member_id, ranges, archived: those at the "
                      "delivery limit)",
    "share_lock_expired": "acquisition locks of a share partition expired (group, topic, "
                          "partition, ranges, archived: those at the delivery limit)",
    "share_dead_lettered": "records a share group gave up on (rejected, or at the delivery "
                           "limit) went to its dead-letter queue, and are archived (group, "
                           "topic, partition, ranges, reason, queue: the queue's topic, error: "
                           "why the queue refused them, or null)",
    "client_quotas_altered": "client quotas were set or removed (entities: [{user, client-id "
                             "or ip: name, null for the default}])",
    "features_updated": "UpdateFeatures set finalized feature levels (features: {name: level}, "
                        "epoch: the finalized features' epoch now)",
    "delegation_token_created": "a delegation token was created (token_id, owner, requester, "
                                "renewers, expiry_timestamp_ms, max_timestamp_ms)",
    "delegation_token_renewed": "a delegation token was renewed (token_id, owner, "
                                "expiry_timestamp_ms: the new expiry)",
    "delegation_token_expired": "ExpireDelegationToken brought a token's expiry forward "
                                "(token_id, owner, expiry_timestamp_ms)",
    "delegation_token_removed": "a delegation token was removed: expired at once, or past its "
                                "expiry at the periodic check (token_id, owner, "
                                "expiry_timestamp_ms, reason)",
    "quorum_leader_changed": "the KRaft controller quorum has a new leader, or none (leader: -1), "
                             "in a new epoch (leader, previous_leader, leader_epoch)",
    "telemetry_pushed": "a client pushed its metrics to the telemetry receiver "
                        "(client_instance_id, client_id, broker, metrics: the data points it "
                        "held, terminating: its last push before it closes)",
    "rule_fired": "a control rule (fault) acted on a request (rule, action, api, broker, "
                  "client_id, error)",
    "transaction_state": "a transactional id changed state (transactional_id, from, to, "
                         "producer_id, producer_epoch)",
    "transaction_begun": "a transaction started (transactional_id, producer_id, "
                         "producer_epoch)",
    "transaction_committed": "a transaction committed (transactional_id, partitions)",
    "transaction_aborted": "a transaction aborted (transactional_id, partitions, fenced: "
                           "by its timeout, an admin or a new producer)",
    "clock_advanced": "the manual clock moved forward (ms, now_ms)",
    "reset": "the cluster was reset (POST /reset)",
}
