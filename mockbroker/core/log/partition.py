"""One partition's log: record batches kept as the bytes the producer sent, and its offsets.

Appending patches the batch's base offset and leader epoch (outside the CRC) and stores it; a
Fetch hands stored batches back untouched.  The log owns its offsets: the log start offset
(moved up by DeleteRecords), the log end offset, the high watermark (every replica is always in
sync in a single-process cluster, so it is the log end offset) and the last stable offset (what
a ``read_committed`` consumer may read: the high watermark while no transaction is open).  It
also keeps what Kafka keeps next to a log: the leader-epoch cache (for OffsetForLeaderEpoch),
the idempotent producers' state (:mod:`~mockbroker.core.log.producer_state`) and the index of
aborted transactions that ``read_committed`` fetches are told about.

Batches are grouped into segments as Kafka's log files are: an append rolls a new segment when
the active one would grow past ``segment.bytes`` or its first batch is ``segment.ms`` older than
the new one (:meth:`PartitionLog.append` takes both).  Retention deletes whole segments
(:meth:`PartitionLog.delete_old_segments`, the checks of Kafka's ``UnifiedLog``), and the log
start offset moves to the first kept segment's base offset.  A segment here is only its
offsets, size and timestamps; the batches stay in one list.
"""

from __future__ import annotations

import bisect
import struct
from typing import Callable

from msgspec import Struct

from mockbroker.core.log.producer_state import ProducerState
from wire import records
from wire.records import BatchHeader

UNDEFINED_EPOCH = -1
_INT32 = struct.Struct(">i")


class StoredBatch(Struct):
    """A record batch as the log holds it: its offsets, max timestamp and bytes."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


class Segment(Struct):
    """What Kafka knows of a segment file without reading it: where it starts, its size (every
    batch appended to it, even below a log start moved by DeleteRecords), its largest batch
    timestamp and the first batch's, which ``segment.ms`` counts from."""

    base_offset: int
    created_ms: int
    size: int = 0
    max_timestamp: int = -1
    rolling_timestamp: int = -1
    last_modified_ms: int = -1

    @property
    def largest_timestamp(self) -> int:
        """What ``retention.ms`` is measured against: the largest record timestamp, or the
        time of the last append when no batch carried one."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.last_modified_ms


#: Kafka's defaults of ``segment.bytes`` (1 GiB) and ``segment.ms`` (7 days)
DEFAULT_SEGMENT_BYTES = 1024 ** 3
DEFAULT_SEGMENT_MS = 7 * 24 * 3600 * 1000


class AbortedTransaction(Struct, frozen=True):
    """A transaction whose records a ``read_committed`` consumer must skip: from its
    producer's ``first_offset`` up to the abort marker at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int


