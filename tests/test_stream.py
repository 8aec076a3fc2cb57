"""A listener connection's framing and flow control (``mockbroker.io.kafka.stream``), fed by hand:
frames whole however the bytes arrive, sizes out of range refused, the end of the stream, the
socket paused while too much waits unread, writes that wait for the transport, answers
corked into one send, and frames served as they arrive while the reader waits."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from mockbroker.io.kafka.stream import CORK_LIMIT, HANDED, HIGH_WATER, PIECE, ConnectionStream, \
    FrameTooLarge


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.paused = False
        self.closing = False
        self.written: list[bytes] = []

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data) -> None:
        self.written.append(bytes(data))

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 5555)}.get(name, default)


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def connected() -> tuple[ConnectionStream, FakeTransport]:
    seen = []
    stream = ConnectionStream(seen.append, max_frame=1 << 20)
    transport = FakeTransport()
    stream.connection_made(transport)
    assert seen == [stream]  # the listener is told, and starts the connection's task
    return stream, transport


def run(coroutine):
    return asyncio.run(coroutine)


def test_frames_are_whole_however_the_bytes_arrive():
    async def scenario():
        stream, _ = connected()
        payloads = [b"a" * 3, b"", b"b" * 70_000, b"c"]
        data = b"".join(frame(p) for p in payloads)
        reads = [asyncio.ensure_future(stream.read_frame(1 << 20))]
        for i in range(0, len(data), 7):  # seven bytes at a time, a size prefix split too
            stream.data_received(data[i:i + 7])
            await asyncio.sleep(0)
        got = [await reads[0]] + [await stream.read_frame(1 << 20) for _ in payloads[1:]]
        assert got == payloads
        stream.data_received(frame(b"x") + frame(b"yz"))  # two frames in one chunk
        assert [await stream.read_frame(10), await stream.read_frame(10)] == [b"x", b"yz"]

    run(scenario())


@pytest.mark.parametrize("size", [-1, 101])
def test_a_size_out_of_range_is_refused(size):
    async def scenario():
        stream, _ = connected()
        stream.data_received(struct.pack(">i", size) + b"z" * 10)
        with pytest.raises(FrameTooLarge) as refused:
            await stream.read_frame(100)
        assert refused.value.size == size

    run(scenario())


def test_the_end_of_the_stream_ends_reading_and_drops_an_unfinished_frame():
    async def scenario():
        stream, _ = connected()
        stream.data_received(frame(b"done") + struct.pack(">i", 50) + b"part")
        waiting = asyncio.ensure_future(stream.read_frame(100))
        await asyncio.sleep(0)
        assert await asyncio.wait_for(asyncio.shield(waiting), 1) == b"done"
        pending = asyncio.ensure_future(stream.read_frame(100))
        await asyncio.sleep(0)
        assert not pending.done()  # 46 bytes short: it waits
        assert stream.eof_received() is True  # half-closed: answers may still be written
        assert await pending is None
        assert await stream.read(10) == b""

    run(scenario())


def test_reading_pauses_while_too_much_waits_unread_and_resumes_once_read():
    async def scenario():
        stream, transport = connected()
        chunk = frame(b"r" * 1000)
        fed = 0
        while not transport.paused:  # nobody reads: the frames pile up, then the socket stops
            stream.data_received(chunk)
            fed += 1
        assert fed * len(chunk) > HIGH_WATER
        for _ in range(fed):
            assert await stream.read_frame(2000) == b"r" * 1000
        assert not transport.paused

    run(scenario())


def test_a_large_frame_arriving_is_not_paused_for_its_own_size():
    async def scenario():
        stream, transport = connected()
        big = frame(b"B" * (3 * HIGH_WATER))
        for i in range(0, len(big), 256 * 1024):  # what a socket read gives at most
            stream.data_received(big[i:i + 256 * 1024])
            assert not transport.paused  # a frame is read whole, asked for yet or not
        stream.data_received(frame(b"n" * HIGH_WATER) + frame(b"m"))
        assert transport.paused  # beyond it, what piles up unread pauses the socket
        assert await stream.read_frame(len(big)) == b"B" * (3 * HIGH_WATER)
        assert not transport.paused

    run(scenario())


def test_drain_waits_for_the_transport_and_fails_once_the_connection_is_lost():
    async def scenario():
        stream, transport = connected()
        stream.write(b"answer")
        await asyncio.sleep(0)  # a corked answer goes out at the loop's next turn at the latest
        assert transport.written == [b"answer"]
        await stream.drain()  # not paused: at once
        stream.pause_writing()
        waiting = asyncio.ensure_future(stream.drain())
        await asyncio.sleep(0)
        assert not waiting.done()
        stream.resume_writing()
        await asyncio.wait_for(waiting, 1)
        stream.pause_writing()
        lost = asyncio.ensure_future(stream.drain())
        await asyncio.sleep(0)
        stream.connection_lost(None)
        with pytest.raises(ConnectionResetError):
            await lost
        with pytest.raises(ConnectionResetError):
            await stream.drain()
        assert stream.get_extra_info("peername") == ("127.0.0.1", 5555)

    run(scenario())


def test_the_answers_to_requests_read_together_go_out_in_one_send_before_the_reader_waits():
    async def scenario():
        stream, transport = connected()
        stream.data_received(frame(b"1") + frame(b"2"))

        async def reader():
            assert await stream.read_frame(100) == b"1"
            stream.write(b"a1")
            assert await stream.read_frame(100) == b"2"
            stream.write(b"a2")
            assert transport.written == []  # corked while requests wait in the buffer
            return await stream.read_frame(100)  # nothing more has arrived: it waits

        task = asyncio.ensure_future(reader())
        await asyncio.sleep(0)  # the reader's pass, up to its wait (before the loop's next turn)
        assert transport.written == [b"a1a2"]
        stream.data_received(frame(b"3"))
        assert await task == b"3"

    run(scenario())


def test_answers_written_outside_a_pass_go_out_at_the_next_turn_and_a_large_one_at_once():
    async def scenario():
        stream, transport = socket_connected(room=1 << 20)
        stream.write(b"x")
        stream.write(b"y")
        assert transport.written == []
        await asyncio.sleep(0)
        assert transport.written == [b"xy"]
        stream.write(b"z")
        big = b"B" * CORK_LIMIT
        stream.write(big)  # with what was corked before it, in order
        assert b"".join(transport.written) == b"xyz" + big
        await asyncio.sleep(0)
        assert b"".join(transport.written) == b"xyz" + big  # nothing left to send

    run(scenario())


def test_a_small_answer_given_in_pieces_is_joined_and_corked_with_the_others():
    async def scenario():
        stream, transport = connected()
        stream.write(b"first")
        stream.write([memoryview(b"sec"), b"on", bytearray(b"d")])
        stream.write(b"third")
        await asyncio.sleep(0)
        assert transport.written == [b"firstsecondthird"]  # one send

    run(scenario())


class SocketTransport(FakeTransport):
    """A transport in front of a socket that takes ``room`` bytes at a time, with asyncio's
    flow control: what the socket does not take waits in the transport's buffer (a copy), and
    the protocol is paused above the high mark and resumed at the low one."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room
        self.buffer = bytearray()
        self.high, self.low = 64 * 1024, 16 * 1024
        self.most_buffered = 0
        self.protocol: ConnectionStream | None = None
        self.protocol_paused = False

    def set_write_buffer_limits(self, high=None, low=None) -> None:
        self.high = 64 * 1024 if high is None else high
        self.low = self.high // 4 if low is None else low
        self._maybe_pause()

    def get_write_buffer_size(self) -> int:
        return len(self.buffer)

    def write(self, data) -> None:
        data = bytes(data)
        if not self.buffer:
            taken, data = data[:self.room], data[self.room:]
            self.written.append(taken)
        self.buffer += data
        self.most_buffered = max(self.most_buffered, len(self.buffer))
        self._maybe_pause()

    def _maybe_pause(self) -> None:
        if not self.protocol_paused and len(self.buffer) > self.high:
            self.protocol_paused = True
            self.protocol.pause_writing()

    def socket_takes(self) -> None:
        """The socket has room again: it takes ``room`` bytes of the buffer."""
        self.written.append(bytes(self.buffer[:self.room]))
        del self.buffer[:self.room]
        if self.protocol_paused and len(self.buffer) <= self.low:
            self.protocol_paused = False
            self.protocol.resume_writing()


