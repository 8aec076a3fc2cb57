"""The classic group type as the table of group types (:mod:`mockbroker.core.groups.types`)
knows it: its protocol, its record, and how the handlers, the admin API and the group watch see
a classic group.

Loaded by the table on first use.  It imports the group and its record at once (replay and
every snapshot need them); the protocol, and the admin API's views (dataclasses, which compile
as they load), only when asked for.
"""

from __future__ import annotations

import base64

from mockbroker.core.groups import GroupSnapshot, Listed, MemberSnapshot
from mockbroker.core.groups.classic import records
from mockbroker.core.groups.classic.group import ClassicGroup
from mockbroker.core.groups.classic.state import GroupState
from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE
from wire import WireError, decode_embedded


class ClassicType:
    """The classic group type (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)."""

    name = ClassicGroup.type
    record_types = records.RECORD_TYPES
    rebalancing = frozenset({GroupState.PREPARING_REBALANCE.value,
                             GroupState.COMPLETING_REBALANCE.value})

    def protocol(self, coordinator):
        from mockbroker.core.groups.classic.protocol import ClassicProtocol

        return ClassicProtocol(coordinator)

    def new_group(self, group_id: str, now_ms: int) -> ClassicGroup:
        return ClassicGroup(group_id, now_ms)

    def replayer(self, now_ms: int) -> records.Replayer:
        return records.Replayer(now_ms)

    def tombstones(self, group: ClassicGroup) -> list[tuple[bytes, None]]:
        return [records.group_tombstone(group.group_id)]

    # -- what the outside sees -------------------------------------------------------------------

    def snapshot(self, group: ClassicGroup) -> GroupSnapshot:
        members = {m.member_id: MemberSnapshot(m.client_id, m.client_host, m.group_instance_id,
                                               m.assignment)
                   for m in group.members.values()}
        return GroupSnapshot(self.name, group.state.value, group.generation_id, members)

    def assignments(self, coordinator, group: ClassicGroup) -> dict[str, dict[str, list[int]]]:
        return {m.member_id: decode_assignment(group.protocol_type, m.assignment) or {}
                for m in group.members.values()}

    def listed(self, group: ClassicGroup) -> Listed:
        return Listed(group.group_id, group.protocol_type or "", group.state.value, self.name)

    def view(self, coordinator, group: ClassicGroup, shared: dict):
        from mockbroker.adminapi.jsonview import from_object
        from mockbroker.adminapi.views import GroupView, MemberView

        return GroupView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            generation=group.generation_id, protocol_type=group.protocol_type,
            protocol=group.protocol_name, leader=group.leader_id,
            members=[from_object(
                MemberView, m, assignment=decode_assignment(group.protocol_type, m.assignment),
                assignment_base64=base64.b64encode(m.assignment).decode("ascii"),
            ) for m in group.members.values()], **shared)

    def summary(self, group: ClassicGroup, coordinator_id: int):
        from mockbroker.adminapi.views import GroupSummaryView

        return GroupSummaryView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            generation=group.generation_id, protocol_type=group.protocol_type,
            coordinator=coordinator_id, members=len(group.members))


def decode_assignment(protocol_type: str | None, data: bytes) -> dict[str, list[int]] | None:
    """A member's assignment as {topic name: sorted partitions}, read as Kafka's consumers write
    it (ConsumerProtocolAssignment) when the group speaks their protocol; None when it speaks
    another, whose assignments the coordinator cannot read, or the bytes do not parse."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not data:
        return {} if protocol_type == CONSUMER_PROTOCOL_TYPE else None
    try:
        _, assignment = decode_embedded("ConsumerProtocolAssignment", data)
    except WireError:
        return None
    out: dict[str, list[int]] = {}
    for entry in assignment.assigned_partitions:
        out.setdefault(entry.topic, []).extend(entry.partitions)
    return {t: sorted(ps) for t, ps in sorted(out.items())}
