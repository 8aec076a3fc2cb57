"""The streams group type (KIP-1071) as the table of group types
(:mod:`mockbroker.core.groups.types`) knows it: its protocol, its records, and how the
handlers, the admin API and the group watch see a streams group.

Loaded by the table on first use; the protocol and the admin API's views only when asked for.
"""

from __future__ import annotations

from mockbroker.core.groups import GroupSnapshot, Listed, MemberSnapshot
from mockbroker.core.groups.streams import records
from mockbroker.core.groups.streams.group import STATE_NAMES, StreamsGroup, StreamsGroupState, \
    TaskRoles


class StreamsType:
    """The streams group type (StreamsGroupHeartbeat, StreamsGroupDescribe)."""

    name = StreamsGroup.type
    record_types = records.RECORD_TYPES
    rebalancing = frozenset({StreamsGroupState.ASSIGNING.value,
                             StreamsGroupState.RECONCILING.value})

    def protocol(self, coordinator):
        from mockbroker.core.groups.streams.protocol import StreamsProtocol

        return StreamsProtocol(coordinator)

    def new_group(self, group_id: str, now_ms: int) -> StreamsGroup:
        return StreamsGroup(group_id, now_ms)

    def replayer(self, now_ms: int) -> records.Replayer:
        return records.Replayer(now_ms)

    def tombstones(self, group: StreamsGroup) -> list[tuple[bytes, None]]:
        return records.group_tombstones(group)

    # -- what the outside sees -------------------------------------------------------------------

    def snapshot(self, group: StreamsGroup) -> GroupSnapshot:
        members = {m.member_id: MemberSnapshot(
            m.client_id, m.client_host, m.instance_id,
            frozenset((role, s, p) for role, tasks in zip(("active", "standby", "warmup"),
                                                          m.tasks.keys())
                      for s, ps in tasks.items() for p in ps))
            for m in group.members.values()}
        return GroupSnapshot(self.name, group.state.value, group.group_epoch, members)

    def assignments(self, coordinator, group: StreamsGroup) -> dict[str, dict[str, list[int]]]:
        """{member id: {topic: partitions}}: the partitions each member's active tasks read."""
        configured = group.configured
        subtopologies = configured.subtopologies if configured is not None else None
        topics = coordinator.cluster.topics
        out: dict[str, dict[str, list[int]]] = {}
        for m in group.members.values():
            mine: dict[str, set[int]] = {}
            for s, ps in m.assigned.items():
                sub = (subtopologies or {}).get(s)
                for topic in sorted(sub.sources()) if sub is not None else ():
                    count = len(topics[topic].partitions) if topic in topics else 0
                    mine.setdefault(topic, set()).update(p for p in ps if p < count)
            out[m.member_id] = {t: sorted(ps) for t, ps in sorted(mine.items()) if ps}
        return out

    def listed(self, group: StreamsGroup) -> Listed:
        return Listed(group.group_id, group.protocol_type, group.state.value, self.name)

    def view(self, coordinator, group: StreamsGroup, shared: dict):
        from mockbroker.adminapi.views import GroupView, MemberView, StreamsMemberView, \
            TasksView

        def tasks(roles: TaskRoles) -> TasksView:
            active, standby, warmup = roles.keys()
            return TasksView(**{name: {s: sorted(ps) for s, ps in sorted(role.items())}
                                for name, role in (("active", active), ("standby", standby),
                                                   ("warmup", warmup))})

        protocol = coordinator.protocol(self.name)
        by_member = self.assignments(coordinator, group)
        members = [MemberView(
            member_id=m.member_id, client_id=m.client_id, client_host=m.client_host,
            group_instance_id=m.instance_id,
            rebalance_timeout_ms=max(m.rebalance_timeout_ms, 0),
            session_timeout_ms=protocol.session_timeout_ms(group, m),
            assignment=by_member.get(m.member_id, {}), member_epoch=m.member_epoch,
            protocol=self.name, streams=StreamsMemberView(
                process_id=m.process_id, topology_epoch=m.topology_epoch,
                user_endpoint=None if m.user_endpoint is None
                else f"{m.user_endpoint[0]}:{m.user_endpoint[1]}",
                client_tags=dict(m.client_tags), state=STATE_NAMES.get(m.state, "unknown"),
                tasks=tasks(m.tasks), target_tasks=tasks(group.target.get(m.member_id,
                                                                          TaskRoles())),
                pending_revocation=tasks(m.pending)))
            for m in group.members.values()]
        return GroupView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
            generation=group.group_epoch, protocol_type=group.protocol_type,
            protocol="sticky", leader=None, members=members,
            topology=topology_view(coordinator, group), **shared)

    def summary(self, group: StreamsGroup, coordinator_id: int):
        from mockbroker.adminapi.views import GroupSummaryView

        return GroupSummaryView(
            group_id=group.group_id, state=group.state.value, type=self.name,
            generation=group.group_epoch, protocol_type=group.protocol_type,
            coordinator=coordinator_id, members=len(group.members))


def topology_view(coordinator, group: StreamsGroup):
    """The group's topology for ``GET /groups/{id}``, configured where it could be."""
    from mockbroker.adminapi.views import InternalTopicView, SubtopologyView, TopologyView

    if group.topology is None:
        return None
    configured = group.configured
    subs = (configured.subtopologies if configured is not None else None) or {}
    topics = coordinator.cluster.topics

    def internal(info, decided) -> InternalTopicView:
        found = decided.get(info.name, info)
        return InternalTopicView(name=info.name, partitions=found.partitions,
                                 replication_factor=found.replication_factor,
                                 configs=dict(found.configs), exists=info.name in topics)

    out = []
    for s in sorted(group.topology.subtopologies, key=lambda s: s.subtopology_id):
        c = subs.get(s.subtopology_id)
        out.append(SubtopologyView(
            subtopology_id=s.subtopology_id, source_topics=sorted(s.source_topics),
            repartition_sink_topics=sorted(s.repartition_sink_topics),
            repartition_source_topics=[internal(t, c.repartition_source_topics if c else {})
                                       for t in s.repartition_source_topics],
            state_changelog_topics=[internal(t, c.state_changelog_topics if c else {})
                                    for t in s.state_changelog_topics],
            tasks=c.number_of_tasks if c is not None else 0))
    problem = configured.problem if configured is not None else None
    return TopologyView(epoch=group.topology.epoch,
                        ready=configured is not None and configured.ready,
                        status=problem.message if problem is not None else None,
                        subtopologies=out)
