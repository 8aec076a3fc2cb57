"""Route a decoded request to the handler registered for its API.

Nothing here touches sockets or the event loop: the I/O layer decodes a frame, calls
:func:`dispatch` with a :class:`RequestContext`, and encodes whatever comes back.
"""

from __future__ import annotations

from dataclasses import dataclass

from wire import Request
from wire.registry import ApiRegistry


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a handler may know about the request besides its body."""

    broker_id: int
    connection_id: int
    client_id: str | None
    api_version: int
    now_ms: int


class NoHandler(Exception):
    """The request's API or version is not served by this broker."""


def dispatch(registry: ApiRegistry, request: Request, ctx: RequestContext):
    entry = registry.get(request.api_key)
    if entry is None or not registry.supports(request.api_key, request.api_version):
        raise NoHandler(f"API key {request.api_key} v{request.api_version} is not served")
    return entry.handler(request.body, ctx, registry)
