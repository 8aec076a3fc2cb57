"""The records a streams group writes to ``__consumer_offsets``, in Kafka's formats, and the
group rebuilt from them.

Record types (the int16 before each key): 17 the group epoch, metadata hash, validated topology
epoch and last assignment configs (``StreamsGroupMetadata``), 19 a member's process, client,
endpoint and tags (``StreamsGroupMemberMetadata``), 20 the target assignment's epoch
(``StreamsGroupTargetAssignmentMetadata``), 21 a member's target tasks
(``StreamsGroupTargetAssignmentMember``), 22 a member's epochs, state and tasks, with each
active task's assignment epoch (``StreamsGroupCurrentMemberAssignment``), 23 the topology
(``StreamsGroupTopology``).  A null value deletes what its key names.

What Kafka keeps only in memory is not here either: the topology as configured against the
topics, the members' task offsets, the endpoint information epoch and a shutdown request; a new
coordinator works them out again at the first heartbeat.
"""

from __future__ import annotations

from mockbroker.core.groups.modern import records as modern_records
from mockbroker.core.groups.streams.group import StreamsGroup, StreamsMember, TaskRoles
from mockbroker.core.groups.streams.topology import Topology, from_wire

GROUP_EPOCH, MEMBER, TARGET_EPOCH, TARGET_MEMBER, CURRENT_ASSIGNMENT, TOPOLOGY = \
    17, 19, 20, 21, 22, 23
RECORD_TYPES = (GROUP_EPOCH, MEMBER, TARGET_EPOCH, TARGET_MEMBER, CURRENT_ASSIGNMENT, TOPOLOGY)
_NAMES = {GROUP_EPOCH: "StreamsGroupMetadata", MEMBER: "StreamsGroupMemberMetadata",
          TARGET_EPOCH: "StreamsGroupTargetAssignmentMetadata",
          TARGET_MEMBER: "StreamsGroupTargetAssignmentMember",
          CURRENT_ASSIGNMENT: "StreamsGroupCurrentMemberAssignment",
          TOPOLOGY: "StreamsGroupTopology"}


_FORMATS = modern_records.Formats(_NAMES)
_key, _value, _cls = _FORMATS.key, _FORMATS.value, _FORMATS.cls


def group_epoch(group: StreamsGroup) -> tuple[bytes, bytes]:
    cls = _cls(GROUP_EPOCH)
    return (_key(GROUP_EPOCH, group_id=group.group_id),
            _value(GROUP_EPOCH, epoch=group.group_epoch, metadata_hash=group.metadata_hash,
                   validated_topology_epoch=group.validated_topology_epoch,
                   last_assignment_configs=[
                       cls.LastAssignmentConfig(key=k, value=v)
                       for k, v in sorted(group.last_assignment_configs.items())]))


def member(group_id: str, m: StreamsMember) -> tuple[bytes, bytes]:
    cls = _cls(MEMBER)
    endpoint = None if m.user_endpoint is None else \
        cls.Endpoint(host=m.user_endpoint[0], port=m.user_endpoint[1])
    return (_key(MEMBER, group_id=group_id, member_id=m.member_id),
            _value(MEMBER, instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id,
                   client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
                   topology_epoch=m.topology_epoch, process_id=m.process_id,
                   user_endpoint=endpoint, client_tags=[
                       cls.KeyValue(key=k, value=v) for k, v in sorted(m.client_tags.items())]))


def target_epoch(group: StreamsGroup, timestamp: int | None = None) -> tuple[bytes, bytes]:
    return (_key(TARGET_EPOCH, group_id=group.group_id),
            _value(TARGET_EPOCH, assignment_epoch=group.assignment_epoch,
                   assignment_timestamp=group.assignment_timestamp
                   if timestamp is None else timestamp))


def _task_ids(cls, tasks) -> list:
    return [cls.TaskIds(subtopology_id=s, partitions=sorted(ps))
            for s, ps in sorted(tasks.items()) if ps]


def target_member(group_id: str, member_id: str, target: TaskRoles) -> tuple[bytes, bytes]:
    cls = _cls(TARGET_MEMBER)
    active, standby, warmup = target.keys()
    return (_key(TARGET_MEMBER, group_id=group_id, member_id=member_id),
            _value(TARGET_MEMBER, active_tasks=_task_ids(cls, active),
                   standby_tasks=_task_ids(cls, standby), warmup_tasks=_task_ids(cls, warmup)))


def current_assignment(group_id: str, m: StreamsMember) -> tuple[bytes, bytes]:
    cls = _cls(CURRENT_ASSIGNMENT)

    def with_epochs(tasks: dict[str, dict[int, int]]) -> list:
        return [cls.TaskIds(subtopology_id=s, partitions=sorted(ps),
                            assignment_epochs=[ps[p] for p in sorted(ps)])
                for s, ps in sorted(tasks.items()) if ps]

    return (_key(CURRENT_ASSIGNMENT, group_id=group_id, member_id=m.member_id),
            _value(CURRENT_ASSIGNMENT, member_epoch=m.member_epoch,
                   previous_member_epoch=m.previous_member_epoch, state=m.state,
                   active_tasks=with_epochs(m.assigned),
                   standby_tasks=_task_ids(cls, m.standby), warmup_tasks=_task_ids(cls, m.warmup),
                   active_tasks_pending_revocation=with_epochs(m.pending.active),
                   standby_tasks_pending_revocation=_task_ids(cls, m.pending.standby),
                   warmup_tasks_pending_revocation=_task_ids(cls, m.pending.warmup)))


