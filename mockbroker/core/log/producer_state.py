"""Idempotent producers' state in one partition, as Kafka's ``ProducerStateManager`` keeps it.

Per producer id: its epoch and the sequence numbers of its last five batches, so a retried
batch is recognised as a duplicate (and answered with its original offset), a gap is
OUT_OF_ORDER_SEQUENCE_NUMBER, and an older epoch is fenced.  A producer's open transaction in
the partition is kept by the offset of its first batch, until its commit or abort marker: the
earliest of those offsets is the partition's last stable offset.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from msgspec import Struct, field

from mockbroker.core.errors import ApiException
from wire import errors

if TYPE_CHECKING:
    from wire.records import BatchHeader

#: Kafka keeps the metadata of this many recent batches per producer for duplicate detection.
PRODUCER_BATCHES_KEPT = 5
NO_PRODUCER_EPOCH = -1
INT32_MAX = (1 << 31) - 1


class ProducerBatch(Struct):
    """One of the last batches a producer wrote: its sequence range and offsets."""

    first_seq: int
    last_seq: int
    base_offset: int
    last_offset: int
    timestamp: int


class ProducerEntry(Struct):
    """What a partition remembers of one producer id: its epoch and its last batches."""

    epoch: int = NO_PRODUCER_EPOCH
    batches: deque = field(default_factory=lambda: deque(maxlen=PRODUCER_BATCHES_KEPT))
    #: the epoch of the coordinator that wrote the producer's last marker here (-1: none yet)
    coordinator_epoch: int = -1
    #: the timestamp of its last batch or marker
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def _next_seq(seq: int, delta: int) -> int:
    """Sequence arithmetic wraps at Int32.MAX_VALUE, as Kafka's does."""
    total = seq + delta
    return total - INT32_MAX - 1 if total > INT32_MAX else total


class ProducerState:
    """Every idempotent producer that wrote to one partition."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        #: producer id -> first offset of its open transaction in this partition
        self.ongoing: dict[int, int] = {}

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction, or None."""
        return min(self.ongoing.values()) if self.ongoing else None

    def check(self, header: BatchHeader) -> ProducerBatch | None:
        """Kafka's idempotence rules for a batch about to be appended: the earlier batch it
        duplicates (None when it is new); raises :class:`ApiException` for a fenced epoch or a
        sequence gap."""
        pid = header.producer_id
        if pid < 0:
            return None
        entry = self.producers.get(pid)
        epoch = header.producer_epoch
        first = header.base_sequence
        last = _next_seq(first, header.last_offset_delta)
        if not header.is_transactional and pid in self.ongoing:
            raise ApiException(errors.INVALID_TXN_STATE, (
                f"producer {pid} wrote a non-transactional batch in its open transaction"))
        if entry is None:
            return None  # a producer this partition has not seen may start anywhere
        if epoch < entry.epoch:
            raise ApiException(errors.INVALID_PRODUCER_EPOCH,
                               f"producer {pid} epoch {epoch} is older than {entry.epoch}")
        if epoch == entry.epoch:
            for old in entry.batches:
                if old.first_seq == first and old.last_seq == last:
                    return old
            expected = _next_seq(entry.last_seq, 1)
            if entry.batches and first != expected:
                raise ApiException(
                    errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"producer {pid}: sequence {first} where {expected} was expected")
        elif first != 0 and entry.epoch != NO_PRODUCER_EPOCH:
            raise ApiException(errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                               f"producer {pid}: new epoch {epoch} must start at sequence 0")
        return None

    def record(self, header: BatchHeader, base_offset: int, last_offset: int,
               timestamp: int) -> None:
        """Remember an appended batch of an idempotent producer."""
        if header.producer_id < 0:
            return
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerEntry()
        if entry.epoch != header.producer_epoch:
            entry.epoch = header.producer_epoch
            entry.batches.clear()
        entry.batches.append(ProducerBatch(
            header.base_sequence, _next_seq(header.base_sequence, header.last_offset_delta),
            base_offset, last_offset, timestamp))
        entry.last_timestamp = timestamp
        if header.is_transactional:
            self.ongoing.setdefault(header.producer_id, base_offset)

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers that have written nothing for ``expiration_ms`` and have no open
        transaction here (Kafka's ``producer.id.expiration.ms``); returns how many."""
        doomed = [pid for pid, entry in self.producers.items()
                  if pid not in self.ongoing and now_ms - entry.last_timestamp >= expiration_ms]
        for pid in doomed:
            del self.producers[pid]
        return len(doomed)

    def check_marker(self, producer_id: int, epoch: int) -> None:
        """A marker with an epoch older than the producer's is from a fenced coordinator."""
        entry = self.producers.get(producer_id)
        if entry is not None and epoch < entry.epoch:
            raise ApiException(errors.INVALID_PRODUCER_EPOCH, (
                f"marker of producer {producer_id} epoch {epoch} is older than {entry.epoch}"))

    def end_transaction(self, producer_id: int, epoch: int, coordinator_epoch: int,
                        timestamp: int) -> int | None:
        """A marker closes the producer's transaction here: the first offset it had (None when
        it wrote nothing to this partition).  A marker with a new epoch (transaction version 2)
        starts the producer's sequence afresh."""
        entry = self.producers.setdefault(producer_id, ProducerEntry())
        if epoch > entry.epoch:
            entry.epoch = epoch
            entry.batches.clear()
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = timestamp
        return self.ongoing.pop(producer_id, None)
