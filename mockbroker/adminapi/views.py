"""What the admin API shows and takes, each resource described once.

Every resource is a frozen dataclass; its fields, in order, are the keys of its JSON object.
From these the server writes its answers (:func:`mockbroker.adminapi.jsonview.to_json`), the
OpenAPI document gets its component schemas (named after the class, without ``View``), and the
Python client reads answers back (:func:`~mockbroker.adminapi.jsonview.from_json`).  A field with a
default is optional in the schema (a client reading an older server's answer uses the default).

Adding a field is one line here (plus, for a view built from a core object with an attribute
of the same name, nothing else: see :mod:`mockbroker.core.observe.inspect`).

Standard library only: the stdlib-only admin client imports this module.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mockbroker.adminapi import actions
from mockbroker.adminapi.events import EVENT_TYPES
from mockbroker.adminapi.jsonview import describe

__all__ = [
    "AclView", "AclsView", "BrokerLatency", "BrokerView", "Deleted", "Error", "FaultSpec",
    "FaultView",
    "GroupLoadingView", "GroupSummaryView", "GroupView", "HeaderView", "LoggedRequestView",
    "MemberView", "NewTopic", "PartitionView", "RecordView", "Removed", "Status",
    "TargetBroker", "TopicView", "TransactionView", "UserView", "QuotaView", "QuotaSpec",
    "VIEWS",
    "EventView", "RebalanceView", "ClockView", "ClockAdvance", "GroupWait", "RecordsWait",
    "LagWait", "EventWait", "QuorumView", "QuorumReplicaView", "QuorumFailover",
    "ReplicaLagging", "SchemaReferenceView", "SchemaVersionView", "SubjectView",
    "SchemaRegistryView",
    "ClientSubscriptionView", "ClientView", "ClientMetricView",
]

BrokerState = Literal["up", "down"]
#: a classic group's state, in Kafka's names (``GroupState`` of the coordinator)
GroupState = Literal["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",
                     "Assigning", "Reconciling", "NotReady"]
#: "classic" (JoinGroup and SyncGroup), "consumer" (KIP-848, ConsumerGroupHeartbeat),
#: "share" (KIP-932, ShareGroupHeartbeat) or "streams" (KIP-1071, StreamsGroupHeartbeat)
GroupType = Literal["classic", "consumer", "share", "streams"]
#: what a rule does to a request it picks (the table of :mod:`mockbroker.adminapi.actions`)
FaultAction = Literal[actions.names()]  # type: ignore[valid-type]
#: what ``POST /faults`` may ask for: every action but the in-process callback
AddableAction = Literal[actions.http_names()]  # type: ignore[valid-type]
RequestOutcome = Literal["pending", "answered", "no response", "dropped", "disconnected",
                         "failed", "unsupported"]
TimestampType = Literal["CreateTime", "LogAppendTime"]
#: a transactional id's state, in Kafka's names (``TransactionState`` of the coordinator)
TransactionState = Literal["Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
                           "CompleteCommit", "CompleteAbort", "PrepareEpochFence", "Dead"]
#: what became of a transactional record's transaction
RecordTransaction = Literal["committed", "aborted", "pending"]
#: an ACL's parts, in Kafka's names (the enums of :mod:`mockbroker.core.security.acls`, less
#: the ANY, MATCH and UNKNOWN that only filters have)
AclResourceType = Literal["TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN",
                          "USER"]
AclPatternType = Literal["LITERAL", "PREFIXED"]
AclOperation = Literal["ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
                       "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                       "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
                       "TWO_PHASE_COMMIT"]
AclPermissionType = Literal["DENY", "ALLOW"]
#: the SASL mechanisms a user can hold credentials for (OAUTHBEARER takes tokens instead)
CredentialMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]

_view = dataclass(frozen=True, kw_only=True)


# -- brokers and topics ----------------------------------------------------------------------

@_view
class BrokerView:
    id: int
    host: str
    port: int
    rack: str | None = None
    state: BrokerState
    registered: bool = describe("known to the controller: UnregisterBroker removes it, until it "
                                "starts again", default=True)
    controller: bool = False
    latency_ms: int = describe("added to every answer of the broker", default=0)
    leader_partitions: int = describe("how many partitions it leads", default=0)
    listeners: dict[str, str] = describe(
        "HOST:PORT of each of its listeners, by name (its security protocol)",
        default_factory=dict)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@_view
class PartitionView:
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    log_start_offset: int
    high_watermark: int
    records: int = describe("high watermark - log start offset")
    last_stable_offset: int = describe(
        "what read_committed consumers may read up to: the first offset of the earliest open "
        "transaction, or the high watermark", default=-1)
    elr: list[int] = describe("eligible leader replicas (KIP-966): out of the ISR while it is "
                              "below min.insync.replicas, still safe to lead",
                              default_factory=list)
    adding: list[int] = describe("replicas a running reassignment adds", default_factory=list)
    removing: list[int] = describe("replicas a running reassignment removes",
                                   default_factory=list)
    lagging: list[int] = describe("replicas held back as lagging (PUT .../replicas/{broker_id})",
                                  default_factory=list)


@_view
class TopicView:
    name: str
    topic_id: str
    internal: bool
    configs: dict[str, str]
    partitions: list[PartitionView]


@_view
class HeaderView:
    key: str
    value: str | None = describe("UTF-8 text, or null when absent or not text")
    value_base64: str | None

    @property
    def raw(self) -> bytes | None:
        return None if self.value_base64 is None else base64.b64decode(self.value_base64)


@_view
class RecordView:
    """A record as stored; ``key``/``value`` are UTF-8 text (None when absent or not text),
    ``raw_key``/``raw_value`` the exact bytes."""

    partition: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: str | None = describe("UTF-8 text, or null when absent or not text")
    key_base64: str | None
    value: str | None = describe("UTF-8 text, or null when absent or not text")
    value_base64: str | None
    headers: list[HeaderView]
    transaction: RecordTransaction | None = describe(
        "for a record written in a transaction, whether it was committed, aborted, or is "
        "pending (null otherwise)", default=None)

    @property
    def raw_key(self) -> bytes | None:
        return None if self.key_base64 is None else base64.b64decode(self.key_base64)

    @property
    def raw_value(self) -> bytes | None:
        return None if self.value_base64 is None else base64.b64decode(self.value_base64)


# -- groups ----------------------------------------------------------------------------------

@_view
class InFlightView:
    """A run of a share partition's in-flight records in one state."""

    first_offset: int
    last_offset: int
    state: Literal["Available", "Acquired", "Acknowledged", "Archiving", "Archived"]
    delivery_count: int
    member_id: str | None = describe("the member holding them while acquired", default=None)
    lock_deadline_ms: int | None = describe(
        "when their acquisition lock expires, on the broker clock (while acquired)",
        default=None)


