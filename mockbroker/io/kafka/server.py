"""The Kafka listeners: one asyncio server per broker and listener.

A listener speaks one of Kafka's security protocols: PLAINTEXT, SSL (TLS; a client certificate,
when there is one, names the connection's principal), SASL_PLAINTEXT or SASL_SSL (each
connection authenticates first: :mod:`mockbroker.core.security.sasl`).

A connection (:class:`~mockbroker.io.kafka.stream.ConnectionStream`, a protocol rather than
asyncio's streams) reads size-prefixed frames and hands each to the core (:meth:`Core.receive`),
which answers with a Deferred of the response frame, nothing, or a request to close the
connection.  Answers are written strictly in request order: a later request that finishes first
waits for the earlier ones, in the connection's sender task, and one answered at once with none
before it unwritten (most of them) is written as it is read: by the stream itself when the frame
arrives while the reading task waits for bytes (no task wakes for it), else by the reading
task.  As Kafka's socket server mutes a connection while its answer is unsent, a connection is
not read while :data:`MAX_IN_FLIGHT` of its requests are unanswered or their answers not yet
written, so a client that does not read its answers stops being read rather than growing the
broker; and once a request closes the connection, no later one is handled.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import time

from mockbroker.core.config.broker import LISTEN_BACKLOG
from mockbroker.core.deferred import NO_RESPONSE, Close, Deferred
from mockbroker.core.dispatch import Connection, Core
from mockbroker.core.security import ANONYMOUS, Principal
from mockbroker.core.security.config import uses_sasl
from mockbroker.core.observe.request_metrics import RequestMetrics, api_key_of
from mockbroker.io.kafka.stream import HANDED, ConnectionStream, FrameTooLarge
from mockbroker.io.kafka.tls_stream import TlsHandshakeFailed, TlsStream

log = logging.getLogger("mockbroker.io")

#: Kafka's ``socket.request.max.bytes`` default.
DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024

_TURNS_TO_START_A_CONNECTION = 5
#: how long a stopping listener waits for its aborted connections to report their end
_CLOSE_TIMEOUT_S = 5
#: How many requests of one connection may be in the broker at once (read, and not yet answered
#: on the wire).  Kafka's socket server allows one: it mutes a connection from a request's
#: arrival until its response is sent.  We allow as many as a Java client pipelines by default
#: (``max.in.flight.requests.per.connection``), so that a Fetch long-poll does not hold up
#: the requests behind it, yet a client that does not read its answers stops being read after
#: this many instead of growing the broker.
MAX_IN_FLIGHT = 5
#: how long a client that closed its side gets to read the answers already made
_FLUSH_TIMEOUT_S = 5
#: how long a client gets, after a last answer, to close its side before the broker closes
_LINGER_S = 1.0
_LINGER_READ = 64 * 1024
#: how long a client gets to complete its TLS handshake (Kafka bounds it by its idle timeout)
_TLS_HANDSHAKE_TIMEOUT_S = 30
#: what an answer that will never be given becomes when its connection ends
_UNANSWERED = Close("the connection ends before this request is answered")
_connection_ids = itertools.count(1)


class _Queued:
    """Answers of one connection handed to its sender task and not yet written, and the one
    answer still to come that the stream's on_frame kept to write itself (``parked``)."""

    __slots__ = ("answers", "parked")

    def __init__(self) -> None:
        self.answers = 0
        self.parked: _Parked | None = None


