"""The read path: what a Fetch (or ListOffsets) reads from partition logs, and the long poll.

A Fetch names partitions with a position each; :func:`read` answers every one of them with the
log's offsets and whole stored batches, within the request's byte budget (the first partition
with data gets at least one whole batch even past it, as Kafka does, so a large batch cannot
stall a consumer).  A ``read_committed`` fetcher reads up to the last stable offset and gets the
aborted transactions of what it read.  When there is not yet ``min_bytes`` to give,
:func:`long_poll` waits for appends to the fetched topics, up to ``max_wait_ms``.  Which
partitions a fetch reads, and which of them its answer carries, is its fetch session's to say
(:mod:`mockbroker.core.datapath.fetch_sessions`).
"""

from __future__ import annotations

import logging
from typing import Callable

from msgspec import Struct

from mockbroker.core.clock import Timers
from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.context import InjectedError
from mockbroker.core.deferred import Close, Deferred
from mockbroker.core.datapath.replica import replica_error
from wire import errors

log = logging.getLogger("mockbroker.core")

#: the mean size of the batches of a read below which they are joined before the answer
#: takes them (a loop over many small ones costs more than the copy it saves)
JOIN_BELOW_BYTES = 1024


class FetchPosition(Struct):
    """One partition of a Fetch: where the fetcher is, and what it knows."""

    partition: Partition | None
    #: the error for a partition that is not there (unknown topic by name or by id)
    missing_error: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    #: how the fetcher names it (the topic's name, even for a topic that is not there)
    topic_name: str | None = None
    index: int = -1


class PartitionRead(Struct):
    """What a Fetch answers for one partition."""

    error_code: int = errors.NONE
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    #: the batches read, whole and in order: joined, or a list the codec puts into the answer
    #: back to back
    records: bytes | list[bytes] = b""
    #: (producer id, first offset) of aborted transactions in what was read; None unless the
    #: fetcher reads committed data
    aborted_transactions: list[tuple[int, int]] | None = None
    #: (epoch, end offset) when the fetcher's last fetched epoch ends before its position
    diverging_epoch: tuple[int, int] | None = None
    #: (leader id, leader epoch) when the fetcher should move to another leader
    current_leader: tuple[int, int] | None = None


def read(positions: list[FetchPosition], *, broker_id: int, max_bytes: int,
         read_committed: bool, check_last_fetched_epoch: bool, name_new_leader: bool,
         injected: InjectedError | None = None,
         leader_only: bool = True) -> tuple[list[PartitionRead], int]:
    """Each position read on ``broker_id``; returns the reads and the bytes they carry.  The
    partitions an ``injected`` error hits get that error instead, as if the broker had it.
    Without ``leader_only`` a follower reads too (KIP-392: Kafka serves a consumer's fetch
    from any replica), up to the high watermark as the leader does."""
    total = 0
    reads = []
    for position in positions:
        out = PartitionRead()
        reads.append(out)
        if injected is not None and injected.hits(position.topic_name, position.index):
            out.error_code = injected.error_code
            continue
        partition = position.partition
        if partition is None:
            out.error_code = position.missing_error
            continue
        out.error_code = replica_error(partition, broker_id, position.current_leader_epoch,
                                       leader_only=leader_only)
        if out.error_code != errors.NONE:
            # KIP-951: a client that can be told names the new leader
            if name_new_leader and out.error_code in (errors.NOT_LEADER_OR_FOLLOWER,
                                                      errors.FENCED_LEADER_EPOCH):
                out.current_leader = (partition.leader, partition.leader_epoch)
            continue
        log = partition.log
        diverging = None
        if check_last_fetched_epoch and position.last_fetched_epoch >= 0:
            out.error_code, diverging = _check_last_fetched_epoch(partition, position)
            if out.error_code != errors.NONE:
                continue
        fetch_offset = position.fetch_offset
        if not log.log_start_offset <= fetch_offset <= log.log_end_offset:
            # Kafka reports no offsets with this error; the consumer asks ListOffsets
            out.error_code = errors.OFFSET_OUT_OF_RANGE
            continue
        out.high_watermark = high_watermark = log.high_watermark
        out.last_stable_offset = last_stable_offset = log.last_stable_offset
        out.log_start_offset = log.log_start_offset
        out.aborted_transactions = [] if read_committed else None
        if diverging is not None:
            out.diverging_epoch = diverging
            continue
        upper = last_stable_offset if read_committed else high_watermark
        if fetch_offset >= upper:
            continue  # at the end (an idle consumer's long poll): nothing to read, none aborted
        limit = min(position.max_bytes, max(max_bytes - total, 0))
        batches, size = log.read_batches(fetch_offset, limit, at_least_one=(total == 0),
                                         upper=upper)
        # Large batches go into the answer's frame as they are stored, each copied once; many
        # small ones (a producer that sends records one at a time) cost less joined in one go.
        out.records = batches if size >= JOIN_BELOW_BYTES * len(batches) else b"".join(batches)
        if read_committed:
            out.aborted_transactions = log.aborted_transactions(fetch_offset, upper)
        total += size
    return reads, total


