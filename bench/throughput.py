"""Data-path speed and cost of mockbroker, against any other Kafka measured in the same run.

mockbroker runs as ``mockbroker serve`` in its own process (``bench.served``); the other target
is a bootstrap given with ``--compare HOST:PORT``.  Workloads (``--only`` picks some):

- ``produce``: confluent-kafka (acks=all, idempotent, linger 5 ms), kafka-python (the same
  settings) and Kafka's Java ``ProducerPerformance`` (acks=all, ``--throughput -1``), records of
  100 B and 10 KiB, to fresh topics of 1 and 12 partitions: msg/s, MB/s, and the broker's CPU
  seconds per million records; for the clients that run in the bench's own process
  (confluent-kafka, kafka-python), their CPU seconds per million records too, which shows when
  a difference in msg/s is the client's.  Each round runs confluent-kafka and the Java producer
  ``--produce-passes`` times (three by default), each time into a fresh topic, and each run is
  a sample: a run of 500,000 records of 100 B takes confluent-kafka under half a second.
  When the round also reads, their runs write as many records as a read topic holds
  (``--read-mb``, see ``consume``).
  kafka-python runs once a round: its runs take many seconds each.
- ``consume``: a topic read back by confluent-kafka (partitions assigned, no group,
  ``fetch.wait.max.ms`` 10) and by Kafka's Java ``ConsumerPerformance`` (its fetch rate, which
  leaves out the group join): the same figures.  Both targets hold the same batches of it:
  the Java reader reads the round's last produce run (the Java producer sends each batch once
  ``batch.size`` fills, so the two targets' logs match batch for batch), and confluent-kafka a
  topic written off the clock whose batches close the same way (see ``confluent_write``).
  Each round reads the topic ``--consume-passes`` times (three by default), each time with a
  fresh client from the first offset, and each read is a sample: a read is short (500 MB takes
  confluent-kafka under half a second), and twelve reads of one topic on one Kafka ranged from
  123k to 177k msg/s.  A topic that is read holds ``--read-mb`` at least (200 MB by default:
  2,000,000 records of 100 B), more than ``--messages`` asks if need be: a read of 500,000
  records of 100 B lasts about half a second, much of it a new JVM compiling its fetch path,
  and such reads scattered by a third from one to the next on either target.
- ``roundtrip``: one record at a time produced and acknowledged (confluent-kafka, acks=all,
  linger 0): p50 and p99 in ms, and the broker's CPU per round trip in µs.
- ``startup``: spawn of ``mockbroker serve --port 0`` to its ready line, to the answer to an
  ApiVersions request sent right after it, and to the answer to ``GET /health`` sent after
  that; medians of several (mockbroker only: the other target is given already running).
  Beside each start the floor is timed, this interpreter running ``import asyncio``, and the
  ready line's ratio to it printed; and a start from a copy of the sources without
  byte-compiled files under ``PYTHONDONTWRITEBYTECODE`` (an install that wrote none).
- ``rss``: the broker's resident memory before and after producing ``--rss-records`` records
  of 100 B, per record; it runs first, before other workloads free memory that would be
  reused (and a JVM's heap, once touched, shows no growth at all).
- ``metadata``: 100 topics x 100 partitions created through CreateTopics on each target (the
  seconds it took are printed once), then a full Metadata request (v12, every topic) over a raw
  socket with the project's ``wire`` codec, the median of 10 per round; client-side parsing is
  left out, so this times the broker.  It runs last and leaves the topics deleted.

Broker CPU and memory come from the serving process's own counters (``/proc/PID/stat`` and
``status``): mockbroker's pid is known; the other broker's is the process listening on the
bootstrap port (found with ``ss``) or ``--compare-pid``; without one those figures are n/a.
They count in clock ticks (10 ms), so a run of 50,000 records resolves 0.2 s per million.

Before the measured rounds, ``--warmup`` passes (one by default) run every client's produce
and consume of 100 B and 10 KiB records on each target, and are not counted: a JVM broker
compiles its data path during its first minute or so of load, and without them its first rounds
would time the compiler (a cold Kafka's Java produce ran at about half its warm rate).
``--warmup 0`` leaves them out.

Every run alternates between the targets: a round's first produce run on one, then on the
other, then its second on each, and so on, and the same for its reads; which target goes first
swaps from one run to the next (mockbroker, other; other, mockbroker; ...), and the round-trip
and memory rounds alternate the same way.  Spells in which the machine or a client runs slow
last seconds (a confluent-kafka read of 500,000 records once took 0.55 s of its own CPU
instead of 0.37, for several reads in a row, with neither broker busy): taking the targets
turn about puts such a spell on both, and whatever one target leaves running after its run
(a JVM's collector, files being written back) does not always fall on the same neighbour.
The medians are printed, and for each figure the ratio mockbroker / other with the direction
that is better, beside the lowest and highest ratio of single runs (run i of one target over
run i of the other): how far they scatter, so that a ratio within the noise reads as such.
Another process using the CPU during a run skews both targets, but not evenly: compare runs on
an idle machine.  Without ``--compare`` only mockbroker is measured.

    .venv/bin/python bench/throughput.py [--compare HOST:PORT [--compare-pid PID]]
        [--only produce,consume,roundtrip,startup,rss,metadata] [--clients confluent,java]
        [--messages 50000] [--read-mb 200] [--rounds 3] [--produce-passes 3]
        [--consume-passes 3] [--warmup 1] [--roundtrips 1000] [--rss-records 100000]
        [--fetch-delay-ms 0]

``--fetch-delay-ms N`` holds back every Fetch answer of the bench's own mockbroker for N ms
(a fault added through its HTTP API, ``POST /faults``): measured against a second, plain
``mockbroker serve`` given as ``--compare``, it shows which reads a slower broker would slow
down and which the reader alone paces, whatever the broker does.

Java workloads need Kafka's tools jars (``kafka-tools``, ``kafka-clients`` and their
dependencies) on ``--java-classpath``, by default ``.cache/jars/kafka-tools/*`` as
``ci/dev.sh test`` sets it up; without them (or without ``java``) they are skipped.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer

# the benches run as scripts: make the repository importable for their shared helpers
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import wire  # noqa: E402
from mockbroker.admin import AdminClient as MockbrokerAdmin  # noqa: E402
from bench.procstat import cpu_seconds, listening_pid, rss_bytes  # noqa: E402
from bench.served import (make_topic, produce_all, read_frame, ready_fields,  # noqa: E402
                          serve_argv, served)

WORKLOADS = ("produce", "consume", "roundtrip", "startup", "rss", "metadata")
CLIENTS = ("confluent", "kafka-python", "java")
#: the clients that also read back what they produced (kafka-python only produces)
READERS = ("confluent", "java")
SIZES = (100, 10240)
PARTITIONS = (1, 12)
META_TOPICS, META_PARTITIONS = 100, 100
MB = 1e6  # MB/s as Kafka's tools print it would be MiB; we print decimal megabytes

#: figure -> True when higher is better, None when it is the client's and neither is
HIGHER_BETTER = {"msg/s": True, "MB/s": True, "CPU s/M rec": False, "p50 ms": False,
                 "p99 ms": False, "CPU us/rt": False, "ready ms": False, "first answer ms": False,
                 "admin answer ms": False, "create s": False,
                 "Metadata ms": False, "RSS B/rec": False, "client CPU s/M": None}


@dataclass(frozen=True)
class Target:
    label: str
    bootstrap: str
    pid: int | None  # the serving process, for its CPU and memory counters


class Tally:
    """Every figure of every round, in the order first seen: (workload, figure) -> label ->
    values."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], dict[str, list[float]]] = {}

    def add(self, workload: str, figure: str, label: str, value: float | None) -> None:
        if value is not None:
            self.values.setdefault((workload, figure), defaultdict(list))[label].append(value)


