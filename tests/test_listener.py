"""The Kafka listener against raw sockets: a client that never reads its answers, answers in
request order, connections a stopping broker ends, and the loop's timer wake-ups when a timer
fails."""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
import tracemalloc

import pytest

import wire
from wire import records
from mockbroker import MockCluster
from mockbroker.io.kafka.stream import PIECE
from tests.clients.helpers import wait_for

PRODUCE, FETCH, API_VERSIONS = 0, 1, 18
#: the size of the record every flooding Fetch reads back
LARGE_VALUE = 900_000
#: a request padded to about 2 KiB (a long client id), so that the kernel's socket buffers
#: hold only a few thousand of them and a broker that stops reading is felt by the client
PADDED_CLIENT = "c" * 2000
REQUESTS = 20_000


def _connect(cluster: MockCluster) -> socket.socket:
    host, port = cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def _round_trip(sock: socket.socket, frame: bytes) -> bytes:
    sock.sendall(frame)
    size = int.from_bytes(_read(sock, 4), "big")
    return _read(sock, size)


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "the broker closed the connection"
        data += chunk
    return data


def _handled(cluster: MockCluster) -> int:
    """How many of the flooding client's requests the broker has handled (they are numbered
    by correlation id)."""
    def last(core):
        ids = [r.correlation_id for r in core.requests if r.client_id == PADDED_CLIENT]
        return ids[-1] if ids else 0
    return cluster.call(last, cluster.core)


def _stalled(cluster: MockCluster, seen: list[int]):
    """True once the handled count has stayed put over a few polls."""
    seen.append(_handled(cluster))
    time.sleep(0.2)  # polling interval of the wait
    return len(seen) >= 5 and len(set(seen[-5:])) == 1


