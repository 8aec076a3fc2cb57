"""``__consumer_offsets`` records in Kafka's own format: the offsets every group type shares,
appending a batch of records, and reading a partition back.

A record key starts with an int16 record type — 0 or 1 for an offset commit
(``OffsetCommitKey``), others for a group type's own records — and a value with the int16
version of its format.  A null value (a tombstone) deletes what the key names.  Records are
appended as ordinary record batches, so the partition can be read like any other topic.
Each group type writes record types of its own: a classic group type 2
(:mod:`mockbroker.core.groups.classic.records`), a KIP-848 consumer group types 3 to 8
(:mod:`mockbroker.core.groups.consumer.records`).  :func:`replay` reads the offsets itself and
hands every other record to the fold of the type it belongs to, which the caller passes in:
this module imports no group type.
"""

from __future__ import annotations

import struct

from typing import TYPE_CHECKING

from msgspec import Struct

from mockbroker.core.log import PartitionLog
from wire import decode_embedded, embedded_codec, records
from wire.records import BatchHeader, read_batch_header

if TYPE_CHECKING:
    from mockbroker.core.groups import Replayer

OFFSET_COMMIT_TYPES = (0, 1)
OFFSET_COMMIT_VALUE_VERSION = 3

_TYPE = struct.Struct(">h")


def _encode(name: str, version: int, value) -> bytes:
    return _TYPE.pack(version) + bytes(embedded_codec(name, version).encode(value))


def _offset_key(group_id: str, topic: str, partition: int) -> bytes:
    codec = embedded_codec("OffsetCommitKey", 0)
    return _TYPE.pack(1) + bytes(codec.encode(codec.cls(group=group_id, topic=topic,
                                                        partition=partition)))


def offset_commit_record(group_id: str, topic: str, partition: int, entry):
    codec = embedded_codec("OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION)
    value = codec.cls(offset=entry.offset, leader_epoch=entry.leader_epoch,
                      metadata=entry.metadata, commit_timestamp=entry.commit_timestamp)
    return _offset_key(group_id, topic, partition), _encode(
        "OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION, value)


def offset_tombstone(group_id: str, topic: str, partition: int):
    return _offset_key(group_id, topic, partition), None


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
    """What a partition's records say of offsets: each group's committed offsets, and those of
    transactions still open."""

    offsets: dict[str, dict[tuple[str, int], OffsetEntry]]
    #: offsets of transactions with no marker yet: group -> producer id -> offsets
    pending: dict[str, dict[int, dict[tuple[str, int], OffsetEntry]]]


def replay(log: PartitionLog, folds: dict[int, "Replayer"]) -> Replayed:
    """Read a partition's records as a new coordinator does: the last word on each key wins,
    and a tombstone deletes what its key names.  The offsets are read here; every other record
    goes, in log order, to the fold of its record type in ``folds`` (a record type no fold
    takes is skipped).  A group's tombstone leaves its offsets, which have tombstones of their
    own when the group is deleted (and stay when an empty group becomes a group of another
    type)."""
    offsets: dict[str, dict[tuple[str, int], OffsetEntry]] = {}
    pending: dict[int, dict[str, dict[tuple[str, int], OffsetEntry]]] = {}
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
            elif kind in folds:
                folds[kind].record(kind, key_bytes,
                                   None if record.value is None else bytes(record.value))
    by_group: dict[str, dict[int, dict[tuple[str, int], OffsetEntry]]] = {}
    for producer_id, groups in pending.items():
        for group_id, entries in groups.items():
            by_group.setdefault(group_id, {})[producer_id] = entries
    return Replayed(offsets, by_group)


def _decode_value(name: str, data: bytes):
    return decode_embedded(name, bytes(data))
