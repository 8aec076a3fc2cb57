"""A listener's connection as an :class:`asyncio.Protocol`: the bytes a client sent, cut into
Kafka's size-prefixed request frames, and its answers written back.

asyncio's streams cost a coroutine step, a future and two copies for every ``readexactly``,
two of which a request frame needs.  Here the protocol keeps what the socket delivers in one
buffer and :meth:`ConnectionStream.read_frame` cuts a whole frame out of it with one copy,
waking its reader once a frame is complete rather than at every chunk of it.

It also offers the part of asyncio's (reader, writer) pair that the listener and
:class:`~mockbroker.io.kafka.tls_stream.TlsStream` use (``read``, ``write``, ``drain``, ``close``,
``is_closing``, ``get_extra_info``, ``transport``), so a TLS connection runs over it unchanged.

Flow control is the streams': reading pauses while more than :data:`HIGH_WATER` bytes wait
unread beyond the frame at the head of the buffer (so a connection the listener mutes stops
being read, and a large frame is never paused for its own size),
and :meth:`ConnectionStream.drain` waits while the transport's write buffer is above its mark.

A listener may also serve frames as they arrive (:attr:`ConnectionStream.on_frame`): while
its reader waits for bytes, each complete frame is handed to that callback inside
``data_received``, and a frame answered at once costs no wake-up of the reader's task.  A frame
the callback cannot answer at once is passed on to the reader, whose :meth:`read_frame` then
returns :data:`HANDED`.

Answers are corked: those written while the listener works through requests that arrived
together (a producer with several requests in flight) go out in one send, when the reader next
waits for bytes, or at the event loop's next turn at the latest; an answer of
:data:`CORK_LIMIT` bytes or more goes out at once.  A client sending one request at a time
sees no difference, and one that pipelines costs the broker a system call per batch of answers
rather than per answer.

An answer may also be the list of buffers it is made of (a Fetch answer and the stored batches
in it, :meth:`mockbroker.core.dispatch.Core.receive`); one of less than :data:`CORK_LIMIT`
bytes is joined and corked like any other.  Larger answers are sent without a copy: while
nothing waits in the transport's buffer, straight to the socket, in one ``writev`` of many
buffers at a time.  Once the socket takes no more, the transport is handed the next
:data:`PIECE` bytes, keeps what it cannot send, and pauses this protocol (its write-buffer
high mark is 0 meanwhile); when that has left it resumes it, and the rest goes on as before.
So the transport never copies more than a piece of an answer, and later answers queue behind
it; :meth:`ConnectionStream.drain` waits until it has all gone.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
import struct
from typing import Any, Callable

#: unread bytes (beyond a frame still arriving) at which the socket stops being read
HIGH_WATER = 128 * 1024
#: corked answers of this many bytes in all are written at once, and sent without a copy
CORK_LIMIT = 64 * 1024
#: the most of an answer the transport is handed at a time once the socket is full: asyncio's
#: transport keeps a copy of what the socket does not take, which is then at most this (once
#: that has left, the socket has room again and takes the rest straight, as much as it can)
PIECE = 16 * 1024
#: the most buffers one ``writev`` takes (the usual IOV_MAX)
IOV_MAX = 1024
_SIZE = struct.Struct(">i")
#: what :meth:`ConnectionStream.read_frame` returns when :attr:`ConnectionStream.on_frame` has
#: passed a frame on to the reader
HANDED = object()


class FrameTooLarge(Exception):
    """A frame's size prefix is negative or above the listener's limit."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


