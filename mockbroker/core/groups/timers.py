"""The group coordinator's timers, each under a typed key.

A key names what the timer is for (:class:`TimerKind`) and whose it is (a group, a member), so
scheduling a timer replaces the one it supersedes (a member's next heartbeat deadline replaces
the last) and everything of a group can be cancelled at once when the group goes away.  Timers
run on the cluster's :class:`~mockbroker.core.clock.Timers`, so a manual clock drives them.
"""

from __future__ import annotations

from enum import Enum
from typing import Callable

from msgspec import Struct

from mockbroker.core.clock import Timer, Timers
from mockbroker.core.observe.events import EventLog


class TimerKind(Enum):
    #: a member's session: it is removed unless it heartbeats (or commits) before this
    HEARTBEAT = "heartbeat"
    #: the join phase of a rebalance: the initial delay, or the rebalance timeout
    JOIN = "join"
    #: the members' SyncGroup after a join phase completes
    SYNC = "sync"
    #: the periodic expiry of old committed offsets
    RETENTION = "retention"
    #: a consumer-protocol member that must revoke partitions is fenced unless it does by then
    REVOCATION = "revocation"


class TimerKey(Struct, frozen=True):
    """What a group timer is for: its kind, and the group and member it watches."""

    kind: TimerKind
    group_id: str | None = None
    member_id: str | None = None


class _Pending:
    """A group timer: when it is due and what it runs, and the queued timer that wakes it (due
    no later; a heartbeat moves a member's deadline without queueing a timer again)."""

    __slots__ = ("deadline_ms", "callback", "timer")

    def __init__(self, deadline_ms: int, callback: Callable[[], None]):
        self.deadline_ms = deadline_ms
        self.callback = callback
        self.timer: Timer | None = None


class GroupTimers:
    def __init__(self, timers: Timers, events: EventLog | None = None):
        self._timers = timers
        self._events = events
        self._scheduled: dict[TimerKey, _Pending] = {}
        #: called with the group id (None: not one group's) after each timer ran, to see what
        #: it changed (the core's group watch)
        self.after_fire: Callable[[str | None], None] | None = None

    def schedule(self, key: TimerKey, delay_ms: int, callback: Callable[[], None]) -> None:
        """Run ``callback`` in ``delay_ms``, replacing the timer under the same key."""
        deadline = self._timers.clock.now_ms() + max(0, delay_ms)
        pending = self._scheduled.get(key)
        if pending is not None and pending.timer.deadline_ms <= deadline:
            # later than before (a member's session, renewed by each heartbeat): the queued
            # timer wakes first, finds it is not due yet, and is queued again for the new time
            pending.deadline_ms, pending.callback = deadline, callback
            return
        self.cancel(key)
        pending = self._scheduled[key] = _Pending(deadline, callback)
        self._queue(key, pending)

    def _queue(self, key: TimerKey, pending: _Pending) -> None:
        pending.timer = self._timers.call_at(pending.deadline_ms,
                                             lambda: self._fire(key, pending))

    def _fire(self, key: TimerKey, pending: _Pending) -> None:
        if pending.deadline_ms > self._timers.clock.now_ms():
            self._queue(key, pending)
            return
        if self._scheduled.get(key) is pending:
            del self._scheduled[key]
        callback = pending.callback
        events = self._events
        if events is None:
            callback()
            return
        # what the timer changes says which timer it was
        saved = events.swap_cause({"timer": key.kind.value, "group": key.group_id,
                                   "timer_member": key.member_id})
        try:
            callback()
            if self.after_fire is not None:
                self.after_fire(key.group_id)
        finally:
            events.swap_cause(saved)

    def cancel(self, key: TimerKey) -> None:
        pending = self._scheduled.pop(key, None)
        if pending is not None:
            pending.timer.cancel()

    def cancel_group(self, group_id: str) -> None:
        for key in [k for k in self._scheduled if k.group_id == group_id]:
            self.cancel(key)

    def deadline(self, key: TimerKey) -> int | None:
        pending = self._scheduled.get(key)
        return None if pending is None else pending.deadline_ms

    def __contains__(self, key: TimerKey) -> bool:
        return key in self._scheduled
