"""Admin clients of both stock libraries with short timeouts, for the client tests."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import NamedTuple

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient

from mockbroker import MockCluster
from tests.jvm import run as jvm_run

TIMEOUT_S = 10
#: librdkafka's log goes through logging (shown for failing tests only): a client that outlives
#: its cluster by a moment logs refused reconnects
RDKAFKA_LOG = logging.getLogger("tests.librdkafka")


def kp_admin(stack, cluster: MockCluster) -> KafkaAdminClient:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers,
                             request_timeout_ms=5000, client_id="test-admin")
    stack.callback(admin.close)
    return admin


def ck_admin(cluster: MockCluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers,
                        "socket.timeout.ms": 5000, "logger": RDKAFKA_LOG})


def ck_result(future):
    return future.result(timeout=TIMEOUT_S)


def ck_error(future) -> ck.KafkaError:
    with pytest.raises(ck.KafkaException) as info:
        future.result(timeout=TIMEOUT_S)
    return info.value.args[0]


def wait_for(predicate, what: str, timeout: float = 30):
    """Poll ``predicate`` until it returns something true (returned), or fail after
    ``timeout`` seconds naming ``what`` was awaited.  The deadline is generous: a condition
    that holds returns at once, and a busy machine may take seconds to get there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")



class LoggedLines(logging.Handler):
    """Every message a client logs to :attr:`logger`, a logger of its own that passes nothing
    on: for a librdkafka client's ``logger`` with ``debug`` on, whose lines a test reads."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.logger = logging.getLogger(f"tests.client-log.{uuid.uuid4().hex}")
        self.logger.propagate, self.logger.level = False, logging.DEBUG
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

#: Kafka's command-line tools and their dependencies (bash ci/dev.sh setup fetches them)
KAFKA_TOOLS = Path(__file__).resolve().parents[2] / ".cache" / "jars" / "kafka-tools"


class ToolRun(NamedTuple):
    """How one of Kafka's command-line tools ended: its exit code, what it printed on stdout,
    and its stderr lines (without the logging library's own)."""

    code: int
    out: str
    err: list[str]

    @property
    def lines(self) -> list[str]:
        """Every non-empty line it printed, stdout's then stderr's."""
        return [line for line in self.out.splitlines() if line.strip()] + self.err


def run_kafka_tool(main_class: str, *args: str, timeout: float = 120,
                   stdin: str | None = None, jvm: tuple[str, ...] = ()) -> ToolRun:
    """Run one of Kafka's command-line tools (``kafka-consumer-groups.sh`` is
    ``org.apache.kafka.tools.consumer.group.ConsumerGroupCommand``) with ``args`` as given,
    which may fail; ``jvm`` are options for the JVM."""
    jars = sorted(KAFKA_TOOLS.glob("*.jar"))
    assert jars and shutil.which("java"), \
        f"Kafka's tools need java and the jars in {KAFKA_TOOLS} (bash ci/dev.sh setup)"
    done = jvm_run(":".join(map(str, jars)), main_class, *args, jvm=jvm,
                   input=stdin, capture_output=True, text=True, timeout=timeout)
    return ToolRun(done.returncode, done.stdout,
                   [line for line in done.stderr.splitlines()
                    if line.strip() and not line.startswith("SLF4J")])


def kafka_tool(main_class: str, bootstrap: str, *args: str, timeout: float = 120,
               stdin: str | None = None) -> str:
    """What one of Kafka's command-line tools prints; fails on a non-zero exit."""
    done = run_kafka_tool(main_class, "--bootstrap-server", bootstrap, *args, timeout=timeout,
                          stdin=stdin)
    assert done.code == 0, f"{main_class} {' '.join(args)}: {chr(10).join(done.err)[-3000:]}"
    return done.out


#: the franz-go client of tests/clients/go, built by set-up
GO_CLIENT = Path(__file__).resolve().parents[2] / ".cache" / "bin" / "franz-client"


def go_client(*args: str, timeout: float = 90, security: dict[str, str] | None = None) -> str:
    """What the franz-go client prints for one command; fails on a non-zero exit.
    ``security`` holds the client's ``KAFKA_*`` connection settings (see its main.go)."""
    if not GO_CLIENT.exists():
        pytest.fail(f"{GO_CLIENT} is not built: bash ci/dev.sh setup builds it with Go")
    done = subprocess.run([str(GO_CLIENT), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(security or {})})
    assert done.returncode == 0, f"franz-client {' '.join(args)}: {done.stderr[-3000:]}"
    return done.stdout


#: the kafkajs client of tests/clients/node (set-up installs its node_modules)
NODE_CLIENT = Path(__file__).resolve().parent / "node" / "client.js"


def node_client(*args: str, timeout: float = 90, security: dict[str, str] | None = None) -> str:
    """What the kafkajs client prints for one command; fails on a non-zero exit.
    ``security`` holds the client's ``KAFKA_*`` connection settings (see its client.js)."""
    if shutil.which("node") is None or not (NODE_CLIENT.parent / "node_modules").is_dir():
        pytest.fail("the kafkajs client needs node, and bash ci/dev.sh setup to install it")
    done = subprocess.run(["node", str(NODE_CLIENT), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(security or {})})
    assert done.returncode == 0, f"kafkajs client {' '.join(args)}: {done.stderr[-3000:]}"
    return done.stdout
