"""The requests and answers of the classic group API (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup) as the coordinator reads and answers them, whichever group type serves them.

A classic group serves them (:mod:`~mockbroker.core.groups.classic`), and so does a consumer
group with members of the classic protocol (:mod:`~mockbroker.core.groups.mixed`): both build
these answers, and the handlers turn them into responses.  Value types only; imports nothing
of the coordinator or of any group type, so every type may import it.
"""

from __future__ import annotations

from msgspec import Struct, field

#: The protocol type of Kafka's consumers, whose Subscription the coordinator can read; a
#: consumer group's protocol type too.
CONSUMER_PROTOCOL_TYPE = "consumer"
#: the member id of a member that has none yet
UNKNOWN_MEMBER_ID = ""


class JoinRequest(Struct):
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    api_version: int


class JoinResult(Struct):
    error_code: int
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    #: (member id, group instance id, metadata) — only in the leader's answer
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


class SyncResult(Struct):
    error_code: int
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


class HeartbeatResult(Struct):
    error_code: int


class LeaveResult(Struct):
    error_code: int
    #: one error code per member that asked to leave, in request order
    member_errors: list[int] = field(default_factory=list)
