"""The request log: the most recent requests each broker received, and what became of them.

Every request the core sees is logged before it is handled, including one the broker does not
serve (outcome "unsupported"), so a user can see why a client gave up.  ``GET /requests`` shows
the log; the rule that picked a request is named in it.
"""

from __future__ import annotations

import itertools
from collections import deque

from msgspec import Struct, field

from mockbroker.core.deferred import NO_RESPONSE, Close
from wire.protocol import Encoded

#: What became of a request.

OUTCOMES = ("pending", "answered", "no response", "dropped", "disconnected", "failed",
            "unsupported")


class LoggedRequest(Struct):
    """One request in the log: who sent it, when, to which broker, and its outcome."""

    seq: int
    time_ms: int
    broker: int
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: one of :data:`OUTCOMES`
    outcome: str = "pending"
    error_code: int = 0
    #: the rule that acted on it (not counting chained delays)
    fault: int | None = None
    #: every rule that fired on it, chained delays included
    rules: list[int] = field(default_factory=list)
    #: who sent it (User:ANONYMOUS before or without authentication)
    principal: str = "User:ANONYMOUS"
    #: the listener it came in on, and its SASL mechanism if it authenticated with one
    listener: str = "PLAINTEXT"
    mechanism: str | None = None

    def finish(self, response) -> None:
        if self.outcome != "pending":
            return  # dropped: the answer is lost on the way
        if isinstance(response, Close):
            self.outcome = "disconnected"
        elif response is NO_RESPONSE:
            self.outcome = "no response"
        else:
            self.outcome = "answered"
            self.error_code = first_error(response)


class RequestLog:
    """The most recent requests, oldest first."""

    def __init__(self, capacity: int = 5000):
        self._entries: deque[LoggedRequest] = deque(maxlen=capacity)
        self._seq = itertools.count(1)

    def record(self, time_ms: int, broker: int, api_key: int, api_version: int,
               correlation_id: int, client_id: str | None, principal: str = "User:ANONYMOUS",
               listener: str = "PLAINTEXT", mechanism: str | None = None) -> LoggedRequest:
        entry = LoggedRequest(next(self._seq), time_ms, broker, api_key, api_version,
                              correlation_id, client_id, principal=principal,
                              listener=listener, mechanism=mechanism)
        self._entries.append(entry)
        return entry

    def __iter__(self):
        return iter(list(self._entries))

    def clear(self) -> None:
        self._entries.clear()


# -- reading errors back out --------------------------------------------------------------------

_walk_plan: dict[type, tuple[bool, tuple[str, ...]]] = {}


#: where an entry of a response carries its error (AddPartitionsToTxn v0-3 names it for the
#: partition)
_ERROR_FIELDS = ("error_code", "partition_error_code")


def first_error(response, depth: int = 3) -> int:
    """The first non-zero error code in a response (top level first, then nested lists),
    or 0: what the request log reports."""
    if response is None:
        return 0
    if isinstance(response, Encoded):  # an answer sent many times: walked once
        kept = response.__dict__
        if "first_error" not in kept:
            kept["first_error"] = first_error(response.message, depth)
        return kept["first_error"]
    cls = type(response)
    plan = _walk_plan.get(cls)
    if plan is None:
        fields = getattr(cls, "_fields", ())
        names = {f.name for f in fields}
        plan = (next((n for n in _ERROR_FIELDS if n in names), None),
                tuple(f.name for f in fields if f.is_struct and f.is_array))
        _walk_plan[cls] = plan
    error_field, lists = plan
    if error_field is not None:
        code = getattr(response, error_field)
        if code:
            return code
    if depth:
        for name in lists:
            for item in getattr(response, name) or ():
                code = first_error(item, depth - 1)
                if code:
                    return code
    return 0