class AppendResult(Struct):
    """Where an append put a batch, or where the batch it duplicates went."""

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
        #: oldest first; the last is the active segment (appends go there)
        self.segments: list[Segment] = [Segment(0, -1)]
        #: (segment.bytes, segment.ms) now: the cluster points this at the topic's configs
        self.segment_config: Callable[[], tuple[int, int]] = \
            lambda: (DEFAULT_SEGMENT_BYTES, DEFAULT_SEGMENT_MS)
        #: where the high watermark stays while the ISR is below min.insync.replicas (the
        #: replication control sets it); None: it follows the log end
        self.held_high_watermark: int | None = None

    @property
    def high_watermark(self) -> int:
        held = self.held_high_watermark
        return self.log_end_offset if held is None else min(held, self.log_end_offset)

    @property
    def last_stable_offset(self) -> int:
        """The first offset a ``read_committed`` consumer may not read yet: below every open
        transaction's first offset (with none open, the high watermark)."""
        first = self.producer_state.first_unstable_offset()
        return self.high_watermark if first is None else min(first, self.high_watermark)

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of each aborted transaction with records in
        [``start``, ``end``), for a ``read_committed`` fetch of that range."""
        return [(a.producer_id, a.first_offset) for a in self.aborted
                if a.first_offset < end and a.last_offset >= start]

    # -- appends -------------------------------------------------------------------------------

    def append(self, batch: bytes, header: BatchHeader, leader_epoch: int, now_ms: int, *,
               log_append_time: bool = False, trusted: bool = False) -> AppendResult:
        """Store one validated batch; raises :class:`ApiException` for sequence problems.  A
        ``trusted`` batch is the broker's own (a coordinator's records): no sequence checks."""
        duplicate = None if trusted else self.producer_state.check(header)
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
        self._store(StoredBatch(base, last, max_timestamp, data), now_ms, leader_epoch)
        self.producer_state.record(header, base, last, max_timestamp)
        return AppendResult(base, append_time)

    def append_marker(self, batch: bytes, header: BatchHeader, leader_epoch: int, now_ms: int,
                      *, commit: bool, coordinator_epoch: int = -1) -> int:
        """Store a commit or abort marker the coordinator wrote (a control batch), closing the
        producer's transaction here; returns the marker's offset."""
        pid = header.producer_id
        self.producer_state.check_marker(pid, header.producer_epoch)
        base = self.log_end_offset
        data = records.patch(batch, base_offset=base, partition_leader_epoch=leader_epoch)
        self._store(StoredBatch(base, base, header.max_timestamp, data), now_ms, leader_epoch)
        first = self.producer_state.end_transaction(pid, header.producer_epoch,
                                                    coordinator_epoch, header.max_timestamp)
        if not commit and first is not None:
            self.aborted.append(AbortedTransaction(pid, first, base))
        return base

    def _store(self, stored: StoredBatch, now_ms: int, leader_epoch: int) -> None:
        self._maybe_roll(stored.base_offset, stored.size, stored.max_timestamp, now_ms)
        self.batches.append(stored)
        self._bases.append(stored.base_offset)
        self.size_bytes += stored.size
        segment = self.segments[-1]
        if segment.size == 0:
            segment.rolling_timestamp = stored.max_timestamp
            if segment.created_ms < 0:
                segment.created_ms = now_ms
        segment.size += stored.size
        segment.max_timestamp = max(segment.max_timestamp, stored.max_timestamp)
        segment.last_modified_ms = now_ms
        self.log_end_offset = stored.last_offset + 1
        if not self.epochs or self.epochs[-1][0] < leader_epoch:
            self.epochs.append((leader_epoch, stored.base_offset))

    def _maybe_roll(self, base: int, size: int, max_timestamp: int, now_ms: int) -> None:
        """Start a new segment at ``base`` when the active one is not empty and the batch would
        take it past ``segment.bytes``, or ``segment.ms`` has passed since its first batch
        (Kafka's ``LogSegment.shouldRoll``, with no roll jitter)."""
        active = self.segments[-1]
        if active.size == 0:
            return
        segment_bytes, segment_ms = self.segment_config()
        if active.rolling_timestamp >= 0:
            waited = max_timestamp - active.rolling_timestamp
        else:
            waited = now_ms - active.created_ms
        if active.size > segment_bytes - size or waited > segment_ms:
            self.segments.append(Segment(base, now_ms))

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
        return b"".join(self.read_batches(offset, max_bytes, at_least_one=at_least_one,
                                          upper=upper)[0])

    def read_batches(self, offset: int, max_bytes: int, *, at_least_one: bool = True,
                     upper: int | None = None) -> tuple[list[bytes], int]:
        """What :meth:`read` reads, as the stored batches themselves, and their total size (a
        Fetch answer can take them into its frame with no joined copy first)."""
        upper = self.high_watermark if upper is None else upper
        if offset < self.log_start_offset or offset >= upper:
            return [], 0
        i = self._index_of(offset)
        out = []
        total = 0
        batches = self.batches
        for j in range(i, len(batches)):  # not a slice: a long log's tail is not copied
            batch = batches[j]
            if batch.base_offset >= upper:
                break
            data = batch.data
            size = len(data)
            if total + size > max_bytes and (out or not at_least_one):
                break
            out.append(data)
            total += size
        return out, total

    def stored_from(self, offset: int, upper: int | None = None):
        """The stored batches from the one holding ``offset``, in order, none starting at or
        past ``upper`` (default: the high watermark): a share partition reads their offsets
        and headers."""
        upper = self.high_watermark if upper is None else upper
        if offset >= upper:
            return
        batches = self.batches
        for j in range(self._index_of(max(offset, self.log_start_offset)), len(batches)):
            batch = batches[j]
            if batch.base_offset >= upper:
                return
            yield batch

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

    def data_records(self) -> int:
        """How many records the log holds from its log start offset, control records
        (transaction markers) left out; a batch the log start cuts counts its records from
        there on (a batch's offsets are consecutive unless compacted, which no log here is)."""
        total = 0
        start = self.log_start_offset
        for stored in self._live_batches():
            header = records.read_batch_header(stored.data)
            if header.is_control:
                continue
            count = header.records_count
            if stored.base_offset < start:
                count = max(0, min(count, stored.last_offset - start + 1))
            total += count
        return total

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

    def truncate_to(self, offset: int) -> None:
        """Drop every batch from ``offset`` on (a batch boundary), as a replica does when a
        leader elected from outside the ISR ends its log there: the log end, segments, epoch
        cache, aborted transactions and producer state are as if those batches never came."""
        if offset >= self.log_end_offset:
            return
        cut = bisect.bisect_left(self._bases, offset)
        for stored in self.batches[cut:]:
            self.size_bytes -= stored.size
            for segment in reversed(self.segments):
                if segment.base_offset <= stored.base_offset:
                    segment.size -= stored.size
                    break
        del self.batches[cut:]
        del self._bases[cut:]
        self.log_end_offset = max(offset, self.log_start_offset)
        kept = [s for s in self.segments if s.base_offset < offset or s is self.segments[0]]
        self.segments = kept
        self.epochs = [e for e in self.epochs if e[1] < offset]
        self.aborted = [a for a in self.aborted if a.last_offset < offset]
        self.producer_state = self._replayed_producers()

    def _replayed_producers(self) -> ProducerState:
        """The producers' state rebuilt from the batches kept (Kafka reloads it from the log
        after a truncation)."""
        state = ProducerState()
        for stored in self.batches:
            header = records.read_batch_header(stored.data)
            if header.producer_id < 0:
                continue
            if header.is_control:
                marker = records.decode_control_record(
                    records.decode_records(stored.data, verify_crc=False)[0])
                epoch = -1 if marker.coordinator_epoch is None else marker.coordinator_epoch
                state.end_transaction(header.producer_id, header.producer_epoch, epoch,
                                      stored.max_timestamp)
            else:
                state.record(header, stored.base_offset, stored.last_offset,
                             stored.max_timestamp)
        return state

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset up to ``offset`` (DeleteRecords); returns the new start.
        The batches below it go at once; the segments holding them stay (and count in the
        log's size) until retention deletes them, as Kafka's files do."""
        if offset <= self.log_start_offset:
            return self.log_start_offset
        self.log_start_offset = offset
        keep = self._index_of(offset)
        if keep:
            del self.batches[:keep]
            del self._bases[:keep]
        # the cache keeps the epoch of the new start, moved up to it (truncateFromStart)
        self.epochs = self.epoch_entries()
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]
        return self.log_start_offset

    def delete_old_segments(self, now_ms: int, retention_ms: int, retention_bytes: int, *,
                            delete: bool = True) -> int:
        """One retention check of Kafka's ``UnifiedLog.deleteOldSegments``: segments wholly
        below the log start offset, then (with ``delete``, the ``cleanup.policy``) the oldest
        segments while the log is over ``retention_bytes``, then those whose largest timestamp
        is more than ``retention_ms`` old (-1 turns either off).  A segment goes only with
        every older one; the active segment goes too when it is not empty (a new, empty one
        takes its place), and the log start offset moves up to the first kept segment.
        Returns how many segments were deleted."""
        def below_start(segment: Segment, following: Segment | None) -> bool:
            return following is not None and following.base_offset <= self.log_start_offset

        def too_old(segment: Segment, following: Segment | None) -> bool:
            return now_ms - segment.largest_timestamp > retention_ms

        deleted = self._delete_segments(now_ms, below_start)
        if not delete:
            return deleted
        if retention_bytes >= 0 and self.size_bytes >= retention_bytes:
            excess = self.size_bytes - retention_bytes

            def over_size(segment: Segment, following: Segment | None) -> bool:
                nonlocal excess
                if excess - segment.size < 0:
                    return False
                excess -= segment.size
                return True
            deleted += self._delete_segments(now_ms, over_size)
        if retention_ms >= 0:
            deleted += self._delete_segments(now_ms, too_old)
        return deleted

    def _delete_segments(self, now_ms: int,
                         breached: Callable[[Segment, Segment | None], bool]) -> int:
        """Delete the oldest segments for which ``breached(segment, next segment)`` holds,
        stopping at the first that is kept (Kafka's ``deletableSegments``)."""
        count = 0
        segments = self.segments
        while count < len(segments):
            segment = segments[count]
            following = segments[count + 1] if count + 1 < len(segments) else None
            if following is None and segment.size == 0:
                break
            if not breached(segment, following):
                break
            count += 1
        if not count:
            return 0
        if count == len(segments):
            # a log always has a segment: roll an empty one at the log end first
            segments.append(Segment(self.log_end_offset, now_ms))
        self.size_bytes -= sum(s.size for s in segments[:count])
        del segments[:count]
        self.delete_records_before(segments[0].base_offset)
        return count