@_view
class SharePartitionView:
    """A share partition of a share group, as its leader holds it."""

    topic: str
    partition: int
    leader: int
    start_offset: int = describe("the share-partition start offset: every record before it "
                                 "is acknowledged or archived")
    end_offset: int = describe("the next offset the share group has not fetched yet")
    high_watermark: int
    lag: int = describe("records from the start offset to the high watermark not yet "
                        "acknowledged or archived")
    in_flight: list[InFlightView] = describe("the records between the start and end offsets")


@_view
class TasksView:
    """A streams member's tasks: {subtopology id: [task numbers]} in each role."""

    active: dict[str, list[int]]
    standby: dict[str, list[int]]
    warmup: dict[str, list[int]]


@_view
class StreamsMemberView:
    """What a streams group member is beyond any member: its process, topology epoch,
    endpoint, state and tasks."""

    process_id: str
    topology_epoch: int
    user_endpoint: str | None = describe("host:port of its interactive queries, if any")
    client_tags: dict[str, str]
    state: Literal["stable", "unrevoked_tasks", "unreleased_tasks", "unknown"] = describe(
        "how far it is from its target: unrevoked_tasks while it must give tasks up, "
        "unreleased_tasks while others still hold tasks it is to get")
    tasks: TasksView
    target_tasks: TasksView
    pending_revocation: TasksView


