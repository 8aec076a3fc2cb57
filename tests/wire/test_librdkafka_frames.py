"""Real frames from librdkafka (through confluent-kafka) decode cleanly in our codec.

A small recording socket answers ApiVersions with every version Kafka defines, so the client
goes on to send what it sends a real broker first (Metadata, FindCoordinator, ...); every frame
it sends must decode with no bytes left over and re-encode to the same bytes.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

import confluent_kafka
import pytest

import wire
from wire.definitions import APIS


class RecordingBroker:
    """Accepts connections, records every request frame, answers only ApiVersions."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.frames: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        buf = b""
        with conn:
            while not self._stop.is_set():
                try:
                    chunk = conn.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while len(buf) >= 4:
                    (size,) = struct.unpack_from(">i", buf)
                    if len(buf) < 4 + size:
                        break
                    frame, buf = buf[4:4 + size], buf[4 + size:]
                    self.frames.append(frame)
                    api_key, version, correlation_id = wire.peek_header(frame)
                    if api_key == 18:
                        conn.sendall(self._api_versions(version, correlation_id))

    @staticmethod
    def _api_versions(version: int, correlation_id: int) -> bytes:
        cls = wire.response_class(18)
        version = min(version, 4)
        body = cls(error_code=0, api_keys=[
            cls.ApiVersion(api_key=key, min_version=spec.min_version,
                           max_version=spec.max_version) for key, spec in sorted(APIS.items())])
        return wire.encode_response(18, version, correlation_id, body)

    def close(self) -> None:
        self._stop.set()
        self.sock.close()


@pytest.fixture
def recorder():
    broker = RecordingBroker()
    yield broker
    broker.close()


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.05)


def _check_frames(frames: list[bytes]) -> set[tuple[str, int]]:
    seen = set()
    for frame in frames:
        request = wire.decode_request(frame)
        header = request.header
        again = wire.encode_request(header.api_key, header.api_version, header.correlation_id,
                                    header.client_id, request.body, size_prefix=False)
        # librdkafka's all-topics Metadata carries 3 bytes past the body; Kafka ignores them
        assert request.trailing_bytes in (0, 3)
        assert again == frame[:len(frame) - request.trailing_bytes], (header, request.body)
        seen.add((wire.API_NAMES[header.api_key], header.api_version))
    return seen


def test_producer_frames(recorder):
    producer = confluent_kafka.Producer({
        "bootstrap.servers": f"127.0.0.1:{recorder.port}", "client.id": "frames-producer",
        "enable.idempotence": True, "socket.timeout.ms": 2000, "log_level": 0})
    producer.produce("orders", key=b"k", value=b"v")
    _wait_for(lambda: {wire.peek_header(f)[0] for f in recorder.frames} >= {18, 3})
    producer.purge()
    seen = _check_frames(list(recorder.frames))
    names = {name for name, _ in seen}
    assert "ApiVersions" in names and "Metadata" in names
    api_versions = [frame for frame in recorder.frames if wire.peek_header(frame)[0] == 18]
    first = wire.decode_request(api_versions[0])
    assert first.header.api_version >= 3
    assert first.header.client_id == "frames-producer"
    assert first.body.client_software_name == "confluent-kafka-python"


def test_consumer_frames(recorder):
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": f"127.0.0.1:{recorder.port}", "group.id": "frames-group",
        "client.id": "frames-consumer", "socket.timeout.ms": 2000, "log_level": 0})
    consumer.subscribe(["orders"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        consumer.poll(0.1)
        if {wire.peek_header(f)[0] for f in recorder.frames} >= {18, 3, 10}:
            break
    consumer.close()
    seen = _check_frames(list(recorder.frames))
    names = {name for name, _ in seen}
    assert {"ApiVersions", "Metadata", "FindCoordinator"} <= names
    find = [wire.decode_request(f) for f in recorder.frames if wire.peek_header(f)[0] == 10]
    body = find[0].body
    keys = body.coordinator_keys or [body.key]
    assert "frames-group" in keys


def test_admin_all_topics_metadata_has_trailing_bytes_that_kafka_ignores(recorder):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{recorder.port}", "log_level": 0})
    with pytest.raises(confluent_kafka.KafkaException):
        admin.list_topics(timeout=2)  # the recorder never answers Metadata
    metadata = [wire.decode_request(f) for f in recorder.frames if wire.peek_header(f)[0] == 3]
    all_topics = [r for r in metadata if r.body.topics is None]
    assert all_topics and all(r.trailing_bytes == 3 for r in all_topics)
    _check_frames(list(recorder.frames))
