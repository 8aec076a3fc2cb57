"""Fuzzing over real sockets, briefly: mutated and random frames of every served (API,
version) on many connections to an in-process cluster, with a stock producer and consumer
beside them.

The broker must answer every decodable request (or close only that connection, saying why),
log no request as "failed" (a handler that raised, a response that would not encode), not keep
growing, and serve the stock clients throughout.  ``bench/fuzz.py`` is the long run.
"""

from __future__ import annotations

import gc
import logging
import threading
import tracemalloc

import confluent_kafka as ck
import pytest

from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.fuzz import driver
from tests.fuzz.frames import CASES, TOPICS, FrameMaker

#: frames per phase (three phases), kept to a few seconds in all
FRAMES = 600
RECORDS = 200


def _failed(cluster: MockCluster) -> list:
    return cluster.call(lambda core: [(r.api_key, r.api_version, r.correlation_id, r.client_id)
                                      for r in core.requests if r.outcome == "failed"],
                        cluster.core)


class _StockClients:
    """A confluent-kafka producer and consumer on a topic and group the fuzzer never names."""

    def __init__(self, cluster: MockCluster):
        self.bootstrap = cluster.bootstrap_servers
        self.received: list[bytes] = []
        self.errors: list = []
        self._stop = threading.Event()
        self._consumer = threading.Thread(target=self._consume, daemon=True)

    def start(self) -> None:
        self._consumer.start()

    def produce(self, start: int, count: int) -> None:
        producer = ck.Producer({"bootstrap.servers": self.bootstrap, "acks": "all",
                                "enable.idempotence": True, "logger": RDKAFKA_LOG})
        for i in range(start, start + count):
            producer.produce("clients", key=str(i).encode(), value=b"r%d" % i,
                             on_delivery=lambda err, msg: err and self.errors.append(err))
            producer.poll(0)
        assert producer.flush(30) == 0, "the stock producer could not deliver"

    def _consume(self) -> None:
        consumer = ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": "clients-g",
                                "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG})
        consumer.subscribe(["clients"])
        try:
            while not self._stop.is_set():
                msg = consumer.poll(0.1)
                if msg is not None and not msg.error():
                    self.received.append(msg.value())
        finally:
            consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self._consumer.join(30)


def test_frames_cover_every_served_api_and_version():
    maker = FrameMaker(0, mutate=0.0, byte_rate=0.0)
    served = {(s.api_key, s.api_version) for s in (maker.sample() for _ in range(6000))}
    assert served == set(CASES)


def test_fuzzed_frames_over_sockets_leave_the_broker_serving(caplog):
    caplog.set_level(logging.ERROR, logger="mockbroker")
    tracemalloc.start()
    try:
        with MockCluster(topics={**{t: 3 for t in TOPICS}, "clients": 3}) as cluster:
            clients = _StockClients(cluster)
            clients.start()
            traced, reports = [], []
            for phase in range(3):
                clients.produce(phase * RECORDS, RECORDS)
                reports.append(driver.run(cluster.bootstrap_servers, seed=phase,
                                          frames=FRAMES, connections=12, deadline_s=30))
                gc.collect()
                traced.append(tracemalloc.get_traced_memory()[0])
            wait_for(lambda: len(set(clients.received)) >= 3 * RECORDS,
                     "the stock consumer to read every record")
            clients.stop()
            failed = _failed(cluster)
    finally:
        tracemalloc.stop()
    for report in reports:
        assert report.sent == FRAMES
        assert not report.problems, report.summary()
        # most frames reach a handler and are answered
        assert report.answered > FRAMES // 2, report.summary()
    assert not failed, f"requests the broker failed to handle: {failed}"
    assert "failed to" not in caplog.text
    assert not clients.errors
    assert sorted(set(clients.received)) == sorted(b"r%d" % i for i in range(3 * RECORDS))
    # the broker does not keep what the fuzzer sent: the last phase grows it by far less than
    # the first (which made the topics, groups and fetch sessions a long run reuses)
    first, last = traced[0], traced[2] - traced[1]
    assert last < max(first // 2, 4 << 20), (traced, [r.summary() for r in reports])


@pytest.mark.parametrize("seed", [11])
def test_byte_mutations_close_only_their_own_connection(seed):
    with MockCluster(topics={t: 1 for t in TOPICS}) as cluster:
        report = driver.run(cluster.bootstrap_servers, seed=seed, frames=300, connections=6,
                            deadline_s=30, mutate=0.0, byte_rate=1.0)
        assert not report.problems, report.summary()
        assert report.closed["bytes"] > 0
        assert not _failed(cluster)
        # the broker is still there for a plain client
        producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                                "logger": RDKAFKA_LOG})
        producer.produce(TOPICS[0], b"after the mutations")
        assert producer.flush(30) == 0
        consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                                "group.id": "after", "auto.offset.reset": "earliest",
                                "logger": RDKAFKA_LOG})
        try:
            consumer.subscribe([TOPICS[0]])
            seen = []
            wait_for(lambda: seen.extend(m.value() for m in [consumer.poll(0.2)]
                                         if m and not m.error()) or
                     b"after the mutations" in seen, "the record produced after the mutations")
        finally:
            consumer.close()
