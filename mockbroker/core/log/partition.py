"""One partition's log: record batches kept as the bytes the producer sent, and its offsets.

Appending patches the batch's base offset and leader epoch (outside the CRC) and stores it; a
Fetch hands stored batches back untouched.  The log owns its offsets: the log start offset
(moved up by DeleteRecords), the log end offset, the high watermark (every replica is always in
sync in a single-process cluster, so it is the log end offset) and the last stable offset (what
a ``read_committed`` consumer may read: the high watermark while no transaction is open).  It
also keeps what Kafka keeps next to a log: the leader-epoch cache (for OffsetForLeaderEpoch),
the idempotent producers' state (:mod:`~mockbroker.core.log.producer_state`) and the index of
aborted transactions that ``read_committed`` fetches are told about.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass

from mockbroker.core.log.producer_state import ProducerState
from wire import records
from wire.records import BatchHeader

UNDEFINED_EPOCH = -1
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


@dataclass(frozen=True, slots=True)
class AbortedTransaction:
    """A transaction whose records a ``read_committed`` consumer must skip: from its
    producer's ``first_offset`` up to the abort marker at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class AppendResult:
    base_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    duplicate: bool = False


def _batch_epoch(batch: StoredBatch) -> int:
    return _INT32.unpack_from(batch.data, records.PARTITION_LEADER_EPOCH_OFFSET)[0]


class PartitionLog:
    def __init__(self) -> None:
        self.batches: list[StoredBatch] = []
        self._bases: list[int] = []  # base offsets, for bisect
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
        #: (leader epoch, first offset written in it), ascending
        self.epochs: list[tuple[int, int]] = []
        self.producer_state = ProducerState()
        #: aborted transactions, by the offset of their abort marker
        self.aborted: list[AbortedTransaction] = []

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset a ``read_committed`` consumer may not read yet: below every open
        transaction's first offset (with none open, the high watermark)."""
        return self.high_watermark

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of each aborted transaction with records in
        [``start``, ``end``), for a ``read_committed`` fetch of that range."""
        return [(a.producer_id, a.first_offset) for a in self.aborted
                if a.first_offset < end and a.last_offset >= start]

    # -- appends -------------------------------------------------------------------------------

    def append(self, batch: bytes, header: BatchHeader, leader_epoch: int, now_ms: int, *,
               log_append_time: bool = False) -> AppendResult:
        """Store one validated batch; raises :class:`ApiException` for sequence problems."""
        duplicate = self.producer_state.check(header)
        if duplicate is not None:
            # Kafka answers a duplicate with the batch's max timestamp as its append time
            return AppendResult(duplicate.base_offset, duplicate.timestamp, duplicate=True)
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
        self.producer_state.record(header, base, last, max_timestamp)
        return AppendResult(base, append_time)

    # -- reads ---------------------------------------------------------------------------------

    def _index_of(self, offset: int) -> int:
        """Index of the batch holding ``offset`` (or the first batch after it)."""
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            return 0
        if self.batches[i].last_offset < offset:
            return i + 1
        return i

    def read(self, offset: int, max_bytes: int, *, at_least_one: bool = True,
             upper: int | None = None) -> bytes:
        """Whole batches from the one holding ``offset``, up to ``max_bytes`` (but at least one
        batch when ``at_least_one``, as Kafka answers a Fetch so no consumer gets stuck), none
        starting at or past ``upper`` (default: the high watermark)."""
        upper = self.high_watermark if upper is None else upper
        if offset < self.log_start_offset or offset >= upper:
            return b""
        i = self._index_of(offset)
        out = []
        total = 0
        for batch in self.batches[i:]:
            if batch.base_offset >= upper:
                break
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
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]
        return self.log_start_offset
