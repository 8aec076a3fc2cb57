"""Kafka Streams on a streams group (KIP-1071, ``group.protocol=streams``) and on a classic
group: a word count's end-to-end throughput and how long its rebalances take, on mockbroker and
on a second Kafka measured in the same run.

The app is the project's word count, ``tests/clients/java/WordCountEos.java`` (compiled once
with ``javac`` into a scratch folder, then run in its own JVM per instance with the Streams
4.4 jars the client tests use): lines of an input topic split into words, regrouped through a
repartition topic, counted in an in-memory store (with a changelog) and every new count written
to an output topic (its record cache is off, so one count out per word in).  Two sub-topologies
over topics of ``--partitions`` partitions: 2 x partitions tasks, one stream thread an
instance.  It runs with ``processing.guarantee=at_least_once`` (``--guarantee`` to change) and
``group.protocol=streams`` or ``classic``; lines are produced with confluent-kafka and the
counts read back with confluent-kafka (partitions assigned, no group).

mockbroker runs as ``mockbroker serve`` in its own process (``bench.served``).  The second
target is Apache Kafka 4.4, one node started for the run from the jars set-up fetches (the
client tests' ``tests/real_kafka.py``) and stopped at the end, or any bootstrap given with
``--second HOST:PORT`` (whose settings the bench reads and warns about where they differ).

Figures:

* word count: a fresh app (new application id and topics) is started and waits until its
  group is stable with every task held; ``--warm-lines`` lines go through off the clock (the
  JVM compiles its path); then ``--lines`` lines of 5 words are handed to an idempotent producer
  (linger 5 ms) as fast as it takes them, and the clock runs from the first line produced to
  the moment the reader has seen the last count (every word's final count, checked).  Lines/s
  in, and counts/s out (5 a line);
* rebalance: a fresh app on an input that holds ``--state-lines`` lines (its changelog stays
  far below Streams' ``acceptable.recovery.lag``, so no assignor holds tasks back for a
  warm-up: what is timed is the protocol, not a restore).  One instance runs, stable with
  every task; a second starts.  **join**: from the second instance's ``state REBALANCING`` line
  (``KafkaStreams.start()``, so the JVM's start is left out) until the group's coordinator
  describes the group as stable with two members, each holding tasks, every task held once.
  **leave**: from the line ``close`` sent to the second instance (``KafkaStreams.close()``)
  until the coordinator describes it stable with one member holding every task.  The group is
  read every 20 ms, with ``DescribeGroups`` (confluent-kafka's ``describe_consumer_groups``)
  for the classic group, where a member's partitions are its tasks (input partition p is task
  0_p, repartition partition p task 1_p), and with ``StreamsGroupDescribe`` v0 (the project's
  ``wire`` codec, to the coordinator) for the streams group (each member's active tasks).  A
  classic group is stable once SyncGroup handed every member its assignment, a streams group
  once every member is at the target assignment with nothing left to revoke: in both, the
  broker has told every member what it holds.

Making the two protocols comparable.  A classic group's pace is the client's: Streams' main
consumer heartbeats every ``heartbeat.interval.ms`` and the group drops a silent member after
its ``session.timeout.ms``; a streams group's pace is the broker's
(``group.streams.heartbeat.interval.ms``, ``group.streams.session.timeout.ms``; the client's
own settings are not used).  So both get the same numbers: the app runs with
``consumer.heartbeat.interval.ms`` = ``--heartbeat-interval-ms`` (default 1000) and
``consumer.session.timeout.ms`` = ``--session-timeout-ms`` (default 6000), and both brokers
with ``group.streams.heartbeat.interval.ms`` and ``group.streams.session.timeout.ms`` equal to
them (their ``min.`` bounds lowered to match, ``group.min.session.timeout.ms`` too), with no
initial rebalance delay for either kind of group (``group.initial.rebalance.delay.ms=0``,
``group.streams.initial.rebalance.delay.ms=0``) and ``group.streams.assignment.interval.ms``
= ``--assignment-interval-ms`` (default 1000, Kafka's; a streams group computes a new target
assignment at most that often, a classic one has no such step).  What stays different is each
protocol's own.  A classic join takes two rebalances: the running member learns of the first
at its next heartbeat, and Streams' cooperative protocol revokes in it the tasks that move, so
that the member that gave them up rejoins at once for a second one that hands them over.  A
streams join waits for the next target assignment, the running member's heartbeat to be
told to revoke, its acknowledgement, and the newcomer's heartbeat to be given the tasks.
Streams' ``close()`` sends no LeaveGroup on a classic group
(``internal.leave.group.on.close=false``), so a classic leave waits out the session timeout
(from the closing member's last request) and then the survivor's next heartbeat, where a
closing streams member sends its leave heartbeat.  Those are the protocols' own costs, which
is what this bench compares.

Rounds interleave: each round runs every (target, protocol) cell of the word count, then of
the rebalance, the targets' order and the protocols' swapped from one round to the next, so a
slow spell of the machine falls on all of them.  Medians are printed, with the ratios
mockbroker / second (and the lowest and highest ratio of single rounds) and streams /
classic on each target.  Before the rounds, ``--warmup`` word counts on each target (classic,
uncounted) let a JVM broker compile its data path.

    .venv/bin/python bench/streams.py [--quick] [--second HOST:PORT] [--rounds 3]
        [--lines 20000] [--warm-lines 2000] [--partitions 4] [--heartbeat-interval-ms 1000]
        [--session-timeout-ms 6000] [--assignment-interval-ms 1000] [--warmup 1]
        [--guarantee at_least_once] [--work-dir DIR]

Needs ``java``, ``javac`` and the jars of ``tests/clients/test_streams_eos.py`` (``bash
ci/dev.sh setup`` fetches them).  ``--quick``: 2 rounds of 5,000 lines, no warm-up pass: a few
minutes.  App and broker logs go to ``--work-dir`` (a scratch folder, kept when a cell fails).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import confluent_kafka
from confluent_kafka.admin import AdminClient, ConfigResource

# the benches run as scripts: make the repository importable for their shared helpers
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import wire  # noqa: E402
from bench.served import make_topic, read_frame, served  # noqa: E402

SOURCE = ROOT / "tests" / "clients" / "java" / "WordCountEos.java"
MAIN_CLASS = "WordCountEos"
#: the jars tests/clients/test_streams_eos.py runs the app with
CLASSPATH = [ROOT / ".cache" / "jars" / "kafka-streams-4.4.0.jar",
             ROOT / ".cache" / "jars" / "kafka-clients-4.4.0.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
PROTOCOLS = ("streams", "classic")
WORDS_PER_LINE = 5
VOCABULARY = [f"w{i}" for i in range(500)]
SUBTOPOLOGIES = 2  # the word count's: split and regroup; count
START_TIMEOUT_S = 120  # a JVM starting and its first rebalance, on a busy machine
SETTLE_TIMEOUT_S = 90
COUNT_TIMEOUT_S = 300
POLL_S = 0.02
STREAMS_GROUP_DESCRIBE, FIND_COORDINATOR = 89, 10


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class CellFailed(Exception):
    """A cell could not be measured; the message says what was seen."""


# -- the broker settings ------------------------------------------------------------------------

def broker_settings(args) -> dict[str, int]:
    """The group settings both brokers run with, by Kafka's names."""
    heartbeat, session = args.heartbeat_interval_ms, args.session_timeout_ms
    return {
        "group.initial.rebalance.delay.ms": 0,
        "group.min.session.timeout.ms": session,
        "group.streams.initial.rebalance.delay.ms": 0,
        "group.streams.heartbeat.interval.ms": heartbeat,
        "group.streams.min.heartbeat.interval.ms": heartbeat,
        "group.streams.session.timeout.ms": session,
        "group.streams.min.session.timeout.ms": session,
        "group.streams.assignment.interval.ms": args.assignment_interval_ms,
    }


