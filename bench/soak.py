"""A fault soak: idempotent producers and a mixed consumer group under random faults.

Two idempotent producers (kafka-python and confluent-kafka, acks=all) write numbered records to
a topic of a three-broker cluster while a group of two consumers (one of each library, manual
commits after each poll) reads it, and random control rules are added over HTTP: retriable
errors on Produce and Fetch, disconnects, delays, a broker stopped and started, partition
leaders and the group coordinator moved.  Then the faults stop, the producers flush, and the
consumers read until every acknowledged record has been seen.

What is checked (Kafka's guarantees for idempotent producers and an at-least-once consumer):

* every acknowledged record is in the log, consumed, at the offset it was acknowledged with;
* the log holds each record once (no duplicate write), and a producer's records of one
  partition are in the order it sent them;
* each consumer reads each partition in offset order, without gaps, from where its
  assignment starts;
* a record is consumed again only if it is at or after the partition's committed offset at
  that moment: the commit is the at-least-once promise, so re-reading anything below the last
  successful commit (of any member) is a violation;
* the committed offset of a partition never goes backwards.

    .venv/bin/python bench/soak.py [--seconds 180] [--seed 1]

The broker runs in its own process (``mockbroker serve --brokers 3``);
``tests/clients/test_soak.py`` runs a short, seeded soak against an in-process cluster.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import confluent_kafka as ck
from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata

from mockbroker.admin import AdminClient, AdminError

# the benches run as scripts: make the repository importable for their shared helper
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.served import served  # noqa: E402

TOPIC = "soak"
GROUP = "soak-group"
PARTITIONS = 4
BROKERS = 3
QUIET = logging.getLogger("soak.clients")
QUIET.setLevel(logging.CRITICAL)


@dataclass
class Report:
    acked: int = 0
    produce_failures: int = 0
    consumed: int = 0
    duplicates: int = 0
    commits: int = 0
    failed_commits: int = 0
    rules_added: int = 0
    rules_fired: int = 0
    rules_by_kind: dict = field(default_factory=dict)
    violations: list = field(default_factory=list)

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.rules_by_kind.items()))
        return (f"acked {self.acked} (failed sends {self.produce_failures}), consumed "
                f"{self.consumed}, duplicates {self.duplicates}, commits {self.commits} "
                f"(failed {self.failed_commits}), rules added {self.rules_added} "
                f"(fired {self.rules_fired}: {kinds}), violations {len(self.violations)}")


class Journal:
    """Everything the clients saw, in one order (a global sequence under a lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seq = itertools.count()
        #: (partition, offset) -> value acknowledged, and per producer its sends in order
        self.acked: dict[tuple[int, int], bytes] = {}
        self.failed = 0
        #: (seq, kind, consumer, data): kind "rec" (partition, offset, value),
        #: "commit" {partition: offset}, "assign" [partitions]
        self.events: list[tuple[int, str, str, object]] = []

    def ack(self, partition: int, offset: int, value: bytes) -> None:
        with self.lock:
            self.acked[(partition, offset)] = value

    def event(self, kind: str, consumer: str, data) -> None:
        with self.lock:
            self.events.append((next(self.seq), kind, consumer, data))

    def consumed_keys(self) -> set[tuple[int, int]]:
        with self.lock:
            return {(d[0], d[1]) for _, k, _, d in self.events if k == "rec"}


# -- producers ---------------------------------------------------------------------------------

def _value(source: str, n: int) -> bytes:
    return f"{source}:{n:08d}".encode()


#: records each producer sends between 10 ms pauses (bounds the load on a shared machine)
PACE = {"records": 50}


def run_kafka_python_producer(bootstrap: str, journal: Journal, stop: threading.Event) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
                             linger_ms=5, request_timeout_ms=10000, retry_backoff_ms=50,
                             client_id="soak-kp-producer")
    try:
        for n in itertools.count():
            if stop.is_set():
                break
            value = _value("kp", n)
            future = producer.send(TOPIC, key=b"kp%d" % (n % 16), value=value)
            future.add_callback(lambda md, v=value: journal.ack(md.partition, md.offset, v))
            future.add_errback(lambda exc: _count_failure(journal))
            if n % PACE["records"] == PACE["records"] - 1:
                time.sleep(0.01)
        producer.flush(60)
    finally:
        producer.close(10)


def _count_failure(journal: Journal) -> None:
    with journal.lock:
        journal.failed += 1


