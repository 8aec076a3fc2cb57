"""The registries the Schema Registry tests can run against: mockbroker's own, and Apicurio
Registry through its Confluent-compatible API.

Apache Kafka has no registry, and Confluent's own cannot be installed here (it is published
only on Confluent's package servers), so the second registry is Apicurio Registry 2.4.2: a
separate implementation of the same REST API that confluent-kafka's client speaks to.
``bash ci/dev.sh setup`` builds it from ``ci/apicurio/`` into ``.cache/apicurio/app/``, and
:class:`ApicurioRegistry` runs it: one process per test worker, on a free loopback port, with
its schemas in memory, started on first use and stopped when the worker's run ends.

A test takes ``registry_target``, ``(url, kind)`` with kind ``"mockbroker"`` or
``"apicurio"``, and runs once on each; ``registry_cluster`` is the MockCluster that is the Kafka
broker in both cases (and the mockbroker registry in the first).  Apicurio serves every test of
a worker, so subjects must be named afresh (:func:`unique_subject`) and schema ids compared
with each other rather than with fixed numbers.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from mockbroker import MockCluster
from tests.real_kafka import _ended_with_this_process, _free_ports

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / ".cache" / "apicurio" / "app"
#: the path of Apicurio's Confluent-compatible API (Confluent's REST API v1, as its 7.x serves it)
CCOMPAT = "/apis/ccompat/v7"
REGISTRY_TARGETS = ("mockbroker", "apicurio")


class ApicurioUnavailable(RuntimeError):
    """java or the built application is missing: the reason says what to run."""


class ApicurioRegistry:
    def __init__(self, *, heap: str = "384m"):
        self.heap = heap
        self.process: subprocess.Popen | None = None
        self.dir: Path | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """The base URL a Confluent client is given."""
        return f"http://127.0.0.1:{self.port}{CCOMPAT}"

    @staticmethod
    def check() -> None:
        if shutil.which("java") is None:
            raise ApicurioUnavailable("Apicurio Registry needs java on the PATH")
        if not (APP / "quarkus-run.jar").is_file():
            raise ApicurioUnavailable(f"Apicurio Registry is not built in {APP}: run "
                                      f"bash ci/dev.sh setup")

    def start(self, timeout: float = 120) -> "ApicurioRegistry":
        """The registry on a free port, returned once its Confluent API lists subjects.  A
        process that exits while starting (its port taken between being picked and bound) is
        started once more; a second exit raises with both logs."""
        self.check()
        deadline = time.monotonic() + timeout
        reasons = []
        for _ in range(2):
            self.dir = Path(tempfile.mkdtemp(prefix="apicurio-"))
            [self.port] = _free_ports(1)
            log = self.dir / "registry.log"
            with log.open("w") as out:  # the process has its own copy
                self.process = subprocess.Popen(
                    ["java", f"-Xmx{self.heap}", "-XX:TieredStopAtLevel=1",
                     f"-Dquarkus.http.port={self.port}", "-Dquarkus.http.host=127.0.0.1",
                     f"-Djava.io.tmpdir={self.dir}", "-jar", str(APP / "quarkus-run.jar")],
                    stdout=out, stderr=subprocess.STDOUT, cwd=self.dir,
                    start_new_session=True, preexec_fn=_ended_with_this_process())
            try:
                while not self._answers():
                    if self.process.poll() is not None:
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError("Apicurio Registry did not start in time: "
                                           f"{_tail(log)}")
                    time.sleep(0.1)
                else:
                    return self
                reasons.append(f"exit status {self.process.returncode}: {_tail(log)}")
            except BaseException:
                self.stop()
                raise
            self.stop()
        raise RuntimeError("Apicurio Registry exited during start-up, twice:\n" +
                           "\n---\n".join(reasons))

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/subjects", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

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


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-3000:]
    except FileNotFoundError:
        return ""


def unique_subject(base: str) -> str:
    """A name (subject, topic or group) no other test of the worker uses."""
    return f"{base}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def apicurio_registry():
    """One Apicurio Registry for the worker's whole run, started on first use."""
    registry = ApicurioRegistry().start()  # ApicurioUnavailable says what set-up step is missing
    yield registry
    registry.stop()


@pytest.fixture
def registry_cluster(stack) -> MockCluster:
    """The Kafka broker of a registry test, whichever registry it runs against."""
    return stack.enter_context(MockCluster(schema_registry=True))


@pytest.fixture(params=REGISTRY_TARGETS)
def registry_target(request, registry_cluster) -> tuple[str, str]:
    """Each registry test runs once on mockbroker's registry and once on Apicurio's:
    ``(url, kind)``, recorded in the test's report as its ``registry_target``."""
    request.node.user_properties.append(("registry_target", request.param))
    if request.param == "apicurio":
        return request.getfixturevalue("apicurio_registry").url, "apicurio"
    return registry_cluster.schema_registry_url, "mockbroker"
