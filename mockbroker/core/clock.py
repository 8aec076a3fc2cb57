"""Time for the core: an injected clock and the timers that run on it.

The core never sleeps and never reads the system time itself.  It asks its :class:`Clock` for
``now_ms()`` and puts future work (a Fetch long-poll's deadline, a session expiry) on a
:class:`Timers` queue.  The I/O layer calls :meth:`Timers.run_due` when the earliest deadline
passes; a test with a :class:`ManualClock` calls :meth:`ManualClock.advance` instead and the same
timers fire at once, with no sleeping.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from typing import Callable

log = logging.getLogger("mockbroker.core")


class Clock:
    """Wall-clock milliseconds (what Kafka puts in timestamps)."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock(Clock):
    """A clock that moves only when told to; advancing it fires the timers that fall due."""

    def __init__(self, start_ms: int = 1_700_000_000_000):
        self._now = start_ms
        self.timers: Timers | None = None

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> None:
        """Move time forward by ``ms``, firing due timers in deadline order as it passes them."""
        if ms < 0:
            raise ValueError("time does not go backwards")
        target = self._now + ms
        while self.timers is not None:
            deadline = self.timers.next_deadline()
            if deadline is None or deadline > target:
                break
            self._now = max(self._now, deadline)
            self.timers.run_due(self._now)
        self._now = target


#: the clocks a cluster can run on: the system's time, or one only the test moves
CLOCKS = ("real", "manual")


def make_clock(mode: str) -> Clock:
    """The clock named ``mode``; a manual one starts at the real time now (so timestamps
    and the clients' own clocks agree until the test moves it)."""
    if mode not in CLOCKS:
        raise ValueError(f"clock: must be real or manual, got {mode!r}")
    return ManualClock(start_ms=Clock().now_ms()) if mode == "manual" else Clock()


class Timer:
    """A handle on scheduled work; :meth:`cancel` makes it a no-op and lets go of the
    callback (and whatever it holds) at once, not at the deadline."""

    __slots__ = ("deadline_ms", "callback", "cancelled", "_timers")

    def __init__(self, deadline_ms: int, callback: Callable[[], None],
                 timers: "Timers | None" = None):
        self.deadline_ms = deadline_ms
        self.callback: Callable[[], None] | None = callback
        self.cancelled = False
        self._timers = timers

    def cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        self.callback = None
        if self._timers is not None:
            self._timers._note_cancelled()


class Timers:
    """A deadline-ordered queue of callbacks."""

    #: cancelled timers are dropped from the queue once they are this many and half of it, so
    #: a timer cancelled long before its deadline (a session of 30 minutes, a rebalance timeout
    #: of days) does not stay queued until then
    COMPACT_AT = 256

    def __init__(self, clock: Clock):
        self.clock = clock
        #: timer callbacks that raised (each logged; the timers due with it still ran)
        self.failures = 0
        self._heap: list[tuple[int, int, Timer]] = []
        self._cancelled = 0  # cancelled timers still in the heap
        self._seq = itertools.count()
        self.on_change: Callable[[], None] | None = None  # the I/O layer re-arms its wake-up
        if isinstance(clock, ManualClock):
            clock.timers = self

    def call_at(self, deadline_ms: int, callback: Callable[[], None]) -> Timer:
        timer = Timer(deadline_ms, callback, self)
        earliest = self.next_deadline()
        heapq.heappush(self._heap, (deadline_ms, next(self._seq), timer))
        if self.on_change is not None and (earliest is None or deadline_ms < earliest):
            self.on_change()
        return timer

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> Timer:
        return self.call_at(self.clock.now_ms() + max(0, delay_ms), callback)

    def __len__(self) -> int:
        """Timers queued, cancelled ones not yet dropped included."""
        return len(self._heap)

    def _note_cancelled(self) -> None:
        self._cancelled += 1
        if self._cancelled >= self.COMPACT_AT and 2 * self._cancelled >= len(self._heap):
            self._heap = [entry for entry in self._heap if not entry[2].cancelled]
            heapq.heapify(self._heap)
            self._cancelled = 0

    def _pop(self) -> Timer:
        timer = heapq.heappop(self._heap)[2]
        if timer.cancelled and self._cancelled:
            self._cancelled -= 1
        return timer

    def next_deadline(self) -> int | None:
        heap = self._heap
        while heap and heap[0][2].cancelled:
            self._pop()
        return heap[0][0] if heap else None

    def run_due(self, now_ms: int | None = None) -> int:
        """Run every timer whose deadline has passed; returns how many ran.  A callback that
        raises is logged and counted in :attr:`failures`; the others due with it still run."""
        now = self.clock.now_ms() if now_ms is None else now_ms
        ran = 0
        while self._heap and self._heap[0][0] <= now:
            timer = self._pop()
            if not timer.cancelled:
                callback, timer.callback = timer.callback, None
                timer.cancelled = True
                ran += 1
                try:
                    callback()
                except Exception:
                    self.failures += 1
                    log.exception("timer %r failed", callback)
        return ran