class _Outbox:
    """What a connection's reader hands its sender task, in order: answers to write (or None,
    the end).  One reader puts, one sender takes, and it holds a few at most (the answers in
    flight); lighter than an ``asyncio.Queue``, whose three deques and Event (each deque a
    block of 64 slots) every idle connection would hold."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list = []
        self._waiter: asyncio.Future | None = None

    def put_nowait(self, item) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self):
        items = self._items
        while not items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return items.pop(0)


class _Parked:
    """A request answered later (a Fetch that waits for data) that on_frame took with nothing
    before it unwritten: when its outcome comes it is written there and then, with no turn of
    the connection's tasks, unless a later request came first: then the reader hands it to the
    sender (``answer``, a future the outcome resolves), in order, before that one."""

    __slots__ = ("outcome", "request", "answer")

    def __init__(self, outcome: Deferred, request: tuple[int, float]):
        self.outcome = outcome
        self.request = request
        self.answer: asyncio.Future | None = None


class BrokerListener:
    """Accepts Kafka connections for one broker id on one listener."""

    def __init__(self, core: Core, broker_id: int, host: str, port: int = 0, *,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 backlog: int = LISTEN_BACKLOG, name: str = "PLAINTEXT",
                 protocol: str = "PLAINTEXT",
                 tls: ssl.SSLContext | None = None, metrics: RequestMetrics | None = None):
        self.core = core
        self.broker_id = broker_id
        self.host = host
        self.port = port
        self.max_request_bytes = max_request_bytes
        #: connections the listening socket holds until the loop accepts them
        self.backlog = backlog
        self.name = name
        self.protocol = protocol
        self.tls = tls
        #: where handled requests are counted and timed (GET /metrics)
        self.metrics = metrics if metrics is not None else RequestMetrics()
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()

    async def start(self) -> None:
        # TLS is ours (mockbroker.io.kafka.tls_stream), on the plain stream
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: ConnectionStream(self._connected, self.max_request_bytes),
            self.host, self.port, backlog=self.backlog)
        self.port = self._server.sockets[0].getsockname()[1]

    def _connected(self, stream: ConnectionStream) -> None:
        asyncio.get_running_loop().create_task(self._serve(stream))

    @property
    def serving(self) -> bool:
        return self._server is not None

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            # A connection accepted just before the close gets its task a few loop turns later
            # (accept, transport, connection_made); let it start so that it is closed too.
            for _ in range(_TURNS_TO_START_A_CONNECTION):
                await asyncio.sleep(0)
        await self.close_connections()
        if server is not None:
            # From Python 3.12.1 on, this waits for every connection the server accepted to
            # be gone, so it comes after they are closed; the bound keeps a transport that
            # never reports its end from holding a stop for ever.
            try:
                await asyncio.wait_for(server.wait_closed(), _CLOSE_TIMEOUT_S)
            except asyncio.TimeoutError:
                log.warning("broker %d: %s listener stopped with connections still open",
                            self.broker_id, self.name)

    async def close_connections(self) -> None:
        """Close every client connection (the listener itself stays as it is)."""
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, plain: ConnectionStream) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        if self.core.quotas.entities and await self._refused_by_rate(plain):
            self._connections.discard(task)
            return
        stream: ConnectionStream | TlsStream = plain
        if self.tls is not None:
            stream = TlsStream(plain, plain, self.tls)
            try:
                await asyncio.wait_for(stream.handshake(), _TLS_HANDSHAKE_TIMEOUT_S)
            except (TlsHandshakeFailed, asyncio.TimeoutError, ConnectionError) as exc:
                log.info("broker %d: %s connection refused: %s", self.broker_id, self.name,
                         exc or "the TLS handshake timed out")
                plain.close()
                self._connections.discard(task)
                return
            except asyncio.CancelledError:
                plain.transport.abort()
                self._connections.discard(task)
                raise
        peer = stream.get_extra_info("peername")
        conn = Connection(self.broker_id, next(_connection_ids),
                          peer[0] if isinstance(peer, tuple) else "127.0.0.1",
                          listener=self.name, principal=self._tls_principal(stream),
                          sasl=self.core.new_session() if uses_sasl(self.protocol) else None,
                          pieces=stream is plain,  # TLS encrypts a whole answer at a time
                          client_port=peer[1] if isinstance(peer, tuple) else None)
        loop = asyncio.get_running_loop()
        pending = _Outbox()
        waiting: dict[Deferred, asyncio.Future] = {}
        slots = asyncio.Semaphore(MAX_IN_FLIGHT)
        muted = self.core.quotas.muted_until
        queued = _Queued()
        sender = asyncio.create_task(self._send_in_order(pending, stream, conn, slots, queued))
        #: frames the stream's on_frame took and passed on: (frame, request, outcome), the
        #: last two None for a frame it did not give the core; one at a time, as on_frame
        #: stops at a frame it passes on
        handed: list = []
        if stream is plain:
            plain.on_frame = self._on_frame(plain, conn, queued, sender, handed, pending,
                                            waiting)
        stopping = False
        broker_closes = False  # a request is answered by closing the connection
        last_answer = False  # ... after one last answer (an authentication failure)
        try:
            while True:
                await slots.acquire()  # muted while MAX_IN_FLIGHT answers are not yet written
                outcome = None
                if sender.done():
                    return  # the connection closes instead of answering an earlier request
                frame = await self._read_frame(stream, conn)
                if queued.parked is not None:
                    self._unpark(queued, pending, waiting, loop)  # answered before this one
                if frame is None or sender.done():
                    return
                if frame is HANDED:
                    frame, request, outcome = handed.pop(0)
                if outcome is None:
                    if muted(conn.broker_id, conn.connection_id) is not None:
                        await self._unmuted(conn)  # throttled: nothing is read meanwhile
                    # timed from here to the answer written (GET /metrics)
                    request = (api_key_of(frame), time.perf_counter())
                    outcome = self.core.receive(frame, conn)
                if outcome.done and not queued.answers and not isinstance(outcome.value, Close):
                    # answered at once with nothing before it unwritten: written here, in
                    # order, without a turn of the sender
                    try:
                        await self._deliver(stream, outcome.value, request)
                    except ConnectionError:
                        return
                    slots.release()
                    continue
                answer = loop.create_future()
                if outcome.done:
                    if isinstance(outcome.value, Close):
                        broker_closes = True
                        if outcome.value.answer is None:
                            self._handled(request)
                            self._closing(conn, outcome.value)
                            return
                        # a last answer goes out, after the earlier ones, before the close
                        last_answer = True
                        answer.set_result(outcome.value)
                        queued.answers += 1
                        pending.put_nowait((answer, request, True))
                        return
                    answer.set_result(outcome.value)
                else:
                    waiting[outcome] = answer
                    outcome.add_callback(lambda value, outcome=outcome, answer=answer: (
                        waiting.pop(outcome, None), answer.done() or answer.set_result(value)))
                queued.answers += 1
                pending.put_nowait((answer, request, True))
        except asyncio.CancelledError:
            stopping = True  # the listener is stopping: end this connection now
        finally:
            plain.on_frame = None
            if queued.parked is not None:
                queued.parked.outcome.cancel()  # its client is gone
                queued.parked = None
            for _, _, outcome in handed:
                if outcome is not None:
                    outcome.cancel()  # taken by the core, never to be answered
            pending.put_nowait(None)
            if broker_closes and not stopping:
                # The answers to earlier requests go first, as on Kafka, which reads a request
                # only once the one before it is answered (a JoinGroup may still be waiting).
                with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
                    await asyncio.wait_for(asyncio.shield(sender), timeout=_FLUSH_TIMEOUT_S)
                if last_answer and sender.done():
                    await self._linger(stream)
            for outcome, answer in list(waiting.items()):
                outcome.cancel()  # its client is gone: release what it waits on
                if not answer.done():
                    # Nothing after an answer that is never given may be sent: the answers
                    # would be out of order, and the client would wait for the missing one.
                    answer.set_result(_UNANSWERED)
            if not stopping:
                # a client that closed its side may still read the answers already made
                try:
                    await asyncio.wait_for(sender, timeout=_FLUSH_TIMEOUT_S)
                except (asyncio.TimeoutError, asyncio.CancelledError, ConnectionError):
                    stopping = True
            if stopping:
                sender.cancel()
                if not sender.done():
                    # let the cancellation run, so that no task outlives a stopping listener
                    await asyncio.wait([sender])
                if not sender.cancelled():
                    sender.exception()  # a write to a client that went away: nothing to report
                stream.transport.abort()  # answers a client is not reading are dropped
            else:
                stream.close()
            self._connections.discard(task)
            try:
                self.core.connection_closed(conn)  # its share sessions end with it
            except Exception:
                log.exception("failed to end the sessions of a closed connection")

    def _on_frame(self, stream: ConnectionStream, conn: Connection, queued: "_Queued",
                  sender: asyncio.Task, handed: list, pending: _Outbox,
                  waiting: dict):
        """The connection's :attr:`ConnectionStream.on_frame`: a frame that arrives while the
        reading task waits is answered there and then when its answer is ready at once and
        nothing before it is still unwritten, as the reading task would have answered it.  One
        answered later with nothing before it unwritten (a long-poll Fetch) is parked: written
        when it comes, from whatever resolves it (see :class:`_Parked`).  Any other frame is
        passed on to the reading task (with its outcome, once the core has it)."""
        receive = self.core.receive
        muted = self.core.quotas.muted_until

        def on_frame(frame: bytes) -> bool:
            if queued.answers or queued.parked is not None or sender.done() or \
                    muted(conn.broker_id, conn.connection_id) is not None:
                handed.append((frame, None, None))
                return False
            request = (api_key_of(frame), time.perf_counter())
            outcome = receive(frame, conn)
            if outcome.done:
                value = outcome.value
                if not isinstance(value, Close):
                    if value is not NO_RESPONSE:
                        stream.write(value)
                    self._handled(request)
                    return True
                handed.append((frame, request, outcome))
                return False
            parked = queued.parked = _Parked(outcome, request)
            outcome.add_callback(lambda value: come(parked, value))
            return True

        def come(parked: _Parked, value) -> None:
            if parked.answer is not None:  # the reader passed it on, before a later request
                waiting.pop(parked.outcome, None)
                if not parked.answer.done():
                    parked.answer.set_result(value)
                return
            queued.parked = None
            if isinstance(value, Close) or sender.done() or stream.is_closing():
                # the sender closes the connection (after a last answer, if any), in turn
                answer = asyncio.get_running_loop().create_future()
                answer.set_result(value)
                queued.answers += 1
                pending.put_nowait((answer, parked.request, False))
                return
            if value is not NO_RESPONSE:
                stream.write_now(value)
            self._handled(parked.request)

        return on_frame

    @staticmethod
    def _unpark(queued: "_Queued", pending: _Outbox, waiting: dict,
                loop: asyncio.AbstractEventLoop) -> None:
        """The parked answer goes to the sender, ahead of the request just read."""
        parked, queued.parked = queued.parked, None
        parked.answer = loop.create_future()
        waiting[parked.outcome] = parked.answer
        queued.answers += 1
        pending.put_nowait((parked.answer, parked.request, False))

    async def _refused_by_rate(self, plain: ConnectionStream) -> bool:
        """Whether a new connection goes over its IP's ``connection_creation_rate``: if so it
        is held unread for the throttle time, then closed, as Kafka's acceptor does."""
        peer = plain.get_extra_info("peername")
        ip = peer[0] if isinstance(peer, tuple) else "127.0.0.1"
        throttle = self.core.quotas.connection_accepted(self.broker_id, ip)
        if not throttle:
            return False
        log.info("broker %d: a connection from %s goes over its connection_creation_rate; "
                 "closed in %d ms", self.broker_id, ip, throttle)
        woken = asyncio.get_running_loop().create_future()
        timer = self.core.timers.call_later(throttle,
                                            lambda: woken.done() or woken.set_result(None))
        try:
            await woken
        finally:
            timer.cancel()
            plain.transport.abort()
        return True

    async def _unmuted(self, conn: Connection) -> None:
        """Wait while a throttle mutes the connection (KIP-219: a client over its quota is
        answered at once, then not read until its throttle time has passed), on the cluster's
        clock: a manual one unmutes it only when the test moves it."""
        muted_until = self.core.quotas.muted_until
        until = muted_until(conn.broker_id, conn.connection_id)
        while until is not None:
            woken = asyncio.get_running_loop().create_future()
            timer = self.core.timers.call_at(
                until, lambda: woken.done() or woken.set_result(None))
            try:
                await woken
            finally:
                timer.cancel()
            until = muted_until(conn.broker_id, conn.connection_id)

    async def _send_in_order(self, pending: _Outbox, writer: ConnectionStream | TlsStream,
                             conn: Connection, slots: asyncio.Semaphore,
                             queued: "_Queued") -> None:
        try:
            while True:
                item = await pending.get()
                if item is None:
                    return
                answer, request, holds_slot = item
                value = await answer
                if isinstance(value, Close):
                    self._closing(conn, value)
                    if value.answer is not None:
                        writer.write(value.answer)
                        await writer.drain()
                        self._handled(request)
                        return  # closed by the reader once the client has had it
                    if value is not _UNANSWERED:
                        self._handled(request)
                    writer.close()
                    return
                await self._deliver(writer, value, request)
                queued.answers -= 1
                if holds_slot:  # (a parked answer was never given one)
                    slots.release()
        finally:
            slots.release()  # wake the reader, which sees the sender has ended

    async def _deliver(self, writer: ConnectionStream | TlsStream, value: bytes,
                       request: tuple[int, float]) -> None:
        """Write an answer (nothing for NO_RESPONSE) and count its request handled; waits while
        the transport's buffer is above its mark, muting the connection of a client that does
        not read."""
        if value is not NO_RESPONSE:
            writer.write(value)
            await writer.drain()  # the answer is sent (or buffered below the mark)
        self._handled(request)

    def _handled(self, request: tuple[int, float]) -> None:
        api_key, started = request
        self.metrics.observe(api_key, self.broker_id, time.perf_counter() - started)

    async def _linger(self, reader) -> None:
        """After a last answer, give the client a moment to read it and close its side before
        this one closes: a client that finds the answer and the end of the stream in one read
        may report only the end (kafka-python does, under load), and not why."""
        if not isinstance(reader, ConnectionStream):
            return  # TLS: the client reads the answer before the close_notify that follows
        with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
            async with asyncio.timeout(_LINGER_S):
                while await reader.read(_LINGER_READ):
                    pass  # whatever else it sent is not served

    async def _read_frame(self, reader: ConnectionStream | TlsStream,
                          conn: Connection) -> bytes | None:
        """The next request frame, or None when the client closed or sent a size out of range."""
        try:
            if isinstance(reader, ConnectionStream):
                return await reader.read_frame(self.max_request_bytes)
            size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
            if size < 0 or size > self.max_request_bytes:
                raise FrameTooLarge(size)
            return await reader.readexactly(size)
        except FrameTooLarge as exc:
            log.warning("broker %d: closing connection %d: request size %d outside 0..%d",
                        self.broker_id, conn.connection_id, exc.size, self.max_request_bytes)
            return None
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    def _tls_principal(self, writer: ConnectionStream | TlsStream) -> Principal:
        """User:DN of the client certificate on a TLS connection (Kafka's default principal
        builder); User:ANONYMOUS without one."""
        tls = writer.get_extra_info("ssl_object")
        if tls is None:
            return ANONYMOUS
        # imported here: cryptography (which reads the certificate) is for TLS listeners only
        from mockbroker.io.kafka.tls import principal_name

        return Principal("User", principal_name(tls.getpeercert(binary_form=True)))

    def _closing(self, conn: Connection, close: Close) -> None:
        log.info("broker %d: closing connection %d: %s", self.broker_id, conn.connection_id,
                 close.reason)
