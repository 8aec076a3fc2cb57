"""The share group type (KIP-932) as the table of group types
(:mod:`mockbroker.core.groups.types`) knows it: its protocol, its records, and how the
handlers, the admin API and the group watch see a share group.

Loaded by the table on first use; the protocol and the admin API's views only when asked for.
"""

from __future__ import annotations

from mockbroker.core.groups import GroupSnapshot, Listed, MemberSnapshot
from mockbroker.core.groups.modern.group import assignment_by_name
from mockbroker.core.groups.share import records
from mockbroker.core.groups.share.group import ShareGroup


class ShareType:
    """The share group type (ShareGroupHeartbeat, ShareGroupDescribe)."""

    name = ShareGroup.type
    record_types = records.RECORD_TYPES
    #: a share member takes its target at once: no state of a share group is a rebalance
    rebalancing = frozenset()

    def protocol(self, coordinator):
        from mockbroker.core.groups.share.protocol import ShareProtocol

        return ShareProtocol(coordinator)

    def new_group(self, group_id: str, now_ms: int) -> ShareGroup:
        return ShareGroup(group_id, now_ms)

    def replayer(self, now_ms: int) -> records.Replayer:
        return records.Replayer(now_ms)

    def tombstones(self, group: ShareGroup) -> list[tuple[bytes, None]]:
        return records.group_tombstones(group.group_id)

    # -- what the outside sees -------------------------------------------------------------------

    def snapshot(self, group: ShareGroup) -> GroupSnapshot:
        members = {m.member_id: MemberSnapshot(
            m.client_id, m.client_host, None,
            frozenset((t, p) for t, ps in m.assigned.items() for p in ps))
            for m in group.members.values()}
        return GroupSnapshot(self.name, group.state.value, group.group_epoch, members)

    def assignments(self, coordinator, group: ShareGroup) -> dict[str, dict[str, list[int]]]:
        return {m.member_id: assignment_by_name(coordinator, m.assigned)
                for m in group.members.values()}

    def listed(self, group: ShareGroup) -> Listed:
        return Listed(group.group_id, group.protocol_type, group.state.value, self.name)

    def view(self, coordinator, group: ShareGroup, shared: dict):
        from mockbroker.adminapi.views import GroupView, MemberView, SharePartitionView

        session_timeout_ms = coordinator.settings["group_share_session_timeout_ms"]
        members = [MemberView(
            member_id=m.member_id, client_id=m.client_id, client_host=m.client_host,
            group_instance_id=None, rebalance_timeout_ms=0,
            session_timeout_ms=session_timeout_ms,
            assignment=assignment_by_name(coordinator, m.assigned), member_epoch=m.member_epoch,
            target_assignment=assignment_by_name(coordinator, group.target.get(m.member_id, {})),
            pending_revocation={}, protocol=self.name,
        ) for m in group.members.values()]
        partitions = [SharePartitionView(**p) for p in share_partitions(coordinator, group)]
        return GroupView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
            generation=group.group_epoch, protocol_type=group.protocol_type,
            protocol="simple", leader=None, members=members, share_partitions=partitions,
            **shared)

    def summary(self, group: ShareGroup, coordinator_id: int):
        from mockbroker.adminapi.views import GroupSummaryView

        return GroupSummaryView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            generation=group.group_epoch, protocol_type=group.protocol_type,
            coordinator=coordinator_id, members=len(group.members))



def share_partitions(coordinator, group: ShareGroup) -> list[dict]:
    """The group's share partitions as their leaders hold them (``GET /groups/{id}``)."""
    from mockbroker.adminapi.views import InFlightView

    served = coordinator.share_partitions
    if served is None:
        return []
    out = []
    for sp in sorted(served.of_group(group.group_id),
                     key=lambda sp: (sp.partition.topic.name, sp.index)):
        log = sp.partition.log
        done = sum(r.size for r in sp.runs if r.state.terminal)
        out.append(dict(
            topic=sp.partition.topic.name, partition=sp.index, leader=sp.partition.leader,
            start_offset=sp.start_offset, end_offset=sp.next_offset,
            high_watermark=log.high_watermark,
            lag=max(log.high_watermark - sp.start_offset - done, 0),
            in_flight=[InFlightView(
                first_offset=r.first, last_offset=r.last, state=r.state.label,
                delivery_count=r.delivery_count, member_id=r.member or None,
                lock_deadline_ms=r.deadline if r.deadline >= 0 else None)
                for r in sp.records()]))
    return out
