"""The records a consumer group writes to ``__consumer_offsets``, in Kafka's formats, and the
group rebuilt from them.

Record types (the int16 before each key): 3 group epoch (``ConsumerGroupMetadata``), 5 a
member's subscription and client (``ConsumerGroupMemberMetadata``), 6 the target assignment's
epoch (``ConsumerGroupTargetAssignmentMetadata``), 7 a member's target partitions
(``ConsumerGroupTargetAssignmentMember``), 8 a member's epochs, state and current partitions
(``ConsumerGroupCurrentMemberAssignment``).  A null value deletes what its key names.
"""

from __future__ import annotations

import uuid
from typing import Any

from msgspec import Struct, field

from mockbroker.core.groups.consumer.group import ConsumerGroup
from mockbroker.core.groups.consumer.member import (ClassicMetadata, ConsumerMember,
                                                    MemberState, Partitions)
from mockbroker.core.groups.modern import records as modern_records
from wire import decode_embedded, embedded_codec

GROUP_EPOCH, MEMBER, TARGET_EPOCH, TARGET_MEMBER, CURRENT_ASSIGNMENT = 3, 5, 6, 7, 8
RECORD_TYPES = (GROUP_EPOCH, MEMBER, TARGET_EPOCH, TARGET_MEMBER, CURRENT_ASSIGNMENT)
_NAMES = {GROUP_EPOCH: "ConsumerGroupMetadata", MEMBER: "ConsumerGroupMemberMetadata",
          TARGET_EPOCH: "ConsumerGroupTargetAssignmentMetadata",
          TARGET_MEMBER: "ConsumerGroupTargetAssignmentMember",
          CURRENT_ASSIGNMENT: "ConsumerGroupCurrentMemberAssignment"}


_FORMATS = modern_records.Formats(_NAMES)
_key, _value = _FORMATS.key, _FORMATS.value


def group_epoch(group: ConsumerGroup) -> tuple[bytes, bytes]:
    return (_key(GROUP_EPOCH, group_id=group.group_id),
            _value(GROUP_EPOCH, epoch=group.group_epoch, metadata_hash=group.metadata_hash))


def member(group_id: str, m: ConsumerMember) -> tuple[bytes, bytes]:
    classic = None
    if m.classic is not None:
        cls = embedded_codec(_NAMES[MEMBER] + "Value", 0).cls
        classic = cls.ClassicMemberMetadata(
            session_timeout_ms=m.classic.session_timeout_ms,
            supported_protocols=[cls.ClassicProtocol(name=n, metadata=d)
                                 for n, d in m.classic.protocols])
    return (_key(MEMBER, group_id=group_id, member_id=m.member_id),
            _value(MEMBER, instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id,
                   client_host=m.client_host, subscribed_topic_names=m.subscribed_topic_names,
                   subscribed_topic_regex=m.subscribed_topic_regex,
                   rebalance_timeout_ms=m.rebalance_timeout_ms,
                   server_assignor=m.server_assignor, classic_member_metadata=classic))


def target_epoch(group: ConsumerGroup) -> tuple[bytes, bytes]:
    return (_key(TARGET_EPOCH, group_id=group.group_id),
            _value(TARGET_EPOCH, assignment_epoch=group.assignment_epoch,
                   assignment_timestamp=group.assignment_timestamp))


def target_member(group_id: str, member_id: str,
                  partitions: dict[uuid.UUID, set[int]]) -> tuple[bytes, bytes]:
    cls = embedded_codec(_NAMES[TARGET_MEMBER] + "Value", 0).cls
    return (_key(TARGET_MEMBER, group_id=group_id, member_id=member_id),
            _value(TARGET_MEMBER, topic_partitions=[
                cls.TopicPartition(topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(partitions.items(), key=lambda kv: kv[0].int)]))


def _partitions(cls, parts: Partitions) -> list:
    return [cls.TopicPartitions(topic_id=t, partitions=sorted(ps),
                                assignment_epochs=[ps[p] for p in sorted(ps)])
            for t, ps in sorted(parts.items(), key=lambda kv: kv[0].int)]


def current_assignment(group_id: str, m: ConsumerMember) -> tuple[bytes, bytes]:
    cls = embedded_codec(_NAMES[CURRENT_ASSIGNMENT] + "Value", 0).cls
    return (_key(CURRENT_ASSIGNMENT, group_id=group_id, member_id=m.member_id),
            _value(CURRENT_ASSIGNMENT, member_epoch=m.member_epoch,
                   previous_member_epoch=m.previous_member_epoch, state=int(m.state),
                   assigned_partitions=_partitions(cls, m.assigned),
                   partitions_pending_revocation=_partitions(cls, m.pending_revocation)))


def member_tombstones(group_id: str, member_id: str) -> list[tuple[bytes, None]]:
    """What Kafka writes when a member leaves: its current assignment, target and metadata."""
    return [(_key(kind, group_id=group_id, member_id=member_id), None)
            for kind in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER)]


