"""Three Apache Kafka brokers and their KRaft controller, one cluster for a whole test run.

Client tests that need several brokers (a broker stopped and started again, leaders moved, a
coordinator lost) run on :class:`KafkaCluster`: Kafka 4.4 as brokers 0, 1 and 2 (mockbroker's
ids) and a controller of its own, node :data:`CONTROLLER_ID`, each a JVM with a 256 MB heap,
on free loopback ports, with its data in the run's directory.  The controller stands alone so
that any brokers may stop, two at once included, while the quorum goes on.  The internal topics
have three replicas, and a killed broker is fenced within seconds.

One cluster serves every worker of a run (``pytest -n auto``: one process per worker).
:class:`SharedCluster` is a worker's handle on it: the first worker that needs it starts it,
under a file lock in a directory named after xdist's run id (:func:`run_key`), and writes
where its nodes listen and their process ids to a state file there, which the other workers
read.  The nodes run in sessions of their own, not tied to the worker that started them: the
main pytest process stops them when the run ends (:func:`pytest_unconfigure`, which
``tests/conftest.py`` imports), and a watchdog process started with them kills them should that
process end without doing so.  Without xdist the one pytest process does all of it.

A test holds the cluster with :meth:`SharedCluster.held`: shared while it only reads, or moves
the leaders of its own topics; exclusive while it stops brokers.  When an exclusive hold ends
the cluster is made whole again (:meth:`KafkaCluster.restore`): every broker running and in
Metadata, every replica in its partition's ISR, every partition led by its preferred replica.
Every wait is for a condition, asked of the brokers themselves.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

import wire
from tests.real_kafka import _LOG4J, JARS, RealKafka, _cluster_id, _free_ports, _text, ask
from wire import errors

BROKER_IDS = (0, 1, 2)
#: the controller's node id, apart from the brokers'
CONTROLLER_ID = 100
HEAP = "256m"
#: settings of every node beyond the tests' own: the internal topics on every broker, topics
#: created without a replication factor on three (as on mockbroker, whose default is
#: min(3, brokers); Kafka's default.replication.factor is 1), leaders moved back only when
#: asked (a test checks where they went), and a killed broker fenced soon
CLUSTER_SETTINGS = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
    "default.replication.factor": "3",
    "auto.leader.rebalance.enable": "false",
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "500",
}
START_TIMEOUT_S = 240
#: how long a condition of the cluster (a broker fenced or back, the ISR full) may take
WAIT_S = 90

OFFSETS_TOPIC = "__consumer_offsets"
METADATA = wire.request_class(3)
FIND_COORDINATOR = wire.request_class(10)
DESCRIBE_GROUPS = wire.request_class(15)
ELECT_LEADERS = wire.request_class(43)


class KafkaNode(RealKafka):
    """One node of the cluster: a broker (``node_id`` in :data:`BROKER_IDS`) or the
    controller.  Unlike :class:`RealKafka` its data outlives its process, so that it starts
    again as itself, and its process is not tied to the one that started it."""

    PORTS = 1

    def __init__(self, node_id: int, directory: Path, settings: dict[str, str], *,
                 heap: str = HEAP, jars: Path = JARS):
        super().__init__({**settings, **CLUSTER_SETTINGS}, heap=heap, jars=jars)
        self.node_id = node_id
        self.dir = directory
        self.pid = 0
        #: the process this worker started, which alone can tell how it ended
        self.process: subprocess.Popen | None = None

    @property
    def is_controller(self) -> bool:
        return self.node_id == CONTROLLER_ID

    @property
    def config(self) -> Path:
        return self.dir / "server.properties"

    @property
    def log(self) -> Path:
        return self.dir / "server.log"

    def properties(self, ports: list[int], controller_port: int = 0) -> dict[str, str]:
        """A broker's or the controller's ``server.properties``, listening on ``ports[0]``;
        ``controller_port`` is where the controller listens."""
        [self.port] = ports
        controller_port = self.port if self.is_controller else controller_port
        common = {"node.id": str(self.node_id),
                  "controller.quorum.voters": f"{CONTROLLER_ID}@127.0.0.1:{controller_port}",
                  "controller.listener.names": "CONTROLLER",
                  "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                  "log.dirs": str(self.dir / "data")}
        if self.is_controller:
            return {"process.roles": "controller", **common,
                    "listeners": f"CONTROLLER://127.0.0.1:{self.port}", **self.settings}
        return {"process.roles": "broker", **common,
                "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "inter.broker.listener.name": "PLAINTEXT", **self.settings}

    def write_config(self, port: int, controller_port: int) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        props = self.properties([port], controller_port)
        self.config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.dir / "log4j2.properties").write_text(_LOG4J.format(log=self.log))

    def _java(self) -> list[str]:
        return ["java", f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                "-cp", str(self.jars / "*")]

    def format_command(self, cluster_id: str) -> list[str]:
        return [*self._java(), "kafka.tools.StorageTool", "format",
                f"--cluster-id={cluster_id}", "--config", str(self.config),
                *self.format_arguments()]

    def launch(self) -> None:
        """Start the node's process on its formatted data, in a session of its own (its
        process group is what :meth:`kill` signals), and not ended with this process."""
        java = self._java()
        # (a JVM that crashes says so on its standard output, and in its error file)
        with (self.dir / "stderr.log").open("a") as stderr, \
                (self.dir / "stdout.log").open("a") as stdout:
            self.process = subprocess.Popen(
                [java[0], f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseSerialGC",
                 "-XX:TieredStopAtLevel=1", f"-XX:ErrorFile={self.dir / 'hs_err.log'}",
                 "-Djava.awt.headless=true", *java[1:], "kafka.Kafka", str(self.config)],
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                start_new_session=True)
        self.pid = self.process.pid

    def running(self) -> bool:
        """Whether the node's process runs (the process of that id, if any, runs this
        node's configuration: a process id may be used again once its process ended)."""
        if self.process is not None and self.process.pid == self.pid:
            return self.process.poll() is None
        if not _running(self.pid):
            return False
        try:
            return str(self.config) in Path(f"/proc/{self.pid}/cmdline").read_text()
        except OSError:
            return False

    def kill(self, sig: int = signal.SIGKILL, timeout: float = 60) -> None:
        """Signal the node's process group and wait until its process is gone: SIGKILL is a
        crash, SIGTERM a controlled shutdown (Kafka moves its leaders away first)."""
        if not self.running():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)
        deadline = time.monotonic() + timeout
        while self.running():
            if time.monotonic() > deadline:
                os.killpg(self.pid, signal.SIGKILL)
                deadline = time.monotonic() + timeout
            time.sleep(0.05)

    def state(self) -> dict:
        return {"id": self.node_id, "port": self.port, "pid": self.pid, "dir": str(self.dir)}

    def diagnosis(self) -> str:
        """What the node's files say of why it is not as expected, shortest first: how its
        process ended (when this worker started it), what the JVM printed, its error file, and
        its log's warnings and last lines (not the configuration it logs at start)."""
        if self.running():
            ended = f"running (pid {self.pid})"
        elif self.process is None or self.process.pid != self.pid:
            ended = f"not running (pid {self.pid})"
        elif self.process.returncode < 0:
            ended = f"killed by signal {-self.process.returncode}"
        else:
            ended = f"exited with status {self.process.returncode}"
        parts = [f"node {self.node_id} (port {self.port}): {ended}"]
        for name, keep in (("stderr.log", -1000), ("stdout.log", -1000), ("hs_err.log", 1500)):
            text = _text(self.dir / name).strip()
            if text:
                parts.append(f"  {name}: {text[keep:] if keep < 0 else text[:keep]}")
        lines = [line for line in _text(self.log).splitlines() if line.startswith("[")]
        notable = [line[:300] for line in lines
                   if any(f"] {level} " in line for level in ("WARN", "ERROR", "FATAL"))
                   and "should be defined in the controller role" not in line]
        parts += ["  its warnings:", *(f"    {line}" for line in notable[-8:])]
        parts += ["  its last lines:", *(f"    {line[:300]}" for line in lines[-5:])]
        return "\n".join(parts)

    def stop(self) -> None:
        """Kill the node, keeping its data (:class:`RealKafka` removes it)."""
        self.kill()


