"""Kafka Streams with ``processing.guarantee=exactly_once_v2``: a word count whose committed
output must count every word exactly once, also across a crash of the Streams JVM.

The app is ``java/WordCountEos.java`` run from source in its own JVM: it reads lines from an
input topic, regroups the words through a repartition topic, counts them in an in-memory store
(restored from its changelog after a crash) and writes every new count to an output topic.  So
it uses what exactly-once Streams needs of a broker: transactional producers (InitProducerId,
AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn), transaction markers, read_committed
fetches with aborted transactions and the last stable offset, and stable offset fetches.

Lines are produced by an idempotent confluent-kafka producer; the output is read by a
read_committed confluent-kafka consumer.  As the record cache is off, each count is written as
it changes, so what a reader sees of one word, in order, must be exactly 1, 2, ..., n: a count
written twice, skipped or out of order, or output of an aborted transaction, breaks that.
The crash test keeps lines coming and stops the JVM (SIGSTOP) until the output topic holds
records of an open transaction (its last stable offset below its high watermark), then kills
it (SIGKILL), so the aborted output is there for a reader to wrongly see.

The crash test runs on mockbroker and on Apache Kafka (``target``); the plain word count is
one of the conformance scenarios (``test_conformance.py``), on both too.  Topics get fresh names
in each test, so a cluster can be reused.
"""

from __future__ import annotations

import collections
import os
import random
import shutil
import signal
import subprocess
import threading
import uuid
from pathlib import Path

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from tests.jvm import program as jvm_program
from tests.clients.helpers import RDKAFKA_LOG, wait_for

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "WordCountEos.java"
#: kafka-streams and the kafka-clients it was built with (ci/dev.sh fetches these)
STREAMS_VERSION = "4.4.0"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-streams-{STREAMS_VERSION}.jar",
             ROOT / ".cache" / "jars" / f"kafka-clients-{STREAMS_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
PARTITIONS = 3
#: starting a JVM, compiling the source and a first rebalance are slow on a busy machine
START_TIMEOUT_S = 120
#: every count committed; after a crash that includes the killed instance's open transaction
#: timing out (Streams' transaction.timeout.ms is 10 s) and its member leaving the group
OUTPUT_TIMEOUT_S = 180
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]


#: Log4j 2 and its SLF4J binding, from Kafka's broker jars (ci/dev.sh fetches them): with them
#: on its classpath a Streams JVM logs what :data:`CLIENT_LOG4J` lets through to its stderr
LOG4J = [max((ROOT / ".cache" / "jars" / "kafka-broker").glob(f"{name}-[0-9]*.jar"),
             default=ROOT / ".cache" / "jars" / "kafka-broker" / f"{name}.jar")
         for name in ("log4j-api", "log4j-core", "log4j-slf4j-impl")]
#: the client logs of a Streams JVM: warnings, and the group membership of the streams protocol
#: (its heartbeats' statuses and the tasks it is given)
CLIENT_LOG4J = """\
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d{HH:mm:ss,SSS}] %p %m (%c{1})%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = ERR
logger.membership.name = org.apache.kafka.clients.consumer.internals.StreamsMembershipManager
logger.membership.level = info
logger.heartbeat.name = \
org.apache.kafka.clients.consumer.internals.StreamsGroupHeartbeatRequestManager
logger.heartbeat.level = info
"""


