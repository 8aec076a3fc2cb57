"""``mockbroker serve`` in its own process, for the benches: a broker that shares no interpreter
(and no GIL) with the clients measuring it; and a fresh topic on any broker (``make_topic``).

    with served(brokers=3) as broker:
        broker.bootstrap, broker.admin, broker.pid
"""

from __future__ import annotations

import contextlib
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Iterator

READY = "mockbroker ready "


@dataclass(frozen=True)
class ServedBroker:
    bootstrap: str
    admin: str
    pid: int
    #: every field of the ready line (listeners=, ca=, token= when present)
    ready: dict[str, str] = field(default_factory=dict)


def ready_fields(line: str) -> dict[str, str]:
    """The fields of ``serve``'s ready line (bootstrap=, admin=, and any others)."""
    if not line.startswith(READY):
        raise RuntimeError(f"mockbroker serve did not start: {line!r}")
    return dict(part.split("=", 1) for part in line[len(READY):].split())


def serve_argv(*flags: str, brokers: int = 1) -> list[str]:
    """The command ``served`` runs: ``mockbroker serve`` on ephemeral ports, with this
    interpreter (so the broker imports the same mockbroker as the bench)."""
    return [sys.executable, "-m", "mockbroker.cli", "serve", "--brokers", str(brokers),
            "--port", "0", "--http-port", "0", *flags]


@contextlib.contextmanager
def served(*flags: str, brokers: int = 1) -> Iterator[ServedBroker]:
    """A cluster of ``brokers`` on ephemeral ports, with any other ``serve`` flags; stopped with
    SIGTERM (killed if it does not stop in 10 s)."""
    proc = subprocess.Popen(serve_argv(*flags, brokers=brokers),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        try:
            fields = ready_fields(proc.stdout.readline())
        except RuntimeError as exc:
            raise SystemExit(f"{exc} (exit {proc.poll()})") from None
        yield ServedBroker(fields["bootstrap"], fields["admin"], proc.pid, fields)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def make_topic(bootstrap: str, partitions: int, prefix: str = "bench") -> tuple[str, int]:
    """A fresh topic with ``partitions`` partitions, or with the broker's default count where it
    refuses CreateTopics but creates topics on first use; returns (name, partition count) once
    every partition has a leader."""
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=10)[name].result(15)
    except Exception:
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
        producer.produce(name, b"create")
        producer.flush(15)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # wait until every partition has a leader
        topic = admin.list_topics(name, timeout=5).topics.get(name)
        if topic is not None and topic.error is None and topic.partitions \
                and all(p.leader >= 0 for p in topic.partitions.values()):
            return name, len(topic.partitions)
        time.sleep(0.05)
    raise RuntimeError(f"topic {name} did not get leaders for its partitions")


def produce_all(producer, topic: str, payload: bytes, n: int,
                partitions: int | None = 1) -> None:
    """Hand ``n`` records of ``payload`` to a confluent-kafka ``producer``, to partitions 0,
    1, ... ``partitions - 1`` in turn (None: wherever its partitioner puts them), serving its
    callbacks whenever its queue is full (not flushed)."""
    for i in range(n):
        while True:
            try:
                if partitions is None:
                    producer.produce(topic, payload)
                else:
                    producer.produce(topic, payload, partition=i % partitions)
                break
            except BufferError:  # its queue is full: let it send
                producer.poll(0.005)


def read_frame(sock: socket.socket) -> bytes:
    """One response frame from a broker's socket, without its size prefix."""
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    (size,) = struct.unpack(">i", head)
    data = bytearray(size)
    view, got = memoryview(data), 0
    while got < size:
        n = sock.recv_into(view[got:])
        if not n:
            raise ConnectionError("closed")
        got += n
    return bytes(data)