def serve_flags(settings: dict[str, int]) -> list[str]:
    """``mockbroker serve`` flags for Kafka's setting names."""
    flags = []
    for name, value in settings.items():
        flags += ["--" + name.replace(".", "-"), str(value)]
    return flags


def differing_settings(bootstrap: str, settings: dict[str, int]) -> list[str]:
    """The settings a running broker holds otherwise (DescribeConfigs of its lowest node)."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    try:
        broker = min(admin.list_topics(timeout=10).brokers)
        resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
        configs = admin.describe_configs([resource], request_timeout=10)[resource].result(15)
    except Exception as exc:  # noqa: BLE001 - only used for a warning
        return [f"(could not read its settings: {exc})"]
    return [f"{name}={configs[name].value if name in configs else '(unknown)'} (want {value})"
            for name, value in settings.items()
            if name not in configs or configs[name].value != str(value)]


@dataclass(frozen=True)
class Target:
    label: str
    bootstrap: str


@contextlib.contextmanager
def second_target(args, settings: dict[str, int]) -> Iterator[Target]:
    """``--second``, or a one-node Kafka started with ``settings`` (stopped afterwards)."""
    if args.second:
        for line in differing_settings(args.second, settings):
            say(f"warning: {args.second} has {line}: its figures wait on other settings")
        yield Target("second", args.second)
        return
    from tests.real_kafka import RealKafka  # the client tests' Kafka, from set-up's jars

    say("starting Kafka 4.4 (one node) ...")
    kafka = RealKafka({name: str(value) for name, value in settings.items()}).start()
    try:
        yield Target("kafka", kafka.bootstrap_servers)
    finally:
        kafka.stop()


# -- the app ------------------------------------------------------------------------------------

def compile_app(into: Path) -> Path:
    """WordCountEos compiled once (a JVM started from the source compiles it every time)."""
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    if missing or not shutil.which("java") or not shutil.which("javac"):
        raise SystemExit(f"needs java, javac and {missing or 'the Streams jars'} "
                         "(bash ci/dev.sh setup fetches them)")
    classes = into / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-cp", os.pathsep.join(map(str, CLASSPATH)),
                    "-d", str(classes), str(SOURCE)], check=True)
    return classes


class App:
    """One instance of the word count in its own JVM, seen through the lines it prints
    ("state RUNNING", "failed ...", "closed"), each stamped with when the bench read it."""

    def __init__(self, classes: Path, bootstrap: str, app_id: str, source: str, sink: str,
                 work: Path, name: str, properties: list[str]):
        self.name = name
        self.log = work / f"{name}.log"
        self.lines: list[tuple[float, str]] = []
        classpath = os.pathsep.join([str(classes), *map(str, CLASSPATH)])
        with open(self.log, "ab") as stderr:
            self.process = subprocess.Popen(
                ["java", "-Xmx512m", "-cp", classpath, MAIN_CLASS, bootstrap, app_id, source,
                 sink, str(work / f"{name}-state"), *properties],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append((time.perf_counter(), line.rstrip("\n")))

    def said(self) -> list[str]:
        return [line for _, line in self.lines]

    def check(self) -> None:
        """Raise CellFailed with what the app said if it failed or exited."""
        failed = [line for line in self.said() if line.startswith("failed")]
        exited = self.process.poll()
        if failed or exited is not None:
            tail = self.log.read_text(errors="replace")[-3000:]
            raise CellFailed(f"app {self.name} (exit {exited}) said {self.said()}; "
                             f"its stderr ({self.log}) ends:\n{tail}")

    def wait_line(self, text: str, timeout: float) -> float:
        """When the app printed ``text`` (waiting for it)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            for stamp, line in self.lines:
                if line == text:
                    return stamp
            self.check()
            time.sleep(POLL_S)
        raise CellFailed(f"app {self.name} printed no {text!r} within {timeout} s; "
                         f"it said {self.said()}")

    def ask_close(self) -> None:
        """``KafkaStreams.close()`` begins (the app closes on the line ``close``)."""
        self.process.stdin.write("close\n")
        self.process.stdin.flush()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.ask_close()
                self.process.wait(60)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self._reader.join(10)


