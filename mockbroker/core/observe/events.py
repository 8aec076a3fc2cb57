"""What happened in the cluster, in order: the event log behind ``GET /events``, its live
stream, the wait helpers, the dashboard and its rebalance timelines.

An event is a flat JSON object: ``seq`` (1, 2, 3, ... for the life of the log, across a
``POST /reset``), ``time_ms`` (the broker clock: a manual clock's time under a manual clock),
``type`` and its own fields.  Events carry what caused them where something did: the request
being handled (``request``, ``client_id``, ``broker``), the timer that fired (``timer``), or the
admin call (``admin``), and the control action a rule took (``action``);
:meth:`EventLog.caused_by` sets that for everything emitted inside it.

The log keeps the most recent :data:`CAPACITY` events; listeners (the live stream, waits) are
told of each one as it is emitted, on the cluster's loop thread.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable, Iterator

from mockbroker.adminapi.events import EVENT_TYPES
from mockbroker.core.clock import Clock

#: the fields of the current cause every event carries (the others, such as the member id a
#: request names, are for the group watch to read)
CAUSE_FIELDS = ("request", "client_id", "timer", "admin", "action")

#: how many events the log keeps (older ones are dropped first)
CAPACITY = 20_000

def parse_types(text: str | None) -> set[str] | None:
    """The event types a ``type=a,b`` parameter names (None: every type); ValueError naming
    those that are no event type."""
    types = {t.strip() for t in (text or "").split(",") if t.strip()}
    unknown = sorted(types - set(EVENT_TYPES))
    if unknown:
        raise ValueError(f"unknown event type(s) {', '.join(unknown)}; the types are "
                         f"{', '.join(EVENT_TYPES)}")
    return types or None


class EventLog:
    """The most recent events, oldest first, and who listens for new ones."""

    def __init__(self, clock: Clock, capacity: int = CAPACITY):
        self.clock = clock
        self._entries: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._seq = 0
        #: called with each new event, in order (the live stream, waits)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        #: called with no argument whenever records are appended anywhere (waits on records
        #: and lag, which no event marks: a produce is not an event)
        self.append_listeners: list[Callable[[], None]] = []
        self._cause: dict[str, Any] = {}

    @property
    def last_seq(self) -> int:
        """The seq of the newest event (0: none yet)."""
        return self._seq

    @property
    def first_seq(self) -> int:
        """The seq of the oldest event still kept (``last_seq + 1`` when none is)."""
        return self._entries[0]["seq"] if self._entries else self._seq + 1

    def emit(self, type: str, **fields: Any) -> dict[str, Any]:
        """Record an event of ``type`` now, with the current cause unless ``fields`` say
        otherwise, and tell the listeners."""
        self._seq += 1
        event = {"seq": self._seq, "time_ms": self.clock.now_ms(), "type": type}
        cause = self._cause
        for name in CAUSE_FIELDS:
            if name in cause:
                event[name] = cause[name]
        event.update(fields)
        self._entries.append(event)
        for listener in list(self.listeners):
            listener(event)
        return event

    def appended(self) -> None:
        """Records were appended somewhere (cheap when nobody waits)."""
        if self.append_listeners:
            for listener in list(self.append_listeners):
                listener()

    # -- causes --------------------------------------------------------------------------------

    @property
    def cause(self) -> dict[str, Any]:
        """What events emitted now are caused by (empty outside any request, timer or call)."""
        return self._cause

    def swap_cause(self, cause: dict[str, Any]) -> dict[str, Any]:
        """Make ``cause`` the current one; returns the one it replaces, to put back."""
        saved, self._cause = self._cause, cause
        return saved

    def caused_by(self, **cause: Any) -> "_Cause":
        """``with events.caused_by(request="JoinGroup", client_id=...):`` — every event
        emitted inside carries these fields; the cause outside is restored on the way out."""
        return _Cause(self, cause)

    # -- reading -------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(list(self._entries))

    def since(self, seq: int = 0, *, types: Iterable[str] | None = None,
              match: dict[str, Any] | None = None, limit: int | None = None
              ) -> list[dict[str, Any]]:
        """Events after ``seq``, oldest first: of ``types`` only (if given), each with every
        field of ``match`` equal (compared as text, so a query string can say ``partition=3``),
        at most ``limit`` (the oldest ones)."""
        wanted = set(types) if types else None
        out = []
        for event in self._entries:
            if event["seq"] <= seq:
                continue
            if wanted is not None and event["type"] not in wanted:
                continue
            if match and not matches(event, match):
                continue
            out.append(event)
            if limit is not None and len(out) >= limit:
                break
        return out


def matches(event: dict[str, Any], match: dict[str, Any]) -> bool:
    """Whether every field of ``match`` is in ``event`` with an equal value (or the same
    text: ``{"partition": "3"}`` matches 3)."""
    for name, wanted in match.items():
        if name not in event:
            return False
        value = event[name]
        if value != wanted and str(value) != str(wanted):
            return False
    return True


class _Cause:
    __slots__ = ("_log", "_cause", "_saved")

    def __init__(self, log: EventLog, cause: dict[str, Any]):
        self._log = log
        self._cause = cause
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> None:
        self._saved = self._log._cause
        self._log._cause = self._cause

    def __exit__(self, *exc_info) -> None:
        self._log._cause = self._saved
