"""What the core answers a request with: one :class:`Deferred`, resolved now or later.

A handler that cannot answer yet (a Fetch waiting for data, a JoinGroup waiting for the other
members) returns a :class:`Deferred`; one that can answers with the response itself, and the
core wraps it in a resolved Deferred, so the I/O layer sees one kind of outcome.  A Deferred
resolves to one of:

* a response message (the I/O layer encodes it and writes it, in request order);
* :data:`NO_RESPONSE`: nothing is sent (a Produce with acks=0);
* a :class:`Close`: the connection is closed instead of answered, with the reason (a Produce
  with acks=0 that failed, a request the broker does not serve, a fault that disconnects).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from msgspec import Struct

log = logging.getLogger("mockbroker.core")


class Close(Struct, frozen=True):
    """Close the connection instead of answering; ``reason`` is for the log.  ``answer``, when
    given, is written first (encoded): Kafka tells a client why its authentication failed and
    then closes."""

    reason: str
    answer: bytes | None = None


class _NoResponse:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_RESPONSE"


#: The request gets no answer at all (Kafka's acks=0 Produce).
NO_RESPONSE = _NoResponse()


class Deferred:
    __slots__ = ("_done", "_value", "_callbacks", "on_cancel")

    def __init__(self) -> None:
        self._done = False
        self._value: Any = None
        #: what runs once it resolves (None until something waits on it)
        self._callbacks: list[Callable[[Any], None]] | None = None
        self.on_cancel: Callable[[], None] | None = None

    @classmethod
    def resolved(cls, value: Any) -> "Deferred":
        deferred = cls.__new__(cls)
        deferred._done = True
        deferred._value = value
        deferred._callbacks = None
        deferred.on_cancel = None
        return deferred

    @property
    def done(self) -> bool:
        return self._done

    @property
    def value(self) -> Any:
        if not self._done:
            raise RuntimeError("deferred response is not ready yet")
        return self._value

    def resolve(self, value: Any) -> None:
        if self._done:
            return  # the first answer wins (e.g. data arrived just as the wait timed out)
        self._done = True
        self._value = value
        callbacks, self._callbacks = self._callbacks, None
        if callbacks is not None:
            for callback in callbacks:
                callback(value)

    def add_callback(self, callback: Callable[[Any], None]) -> None:
        if self._done:
            callback(self._value)
        elif self._callbacks is None:
            self._callbacks = [callback]
        else:
            self._callbacks.append(callback)

    def map(self, fn: Callable[[Any], Any]) -> "Deferred":
        """A deferred resolved with ``fn(value)`` when this one resolves (cancel carries over).
        A :class:`Close` or :data:`NO_RESPONSE` passes through untouched; ``fn`` failing closes
        the connection (logged) rather than escaping into whatever resolved this one, such as a
        timer callback that must not stop the other timers due with it."""
        if self._done:  # the common case, an answer at once: no callback to keep
            value = self._value
            if isinstance(value, Close) or value is NO_RESPONSE:
                return Deferred.resolved(value)
            try:
                return Deferred.resolved(fn(value))
            except Exception as exc:
                log.exception("failed to build a response")
                return Deferred.resolved(Close(f"failed to build a response: {exc!r}"))
        mapped = Deferred()
        mapped.on_cancel = self.cancel

        def apply(value: Any) -> None:
            if isinstance(value, Close) or value is NO_RESPONSE:
                mapped.resolve(value)
                return
            try:
                result = fn(value)
            except Exception as exc:
                log.exception("failed to build a response")
                result = Close(f"failed to build a response: {exc!r}")
            mapped.resolve(result)

        self.add_callback(apply)
        return mapped

    def cancel(self) -> None:
        """The connection went away: stop waiting, release whatever was held for it."""
        if not self._done:
            self._done = True
            if self.on_cancel is not None:
                self.on_cancel()


def as_deferred(result: Any) -> Deferred:
    """A handler's result as an outcome: None (no answer) becomes :data:`NO_RESPONSE`."""
    if isinstance(result, Deferred):
        return result
    return Deferred.resolved(NO_RESPONSE if result is None else result)


def later(timers, result: Any, delay_ms: int) -> Any:
    """``result`` (an answer, or a Deferred of one) held back ``delay_ms`` more."""
    if delay_ms <= 0:
        return result
    held = Deferred()

    def hold(value: Any) -> None:
        timers.call_later(delay_ms, lambda: held.resolve(value))

    if isinstance(result, Deferred):
        held.on_cancel = result.cancel
        result.add_callback(hold)
    else:
        hold(NO_RESPONSE if result is None else result)
    return held


def never(result: Any) -> Deferred:
    """An answer that never comes (the handler's own result, if pending, still runs)."""
    lost = Deferred()
    if isinstance(result, Deferred):
        lost.on_cancel = result.cancel
    return lost
