"""Transactions as Kafka's Java Admin sees them (the calls of ``kafka-transactions.sh``):
ListTransactions with and without a state filter, DescribeTransactions before and after the
commit, DescribeProducers of a partition with an open transaction.

The Java side is ``java/TxnAdmin.java``, run from source in its own JVM."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import confluent_kafka as ck
import pytest
from mockbroker import MockCluster
from wire.definitions import KAFKA_VERSION

# not converted to run on Kafka as well yet; a test marked with its own reason needs mockbroker
pytestmark = pytest.mark.mockbroker_only("unconverted")

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "TxnAdmin.java"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
#: starting a JVM on a busy machine, then a handful of requests
JVM_TIMEOUT_S = 120


def test_the_java_admin_lists_and_describes_transactions_and_producers(stack):
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("java"), \
        f"the Java Admin needs java and {missing} (bash ci/dev.sh setup fetches them)"
    cluster = stack.enter_context(MockCluster(brokers=3, topics={"payments": 2}))
    idle = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                        "transactional.id": "idle-one"})
    idle.init_transactions(30)  # a transactional id with no transaction open: Empty
    out = subprocess.run(["java", "-cp", ":".join(map(str, CLASSPATH)), str(SOURCE),
                          cluster.bootstrap_servers, "payments", "payer"],
                         capture_output=True, text=True, timeout=JVM_TIMEOUT_S)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    producer_id = cluster.call(lambda: cluster.core.transactions.find("payer").producer_id)
    assert lines == [
        "listed idle-one Empty", "listed payer Ongoing", "end",
        "listed payer Ongoing", "end",
        f"described payer Ongoing {producer_id} 0 60000 payments-0,payments-1",
        f"producer {producer_id} 0 0",  # its transaction starts at offset 0
        # Kafka's Java producer speaks transaction version 2: the commit bumps the epoch
        f"described payer CompleteCommit {producer_id} 1 60000 ",
    ]
