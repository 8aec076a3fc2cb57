"""The Kafka listeners: one asyncio server per broker.

A connection reads size-prefixed frames, decodes each with :mod:`wire`, hands it to the core and
writes the answers strictly in request order (a later request that finishes first waits for the
earlier ones).  Anything the codec cannot read closes that connection only, as Kafka does.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import struct

import wire
from mockbroker.core.deferred import Deferred
from mockbroker.core.dispatch import CloseConnection, Core, NoHandler, RequestContext
from mockbroker.core.faults import CLOSE_CONNECTION
from mockbroker.handlers import api_versions

log = logging.getLogger("mockbroker.io")

#: Kafka's ``socket.request.max.bytes`` default.
DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024

_SIZE = struct.Struct(">i")
_NO_RESPONSE = object()
_CLOSE = object()  # a response that could not be made: close the connection instead
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
        connection_id = next(_connection_ids)
        pending: asyncio.Queue = asyncio.Queue()
        waiting: dict[Deferred, asyncio.Future] = {}
        sender = asyncio.create_task(self._send_in_order(pending, writer))
        try:
            while True:
                try:
                    size_bytes = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                (size,) = _SIZE.unpack(size_bytes)
                if size < 0 or size > self.max_request_bytes:
                    log.warning("broker %d: closing connection %d: request size %d outside 0..%d",
                                self.broker_id, connection_id, size, self.max_request_bytes)
                    return
                try:
                    frame = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                answer = self._answer(frame, connection_id, waiting)
                if answer is None:
                    return  # unreadable request: drop the connection, as Kafka does
                if answer is not _NO_RESPONSE:
                    pending.put_nowait(answer)
        except asyncio.CancelledError:
            pass  # the listener is stopping: end this connection quietly
        finally:
            for deferred, future in list(waiting.items()):
                deferred.cancel()
                if not future.done():
                    future.set_result(b"")  # its client is gone: the sender skips it
            pending.put_nowait(None)
            try:
                await asyncio.wait_for(sender, timeout=5)
            except (asyncio.TimeoutError, asyncio.CancelledError, ConnectionError):
                sender.cancel()
            writer.close()
            self._connections.discard(task)

    def _answer(self, frame: bytes, connection_id: int, waiting: dict[Deferred, asyncio.Future]):
        """Decode and dispatch one frame.  Returns a future of the response bytes,
        ``_NO_RESPONSE`` (acks=0 Produce), or None to close the connection."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        try:
            request = wire.decode_request(frame)
        except wire.UnsupportedVersionError as exc:
            if exc.api_key == api_versions.API_KEY:
                body = api_versions.unsupported_version_body(self.core.registry)
                future.set_result(wire.encode_response(
                    api_versions.API_KEY, 0, exc.header.correlation_id, body))
                return future
            log.warning("broker %d: %s; closing connection %d", self.broker_id, exc, connection_id)
            return None
        except wire.DecodeError as exc:
            log.warning("broker %d: undecodable request (%s); closing connection %d",
                        self.broker_id, exc, connection_id)
            return None
        header = request.header
        ctx = RequestContext(self.broker_id, connection_id, header.client_id, header.api_version,
                             self.core.clock.now_ms())
        name = wire.API_NAMES.get(header.api_key, header.api_key)
        try:
            body = self.core.handle(request, ctx)
        except NoHandler as exc:
            log.warning("broker %d: %s; closing connection %d", self.broker_id, exc, connection_id)
            return None
        except CloseConnection as exc:
            log.info("broker %d: %s; closing connection %d", self.broker_id, exc, connection_id)
            return None
        except Exception:
            # A bug of ours must not take the listener down: this connection is closed, as
            # Kafka closes one whose request it failed to process, and everything else goes on.
            log.exception("broker %d: failed to handle %s v%d; closing connection %d",
                          self.broker_id, name, header.api_version, connection_id)
            return None

        def answer(value) -> None:
            if future.done():
                return
            if value is CLOSE_CONNECTION:
                log.info("broker %d: closing connection %d instead of answering %s v%d",
                         self.broker_id, connection_id, name, header.api_version)
                future.set_result(_CLOSE)
                return
            try:
                future.set_result(wire.encode_response(header.api_key, header.api_version,
                                                       header.correlation_id, value))
            except Exception:
                log.exception("broker %d: failed to encode the %s v%d response; closing "
                              "connection %d", self.broker_id, name, header.api_version,
                              connection_id)
                future.set_result(_CLOSE)

        if body is None:
            return _NO_RESPONSE
        if isinstance(body, Deferred):
            waiting[body] = future

            def complete(value) -> None:
                waiting.pop(body, None)
                answer(value)

            body.add_callback(complete)
            return future
        answer(body)
        return future

    @staticmethod
    async def _send_in_order(pending: asyncio.Queue, writer: asyncio.StreamWriter) -> None:
        while True:
            future = await pending.get()
            if future is None:
                return
            data = await future
            if data is _CLOSE:
                writer.close()
                return
            if data:
                writer.write(data)
                await writer.drain()