@_view
class InternalTopicView:
    """A topic a streams topology reads, writes or keeps state in, as configured."""

    name: str
    partitions: int = describe("as the topology asks or the broker worked out (0: not yet)")
    replication_factor: int = describe("0: the broker's default")
    configs: dict[str, str]
    exists: bool


@_view
class SubtopologyView:
    subtopology_id: str
    source_topics: list[str]
    repartition_sink_topics: list[str]
    repartition_source_topics: list[InternalTopicView]
    state_changelog_topics: list[InternalTopicView]
    tasks: int = describe("its number of tasks (0 until the topology is configured)")


@_view
class TopologyView:
    """A streams group's topology, configured against the topics there are."""

    epoch: int
    ready: bool = describe("configured: its topics exist and are partitioned as it needs")
    status: str | None = describe("why it is not ready, in Kafka's words", default=None)
    subtopologies: list[SubtopologyView]


@_view
class MemberView:
    member_id: str
    client_id: str
    client_host: str = ""
    group_instance_id: str | None
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = 0
    assignment: dict[str, list[int]] | None = describe(
        "{topic: [partitions]} for consumer groups (null if the group is not one)")
    assignment_base64: str = ""
    member_epoch: int | None = describe("consumer groups: the member's epoch", default=None)
    target_assignment: dict[str, list[int]] | None = describe(
        "consumer groups: {topic: [partitions]} the member is moving to", default=None)
    pending_revocation: dict[str, list[int]] | None = describe(
        "consumer groups: {topic: [partitions]} the member still has to give up",
        default=None)
    protocol: str | None = describe(
        "consumer groups: the protocol the member speaks, consumer (ConsumerGroupHeartbeat) "
        "or classic (JoinGroup and SyncGroup, a mixed group's member)", default=None)
    streams: StreamsMemberView | None = describe(
        "streams groups: the member's process, endpoint and tasks", default=None)


@_view
class GroupView:
    group_id: str
    state: GroupState
    type: GroupType = describe("classic, consumer (KIP-848), share (KIP-932) or streams "
                               "(KIP-1071)",
                               default="classic")
    group_epoch: int | None = describe("consumer groups: the group epoch", default=None)
    assignment_epoch: int | None = describe(
        "consumer groups: the epoch of the target assignment", default=None)
    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None
    coordinator: int = describe("the broker id of the group's coordinator")
    members: list[MemberView]
    offsets: dict[str, dict[int, int]] = describe("{topic: {partition: committed offset}}")
    offset_metadata: dict[str, dict[int, str]] = describe(
        "{topic: {partition: metadata of the committed offset}}", default_factory=dict)
    lag: dict[str, dict[int, int]] = describe(
        "{topic: {partition: high watermark - committed offset}}", default_factory=dict)
    share_partitions: list[SharePartitionView] | None = describe(
        "share groups: each share partition its leader serves, with its in-flight records",
        default=None)
    topology: TopologyView | None = describe(
        "streams groups: the topology, its internal topics and their configuration",
        default=None)

    def assignment(self) -> dict[str, dict[str, list[int]]]:
        """{member id: {topic: [partitions]}}."""
        return {m.member_id: m.assignment or {} for m in self.members}


@_view
class GroupLoadingView:
    """A group whose new coordinator is still loading it from ``__consumer_offsets``."""

    group_id: str
    coordinator: int
    state: Literal["loading"]


# -- transactions ----------------------------------------------------------------------------

