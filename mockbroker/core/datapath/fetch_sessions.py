"""Fetch sessions (KIP-227): a broker remembers what a fetcher fetches, so later fetches name
only what changed and answers leave out what did not.

A Fetch carries a session id and an epoch.  Epoch 0 is a full fetch that opens a session (the
answer gives its id), epoch -1 a full fetch without one; either closes the session it names.
Epoch N > 0 is an incremental fetch of session ``id``: the partitions it lists are added or
updated, those it forgets are dropped, the rest are fetched as the session remembers them, and
the answer holds only the partitions with something new (records, a moved high watermark, last
stable offset or log start offset, an error); those move to the end of the session's order, so
no partition starves.  An unknown session is FETCH_SESSION_ID_NOT_FOUND, an unexpected epoch
INVALID_FETCH_SESSION_EPOCH.  Each broker keeps at most ``max.incremental.fetch.session.cache.
slots`` sessions (0 turns sessions off: every fetch is answered sessionless), evicting, as
Kafka does, a session unused for two minutes, or an older one with fewer partitions.
"""

from __future__ import annotations

import random
from typing import Hashable

from msgspec import Struct, field

from wire import errors

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NO_SESSION = 0
#: a session unused for this long may be evicted by any new one
EVICTION_MS = 120_000
_INT32_MAX = (1 << 31) - 1


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: from 0 on, wrapping after Int32.MAX to 1."""
    return 1 if epoch >= _INT32_MAX else epoch + 1


class SessionPartition(Struct):
    """One partition of a fetch: where the fetcher is (from its request) and, in a session, what
    it was last told (so an unchanged partition can be left out)."""

    #: (topic name or topic id, partition index): how the fetcher names it
    key: tuple[Hashable, int]
    topic: str | None
    topic_id: object
    partition: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    def update_request(self, other: "SessionPartition") -> None:
        self.fetch_offset = other.fetch_offset
        self.max_bytes = other.max_bytes
        self.current_leader_epoch = other.current_leader_epoch
        self.last_fetched_epoch = other.last_fetched_epoch

    def must_respond(self, read) -> bool:
        """Whether the fetcher must hear about this partition, remembering what it is told."""
        changed = bool(read.records) or read.error_code != errors.NONE or \
            read.diverging_epoch is not None or read.current_leader is not None
        if (read.high_watermark, read.last_stable_offset, read.log_start_offset) != \
                (self.high_watermark, self.last_stable_offset, self.log_start_offset):
            changed = True
        self.high_watermark = -1 if read.error_code != errors.NONE else read.high_watermark
        self.last_stable_offset = read.last_stable_offset
        self.log_start_offset = read.log_start_offset
        return changed


class FetchSession(Struct, eq=False):
    """An incremental fetch session (KIP-227) a broker keeps for one consumer."""

    id: int
    broker_id: int
    created_ms: int
    last_used_ms: int
    #: the epoch the next incremental fetch must carry
    epoch: int
    partitions: dict[tuple[Hashable, int], SessionPartition] = field(default_factory=dict)


class FetchContext(Struct):
    """How one Fetch is answered: which partitions to read, and (:meth:`respond`) which of
    them to send, under which session id."""

    partitions: list[SessionPartition]
    error_code: int = errors.NONE
    session: FetchSession | None = None
    #: a full fetch that may open a session once it is answered
    opens_session: bool = False
    sessions: "FetchSessions | None" = None

    def respond(self, reads: list, now_ms: int) -> tuple[int, list[tuple[SessionPartition, object]]]:
        """(the session id to answer with, the (partition, read) pairs to send)."""
        pairs = list(zip(self.partitions, reads))
        if self.session is not None:
            sent = [(p, r) for p, r in pairs if p.must_respond(r)]
            for p, _ in sent:  # what was just sent goes to the back of the queue
                self.session.partitions[p.key] = self.session.partitions.pop(p.key)
            return self.session.id, sent
        if self.opens_session and self.sessions is not None:
            for p, r in pairs:
                p.must_respond(r)
            session = self.sessions.open(self.partitions, now_ms)
            return (session.id if session else NO_SESSION), pairs
        return NO_SESSION, pairs


class FetchSessions:
    """Every broker's fetch sessions."""

    def __init__(self, slots: int, seed: int | None = None):
        self.slots = slots
        self._sessions: dict[tuple[int, int], FetchSession] = {}
        self._random = random.Random(seed)
        self._broker = -1

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, broker_id: int, session_id: int) -> FetchSession | None:
        return self._sessions.get((broker_id, session_id))

    def context(self, broker_id: int, session_id: int, epoch: int,
                wanted: list[SessionPartition], forgotten: list[tuple[Hashable, int]],
                now_ms: int) -> FetchContext:
        """The context of a Fetch sent to ``broker_id``, as Kafka's FetchManager builds it."""
        self._broker = broker_id
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != NO_SESSION:
                self._sessions.pop((broker_id, session_id), None)
            return FetchContext(wanted, opens_session=epoch == INITIAL_EPOCH and self.slots > 0,
                                sessions=self)
        session = self._sessions.get((broker_id, session_id))
        if session is None:
            return FetchContext([], errors.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext([], errors.INVALID_FETCH_SESSION_EPOCH)
        for partition in wanted:
            cached = session.partitions.get(partition.key)
            if cached is None:
                session.partitions[partition.key] = partition
            else:
                cached.update_request(partition)
        for key in forgotten:
            session.partitions.pop(key, None)
        if not session.partitions:
            del self._sessions[(broker_id, session_id)]
            return FetchContext(wanted)
        session.last_used_ms = now_ms
        session.epoch = next_epoch(session.epoch)
        return FetchContext(list(session.partitions.values()), session=session)

    def open(self, partitions: list[SessionPartition], now_ms: int) -> FetchSession | None:
        """A new session on the broker of the last :meth:`context`, if there is room (after
        evicting, as Kafka would, a stale session or an older, smaller one)."""
        broker_id = self._broker
        mine = [s for (b, _), s in self._sessions.items() if b == broker_id]
        if len(mine) >= self.slots and not self._evict(mine, len(partitions), now_ms):
            return None
        session_id = NO_SESSION
        while session_id == NO_SESSION or (broker_id, session_id) in self._sessions:
            session_id = self._random.randint(1, _INT32_MAX)
        session = FetchSession(session_id, broker_id, now_ms, now_ms, next_epoch(INITIAL_EPOCH),
                               {p.key: p for p in partitions})
        self._sessions[(broker_id, session_id)] = session
        return session

    def _evict(self, sessions: list[FetchSession], size: int, now_ms: int) -> bool:
        stalest = min(sessions, key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stalest.last_used_ms > EVICTION_MS:
            victim = stalest
        else:
            old = [s for s in sessions if now_ms - s.created_ms > EVICTION_MS]
            if not old:
                return False
            victim = min(old, key=lambda s: (len(s.partitions), s.id))
            if (size, 0) < (len(victim.partitions), victim.id):
                return False
        del self._sessions[(victim.broker_id, victim.id)]
        return True

    def close_broker(self, broker_id: int) -> None:
        """A stopped broker forgets its sessions."""
        for key in [k for k in self._sessions if k[0] == broker_id]:
            del self._sessions[key]