class Timed:
    """Wall-clock seconds and this process's CPU seconds (every thread's: an in-process
    client's own work) from when it is made to :meth:`stop`."""

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.seconds = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def in_turn(targets: list[Target], turn: int) -> list[Target]:
    """The targets in the order of turn ``turn`` (a round, or a run within one): as given on
    even turns, reversed on odd ones (A, B; B, A; A, B ...)."""
    return targets if turn % 2 == 0 else targets[::-1]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class BrokerCost:
    """CPU seconds the target's broker uses between enter and exit (None when its pid is not
    known)."""

    def __init__(self, target: Target) -> None:
        self.pid, self.used = target.pid, None

    def __enter__(self) -> BrokerCost:
        self.start = cpu_seconds(self.pid) if self.pid else None
        return self

    def __exit__(self, *exc) -> None:
        if self.pid and exc[0] is None:
            self.used = cpu_seconds(self.pid) - self.start

    def per_million(self, records: int) -> float | None:
        return None if self.used is None else self.used / records * 1e6


def delete_topics(bootstrap: str, names: list[str]) -> None:
    """Delete topics once measured, so that what earlier rounds stored (in mockbroker's memory,
    on the other's disk) weighs on no later one; a broker that refuses is left as it is."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    try:
        for future in admin.delete_topics(names, operation_timeout=60,
                                          request_timeout=120).values():
            future.result(180)
    except Exception as exc:  # noqa: BLE001 - a leftover topic only costs memory
        log(f"  (could not delete {len(names)} topic(s): {exc})")


def producer_config(bootstrap: str, **extra) -> dict:
    return {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
            "linger.ms": 5, **extra}


# ---------------------------------------------------------------- produce and consume


def confluent_produce(bootstrap: str, topic: str, payload: bytes, n: int) -> Timed:
    """Handing ``n`` records to confluent-kafka until they are all acknowledged, timed."""
    failed = []
    producer = confluent_kafka.Producer(producer_config(
        bootstrap, **{"delivery.report.only.error": True,
                      "on_delivery": lambda err, msg: failed.append(err)}))
    # connected, with the topic's leaders and a producer id, off the clock
    producer.produce(topic, b"warm-up")
    producer.flush(30)
    timed = Timed()
    produce_all(producer, topic, payload, n, partitions=None)
    left = producer.flush(300)
    timed.stop()
    if left or failed:
        raise RuntimeError(f"confluent-kafka: {left} unsent, {len(failed)} failed "
                           f"({failed[:1]})")
    return timed


def kafka_python_produce(bootstrap: str, topic: str, payload: bytes, n: int) -> Timed:
    """Handing ``n`` records to kafka-python until they are all acknowledged, timed."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                             enable_idempotence=True)
    producer.send(topic, b"warm-up").get(30)  # metadata and producer id off the clock
    timed = Timed()
    futures = [producer.send(topic, payload) for _ in range(n)]
    producer.flush(300)
    timed.stop()
    producer.close()
    failed = sum(1 for f in futures if not f.succeeded())
    if failed:
        raise RuntimeError(f"kafka-python: {failed} of {n} records not acknowledged")
    return timed