def _lasting_ports(count: int) -> list[int]:
    """Free loopback ports below the kernel's ephemeral range: a broker stopped in a test
    binds its port again, which an outgoing connection could otherwise have taken meanwhile
    (Linux gives those their local ports from that range)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return _free_ports(count)
    ports: list[int] = []
    while len(ports) < count:
        port = random.randrange(min(20000, low // 2), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if port not in ports:
            ports.append(port)
    return ports


def _group_of(partition: int, partitions: int) -> str:
    """A group id whose offsets live in ``partition`` of ``__consumer_offsets``: Kafka places
    a group by its id's Java hash code (made non-negative) modulo the partitions."""
    i = 0
    while True:
        name = f"kafka-cluster-probe-{i}"
        code = 0
        for unit in name:  # ASCII: one UTF-16 unit a character
            code = (31 * code + ord(unit)) & 0xFFFFFFFF
        code = code - (1 << 32) if code >= 1 << 31 else code
        if (0 if code == -(1 << 31) else abs(code)) % partitions == partition:
            return name
        i += 1


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not; one of ours is reaped here)."""
    if pid <= 0:
        return False
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


class KafkaCluster:
    """Brokers 0, 1, 2 and a controller.  Built by :meth:`create` (fresh ports and data, then
    :meth:`start`) or read back from a state file (:meth:`load`) by another worker."""

    def __init__(self, directory: Path, cluster_id: str, nodes: dict[int, KafkaNode]):
        self.dir = directory
        self.cluster_id = cluster_id
        self.nodes = nodes
        #: called each time nodes have been started, once their process ids are known
        self.on_launch = lambda: None
        #: the nodes that should be running (a wait fails at once when one is not)
        self.expected = {i for i, node in nodes.items() if node.pid and node.running()}

    # -- building and keeping -----------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, settings: dict[str, str]) -> "KafkaCluster":
        ids = [*BROKER_IDS, CONTROLLER_ID]
        nodes = {i: KafkaNode(i, directory / f"node-{i}", settings) for i in ids}
        nodes[CONTROLLER_ID].check()
        ports = dict(zip(ids, _lasting_ports(len(ids))))
        for i, node in nodes.items():
            node.write_config(ports[i], ports[CONTROLLER_ID])
        return cls(directory, _cluster_id(), nodes)

    @classmethod
    def load(cls, state: dict, settings: dict[str, str]) -> "KafkaCluster":
        nodes = {}
        for entry in state["nodes"]:
            node = KafkaNode(entry["id"], Path(entry["dir"]), settings)
            node.port, node.pid = entry["port"], entry["pid"]
            nodes[node.node_id] = node
        return cls(Path(state["dir"]), state["cluster_id"], nodes)

    def state(self) -> dict:
        return {"dir": str(self.dir), "cluster_id": self.cluster_id,
                "nodes": [node.state() for node in self.nodes.values()]}

    @property
    def brokers(self) -> dict[int, KafkaNode]:
        return {i: n for i, n in self.nodes.items() if i != CONTROLLER_ID}

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.brokers.values())

    def address(self, broker_id: int) -> tuple[str, int]:
        return "127.0.0.1", self.nodes[broker_id].port

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Format every node's storage (side by side), start the nodes, and return once every
        broker is in every broker's Metadata and ``__consumer_offsets`` is on all three, its
        ISR full and each partition loaded by its leader."""
        deadline = time.monotonic() + timeout
        formats = {i: subprocess.Popen(n.format_command(self.cluster_id),
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True) for i, n in self.nodes.items()}
        for i, process in formats.items():
            out, _ = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
            if process.returncode != 0:
                raise RuntimeError(f"formatting node {i}'s storage failed: {out[-2000:]}")
        try:
            for node in self.nodes.values():
                node.launch()
            self.expected = set(self.nodes)
            self.on_launch()
            self._wait(lambda: all(self.live_brokers(b) == set(BROKER_IDS)
                                   for b in BROKER_IDS), "every broker registered", deadline)
            # the first FindCoordinator creates __consumer_offsets, on every broker
            self._wait(lambda: self._group_coordinator_ready(), "the group coordinator",
                       deadline)
            self._wait(self.in_sync, "every replica in sync", deadline)
            self._wait(self.groups_loaded, "every group coordinator loaded", deadline)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Kill every node (what they stored goes with the run's directory)."""
        for node in self.nodes.values():
            node.kill()

    # -- what the brokers say ------------------------------------------------------------------

    def metadata(self, broker_id: int, topics: list[str] | None = None):
        """Broker ``broker_id``'s Metadata (v12) of ``topics`` (all with None), or None when
        it does not answer."""
        body = METADATA(topics=None if topics is None else [
            METADATA.MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=False, include_topic_authorized_operations=False)
        try:
            return ask(self.nodes[broker_id].port, 3, 12, body)
        except (OSError, EOFError):
            return None

    def running_brokers(self) -> list[int]:
        return [i for i, n in self.brokers.items() if n.running()]

    def live_brokers(self, asked: int) -> set[int] | None:
        """The brokers broker ``asked`` lists in Metadata (the registered, unfenced ones)."""
        found = self.metadata(asked, [])
        return None if found is None else {b.node_id for b in found.brokers}

    def partitions(self, asked: int | None = None) -> list | None:
        """Every partition of every topic, as broker ``asked`` (the first running one, when
        None) tells: ``(topic, partition)`` entries of Metadata."""
        running = self.running_brokers()
        asked = running[0] if asked is None and running else asked
        found = None if asked is None else self.metadata(asked)
        if found is None:
            return None
        return [(t.name, p) for t in found.topics for p in t.partitions]

    def in_sync(self) -> bool:
        """Whether, as every running broker tells, every running broker is registered and
        every partition has a leader and every replica in its ISR."""
        running = set(self.running_brokers())
        for asked in running:
            if self.live_brokers(asked) != running:
                return False
            found = self.partitions(asked)
            if found is None or any(p.leader_id < 0 or set(p.isr_nodes) != set(p.replica_nodes)
                                    for _, p in found):
                return False
        return True

    def groups_loaded(self) -> bool:
        """Whether the leader of each partition of ``__consumer_offsets`` has loaded it: it
        answers DescribeGroups for a group of that partition without
        COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR (a leader elected a moment ago
        loads its partition before it coordinates the groups there)."""
        found = self.metadata(self.running_brokers()[0], [OFFSETS_TOPIC])
        if found is None:
            return False
        [topic] = found.topics
        for p in topic.partitions:
            if p.leader_id < 0:
                continue
            try:
                [group] = ask(self.nodes[p.leader_id].port, 15, 5, DESCRIBE_GROUPS(
                    groups=[_group_of(p.partition_index, len(topic.partitions))],
                    include_authorized_operations=False)).groups
            except (OSError, EOFError):
                return False
            if group.error_code != errors.NONE:
                return False
        return True

    def _group_coordinator_ready(self) -> bool:
        for broker in BROKER_IDS:
            try:
                found = ask(self.nodes[broker].port, 10, 4, FIND_COORDINATOR(
                    key_type=0, coordinator_keys=["kafka-cluster-probe"]))
            except (OSError, EOFError):
                return False
            if found.coordinators[0].error_code != errors.NONE:
                return False
        return True

    # -- stopping and starting brokers ---------------------------------------------------------

    def stop_broker(self, broker_id: int, *, controlled: bool = False) -> None:
        """Kill a broker (SIGKILL, as a crash) or shut it down (``controlled``: SIGTERM, Kafka's
        controlled shutdown), and return once it is gone and every running broker has it out
        of Metadata, leading nothing."""
        self.expected.discard(broker_id)
        self.brokers[broker_id].kill(signal.SIGTERM if controlled else signal.SIGKILL)

        def fenced() -> bool:
            for asked in self.running_brokers():
                found = self.metadata(asked)
                if found is None or broker_id in {b.node_id for b in found.brokers} or any(
                        p.leader_id == broker_id for t in found.topics for p in t.partitions):
                    return False
            return True
        self._wait(fenced, f"broker {broker_id} fenced")

    def start_broker(self, broker_id: int) -> None:
        """Start a stopped broker again on its port and data, and return once every running
        broker lists it in Metadata and it is back in the ISR of every partition it is a
        replica of that has a leader (one without a leader has no one to catch up from)."""
        node = self.brokers[broker_id]
        if not node.running():
            node.launch()
            self.on_launch()
        self.expected.add(broker_id)

        def back() -> bool:
            for asked in self.running_brokers():
                found = self.metadata(asked)
                if found is None or broker_id not in {b.node_id for b in found.brokers}:
                    return False
                if any(broker_id in p.replica_nodes and p.leader_id >= 0 and
                       broker_id not in p.isr_nodes
                       for t in found.topics for p in t.partitions):
                    return False
            return True
        self._wait(back, f"broker {broker_id} back in Metadata and the ISRs")

    def restore(self) -> None:
        """Make the cluster whole: every broker running, registered and in every ISR, and
        each partition led by its preferred (first) replica."""
        stopped = [node for node in self.brokers.values() if not node.running()]
        for node in stopped:
            node.launch()
        if stopped:
            self.on_launch()
        self.expected = set(self.nodes)
        self._wait(self.in_sync, "every broker back and every replica in sync")
        self.elect_preferred()
        self._wait(self.groups_loaded, "every group coordinator loaded")

    def elect_preferred(self) -> None:
        """A preferred-leader election for every partition not led by its first replica,
        until each is."""
        def misled() -> dict[str, list[int]]:
            found = self.partitions() or []
            out: dict[str, list[int]] = {}
            for topic, p in found:
                if p.replica_nodes and p.leader_id != p.replica_nodes[0]:
                    out.setdefault(topic, []).append(p.partition_index)
            return out

        def elected() -> bool:
            wanted = misled()
            if wanted:
                self.elect(0, wanted)
            return not misled()
        self._wait(elected, "every partition led by its preferred replica")

    # -- the controller's requests -------------------------------------------------------------

    def _ask_any(self, api_key: int, version: int, body):
        for broker_id in self.running_brokers():
            with contextlib.suppress(OSError, EOFError):
                return ask(self.nodes[broker_id].port, api_key, version, body)
        raise ConnectionError("no broker answers")

    def elect(self, election_type: int, partitions: dict[str, list[int]]) -> dict:
        """ElectLeaders (0 preferred, 1 unclean): ``(topic, partition)`` -> error code."""
        body = ELECT_LEADERS(election_type=election_type, timeout_ms=30_000, topic_partitions=[
            ELECT_LEADERS.TopicPartitions(topic=t, partitions=ps) for t, ps in partitions.items()])
        found = self._ask_any(43, 2, body)
        return {(r.topic, p.partition_id): p.error_code
                for r in found.replica_election_results for p in r.partition_result}

    def diagnosis(self) -> str:
        """Each node's :meth:`KafkaNode.diagnosis`, and the room left where they store."""
        free = shutil.disk_usage(self.dir)
        try:
            memory = next(line for line in Path("/proc/meminfo").read_text().splitlines()
                          if line.startswith("MemAvailable"))
        except (OSError, StopIteration):
            memory = "MemAvailable unknown"
        return "\n".join([f"{free.free >> 20} MiB free in {self.dir}; {' '.join(memory.split())}",
                          *(node.diagnosis() for node in self.nodes.values())])

    def _wait(self, condition, what: str, deadline: float | None = None) -> None:
        """Poll ``condition`` until it holds; fail at ``deadline``, or at once when a node
        that should run has exited (its ports taken, say)."""
        deadline = time.monotonic() + WAIT_S if deadline is None else deadline
        while not condition():
            for i in self.expected:
                if not self.nodes[i].running():
                    raise RuntimeError(f"Kafka node {i} ended while the cluster waited for "
                                       f"{what}\n{self.diagnosis()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Kafka cluster: timed out waiting for {what}\n"
                                   f"{self.diagnosis()}")
            time.sleep(0.1)


# -- one cluster a run --------------------------------------------------------------------------

_RUN_KEY = pytest.StashKey[str]()


def run_key(config: pytest.Config) -> str:
    """What names this run: xdist's run id (every worker and the main process know it), or,
    without xdist, one made up for this process."""
    if hasattr(config, "workerinput"):
        return config.workerinput["testrunuid"]
    nodes = getattr(config.pluginmanager.getplugin("dsession"), "nodemanager", None)
    if nodes is not None:
        return nodes.testrunuid
    if _RUN_KEY not in config.stash:
        config.stash[_RUN_KEY] = uuid.uuid4().hex
    return config.stash[_RUN_KEY]


def run_directory(config: pytest.Config) -> Path:
    return Path(tempfile.gettempdir()) / f"mockbroker-kafka-cluster-{run_key(config)}"


def _main_pid(config: pytest.Config) -> int:
    """The pytest process that ends the run: a worker's parent, or this process."""
    return os.getppid() if hasattr(config, "workerinput") else os.getpid()


@contextlib.contextmanager
def _locked(path: Path, mode: int):
    with path.open("a") as handle:
        fcntl.flock(handle, mode)
        try:
            yield handle
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


#: what the watchdog runs: every second, whether the main pytest process still runs (the same
#: process: its start time in /proc is compared) and the run's directory is still there.  Once
#: either is gone it kills every node's process group and removes the directory, again each
#: second (a worker that outlived the main process may start a node anew) until the directory
#: has stayed away for three seconds
_WATCHDOG = """\
import json, os, shutil, signal, sys, time
pid, started, directory = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def start_time(p):
    try:
        with open(f"/proc/{p}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None
while os.path.isdir(directory) and start_time(pid) == started:
    time.sleep(1)
away, deadline = 0, time.monotonic() + 120
while away < 3 and time.monotonic() < deadline:
    try:
        with open(os.path.join(directory, "state.json")) as f:
            nodes = json.load(f)["nodes"]
    except (OSError, ValueError):
        nodes = []
    for node in nodes:
        try:
            with open(f"/proc/{node['pid']}/cmdline") as f:
                if node["dir"] in f.read():
                    os.killpg(node["pid"], signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(directory, ignore_errors=True)
    away = away + 1 if not os.path.exists(directory) else 0
    time.sleep(1)
"""


def _start_time(pid: int) -> str:
    """When process ``pid`` started (RuntimeError once it has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except FileNotFoundError:
        raise RuntimeError(f"the test run's main process ({pid}) has ended") from None


class SharedCluster:
    """A worker's handle on the run's cluster (see the module's docstring)."""

    def __init__(self, config: pytest.Config, settings: dict[str, str]):
        self.dir = run_directory(config)
        self.settings = settings
        self._main_pid = _main_pid(config)
        self.dir.mkdir(exist_ok=True)
        self.cluster = self._started()

    @property
    def _state_file(self) -> Path:
        return self.dir / "state.json"

    def _save(self, cluster: KafkaCluster) -> None:
        partial = self.dir / "state.json.partial"
        partial.write_text(json.dumps(cluster.state()))
        os.replace(partial, self._state_file)

    def _started(self) -> KafkaCluster:
        with _locked(self.dir / "start.lock", fcntl.LOCK_EX):
            failed = self.dir / "failed.txt"
            if failed.exists():
                raise RuntimeError(f"the run's Kafka cluster did not start: {failed.read_text()}")
            if self._state_file.exists():
                return self._load()
            # (a worker that outlives the main process starts nothing the watchdog would miss)
            started = _start_time(self._main_pid)
            subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG, str(self._main_pid), started, str(self.dir)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
            reasons = []
            for _ in range(2):  # a node that exits while starting (its port taken): once more
                cluster = KafkaCluster.create(self.dir, self.settings)
                cluster.on_launch = lambda cluster=cluster: self._save(cluster)
                try:
                    cluster.start()
                except RuntimeError as exc:  # the nodes are stopped
                    reasons.append(str(exc)[:6000])
                    for node in cluster.nodes.values():
                        shutil.rmtree(node.dir, ignore_errors=True)
                    continue
                except BaseException:
                    self._state_file.unlink(missing_ok=True)
                    raise
                return cluster
            self._state_file.unlink(missing_ok=True)
            failed.write_text("\n---\n".join(reasons))
            raise RuntimeError("the run's Kafka cluster did not start, twice:\n" +
                               "\n---\n".join(reasons))

    @contextlib.contextmanager
    def held(self, *, exclusive: bool):
        """The cluster, whole, for one test: shared with other tests that only read, or all
        to itself (``exclusive``), in which case it is made whole again afterwards.  A broker
        found stopped (a worker that died in a test) is started again first."""
        _start_time(self._main_pid)  # the run is not over
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        with _locked(self.dir / "use.lock", mode) as handle:
            self.cluster = self._load()
            while len(self.cluster.running_brokers()) < len(BROKER_IDS):
                fcntl.flock(handle, fcntl.LOCK_EX)
                self.cluster.restore()
                fcntl.flock(handle, mode)
                self.cluster = self._load()
            try:
                yield self.cluster
            finally:
                if exclusive:
                    self.cluster.restore()

    def _load(self) -> KafkaCluster:
        """The cluster as the state file says, which records each node started anew."""
        cluster = KafkaCluster.load(json.loads(self._state_file.read_text()), self.settings)
        cluster.on_launch = lambda: self._save(cluster)
        return cluster


def stop_run_cluster(config: pytest.Config) -> None:
    """Kill the run's cluster, if it was started, and remove its directory."""
    directory = run_directory(config)
    state = directory / "state.json"
    if state.exists():
        with contextlib.suppress(OSError, ValueError):
            KafkaCluster.load(json.loads(state.read_text()), {}).stop()
    shutil.rmtree(directory, ignore_errors=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run is over: the main process stops the run's Kafka cluster (a worker leaves it
    to the main process, as other workers may still use it)."""
    if not hasattr(config, "workerinput"):
        stop_run_cluster(config)
