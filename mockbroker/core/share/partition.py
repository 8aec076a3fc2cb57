"""One share partition (Kafka's ``SharePartition``): a topic partition as one share group
consumes it, held by the partition's leader.

It keeps the records in flight, from the share-partition start offset (everything before it is
done) up to the next offset it has not fetched yet (:attr:`SharePartition.next_offset`), as runs
of offsets that share a state, a delivery count, the member holding them and the deadline of
their acquisition lock.  Every change goes through the state table
(:mod:`~mockbroker.core.share.state`).

* **Acquiring** hands a member the Available records first (redeliveries, one more delivery
  each), then new records from the log, whole log batches at a time (so a fetch may get more
  than it asked for, as in Kafka), up to the group's record-lock limit.  In the default
  batch-optimized mode the new records are cut into acquired ranges of about the fetch's batch
  size; in record-limit mode exactly the records asked for are acquired and the rest of the last
  batch stays Available.  A ``read_committed`` group archives what aborted transactions wrote.
* **Acknowledging** (ACCEPT, RELEASE, REJECT, GAP, RENEW) is checked as Kafka checks it, and
  all of one partition's acknowledgements take effect or none.
* **Locks** expire on the cluster's clock (a manual clock moves them only when it moves), and a
  member's session closing releases what it held.
* **The dead-letter queue**: in a group that has one, a rejected record and one past its
  delivery limit are Archiving, written so, and handed to ``dead_letter``; once the queue has
  them (:meth:`SharePartition.dead_lettered`) they are Archived.
* The start offset moves past the records that are done; the state is written to the share
  coordinator (``persist``) after every change but acquiring, as Kafka writes it.
"""

from __future__ import annotations

import bisect
from typing import Callable

from msgspec import Struct

from mockbroker.core.errors import ApiException
from mockbroker.core.share.state import (ACK_EVENTS, AckType, DeadLetter, Event,
                                         RecordState, dead_letter_reason, next_state)
from wire import errors
from wire.records import read_batch_header

AVAILABLE, ACQUIRED, ARCHIVING = RecordState.AVAILABLE, RecordState.ACQUIRED, \
    RecordState.ARCHIVING


class InFlight(Struct):
    """A run of offsets [first, last] in one state."""

    first: int
    last: int
    state: RecordState
    delivery_count: int = 0
    #: the member holding them ("" unless acquired)
    member: str = ""
    #: when their acquisition lock expires (ms on the cluster's clock; -1 unless acquired)
    deadline: int = -1

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def same(self, other: "InFlight") -> bool:
        return (self.state, self.delivery_count, self.member, self.deadline) == \
            (other.state, other.delivery_count, other.member, other.deadline)