def app_properties(args, protocol: str) -> list[str]:
    return [f"group.protocol={protocol}", f"processing.guarantee={args.guarantee}",
            f"consumer.heartbeat.interval.ms={args.heartbeat_interval_ms}",
            f"consumer.session.timeout.ms={args.session_timeout_ms}"]


# -- what the coordinator says of the group -----------------------------------------------------

class GroupView:
    """The tasks each member of the app's group holds, as its coordinator describes them, or
    None while the group is not stable."""

    def __init__(self, bootstrap: str, protocol: str, app_id: str, source: str,
                 partitions: int):
        self.bootstrap, self.protocol, self.app_id = bootstrap, protocol, app_id
        self.tasks = frozenset((s, p) for s in range(SUBTOPOLOGIES) for p in range(partitions))
        # the classic group's partitions, as tasks: input p is 0_p, repartition p is 1_p
        self.topics = {source: 0, f"{app_id}-words-repartition": 1}
        # log_level 3: not librdkafka's note on the events it drops when the client goes
        self.admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3}) \
            if protocol == "classic" else None
        self.sock: socket.socket | None = None
        self.correlation = 0

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _ask(self, address: tuple[str, int] | None, api: int, version: int, body):
        """One request, on the coordinator's connection (``address`` None) or a new one."""
        self.correlation += 1
        frame = wire.encode_request(api, version, self.correlation, "bench-streams", body)
        if address is not None:
            with socket.create_connection(address, timeout=10) as sock:
                sock.sendall(frame)
                return wire.decode_response(api, version, read_frame(sock))[1]
        self.sock.sendall(frame)
        return wire.decode_response(api, version, read_frame(self.sock))[1]

    def _connect(self) -> None:
        host, port = self.bootstrap.split(",")[0].rsplit(":", 1)
        found = self._ask((host, int(port)), FIND_COORDINATOR, 6,
                          wire.request_class(FIND_COORDINATOR)(key_type=0,
                                                               coordinator_keys=[self.app_id]))
        coordinator = found.coordinators[0]
        if coordinator.error_code:
            raise ConnectionError(f"FindCoordinator: error {coordinator.error_code}")
        self.sock = socket.create_connection((coordinator.host, coordinator.port), timeout=10)

    def holdings(self) -> list[frozenset] | None:
        try:
            return self._streams() if self.protocol == "streams" else self._classic()
        except (OSError, ConnectionError, confluent_kafka.KafkaException):
            self.close()  # asked again on a new connection at the next look
            return None

    def _streams(self) -> list[frozenset] | None:
        if self.sock is None:
            self._connect()
        request = wire.request_class(STREAMS_GROUP_DESCRIBE)(
            group_ids=[self.app_id], include_authorized_operations=False)
        [group] = self._ask(None, STREAMS_GROUP_DESCRIBE, 0, request).groups
        if group.error_code == 16:  # NOT_COORDINATOR: find it again
            self.close()
            return None
        if group.error_code or group.group_state != "Stable":
            return None
        return [frozenset((int(t.subtopology_id), p) for t in m.assignment.active_tasks
                          for p in t.partitions) for m in group.members]

    def _classic(self) -> list[frozenset] | None:
        [future] = self.admin.describe_consumer_groups([self.app_id],
                                                       request_timeout=10).values()
        group = future.result(15)
        if group.state != confluent_kafka.ConsumerGroupState.STABLE:
            return None
        return [frozenset((self.topics[tp.topic], tp.partition)
                          for tp in m.assignment.topic_partitions if tp.topic in self.topics)
                for m in group.members]

    def settled(self, members: int) -> bool:
        """Stable, with ``members`` members, each holding tasks, every task held once."""
        held = self.holdings()
        return held is not None and len(held) == members and all(held) and \
            sum(map(len, held)) == len(self.tasks) and frozenset().union(*held) == self.tasks

    def wait_settled(self, members: int, since: float, apps: list[App],
                     timeout: float = SETTLE_TIMEOUT_S) -> float:
        """Seconds from ``since`` until the group is settled with ``members`` members."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.settled(members):
                return time.perf_counter() - since
            for app in apps:
                app.check()
            time.sleep(POLL_S)
        raise CellFailed(f"{self.protocol} group {self.app_id} on {self.bootstrap} not stable "
                         f"with {members} member(s) holding every task once within {timeout} "
                         f"s; last seen: {self.holdings()}; apps said "
                         f"{[app.said() for app in apps]}")


# -- the lines in, the counts out ---------------------------------------------------------------

def make_lines(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(VOCABULARY, k=WORDS_PER_LINE)).encode() for _ in range(n)]


def word_totals(lines: list[bytes]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for line in lines:
        for word in line.decode().split():
            totals[word] = totals.get(word, 0) + 1
    return totals


def produce(bootstrap: str, topic: str, lines: list[bytes], partitions: int) -> None:
    """Every line handed to an idempotent producer (linger 5 ms), to the partitions in turn, and
    acknowledged."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap,
                                         "enable.idempotence": True, "linger.ms": 5})
    failed: list = []
    for i, line in enumerate(lines):
        while True:
            try:
                producer.produce(topic, line, partition=i % partitions,
                                 on_delivery=lambda err, _m: err and failed.append(err))
                break
            except BufferError:  # its queue is full: let it send
                producer.poll(0.005)
    if producer.flush(60) != 0 or failed:
        raise CellFailed(f"lines not acknowledged by {bootstrap}: {failed[:3]}")