def group_tombstones(group_id: str) -> list[tuple[bytes, None]]:
    return [(_key(TARGET_EPOCH, group_id=group_id), None),
            (_key(GROUP_EPOCH, group_id=group_id), None)]


class Replayed(Struct):
    """What one consumer group's records say."""

    group_epoch: int | None = None
    metadata_hash: int = 0
    assignment_epoch: int = 0
    assignment_timestamp: int = 0
    members: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, dict[uuid.UUID, set[int]]] = field(default_factory=dict)
    current: dict[str, Any] = field(default_factory=dict)


def replay_record(found: dict[str, Replayed], kind: int, key: bytes, value: bytes | None) -> None:
    """Fold one record (its key without the type) into ``found`` (group id -> Replayed)."""
    codec = embedded_codec(_NAMES[kind] + "Key", 0)
    k = codec.decode(key)[0]
    group = found.setdefault(k.group_id, Replayed())
    if kind == GROUP_EPOCH:
        if value is None:
            del found[k.group_id]
            return
        v = decode_embedded(_NAMES[kind] + "Value", value)[1]
        group.group_epoch, group.metadata_hash = v.epoch, v.metadata_hash
        return
    if kind == TARGET_EPOCH:
        if value is not None:
            v = decode_embedded(_NAMES[kind] + "Value", value)[1]
            group.assignment_epoch = v.assignment_epoch
            group.assignment_timestamp = v.assignment_timestamp
        return
    table = {MEMBER: group.members, TARGET_MEMBER: group.targets,
             CURRENT_ASSIGNMENT: group.current}[kind]
    if value is None:
        table.pop(k.member_id, None)
        return
    v = decode_embedded(_NAMES[kind] + "Value", value)[1]
    if kind == TARGET_MEMBER:
        table[k.member_id] = {tp.topic_id: set(tp.partitions) for tp in v.topic_partitions}
    else:
        table[k.member_id] = v


def _parts(entries) -> Partitions:
    out: Partitions = {}
    for tp in entries:
        epochs = tp.assignment_epochs or [0] * len(tp.partitions)
        out[tp.topic_id] = dict(zip(tp.partitions, epochs))
    return out


def rebuild(group_id: str, replayed: Replayed, now_ms: int) -> ConsumerGroup:
    group = ConsumerGroup(group_id, now_ms)
    group.group_epoch = replayed.group_epoch or 1
    group.metadata_hash = replayed.metadata_hash
    group.assignment_epoch = replayed.assignment_epoch
    group.assignment_timestamp = replayed.assignment_timestamp
    for member_id, v in replayed.members.items():
        m = ConsumerMember(member_id, instance_id=v.instance_id, rack_id=v.rack_id,
                           client_id=v.client_id, client_host=v.client_host,
                           subscribed_topic_names=list(v.subscribed_topic_names),
                           subscribed_topic_regex=v.subscribed_topic_regex,
                           rebalance_timeout_ms=v.rebalance_timeout_ms,
                           server_assignor=v.server_assignor)
        if v.classic_member_metadata is not None:
            m.classic = ClassicMetadata(
                v.classic_member_metadata.session_timeout_ms,
                tuple((p.name, bytes(p.metadata))
                      for p in v.classic_member_metadata.supported_protocols))
        current = replayed.current.get(member_id)
        if current is not None:
            m.member_epoch = current.member_epoch
            m.previous_member_epoch = current.previous_member_epoch
            try:
                m.state = MemberState(current.state)
            except ValueError:
                m.state = MemberState.UNKNOWN
            m.assigned = _parts(current.assigned_partitions)
            m.pending_revocation = _parts(current.partitions_pending_revocation)
        group.members[member_id] = m
    group.target = {member_id: parts for member_id, parts in replayed.targets.items()
                    if member_id in group.members}
    return group


class Replayer:
    """The consumer groups of one partition, folded from their records in log order; a group
    whose epoch record is gone (deleted, or converted to another type) is left out."""

    def __init__(self, now_ms: int):
        self._now = now_ms
        self._found: dict[str, Replayed] = {}

    def record(self, kind: int, key: bytes, value: bytes | None) -> None:
        replay_record(self._found, kind, key, value)

    def groups(self) -> dict[str, ConsumerGroup]:
        return {group_id: rebuild(group_id, found, self._now)
                for group_id, found in self._found.items() if found.group_epoch is not None}