def _check_last_fetched_epoch(partition: Partition, position: FetchPosition):
    """Kafka's check of a fetcher's ``last_fetched_epoch`` (followers send it; KIP-595):
    (OFFSET_OUT_OF_RANGE, None) when that epoch is unknown here or the offset is below the log
    start; (NONE, (epoch, end offset)) when the fetch position lies past the end of that epoch,
    so the fetcher must truncate; (NONE, None) to read as usual."""
    log = partition.log
    epoch, end = log.end_offset_for_epoch(position.last_fetched_epoch, partition.leader_epoch)
    if epoch < 0 or end < 0 or position.fetch_offset < log.log_start_offset:
        return errors.OFFSET_OUT_OF_RANGE, None
    if epoch < position.last_fetched_epoch or end < position.fetch_offset:
        return errors.NONE, (epoch, end)
    return errors.NONE, None


def answer_now(reads: list[PartitionRead]) -> bool:
    """An error or a diverging epoch in any partition ends a long poll at once, as in Kafka."""
    return any(r.error_code != errors.NONE or r.diverging_epoch is not None for r in reads)


def long_poll(cluster: Cluster, timers: Timers, positions: list[FetchPosition],
              min_bytes: int, max_wait_ms: int, read: Callable[[], tuple[object, int]],
              respond: Callable[[object], object]) -> Deferred:
    """Answer with ``respond(reads)`` once ``read()`` finds at least ``min_bytes`` after an
    append to one of the fetched topics, or at ``max_wait_ms`` with whatever there is then.
    ``read`` returns (the reads, the bytes they carry); ``respond`` is called once."""
    return _LongPoll(cluster, timers, positions, min_bytes, max_wait_ms, read,
                     respond).deferred


class _LongPoll:
    """One waiting Fetch.  Whatever refers back to it (its timer, the cluster's append
    listeners, its deferred's cancel) lets go once it is answered or cancelled, so an idle
    consumer's long polls leave no reference cycles for the collector to find."""

    __slots__ = ("cluster", "topics", "min_bytes", "read", "respond", "deferred", "timer")

    def __init__(self, cluster: Cluster, timers: Timers, positions: list[FetchPosition],
                 min_bytes: int, max_wait_ms: int, read: Callable[[], tuple[object, int]],
                 respond: Callable[[object], object]):
        self.cluster = cluster
        self.topics = {p.partition.topic for p in positions if p.partition is not None}
        self.min_bytes = min_bytes
        self.read = read
        self.respond = respond
        self.deferred = Deferred()
        cluster.append_listeners.add(self.on_append)
        self.timer = timers.call_later(max_wait_ms, self.finish)
        self.deferred.on_cancel = self.cancel

    def _release(self) -> None:
        self.cluster.append_listeners.discard(self.on_append)
        self.timer.cancel()
        self.deferred.on_cancel = None

    def cancel(self) -> None:
        self._release()

    def finish(self, reads=None) -> None:
        self._release()
        try:
            answer = self.respond(self.read()[0] if reads is None else reads)
        except Exception as exc:  # a bug must not leave the fetch, and its connection, hanging
            log.exception("failed to answer a long-polling fetch")
            answer = Close(f"failed to answer the fetch: {exc!r}")
        self.deferred.resolve(answer)

    def on_append(self, partition: Partition) -> None:
        if partition.topic in self.topics:
            reads, size = self.read()
            if size >= self.min_bytes or answer_now(reads):
                self.finish(reads)


def list_offset(partition: Partition, timestamp: int, *, read_committed: bool = False
                ) -> tuple[int, int, int]:
    """ListOffsets for one partition: (offset, timestamp, leader epoch), or (-1, -1, -1) when
    there is none.  The latest offset of a ``read_committed`` reader is the last stable
    offset."""
    log = partition.log
    if timestamp == -2 or timestamp == -4:  # EARLIEST, EARLIEST_LOCAL
        return log.log_start_offset, -1, log.epoch_at_start(partition.leader_epoch)
    if timestamp == -1:  # LATEST
        return (log.last_stable_offset if read_committed else log.high_watermark), -1, \
            partition.leader_epoch
    if timestamp == -3:  # MAX_TIMESTAMP
        return log.max_timestamp() or (-1, -1, -1)
    if timestamp in (-5, -6):  # LATEST_TIERED, EARLIEST_PENDING_UPLOAD: nothing is tiered
        return -1, -1, -1
    return log.offset_for_timestamp(timestamp) or (-1, -1, -1)
