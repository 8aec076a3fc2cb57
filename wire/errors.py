"""Kafka protocol error codes: the full table, lookups, and named constants.

This module owns the mapping between the 16-bit error codes carried in Kafka responses and
their meaning: Kafka's name for each code, whether Kafka's clients treat it as retriable, and a
short description of our own.  It covers every code from -1 to the highest one defined by Apache
Kafka 4.x (``org.apache.kafka.common.protocol.Errors``, read at 4.1.1; 4.3.0 defines the same
135 codes, 4.4.0 adds 134 to 136).

``retriable`` is true exactly when the Java exception Kafka maps the code to descends from
``org.apache.kafka.common.errors.RetriableException``.

Broker code uses the constants (``errors.REBALANCE_IN_PROGRESS``); tooling such as the
fault-injection API uses :func:`resolve_error` to accept either a code or a name.
"""

from __future__ import annotations

from typing import Final

from msgspec import Struct


class KafkaError(Struct, frozen=True):
    """One entry of the Kafka error table."""

    code: int
    name: str
    retriable: bool
    description: str


class UnknownKafkaError(KeyError):
    """A lookup for a code or name that is not in the table."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0]) if self.args else "unknown Kafka error"


# (code, Kafka name, retriable, description) -- ordered by code, no gaps.
_TABLE: Final[tuple[tuple[int, str, bool, str], ...]] = (
    (-1, "UNKNOWN_SERVER_ERROR", False, "The broker failed in a way it could not classify."),
    (0, "NONE", False, "Success: no error."),
    (1, "OFFSET_OUT_OF_RANGE", False, "The requested offset lies outside the partition's current log."),
    (2, "CORRUPT_MESSAGE", True, "Record data failed its CRC or size check, or is malformed."),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", True, "This broker knows no such topic or partition."),
    (4, "INVALID_FETCH_SIZE", False, "The fetch asked for a size the broker will not serve."),
    (5, "LEADER_NOT_AVAILABLE", True, "The partition has no leader right now, e.g. mid-election."),
    (6, "NOT_LEADER_OR_FOLLOWER", True, "This broker is not the leader, or not a replica, for the partition."),
    (7, "REQUEST_TIMED_OUT", True, "The broker stopped waiting for the request to finish."),
    (8, "BROKER_NOT_AVAILABLE", False, "The broker in question is not up."),
    (9, "REPLICA_NOT_AVAILABLE", True, "An expected replica is missing on the broker."),
    (10, "MESSAGE_TOO_LARGE", False, "A record or batch is bigger than the broker accepts."),
    (11, "STALE_CONTROLLER_EPOCH", False, "The sending controller's epoch is out of date."),
    (12, "OFFSET_METADATA_TOO_LARGE", False, "The metadata string on an offset commit is too long."),
    (13, "NETWORK_EXCEPTION", True, "The connection dropped before a response came back."),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", True, "The coordinator is still loading its state."),
    (15, "COORDINATOR_NOT_AVAILABLE", True, "No coordinator is available for the group or transaction yet."),
    (16, "NOT_COORDINATOR", True, "This broker is not the coordinator for the given key."),
    (17, "INVALID_TOPIC_EXCEPTION", False, "The topic name is illegal or the topic may not be used this way."),
    (18, "RECORD_LIST_TOO_LARGE", False, "A produced batch is larger than a log segment allows."),
    (19, "NOT_ENOUGH_REPLICAS", True, "Too few in-sync replicas to accept the write."),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True, "The write was appended but the in-sync set then fell below the minimum."),
    (21, "INVALID_REQUIRED_ACKS", False, "The acks value is not one the broker supports."),
    (22, "ILLEGAL_GENERATION", False, "The group generation in the request is not the current one."),
    (23, "INCONSISTENT_GROUP_PROTOCOL", False, "The member's protocol type or protocol list does not fit the group."),
    (24, "INVALID_GROUP_ID", False, "The group id is empty or otherwise unusable."),
    (25, "UNKNOWN_MEMBER_ID", False, "The coordinator does not know this member id."),
    (26, "INVALID_SESSION_TIMEOUT", False, "The session timeout is outside the broker's allowed range."),
    (27, "REBALANCE_IN_PROGRESS", False, "The group is rebalancing; the member has to rejoin."),
    (28, "INVALID_COMMIT_OFFSET_SIZE", False, "The offset commit was refused because its data is too big."),
    (29, "TOPIC_AUTHORIZATION_FAILED", False, "The client is not allowed to act on the topic."),
    (30, "GROUP_AUTHORIZATION_FAILED", False, "The client is not allowed to act on the group."),
    (31, "CLUSTER_AUTHORIZATION_FAILED", False, "The client is not allowed to act on the cluster."),
    (32, "INVALID_TIMESTAMP", False, "A record timestamp falls outside the accepted window."),
    (33, "UNSUPPORTED_SASL_MECHANISM", False, "The broker does not offer the requested SASL mechanism."),
    (34, "ILLEGAL_SASL_STATE", False, "The request is not allowed at this point of the SASL exchange."),
    (35, "UNSUPPORTED_VERSION", False, "The broker does not support this API version."),
    (36, "TOPIC_ALREADY_EXISTS", False, "A topic with this name exists already."),
    (37, "INVALID_PARTITIONS", False, "The requested partition count is not valid."),
    (38, "INVALID_REPLICATION_FACTOR", False, "The requested replication factor is not valid."),
    (39, "INVALID_REPLICA_ASSIGNMENT", False, "The explicit replica assignment is not valid."),
    (40, "INVALID_CONFIG", False, "A configuration value in the request is not valid."),
    (41, "NOT_CONTROLLER", True, "The receiving node is not the active controller."),
    (42, "INVALID_REQUEST", False, "The request is malformed or self-contradictory, usually a client bug."),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False, "The operation needs a newer record format than is in use."),
    (44, "POLICY_VIOLATION", False, "A broker-side policy refused the request."),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False, "The producer sequence number is not the next one expected."),
    (46, "DUPLICATE_SEQUENCE_NUMBER", False, "The producer sequence number was already written."),
    (47, "INVALID_PRODUCER_EPOCH", False, "The producer used an epoch older than the current one."),
    (48, "INVALID_TXN_STATE", False, "The transaction is not in a state that allows this operation."),
    (49, "INVALID_PRODUCER_ID_MAPPING", False, "The transactional id does not map to the given producer id."),
    (50, "INVALID_TRANSACTION_TIMEOUT", False, "The transaction timeout is above the broker's maximum."),
    (51, "CONCURRENT_TRANSACTIONS", True, "An earlier transaction for this producer is still completing."),
    (52, "TRANSACTION_COORDINATOR_FENCED", False, "A newer transaction coordinator has taken over."),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False, "The client is not allowed to use the transactional id."),
    (54, "SECURITY_DISABLED", False, "Security features are switched off on the broker."),
    (55, "OPERATION_NOT_ATTEMPTED", False, "Skipped because another operation in the same batch failed."),
    (56, "KAFKA_STORAGE_ERROR", True, "A disk or log-directory failure on the broker."),
    (57, "LOG_DIR_NOT_FOUND", False, "The named log directory does not exist on the broker."),
    (58, "SASL_AUTHENTICATION_FAILED", False, "The SASL credentials were rejected."),
    (59, "UNKNOWN_PRODUCER_ID", False, "The broker holds no state for this producer id."),
    (60, "REASSIGNMENT_IN_PROGRESS", False, "A partition reassignment is running."),
    (61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "Delegation tokens are not enabled."),
    (62, "DELEGATION_TOKEN_NOT_FOUND", False, "No delegation token matches."),
    (63, "DELEGATION_TOKEN_OWNER_MISMATCH", False, "The caller neither owns nor may renew the token."),
    (64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False, "Token requests are refused on this kind of connection."),
    (65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "The client is not allowed this token operation."),
    (66, "DELEGATION_TOKEN_EXPIRED", False, "The delegation token is past its expiry."),
    (67, "INVALID_PRINCIPAL_TYPE", False, "The principal type is not supported."),
    (68, "NON_EMPTY_GROUP", False, "The group still has members, so it cannot be deleted."),
    (69, "GROUP_ID_NOT_FOUND", False, "No group with this id exists."),
    (70, "FETCH_SESSION_ID_NOT_FOUND", True, "The broker has no fetch session with this id."),
    (71, "INVALID_FETCH_SESSION_EPOCH", True, "The fetch session epoch is not the expected one."),
    (72, "LISTENER_NOT_FOUND", True, "The leader has no endpoint on the listener the client used."),
    (73, "TOPIC_DELETION_DISABLED", False, "Topic deletion is switched off on the broker."),
    (74, "FENCED_LEADER_EPOCH", True, "The client's leader epoch is older than the broker's."),
    (75, "UNKNOWN_LEADER_EPOCH", True, "The client's leader epoch is newer than the broker's."),
    (76, "UNSUPPORTED_COMPRESSION_TYPE", False, "The client cannot handle the partition's compression codec."),
    (77, "STALE_BROKER_EPOCH", False, "The broker epoch in the request is out of date."),
    (78, "OFFSET_NOT_AVAILABLE", True, "A new leader's high watermark has not caught up, so offsets are withheld."),
    (79, "MEMBER_ID_REQUIRED", False, "Rejoin with the member id the coordinator has just assigned."),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "The preferred replica cannot take leadership now."),
    (81, "GROUP_MAX_SIZE_REACHED", False, "The group already has its maximum number of members."),
    (82, "FENCED_INSTANCE_ID", False, "Another member has claimed this static group.instance.id."),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True, "No replica qualifies as leader for the requested election."),
    (84, "ELECTION_NOT_NEEDED", True, "No election was needed for the partition."),
    (85, "NO_REASSIGNMENT_IN_PROGRESS", False, "There is no running reassignment to cancel."),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC", False, "The group still consumes the topic, so its offsets cannot be deleted."),
    (87, "INVALID_RECORD", False, "A record failed broker-side validation, so the batch was refused."),
    (88, "UNSTABLE_OFFSET_COMMIT", True, "Transactional offset commits are still pending for the partition."),
    (89, "THROTTLING_QUOTA_EXCEEDED", True, "The request went over a throttling quota, e.g. topic mutations."),
    (90, "PRODUCER_FENCED", False, "A newer producer with the same transactional id has taken over."),
    (91, "RESOURCE_NOT_FOUND", False, "The referenced resource does not exist."),
    (92, "DUPLICATE_RESOURCE", False, "The request names one resource more than once."),
    (93, "UNACCEPTABLE_CREDENTIAL", False, "The credential does not meet the broker's requirements."),
    (94, "INCONSISTENT_VOTER_SET", False, "Sender or receiver of a voter request is not an expected voter."),
    (95, "INVALID_UPDATE_VERSION", False, "The feature update version is not valid."),
    (96, "FEATURE_UPDATE_FAILED", False, "Finalized features could not be updated because of a server fault."),
    (97, "PRINCIPAL_DESERIALIZATION_FAILURE", False, "A forwarded request's principal could not be decoded."),
    (98, "SNAPSHOT_NOT_FOUND", False, "The requested metadata snapshot does not exist."),
    (99, "POSITION_OUT_OF_RANGE", False, "The position is negative or past the end of the snapshot."),
    (100, "UNKNOWN_TOPIC_ID", True, "This broker hosts no topic with this id."),
    (101, "DUPLICATE_BROKER_REGISTRATION", False, "Another live broker already uses this broker id."),
    (102, "BROKER_ID_NOT_REGISTERED", False, "This broker id has not registered with the controller."),
    (103, "INCONSISTENT_TOPIC_ID", True, "The topic id in the request differs from the broker's."),
    (104, "INCONSISTENT_CLUSTER_ID", False, "The cluster id in the request differs from the receiver's."),
    (105, "TRANSACTIONAL_ID_NOT_FOUND", False, "No transaction state exists for this transactional id."),
    (106, "FETCH_SESSION_TOPIC_ID_ERROR", True, "The fetch session saw topic ids used inconsistently."),
    (107, "INELIGIBLE_REPLICA", False, "The proposed ISR holds a replica that may not join it."),
    (108, "NEW_LEADER_ELECTED", False, "The partition state was updated, but leadership has since moved."),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE", False, "The offset now lives only in tiered (remote) storage."),
    (110, "FENCED_MEMBER_EPOCH", False, "The member's epoch is fenced; it must drop its partitions and rejoin."),
    (111, "UNRELEASED_INSTANCE_ID", False, "The static instance id is still held by a member that has not left."),
    (112, "UNSUPPORTED_ASSIGNOR", False, "The group does not support the requested assignor or its versions."),
    (113, "STALE_MEMBER_EPOCH", False, "The member epoch is behind; retry once a heartbeat gives the new one."),
    (114, "MISMATCHED_ENDPOINT_TYPE", False, "The request reached the wrong kind of endpoint."),
    (115, "UNSUPPORTED_ENDPOINT_TYPE", False, "This kind of endpoint does not support the request yet."),
    (116, "UNKNOWN_CONTROLLER_ID", False, "No controller with this id is known."),
    (117, "UNKNOWN_SUBSCRIPTION_ID", False, "The telemetry subscription id is unknown or out of date."),
    (118, "TELEMETRY_TOO_LARGE", False, "The pushed telemetry payload is over the broker's limit."),
    (119, "INVALID_REGISTRATION", False, "The controller judged the broker's registration invalid."),
    (120, "TRANSACTION_ABORTABLE", False, "The transaction hit an error; aborting it lets the producer carry on."),
    (121, "INVALID_RECORD_STATE", False, "The share-group record's state does not allow this acknowledgement."),
    (122, "SHARE_SESSION_NOT_FOUND", True, "The broker has no share session with this id."),
    (123, "INVALID_SHARE_SESSION_EPOCH", True, "The share session epoch is not the expected one."),
    (124, "FENCED_STATE_EPOCH", False, "The share-group state epoch does not match the coordinator's."),
    (125, "INVALID_VOTER_KEY", False, "The voter key does not match the receiving replica's."),
    (126, "DUPLICATE_VOTER", False, "The voter is already in the voter set."),
    (127, "VOTER_NOT_FOUND", False, "The voter is not in the voter set."),
    (128, "INVALID_REGULAR_EXPRESSION", False, "The subscription regular expression is not valid."),
    (129, "REBOOTSTRAP_REQUIRED", False, "The client's metadata is stale; it should bootstrap again."),
    (130, "STREAMS_INVALID_TOPOLOGY", False, "The supplied Streams topology is not valid."),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "The supplied Streams topology epoch is not valid."),
    (132, "STREAMS_TOPOLOGY_FENCED", False, "The supplied Streams topology epoch is out of date."),
    (133, "SHARE_SESSION_LIMIT_REACHED", True, "The broker has reached its limit of share sessions."),
    (134, "GROUP_DELETION_FAILED", False, "A group could not be deleted; its result's message says why."),
    (135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", False,
     "A Streams topology description update could not be processed."),
    (136, "CONTROLLER_ID_NOT_REGISTERED", False, "No controller is registered with this ID."),
)

ERRORS: Final[dict[int, KafkaError]] = {row[0]: KafkaError(*row) for row in _TABLE}
ERRORS_BY_NAME: Final[dict[str, KafkaError]] = {e.name: e for e in ERRORS.values()}


def error_by_code(code: int) -> KafkaError:
    """Return the entry for ``code``; raise :class:`UnknownKafkaError` (a KeyError) if undefined."""
    try:
        return ERRORS[code]
    except KeyError:
        raise UnknownKafkaError(
            f"unknown Kafka error code {code!r} (defined: {min(ERRORS)}..{max(ERRORS)})"
        ) from None


def error_by_name(name: str) -> KafkaError:
    """Return the entry for a Kafka error name, ignoring case and surrounding whitespace."""
    try:
        return ERRORS_BY_NAME[name.strip().upper()]
    except KeyError:
        raise UnknownKafkaError(f"unknown Kafka error name {name!r}") from None


def resolve_error(value: int | str) -> KafkaError:
    """Look up an error given as a code or a name.

    Accepts an int (``6``), a string of digits with an optional sign (``"6"``, ``"-1"``), or a
    name in any case (``"not_leader_or_follower"``).  Unknown values raise
    :class:`UnknownKafkaError` (a KeyError); other types raise TypeError.
    """
    if isinstance(value, bool):  # bool is an int subclass; True/False are never meant as codes
        raise TypeError(f"expected an error code or name, got {value!r}")
    if isinstance(value, int):
        return error_by_code(value)
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in ("+", "-") else text
        if digits.isascii() and digits.isdigit():
            return error_by_code(int(text))
        return error_by_name(text)
    raise TypeError(f"expected an error code or name, got {type(value).__name__}")


# Named constants, one per table entry (tests check they agree with _TABLE).
UNKNOWN_SERVER_ERROR: Final = -1
NONE: Final = 0
OFFSET_OUT_OF_RANGE: Final = 1
CORRUPT_MESSAGE: Final = 2
UNKNOWN_TOPIC_OR_PARTITION: Final = 3
INVALID_FETCH_SIZE: Final = 4
LEADER_NOT_AVAILABLE: Final = 5
NOT_LEADER_OR_FOLLOWER: Final = 6
REQUEST_TIMED_OUT: Final = 7
BROKER_NOT_AVAILABLE: Final = 8
REPLICA_NOT_AVAILABLE: Final = 9
MESSAGE_TOO_LARGE: Final = 10
STALE_CONTROLLER_EPOCH: Final = 11
OFFSET_METADATA_TOO_LARGE: Final = 12
NETWORK_EXCEPTION: Final = 13
COORDINATOR_LOAD_IN_PROGRESS: Final = 14
COORDINATOR_NOT_AVAILABLE: Final = 15
NOT_COORDINATOR: Final = 16
INVALID_TOPIC_EXCEPTION: Final = 17
RECORD_LIST_TOO_LARGE: Final = 18
NOT_ENOUGH_REPLICAS: Final = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND: Final = 20
INVALID_REQUIRED_ACKS: Final = 21
ILLEGAL_GENERATION: Final = 22
INCONSISTENT_GROUP_PROTOCOL: Final = 23
INVALID_GROUP_ID: Final = 24
UNKNOWN_MEMBER_ID: Final = 25
INVALID_SESSION_TIMEOUT: Final = 26
REBALANCE_IN_PROGRESS: Final = 27
INVALID_COMMIT_OFFSET_SIZE: Final = 28
TOPIC_AUTHORIZATION_FAILED: Final = 29
GROUP_AUTHORIZATION_FAILED: Final = 30
CLUSTER_AUTHORIZATION_FAILED: Final = 31
INVALID_TIMESTAMP: Final = 32
UNSUPPORTED_SASL_MECHANISM: Final = 33
ILLEGAL_SASL_STATE: Final = 34
UNSUPPORTED_VERSION: Final = 35
TOPIC_ALREADY_EXISTS: Final = 36
INVALID_PARTITIONS: Final = 37
INVALID_REPLICATION_FACTOR: Final = 38
INVALID_REPLICA_ASSIGNMENT: Final = 39
INVALID_CONFIG: Final = 40
NOT_CONTROLLER: Final = 41
INVALID_REQUEST: Final = 42
UNSUPPORTED_FOR_MESSAGE_FORMAT: Final = 43
POLICY_VIOLATION: Final = 44
OUT_OF_ORDER_SEQUENCE_NUMBER: Final = 45
DUPLICATE_SEQUENCE_NUMBER: Final = 46
INVALID_PRODUCER_EPOCH: Final = 47
INVALID_TXN_STATE: Final = 48
INVALID_PRODUCER_ID_MAPPING: Final = 49
INVALID_TRANSACTION_TIMEOUT: Final = 50
CONCURRENT_TRANSACTIONS: Final = 51
TRANSACTION_COORDINATOR_FENCED: Final = 52
TRANSACTIONAL_ID_AUTHORIZATION_FAILED: Final = 53
SECURITY_DISABLED: Final = 54
OPERATION_NOT_ATTEMPTED: Final = 55
KAFKA_STORAGE_ERROR: Final = 56
LOG_DIR_NOT_FOUND: Final = 57
SASL_AUTHENTICATION_FAILED: Final = 58
UNKNOWN_PRODUCER_ID: Final = 59
REASSIGNMENT_IN_PROGRESS: Final = 60
DELEGATION_TOKEN_AUTH_DISABLED: Final = 61
DELEGATION_TOKEN_NOT_FOUND: Final = 62
DELEGATION_TOKEN_OWNER_MISMATCH: Final = 63
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: Final = 64
DELEGATION_TOKEN_AUTHORIZATION_FAILED: Final = 65
DELEGATION_TOKEN_EXPIRED: Final = 66
INVALID_PRINCIPAL_TYPE: Final = 67
NON_EMPTY_GROUP: Final = 68
GROUP_ID_NOT_FOUND: Final = 69
FETCH_SESSION_ID_NOT_FOUND: Final = 70
INVALID_FETCH_SESSION_EPOCH: Final = 71
LISTENER_NOT_FOUND: Final = 72
TOPIC_DELETION_DISABLED: Final = 73
FENCED_LEADER_EPOCH: Final = 74
UNKNOWN_LEADER_EPOCH: Final = 75
UNSUPPORTED_COMPRESSION_TYPE: Final = 76
STALE_BROKER_EPOCH: Final = 77
OFFSET_NOT_AVAILABLE: Final = 78
MEMBER_ID_REQUIRED: Final = 79
PREFERRED_LEADER_NOT_AVAILABLE: Final = 80
GROUP_MAX_SIZE_REACHED: Final = 81
FENCED_INSTANCE_ID: Final = 82
ELIGIBLE_LEADERS_NOT_AVAILABLE: Final = 83
ELECTION_NOT_NEEDED: Final = 84
NO_REASSIGNMENT_IN_PROGRESS: Final = 85
GROUP_SUBSCRIBED_TO_TOPIC: Final = 86
INVALID_RECORD: Final = 87
UNSTABLE_OFFSET_COMMIT: Final = 88
THROTTLING_QUOTA_EXCEEDED: Final = 89
PRODUCER_FENCED: Final = 90
RESOURCE_NOT_FOUND: Final = 91
DUPLICATE_RESOURCE: Final = 92
UNACCEPTABLE_CREDENTIAL: Final = 93
INCONSISTENT_VOTER_SET: Final = 94
INVALID_UPDATE_VERSION: Final = 95
FEATURE_UPDATE_FAILED: Final = 96
PRINCIPAL_DESERIALIZATION_FAILURE: Final = 97
SNAPSHOT_NOT_FOUND: Final = 98
POSITION_OUT_OF_RANGE: Final = 99
UNKNOWN_TOPIC_ID: Final = 100
DUPLICATE_BROKER_REGISTRATION: Final = 101
BROKER_ID_NOT_REGISTERED: Final = 102
INCONSISTENT_TOPIC_ID: Final = 103
INCONSISTENT_CLUSTER_ID: Final = 104
TRANSACTIONAL_ID_NOT_FOUND: Final = 105
FETCH_SESSION_TOPIC_ID_ERROR: Final = 106
INELIGIBLE_REPLICA: Final = 107
NEW_LEADER_ELECTED: Final = 108
OFFSET_MOVED_TO_TIERED_STORAGE: Final = 109
FENCED_MEMBER_EPOCH: Final = 110
UNRELEASED_INSTANCE_ID: Final = 111
UNSUPPORTED_ASSIGNOR: Final = 112
STALE_MEMBER_EPOCH: Final = 113
MISMATCHED_ENDPOINT_TYPE: Final = 114
UNSUPPORTED_ENDPOINT_TYPE: Final = 115
UNKNOWN_CONTROLLER_ID: Final = 116
UNKNOWN_SUBSCRIPTION_ID: Final = 117
TELEMETRY_TOO_LARGE: Final = 118
INVALID_REGISTRATION: Final = 119
TRANSACTION_ABORTABLE: Final = 120
INVALID_RECORD_STATE: Final = 121
SHARE_SESSION_NOT_FOUND: Final = 122
INVALID_SHARE_SESSION_EPOCH: Final = 123
FENCED_STATE_EPOCH: Final = 124
INVALID_VOTER_KEY: Final = 125
DUPLICATE_VOTER: Final = 126
VOTER_NOT_FOUND: Final = 127
INVALID_REGULAR_EXPRESSION: Final = 128
REBOOTSTRAP_REQUIRED: Final = 129
STREAMS_INVALID_TOPOLOGY: Final = 130
STREAMS_INVALID_TOPOLOGY_EPOCH: Final = 131
STREAMS_TOPOLOGY_FENCED: Final = 132
SHARE_SESSION_LIMIT_REACHED: Final = 133
GROUP_DELETION_FAILED: Final = 134
STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: Final = 135
CONTROLLER_ID_NOT_REGISTERED: Final = 136
