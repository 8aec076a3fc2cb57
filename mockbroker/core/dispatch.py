"""The core's entry point: a decoded request in, a response (or a :class:`Deferred`) out.

:class:`Core` owns the cluster state and the handler registry.  Nothing here touches sockets or
the event loop: the I/O layer decodes a frame, calls :meth:`Core.handle` with a
:class:`RequestContext`, and encodes whatever comes back (``None`` means "send nothing", as for
a Produce with acks=0, and a handler raises :class:`CloseConnection` to have the connection
closed instead).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from mockbroker.core.clock import Clock
from mockbroker.core.cluster import Broker, Cluster
from mockbroker.core.coordinator.coordinator import GroupCoordinator
from mockbroker.core.settings import resolve_settings
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
    client_host: str = "127.0.0.1"


class NoHandler(Exception):
    """The request's API or version is not served by this broker."""


class CloseConnection(Exception):
    """The request is answered by closing its connection, as Kafka answers a Produce with
    acks=0 that failed: the client reads no response, so only a closed connection tells it to
    refresh its metadata."""


class Core:
    """The whole cluster as a sans-IO state machine."""

    def __init__(self, brokers: list[Broker], settings: dict[str, Any] | None = None,
                 clock: Clock | None = None, registry: ApiRegistry | None = None):
        from mockbroker.handlers import REGISTRY

        self.settings = resolve_settings(settings or {})
        self.cluster = Cluster(self.settings, brokers, clock)
        self.registry = registry or REGISTRY
        self.groups = GroupCoordinator(self.cluster, self.settings)
        self._producer_ids = itertools.count(1000)
        #: transactional id -> (producer id, epoch)
        self.transactional_producers: dict[str, tuple[int, int]] = {}

    @property
    def clock(self) -> Clock:
        return self.cluster.clock

    @property
    def timers(self):
        return self.cluster.timers

    def next_producer_id(self) -> int:
        return next(self._producer_ids)

    def handle(self, request: Request, ctx: RequestContext):
        entry = self.registry.get(request.api_key)
        if entry is None or not self.registry.supports(request.api_key, request.api_version):
            raise NoHandler(f"API key {request.api_key} v{request.api_version} is not served")
        return entry.handler(self, ctx, request.body)