class ConnectionStream(asyncio.Protocol):
    """One client connection; ``on_connect(stream)`` is called once it is made (the listener
    starts the connection's task there).  ``max_frame``: the listener's largest request."""

    def __init__(self, on_connect: Callable[["ConnectionStream"], Any], max_frame: int):
        self._on_connect = on_connect
        #: the largest frame the listener takes (a larger size prefix is refused)
        self._max_frame = max_frame
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._eof = False
        self._lost = False
        self._reading_paused = False
        #: bytes the reader waits for in all: it is woken once the buffer holds them
        self._wanted = 1
        self._waiter: asyncio.Future | None = None
        self._write_paused = False
        self._drain_waiters: list[asyncio.Future] = []
        #: answers written but not yet handed to the transport, and their size
        self._corked: list[bytes] = []
        self._corked_size = 0
        self._flush_handle: asyncio.Handle | None = None
        #: inside :meth:`_serve_arrived`, which flushes what it wrote when it ends: a write
        #: then schedules no flush of its own (a cancelled one would still cost a loop turn)
        self._serving = False
        #: the buffers of large answers (the rest of one first) not yet sent or handed to the
        #: transport
        self._unsent: collections.deque = collections.deque()
        #: the socket's descriptor, for writes straight to it; -1 without one
        self._fd = -1
        #: set by the listener: ``on_frame(frame)`` answers a frame that arrived while the
        #: reader waits and returns True, or keeps it for the reader and returns False
        self.on_frame: Callable[[bytes], bool] | None = None
        #: on_frame passed a frame on: the reader's read_frame returns HANDED
        self._handed = False

    # -- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            self._fd = sock.fileno()
        self._on_connect(self)

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if self.on_frame is not None and len(buffer) >= self._wanted:
            waiter = self._waiter
            if waiter is not None and not waiter.done() and not self._write_paused:
                self._serve_arrived()
        if len(buffer) >= self._wanted:
            self._wake()
        if not self._reading_paused and self._too_much_unread():
            self._reading_paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return True  # half-closed: the answers already made may still be written

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = self._eof = True
        self._drop_corked()
        self._unsent.clear()
        self._wake()
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(ConnectionResetError("Connection lost"))

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._unsent:
            self._hand_on()
            if self._write_paused:
                return  # the drains wait on: the rest of an answer is still to go
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _serve_arrived(self) -> None:
        """Hand on_frame each complete frame at the head of the buffer, while it answers them
        at once; a frame it keeps, or a size the reader must refuse, wakes the reader."""
        served = False
        self._serving = True
        try:
            while True:
                try:
                    frame = self._cut_frame(self._max_frame)
                except FrameTooLarge:
                    self._wake()  # read_frame refuses it
                    break
                if isinstance(frame, int):
                    self._wanted = frame
                    break
                served = True
                if not self.on_frame(frame):
                    self._handed = True
                    self._wake()
                    break
                if self._write_paused:
                    self._wake()  # the reader waits until the client reads its answers
                    break
        finally:
            self._serving = False
            if served:
                self.flush()

    # -- reading -------------------------------------------------------------------------------

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def _wait(self, wanted: int) -> None:
        """Until the buffer holds ``wanted`` bytes or the stream ends."""
        self._wanted = wanted
        self._consumed()
        self.flush()  # the answers to what was read go out before the reader waits
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None
            self._wanted = 1

    def _too_much_unread(self) -> bool:
        """Whether more than HIGH_WATER bytes wait beyond what the reader waits for and the
        frame at the head of the buffer (a large frame is read whole, asked for yet or not)."""
        buffer = self._buffer
        wanted = self._wanted
        if len(buffer) <= wanted + HIGH_WATER:
            return False
        (size,) = _SIZE.unpack_from(buffer)
        if 0 <= size <= self._max_frame:
            wanted = max(wanted, 4 + size)
        return len(buffer) > wanted + HIGH_WATER

    def _consumed(self) -> None:
        if self._reading_paused and not self._too_much_unread():
            self._reading_paused = False
            if not self._lost:
                self.transport.resume_reading()

    async def read_frame(self, max_size: int) -> bytes | object | None:
        """The next request frame (without its size prefix); None once the client has closed
        (a frame it left unfinished is dropped); :data:`HANDED` once :attr:`on_frame` has
        passed a frame on.  Raises :class:`FrameTooLarge` for a size prefix outside
        ``0..max_size``."""
        while True:
            if self._handed:
                self._handed = False
                return HANDED
            frame = self._cut_frame(max_size)
            if not isinstance(frame, int):
                self._consumed()
                return frame
            if self._eof:
                self._buffer.clear()  # what is left can never become a frame
                return None
            await self._wait(frame)

    def _cut_frame(self, max_size: int) -> bytes | int:
        """The frame at the head of the buffer, taken out of it; or, while it is not whole,
        how many bytes the buffer must hold for it.  Raises :class:`FrameTooLarge` for a size
        prefix outside ``0..max_size``."""
        buffer = self._buffer
        if len(buffer) < 4:
            return 4
        (size,) = _SIZE.unpack_from(buffer)
        if size < 0 or size > max_size:
            raise FrameTooLarge(size)
        end = 4 + size
        if len(buffer) < end:
            return end
        with memoryview(buffer) as view:  # one copy, not a slice and its copy
            frame = view[4:end].tobytes()
        del buffer[:end]  # a bytearray drops its head without moving the rest
        return frame

    async def read(self, n: int) -> bytes:
        """Up to ``n`` bytes as they arrive; b"" once the client has closed."""
        buffer = self._buffer
        while not buffer:
            if self._eof:
                return b""
            await self._wait(1)
        with memoryview(buffer) as view:
            data = view[:n].tobytes()
        del buffer[:n]
        self._consumed()
        return data

    # -- writing -------------------------------------------------------------------------------

    def write(self, data: bytes | list) -> None:
        """Queue ``data``, an answer or the list of buffers it is made of, to go out with the
        other answers of this pass (see the module's docstring)."""
        if data.__class__ is list:
            size = sum(map(len, data))
            if size < CORK_LIMIT:
                data = b"".join(data)
        else:
            size = len(data)
        self._corked.append(data)
        self._corked_size += size
        if self._corked_size >= CORK_LIMIT:
            self.flush()
        elif self._flush_handle is None and not self._serving:
            self._flush_handle = asyncio.get_running_loop().call_soon(self.flush)

    def write_now(self, data: bytes | list) -> None:
        """:meth:`write` an answer that comes by itself (a long poll's, from a timer), and hand
        it on now rather than at the loop's next turn; inside a pass over arrived requests it
        goes out with theirs."""
        serving, self._serving = self._serving, True
        try:
            self.write(data)
        finally:
            self._serving = serving
        if not serving:
            self.flush()

    def flush(self) -> None:
        """Hand every queued answer to the transport, in one write; or, if they are large,
        send them without a copy."""
        corked = self._corked
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not corked:
            return
        if self._lost:
            self._drop_corked()
            return
        if self._unsent or self._corked_size >= CORK_LIMIT:
            unsent = self._unsent
            for data in corked:
                if data.__class__ is list:
                    unsent.extend(data)
                else:
                    unsent.append(data)
            self._drop_corked()
            self._hand_on()
            return
        data = corked[0] if len(corked) == 1 else b"".join(corked)
        self._drop_corked()
        self.transport.write(data)

    def _hand_on(self) -> None:
        """Send the unsent buffers: straight to the socket while the transport's buffer is
        empty, then a piece to the transport, which calls :meth:`pause_writing` as soon as it
        keeps any (its high mark is 0 meanwhile) and :meth:`resume_writing` once that has left,
        which comes back here."""
        transport = self.transport
        unsent = self._unsent
        transport.set_write_buffer_limits(high=0)
        while unsent and not self._write_paused and not transport.is_closing():
            if self._fd >= 0 and not transport.get_write_buffer_size():
                self._send_now()
                if not unsent:
                    break
            head = unsent[0]
            if len(head) > PIECE:
                head = memoryview(head)
                unsent[0] = head[PIECE:]
                head = head[:PIECE]
            else:
                unsent.popleft()
            transport.write(head)
        if not unsent:
            transport.set_write_buffer_limits()  # asyncio's own marks again

    def _send_now(self) -> None:
        """Write unsent buffers to the socket until it takes no more; an error is left for the
        transport to meet, and report, with the next piece it is handed."""
        unsent = self._unsent
        fd = self._fd
        while unsent:
            buffers = list(itertools.islice(unsent, IOV_MAX))
            try:
                sent = os.writev(fd, buffers)
            except OSError:  # full (EAGAIN), interrupted, or the connection's error
                return
            for buffer in buffers:
                size = len(buffer)
                if sent < size:
                    if sent:
                        unsent[0] = memoryview(buffer)[sent:]
                    return  # the socket took no more
                unsent.popleft()
                sent -= size

    def _drop_corked(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self._corked.clear()
        self._corked_size = 0

    async def drain(self) -> None:
        """Wait while the transport's write buffer is above its mark; raises ConnectionError
        once the connection is lost."""
        if self._lost:
            raise ConnectionResetError("Connection lost")
        if self.transport.is_closing():
            await asyncio.sleep(0)  # let the transport report the loss
            if self._lost:
                raise ConnectionResetError("Connection lost")
        if self._write_paused or self._unsent:
            waiter = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(waiter)
            await waiter

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.flush()
        while self._unsent and not self._lost:
            # the transport sends all it holds before it closes: the rest goes to it at once
            self.transport.write(self._unsent.popleft())
        self.transport.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)
