"""What a handler may know about a request besides its body."""

from __future__ import annotations

from typing import Any, Callable

from msgspec import Struct

from mockbroker.core.security import ANONYMOUS, Principal


class InjectedError(Struct, frozen=True):
    """An error a control rule puts on some partitions of a request the handler answers."""

    error_code: int
    #: ``hits(topic name, partition) -> bool``: the partitions that get the error
    hits: Callable[[str | None, int], bool]


class RequestContext(Struct, frozen=True):
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
    #: the client's port (None where the connection has no address, as in core tests)
    client_port: int | None = None