def run_confluent_producer(bootstrap: str, journal: Journal, stop: threading.Event) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                            "acks": "all", "linger.ms": 5, "client.id": "soak-ck-producer",
                            "logger": QUIET})

    def delivered(err, msg):
        if err is None:
            journal.ack(msg.partition(), msg.offset(), msg.value())
        else:
            _count_failure(journal)

    for n in itertools.count():
        if stop.is_set():
            break
        while True:
            try:
                producer.produce(TOPIC, key=b"ck%d" % (n % 16), value=_value("ck", n),
                                 on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
        if n % PACE["records"] == PACE["records"] - 1:
            time.sleep(0.01)
    producer.flush(60)


# -- consumers ---------------------------------------------------------------------------------

def run_kafka_python_consumer(bootstrap: str, journal: Journal, stop: threading.Event) -> None:
    name = "kp"

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            pass

        def on_partitions_assigned(self, assigned):
            journal.event("assign", name, sorted(tp.partition for tp in assigned))

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP,
                             client_id="soak-kp-consumer", enable_auto_commit=False,
                             auto_offset_reset="earliest", session_timeout_ms=10000,
                             heartbeat_interval_ms=1000, request_timeout_ms=15000)
    consumer.subscribe([TOPIC], listener=Listener())
    # kafka-python 3.0.12 must know the topic's partitions before it joins, or it may lose its
    # own rejoin and never take partitions (see tests/clients/test_groups.py)
    consumer.partitions_for_topic(TOPIC)
    try:
        while not stop.is_set():
            batches = consumer.poll(200)
            offsets = {}
            for tp, msgs in batches.items():
                for m in msgs:
                    journal.event("rec", name, (tp.partition, m.offset, m.value))
                offsets[tp] = OffsetAndMetadata(msgs[-1].offset + 1, "", -1)
            if offsets:
                try:
                    consumer.commit(offsets)
                    journal.event("commit", name, {tp.partition: o.offset
                                                   for tp, o in offsets.items()})
                except Exception:  # noqa: BLE001 - a failed commit promises nothing
                    journal.event("commit_failed", name, None)
    finally:
        consumer.close(autocommit=False)


def run_confluent_consumer(bootstrap: str, journal: Journal, stop: threading.Event) -> None:
    name = "ck"
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                            "client.id": "soak-ck-consumer", "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                            "heartbeat.interval.ms": 1000, "logger": QUIET})

    def assigned(c, partitions):
        journal.event("assign", name, sorted(p.partition for p in partitions))

    consumer.subscribe([TOPIC], on_assign=assigned)
    try:
        while not stop.is_set():
            msgs = consumer.consume(500, 0.2)
            offsets = {}
            for m in msgs:
                if m.error():
                    continue
                journal.event("rec", name, (m.partition(), m.offset(), m.value()))
                offsets[m.partition()] = m.offset() + 1
            if offsets:
                try:
                    done = consumer.commit(offsets=[ck.TopicPartition(TOPIC, p, o)
                                                    for p, o in offsets.items()],
                                           asynchronous=False)
                    if any(tp.error for tp in done):
                        raise ck.KafkaException(done[0].error)
                    journal.event("commit", name, offsets)
                except ck.KafkaException:
                    journal.event("commit_failed", name, None)
    finally:
        consumer.close()


# -- faults ------------------------------------------------------------------------------------

class Chaos:
    """Adds a random control rule every so often; at most one broker is down at a time."""

    def __init__(self, admin: AdminClient, rng: random.Random, report: Report):
        self.admin = admin
        self.rng = rng
        self.report = report
        self.stopped: int | None = None
        self.ids: list[int] = []

    def _add(self, kind: str, api, **spec) -> None:
        try:
            fault = self.admin.add_fault(api, **spec)
        except AdminError:
            return
        self.ids.append(fault.id)
        self.report.rules_added += 1
        self.report.rules_by_kind[kind] = self.report.rules_by_kind.get(kind, 0) + 1

    def step(self) -> None:
        rng = self.rng
        live = [b for b in range(BROKERS) if b != self.stopped]
        kind = rng.choice(["produce_error", "fetch_error", "disconnect", "delay", "broker",
                           "leader", "coordinator"])
        if kind == "produce_error":
            self._add(kind, "Produce", error=rng.choice(
                ["NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS"]),
                count=rng.randint(1, 3), topic=TOPIC)
        elif kind == "fetch_error":
            self._add(kind, "Fetch", error=rng.choice(
                ["NOT_LEADER_OR_FOLLOWER", "UNKNOWN_LEADER_EPOCH"]),
                count=rng.randint(1, 3), topic=TOPIC)
        elif kind == "disconnect":
            self._add(kind, rng.choice(["Produce", "Fetch", "Heartbeat", "OffsetCommit",
                                        None]), action="disconnect", count=1)
        elif kind == "delay":
            self._add(kind, rng.choice(["Produce", "Fetch", "OffsetCommit", "JoinGroup"]),
                      action="delay", delay_ms=rng.randint(50, 500),
                      count=rng.randint(1, 5))
        elif kind == "broker":
            if self.stopped is None:
                target = rng.choice(live)
                self._add("broker_stop", None, action="stop_broker", target_broker=target)
                self.stopped = target
            else:
                self._add("broker_start", None, action="start_broker",
                          target_broker=self.stopped)
                self.stopped = None
        elif kind == "leader":
            self._add(kind, None, action="move_leader", target_topic=TOPIC,
                      target_partition=rng.randrange(PARTITIONS),
                      target_broker=rng.choice(live))
        else:
            self._add(kind, None, action="move_coordinator", target_group=GROUP,
                      target_broker=rng.choice(live))

    def finish(self) -> None:
        """Remove what has not fired, and bring every broker back."""
        pending = {f.id for f in self.admin.faults()}
        self.report.rules_fired = sum(1 for i in self.ids if i not in pending)
        self.admin.clear_faults()
        for broker in self.admin.brokers():
            if broker.state == "down":
                self.admin.start_broker(broker.id)
        self.stopped = None