@_view
class TransactionView:
    transactional_id: str
    state: TransactionState
    producer_id: int
    producer_epoch: int
    partitions: dict[str, list[int]] = describe(
        "{topic: [partitions]} of the transaction in progress (empty once it is complete)")
    timeout_ms: int
    coordinator: int = describe("the broker id of its transaction coordinator")
    start_ms: int = describe("when its current transaction started (-1: none yet)")
    age_ms: int | None = describe("how long its current transaction has run")
    last_update_ms: int
    pending_offsets: dict[str, dict[str, dict[str, int]]] = describe(
        "{group: {topic: {partition: offset}}} committed in the open transaction",
        default_factory=dict)


@_view
class GroupSummaryView:
    group_id: str
    state: GroupState
    type: GroupType = "classic"
    generation: int = 0
    protocol_type: str | None = None
    coordinator: int = -1
    members: int = describe("how many members it has", default=0)


# -- faults and the request log --------------------------------------------------------------

def _shown_target(name: str):
    """A rule's target parameter as a view shows it: described by the actions' table."""
    return describe(actions.target_description(name, default=False), default=None)


def _taken_target(name: str):
    """A target parameter as ``POST /faults`` takes it: described and bounded by the table."""
    param = actions.target(name)
    bounds = {} if param.minimum is None else {"minimum": param.minimum}
    return describe(actions.target_description(name), default=None, **bounds)


@_view
class FaultView:
    """A rule in force (a fault, a broker's latency, a control action); ``count`` is what is
    left (None: until removed)."""

    id: int
    action: FaultAction
    api: str | None = describe("Kafka API name; null: any")
    api_key: int | None
    registry: str | None = describe("the Schema Registry operation it picks (then no Kafka "
                                    "request)", default=None)
    subject: str | None = describe("the registry subject it picks", default=None)
    error: str | None = describe("Kafka error name (action error only)")
    error_code: int | None
    count: int | None = describe("firings left; null: until removed")
    after: int = describe("matching requests let through before it fires", default=0)
    fired: int
    broker: int | None
    topic: str | None
    partition: int | None
    group: str | None = describe("a group the request names", default=None)
    client_id: str | None
    principal: str | None = describe("the principal whose requests it picks (User:alice)",
                                     default=None)
    delay_ms: int
    throttle_ms: int = describe("action throttle: the throttle time it answers with",
                                default=0)
    probability: float
    chain: bool = describe("a delay that adds up with the next rule (a broker's latency)",
                           default=False)
    # the target parameters of the control actions (mockbroker.adminapi.actions)
    target_broker: int | None = _shown_target("target_broker")
    target_topic: str | None = _shown_target("target_topic")
    target_partition: int | None = _shown_target("target_partition")
    target_group: str | None = _shown_target("target_group")
    target_member: str | None = _shown_target("target_member")
    target_transaction: str | None = _shown_target("target_transaction")


@_view
class LoggedRequestView:
    """One request a broker received, with what became of it."""

    seq: int
    time_ms: int
    broker: int
    api: str
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    outcome: RequestOutcome
    error: str | None = describe("the first error code in the response, by name")
    error_code: int
    fault: int | None = describe("the rule (fault) that acted on it")
    rules: list[int] = describe("every rule that fired on it, chained delays included",
                                default_factory=list)
    principal: str = describe("who sent it: User:ANONYMOUS before or without authentication",
                              default="User:ANONYMOUS")
    listener: str = describe("the listener it came in on (its security protocol)",
                             default="PLAINTEXT")
    mechanism: str | None = describe("the SASL mechanism its connection authenticated with",
                                     default=None)


# -- security ----------------------------------------------------------------------------------

