"""A response the core will complete later.

A handler that cannot answer yet (a Fetch waiting for data, a JoinGroup waiting for the other
members) returns a :class:`Deferred`; the core resolves it when the answer exists, and the I/O
layer writes it then — still in request order on its connection.
"""

from __future__ import annotations

from typing import Any, Callable


class Deferred:
    __slots__ = ("_done", "_value", "_callbacks", "on_cancel")

    def __init__(self) -> None:
        self._done = False
        self._value: Any = None
        self._callbacks: list[Callable[[Any], None]] = []
        self.on_cancel: Callable[[], None] | None = None

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
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(value)

    def add_callback(self, callback: Callable[[Any], None]) -> None:
        if self._done:
            callback(self._value)
        else:
            self._callbacks.append(callback)

    def map(self, fn: Callable[[Any], Any]) -> "Deferred":
        """A deferred resolved with ``fn(value)`` when this one resolves (cancel carries over)."""
        mapped = Deferred()
        mapped.on_cancel = self.cancel
        self.add_callback(lambda value: mapped.resolve(fn(value)))
        return mapped

    def cancel(self) -> None:
        """The connection went away: stop waiting, release whatever was held for it."""
        if not self._done:
            self._done = True
            if self.on_cancel is not None:
                self.on_cancel()
