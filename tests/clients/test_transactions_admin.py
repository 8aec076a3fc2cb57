"""Transactions as Kafka's Java Admin sees them (the calls of ``kafka-transactions.sh``):
ListTransactions with and without a state filter, DescribeTransactions before and after the
commit, DescribeProducers of a partition with an open transaction.

The Java side is ``java/TxnAdmin.java``, run from source in its own JVM.  The test runs on
mockbroker and on Apache Kafka (``target``), reading the listings for its own ids only."""

from __future__ import annotations

import shutil
from pathlib import Path

import confluent_kafka as ck

from tests import jvm
from wire.definitions import KAFKA_VERSION

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "TxnAdmin.java"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
#: starting a JVM on a busy machine, then a handful of requests
JVM_TIMEOUT_S = 120


def test_the_java_admin_lists_and_describes_transactions_and_producers(target):
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("java"), \
        f"the Java Admin needs java and {missing} (bash ci/dev.sh setup fetches them)"
    topic = target.create_topic("payments", 2)
    idle_id, payer = target.unique("idle-one"), target.unique("payer")
    idle = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                        "transactional.id": idle_id})
    idle.init_transactions(30)  # a transactional id with no transaction open: Empty
    out = jvm.run(":".join(map(str, CLASSPATH)), SOURCE, target.bootstrap_servers, topic, payer,
                  capture_output=True, text=True, timeout=JVM_TIMEOUT_S)
    assert out.returncode == 0, out.stderr[-3000:]
    # one Kafka serves many tests: the listings are read for this test's ids only
    lines = [line for line in out.stdout.splitlines()
             if not line.startswith("listed ") or line.split(" ")[1] in (idle_id, payer)]
    described = lines[5].split(" ")
    producer_id = int(described[3])
    assert producer_id >= 0
    assert lines == [
        f"listed {idle_id} Empty", f"listed {payer} Ongoing", "end",
        f"listed {payer} Ongoing", "end",
        f"described {payer} Ongoing {producer_id} 0 60000 {topic}-0,{topic}-1",
        f"producer {producer_id} 0 0",  # its transaction starts at offset 0
        # Kafka's Java producer speaks transaction version 2: the commit bumps the epoch
        f"described {payer} CompleteCommit {producer_id} 1 60000 ",
    ]