@_view
class AclView:
    """One ACL, as ``kafka-acls --list`` shows it."""

    resource_type: AclResourceType
    resource_name: str = describe("the name, a prefix of names (PREFIXED), or * (every name)")
    pattern_type: AclPatternType
    principal: str = describe("User:alice; User:* for every principal")
    host: str = describe("the client address it applies to; * for every host")
    operation: AclOperation
    permission_type: AclPermissionType


@_view
class AclsView:
    """The authorizer's state: without one (``authorizer`` false) every client may do
    everything, and there are no ACLs."""

    authorizer: bool = describe("whether an authorizer is configured")
    allow_everyone_if_no_acl_found: bool = describe(
        "what decides for a resource no ACL covers: allow (true) or deny (false)",
        default=False)
    super_users: list[str] = describe("principals that may do anything (User:admin)",
                                      default_factory=list)
    acls: list[AclView] = describe("in the order they were created")


@_view
class UserView:
    """A SASL user; never its password or keys."""

    name: str
    mechanisms: list[CredentialMechanism] = describe(
        "the mechanisms it has credentials for: PLAIN (a password), SCRAM-SHA-256 and "
        "SCRAM-SHA-512 (salted credentials)")
    super_user: bool = describe("whether User:<name> is a super user", default=False)


@_view
class QuotaView:
    """A client quota entity and its values, as DescribeClientQuotas shows them."""

    entity: dict[str, str | None] = describe(
        "user, client-id or ip -> its name; null names the default entity of that type")
    values: dict[str, float] = describe(
        "quota key (producer_byte_rate, consumer_byte_rate, request_percentage, "
        "controller_mutation_rate, connection_creation_rate) -> value")


@_view
class QuotaSpec:
    """What POST /quotas takes: an entity, and the values to set on it."""

    closed: ClassVar[bool] = True

    entity: dict[str, str | None] = describe(
        "user, client-id (both, or one) or ip -> name; null for the default entity",
        refused="{name} must map user, client-id or ip to a name or null")
    values: dict[str, float | None] = describe(
        "quota key -> value; null removes it", refused="{name} must map quota keys to numbers "
        "or null")


# -- client telemetry (KIP-714) ---------------------------------------------------------------

@_view
class ClientSubscriptionView:
    """What a client is subscribed to: the subscriptions matching it, as Kafka works it out."""

    subscription_id: int = describe("the id GetTelemetrySubscriptions gave it")
    names: list[str] = describe("the client metrics subscriptions that match it")
    metrics: list[str] = describe("the metric name prefixes it was asked for; [\"*\"] for "
                                  "all, [] for none")
    push_interval_ms: int


@_view
class ClientView:
    """A client instance that sent telemetry to the receiver (``telemetry_receiver``)."""

    client_instance_id: str = describe(
        "its id as Kafka writes it (URL-safe base64), as the Java client's "
        "clientInstanceId() prints it")
    client_id: str | None
    client_software_name: str | None = describe("from its ApiVersions (null if not given)")
    client_software_version: str | None
    client_source_address: str | None
    client_source_port: int | None
    broker: int = describe("the broker it last sent telemetry to")
    subscription: ClientSubscriptionView
    first_seen_ms: int = describe("its first telemetry request, on the broker clock")
    last_push_ms: int | None = describe("its last push, on the broker clock (null before "
                                        "the first)")
    pushes: int
    terminating: bool = describe("whether its last push was the one it sends as it closes")
    metrics: int = describe("how many metrics (each a name and attributes) it pushed")
    resource: dict[str, Any] = describe("the attributes it gave of itself (its OTLP "
                                        "resource)")


@_view
class ClientMetricView:
    """The latest value a client pushed of one metric (a name and its attributes)."""

    name: str
    type: Literal["gauge", "sum", "histogram", "exponential_histogram", "summary"]
    unit: str
    description: str
    attributes: dict[str, Any]
    value: Any = describe("a number for a gauge or a sum (a delta when temporality is delta; "
                          "null for a NaN); an object (count, sum, ...) for the others")
    total: Any = describe("for a sum pushed as deltas: the deltas of every push received, "
                          "added up", default=None)
    temporality: str | None = describe("delta or cumulative, for sums and histograms")
    monotonic: bool | None = describe("for sums: whether it only grows")
    time_ms: int = describe("when the client measured it, on its clock")
    start_time_ms: int
    pushed_ms: int = describe("when it was pushed, on the broker clock")


