"""What a handler may know about a request besides its body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from mockbroker.core.security import ANONYMOUS, Principal


@dataclass(frozen=True, slots=True)
class InjectedError:
    """An error a control rule puts on some partitions of a request the handler answers."""

    error_code: int
    #: ``hits(topic name, partition) -> bool``: the partitions that get the error
    hits: Callable[[str | None, int], bool]


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a handler may know about the request besides its body."""

    broker_id: int
    connection_id: int
    client_id: str | None
    api_version: int
    now_ms: int
    client_host: str = "127.0.0.1"
    #: who sent it: the authenticated principal of its connection (User:ANONYMOUS when the
    #: listener authenticates nobody)
    principal: Principal = ANONYMOUS
    #: the name of the listener it came in on, whose endpoints the answers advertise
    listener: str = "PLAINTEXT"
    #: the SASL mechanism its connection authenticated with (None without SASL)
    mechanism: str | None = None
    #: its connection's SASL session (None without SASL), for rules that end it
    session: Any = None
    #: an error a control rule injects into some partitions, for an API whose handler applies
    #: it itself (a Fetch in a session: see PartitionShape.handler_injects)
    injected: InjectedError | None = None


# One context is built for every request.  The generated __init__ of a frozen dataclass sets
# each field through object.__setattr__; the slots' own setters cost less than half as much
# (wire.records builds its batch headers the same way).
_FIELDS = ("broker_id", "connection_id", "client_id", "api_version", "now_ms", "client_host",
           "principal", "listener", "mechanism", "session", "injected")
assert tuple(RequestContext.__dataclass_fields__) == _FIELDS
_SET = tuple(RequestContext.__dict__[name].__set__ for name in _FIELDS)


def new_context(broker_id: int, connection_id: int, client_id: str | None, api_version: int,
                now_ms: int, client_host: str, principal: Principal, listener: str,
                mechanism: str | None, session: Any, *, _new=object.__new__,
                _cls=RequestContext, _s=_SET) -> RequestContext:
    """``RequestContext(...)`` with every field but ``injected`` (None) given, made faster."""
    ctx = _new(_cls)
    _s[0](ctx, broker_id); _s[1](ctx, connection_id); _s[2](ctx, client_id)  # noqa: E702
    _s[3](ctx, api_version); _s[4](ctx, now_ms); _s[5](ctx, client_host)  # noqa: E702
    _s[6](ctx, principal); _s[7](ctx, listener); _s[8](ctx, mechanism)  # noqa: E702
    _s[9](ctx, session); _s[10](ctx, None)  # noqa: E702
    return ctx