class Output(threading.Thread):
    """Reads the output topic from its start (partitions assigned, no group): the latest count
    of every word, how many counts came, and when the last one did."""

    def __init__(self, bootstrap: str, topic: str, partitions: int):
        super().__init__(daemon=True)
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"bench-reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False, "fetch.wait.max.ms": 100})
        self.consumer.assign([confluent_kafka.TopicPartition(topic, p,
                                                             confluent_kafka.OFFSET_BEGINNING)
                              for p in range(partitions)])
        self.latest: dict[str, int] = {}
        self.counts = 0
        self.last_at = 0.0
        self.errors: list = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            messages = self.consumer.consume(10000, 0.05)
            now = time.perf_counter()
            for m in messages:
                if m.error() is not None:
                    self.errors.append(m.error())
                    continue
                self.latest[m.key().decode()] = int(m.value())
                self.counts += 1
            if messages:
                self.last_at = now
        self.consumer.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(30)

    def wait_counts(self, total: int, expected: dict[str, int], app: App) -> float:
        """When the reader had seen ``total`` counts, the last of them ``expected``."""
        deadline = time.perf_counter() + COUNT_TIMEOUT_S
        while time.perf_counter() < deadline:
            if self.errors:
                raise CellFailed(f"reading the counts: {self.errors[:3]}")
            if self.counts >= total:
                if self.latest != expected:
                    wrong = {w: (self.latest.get(w), n) for w, n in expected.items()
                             if self.latest.get(w) != n}
                    raise CellFailed(f"{self.counts} counts read, {total} expected, and the "
                                     f"last counts differ (seen, expected): "
                                     f"{dict(list(wrong.items())[:5])}")
                return self.last_at
            app.check()
            time.sleep(POLL_S)
        raise CellFailed(f"{self.counts} of {total} counts out within {COUNT_TIMEOUT_S} s")


