"""One module per API, and the table of what the broker serves.

:data:`SERVED` says, for each API key, which module handles it and which versions it serves;
ApiVersions is built from it.  A handler module registers its function on :data:`REGISTRY` with
``@REGISTRY.handler(API_KEY, ...)``, and is imported the first time its API is asked for: a
broker that is only asked for Metadata and Produce never loads the transaction handlers.  The
registry checks each range against the codec when its module loads, and the tests load them all,
so a version the codec cannot read is never advertised.

A handler is ``handle(core, ctx, request) -> response | Deferred | Close | None``: it translates
between wire messages and calls on :class:`mockbroker.core.dispatch.Core`; the logic lives in
the core.  The core is given this registry (:func:`new_core`); it never imports the handlers.
Handlers may import the core and the codec, never the I/O layer, and never one another: what
two of them share lives in the core or in :mod:`._common` (import-linter contracts).
"""

from mockbroker.handlers.registry import ApiRegistry, Served

#: API key → the module that handles it and the versions it serves
SERVED = {
    # advertised from 0 as Kafka 4 does, served from 3 (see the Produce handler)
    0: Served("produce", 3, 13, advertised_min=0),
    1: Served("fetch", 4, 18),
    2: Served("list_offsets", 1, 11),
    3: Served("metadata", 0, 13),
    8: Served("offset_commit", 2, 10),
    9: Served("offset_fetch", 1, 10),
    10: Served("find_coordinator", 0, 6),
    11: Served("join_group", 0, 9),
    12: Served("heartbeat", 0, 4),
    13: Served("leave_group", 0, 5),
    14: Served("sync_group", 0, 5),
    15: Served("describe_groups", 0, 6),
    16: Served("list_groups", 0, 5),
    17: Served("sasl_handshake", 0, 1),
    18: Served("api_versions", 0, 5),
    19: Served("create_topics", 2, 7),
    20: Served("delete_topics", 1, 6),
    21: Served("delete_records", 0, 2),
    22: Served("init_producer_id", 0, 5),
    23: Served("offset_for_leader_epoch", 2, 4),
    24: Served("add_partitions_to_txn", 0, 5),
    25: Served("add_offsets_to_txn", 0, 4),
    26: Served("end_txn", 0, 5),
    27: Served("write_txn_markers", 1, 2),
    28: Served("txn_offset_commit", 0, 6),
    29: Served("describe_acls", 1, 3),
    30: Served("create_acls", 1, 3),
    31: Served("delete_acls", 1, 3),
    32: Served("describe_configs", 1, 4),
    33: Served("alter_configs", 0, 2),
    34: Served("alter_replica_log_dirs", 1, 2),
    35: Served("describe_log_dirs", 1, 5),
    36: Served("sasl_authenticate", 0, 2),
    37: Served("create_partitions", 0, 3),
    38: Served("create_delegation_token", 1, 3),
    39: Served("renew_delegation_token", 1, 2),
    40: Served("expire_delegation_token", 1, 2),
    41: Served("describe_delegation_token", 1, 3),
    42: Served("delete_groups", 0, 3),
    43: Served("elect_leaders", 0, 2),
    44: Served("incremental_alter_configs", 0, 1),
    45: Served("alter_partition_reassignments", 0, 1),
    46: Served("list_partition_reassignments", 0, 0),
    47: Served("offset_delete", 0, 0),
    48: Served("describe_client_quotas", 0, 1),
    49: Served("alter_client_quotas", 0, 1),
    50: Served("describe_user_scram_credentials", 0, 0),
    51: Served("alter_user_scram_credentials", 0, 0),
    55: Served("describe_quorum", 0, 2),
    57: Served("update_features", 0, 2),
    60: Served("describe_cluster", 0, 2),
    61: Served("describe_producers", 0, 0),
    64: Served("unregister_broker", 0, 0),
    65: Served("describe_transactions", 0, 0),
    66: Served("list_transactions", 0, 2),
    68: Served("consumer_group_heartbeat", 0, 1),
    69: Served("consumer_group_describe", 0, 1),
    # advertised with a telemetry receiver only, as Kafka does (served either way)
    71: Served("get_telemetry_subscriptions", 0, 0, advertised_if="telemetry_receiver"),
    72: Served("push_telemetry", 0, 0, advertised_if="telemetry_receiver"),
    76: Served("share_group_heartbeat", 1, 1),
    77: Served("share_group_describe", 1, 1),
    78: Served("share_fetch", 1, 2),
    79: Served("share_acknowledge", 1, 2),
    80: Served("add_raft_voter", 0, 1),
    81: Served("remove_raft_voter", 0, 0),
    88: Served("streams_group_heartbeat", 0, 1),
    89: Served("streams_group_describe", 0, 1),
    90: Served("describe_share_group_offsets", 0, 1),
    91: Served("alter_share_group_offsets", 0, 0),
    92: Served("delete_share_group_offsets", 0, 0),
    93: Served("streams_group_topology_description_update", 0, 0),
    94: Served("unregister_controller", 0, 0),
    74: Served("list_config_resources", 0, 1),
    75: Served("describe_topic_partitions", 0, 0),
}

REGISTRY = ApiRegistry(SERVED, __name__)


def new_core(brokers, settings=None, clock=None, security=None, events=None):
    """A :class:`~mockbroker.core.dispatch.Core` that serves every API of this package."""
    from mockbroker.core.dispatch import Core

    return Core(brokers, settings, clock, registry=REGISTRY, security=security, events=events)