# -- the run and its checks --------------------------------------------------------------------

def soak(bootstrap: str, admin: AdminClient, seconds: float, seed: int, *,
         catch_up_s: float = 120, interval: tuple[float, float] = (0.3, 1.0),
         pace: int = 50) -> Report:
    PACE["records"] = pace
    report = Report()
    journal = Journal()
    admin.create_topic(TOPIC, PARTITIONS, replication_factor=BROKERS)
    produce_stop, consume_stop = threading.Event(), threading.Event()
    threads = [threading.Thread(target=fn, args=(bootstrap, journal, consume_stop), daemon=True)
               for fn in (run_kafka_python_consumer, run_confluent_consumer)]
    threads += [threading.Thread(target=fn, args=(bootstrap, journal, produce_stop),
                                 daemon=True)
                for fn in (run_kafka_python_producer, run_confluent_producer)]
    for t in threads:
        t.start()
    chaos = Chaos(admin, random.Random(seed), report)
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            chaos.step()
            time.sleep(chaos.rng.uniform(*interval))
    finally:
        chaos.finish()
        produce_stop.set()
        for t in threads[2:]:
            t.join(90)
    deadline = time.monotonic() + catch_up_s
    while time.monotonic() < deadline:
        with journal.lock:
            wanted = set(journal.acked)
        if wanted <= journal.consumed_keys():
            break
        time.sleep(0.2)
    consume_stop.set()
    for t in threads[:2]:
        t.join(60)
    check(journal, report, admin)
    return report


def check(journal: Journal, report: Report, admin: AdminClient) -> None:
    v = report.violations
    acked = journal.acked
    report.acked = len(acked)
    report.produce_failures = journal.failed
    events = sorted(journal.events, key=lambda e: e[0])
    seen: dict[tuple[int, int], bytes] = {}
    committed: dict[int, int] = {}
    last: dict[tuple[str, int], int] = {}  # (consumer, partition) -> last offset read
    for _, kind, consumer, data in events:
        if kind == "assign":
            for p in data:
                last.pop((consumer, p), None)
        elif kind == "commit":
            report.commits += 1
            for p, offset in data.items():
                if offset < committed.get(p, 0):
                    v.append(f"partition {p}: commit went back from {committed[p]} to "
                             f"{offset} ({consumer})")
                committed[p] = max(committed.get(p, 0), offset)
        elif kind == "commit_failed":
            report.failed_commits += 1
        else:
            p, offset, value = data
            report.consumed += 1
            previous = last.get((consumer, p))
            if previous is not None and offset != previous + 1:
                v.append(f"partition {p}: {consumer} read {offset} after {previous}")
            last[(consumer, p)] = offset
            if (p, offset) in seen:
                report.duplicates += 1
                if seen[(p, offset)] != value:
                    v.append(f"partition {p} offset {offset}: two different records")
                if offset < committed.get(p, 0):
                    v.append(f"partition {p}: offset {offset} read again by {consumer} below "
                             f"the committed offset {committed[p]}")
            seen[(p, offset)] = value
    for key, value in acked.items():
        if seen.get(key) != value:
            v.append(f"acknowledged {value!r} at {key} consumed as {seen.get(key)!r}")
    by_value: dict[bytes, tuple[int, int]] = {}
    for key, value in seen.items():
        if value in by_value:
            v.append(f"{value!r} written twice: at {by_value[value]} and {key}")
        by_value[value] = key
    # a producer's records of one partition in the order it sent them
    order: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for (p, offset), value in seen.items():
        source, n = value.decode().split(":")
        order.setdefault((source, p), []).append((offset, int(n)))
    for (source, p), pairs in order.items():
        numbers = [n for _, n in sorted(pairs)]
        if numbers != sorted(numbers):
            v.append(f"partition {p}: {source}'s records out of send order")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    with served(brokers=BROKERS) as broker:
        bootstrap, admin_url = broker.bootstrap, broker.admin
        started = time.monotonic()
        report = soak(bootstrap, AdminClient(admin_url), args.seconds, args.seed)
        took = time.monotonic() - started
    print(f"soak: {args.seconds:.0f} s of faults (seed {args.seed}), {took:.0f} s in all")
    print(report.summary())
    for line in report.violations[:20]:
        print("VIOLATION", line)
    sys.exit(1 if report.violations else 0)


if __name__ == "__main__":
    main()
