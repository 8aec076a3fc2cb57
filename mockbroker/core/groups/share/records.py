"""The records a share group writes to ``__consumer_offsets``, in Kafka's formats, and the
group rebuilt from them.

Record types (the int16 before each key): 10 a member's subscription and client
(``ShareGroupMemberMetadata``), 11 the group epoch (``ShareGroupMetadata``), 12 the target
assignment's epoch (``ShareGroupTargetAssignmentMetadata``), 13 a member's target partitions
(``ShareGroupTargetAssignmentMember``), 14 a member's epochs and partitions
(``ShareGroupCurrentMemberAssignment``), 15 which partitions have a share state
(``ShareGroupStatePartitionMetadata``).  A null value deletes what its key names.
"""

from __future__ import annotations

import uuid

from mockbroker.core.groups.share.group import ShareGroup, ShareMember
from mockbroker.core.groups.modern import records as modern_records

MEMBER, GROUP_EPOCH, TARGET_EPOCH, TARGET_MEMBER, CURRENT_ASSIGNMENT, PARTITIONS = range(10, 16)
RECORD_TYPES = (MEMBER, GROUP_EPOCH, TARGET_EPOCH, TARGET_MEMBER, CURRENT_ASSIGNMENT, PARTITIONS)
_NAMES = {MEMBER: "ShareGroupMemberMetadata", GROUP_EPOCH: "ShareGroupMetadata",
          TARGET_EPOCH: "ShareGroupTargetAssignmentMetadata",
          TARGET_MEMBER: "ShareGroupTargetAssignmentMember",
          CURRENT_ASSIGNMENT: "ShareGroupCurrentMemberAssignment",
          PARTITIONS: "ShareGroupStatePartitionMetadata"}


_FORMATS = modern_records.Formats(_NAMES)
_key, _value, _cls = _FORMATS.key, _FORMATS.value, _FORMATS.cls


def group_epoch(group: ShareGroup) -> tuple[bytes, bytes]:
    return (_key(GROUP_EPOCH, group_id=group.group_id),
            _value(GROUP_EPOCH, epoch=group.group_epoch, metadata_hash=group.metadata_hash))


def member(group_id: str, m: ShareMember) -> tuple[bytes, bytes]:
    return (_key(MEMBER, group_id=group_id, member_id=m.member_id),
            _value(MEMBER, rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
                   subscribed_topic_names=list(m.subscribed_topic_names)))


def target_epoch(group: ShareGroup) -> tuple[bytes, bytes]:
    return (_key(TARGET_EPOCH, group_id=group.group_id),
            _value(TARGET_EPOCH, assignment_epoch=group.assignment_epoch,
                   assignment_timestamp=group.assignment_timestamp))


def target_member(group_id: str, member_id: str,
                  partitions: dict[uuid.UUID, set[int]]) -> tuple[bytes, bytes]:
    cls = _cls(TARGET_MEMBER)
    return (_key(TARGET_MEMBER, group_id=group_id, member_id=member_id),
            _value(TARGET_MEMBER, topic_partitions=[
                cls.TopicPartition(topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(partitions.items(), key=lambda kv: kv[0].int)]))


def current_assignment(group_id: str, m: ShareMember) -> tuple[bytes, bytes]:
    cls = _cls(CURRENT_ASSIGNMENT)
    return (_key(CURRENT_ASSIGNMENT, group_id=group_id, member_id=m.member_id),
            _value(CURRENT_ASSIGNMENT, member_epoch=m.member_epoch,
                   previous_member_epoch=m.previous_member_epoch, state=m.state,
                   assigned_partitions=[
                       cls.TopicPartitions(topic_id=t, partitions=sorted(ps))
                       for t, ps in sorted(m.assigned.items(), key=lambda kv: kv[0].int)]))


def partitions(group: ShareGroup) -> tuple[bytes, bytes]:
    """Which partitions have a share state, are getting one, or are losing theirs."""
    cls = _cls(PARTITIONS)

    def info(table: dict[uuid.UUID, set[int]]) -> list:
        return [cls.TopicPartitionsInfo(topic_id=t, topic_name=group.topic_names.get(t, ""),
                                        partitions=sorted(ps))
                for t, ps in sorted(table.items(), key=lambda kv: kv[0].int) if ps]

    return (_key(PARTITIONS, group_id=group.group_id),
            _value(PARTITIONS, initializing_topics=info(group.initializing),
                   initialized_topics=info(group.initialized),
                   deleting_topics=[cls.TopicInfo(topic_id=t,
                                                  topic_name=group.topic_names.get(t, ""))
                                    for t in sorted(group.deleting, key=lambda t: t.int)]))


def member_tombstones(group_id: str, member_id: str) -> list[tuple[bytes, None]]:
    """What Kafka writes when a member leaves: its current assignment, target and metadata."""
    return [(_key(kind, group_id=group_id, member_id=member_id), None)
            for kind in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER)]