# -- small bodies ----------------------------------------------------------------------------

@_view
class Status:
    status: str


@_view
class Error:
    """The call was refused (4xx) or failed (5xx); nothing changed."""

    error: str = describe("what was wrong")


@_view
class Deleted:
    deleted: str = describe("the name of the deleted topic")


@_view
class Removed:
    removed: int = describe("how many faults were removed")


@_view
class NewTopic:
    closed: ClassVar[bool] = True

    name: str
    partitions: int | None = describe("default: num.partitions", default=None, minimum=1)
    replication_factor: int | None = describe("default: default.replication.factor",
                                              default=None, minimum=1)
    configs: dict[str, str | None] = describe(
        "topic configs by name (Kafka's names)", default_factory=dict,
        refused="{name} must map config names to string values")


@_view
class FaultSpec:
    """What POST /faults takes: which requests a rule picks and what it does to them (the
    control actions act on their targets, then the request is handled as usual)."""

    closed: ClassVar[bool] = True

    api: str | int | None = describe(
        "Kafka API name (Produce, JoinGroup, ...) or key; null: any", default=None)
    registry: str | None = describe(
        "instead of Kafka requests, pick Schema Registry calls of this operation (register, "
        "lookup, schema_by_id, version, ...; * for any): actions error (a Confluent error code "
        "such as 50001 or 40901), delay, drop and disconnect", default=None)
    subject: str | None = describe("with registry: pick calls about this subject",
                                   default=None)
    action: AddableAction | None = describe(
        "default: error when an error is given, else delay", default=None)
    error: str | int | None = describe(
        "Kafka error name (NOT_LEADER_OR_FOLLOWER) or code; used by action error only (with "
        "registry: a Confluent error code)", default=None)
    count: int | None = describe(
        "how many requests it picks (default 1); null: until removed", default=1, minimum=1)
    after: int = describe("let this many matching requests through first", default=0,
                          minimum=0)
    broker: int | None = describe("pick requests to this broker", default=None, minimum=0)
    topic: str | None = describe("pick requests that name this topic", default=None)
    partition: int | None = describe("and this partition of it", default=None, minimum=0)
    group: str | None = describe("pick requests that name this group", default=None)
    client_id: str | None = None
    principal: str | None = describe(
        "pick requests from this principal (User:alice, or alice); on SaslAuthenticate, the "
        "login of this principal", default=None)
    delay_ms: int = describe("wait before the action (the whole action for delay)",
                             default=0, minimum=0)
    throttle_ms: int = describe("the throttle time a throttle rule answers with (and mutes "
                                "the connection for)", default=0, minimum=0)
    probability: float = describe(default=1.0, exclusiveMinimum=0, maximum=1)
    chain: bool = describe("a delay that adds up with the next rule that picks the request",
                           default=False)
    # the target parameters of the control actions (mockbroker.adminapi.actions)
    target_broker: int | None = _taken_target("target_broker")
    target_topic: str | None = _taken_target("target_topic")
    target_partition: int | None = _taken_target("target_partition")
    target_group: str | None = _taken_target("target_group")
    target_member: str | None = _taken_target("target_member")
    target_transaction: str | None = _taken_target("target_transaction")


@_view
class BrokerLatency:
    closed: ClassVar[bool] = True

    delay_ms: int = describe("0 removes the latency", minimum=0)


@_view
class ReplicaLagging:
    closed: ClassVar[bool] = True

    lagging: bool = describe("true: the replica stops fetching and leaves the ISR though its "
                             "broker runs; false: it follows again and rejoins the ISR once "
                             "caught up")


