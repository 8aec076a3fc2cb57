"""A Spark standalone cluster for the Spark tests, and a Spark driver in a process of its own.

:class:`StandaloneCluster` starts a master and two workers with the installed PySpark's own
launcher, ``pyspark/bin/spark-class`` (the pip package has no ``sbin/start-master.sh``): on
loopback, on ports each JVM picks itself and logs (read back from the logs, so no port is
picked and then lost to another process), web UIs on ephemeral ports, each worker offering one
core and 512 MB.  Its logs and the workers' directories (each executor's ``stdout`` and
``stderr``) are in one directory, which :meth:`StandaloneCluster.logs` summarises.  Every
process gets a SIGTERM when the test process ends, teardown or not.
:meth:`StandaloneCluster.external` stands for a cluster someone else runs instead
(``$MOCKBROKER_SPARK_MASTER``): nothing is started or stopped, and the address this machine
reaches it from is what the driver and the brokers listen on.

:class:`ClusterDriver` runs :mod:`tests.spark.cluster_driver` in a new Python process, with a
SparkSession of its own on the cluster's master: a driver JVM apart from the test worker's
``local[2]`` one (one Python process holds one SparkContext, and the ``spark`` fixture's stays
untouched), and one executor of one core and 512 MB on each worker.  The test sends it jobs
by name, one JSON line each on its stdin, and reads each result as one JSON line.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from tests.real_kafka import _ended_with_this_process

ROOT = Path(__file__).resolve().parents[2]
#: a master someone else runs, ``spark://HOST:PORT``: the cluster tests use it instead of
#: starting one
MASTER_ENV = "MOCKBROKER_SPARK_MASTER"
#: with such a master, where checkpoints go: a directory (or a URI Spark reads, hdfs://...)
#: that this machine and every worker see
CHECKPOINTS_ENV = "MOCKBROKER_SPARK_CHECKPOINTS"
#: executors of one core each, one per worker on the cluster started here
EXECUTORS = 2
#: memory of each executor (Spark refuses less than 450 MB) and of the driver's JVM
EXECUTOR_MEMORY = "512m"
#: heap of the master's and the workers' JVMs
DAEMON_MEMORY = "256m"
#: options of every JVM here (master, workers, executors, driver): on two busy cores, a
#: single-threaded collector and no optimising compiler (C1 only) more than halved the time of
#: tests/spark/test_standalone_cluster.py, start-up included, when measured
JVM_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
START_TIMEOUT_S = 120
#: lines of each log a failure report shows
LOG_TAIL = 30


def spark_home() -> Path:
    """The installed PySpark's directory, which holds Spark's jars and ``bin/``."""
    import pyspark
    return Path(pyspark.__file__).resolve().parent


class StandaloneCluster:
    """A master and :data:`EXECUTORS` workers on loopback (:meth:`start`), or an existing
    master (:meth:`external`)."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.master_url = ""
        #: the address the executors reach this machine at: the driver and the brokers of the
        #: cluster tests listen there
        self.host = "127.0.0.1"
        self.external_master = False
        self.processes: list[subprocess.Popen] = []

    @classmethod
    def external(cls, master_url: str, directory: Path) -> "StandaloneCluster":
        """The master at ``master_url`` (``spark://HOST:PORT``), run by someone else; its
        workers must reach this machine at the address it reaches the master from."""
        match = re.fullmatch(r"spark://([^:/]+):(\d+)", master_url.strip())
        if match is None:
            raise ValueError(f"{MASTER_ENV} must be spark://HOST:PORT, not {master_url!r}")
        cluster = cls(directory)
        cluster.master_url, cluster.external_master = match.group(0), True
        with socket.create_connection((match.group(1), int(match.group(2))), timeout=10) as s:
            cluster.host = s.getsockname()[0]
        return cluster

    def start(self, timeout: float = START_TIMEOUT_S) -> "StandaloneCluster":
        """The master, once it leads, and the workers, launched: they register with it while
        a driver starts (:meth:`wait_for_workers`)."""
        deadline = time.monotonic() + timeout
        try:
            master = self._launch("master", "org.apache.spark.deploy.master.Master",
                                  "--host", self.host, "--port", "0", "--webui-port", "0")
            log = self._wait(master, "master", r"New state: ALIVE", deadline)
            self.master_url = re.search(r"Starting Spark master at (spark://\S+)", log)[1]
            for i in range(1, EXECUTORS + 1):
                self._launch(f"worker-{i}", "org.apache.spark.deploy.worker.Worker",
                             "--host", self.host, "--port", "0", "--webui-port", "0",
                             "--cores", "1", "--memory", EXECUTOR_MEMORY,
                             "--work-dir", str(self.dir / f"worker-{i}"), self.master_url)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_for_workers(self, timeout: float = START_TIMEOUT_S) -> None:
        """Return once every worker started here has registered with the master."""
        deadline = time.monotonic() + timeout
        for i, worker in enumerate(self.processes[1:], 1):
            self._wait(worker, f"worker-{i}", r"Successfully registered with master", deadline)

    def environment(self) -> dict[str, str]:
        """The environment of every process here: this one's, with Spark's configuration
        directory an empty one (no ``spark-env.sh`` or ``spark-defaults.conf`` of the
        machine's), scratch space (shuffle files, fetched jars) in :attr:`dir`, and
        :attr:`host` as the address to bind."""
        conf, scratch = self.dir / "conf", self.dir / "scratch"
        conf.mkdir(parents=True, exist_ok=True)
        scratch.mkdir(parents=True, exist_ok=True)
        return {**os.environ, "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_DIRS": str(scratch),
                "SPARK_LOCAL_IP": self.host, "SPARK_LAUNCHER_OPTS": JVM_OPTIONS}

    def _launch(self, name: str, main_class: str, *args: str) -> subprocess.Popen:
        env = {**self.environment(), "SPARK_HOME": str(spark_home()),
               "SPARK_DAEMON_MEMORY": DAEMON_MEMORY, "SPARK_DAEMON_JAVA_OPTS": JVM_OPTIONS}
        with (self.dir / f"{name}.log").open("w") as log:  # the process has its own copy
            process = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), main_class, *args],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True, preexec_fn=_ended_with_this_process())
        self.processes.append(process)
        return process

    def _wait(self, process: subprocess.Popen, name: str, ready: str, deadline: float) -> str:
        """``name``'s log once it has a line matching ``ready``."""
        log = self.dir / f"{name}.log"
        while True:
            text = log.read_text(errors="replace")
            if re.search(ready, text):
                return text
            if process.poll() is not None:
                raise RuntimeError(f"Spark's {name} exited while starting (exit status "
                                   f"{process.returncode}):\n{self.logs()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Spark's {name} did not start in time:\n{self.logs()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop the workers (and with them their executors), then the master."""
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        self.processes = []

    def checkpoint(self, fallback: Path) -> str:
        """A new checkpoint location every executor sees: ``fallback`` on the cluster started
        here (one machine), a new directory in ``$MOCKBROKER_SPARK_CHECKPOINTS`` with an
        external master."""
        if not self.external_master:
            return str(fallback)
        shared = os.environ.get(CHECKPOINTS_ENV)
        if not shared:
            raise RuntimeError(f"with {MASTER_ENV}, set {CHECKPOINTS_ENV} to a directory "
                               f"(or hdfs://... URI) this machine and every worker share: "
                               f"executors keep a query's state there")
        return f"{shared.rstrip('/')}/checkpoint-{uuid.uuid4().hex[:10]}"

    def logs(self) -> str:
        """Where the logs are, and the last lines of each: the master's, the workers', every
        executor's stderr (``worker-N/APP/EXECUTOR/stderr``) and the driver's."""
        files = sorted(self.dir.glob("*.log")) + sorted(self.dir.glob("worker-*/*/*/stderr"))
        parts = [f"Spark standalone logs in {self.dir}"
                 + (f" (master {self.master_url}, run elsewhere)" if self.external_master
                    else "")]
        for path in files:
            lines = path.read_text(errors="replace").splitlines()[-LOG_TAIL:]
            parts.append(f"--- {path.relative_to(self.dir)} (last {len(lines)} lines)\n"
                         + "\n".join(lines))
        return "\n".join(parts)


class DriverError(RuntimeError):
    """A job failed in the driver (the message is its traceback), or the driver is gone."""


class ClusterDriver:
    """A Spark driver process on ``cluster``'s master; :meth:`call` runs one of the jobs of
    :mod:`tests.spark.cluster_driver` there."""

    def __init__(self, cluster: StandaloneCluster):
        self.cluster = cluster
        self.process: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        #: the driver's stderr, Spark's driver logs among it
        self.log = cluster.dir / "driver.log"

    def start(self, timeout: float = START_TIMEOUT_S) -> "ClusterDriver":
        """The driver, once its session is up and :data:`EXECUTORS` executors registered."""
        work = self.cluster.dir / "driver"
        env = self.cluster.environment()
        for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET"):
            env.pop(name, None)  # a new JVM of its own, never a gateway already running
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.spark.cluster_driver",
                 "--master", self.cluster.master_url, "--host", self.cluster.host,
                 "--work", str(work), "--executors", str(EXECUTORS),
                 "--memory", EXECUTOR_MEMORY, "--java-options", JVM_OPTIONS],
                cwd=ROOT, env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
                preexec_fn=_ended_with_this_process())
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        try:
            if not self.cluster.external_master:
                self.cluster.wait_for_workers(timeout)
            self._reply("the driver's session and executors", timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _read(self, stream) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def _reply(self, what: str, timeout: float):
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise DriverError(f"no answer from the Spark driver in {timeout} s for {what}:\n"
                              f"{self.cluster.logs()}") from None
        if line is None:
            self._lines.put(None)  # stays gone for later calls
            raise DriverError(f"the Spark driver exited (status {self.process.wait(10)}) "
                              f"during {what}:\n{self.cluster.logs()}")
        reply = json.loads(line)
        if "error" in reply:
            raise DriverError(f"{what} failed in the Spark driver:\n{reply['error']}")
        return reply["result"]

    def call(self, job: str, timeout: float = 180, **args):
        """Run ``job`` with ``args`` (JSON values) in the driver; its result."""
        self.process.stdin.write(json.dumps({"job": job, **args}) + "\n")
        self.process.stdin.flush()
        return self._reply(f"job {job}", timeout)

    def stop(self) -> None:
        """Stop the session (the application ends, and with it its executors), then the
        process."""
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                self.call("exit", timeout=60)
            except (DriverError, OSError):
                pass
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self.process = None
