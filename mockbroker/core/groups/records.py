"""``__consumer_offsets`` records in Kafka's own format, and rebuilding groups from them.

A record key starts with an int16 record type — 0 or 1 for an offset commit
(``OffsetCommitKey``), 2 for group metadata (``GroupMetadataKey``) — and a value with the int16
version of its format.  A null value (a tombstone) deletes what the key names.  Records are
appended as ordinary record batches, so the partition can be read like any other topic.
Group-metadata records (type 2) are classic groups'; KIP-848 consumer groups write record
types 3 to 8 of their own (:mod:`mockbroker.core.groups.consumer.records`).  :func:`replay` hands each group record to the loader of its group type.
"""

from __future__ import annotations

import struct

from typing import Any

from msgspec import Struct, field

from mockbroker.core.groups.consumer import records as consumer_records
from mockbroker.core.log import PartitionLog
from wire import decode_embedded, embedded_codec, records
from wire.records import BatchHeader, read_batch_header

OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA_TYPE = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3

_TYPE = struct.Struct(">h")


def _encode(name: str, version: int, value) -> bytes:
    return _TYPE.pack(version) + bytes(embedded_codec(name, version).encode(value))


def _offset_key(group_id: str, topic: str, partition: int) -> bytes:
    codec = embedded_codec("OffsetCommitKey", 0)
    return _TYPE.pack(1) + bytes(codec.encode(codec.cls(group=group_id, topic=topic,
                                                        partition=partition)))


def _group_key(group_id: str) -> bytes:
    codec = embedded_codec("GroupMetadataKey", 0)
    return _TYPE.pack(GROUP_METADATA_TYPE) + bytes(codec.encode(codec.cls(group=group_id)))


def offset_commit_record(group_id: str, topic: str, partition: int, entry):
    codec = embedded_codec("OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION)
    value = codec.cls(offset=entry.offset, leader_epoch=entry.leader_epoch,
                      metadata=entry.metadata, commit_timestamp=entry.commit_timestamp)
    return _offset_key(group_id, topic, partition), _encode(
        "OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION, value)


def offset_tombstone(group_id: str, topic: str, partition: int):
    return _offset_key(group_id, topic, partition), None


def group_tombstone(group_id: str):
    return _group_key(group_id), None


def group_metadata_record(group, assignments: dict[str, bytes], now_ms: int):
    codec = embedded_codec("GroupMetadataValue", GROUP_METADATA_VALUE_VERSION)
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


def append(partition, now_ms: int, entries: list[tuple[bytes, bytes | None]], *,
           producer_id: int = -1, producer_epoch: int = -1) -> None:
    """Append key/value records to a ``__consumer_offsets`` partition as one batch (a
    transactional one for offsets committed in a transaction: ``producer_id`` and its epoch)."""
    if not entries:
        return
    batch = records.encode_batch([(key, value, [], now_ms) for key, value in entries],
                                 producer_id=producer_id, producer_epoch=producer_epoch,
                                 is_transactional=producer_id >= 0)
    header: BatchHeader = read_batch_header(batch)
    partition.log.append(batch, header, partition.leader_epoch, now_ms, trusted=True)


class OffsetEntry(Struct):
    """A committed offset, as its record holds it."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


class Replayed(Struct):
    """What a partition's records say: each group's last metadata record value (by record
    type), and each group's committed offsets."""

    metadata: dict[str, tuple[int, Any]]
    offsets: dict[str, dict[tuple[str, int], OffsetEntry]]
    #: offsets of transactions with no marker yet: group -> producer id -> offsets
    pending: dict[str, dict[int, dict[tuple[str, int], OffsetEntry]]]
    #: KIP-848 consumer groups: group id -> what their records say
    consumer: dict = field(default_factory=dict)


def replay(log: PartitionLog) -> Replayed:
    """Read a partition's records as a new coordinator does: the last word on each key wins,
    and a tombstone deletes what its key names.  A group's tombstone leaves its offsets, which
    have tombstones of their own when the group is deleted (and stay when an empty group
    becomes a group of the other type)."""
    metadata: dict[str, tuple[int, Any]] = {}
    offsets: dict[str, dict[tuple[str, int], OffsetEntry]] = {}
    pending: dict[int, dict[str, dict[tuple[str, int], OffsetEntry]]] = {}
    consumer: dict[str, consumer_records.Replayed] = {}
    for stored in log.batches:
        header = read_batch_header(stored.data)
        if header.is_control:
            # a transaction's marker: its offsets are committed now, or dropped
            by_group = pending.pop(header.producer_id, {})
            record = records.decode_records(stored.data, verify_crc=False)[0]
            if records.decode_control_record(record).type == records.CONTROL_COMMIT:
                for group_id, entries in by_group.items():
                    offsets.setdefault(group_id, {}).update(entries)
            continue
        for record in records.decode_records(stored.data, verify_crc=False):
            if record.key is None or len(record.key) < 2:
                continue
            (kind,) = _TYPE.unpack_from(record.key)
            key_bytes = bytes(record.key[2:])
            if kind in OFFSET_COMMIT_TYPES:
                key = embedded_codec("OffsetCommitKey", 0).decode(key_bytes)[0]
                if header.is_transactional:
                    _, value = _decode_value("OffsetCommitValue", record.value)
                    pending.setdefault(header.producer_id, {}).setdefault(key.group, {})[
                        (key.topic, key.partition)] = OffsetEntry(
                        value.offset, value.leader_epoch, value.metadata,
                        value.commit_timestamp, value.expire_timestamp)
                    continue
                bucket = offsets.setdefault(key.group, {})
                if record.value is None:
                    bucket.pop((key.topic, key.partition), None)
                    continue
                _, value = _decode_value("OffsetCommitValue", record.value)
                bucket[(key.topic, key.partition)] = OffsetEntry(
                    value.offset, value.leader_epoch, value.metadata, value.commit_timestamp,
                    value.expire_timestamp)
            elif kind in consumer_records.TYPES:
                consumer_records.replay_record(
                    consumer, kind, key_bytes,
                    None if record.value is None else bytes(record.value))
            elif kind == GROUP_METADATA_TYPE:
                key = embedded_codec("GroupMetadataKey", 0).decode(key_bytes)[0]
                if record.value is None:
                    metadata.pop(key.group, None)
                    continue
                metadata[key.group] = (kind, _decode_value("GroupMetadataValue",
                                                           record.value)[1])
    by_group: dict[str, dict[int, dict[tuple[str, int], OffsetEntry]]] = {}
    for producer_id, groups in pending.items():
        for group_id, entries in groups.items():
            by_group.setdefault(group_id, {})[producer_id] = entries
    return Replayed(metadata, offsets, by_group, consumer)


def _decode_value(name: str, data: bytes):
    return decode_embedded(name, bytes(data))