@_view
class TargetBroker:
    closed: ClassVar[bool] = True

    broker: int = describe("the broker id to move to", minimum=0)


# -- the KRaft controller quorum ------------------------------------------------------------

QuorumStatus = Literal["Leader", "Follower", "Observer"]


@_view
class QuorumReplicaView:
    """A controller as the quorum's leader sees it (``kafka-metadata-quorum.sh describe
    --replication``)."""

    id: int
    directory_id: str = describe("its metadata log directory id in Kafka's base64 form; "
                                 "AAAAAAAAAAAAAAAAAAAAAA (zero) for a voter of a static quorum")
    status: QuorumStatus
    log_end_offset: int = describe("how far it has fetched the metadata log (-1: it has not "
                                   "fetched from this leader)")
    lag: int = describe("the leader's log end offset minus its own")
    last_fetch_timestamp: int = describe("ms since the epoch; -1 when not known")
    last_caught_up_timestamp: int = describe("ms since the epoch; -1 when not known")
    alive: bool = describe("whether its broker is up")
    endpoint: str | None = describe("LISTENER://HOST:PORT of a voter (its broker's address, "
                                    "as the mock has no controller listener)", default=None)


@_view
class SchemaReferenceView:
    name: str
    subject: str
    version: int


@_view
class SchemaVersionView:
    """One version of a subject in the Schema Registry."""

    version: int
    id: int
    schema_type: str = describe("AVRO, JSON or PROTOBUF")
    schema: str = describe("the schema's text as the registry stores it (canonical)")
    references: list[SchemaReferenceView] = describe(default_factory=list)
    deleted: bool = describe("soft-deleted (still readable by id)", default=False)


@_view
class SubjectView:
    subject: str
    compatibility: str | None = describe("the subject's own compatibility level; null: the "
                                         "global one applies")
    mode: str | None = describe("the subject's own mode; null: the global one applies")
    versions: list[SchemaVersionView] = describe("every version, soft-deleted ones included")


@_view
class SchemaRegistryView:
    """The Schema Registry: where it answers, its global config and mode, its subjects."""

    url: str
    compatibility: str
    mode: str
    subjects: list[SubjectView]


@_view
class QuorumView:
    """The KRaft controller quorum of the metadata log ``__cluster_metadata``."""

    leader_id: int = describe("-1 while no voter is up")
    leader_epoch: int
    high_watermark: int = describe("the metadata log's end offset: it moves when the "
                                   "metadata changes")
    kraft_version: int = describe("0: a static quorum (controller.quorum.voters)")
    voters: list[QuorumReplicaView] = describe("the leader first, then the others by id")
    observers: list[QuorumReplicaView]


@_view
class QuorumFailover:
    """Which voter takes the quorum's leadership over."""

    closed: ClassVar[bool] = True

    controller: int | None = describe("a live voter (default: the next live one after the "
                                      "leader, by id)", default=None, minimum=0)


# -- seeing it: events, rebalances, the clock, waits -----------------------------------------

#: an event's type, as a wait names it
EventType = Literal[tuple(EVENT_TYPES)]  # type: ignore[valid-type]


@_view
class EventView:
    """Something that happened (``GET /events``); besides these, the fields of its type, and
    what caused it: ``request`` and ``client_id``, ``timer``, ``admin`` or ``action``."""

    seq: int = describe("1, 2, 3, ... in order, for the life of the cluster")
    time_ms: int = describe("when, by the broker clock")
    type: str = describe("one of " + ", ".join(EVENT_TYPES))