class StreamsApp:
    """The word-count JVM, seen through the lifecycle lines it prints; ``properties`` are more
    Streams settings, as ``KEY=VALUE``.  Its stderr goes to ``log``; with ``client_logs`` that
    includes the client's logs (:data:`CLIENT_LOG4J`)."""

    def __init__(self, bootstrap: str, app_id: str, source: str, sink: str, state_dir: Path,
                 log: Path, *properties: str, client_logs: bool = False):
        classpath, jvm = list(CLASSPATH), []
        if client_logs:
            config = log.with_suffix(".log4j2.properties")
            config.write_text(CLIENT_LOG4J)
            classpath[-1:] = LOG4J + classpath[-1:]
            jvm.append(f"-Dlog4j2.configurationFile={config}")
        missing = [str(p) for p in classpath if not p.exists()]
        assert not missing and shutil.which("java"), \
            f"the Streams tests need java and {missing} (bash ci/dev.sh setup fetches them)"
        self.app_id = app_id
        self.lines: list[str] = []
        self.log = log
        with open(log, "ab") as stderr:
            self.process = subprocess.Popen(
                [*jvm_program(SOURCE, os.pathsep.join(map(str, classpath)), options=jvm),
                 bootstrap, app_id, source, sink, str(state_dir), *properties],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def check(self) -> None:
        """Fail with what the app said if it failed or exited."""
        failed = [line for line in self.lines if line.startswith("failed")]
        exited = self.process.poll()
        if failed or (exited is not None and exited != -signal.SIGKILL):
            tail = self.log.read_text(errors="replace")[-4000:]
            raise AssertionError(f"Streams app {self.app_id} (exit {exited}) said "
                                 f"{self.lines}; stderr ends:\n{tail}")

    def wait_running(self) -> None:
        def running():
            self.check()
            return "state RUNNING" in self.lines

        wait_for(running, f"Streams app {self.app_id} RUNNING", timeout=START_TIMEOUT_S)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self._reader.join(10)

    def close(self) -> None:
        if any(line.startswith("failed") for line in self.lines):
            self.process.kill()  # a failed Streams client may take long to close
        if self.process.poll() is None:
            self.resume()  # in case a failed test left it stopped
            try:
                self.process.stdin.write("close\n")
                self.process.stdin.flush()
                self.process.wait(60)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self._reader.join(10)


class Output:
    """A read_committed reader of the output topic: every count it saw, per word, in order."""

    def __init__(self, stack, bootstrap: str, topic: str):
        self.consumer = ck.Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}",
            "isolation.level": "read_committed", "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "fetch.wait.max.ms": 100, "logger": RDKAFKA_LOG})
        stack.callback(self.consumer.close)
        self.consumer.subscribe([topic])
        self.seen: dict[str, list[int]] = collections.defaultdict(list)

    def poll(self) -> None:
        for message in self.consumer.consume(1000, timeout=0.2):
            assert message.error() is None, message.error()
            self.seen[message.key().decode()].append(int(message.value()))

    def latest(self) -> dict[str, int]:
        return {word: counts[-1] for word, counts in self.seen.items()}

    def wait_for_counts(self, expected: collections.Counter, app: StreamsApp) -> None:
        def done():
            app.check()
            self.poll()
            return self.latest() == expected

        try:
            wait_for(done, "the final counts in the committed output", timeout=OUTPUT_TIMEOUT_S)
        except AssertionError:
            raise AssertionError(f"committed output {self.latest()} never became "
                                 f"{dict(expected)}") from None


def create_topics(bootstrap: str, *names: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG})
    futures = admin.create_topics([NewTopic(name, PARTITIONS) for name in names])
    for future in futures.values():
        future.result(timeout=30)


def open_transaction_in(admin: AdminClient, topic: str) -> bool:
    """Whether some partition of ``topic`` has records of a transaction not yet ended (its last
    stable offset is below its high watermark)."""
    def ends(level: ck.IsolationLevel) -> dict[int, int]:
        futures = admin.list_offsets(
            {ck.TopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)},
            isolation_level=level, request_timeout=30)
        return {tp.partition: f.result().offset for tp, f in futures.items()}

    stable = ends(ck.IsolationLevel.READ_COMMITTED)
    high = ends(ck.IsolationLevel.READ_UNCOMMITTED)
    return any(stable[p] < high[p] for p in high)


class Lines:
    """An idempotent producer of random lines of words to ``topic``, keyed ``{tag}-{n}``."""

    def __init__(self, bootstrap: str, topic: str, tag: str, *, linger_ms: int):
        self.producer = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                     "linger.ms": linger_ms, "logger": RDKAFKA_LOG})
        self.topic, self.tag, self.sent = topic, tag, 0
        self.failures: list = []

    def send(self, rng: random.Random) -> list[str]:
        """Hands the producer one more line; returns its words."""
        line = rng.choices(WORDS, k=rng.randint(1, 6))
        self.producer.produce(self.topic, key=f"{self.tag}-{self.sent}".encode(),
                              value=" ".join(line).encode(),
                              on_delivery=lambda err, _msg: err and self.failures.append(err))
        self.sent += 1
        return line

    def flush(self) -> None:
        """Every line sent so far is acknowledged (or the test fails)."""
        assert self.producer.flush(30) == 0 and not self.failures, self.failures