def socket_connected(room: int) -> tuple[ConnectionStream, "SocketTransport"]:
    stream = ConnectionStream(lambda _: None, max_frame=1 << 20)
    transport = SocketTransport(room)
    transport.protocol = stream
    stream.connection_made(transport)
    return stream, transport


def test_a_large_answer_goes_to_a_transport_without_a_socket_a_piece_at_a_time_in_order():
    async def scenario():
        stream, transport = socket_connected(room=10 * 1024)
        answer = bytes(range(256)) * (4 * PIECE // 256 + 3)  # four pieces and a bit
        stream.write(answer)
        stream.write(b"the next answer")  # queued behind the large one, not before it
        stream.flush()
        drained = asyncio.ensure_future(stream.drain())
        await asyncio.sleep(0)
        assert not drained.done()  # the answer is not all handed over yet
        while transport.buffer or stream._unsent:
            transport.socket_takes()
        await asyncio.sleep(0)
        assert drained.done()
        assert b"".join(transport.written) == answer + b"the next answer"
        # the transport never held more than the rest of one piece
        assert transport.most_buffered == PIECE - transport.room
        assert (transport.high, transport.low) == (64 * 1024, 16 * 1024)  # its marks again
        stream.write(b"small")
        stream.flush()
        assert transport.written[-1] == b"small"  # written as it comes once more

    run(scenario())


async def over_a_socket() -> tuple[ConnectionStream, socket.socket]:
    """A stream on a real transport, and the client's end of its socket (which reads only
    what the test reads, into a small receive buffer)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        theirs = socket.create_connection(server.getsockname())
        ours, _ = server.accept()
    for end in (ours, theirs):
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 * 1024)
        end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    theirs.setblocking(False)
    stream = ConnectionStream(lambda _: None, max_frame=1 << 20)
    await asyncio.get_running_loop().connect_accepted_socket(lambda: stream, ours)
    return stream, theirs


def a_fetch_answer(batches: int, batch_size: int) -> list:
    """An answer as the buffers it is made of: views of a frame between stored batches."""
    frame = bytearray(b"H" * 40)
    view = memoryview(frame)
    pieces = [view[:20]]
    for i in range(batches):
        pieces.append(bytes([65 + i % 26]) * batch_size)
    pieces.append(view[20:])
    return pieces


def test_a_large_answer_in_pieces_reaches_a_slow_reader_whole_and_in_order():
    async def scenario():
        stream, theirs = await over_a_socket()
        loop = asyncio.get_running_loop()
        transport = stream.transport
        answer = a_fetch_answer(batches=300, batch_size=10 * 1024)  # 3 MB
        expected = b"".join(answer) + b"the next answer"
        stream.write(answer)
        # the socket took what it could straight away; the transport keeps one piece of the
        # rest (a copy) until the socket has room again, and the rest waits uncopied
        assert 0 < transport.get_write_buffer_size() <= PIECE
        waiting = list(stream._unsent)
        assert sum(map(len, waiting)) > len(expected) - 256 * 1024  # most of the answer
        assert all(a is b for a, b in zip(waiting[1:], answer[-len(waiting) + 1:]))
        stream.write(b"the next answer")  # queued behind the large one
        drained = asyncio.ensure_future(stream.drain())
        received = bytearray()
        most_buffered = 0
        while len(received) < len(expected):
            most_buffered = max(most_buffered, transport.get_write_buffer_size())
            received += await loop.sock_recv(theirs, 8 * 1024)
        await asyncio.wait_for(drained, 30)
        assert received == expected
        # the transport only ever held a piece: the rest went straight to the socket
        assert most_buffered <= PIECE
        stream.write(b"after")
        stream.flush()
        assert await loop.sock_recv(theirs, 100) == b"after"
        stream.close()
        theirs.close()

    run(scenario())


def test_a_connection_reset_during_a_large_answer_fails_its_drain_and_drops_the_rest():
    async def scenario():
        stream, theirs = await over_a_socket()
        loop = asyncio.get_running_loop()
        stream.write(a_fetch_answer(batches=300, batch_size=10 * 1024))
        drained = asyncio.ensure_future(stream.drain())
        await loop.sock_recv(theirs, 1024)  # some of it has arrived
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        theirs.close()  # reset, with most of the answer unread
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(drained, 30)
        assert not stream._unsent  # nothing is kept for a connection that is gone
        stream.write(b"late")  # dropped, without an error
        stream.flush()

    run(scenario())


def test_close_sends_the_rest_of_a_large_answer_and_a_lost_connection_drops_it():
    async def scenario():
        stream, transport = socket_connected(room=1024)
        answer = b"A" * (4 * CORK_LIMIT)
        stream.write(answer)
        stream.close()  # the transport sends what it holds before it closes
        assert transport.closing
        assert b"".join(transport.written) + transport.buffer == answer

        lost, _ = socket_connected(room=1024)
        lost.write(answer)
        drained = asyncio.ensure_future(lost.drain())
        await asyncio.sleep(0)
        lost.connection_lost(ConnectionResetError())
        with pytest.raises(ConnectionResetError):
            await drained
        assert not lost._unsent  # nothing is kept for a connection that is gone

    run(scenario())


def test_close_sends_what_is_corked_and_a_lost_connection_drops_it():
    async def scenario():
        stream, transport = connected()
        stream.write(b"last answer")
        stream.close()
        assert transport.written == [b"last answer"] and transport.closing
        lost, lost_transport = connected()
        lost.write(b"never sent")
        lost.connection_lost(ConnectionResetError())
        await asyncio.sleep(0)
        assert lost_transport.written == []

    run(scenario())


def answering(stream: ConnectionStream, keep: set[bytes] = frozenset()):
    """An on_frame that answers each frame with its payload reversed, except those in
    ``keep``, which it passes on to the reader; returns the frames it was given."""
    given = []

    def on_frame(payload: bytes) -> bool:
        given.append(payload)
        if payload in keep:
            return False
        stream.write(payload[::-1])
        return True

    stream.on_frame = on_frame
    return given


async def reader_waiting(keep: set[bytes] = frozenset()):
    """A connection with an :func:`answering` on_frame and its reader waiting for bytes:
    (stream, transport, frames given to on_frame, the reader's read_frame)."""
    stream, transport = connected()
    given = answering(stream, keep)
    reading = asyncio.ensure_future(stream.read_frame(100))
    await asyncio.sleep(0)
    return stream, transport, given, reading


def test_frames_arriving_while_the_reader_waits_are_answered_without_waking_it():
    async def scenario():
        stream, transport, given, reading = await reader_waiting()
        loop = asyncio.get_running_loop()
        scheduled = []
        call_soon = loop.call_soon
        loop.call_soon = lambda *a, **k: scheduled.append(a) or call_soon(*a, **k)
        stream.data_received(frame(b"ab") + frame(b"cd") + frame(b"ef")[:3])
        # both whole frames answered in one send; the partial one waits for its bytes
        assert given == [b"ab", b"cd"] and transport.written == [b"badc"]
        stream.data_received(frame(b"ef")[3:])
        assert given == [b"ab", b"cd", b"ef"] and transport.written == [b"badc", b"fe"]
        # sent there and then: nothing is left for the loop's next turn, which costs a turn
        # even when it is a flush cancelled since
        assert scheduled == []
        del loop.call_soon
        await asyncio.sleep(0)
        assert not reading.done()  # nothing was left for the reader
        stream.write(b"later")  # outside a pass: corked until the loop's next turn
        assert transport.written == [b"badc", b"fe"]
        await asyncio.sleep(0)
        assert transport.written == [b"badc", b"fe", b"later"]
        reading.cancel()

    run(scenario())


def test_a_frame_on_frame_keeps_goes_to_the_reader_before_the_frames_after_it():
    async def scenario():
        stream, transport, given, reading = await reader_waiting(keep={b"slow"})
        stream.data_received(frame(b"ab") + frame(b"slow") + frame(b"cd"))
        assert given == [b"ab", b"slow"]  # nothing after the kept frame is served here
        assert await reading is HANDED
        assert transport.written == [b"ba"]
        # the reader is busy with the kept frame: what arrives now waits for it
        stream.data_received(frame(b"ef"))
        assert given == [b"ab", b"slow"]
        assert await stream.read_frame(100) == b"cd"
        assert await stream.read_frame(100) == b"ef"

    run(scenario())


def test_a_size_out_of_range_arriving_is_left_to_the_reader():
    async def scenario():
        stream, _, given, reading = await reader_waiting()
        stream.data_received(frame(b"ok") + struct.pack(">i", 1 << 21))
        assert given == [b"ok"]
        with pytest.raises(FrameTooLarge):
            await reading

    run(scenario())


def test_frames_wait_for_the_reader_while_the_client_does_not_read_its_answers():
    async def scenario():
        stream, transport, given, reading = await reader_waiting()
        stream.pause_writing()  # the transport's buffer is above its mark
        stream.data_received(frame(b"ab"))
        assert given == [] and transport.written == []
        assert await reading == b"ab"  # the reader answers it, and waits in drain

    run(scenario())
