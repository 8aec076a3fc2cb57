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
from mockbroker.core import error_responses
from mockbroker.core.coordinator.coordinator import GroupCoordinator
from mockbroker.core.deferred import Deferred
from mockbroker.core.faults import (CLOSE_CONNECTION, Fault, FaultTable, RequestLog, later,
                                    named_partitions, never, topic_name)
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
        self.faults = FaultTable(self.cluster.brokers, self.registry)
        self.requests = RequestLog()
        #: broker id -> milliseconds added to every answer it gives
        self.broker_latency_ms: dict[int, int] = {}

    @property
    def clock(self) -> Clock:
        return self.cluster.clock

    @property
    def timers(self):
        return self.cluster.timers

    def next_producer_id(self) -> int:
        return next(self._producer_ids)

    def handle(self, request: Request, ctx: RequestContext):
        """The answer to one request: a response, a :class:`Deferred` of one (which may resolve
        to :data:`CLOSE_CONNECTION`), or None for no answer at all."""
        api_key = request.api_key
        entry = self.registry.get(api_key)
        if entry is None or not self.registry.supports(api_key, request.api_version):
            raise NoHandler(f"API key {api_key} v{request.api_version} is not served")
        logged = self.requests.record(ctx.now_ms, ctx.broker_id, api_key, request.api_version,
                                      request.header.correlation_id, ctx.client_id)
        try:
            fault = self.faults.pick(
                api_key, ctx.broker_id, ctx.client_id,
                lambda: named_partitions(self.cluster, api_key, request.body)) \
                if self.faults else None
            if fault is None:
                result = entry.handler(self, ctx, request.body)
            else:
                logged.fault = fault.id
                result = self._apply_fault(fault, entry.handler, request, ctx)
                if fault.action == "drop":
                    logged.outcome = "dropped"
                    return result
            latency = self.broker_latency_ms.get(ctx.broker_id)
            if latency:
                result = later(self.timers, result, latency)
        except CloseConnection:
            logged.outcome = "disconnected"
            raise
        except Exception:
            logged.outcome = "failed"
            raise
        if result is None:
            logged.outcome = "no response"
        elif isinstance(result, Deferred):
            result.add_callback(logged.finish)
        else:
            logged.finish(result)
        return result

    # -- faults --------------------------------------------------------------------------------

    def _apply_fault(self, fault: Fault, handler, request: Request, ctx: RequestContext):
        body = request.body
        if fault.action == "disconnect":
            if not fault.delay_ms:
                raise CloseConnection(f"fault {fault.id} disconnects")
            closing = Deferred()
            self.timers.call_later(fault.delay_ms, lambda: closing.resolve(CLOSE_CONNECTION))
            return closing
        if fault.action == "drop":
            return never(handler(self, ctx, body))
        if fault.action == "delay":
            return later(self.timers, handler(self, ctx, body), fault.delay_ms)
        return later(self.timers, self._error_answer(fault, handler, request, ctx),
                     fault.delay_ms)

    def _error_answer(self, fault: Fault, handler, request: Request, ctx: RequestContext):
        """The request answered with the fault's error, in the API's shape; for APIs that name
        partitions only the fault's partitions fail and the rest is handled as usual."""
        api_key, version, body, code = request.api_key, request.api_version, request.body, \
            fault.error
        if api_key in error_responses.PARTITIONED:
            shape = error_responses.PARTITIONED[api_key]
            rest, hit = error_responses.split_partitioned(
                api_key, body, lambda topic, partition: fault.hits(
                    topic_name(self.cluster, topic, shape.request_name),
                    getattr(partition, shape.request_index)))
            if rest is not None and api_key == error_responses.FETCH:
                rest.max_wait_ms = 0  # a partition in error answers a fetch at once
            result = handler(self, ctx, rest) if rest is not None else None
            if api_key == error_responses.PRODUCE and body.acks == 0:
                raise CloseConnection(f"fault {fault.id}: produce with acks=0 failed")
            if isinstance(result, Deferred):
                return result.map(lambda value: error_responses.merge_partitioned(
                    api_key, version, value, hit, code))
            return error_responses.merge_partitioned(api_key, version, result, hit, code)
        if api_key == error_responses.METADATA:
            result = handler(self, ctx, body)
            error_responses.set_topic_errors(result, code, lambda name: fault.hits(name, None))
            return result
        try:
            return error_responses.error_response(api_key, version, body, code)
        except error_responses.CannotExpress as exc:
            raise CloseConnection(f"fault {fault.id}: {exc}") from None