class Acquired(Struct, frozen=True):
    """A range a fetch acquired: its offsets and their delivery count (ShareFetch's
    AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


class StateBatch(Struct, frozen=True):
    """A range as the share coordinator keeps it (``StateBatch`` of Kafka's share records)."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


class DeadLetterRange(Struct, frozen=True):
    """Records on their way to the group's dead-letter queue, and why."""

    first_offset: int
    last_offset: int
    delivery_count: int
    reason: DeadLetter


class ShareConfig(Struct, frozen=True):
    """The group's settings a share partition works by (group configs over broker ones)."""

    lock_duration_ms: int = 30000
    delivery_limit: int = 5
    max_locks: int = 2000
    auto_offset_reset: str = "latest"
    read_committed: bool = False
    renew_enabled: bool = True
    #: the group has a dead-letter queue (a topic named, and ``share.version`` 2)
    dead_letter: bool = False


def _invalid_state(message: str) -> ApiException:
    return ApiException(errors.INVALID_RECORD_STATE, message)


class SharePartition:
    def __init__(self, group_id: str, partition, *, now: Callable[[], int],
                 config: Callable[[], ShareConfig],
                 persist: Callable[["SharePartition", list[StateBatch]], None],
                 dead_letter: Callable[["SharePartition", list[DeadLetterRange]], None]
                 = lambda sp, ranges: None,
                 state_epoch: int = 0, start_offset: int = 0,
                 batches: list[StateBatch] = ()):
        self.group_id = group_id
        #: the cluster's partition (its topic, index and log)
        self.partition = partition
        self._now = now
        self.config = config
        self._persist = persist
        self._dead_letter = dead_letter
        self.state_epoch = state_epoch
        self.leader_epoch = partition.leader_epoch
        self.start_offset = start_offset
        self.runs: list[InFlight] = []
        for b in sorted(batches, key=lambda b: b.first_offset):
            if b.last_offset < start_offset:
                continue
            self.runs.append(InFlight(max(b.first_offset, start_offset), b.last_offset,
                                      RecordState(b.delivery_state), b.delivery_count))
        #: the next offset never fetched into the share partition
        self.next_offset = max([start_offset] + [r.last + 1 for r in self.runs])
        #: called after anything changed that a waiting fetch or an observer cares about
        self.listeners: list[Callable[["SharePartition", str, dict], None]] = []
        self._fill_gaps()
        self._advance_start()

    # -- what it is ------------------------------------------------------------------------------

    @property
    def topic_id(self):
        return self.partition.topic.topic_id

    @property
    def index(self) -> int:
        return self.partition.index

    @property
    def in_flight(self) -> int:
        """Records between the start offset and the next unfetched one (Kafka's count of
        in-flight records, terminal ones not yet passed included)."""
        return self.next_offset - self.start_offset

    def next_deadline(self) -> int | None:
        deadlines = [r.deadline for r in self.runs if r.state is ACQUIRED]
        return min(deadlines) if deadlines else None

    def can_acquire(self) -> bool:
        """Whether a fetch could acquire anything now: an Available record in flight, or a new
        record in the log within the record-lock limit."""
        if any(r.state is AVAILABLE for r in self.runs):
            return True
        return self.next_offset < self._upper() and self.in_flight < self.config().max_locks

    def counts(self) -> dict[str, int]:
        """Records in flight by state."""
        out = {state.label: 0 for state in RecordState}
        for run in self.runs:
            out[run.state.label] += run.size
        return out

    def _upper(self) -> int:
        log = self.partition.log
        return log.last_stable_offset if self.config().read_committed else log.high_watermark

    # -- runs -----------------------------------------------------------------------------------

    def _fill_gaps(self) -> None:
        """Offsets in flight that no run covers (a state read back after a move: records that
        were acquired, which is never written) are Available, never delivered yet: the next
        fetch acquires them as new ones."""
        filled: list[InFlight] = []
        expected = self.start_offset
        for run in self.runs:
            if run.first > expected:
                filled.append(InFlight(expected, run.first - 1, AVAILABLE, 0))
            filled.append(run)
            expected = run.last + 1
        self.runs = filled

    def _split(self, offset: int) -> None:
        """Make ``offset`` the first offset of a run, if a run covers it."""
        firsts = [r.first for r in self.runs]
        i = bisect.bisect_right(firsts, offset) - 1
        if i < 0:
            return
        run = self.runs[i]
        if run.first < offset <= run.last:
            tail = InFlight(offset, run.last, run.state, run.delivery_count, run.member,
                            run.deadline)
            run.last = offset - 1
            self.runs.insert(i + 1, tail)

    def _span(self, first: int, last: int) -> list[InFlight]:
        """The runs covering [first, last], split at both ends."""
        self._split(first)
        self._split(last + 1)
        return [r for r in self.runs if r.first >= first and r.last <= last]

    def _merge(self) -> None:
        merged: list[InFlight] = []
        for run in self.runs:
            if merged and merged[-1].last + 1 == run.first and merged[-1].same(run):
                merged[-1].last = run.last
            else:
                merged.append(run)
        self.runs = merged

    def _advance_start(self) -> None:
        """The start offset moves past every run that is done."""
        while self.runs and self.runs[0].state.terminal and self.runs[0].first == \
                self.start_offset:
            self.start_offset = self.runs.pop(0).last + 1
        if not self.runs:
            self.start_offset = max(self.start_offset, self.next_offset)
            self.next_offset = self.start_offset

    def _snapshot(self) -> tuple:
        return ([InFlight(r.first, r.last, r.state, r.delivery_count, r.member, r.deadline)
                 for r in self.runs], self.start_offset, self.next_offset)

    def _restore(self, saved: tuple) -> None:
        self.runs, self.start_offset, self.next_offset = saved

    def _emit(self, kind: str, **detail) -> None:
        for listener in list(self.listeners):
            listener(self, kind, detail)

    # -- acquiring ------------------------------------------------------------------------------

    def acquire(self, member: str, max_records: int, batch_size: int, *,
                record_limit: bool = False) -> list[Acquired]:
        """Acquire up to about ``max_records`` records for ``member``: Available ones first,
        then new ones from the log.  Returns the acquired ranges, in offset order."""
        if max_records <= 0:
            return []
        config = self.config()
        deadline = self._now() + config.lock_duration_ms
        self._catch_up_with_log()
        got: list[Acquired] = []
        budget = max_records
        for run in list(self.runs):
            if budget <= 0:
                break
            if run.state is not AVAILABLE:
                continue
            if record_limit and run.size > budget:
                self._split(run.first + budget)
            run.state = next_state(run.state, Event.ACQUIRE, run.delivery_count,
                                   config.delivery_limit)
            run.delivery_count += 1
            run.member, run.deadline = member, deadline
            got.append(Acquired(run.first, run.last, run.delivery_count))
            budget -= run.size
        if budget > 0:
            got += self._acquire_new(member, budget, batch_size, record_limit, deadline, config)
        if got:
            self._merge()
            self._emit("acquired", member_id=member,
                       ranges=[[a.first_offset, a.last_offset] for a in got])
        return sorted(got, key=lambda a: a.first_offset)

    def _catch_up_with_log(self) -> None:
        """Records the log no longer has (DeleteRecords, retention) are archived; the share
        partition starts at the log's start at the earliest."""
        log_start = self.partition.log.log_start_offset
        if log_start <= self.start_offset:
            return
        for run in self._span(self.start_offset, log_start - 1):
            if run.state is AVAILABLE:
                run.state = RecordState.ARCHIVED
        self.next_offset = max(self.next_offset, log_start)
        self.runs = [r for r in self.runs if r.last >= log_start or r.state is ACQUIRED]
        self.start_offset = min([log_start] + [r.first for r in self.runs])
        self._advance_start()

    def _acquire_new(self, member: str, budget: int, batch_size: int, record_limit: bool,
                     deadline: int, config: ShareConfig) -> list[Acquired]:
        upper = self._upper()
        room = config.max_locks - self.in_flight
        if self.next_offset >= upper or room <= 0:
            return []
        take = min(budget, room)
        first = self.next_offset
        last = first - 1
        chunks: list[tuple[int, int]] = []  # acquired ranges cut at batch boundaries
        aborted: list[tuple[int, int]] = []
        log = self.partition.log
        spans = _aborted_spans(log) if config.read_committed else None
        for batch in log.stored_from(first, upper):
            if batch.last_offset < first:
                continue
            lo = max(batch.base_offset, first)
            if spans and _in_aborted(batch, spans):
                aborted.append((lo, batch.last_offset))
            if not chunks or (not record_limit and
                              chunks[-1][1] - chunks[-1][0] + 1 >= max(batch_size, 1)):
                chunks.append((lo, batch.last_offset))
            else:
                chunks[-1] = (chunks[-1][0], batch.last_offset)
            last = batch.last_offset
            if last - first + 1 >= take:
                break
        if last < first:
            return []
        self.next_offset = last + 1
        if record_limit and last - first + 1 > take:
            chunks = [(first, first + take - 1)]
            self.runs.append(InFlight(first + take, last, AVAILABLE, 0))
            last = first + take - 1
        got = []
        for lo, hi in chunks:
            self.runs.append(InFlight(lo, hi, ACQUIRED, 1, member, deadline))
            got.append(Acquired(lo, hi, 1))
        self.runs.sort(key=lambda r: r.first)
        if aborted:
            got = self._archive_aborted(got, aborted, config)
        return got

    def _archive_aborted(self, got: list[Acquired], aborted: list[tuple[int, int]],
                         config: ShareConfig) -> list[Acquired]:
        """What aborted transactions wrote is archived and cut out of what was acquired."""
        for lo, hi in aborted:
            for run in self._span(lo, hi):
                run.state = next_state(run.state, Event.ABORTED, run.delivery_count,
                                       config.delivery_limit)
                run.member, run.deadline = "", -1
        out: list[Acquired] = []
        for a in got:
            cut = [(a.first_offset, a.last_offset)]
            for lo, hi in aborted:
                cut = [piece for start, end in cut for piece in
                       ((start, min(end, lo - 1)), (max(start, hi + 1), end))
                       if piece[0] <= piece[1]]
            out += [Acquired(start, end, a.delivery_count) for start, end in cut]
        self._advance_start()
        self._write([StateBatch(lo, hi, RecordState.ARCHIVED, 1) for lo, hi in aborted])
        return out

    def batches_for(self, acquired: list[Acquired]) -> list[bytes]:
        """The log's batches holding the acquired records, in order, each once (whole batches:
        the client keeps only the acquired offsets)."""
        out: list[bytes] = []
        seen: set[int] = set()
        log = self.partition.log
        for a in acquired:
            for batch in log.stored_from(a.first_offset, a.last_offset + 1):
                if batch.base_offset not in seen:
                    seen.add(batch.base_offset)
                    out.append(batch.data)
        return out

    # -- acknowledging --------------------------------------------------------------------------

    def acknowledge(self, member: str, batches: list[tuple[int, int, list[int]]]) -> None:
        """A member's acknowledgements for this partition, all or none: ApiException
        (INVALID_RECORD_STATE, INVALID_REQUEST) with Kafka's message for the first that
        cannot be taken, and nothing changed."""
        saved = self._snapshot()
        config = self.config()
        changed: list[tuple[int, int]] = []
        queued: list[DeadLetterRange] = []
        try:
            for first, last, types in batches:
                self._acknowledge_batch(member, first, last, types, config, changed, queued)
        except ApiException:
            self._restore(saved)
            raise
        if changed:
            try:
                self._write(self._state_batches(changed))
            except ApiException:
                self._restore(saved)
                raise
        self._merge()
        self._advance_start()
        self._emit("acknowledged", member_id=member,
                   batches=[[f, l, list(t)] for f, l, t in batches])
        if queued:
            self._dead_letter(self, queued)

    def _acknowledge_batch(self, member: str, first: int, last: int, types: list[int],
                           config: ShareConfig, changed: list,
                           queued: list[DeadLetterRange]) -> None:
        unknown = [t for t in types if t not in AckType._value2member_map_]
        if unknown:
            raise ApiException(errors.INVALID_REQUEST, f"Invalid acknowledge type: {unknown}")
        if last < self.start_offset:
            return  # done already
        if not self.runs or first > self.runs[-1].last:
            raise ApiException(errors.INVALID_REQUEST, "Batch record not found. The first "
                               "offset in request is past acquired records.")
        if last > self.runs[-1].last:
            raise ApiException(errors.INVALID_REQUEST, "Batch record not found. The last "
                               "offset in request is past acquired records.")
        if first < self.runs[0].first and not first <= self.start_offset <= last:
            raise _invalid_state("Batch record not found. The request batch offsets are not "
                                 "found in the cache.")
        lo = max(first, self.start_offset)
        whole = len(types) == 1 and any(r.first == lo and r.last == last for r in self.runs)
        for offset_lo, offset_hi, ack in _per_type(lo, last, first, types):
            for run in self._span(offset_lo, offset_hi):
                if run.state is not ACQUIRED:
                    raise _invalid_state(
                        "The batch cannot be acknowledged. The batch is not in the acquired "
                        "state." if whole else
                        "The offset cannot be acknowledged. The offset is not acquired.")
                if run.member != member:
                    raise _invalid_state("Member is not the owner of batch record" if whole
                                         else "Member is not the owner of offset")
                if ack is AckType.RENEW:
                    if not config.renew_enabled:
                        raise _invalid_state("Renewing acquisition locks is not enabled for "
                                             "the group.")
                    run.deadline = self._now() + config.lock_duration_ms
                    continue
                event = ACK_EVENTS[ack]
                run.state = next_state(run.state, event, run.delivery_count,
                                       config.delivery_limit, config.dead_letter)
                run.member, run.deadline = "", -1
                changed.append((run.first, run.last))
                if run.state is ARCHIVING:
                    queued.append(DeadLetterRange(run.first, run.last, run.delivery_count,
                                                  dead_letter_reason(event)))

    def _state_batches(self, ranges: list[tuple[int, int]]) -> list[StateBatch]:
        out = []
        for lo, hi in sorted(ranges):
            for run in self.runs:
                if run.last >= lo and run.first <= hi and run.state is not ACQUIRED:
                    out.append(StateBatch(max(run.first, lo), min(run.last, hi),
                                          int(run.state), run.delivery_count))
        return out

    # -- locks and members ----------------------------------------------------------------------

    def expire_locks(self) -> int:
        """Acquired records whose lock deadline has passed go back (or are archived at the
        delivery limit); returns how many."""
        now = self._now()
        return self._let_go(lambda run: run.deadline <= now, Event.LOCK_EXPIRED, "lock_expired")

    def release_member(self, member: str) -> int:
        """Everything ``member`` holds goes back (its session closed or its connection
        dropped); returns how many records."""
        return self._let_go(lambda run: run.member == member, Event.MEMBER_GONE, "released",
                            member_id=member)

    def expire_now(self) -> int:
        """Every lock expires now (a control action)."""
        return self._let_go(lambda run: True, Event.LOCK_EXPIRED, "lock_expired")

    def _let_go(self, which, event: Event, kind: str, **detail) -> int:
        config = self.config()
        changed, archived, count = [], [], 0
        queued: list[DeadLetterRange] = []
        for run in self.runs:
            if run.state is ACQUIRED and which(run):
                run.state = next_state(run.state, event, run.delivery_count,
                                       config.delivery_limit, config.dead_letter)
                if run.state is RecordState.ARCHIVED:
                    archived.append((run.first, run.last))
                elif run.state is ARCHIVING:
                    archived.append((run.first, run.last))
                    queued.append(DeadLetterRange(run.first, run.last, run.delivery_count,
                                                  DeadLetter.DELIVERY_LIMIT))
                run.member, run.deadline = "", -1
                changed.append((run.first, run.last))
                count += run.size
        if not changed:
            return 0
        try:
            self._write(self._state_batches(changed))
        except ApiException:
            pass  # the state moves on even when the write fails, as in Kafka
        self._merge()
        self._advance_start()
        self._emit(kind, ranges=[list(r) for r in changed],
                   archived=[list(r) for r in archived], **detail)
        if queued:
            self._dead_letter(self, queued)
        return count

    # -- the dead-letter queue ------------------------------------------------------------------

    def archiving(self) -> list[DeadLetterRange]:
        """The records waiting for the dead-letter queue (a share partition read back with some
        still Archiving resumes them, as Kafka does): those past the delivery limit, the rest
        rejected."""
        limit = self.config().delivery_limit
        return [DeadLetterRange(r.first, r.last, r.delivery_count,
                                DeadLetter.DELIVERY_LIMIT if r.delivery_count >= limit
                                else DeadLetter.REJECTED)
                for r in self.runs if r.state is ARCHIVING]

    def dead_lettered(self, first: int, last: int, **detail) -> None:
        """The dead-letter queue is done with [first, last] (written, or refused: the records
        are archived either way, as in Kafka); ``detail`` goes into the event."""
        changed = []
        for run in self._span(first, last) if self.runs else []:
            if run.state is ARCHIVING:
                run.state = next_state(run.state, Event.DEAD_LETTERED, run.delivery_count,
                                       self.config().delivery_limit)
                changed.append((run.first, run.last))
        if not changed:
            self._merge()
            return
        try:
            self._write(self._state_batches(changed))
        except ApiException:
            pass  # archived regardless, as in Kafka
        self._merge()
        self._advance_start()
        self._emit("dead_lettered", ranges=[list(r) for r in changed], **detail)

    def _write(self, batches: list[StateBatch]) -> None:
        if batches:
            self._persist(self, batches)

    # -- what it looks like ---------------------------------------------------------------------

    def records(self) -> list[InFlight]:
        """The runs in flight, copied."""
        return self._snapshot()[0]


def _per_type(lo: int, last: int, first: int, types: list[int]):
    """(first, last, type) runs of one acknowledgement batch: one type for it all, or one per
    offset (joined where neighbours agree), from ``lo`` (the start offset may cut the front)."""
    if len(types) == 1:
        yield lo, last, AckType(types[0])
        return
    start = None
    for offset in range(lo, last + 1):
        ack = AckType(types[offset - first])
        if start is None:
            start, current = offset, ack
        elif ack is not current:
            yield start, offset - 1, current
            start, current = offset, ack
    if start is not None:
        yield start, last, current


def _aborted_spans(log) -> dict[int, list[tuple[int, int]]]:
    """producer id -> [(first offset, abort marker offset)] of the log's aborted
    transactions."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for a in log.aborted:
        spans.setdefault(a.producer_id, []).append((a.first_offset, a.last_offset))
    return spans


def _in_aborted(batch, spans) -> bool:
    header = read_batch_header(batch.data)
    if not header.is_transactional or header.is_control:
        return False
    return any(lo <= batch.base_offset <= hi for lo, hi in spans.get(header.producer_id, ()))