def topology(group_id: str, t: Topology) -> tuple[bytes, bytes]:
    cls = _cls(TOPOLOGY)

    def info(i) -> object:
        return cls.TopicInfo(name=i.name, partitions=i.partitions,
                             replication_factor=i.replication_factor,
                             topic_configs=[cls.TopicConfig(key=k, value=v) for k, v in i.configs])

    return (_key(TOPOLOGY, group_id=group_id),
            _value(TOPOLOGY, epoch=t.epoch, subtopologies=[cls.Subtopology(
                subtopology_id=s.subtopology_id, source_topics=list(s.source_topics),
                source_topic_regex=list(s.source_topic_regex),
                state_changelog_topics=[info(i) for i in s.state_changelog_topics],
                repartition_sink_topics=list(s.repartition_sink_topics),
                repartition_source_topics=[info(i) for i in s.repartition_source_topics],
                copartition_groups=[cls.CopartitionGroup(
                    source_topics=list(g.source_topics),
                    source_topic_regex=list(g.source_topic_regex),
                    repartition_source_topics=list(g.repartition_source_topics))
                    for g in s.copartition_groups]) for s in t.subtopologies]))


def member_tombstones(group_id: str, member_id: str) -> list[tuple[bytes, None]]:
    """What Kafka writes when a member leaves: its current assignment, target and metadata."""
    return [(_key(kind, group_id=group_id, member_id=member_id), None)
            for kind in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER)]


def group_tombstones(group: StreamsGroup) -> list[tuple[bytes, None]]:
    """A deleted group's records, in Kafka's order (its members are gone already)."""
    return [(_key(kind, group_id=group.group_id), None)
            for kind in (TARGET_EPOCH, GROUP_EPOCH, TOPOLOGY)]


class _Found:
    """What one streams group's records say."""

    def __init__(self) -> None:
        self.metadata = None
        self.assignment_epoch = 1
        self.assignment_timestamp = 0
        self.topology = None
        self.members: dict[str, object] = {}
        self.targets: dict[str, object] = {}
        self.current: dict[str, object] = {}


class Replayer:
    """The streams groups of one partition, folded from their records in log order; a group
    whose metadata record is gone (deleted) is left out."""

    def __init__(self, now_ms: int):
        self._now = now_ms
        self._found: dict[str, _Found] = {}

    def record(self, kind: int, key: bytes, value: bytes | None) -> None:
        k, v = _FORMATS.read(kind, key, value)
        found = self._found.setdefault(k.group_id, _Found())
        if kind == GROUP_EPOCH:
            if v is None:
                del self._found[k.group_id]
            else:
                found.metadata = v
        elif kind == TARGET_EPOCH:
            found.assignment_epoch, found.assignment_timestamp = \
                (-1, 0) if v is None else (v.assignment_epoch, v.assignment_timestamp)
        elif kind == TOPOLOGY:
            found.topology = v
        else:
            table = {MEMBER: found.members, TARGET_MEMBER: found.targets,
                     CURRENT_ASSIGNMENT: found.current}[kind]
            if v is None:
                table.pop(k.member_id, None)
            else:
                table[k.member_id] = v

    def groups(self) -> dict[str, StreamsGroup]:
        return {group_id: _rebuild(group_id, found, self._now)
                for group_id, found in self._found.items() if found.metadata is not None}


def _tasks(entries) -> dict[str, set[int]]:
    return {t.subtopology_id: set(t.partitions) for t in entries or ()}


def _active(entries) -> dict[str, dict[int, int]]:
    return {t.subtopology_id: dict(zip(t.partitions, t.assignment_epochs or
                                       [0] * len(t.partitions)))
            for t in entries or ()}


def _rebuild(group_id: str, found: _Found, now_ms: int) -> StreamsGroup:
    group = StreamsGroup(group_id, now_ms)
    meta = found.metadata
    group.group_epoch = meta.epoch
    group.metadata_hash = meta.metadata_hash
    group.validated_topology_epoch = meta.validated_topology_epoch
    group.last_assignment_configs = {c.key: c.value for c in meta.last_assignment_configs or ()}
    group.assignment_epoch = found.assignment_epoch
    group.assignment_timestamp = found.assignment_timestamp
    if found.topology is not None:
        group.topology = from_wire(found.topology)
    for member_id, v in found.members.items():
        m = StreamsMember(
            member_id, rack_id=v.rack_id, client_id=v.client_id, client_host=v.client_host,
            instance_id=v.instance_id, rebalance_timeout_ms=v.rebalance_timeout_ms,
            topology_epoch=v.topology_epoch, process_id=v.process_id,
            user_endpoint=None if v.user_endpoint is None
            else (v.user_endpoint.host, v.user_endpoint.port),
            client_tags={t.key: t.value for t in v.client_tags or ()})
        current = found.current.get(member_id)
        if current is not None:
            m.member_epoch = current.member_epoch
            m.previous_member_epoch = current.previous_member_epoch
            m.state = current.state
            m.assigned = _active(current.active_tasks)
            m.standby = _tasks(current.standby_tasks)
            m.warmup = _tasks(current.warmup_tasks)
            m.pending = TaskRoles(_active(current.active_tasks_pending_revocation),
                                  _tasks(current.standby_tasks_pending_revocation),
                                  _tasks(current.warmup_tasks_pending_revocation))
        group.members[member_id] = m
    for member_id, v in found.targets.items():
        if member_id in group.members:
            group.target[member_id] = TaskRoles(
                {s: dict.fromkeys(ps, 0) for s, ps in _tasks(v.active_tasks).items()},
                _tasks(v.standby_tasks), _tasks(v.warmup_tasks))
    return group
