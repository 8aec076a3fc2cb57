"""One partition's log: record batches kept as the bytes the producer sent.

Appending patches the batch's base offset and leader epoch (outside the CRC) and stores it; a
Fetch hands stored batches back untouched.  Every replica is always in sync in a single-process
cluster, so the high watermark is the log end offset.  The log also keeps what Kafka keeps next
to a log: the leader-epoch cache (for OffsetForLeaderEpoch) and, per idempotent producer, the
sequence numbers of its last five batches (for duplicate and gap detection).
"""

from __future__ import annotations

import bisect
import struct
from collections import deque
from dataclasses import dataclass, field

from mockbroker.core.errors import ApiException
from wire import errors, records
from wire.records import BatchHeader

#: Kafka keeps the metadata of this many recent batches per producer for duplicate detection.
PRODUCER_BATCHES_KEPT = 5
NO_PRODUCER_EPOCH = -1
UNDEFINED_EPOCH = -1
INT32_MAX = (1 << 31) - 1
_INT32 = struct.Struct(">i")


@dataclass(slots=True)
class StoredBatch:
    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(slots=True)
class ProducerBatch:
    first_seq: int
    last_seq: int
    base_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    epoch: int = NO_PRODUCER_EPOCH
    batches: deque = field(default_factory=lambda: deque(maxlen=PRODUCER_BATCHES_KEPT))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1




@dataclass(slots=True)
class AppendResult:
    base_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    duplicate: bool = False


def _batch_epoch(batch: StoredBatch) -> int:
    return _INT32.unpack_from(batch.data, records.PARTITION_LEADER_EPOCH_OFFSET)[0]


def _next_seq(seq: int, delta: int) -> int:
    """Sequence arithmetic wraps at Int32.MAX_VALUE, as Kafka's does."""
    total = seq + delta
    return total - INT32_MAX - 1 if total > INT32_MAX else total