# -- the cells ----------------------------------------------------------------------------------

@dataclass
class Cell:
    """One target and protocol, with what ``measure`` needs of the run."""
    target: Target
    protocol: str
    args: argparse.Namespace
    classes: Path
    work: Path

    def fresh(self, kind: str) -> tuple[str, str, str, Path]:
        """A new application id, its input and output topics, and a folder for its logs."""
        tag = uuid.uuid4().hex[:8]
        app_id = f"bench-{kind}-{self.protocol}-{tag}"
        source, _ = make_topic(self.target.bootstrap, self.args.partitions, f"{app_id}-in")
        sink, _ = make_topic(self.target.bootstrap, self.args.partitions, f"{app_id}-out")
        folder = self.work / f"{self.target.label}-{app_id}"
        folder.mkdir(parents=True)
        return app_id, source, sink, folder

    def app(self, app_id: str, source: str, sink: str, folder: Path, name: str) -> App:
        return App(self.classes, self.target.bootstrap, app_id, source, sink, folder, name,
                   app_properties(self.args, self.protocol))


@dataclass
class Rate:
    lines_per_s: float
    counts_per_s: float


def word_count(cell: Cell, warm: list[bytes], lines: list[bytes]) -> Rate:
    """``lines`` through a fresh app, once ``warm`` went through it off the clock."""
    bootstrap, partitions = cell.target.bootstrap, cell.args.partitions
    app_id, source, sink, folder = cell.fresh("wc")
    app = cell.app(app_id, source, sink, folder, "app")
    view = GroupView(bootstrap, cell.protocol, app_id, source, partitions)
    output = Output(bootstrap, sink, partitions)
    output.start()
    try:
        app.wait_line("state RUNNING", START_TIMEOUT_S)
        view.wait_settled(1, time.perf_counter(), [app], START_TIMEOUT_S)
        produce(bootstrap, source, warm, partitions)
        output.wait_counts(len(warm) * WORDS_PER_LINE, word_totals(warm), app)
        start = time.perf_counter()
        produce(bootstrap, source, lines, partitions)
        end = output.wait_counts((len(warm) + len(lines)) * WORDS_PER_LINE,
                                 word_totals(warm + lines), app)
    finally:
        output.stop()
        view.close()
        app.close()
    seconds = end - start
    return Rate(len(lines) / seconds, len(lines) * WORDS_PER_LINE / seconds)