def confluent_write(bootstrap: str, topic: str, payload: bytes, n: int,
                    partitions: int) -> None:
    """Write the topic a confluent-kafka read is timed on, off the clock and in the same shape
    on every target: the records handed to the partitions in turn, and each batch sent once it
    is full (``batch.size``), never because ``linger.ms`` ran out.

    A produce run's own batches close on that timer, so their size follows how soon the target
    acknowledged the ones before: confluent-kafka's 100 B batches to one partition held 6,500 to
    9,000 records against mockbroker and 9,082 (full) against Kafka, and a reader of the
    smaller ones needs a third more fetches.  Reading them would time the produce run again."""
    producer = confluent_kafka.Producer(producer_config(
        bootstrap, **{"linger.ms": 60_000,  # flush() sends what is left at once
                      # room for a full batch in every partition before the queue is full
                      "queue.buffering.max.messages": 2_000_000}))
    produce_all(producer, topic, payload, n, partitions=partitions)
    left = producer.flush(300)
    if left:
        raise RuntimeError(f"confluent-kafka: {left} records to read not written")


def confluent_consume(bootstrap: str, topic: str, partitions: int, n: int) -> Timed:
    """Reading ``n`` records back from every partition (assigned: no group join), timed from
    the assignment to the last record."""
    # librdkafka's first Fetch goes out before every partition's offset is known and is held
    # by any broker for fetch.wait.max.ms (500 ms by default), which would swamp the rate.
    # Once its queue passes queued.min.messages it also stops fetching for
    # fetch.queue.backoff.ms (1 s by default): whether a run crosses that line depends on a
    # race between fetches and the loop below, and one crossing makes a run several times
    # slower with either broker, so the pause is kept short.
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": topic,
                                         "enable.auto.commit": False, "fetch.wait.max.ms": 10,
                                         "fetch.queue.backoff.ms": 1})
    consumer.list_topics(topic, timeout=15)  # connected off the clock
    consumer.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                     for p in range(partitions)])
    seen = 0
    timed = Timed()
    deadline = time.perf_counter() + 300
    while seen < n and time.perf_counter() < deadline:
        # never ask for more than is left: consume() waits out its timeout for a full batch
        for message in consumer.consume(min(1000, n - seen), 1.0):
            if message.error() is None:
                seen += 1
    timed.stop()
    consumer.close()
    if seen != n:
        raise RuntimeError(f"confluent-kafka consumed {seen} of {n}")
    return timed


