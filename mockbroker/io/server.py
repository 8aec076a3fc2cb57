"""The Kafka listeners: one asyncio server per broker.

A connection reads size-prefixed frames and hands each to the core (:meth:`Core.receive`),
which answers with a Deferred of the response bytes, nothing, or a request to close the
connection.  Answers are written strictly in request order (a later request that finishes first
waits for the earlier ones).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import struct

from mockbroker.core.deferred import NO_RESPONSE, Close, Deferred
from mockbroker.core.dispatch import Connection, Core

log = logging.getLogger("mockbroker.io")

#: Kafka's ``socket.request.max.bytes`` default.
DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024

_SIZE = struct.Struct(">i")
_TURNS_TO_START_A_CONNECTION = 5
_connection_ids = itertools.count(1)


class BrokerListener:
    """Accepts Kafka connections for one broker id."""

    def __init__(self, core: Core, broker_id: int, host: str, port: int = 0, *,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES):
        self.core = core
        self.broker_id = broker_id
        self.host = host
        self.port = port
        self.max_request_bytes = max_request_bytes
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def serving(self) -> bool:
        return self._server is not None

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
            # A connection accepted just before the close gets its task a few loop turns later
            # (accept, transport, connection_made); let it start so that it is closed too.
            for _ in range(_TURNS_TO_START_A_CONNECTION):
                await asyncio.sleep(0)
        await self.close_connections()

    async def close_connections(self) -> None:
        """Close every client connection (the listener itself stays as it is)."""
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        conn = Connection(self.broker_id, next(_connection_ids),
                          peer[0] if isinstance(peer, tuple) else "127.0.0.1")
        loop = asyncio.get_running_loop()
        pending: asyncio.Queue = asyncio.Queue()
        waiting: dict[Deferred, asyncio.Future] = {}
        sender = asyncio.create_task(self._send_in_order(pending, writer, conn))
        try:
            while not sender.done():
                try:
                    size_bytes = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                (size,) = _SIZE.unpack(size_bytes)
                if size < 0 or size > self.max_request_bytes:
                    log.warning("broker %d: closing connection %d: request size %d outside 0..%d",
                                self.broker_id, conn.connection_id, size, self.max_request_bytes)
                    return
                try:
                    frame = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                outcome = self.core.receive(frame, conn)
                answer = loop.create_future()
                if outcome.done:
                    if isinstance(outcome.value, Close):
                        self._closing(conn, outcome.value)
                        return
                    answer.set_result(outcome.value)
                else:
                    waiting[outcome] = answer
                    outcome.add_callback(lambda value, outcome=outcome, answer=answer: (
                        waiting.pop(outcome, None), answer.done() or answer.set_result(value)))
                pending.put_nowait(answer)
        except asyncio.CancelledError:
            pass  # the listener is stopping: end this connection quietly
        finally:
            for outcome, answer in list(waiting.items()):
                outcome.cancel()  # its client is gone: release what it waits on
                if not answer.done():
                    answer.set_result(NO_RESPONSE)
            pending.put_nowait(None)
            try:
                await asyncio.wait_for(sender, timeout=5)
            except (asyncio.TimeoutError, asyncio.CancelledError, ConnectionError):
                sender.cancel()
            writer.close()
            self._connections.discard(task)

    def _closing(self, conn: Connection, close: Close) -> None:
        log.info("broker %d: closing connection %d: %s", self.broker_id, conn.connection_id,
                 close.reason)

    async def _send_in_order(self, pending: asyncio.Queue, writer: asyncio.StreamWriter,
                             conn: Connection) -> None:
        while True:
            answer = await pending.get()
            if answer is None:
                return
            value = await answer
            if isinstance(value, Close):
                self._closing(conn, value)
                writer.close()
                return
            if value is not NO_RESPONSE:
                writer.write(value)
                await writer.drain()