def produce_lines(bootstrap: str, topic: str, count: int, rng: random.Random,
                  tag: str) -> collections.Counter:
    """``count`` lines of words, spread over the partitions; returns how often each word came."""
    lines = Lines(bootstrap, topic, tag, linger_ms=5)
    words: collections.Counter = collections.Counter()
    for _ in range(count):
        words.update(lines.send(rng))
        lines.producer.poll(0)
    lines.flush()
    return words


class Feeder:
    """Lines produced from a thread until :meth:`stop`, each acknowledged before the next: input
    that keeps the app busy, and so inside a transaction most of the time, however fast it
    works through what came before (a fixed amount of input may all be counted and committed
    before a freeze catches a transaction open)."""

    def __init__(self, bootstrap: str, topic: str, rng: random.Random, tag: str):
        self.words: collections.Counter = collections.Counter()
        self._stopping = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(bootstrap, topic, rng, tag),
                                        daemon=True)
        self._thread.start()

    def _run(self, bootstrap: str, topic: str, rng: random.Random, tag: str) -> None:
        try:
            lines = Lines(bootstrap, topic, tag, linger_ms=0)
            while not self._stopping.is_set():
                line = lines.send(rng)
                lines.flush()
                self.words.update(line)  # acknowledged: the app will count it
        except BaseException as exc:  # raised by stop()
            self._error = exc

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(60)

    def stop(self) -> collections.Counter:
        """Stops producing; how often each word came in the lines acknowledged."""
        self.close()
        assert not self._thread.is_alive(), "the feeding producer did not stop"
        if self._error is not None:
            raise self._error
        return self.words


def assert_counted_once(output: Output, expected: collections.Counter) -> None:
    """Each word's committed counts, in the order written, are exactly 1..n."""
    assert set(output.seen) == set(expected)
    wrong = {word: counts for word, counts in output.seen.items()
             if counts != list(range(1, expected[word] + 1))}
    assert not wrong, f"counts not exactly 1..n in the committed output: {wrong}"


def names() -> tuple[str, str, str]:
    run = uuid.uuid4().hex[:8]
    return f"wordcount-{run}", f"lines-{run}", f"counts-{run}"


def count_words_once(stack, bootstrap: str, tmp_path, *properties: str,
                     app_bootstrap: str | None = None) -> str:
    """The word count over 300 lines: every count committed once, and a clean close; returns
    the app's id.  ``properties`` are more Streams settings (``KEY=VALUE``); the app connects
    to ``app_bootstrap`` when given (the test's own producer and reader to ``bootstrap``)."""
    app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    expected = produce_lines(bootstrap, source, 300, random.Random(1), "a")
    app = StreamsApp(app_bootstrap or bootstrap, app_id, source, sink, tmp_path / "state",
                     tmp_path / "streams.log", *properties)
    stack.callback(app.close)
    app.wait_running()
    output = Output(stack, bootstrap, sink)
    output.wait_for_counts(expected, app)
    assert_counted_once(output, expected)

    app.close()
    assert "closed" in app.lines and app.process.returncode == 0, app.lines
    return app_id


def test_exactly_once_word_count_survives_a_killed_jvm(stack, target, tmp_path):
    bootstrap = target.bootstrap_servers
    app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    rng = random.Random(2)
    expected = produce_lines(bootstrap, source, 2000, rng, "before")
    state, log = tmp_path / "state", tmp_path / "streams.log"
    first = StreamsApp(bootstrap, app_id, source, sink, state, log)
    stack.callback(first.close)
    first.wait_running()
    output = Output(stack, bootstrap, sink)
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG})
    feeder = Feeder(bootstrap, source, rng, "during")
    stack.callback(feeder.close)  # if the test fails before it is stopped

    def frozen_in_a_transaction():
        """The JVM stopped while the output holds some counts, committed and not."""
        first.check()
        output.poll()
        first.stop()
        if output.seen and open_transaction_in(admin, sink):
            return True
        first.resume()
        return False

    wait_for(frozen_in_a_transaction, "the app mid-transaction", timeout=OUTPUT_TIMEOUT_S)
    # killed mid-stream: its transaction is never ended by the app, so it must be aborted (on
    # its timeout) and its counts stay hidden from read_committed readers
    first.kill()
    expected += feeder.stop()

    expected += produce_lines(bootstrap, source, 500, rng, "after")
    second = StreamsApp(bootstrap, app_id, source, sink, state, log)
    stack.callback(second.close)
    second.wait_running()
    output.wait_for_counts(expected, second)
    assert_counted_once(output, expected)