def java_available(args: argparse.Namespace) -> bool:
    """``java`` on the PATH, and Kafka's tools jar among the classpath's entries."""
    jars = [jar for entry in args.java_classpath.split(":")
            for jar in (glob.glob(entry + ".jar") if entry.endswith("*") else [entry])]
    return shutil.which("java") is not None \
        and any(Path(jar).name.startswith("kafka-tools-") for jar in jars)


def java(args: argparse.Namespace, main: str, *argv: str) -> str:
    result = subprocess.run(["java", "-cp", args.java_classpath, main, *argv],
                            capture_output=True, text=True, timeout=600, cwd="/tmp")
    if result.returncode:
        raise RuntimeError(f"{main} exited {result.returncode}: {result.stderr[-500:]}")
    return result.stdout


def java_produce(args: argparse.Namespace, bootstrap: str, topic: str, size: int,
                 n: int) -> float:
    """Records per second as ``ProducerPerformance`` reports it (JVM start-up left out)."""
    out = java(args, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic,
               "--num-records", str(n), "--record-size", str(size), "--throughput", "-1",
               "--producer-props", f"bootstrap.servers={bootstrap}", "acks=all")
    found = re.findall(r"(\d+) records sent, ([\d.]+) records/sec", out)
    if not found or int(found[-1][0]) != n:
        raise RuntimeError(f"ProducerPerformance: {out[-500:]}")
    return float(found[-1][1])


def java_consume(args: argparse.Namespace, bootstrap: str, topic: str, n: int) -> float:
    """Records per second as ``ConsumerPerformance`` reports its fetching (its group join and
    JVM start-up left out)."""
    out = java(args, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server",
               bootstrap, "--topic", topic, "--num-records", str(n), "--timeout", "60000",
               "--hide-header")
    row = [f.strip() for f in out.strip().splitlines()[-1].split(",")]
    if len(row) < 10 or int(row[4]) < n:
        raise RuntimeError(f"ConsumerPerformance: {out[-500:]}")
    return float(row[9])  # fetch.nMsg.sec