@_view
class RebalanceView:
    """One rebalance of a group, rebuilt from the events still kept."""

    generation: int = describe("the generation (classic) or group epoch (consumer) it made")
    started_ms: int
    ended_ms: int | None = describe("null while under way")
    duration_ms: int | None = describe("null while under way")
    cause: str = describe("what started it: a request and its client, or a timer")
    outcome: str | None = describe("the state it ended in: Stable, or Empty")
    members: int = describe("members when it ended (or now)")
    joined: list[str] = describe("member ids that joined for it")
    left: list[str] = describe("member ids that left for it")
    expired: list[str] = describe("member ids whose session or rebalance timed out for it")


ClockMode = Literal["real", "manual"]


@_view
class ClockView:
    mode: ClockMode = describe("manual: time moves only by POST /clock/advance")
    now_ms: int = describe("the broker's time (ms since the epoch)")


@_view
class ClockAdvance:
    closed: ClassVar[bool] = True

    ms: int = describe("how far to move the manual clock", minimum=0)


#: the longest a wait may take (ten minutes)
MAX_WAIT_MS = 600_000


@_view
class GroupWait:
    """Wait until a group is in a state, with a number of members or an assignment."""

    closed: ClassVar[bool] = True

    group_id: str = describe(minLength=1)
    state: GroupState = describe("the state to wait for (Kafka's name)", default="Stable")
    members: int | None = describe("and exactly this many members", default=None, minimum=0)
    assignment: dict[str, list[int]] | None = describe(
        "and the members together assigned exactly these {topic: [partitions]}", default=None,
        refused="{name} must map topic names to lists of partitions")
    timeout_ms: int = describe(default=30_000, minimum=0, maximum=MAX_WAIT_MS)


@_view
class RecordsWait:
    """Wait until a topic holds at least a number of records."""

    closed: ClassVar[bool] = True

    topic: str = describe(minLength=1)
    records: int = describe("at least this many records (all partitions, transaction markers "
                            "not counted)", minimum=0)
    timeout_ms: int = describe(default=30_000, minimum=0, maximum=MAX_WAIT_MS)


@_view
class LagWait:
    """Wait until a group has consumed everything: every partition it has committed offsets
    for, or is assigned, has a committed offset at the high watermark."""

    closed: ClassVar[bool] = True

    group_id: str = describe(minLength=1)
    topic: str | None = describe("only this topic's partitions", default=None, minLength=1)
    timeout_ms: int = describe(default=30_000, minimum=0, maximum=MAX_WAIT_MS)


@_view
class EventWait:
    """Wait until an event matching a filter happens (or has happened, after ``since``)."""

    closed: ClassVar[bool] = True

    type: EventType | None = describe(
        "its type (default: any)", default=None,
        refused="unknown event type {value!r}; the types are {choices}")
    match: dict[str, str | int | float | bool | None] = describe(
        "fields it must have, with these values", default_factory=dict,
        refused="{name} must map field names to plain values")
    since: int = describe("only events after this seq (0: every event still kept)",
                          default=0, minimum=0)
    timeout_ms: int = describe(default=30_000, minimum=0, maximum=MAX_WAIT_MS)


#: every view and body, in the order the OpenAPI document lists them
VIEWS: tuple[type, ...] = (
    Error, Status, FaultSpec, FaultView, BrokerView, BrokerLatency, TargetBroker,
    PartitionView, TopicView, NewTopic, ReplicaLagging, Deleted, HeaderView, RecordView,
    TasksView, StreamsMemberView, InternalTopicView, SubtopologyView, TopologyView,
    MemberView, InFlightView, SharePartitionView, GroupView, GroupLoadingView,
    GroupSummaryView, LoggedRequestView, Removed,
    TransactionView, AclView, AclsView, UserView, QuotaView, QuotaSpec, EventView,
    RebalanceView, ClockView, ClockAdvance, GroupWait, RecordsWait, LagWait, EventWait,
    QuorumReplicaView, QuorumView, QuorumFailover, SchemaReferenceView, SchemaVersionView,
    SubjectView, SchemaRegistryView,
    ClientSubscriptionView, ClientView, ClientMetricView,
)