class PartitionLog:
    def __init__(self) -> None:
        self.batches: list[StoredBatch] = []
        self._bases: list[int] = []  # base offsets, for bisect
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
        #: (leader epoch, first offset written in it), ascending
        self.epochs: list[tuple[int, int]] = []
        self.producers: dict[int, ProducerEntry] = {}

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    # -- appends -------------------------------------------------------------------------------

    def append(self, batch: bytes, header: BatchHeader, leader_epoch: int, now_ms: int, *,
               log_append_time: bool = False) -> AppendResult:
        """Store one validated batch; raises :class:`ApiException` for sequence problems."""
        duplicate = self._check_producer(header)
        if duplicate is not None:
            return duplicate
        base = self.log_end_offset
        data = records.patch(batch, base_offset=base, partition_leader_epoch=leader_epoch)
        max_timestamp = header.max_timestamp
        append_time = -1
        if log_append_time:
            data = records.set_log_append_time(data, now_ms)
            max_timestamp = append_time = now_ms
        last = base + header.last_offset_delta
        self.batches.append(StoredBatch(base, last, max_timestamp, data))
        self._bases.append(base)
        self.size_bytes += len(data)
        self.log_end_offset = last + 1
        if not self.epochs or self.epochs[-1][0] < leader_epoch:
            self.epochs.append((leader_epoch, base))
        if header.producer_id >= 0:
            entry = self.producers.setdefault(header.producer_id, ProducerEntry())
            if entry.epoch != header.producer_epoch:
                entry.epoch = header.producer_epoch
                entry.batches.clear()
            entry.batches.append(ProducerBatch(
                header.base_sequence, _next_seq(header.base_sequence, header.last_offset_delta),
                base, last, max_timestamp))
        return AppendResult(base, append_time)

    def _check_producer(self, header: BatchHeader) -> AppendResult | None:
        """Kafka's idempotence rules; returns the original result of a duplicate batch."""
        pid = header.producer_id
        if pid < 0:
            return None
        entry = self.producers.get(pid)
        epoch = header.producer_epoch
        first = header.base_sequence
        last = _next_seq(first, header.last_offset_delta)
        if entry is None:
            return None  # a producer this partition has not seen may start anywhere
        if epoch < entry.epoch:
            raise ApiException(errors.INVALID_PRODUCER_EPOCH,
                                  f"producer {pid} epoch {epoch} is older than {entry.epoch}")
        if epoch == entry.epoch:
            for old in entry.batches:
                if old.first_seq == first and old.last_seq == last:
                    # Kafka answers a duplicate with the batch's max timestamp as its append time
                    return AppendResult(old.base_offset, old.timestamp, duplicate=True)
            expected = _next_seq(entry.last_seq, 1)
            if entry.batches and first != expected:
                raise ApiException(
                    errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"producer {pid}: sequence {first} where {expected} was expected")
        elif first != 0 and entry.epoch != NO_PRODUCER_EPOCH:
            raise ApiException(errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                  f"producer {pid}: new epoch {epoch} must start at sequence 0")
        return None

    # -- reads ---------------------------------------------------------------------------------

    def _index_of(self, offset: int) -> int:
        """Index of the batch holding ``offset`` (or the first batch after it)."""
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            return 0
        if self.batches[i].last_offset < offset:
            return i + 1
        return i

    def read(self, offset: int, max_bytes: int, *, at_least_one: bool = True) -> bytes:
        """Whole batches from the one holding ``offset``, up to ``max_bytes`` (but at least one
        batch when ``at_least_one``, as Kafka answers a Fetch so no consumer gets stuck)."""
        if offset < self.log_start_offset or offset >= self.log_end_offset:
            return b""
        i = self._index_of(offset)
        out = []
        total = 0
        for batch in self.batches[i:]:
            if total + batch.size > max_bytes and (out or not at_least_one):
                break
            out.append(batch.data)
            total += batch.size
        return b"".join(out)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int, int] | None:
        """The first record whose timestamp is at least ``timestamp``: (offset, its timestamp,
        the leader epoch of its batch)."""
        for batch in self._live_batches():
            if batch.max_timestamp >= timestamp:
                for record in records.decode_records(batch.data, verify_crc=False):
                    if record.offset >= self.log_start_offset and record.timestamp >= timestamp:
                        return record.offset, record.timestamp, _batch_epoch(batch)
        return None

    def max_timestamp(self) -> tuple[int, int, int] | None:
        """The record with the largest timestamp (the first such, by offset): (offset,
        timestamp, the leader epoch of its batch)."""
        best: tuple[int, int, int] | None = None
        for batch in self._live_batches():
            if best is None or batch.max_timestamp > best[1]:
                for record in records.decode_records(batch.data, verify_crc=False):
                    if record.offset >= self.log_start_offset and (
                            best is None or record.timestamp > best[1]):
                        best = (record.offset, record.timestamp, _batch_epoch(batch))
        return best

    def _live_batches(self):
        if not self.batches:
            return []
        return self.batches[self._index_of(self.log_start_offset):]

    def epoch_entries(self, leader_epoch: int = UNDEFINED_EPOCH) -> list[tuple[int, int]]:
        """The leader-epoch cache as Kafka's leader of ``leader_epoch`` holds it: (epoch, start
        offset), ascending.  A leader records its epoch at the log end offset when it takes
        over, before it writes anything, replacing epochs that start there; moving the log start
        offset drops the epochs before it and moves the last of them up to the new start."""
        entries = self.epochs
        start = self.log_start_offset
        if entries and entries[0][1] < start:
            before = [e for e in entries if e[1] <= start]
            entries = [(before[-1][0], start)] + entries[len(before):]
        if leader_epoch >= 0 and (not entries or entries[-1][0] < leader_epoch):
            end = self.log_end_offset
            entries = [e for e in entries if e[1] < end] + [(leader_epoch, end)]
        return list(entries)

    def epoch_at_start(self, leader_epoch: int = UNDEFINED_EPOCH) -> int:
        """The leader epoch of the log start offset, or -1 (ListOffsets EARLIEST)."""
        entries = self.epoch_entries(leader_epoch)
        return entries[0][0] if entries and entries[0][1] <= self.log_start_offset \
            else UNDEFINED_EPOCH

    def end_offset_for_epoch(self, epoch: int, leader_epoch: int = UNDEFINED_EPOCH
                             ) -> tuple[int, int]:
        """OffsetForLeaderEpoch, answered by the leader of ``leader_epoch`` as Kafka's epoch
        cache answers it: (the largest known epoch <= ``epoch``, the start offset of the next
        known epoch, or the log end offset for the current one); (-1, -1) when unknown."""
        entries = self.epoch_entries(leader_epoch)
        if epoch == UNDEFINED_EPOCH or not entries:
            return UNDEFINED_EPOCH, -1
        if entries[-1][0] == epoch:
            return epoch, self.log_end_offset
        later = [e for e in entries if e[0] > epoch]
        if not later:
            return UNDEFINED_EPOCH, -1
        earlier = [e for e in entries if e[0] <= epoch]
        # An epoch older than any kept (its data deleted) ends where the first kept one starts.
        return (earlier[-1][0] if earlier else epoch), later[0][1]

    # -- truncation ----------------------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset up to ``offset`` (DeleteRecords); returns the new start."""
        if offset <= self.log_start_offset:
            return self.log_start_offset
        self.log_start_offset = offset
        keep = self._index_of(offset)
        if keep:
            self.size_bytes -= sum(b.size for b in self.batches[:keep])
            del self.batches[:keep]
            del self._bases[:keep]
        return self.log_start_offset