def records_for(args: argparse.Namespace, size: int, client: str) -> int:
    # big records: a tenth as many, so that each run moves about as many bytes as 2x the small
    n = args.messages if size <= 1024 else max(1000, args.messages // 10)
    if "consume" in args.only and client in READERS:
        # a topic that is read holds --read-mb at least: a shorter read times the client
        # starting up more than the broker serving it
        n = max(n, args.read_mb * 1_000_000 // size)
    return n


def data_round(args, tally: Tally, targets: list[Target], turn: int, client: str, size: int,
               partitions: int, *, quiet: bool = False) -> None:
    """One round of a produce/consume workload on every target.  Each pass runs on all the
    targets before the next pass starts, in an order that swaps from pass to pass: a spell in
    which the machine or the client runs slow then falls on both targets' samples, not on one
    target's whole turn."""
    n = records_for(args, size, client)
    name = f"{client} {'100 B' if size == 100 else f'{size // 1024} KiB'} x{partitions}p"
    payload = b"x" * size
    reads = "consume" in args.only and client in READERS
    if "produce" in args.only:
        # kafka-python's runs last many seconds each (its Python encodes every record): one
        passes = 1 if client == "kafka-python" else args.produce_passes
    else:  # only reads: the Java reader reads a produce run's topic, confluent-kafka its own
        passes = 1 if client == "java" else 0
    topics: dict[Target, str] = {}  # each target's latest topic: the reads read it

    def fresh_topic(target: Target) -> str:
        if target in topics:
            delete_topics(target.bootstrap, [topics.pop(target)])
        topic, got = make_topic(target.bootstrap, partitions)
        if got != partitions:
            raise RuntimeError(f"{target.label} made {topic} with {got} partitions, "
                               f"not {partitions}")
        topics[target] = topic
        return topic

    for done in range(passes):
        for target in in_turn(targets, turn + done):  # each pass into a fresh topic
            topic = fresh_topic(target)
            with BrokerCost(target) as cost:
                if client == "confluent":
                    run = confluent_produce(target.bootstrap, topic, payload, n)
                elif client == "kafka-python":
                    run = kafka_python_produce(target.bootstrap, topic, payload, n)
                else:
                    run = java_produce(args, target.bootstrap, topic, size, n)
            if "produce" in args.only:
                add_run(tally, f"produce {name}", target, size, n, run, cost, quiet)
    if reads and client == "confluent":  # a topic of its own (see confluent_write)
        for target in targets:
            confluent_write(target.bootstrap, fresh_topic(target), payload, n, partitions)
    if reads:
        for done in range(args.consume_passes):  # each a fresh client, from the first offset
            for target in in_turn(targets, turn + done):
                with BrokerCost(target) as cost:
                    if client == "confluent":
                        run = confluent_consume(target.bootstrap, topics[target], partitions, n)
                    else:
                        run = java_consume(args, target.bootstrap, topics[target], n)
                add_run(tally, f"consume {name}", target, size, n, run, cost, quiet)
    for target, topic in topics.items():
        delete_topics(target.bootstrap, [topic])


def add_run(tally: Tally, workload: str, target: Target, size: int, n: int,
            run: Timed | float, cost: BrokerCost, quiet: bool) -> None:
    """The figures of one run of ``n`` records: ``run`` is an in-process client's
    :class:`Timed`, or the records per second a Java tool reported."""
    rate = n / run.seconds if isinstance(run, Timed) else run
    tally.add(workload, "msg/s", target.label, rate)
    tally.add(workload, "MB/s", target.label, rate * size / MB)
    tally.add(workload, "CPU s/M rec", target.label, cost.per_million(n))
    if isinstance(run, Timed):
        tally.add(workload, "client CPU s/M", target.label, run.cpu * 1e6 / n)
    if not quiet:
        log(f"  {target.label:<10} {workload:<34} {rate:>10,.0f} msg/s")


def warm_up(args, targets: list[Target], clients: list[str]) -> None:
    """``args.warmup`` passes of every client's produce and consume, 100 B and 10 KiB records
    to 12 partitions, on the targets in turn; their figures are dropped."""
    started = time.perf_counter()
    unmeasured = argparse.Namespace(**{**vars(args), "only": {"produce", "consume"},
                                       "produce_passes": 1, "consume_passes": 1})
    for _ in range(args.warmup):
        for client in clients:
            for size in SIZES:
                data_round(unmeasured, Tally(), targets, 0, client, size, max(PARTITIONS),
                           quiet=True)
    log(f"  warm-up: {args.warmup} pass(es) on each target, {time.perf_counter() - started:.0f} s")


# ---------------------------------------------------------------- one record at a time


def roundtrip_round(args, tally: Tally, target: Target) -> None:
    topic, _ = make_topic(target.bootstrap, 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": target.bootstrap, "acks": "all",
                                         "linger.ms": 0})
    for _ in range(20):  # connections, metadata and the first batches off the clock
        producer.produce(topic, b"x" * 100)
        producer.flush(10)
    times = []
    with BrokerCost(target) as cost:
        for _ in range(args.roundtrips):
            start = time.perf_counter()
            producer.produce(topic, b"x" * 100)
            if producer.flush(10):
                raise RuntimeError(f"{target.label}: a record was not acknowledged in 10 s")
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    tally.add("round trip 100 B", "p50 ms", target.label, statistics.median(times))
    tally.add("round trip 100 B", "p99 ms", target.label, times[int(len(times) * 0.99) - 1])
    if cost.used is not None:
        tally.add("round trip 100 B", "CPU us/rt", target.label,
                  cost.used / args.roundtrips * 1e6)
    log(f"  {target.label:<10} round trip p50 {statistics.median(times):.3f} ms")
    delete_topics(target.bootstrap, [topic])


# ---------------------------------------------------------------- start-up


def startup_ms(runs: int) -> dict[str, float]:
    """Medians, in ms from spawning ``mockbroker serve --port 0``: to its ready line; to the
    answer to an ApiVersions request sent at once after it; and to the answer to ``GET
    /health`` sent after that (the admin API's HTTP server loads beside the running brokers,
    so a call made early waits for it).  Beside each start, the floor: this interpreter
    running ``import asyncio`` and exiting, and the ready line's ratio to it (of the medians);
    and a start from a copy of the package without byte-compiled files, with
    ``PYTHONDONTWRITEBYTECODE`` set, as an install that wrote none starts every time."""
    times: dict[str, list[float]] = {"ready ms": [], "first answer ms": [],
                                     "admin answer ms": [], "floor ms": [],
                                     "ready, no byte-code ms": []}
    body = wire.request_class(18)(client_software_name="bench", client_software_version="1")
    with tempfile.TemporaryDirectory(prefix="bench-source-") as bare:
        for package in ("mockbroker", "wire"):  # the sources alone (and wire's extension)
            shutil.copytree(ROOT / package, Path(bare) / package,
                            ignore=shutil.ignore_patterns("__pycache__"))
        no_bytecode = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": bare}
        # the measured starts write their byte code (the first does), whatever this process
        # was told: one that may not would time the compiler at every start
        bytecode = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import asyncio"], check=True, env=bytecode)
            times["floor ms"].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            proc = subprocess.Popen(serve_argv(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, text=True, env=bytecode)
            try:
                line = proc.stdout.readline()
                times["ready ms"].append((time.perf_counter() - start) * 1000)
                ready = ready_fields(line)
                host, port = ready["bootstrap"].rsplit(":", 1)
                with socket.create_connection((host, int(port)), timeout=30) as sock:
                    sock.sendall(wire.encode_request(18, 3, 1, "bench", body))
                    read_frame(sock)
                times["first answer ms"].append((time.perf_counter() - start) * 1000)
                with urllib.request.urlopen(f"{ready['admin']}/health", timeout=30) as answer:
                    answer.read()
                times["admin answer ms"].append((time.perf_counter() - start) * 1000)
            finally:
                proc.terminate()
                proc.wait(10)
                proc.stdout.close()
            start = time.perf_counter()
            proc = subprocess.Popen(serve_argv(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, text=True, cwd=bare,
                                    env=no_bytecode)
            try:
                ready_fields(proc.stdout.readline())
                times["ready, no byte-code ms"].append((time.perf_counter() - start) * 1000)
            finally:
                proc.terminate()
                proc.wait(10)
                proc.stdout.close()
    medians = {figure: statistics.median(values) for figure, values in times.items()}
    medians["ready / floor"] = medians["ready ms"] / medians["floor ms"]
    medians["no byte-code / floor"] = medians["ready, no byte-code ms"] / medians["floor ms"]
    return medians


# ---------------------------------------------------------------- memory per record


def rss_round(args, tally: Tally, target: Target) -> str | None:
    """Memory growth per record stored; returns the topic, to be deleted only once every round
    is done (memory freed by a deleted topic is reused, not returned: later rounds would show
    no growth)."""
    if target.pid is None:
        return None
    n = args.rss_records
    topic, _ = make_topic(target.bootstrap, 1)
    time.sleep(0.5)  # let the topic's creation settle before the first reading
    before = rss_bytes(target.pid)
    confluent_produce(target.bootstrap, topic, b"x" * 100, n)
    time.sleep(0.5)
    per_record = (rss_bytes(target.pid) - before) / n
    tally.add(f"RSS, {n:,} records of 100 B", "RSS B/rec", target.label, per_record)
    log(f"  {target.label:<10} RSS {per_record:.0f} B/record")
    return topic


# ---------------------------------------------------------------- Metadata at 10,000 partitions


def metadata_all(bootstrap: str, requests: int) -> tuple[int, list[float]]:
    """Partitions in a full Metadata response (decoded once, off the clock) and the ms of
    each of ``requests`` more: request sent to last byte of the response received."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    body = wire.request_class(3)(topics=None, allow_auto_topic_creation=False)
    times = []
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(wire.encode_request(3, 12, 0, "bench", body))
        _, meta = wire.decode_response(3, 12, read_frame(sock))
        count = sum(len(t.partitions) for t in meta.topics
                    if t.name.startswith("meta-") and t.error_code == 0)
        for i in range(requests):
            frame = wire.encode_request(3, 12, i + 1, "bench", body)
            start = time.perf_counter()
            sock.sendall(frame)
            read_frame(sock)
            times.append((time.perf_counter() - start) * 1000)
    return count, times


def create_meta_topics(target: Target, prefix: str) -> tuple[list[str], float]:
    """Create the 100 x 100 partitions; returns the names and the seconds until a Metadata
    request shows them all."""
    names = [f"{prefix}-{i:03d}" for i in range(META_TOPICS)]
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    start = time.perf_counter()
    # ten topics (1,000 partitions) a request: Kafka refuses a request that would make more
    # than 10,000 records in its metadata log ("excessively large batch operation")
    for i in range(0, len(names), 10):
        futures = admin.create_topics([NewTopic(n, META_PARTITIONS, 1) for n in names[i:i + 10]],
                                      operation_timeout=300, request_timeout=360)
        for future in futures.values():
            future.result(400)
    want = META_TOPICS * META_PARTITIONS
    while metadata_all(target.bootstrap, 0)[0] < want:
        if time.perf_counter() - start > 600:
            raise RuntimeError(f"{target.label}: {want} partitions not all there in 600 s")
        time.sleep(0.2)
    return names, time.perf_counter() - start


def metadata_workload(args, tally: Tally, targets: list[Target]) -> None:
    workload = f"Metadata, {META_TOPICS * META_PARTITIONS:,} partitions"
    created = {}
    for target in targets:
        log(f"  {target.label:<10} creating {META_TOPICS} topics x {META_PARTITIONS} partitions")
        names, seconds = create_meta_topics(target, f"meta-{uuid.uuid4().hex[:6]}")
        created[target.label] = names
        tally.add(f"CreateTopics {META_TOPICS} x {META_PARTITIONS}", "create s", target.label,
                  seconds)
    try:
        for _ in range(args.rounds):
            for target in targets:
                count, times = metadata_all(target.bootstrap, 10)
                if count < META_TOPICS * META_PARTITIONS:
                    raise RuntimeError(f"{target.label}: only {count} partitions listed")
                tally.add(workload, "Metadata ms", target.label, statistics.median(times))
                log(f"  {target.label:<10} Metadata {statistics.median(times):.1f} ms")
    finally:
        for target in targets:
            delete_topics(target.bootstrap, created[target.label])


# ---------------------------------------------------------------- the run


def figure_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 99.95:
        return f"{value:,.0f}"
    if abs(value) >= 9.995:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 0.995 else f"{value:.3g}"


def run_ratios(mine: list[float], other: list[float]) -> tuple[float, float] | None:
    """The lowest and highest ratio of single runs, each run's figure over the other target's
    run i (the targets take turns, so run i of each ran side by side); None with fewer than
    two runs of each."""
    ratios = [a / b for a, b in zip(mine, other) if b]
    return (min(ratios), max(ratios)) if len(ratios) >= 2 else None


def report(tally: Tally, labels: list[str]) -> None:
    compare = len(labels) > 1
    head = f"{'workload':<32} {'figure':<15} {labels[0]:>11}"
    if compare:
        head += f" {labels[1]:>11} {'ratio':>7}  {'runs':<11}  better"
    print("\n" + head)
    print("-" * len(head))
    last = None
    for (workload, figure), by_label in tally.values.items():
        medians = [statistics.median(by_label[lb]) if by_label.get(lb) else None
                   for lb in labels]
        line = f"{workload if workload != last else '':<32} {figure:<15} " \
               f"{figure_text(medians[0]):>11}"
        last = workload
        if compare:
            mine, other = medians
            ratio = mine / other if mine is not None and other else None
            spread = run_ratios(by_label.get(labels[0], []), by_label.get(labels[1], []))
            spread_text = "" if spread is None else \
                f"{figure_text(spread[0])}-{figure_text(spread[1])}"
            direction = {True: "higher", False: "lower", None: "-"}[HIGHER_BETTER[figure]]
            line += f" {figure_text(other):>11} {figure_text(ratio):>7}  {spread_text:<11}" \
                    f"  {direction}"
        print(line)
    if compare:
        print(f"\nratio = {labels[0]} / {labels[1]}, medians of the runs; 'better' is the "
              "direction in which mockbroker does better\nruns = the lowest and highest "
              "ratio of one run to the other target's run beside it (a range that spans "
              "1 is no clear difference)\nclient CPU s/M = the CPU seconds per million records "
              "of a client running in this process: where it moves with msg/s, the client set "
              "the pace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    parser.add_argument("--compare-pid", type=int, metavar="PID",
                        help="the other broker's pid (default: whoever listens on its port)")
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help=f"comma-separated workloads (default: all of {','.join(WORKLOADS)})")
    parser.add_argument("--clients", default=",".join(CLIENTS),
                        help="producers for produce/consume (default: %(default)s)")
    parser.add_argument("--messages", type=int, default=50000,
                        help="records of 100 B per produce run; a tenth as many of 10 KiB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, metavar="PASSES",
                        help="unmeasured passes of produce and consume on each target before "
                             "the rounds (default: %(default)s)")
    parser.add_argument("--produce-passes", type=int, default=3, metavar="N",
                        help="produce runs of each workload per round, each into a fresh "
                             "topic and a sample of its own; kafka-python runs once "
                             "(default: %(default)s)")
    parser.add_argument("--consume-passes", type=int, default=3, metavar="N",
                        help="reads of each produced topic per round, each a sample of its "
                             "own (default: %(default)s)")
    parser.add_argument("--read-mb", type=int, default=200, metavar="MB",
                        help="the least a topic that is read holds: its producers write "
                             "more records than --messages if need be (default: %(default)s)")
    parser.add_argument("--roundtrips", type=int, default=1000,
                        help="records produced one at a time, per round")
    parser.add_argument("--rss-records", type=int, default=100000)
    parser.add_argument("--startups", type=int, default=7,
                        help="spawns of mockbroker serve to take the median of")
    parser.add_argument("--fetch-delay-ms", type=int, default=0, metavar="MS",
                        help="hold back every Fetch answer of the bench's mockbroker this "
                             "long: which reads does the broker's speed decide? "
                             "(default: %(default)s)")
    parser.add_argument("--java-classpath", default=str(ROOT / ".cache/jars/kafka-tools/*"))
    args = parser.parse_args()
    args.only = set(args.only.split(","))
    clients = args.clients.split(",")
    unknown = (args.only - set(WORKLOADS)) | (set(clients) - set(CLIENTS))
    if unknown:
        parser.error(f"unknown workload or client: {', '.join(sorted(unknown))}")
    for flag in ("rounds", "produce_passes", "consume_passes"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be at least 1")
    if args.fetch_delay_ms < 0:
        parser.error("--fetch-delay-ms must be 0 or more")
    if "java" in clients and not java_available(args):
        log("java or Kafka's tools jars not found: the Java workloads are skipped")
        clients.remove("java")

    tally = Tally()
    started, load = time.perf_counter(), os.getloadavg()[0]
    with served() as broker:
        targets = [Target("mockbroker", broker.bootstrap, broker.pid)]
        if args.compare:
            pid = args.compare_pid or listening_pid(args.compare)
            if pid is None:
                log(f"no pid for {args.compare}: its CPU and memory figures are n/a")
            targets.append(Target("other", args.compare, pid))
        log(f"targets: {', '.join(f'{t.label}={t.bootstrap} (pid {t.pid})' for t in targets)}")
        if args.fetch_delay_ms:  # until the broker stops
            MockbrokerAdmin(broker.admin).add_fault("Fetch", action="delay", count=None,
                                                    delay_ms=args.fetch_delay_ms)
            log(f"  every Fetch answer of mockbroker held back {args.fetch_delay_ms} ms")

        if "startup" in args.only:
            for figure, ms in startup_ms(args.startups).items():
                tally.add("start-up of serve", figure, "mockbroker", ms)
        if "rss" in args.only:  # first: before other workloads' memory is freed for reuse
            kept = defaultdict(list)
            for turn in range(args.rounds):
                for target in in_turn(targets, turn):
                    kept[target.bootstrap].append(rss_round(args, tally, target))
            for bootstrap, topics in kept.items():
                if any(topics):
                    delete_topics(bootstrap, [t for t in topics if t])
        if args.only & {"produce", "consume", "roundtrip"} and args.warmup > 0:
            warm_up(args, targets, clients)
        if args.only & {"produce", "consume"}:
            for client in clients:
                if "produce" not in args.only and client not in READERS:
                    continue  # nothing of it would be measured
                for size in SIZES:
                    for partitions in PARTITIONS:
                        for turn in range(args.rounds):
                            data_round(args, tally, targets, turn, client, size, partitions)
        if "roundtrip" in args.only:
            for turn in range(args.rounds):
                for target in in_turn(targets, turn):
                    roundtrip_round(args, tally, target)
        if "metadata" in args.only:
            metadata_workload(args, tally, targets)
    report(tally, [t.label for t in targets])
    # other work on the machine skews the figures: say how busy it was
    print(f"\n{args.rounds} round(s), --messages {args.messages}, "
          f"{time.perf_counter() - started:.0f} s in all; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