def _fetch_frame(correlation_id: int) -> bytes:
    cls = wire.request_class(FETCH)
    body = cls(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_epoch=-1, topics=[
        cls.FetchTopic(topic="big", partitions=[cls.FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    return wire.encode_request(FETCH, 12, correlation_id, PADDED_CLIENT, body)


def _store_a_large_record(cluster: MockCluster) -> None:
    cls = wire.request_class(PRODUCE)
    batch = records.encode_batch([(b"k", b"x" * LARGE_VALUE, [], 1)])
    body = cls(acks=-1, timeout_ms=5000, topic_data=[cls.TopicProduceData(
        name="big", partition_data=[cls.PartitionProduceData(index=0, records=batch)])])
    with _connect(cluster) as sock:
        answer = _round_trip(sock, wire.encode_request(PRODUCE, 9, 1, "writer", body))
    response = wire.decode_response(PRODUCE, 9, answer)[1]
    assert response.responses[0].partition_responses[0].error_code == 0


def test_a_client_that_never_reads_its_answers_stops_being_read():
    # every answer is a Fetch of a large record, cheap for the broker to make and big enough
    # that the buffers between the broker and the client fill after a few of them, however
    # slow a busy machine makes the broker
    frames = [_fetch_frame(i) for i in range(1, REQUESTS + 1)]
    tracemalloc.start()
    try:
        with MockCluster(topics={"big": 1}) as cluster:
            _store_a_large_record(cluster)
            host, port = cluster.bootstrap_servers.rsplit(":", 1)
            flood = socket.socket()
            # a small receive buffer (no autotuning), so few unread answers fill it
            flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            flood.connect((host, int(port)))
            before, _ = tracemalloc.get_traced_memory()

            def send_all():
                try:
                    for frame in frames:
                        flood.sendall(frame)
                except OSError:
                    pass  # closed by the test

            sender = threading.Thread(target=send_all, daemon=True)
            sender.start()
            seen: list[int] = []
            wait_for(lambda: _stalled(cluster, seen), "the broker to stop reading the flood")
            grown = tracemalloc.get_traced_memory()[0] - before
            # the broker stopped reading once its answers were not read: the rest of the
            # requests wait in the client, and the broker holds a bounded number of answers
            assert seen[-1] < REQUESTS and sender.is_alive()
            assert grown < 16 * 1024 * 1024, f"the broker grew by {grown} bytes"

            # everyone else is served meanwhile
            other = _connect(cluster)
            answer = _round_trip(other, wire.encode_request(
                API_VERSIONS, 3, 9, "other", wire.request_class(API_VERSIONS)(
                    client_software_name="t", client_software_version="1")))
            assert wire.decode_response(API_VERSIONS, 3, answer)[0] == 9
            other.close()
        # stopping the cluster closed the muted connection (reset): the sender is released
        sender.join(10)
        assert not sender.is_alive()
        flood.close()
    finally:
        tracemalloc.stop()


def test_an_answer_of_megabytes_reaches_a_slow_reader_whole_and_in_order():
    # a large answer goes straight to the socket as the buffers it is made of, and to the
    # transport a piece at a time whenever the socket is full (mockbroker.io.kafka.stream)
    with MockCluster(topics={"big": 1}) as cluster:
        for _ in range(3):
            _store_a_large_record(cluster)
        cls = wire.request_class(FETCH)
        fetch = wire.encode_request(FETCH, 12, 1, "slow", cls(
            max_wait_ms=0, min_bytes=1, max_bytes=8 << 20, session_epoch=-1, topics=[
                cls.FetchTopic(topic="big", partitions=[cls.FetchPartition(
                    partition=0, fetch_offset=0, partition_max_bytes=8 << 20)])]))
        versions = wire.encode_request(API_VERSIONS, 3, 2, "slow", wire.request_class(
            API_VERSIONS)(client_software_name="t", client_software_version="1"))
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            sock.settimeout(30)
            sock.connect((host, int(port)))
            sock.sendall(fetch + versions)  # the second is answered after the first
            answer = _read(sock, int.from_bytes(_read(sock, 4), "big"))
            after = _read(sock, int.from_bytes(_read(sock, 4), "big"))
    assert len(answer) > 100 * PIECE
    correlation_id, body = wire.decode_response(FETCH, 12, answer)
    [partition] = body.responses[0].partitions
    stored = [r for _, batch in records.split_batches(partition.records)
              for r in records.decode_records(batch)]
    assert correlation_id == 1 and partition.error_code == 0
    assert [(r.offset, r.key, r.value) for r in stored] == \
        [(i, b"k", b"x" * LARGE_VALUE) for i in range(3)]
    assert wire.decode_response(API_VERSIONS, 3, after)[0] == 2


def _api_versions(sock: socket.socket, correlation_id: int) -> None:
    answer = _round_trip(sock, wire.encode_request(
        API_VERSIONS, 3, correlation_id, "holder", wire.request_class(API_VERSIONS)(
            client_software_name="t", client_software_version="1")))
    assert wire.decode_response(API_VERSIONS, 3, answer)[0] == correlation_id


def _ended(sock: socket.socket) -> bool:
    """Whether the broker has closed this connection (it reads as ended, or reset)."""
    sock.settimeout(30)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _in_thread(call, what: str) -> None:
    """Run ``call`` on a thread and fail, rather than hang the run, if it never returns."""
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), f"{what} never returned"


def test_stopping_a_broker_and_the_cluster_ends_the_connections_clients_hold():
    # From Python 3.12.1 on, asyncio's server waits for every connection it accepted to end
    # before it reports itself closed: the listener must end them first, not wait for the
    # clients to leave (which a test's client, still open at teardown, never does).
    cluster = MockCluster(brokers=2).start()
    try:
        (host0, port0), (host1, port1) = (
            address.rsplit(":", 1) for address in cluster.bootstrap_servers.split(","))
        to_broker0 = socket.create_connection((host0, int(port0)), timeout=10)
        to_broker1 = socket.create_connection((host1, int(port1)), timeout=10)
        _api_versions(to_broker0, 1)
        _api_versions(to_broker1, 1)

        _in_thread(lambda: cluster.stop_broker(0), "stop_broker(0)")
        assert _ended(to_broker0)
        _api_versions(to_broker1, 2)  # the other broker still serves its client

        _in_thread(cluster.stop, "stop()")
        assert _ended(to_broker1)
    finally:
        cluster.stop()


def test_a_failing_timer_does_not_stop_the_loops_wake_ups():
    with MockCluster() as cluster:
        fired = []

        def schedule(core):
            def broken():
                raise RuntimeError("boom")
            core.timers.call_later(0, broken)
            core.timers.call_later(0, lambda: fired.append("same moment"))
            core.timers.call_later(50, lambda: fired.append("later"))

        cluster.call(schedule, cluster.core)
        wait_for(lambda: fired == ["same moment", "later"], "the timers due after the failure")
        assert cluster.call(lambda: cluster.core.timers.failures) == 1


def test_a_frame_that_closes_the_connection_waits_for_the_answers_before_it():
    """Found by the socket fuzzer: a JoinGroup still waiting when a later frame made the broker
    close the connection went unanswered while the answers behind it were sent.  Kafka reads a
    request only once the one before it is answered; here the earlier answers go first, in
    order, then the connection closes."""
    join = wire.request_class(11)
    join_body = join(group_id="g", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                     member_id="", protocol_type="consumer",
                     protocols=[join.JoinGroupRequestProtocol(name="range", metadata=b"")])
    frames = (wire.encode_request(11, 1, 1, "c", join_body)
              + wire.encode_request(API_VERSIONS, 3, 2, "c", wire.request_class(API_VERSIONS)(
                  client_software_name="t", client_software_version="1"))
              + b"\x00\x00\x00\x04\x7f\xff\x00\x00")  # an API the codec does not know
    with MockCluster() as cluster:
        with _connect(cluster) as sock:
            sock.sendall(frames)
            answers = []
            while True:
                size = sock.recv(4)
                if not size:
                    break
                answers.append(int.from_bytes(_read(sock, int.from_bytes(size, "big"))[:4],
                                              "big"))
    assert answers == [1, 2]


def test_a_request_arriving_behind_a_waiting_one_is_answered_after_it():
    """A request that arrives while an earlier one waits (a Fetch long-poll) is handled, but
    its answer goes out only after the earlier one's: answers keep request order."""
    fetch = wire.request_class(FETCH)
    poll = fetch(max_wait_ms=30_000, min_bytes=1, max_bytes=1 << 20, session_epoch=-1,
                 topics=[fetch.FetchTopic(topic="big", partitions=[fetch.FetchPartition(
                     partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    versions = wire.encode_request(API_VERSIONS, 3, 2, "c", wire.request_class(API_VERSIONS)(
        client_software_name="t", client_software_version="1"))

    def logged(core):
        return [(r.api_key, r.outcome) for r in core.requests if r.client_id == "c"]

    with MockCluster(topics={"big": 1}) as cluster:
        with _connect(cluster) as sock:
            sock.sendall(wire.encode_request(FETCH, 12, 1, "c", poll))
            wait_for(lambda: cluster.call(logged, cluster.core) == [(FETCH, "pending")],
                     "the Fetch to wait for records")
            sock.sendall(versions)
            wait_for(lambda: cluster.call(logged, cluster.core) == [
                (FETCH, "pending"), (API_VERSIONS, "answered")], "the ApiVersions answer")
            _store_a_large_record(cluster)  # the Fetch has its records
            answers = [int.from_bytes(_read(sock, int.from_bytes(_read(sock, 4), "big"))[:4],
                                      "big") for _ in range(2)]
    assert answers == [1, 2]


# -- TLS listeners ----------------------------------------------------------------------------

def _tls_client(cluster: MockCluster, certificate=None):
    context = ssl.create_default_context(cafile=cluster.ssl_ca_location)
    if certificate is not None:
        context.load_cert_chain(certificate.cert_location, certificate.key_location)
    host, _ = cluster.bootstrap_servers.rsplit(":", 1)
    return context.wrap_socket(_connect(cluster), server_hostname=host)


def test_a_tls_listener_answers_requests_and_the_clients_close_notify():
    with MockCluster(security_protocol="SSL") as cluster:
        tls = _tls_client(cluster)
        frame = wire.encode_request(API_VERSIONS, 3, 5, "t", wire.request_class(API_VERSIONS)(
            client_software_name="t", client_software_version="1"))
        correlation, body = wire.decode_response(API_VERSIONS, 3, _round_trip(tls, frame))
        assert correlation == 5 and body.error_code == 0
        tls.unwrap()  # returns once the broker's close_notify has come back
        # the broker goes on serving others
        other = _tls_client(cluster)
        assert wire.decode_response(API_VERSIONS, 3, _round_trip(other, frame))[0] == 5
        other.close()


def test_a_client_refused_by_the_tls_handshake_is_told_why():
    with MockCluster(security_protocol="SSL", ssl_client_auth="required") as cluster:
        tls = _tls_client(cluster)  # TLS 1.3: the client's side of the handshake completes
        with pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"):
            tls.recv(1)  # the broker's alert, rather than a bare end of stream
        tls.close()
        allowed = _tls_client(cluster, cluster.client_certificate("CN=app"))
        frame = wire.encode_request(API_VERSIONS, 0, 9, "t", wire.request_class(API_VERSIONS)())
        assert wire.decode_response(API_VERSIONS, 0, _round_trip(allowed, frame))[0] == 9
        allowed.close()


#: more clients connecting at once than asyncio's own default backlog (100) holds
CONNECTING_AT_ONCE = 300


def test_clients_connecting_while_the_loop_is_busy_wait_in_the_backlog_and_are_answered():
    """Many clients connect while the broker's loop is busy (here: blocked outright): every
    connection completes in the listener's backlog (``socket.listen.backlog.size``, which the
    mock sets as Go's kfake has it rather than Kafka's 50), none waits for a SYN retry, and
    once the loop runs again each gets its ApiVersions answer."""
    with MockCluster() as cluster:
        host, port = cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
        busy, free = threading.Event(), threading.Event()

        def block() -> None:
            busy.set()
            free.wait(60)

        blocker = threading.Thread(target=cluster.call, args=(block,), daemon=True)
        blocker.start()
        assert busy.wait(30), "the broker's loop never ran the blocking call"
        socks = []
        try:
            for _ in range(CONNECTING_AT_ONCE):
                sock = socket.socket()
                sock.setblocking(False)
                socks.append(sock)
                sock.connect_ex((host, int(port)))

            def connected() -> bool:
                # a connect completes (its socket becomes writable) once the kernel has queued it
                _, writable, _ = select.select([], socks, [], 0.1)
                return len(writable) == len(socks)

            wait_for(connected, f"{CONNECTING_AT_ONCE} connects to complete while the loop "
                                "is blocked")
            assert [s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) for s in socks] \
                == [0] * len(socks)
        finally:
            free.set()
            blocker.join(30)
        try:
            body = wire.request_class(API_VERSIONS)()
            for i, sock in enumerate(socks):
                sock.setblocking(True)
                sock.settimeout(30)
                sock.sendall(wire.encode_request(API_VERSIONS, 0, i, "early", body))
            for i, sock in enumerate(socks):
                size = int.from_bytes(_read(sock, 4), "big")
                correlation_id, response = wire.decode_response(API_VERSIONS, 0,
                                                                _read(sock, size))
                assert (correlation_id, response.error_code) == (i, 0)
                assert any(a.api_key == API_VERSIONS for a in response.api_keys)
        finally:
            for sock in socks:
                sock.close()
