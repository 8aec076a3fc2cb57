"""``__consumer_offsets`` records in Kafka's own format, and rebuilding groups from them.

A record key starts with an int16 record type — 0 or 1 for an offset commit
(``OffsetCommitKey``), 2 for group metadata (``GroupMetadataKey``) — and a value with the int16
version of its format.  A null value (a tombstone) deletes what the key names.  Records are
appended as ordinary record batches, so the partition can be read like any other topic.
"""

from __future__ import annotations

import struct

from mockbroker.core.coordinator.group import Group, Member, OffsetEntry
from mockbroker.core.coordinator.state import GroupState
from mockbroker.core.log import PartitionLog
from wire import embedded_struct, records
from wire.records import BatchHeader, read_batch_header

OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA_TYPE = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3

_TYPE = struct.Struct(">h")


def _encode(name: str, version: int, value) -> bytes:
    return _TYPE.pack(version) + bytes(embedded_struct(name, version).encode(value))


def _offset_key(group_id: str, topic: str, partition: int) -> bytes:
    codec = embedded_struct("OffsetCommitKey", 0)
    return _TYPE.pack(1) + bytes(codec.encode(codec.cls(group=group_id, topic=topic,
                                                        partition=partition)))


def _group_key(group_id: str) -> bytes:
    codec = embedded_struct("GroupMetadataKey", 0)
    return _TYPE.pack(GROUP_METADATA_TYPE) + bytes(codec.encode(codec.cls(group=group_id)))


def offset_commit_record(group_id: str, topic: str, partition: int, entry: OffsetEntry):
    codec = embedded_struct("OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION)
    value = codec.cls(offset=entry.offset, leader_epoch=entry.leader_epoch,
                      metadata=entry.metadata, commit_timestamp=entry.commit_timestamp)
    return _offset_key(group_id, topic, partition), _encode(
        "OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION, value)


def offset_tombstone(group_id: str, topic: str, partition: int):
    return _offset_key(group_id, topic, partition), None


def group_tombstone(group_id: str):
    return _group_key(group_id), None


def group_metadata_record(group: Group, assignments: dict[str, bytes], now_ms: int):
    codec = embedded_struct("GroupMetadataValue", GROUP_METADATA_VALUE_VERSION)
    cls = codec.cls
    members = []
    for member in group.members.values():
        subscription = member.metadata(group.protocol_name) if group.protocol_name else b""
        members.append(cls.MemberMetadata(
            member_id=member.member_id, group_instance_id=member.group_instance_id,
            client_id=member.client_id, client_host=member.client_host,
            rebalance_timeout=member.rebalance_timeout_ms,
            session_timeout=member.session_timeout_ms, subscription=subscription,
            assignment=assignments.get(member.member_id, b"")))
    value = cls(protocol_type=group.protocol_type or "", generation=group.generation_id,
                protocol=group.protocol_name, leader=group.leader_id,
                current_state_timestamp=now_ms, members=members)
    return _group_key(group.group_id), _encode("GroupMetadataValue",
                                               GROUP_METADATA_VALUE_VERSION, value)


def append(partition, now_ms: int, entries: list[tuple[bytes, bytes | None]]) -> None:
    """Append key/value records to a ``__consumer_offsets`` partition as one batch."""
    if not entries:
        return
    batch = records.encode_batch([(key, value, [], now_ms) for key, value in entries])
    header: BatchHeader = read_batch_header(batch)
    partition.log.append(batch, header, partition.leader_epoch, now_ms)


def replay(log: PartitionLog, now_ms: int) -> dict[str, Group]:
    """Rebuild every group of a partition from its records, as a new coordinator does."""
    groups: dict[str, Group] = {}
    offsets: dict[str, dict[tuple[str, int], OffsetEntry]] = {}
    for stored in log.batches:
        for record in records.decode_records(stored.data, verify_crc=False):
            if record.key is None or len(record.key) < 2:
                continue
            (kind,) = _TYPE.unpack_from(record.key)
            key_bytes = bytes(record.key[2:])
            if kind in OFFSET_COMMIT_TYPES:
                key = embedded_struct("OffsetCommitKey", 0).decode(key_bytes)[0]
                bucket = offsets.setdefault(key.group, {})
                if record.value is None:
                    bucket.pop((key.topic, key.partition), None)
                    continue
                _, value = _decode_value("OffsetCommitValue", record.value)
                bucket[(key.topic, key.partition)] = OffsetEntry(
                    value.offset, value.leader_epoch, value.metadata, value.commit_timestamp,
                    value.expire_timestamp)
            elif kind == GROUP_METADATA_TYPE:
                key = embedded_struct("GroupMetadataKey", 0).decode(key_bytes)[0]
                if record.value is None:
                    groups.pop(key.group, None)
                    offsets.pop(key.group, None)
                    continue
                _, value = _decode_value("GroupMetadataValue", record.value)
                groups[key.group] = _group_from_value(key.group, value, now_ms)
    for group_id, entries in offsets.items():
        group = groups.get(group_id)
        if group is None:
            group = groups[group_id] = Group(group_id, now_ms)
        group.offsets = entries
    return groups


def _decode_value(name: str, data: bytes):
    from wire import decode_embedded

    return decode_embedded(name, bytes(data))


def _group_from_value(group_id: str, value, now_ms: int) -> Group:
    group = Group(group_id, now_ms)
    group.protocol_type = value.protocol_type or None
    group.generation_id = value.generation
    group.protocol_name = value.protocol
    group.leader_id = value.leader
    for m in value.members:
        member = Member(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                        m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
                        m.session_timeout, group.protocol_type or "",
                        [(group.protocol_name or "", m.subscription)], m.assignment)
        group.members[member.member_id] = member
        if member.group_instance_id is not None:
            group.static_members[member.group_instance_id] = member.member_id
    # A loaded group with members is Stable (Kafka does the same): they carry on heartbeating.
    group.state = GroupState.STABLE if group.members else GroupState.EMPTY
    return group
