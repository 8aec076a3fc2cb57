"""Apache Kafka itself, as the second target of the client tests.

:class:`RealKafka` formats and starts one KRaft node (broker and controller in one process)
from the jars ``bash ci/dev.sh setup`` fetches into ``.cache/jars/kafka-broker/``, on free
loopback ports, with its data in a temporary directory, and stops it again.  ``start()``
returns once the node logs that it started and its group and transaction coordinators answer
FindCoordinator, so a test never waits on a coordinator still loading.
"""

from __future__ import annotations

import base64
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import wire

ROOT = Path(__file__).resolve().parents[1]
JARS = ROOT / ".cache" / "jars" / "kafka-broker"
#: settings every test run gives the broker: one node, and no waiting before a first rebalance
#: (mockbroker's default too)
BASE_SETTINGS = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}
_LOG4J = """\
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
"""


class KafkaUnavailable(RuntimeError):
    """The jars or java are missing: the reason says what to run."""


class _ExitedWhileStarting(RuntimeError):
    """The broker's process ended before it was ready."""


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def ask(port: int, api_key: int, version: int, body, host: str = "127.0.0.1", *,
        client_id: str = "real-kafka-probe") -> object:
    """The answer to one request, sent on a connection of its own."""
    with socket.create_connection((host, port), timeout=5) as conn, \
            conn.makefile("rb") as answers:
        conn.sendall(wire.encode_request(api_key, version, 1, client_id, body))
        size = int.from_bytes(answers.read(4), "big")
        frame = answers.read(size)
        if len(frame) < size:
            raise ConnectionError("closed mid-answer")
        return wire.decode_response(api_key, version, frame)[1]


class RealKafka:
    #: how many free loopback ports :meth:`properties` is given
    PORTS = 2

    def __init__(self, settings: dict[str, str] | None = None, *, heap: str = "384m",
                 jars: Path = JARS):
        self.settings = {**BASE_SETTINGS, **(settings or {})}
        self.heap = heap
        self.jars = jars
        self.process: subprocess.Popen | None = None
        self.dir: Path | None = None
        self.port = 0

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def check(self) -> None:
        """KafkaUnavailable unless java and the broker's jars are here."""
        if shutil.which("java") is None:
            raise KafkaUnavailable("Apache Kafka needs java on the PATH")
        if not any(self.jars.glob("kafka_2.13-*.jar")):
            raise KafkaUnavailable(f"Apache Kafka's jars are not in {self.jars}: run "
                                   f"bash ci/dev.sh setup")

    def properties(self, ports: list[int]) -> dict[str, str]:
        """The node's ``server.properties`` on ``ports`` (:data:`PORTS` of them), which also
        sets :attr:`port`, the PLAINTEXT port the readiness probes ask.  A subclass with more
        listeners overrides it."""
        self.port, controller = ports
        return {
            "process.roles": "broker,controller", "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.dir / "data"), **self.settings}

    def format_arguments(self) -> list[str]:
        """Arguments StorageTool's ``format`` is given beyond the cluster id and the
        configuration (SCRAM users, say)."""
        return []

    def start(self, timeout: float = 180) -> "RealKafka":
        """Kafka on fresh ports with a fresh data directory, once its group and transaction
        coordinators answer.  A broker that exits while starting (its ports taken between
        being picked and bound, or its JVM gone) is started once more, anew; a second exit
        raises, with the reasons of both.  ``timeout`` bounds both tries together."""
        self.check()
        deadline = time.monotonic() + timeout
        reasons = []
        for _ in range(2):
            try:
                return self._start_once(deadline)
            except _ExitedWhileStarting as exc:
                reasons.append(str(exc))
        raise RuntimeError("Kafka exited during start-up, twice:\n" + "\n---\n".join(reasons))

    def _start_once(self, deadline: float) -> "RealKafka":
        self.dir = Path(tempfile.mkdtemp(prefix="real-kafka-"))
        props = self.properties(_free_ports(self.PORTS))
        config = self.dir / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        log = self.dir / "server.log"
        (self.dir / "log4j2.properties").write_text(_LOG4J.format(log=log))
        java = ["java", f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                "-cp", str(self.jars / "*")]
        formatted = subprocess.run(
            [*java, "kafka.tools.StorageTool", "format",
             f"--cluster-id={_cluster_id()}", "--config", str(config),
             *self.format_arguments()],
            capture_output=True, text=True, timeout=max(1.0, deadline - time.monotonic()))
        if formatted.returncode != 0:
            raise RuntimeError(f"formatting Kafka's storage failed: {formatted.stderr[-2000:]}")
        with (self.dir / "stderr.log").open("w") as stderr:  # the process has its own copy
            self.process = subprocess.Popen(
                [*java[:1], f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseG1GC",
                 "-Djava.awt.headless=true", *java[1:], "kafka.Kafka", str(config)],
                stdout=subprocess.DEVNULL, stderr=stderr,
                start_new_session=True, preexec_fn=_ended_with_this_process())
        try:
            self._wait(lambda: "Kafka Server started" in _text(log), deadline, log)
            for key_type, key in ((0, "real-kafka-probe"), (1, "real-kafka-probe")):
                self._wait(lambda: self._coordinator_ready(key_type, key), deadline, log)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self, ready, deadline: float, log: Path) -> None:
        while not ready():
            if self.process.poll() is not None:
                raise _ExitedWhileStarting(
                    f"Kafka exited during start-up (exit status {self.process.returncode}); "
                    f"its stderr: {_text(log.parent / 'stderr.log')[-1000:]!r}; "
                    f"its log: {_text(log)[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kafka did not start in time: {_text(log)[-3000:]}")
            time.sleep(0.1)

    def _coordinator_ready(self, key_type: int, key: str) -> bool:
        """Whether FindCoordinator for a group (0) or transactional id (1) is answered with a
        coordinator: Kafka creates ``__consumer_offsets`` or ``__transaction_state`` on the
        first ask and loads it before it says yes."""
        cls = wire.request_class(10)
        try:
            found = ask(self.port, 10, 4, cls(key_type=key_type, coordinator_keys=[key]))
        except OSError:
            return False
        return found.coordinators[0].error_code == 0

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


#: Linux's prctl option that signals a process when the thread that started it is gone
_PR_SET_PDEATHSIG = 1


def _ended_with_this_process():
    """What the broker's process runs before Kafka's: a SIGTERM for it once the thread that
    started it is gone.  A test worker that passes its timeout exits without the fixture's
    teardown, and its Kafka (a JVM of hundreds of MB) would otherwise run on.  None where
    there is no prctl."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it

    def ask() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return ask


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64, unpadded (one in 32 starts
    with "-", so it is passed as ``--cluster-id=ID``, never as a separate argument)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