def rebalance(cell: Cell, state: list[bytes]) -> tuple[float, float]:
    """(join, leave) seconds: a second instance joining a running one, then leaving."""
    bootstrap, partitions = cell.target.bootstrap, cell.args.partitions
    app_id, source, sink, folder = cell.fresh("rb")
    produce(bootstrap, source, state, partitions)
    first = cell.app(app_id, source, sink, folder, "first")
    second = None
    view = GroupView(bootstrap, cell.protocol, app_id, source, partitions)
    try:
        first.wait_line("state RUNNING", START_TIMEOUT_S)
        view.wait_settled(1, time.perf_counter(), [first], START_TIMEOUT_S)
        second = cell.app(app_id, source, sink, folder, "second")
        started = second.wait_line("state REBALANCING", START_TIMEOUT_S)
        join = view.wait_settled(2, started, [first, second])
        leaving = time.perf_counter()
        second.ask_close()
        leave = view.wait_settled(1, leaving, [first])
        second.process.wait(60)
        if "closed" not in second.said():
            raise CellFailed(f"app second did not close cleanly: {second.said()}")
    finally:
        view.close()
        for app in (second, first):
            if app is not None:
                app.close()
    return join, leave


# -- the report ---------------------------------------------------------------------------------

def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio_cell(mine: list[float], other: list[float]) -> str:
    """Ratio of medians, with the lowest and highest ratio of single rounds."""
    if not mine or not other:
        return "n/a"
    singles = [a / b for a, b in zip(mine, other)]
    return f"{median(mine) / median(other):.2f} ({min(singles):.2f}-{max(singles):.2f})"


