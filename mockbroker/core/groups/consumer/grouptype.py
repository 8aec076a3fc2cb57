"""The consumer group type (KIP-848) as the table of group types
(:mod:`mockbroker.core.groups.types`) knows it: its protocol, its records, and how the
handlers, the admin API and the group watch see a consumer group.

Loaded by the table on first use.  It imports the group and its records at once (replay and
every snapshot need them); the protocol, and the admin API's views (dataclasses, which compile
as they load), only when asked for.
"""

from __future__ import annotations

from mockbroker.core.groups import GroupSnapshot, Listed, MemberSnapshot
from mockbroker.core.groups.modern.group import assignment_by_name
from mockbroker.core.groups.consumer import records
from mockbroker.core.groups.consumer.group import ConsumerGroup, ConsumerGroupState


class ConsumerType:
    """The consumer group type (ConsumerGroupHeartbeat, ConsumerGroupDescribe)."""

    name = ConsumerGroup.type
    record_types = records.RECORD_TYPES
    rebalancing = frozenset({ConsumerGroupState.ASSIGNING.value,
                             ConsumerGroupState.RECONCILING.value})

    def protocol(self, coordinator):
        from mockbroker.core.groups.consumer.protocol import ConsumerProtocol

        return ConsumerProtocol(coordinator)

    def new_group(self, group_id: str, now_ms: int) -> ConsumerGroup:
        return ConsumerGroup(group_id, now_ms)

    def replayer(self, now_ms: int) -> records.Replayer:
        return records.Replayer(now_ms)

    def tombstones(self, group: ConsumerGroup) -> list[tuple[bytes, None]]:
        return records.group_tombstones(group.group_id)

    # -- what the outside sees -------------------------------------------------------------------

    def snapshot(self, group: ConsumerGroup) -> GroupSnapshot:
        members = {m.member_id: MemberSnapshot(
            m.client_id, m.client_host, m.instance_id,
            frozenset((t, p) for t, ps in m.assigned.items() for p in ps))
            for m in group.members.values()}
        return GroupSnapshot(self.name, group.state.value, group.group_epoch, members)

    def assignments(self, coordinator, group: ConsumerGroup) -> dict[str, dict[str, list[int]]]:
        return {m.member_id: assignment_by_name(coordinator, m.assigned)
                for m in group.members.values()}

    def listed(self, group: ConsumerGroup) -> Listed:
        return Listed(group.group_id, group.protocol_type, group.state.value, self.name)

    def view(self, coordinator, group: ConsumerGroup, shared: dict):
        from mockbroker.adminapi.views import GroupView, MemberView

        session_timeout_ms = coordinator.settings["group_consumer_session_timeout_ms"]
        members = [MemberView(
            member_id=m.member_id, client_id=m.client_id, client_host=m.client_host,
            group_instance_id=m.instance_id, rebalance_timeout_ms=max(m.rebalance_timeout_ms, 0),
            session_timeout_ms=m.classic.session_timeout_ms if m.uses_classic
            else session_timeout_ms,
            assignment=assignment_by_name(coordinator, m.assigned), member_epoch=m.member_epoch,
            target_assignment=assignment_by_name(coordinator, group.target.get(m.member_id, {})),
            pending_revocation=assignment_by_name(coordinator, m.pending_revocation),
            # the protocol the member speaks: a mixed group's member may speak the classic one
            protocol="classic" if m.uses_classic else self.name,
        ) for m in group.members.values()]
        assignors = coordinator.protocol(self.name).assignors()
        return GroupView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
            generation=group.group_epoch, protocol_type=group.protocol_type,
            protocol=group.preferred_assignor(assignors[0]), leader=None, members=members,
            **shared)

    def summary(self, group: ConsumerGroup, coordinator_id: int):
        from mockbroker.adminapi.views import GroupSummaryView

        return GroupSummaryView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            generation=group.group_epoch, protocol_type=group.protocol_type,
            coordinator=coordinator_id, members=len(group.members))

