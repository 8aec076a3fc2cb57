"""``GET /events/stream``: the event log (:mod:`mockbroker.core.observe.events`) as server-sent
events, live.

Each event is sent as ``id: <seq>``, ``event: <type>`` and ``data: <the JSON of GET /events>``.
A client starts after ``?since=SEQ`` (or the ``Last-Event-ID`` header an ``EventSource``
sends when it reconnects), or from now without either; ``?type=a,b`` picks types.  A comment
line goes out every :data:`KEEPALIVE_S` seconds so proxies keep an idle stream open.  A client
that reads too slowly to keep up (:data:`BACKLOG` events behind) is told so and disconnected,
rather than let the broker hold its events without bound.  Streams end when the server stops.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mockbroker.core.observe.events import parse_types

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime

log = logging.getLogger("mockbroker.http")

PATH = "/events/stream"
#: seconds between keep-alive comments on an idle stream
KEEPALIVE_S = 15.0
#: events queued for one slow client before it is disconnected
BACKLOG = 10_000

_END = object()


def _frame(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, separators=(",", ":"))
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()


class EventStreams:
    """The open streams of one admin server."""

    def __init__(self, runtime: "ClusterRuntime"):
        self.runtime = runtime
        self._queues: set[asyncio.Queue] = set()

    def close_all(self) -> None:
        """End every stream (the server is stopping)."""
        for queue in list(self._queues):
            queue.put_nowait(_END)

    def _start(self, request: web.Request) -> tuple[int, set[str] | None]:
        text = request.query.get("since") or request.headers.get("Last-Event-ID")
        try:
            since = self.runtime.events.last_seq if text is None else int(text)
        except ValueError:
            raise web.HTTPBadRequest(reason=f"since must be an integer, got {text!r}") from None
        try:
            types = parse_types(request.query.get("type"))
        except ValueError as exc:
            raise web.HTTPBadRequest(reason=str(exc)) from None
        extra = sorted(set(request.query) - {"since", "type", "access_token"})
        if extra:
            raise web.HTTPBadRequest(reason=f"unknown query parameter(s) {', '.join(extra)}; "
                                            "expected since, type")
        return since, types

    @web.middleware
    async def middleware(self, request: web.Request, handler) -> web.StreamResponse:
        """Answer ``GET /events/stream``; pass anything else on.  A middleware rather than a
        route: the router holds exactly the JSON API its OpenAPI document describes (and a
        schema-driven fuzzer would wait on a stream for ever)."""
        if request.path != PATH:
            return await handler(request)
        if request.method != "GET":
            raise web.HTTPMethodNotAllowed(request.method, ["GET"])
        return await self.handle(request)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        since, types = self._start(request)
        events = self.runtime.events
        queue: asyncio.Queue = asyncio.Queue()

        def listen(event: dict[str, Any]) -> None:
            if types is not None and event["type"] not in types:
                return
            if queue.qsize() >= BACKLOG:
                queue.put_nowait(_END)
                return
            queue.put_nowait(event)

        backlog = events.since(since, types=types)
        events.listeners.append(listen)
        self._queues.add(queue)
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no"})
        try:
            await response.prepare(request)
            # a first line at once, so the client has the headers without waiting for an event
            await response.write(f": events after {since}\n\n".encode())
            if events.first_seq > since + 1:
                # what was asked for is partly gone: say from where the stream really starts
                await response.write(f": events before {events.first_seq} are no longer "
                                     "kept\n\n".encode())
            for event in backlog:
                await response.write(_frame(event))
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except asyncio.TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                if item is _END:
                    if queue.qsize() >= BACKLOG:
                        await response.write(b": too slow to keep up: disconnected\n\n")
                    break
                await response.write(_frame(item))
        except ConnectionResetError:
            pass  # the client went away
        finally:
            events.listeners.remove(listen)
            self._queues.discard(queue)
        return response