def report(args, targets: list[Target], rates: dict, joins: dict, leaves: dict) -> None:
    first, second = (t.label for t in targets)
    print(f"\nword count, {args.lines:,} lines of {WORDS_PER_LINE} words a run "
          f"({args.lines * WORDS_PER_LINE:,} counts out), after {args.warm_lines:,} off the "
          f"clock; {args.partitions} partitions, {args.guarantee}; medians of {args.rounds} "
          "round(s)")
    head = f"{'':<10}{'lines/s ' + first:>20}{'lines/s ' + second:>18}{'counts/s ' + first:>20}"
    print(f"{head}{'counts/s ' + second:>18}   {first}/{second} (range)")
    for protocol in PROTOCOLS:
        mine = [r.lines_per_s for r in rates[first, protocol]]
        other = [r.lines_per_s for r in rates[second, protocol]]
        print(f"{protocol:<10}{median(mine):>20,.0f}{median(other):>18,.0f}"
              f"{median(mine) * WORDS_PER_LINE:>20,.0f}{median(other) * WORDS_PER_LINE:>18,.0f}"
              f"   {ratio_cell(mine, other)}  (above 1: {first} faster)")
    cells = []
    for label in (first, second):
        cells.append(f"{label} " + ratio_cell(
            [r.lines_per_s for r in rates[label, 'streams']],
            [r.lines_per_s for r in rates[label, 'classic']]))
    print("streams / classic, lines/s: " + "   ".join(cells))

    print(f"\nrebalance, seconds (heartbeat {args.heartbeat_interval_ms} ms, session "
          f"{args.session_timeout_ms} ms, assignment interval {args.assignment_interval_ms} ms)"
          f"; medians of {args.rounds} round(s)")
    print(f"{'':<16}{first:>12}{second:>12}   {first}/{second} (range)")
    for name, figures in (("join", joins), ("leave", leaves)):
        for protocol in PROTOCOLS:
            mine, other = figures[first, protocol], figures[second, protocol]
            print(f"{name + ', ' + protocol:<16}{median(mine):>12.3f}{median(other):>12.3f}"
                  f"   {ratio_cell(mine, other)}  (below 1: {first} faster)")
    for name, figures in (("join", joins), ("leave", leaves)):
        cells = [f"{label} " + ratio_cell(figures[label, "streams"], figures[label, "classic"])
                 for label in (first, second)]
        print(f"streams / classic, {name}: " + "   ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="2 rounds of 5,000 lines, no warm-up pass: a few minutes")
    parser.add_argument("--second", metavar="HOST:PORT",
                        help="bootstrap of the second target (default: start Kafka 4.4)")
    parser.add_argument("--rounds", type=int, help="rounds (3)")
    parser.add_argument("--lines", type=int, help="lines a measured word count (20000)")
    parser.add_argument("--warm-lines", type=int, help="lines off the clock first (2000)")
    parser.add_argument("--state-lines", type=int, default=100,
                        help="lines in the rebalance app's input (default: %(default)s)")
    parser.add_argument("--warmup", type=int, help="uncounted word counts per target (1)")
    parser.add_argument("--partitions", type=int, default=4,
                        help="partitions of the input topic (default: %(default)s)")
    parser.add_argument("--heartbeat-interval-ms", type=int, default=1000)
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--assignment-interval-ms", type=int, default=1000)
    parser.add_argument("--guarantee", default="at_least_once",
                        choices=("at_least_once", "exactly_once_v2"))
    parser.add_argument("--work-dir", type=Path,
                        help="folder for the compiled app and the logs (default: a scratch "
                             "folder, removed unless a cell fails)")
    args = parser.parse_args()
    quick = dict(rounds=2, lines=5000, warm_lines=1000, warmup=0)
    full = dict(rounds=3, lines=20000, warm_lines=2000, warmup=1)
    for name, value in (quick if args.quick else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if min(args.rounds, args.lines, args.warm_lines, args.partitions) < 1 or args.warmup < 0:
        parser.error("sizes must be at least 1 (--warmup at least 0)")

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench-streams-"))
    work.mkdir(parents=True, exist_ok=True)
    started, load = time.perf_counter(), os.getloadavg()[0]
    classes = compile_app(work)
    settings = broker_settings(args)
    warm, lines = make_lines(args.warm_lines, 1), make_lines(args.lines, 2)
    state = make_lines(args.state_lines, 3)
    rates: dict = {}
    joins: dict = {}
    leaves: dict = {}
    failed = False
    try:
        with second_target(args, settings) as other, \
                served(*serve_flags(settings)) as broker:
            targets = [Target("mockbroker", broker.bootstrap), other]
            say(f"mockbroker {broker.bootstrap} (pid {broker.pid}), {other.label} "
                f"{other.bootstrap}; settings: "
                + " ".join(f"{k}={v}" for k, v in settings.items()))
            for key in ((t.label, p) for t in targets for p in PROTOCOLS):
                rates[key], joins[key], leaves[key] = [], [], []

            def cell(target: Target, protocol: str) -> Cell:
                return Cell(target, protocol, args, classes, work)

            def each(turn: int, run: Callable[[Cell], None]) -> None:
                order = targets if turn % 2 == 0 else targets[::-1]
                protocols = PROTOCOLS if turn % 2 == 0 else PROTOCOLS[::-1]
                for target in order:
                    for protocol in protocols:
                        run(cell(target, protocol))

            for _ in range(args.warmup):
                for target in targets:
                    say(f"warm-up: word count on {target.label} ...")
                    word_count(cell(target, "classic"), warm, lines)
            for turn in range(args.rounds):
                def count(c: Cell) -> None:
                    rate = word_count(c, warm, lines)
                    rates[c.target.label, c.protocol].append(rate)
                    say(f"round {turn + 1}: word count {c.target.label} {c.protocol}: "
                        f"{rate.lines_per_s:,.0f} lines/s")

                def move(c: Cell) -> None:
                    join, leave = rebalance(c, state)
                    joins[c.target.label, c.protocol].append(join)
                    leaves[c.target.label, c.protocol].append(leave)
                    say(f"round {turn + 1}: rebalance {c.target.label} {c.protocol}: join "
                        f"{join:.3f} s, leave {leave:.3f} s")

                each(turn, count)
                each(turn, move)
    except CellFailed as exc:
        failed = True
        raise SystemExit(f"a cell failed: {exc}\n(logs kept in {work})") from None
    finally:
        if not failed and args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    report(args, targets, rates, joins, leaves)
    print(f"\n{time.perf_counter() - started:.0f} s in all; load average {load:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs; "
          f"confluent-kafka {confluent_kafka.__version__}")


if __name__ == "__main__":
    main()