def group_tombstones(group_id: str) -> list[tuple[bytes, None]]:
    return [(_key(PARTITIONS, group_id=group_id), None),
            (_key(TARGET_EPOCH, group_id=group_id), None),
            (_key(GROUP_EPOCH, group_id=group_id), None)]


class _Found:
    """What one share group's records say."""

    def __init__(self) -> None:
        self.epoch: int | None = None
        self.metadata_hash = 0
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        self.members: dict[str, object] = {}
        self.targets: dict[str, dict[uuid.UUID, set[int]]] = {}
        self.current: dict[str, object] = {}
        self.partitions = None


class Replayer:
    """The share groups of one partition, folded from their records in log order; a group
    whose epoch record is gone (deleted) is left out."""

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
                found.epoch, found.metadata_hash = v.epoch, v.metadata_hash
        elif kind == TARGET_EPOCH:
            if v is not None:
                found.assignment_epoch = v.assignment_epoch
                found.assignment_timestamp = v.assignment_timestamp
        elif kind == PARTITIONS:
            found.partitions = v
        else:
            table = {MEMBER: found.members, TARGET_MEMBER: found.targets,
                     CURRENT_ASSIGNMENT: found.current}[kind]
            if v is None:
                table.pop(k.member_id, None)
            elif kind == TARGET_MEMBER:
                table[k.member_id] = {tp.topic_id: set(tp.partitions)
                                      for tp in v.topic_partitions}
            else:
                table[k.member_id] = v

    def groups(self) -> dict[str, ShareGroup]:
        return {group_id: _rebuild(group_id, found, self._now)
                for group_id, found in self._found.items() if found.epoch is not None}


def _rebuild(group_id: str, found: _Found, now_ms: int) -> ShareGroup:
    group = ShareGroup(group_id, now_ms)
    group.group_epoch = found.epoch or 1
    group.metadata_hash = found.metadata_hash
    group.assignment_epoch = found.assignment_epoch
    group.assignment_timestamp = found.assignment_timestamp
    for member_id, v in found.members.items():
        m = ShareMember(member_id, rack_id=v.rack_id, client_id=v.client_id,
                        client_host=v.client_host,
                        subscribed_topic_names=list(v.subscribed_topic_names))
        current = found.current.get(member_id)
        if current is not None:
            m.member_epoch = current.member_epoch
            m.previous_member_epoch = current.previous_member_epoch
            m.state = current.state
            m.assigned = {tp.topic_id: {p: current.member_epoch for p in tp.partitions}
                          for tp in current.assigned_partitions}
        group.members[member_id] = m
    group.target = {member_id: parts for member_id, parts in found.targets.items()
                    if member_id in group.members}
    if found.partitions is not None:
        v = found.partitions
        for topic in v.initialized_topics:
            group.initialized[topic.topic_id] = set(topic.partitions)
            group.topic_names[topic.topic_id] = topic.topic_name
        for topic in v.initializing_topics:
            group.initializing[topic.topic_id] = set(topic.partitions)
            group.topic_names[topic.topic_id] = topic.topic_name
        for topic in v.deleting_topics:
            group.deleting.add(topic.topic_id)
            group.topic_names[topic.topic_id] = topic.topic_name
    return group
