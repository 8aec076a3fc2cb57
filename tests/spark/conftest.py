"""What the Spark tests share: producing input with a stock client, running queries to the end,
and reading what landed in Kafka.

PySpark and Java are test dependencies of this project: a missing one is a set-up error here,
never a reason to skip (``find_java`` is checked at import, pyspark imported directly).

Most tests use the plugin's ``spark`` fixture (``local[2]``).  ``spark_standalone`` is a Spark
standalone cluster (:mod:`tests.spark.standalone`) for the worker's run, started on first use:
a master and two workers on loopback, from PySpark's own ``bin/spark-class``.
``spark_cluster_driver`` is a driver on it in a process of its own, with one executor per
worker; ``tests/spark/test_standalone_cluster.py`` runs its jobs.  The logs of all of them are
in one temporary directory, whose tails a failing test's report shows.

To run the cluster tests on a cluster beyond this machine, name its master:
``MOCKBROKER_SPARK_MASTER=spark://HOST:7077``, with ``MOCKBROKER_SPARK_CHECKPOINTS`` a directory
(or ``hdfs://...``) this machine and every worker share.  Nothing is started then; the driver
and the tests' brokers listen on the address this machine reaches the master from, which the
workers must reach in turn.  The cluster must run PySpark's Spark version, with two free
cores and 512 MB for each of two executors.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field

import confluent_kafka as ck
import pyspark  # noqa: F401  -- a test dependency: its absence must fail, not skip
import pytest
from kafka import KafkaProducer

from conftest_plugin.spark import find_java
from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.spark.standalone import MASTER_ENV, ClusterDriver, StandaloneCluster

if find_java() is None:
    raise RuntimeError("the Spark tests need Java 17 or newer (JAVA_HOME or java on PATH)")

#: how long a query may take to catch up before a test gives up on it
QUERY_TIMEOUT_S = 90


@dataclass
class In:
    """A record to produce: value, and optionally key, partition, headers and timestamp."""

    value: str
    key: str | None = None
    partition: int | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    timestamp_ms: int | None = None


def produce(bootstrap: str, topic: str, records: list[In]) -> None:
    """Produce ``records`` in order (acks=all) and wait until every one is acknowledged."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=1)
    try:
        futures = [producer.send(topic, value=r.value.encode(),
                                 key=None if r.key is None else r.key.encode(),
                                 partition=r.partition, headers=r.headers or None,
                                 timestamp_ms=r.timestamp_ms)
                   for r in records]
        producer.flush(30)
        for f in futures:
            f.get(timeout=30)
    finally:
        producer.close(timeout=5)


def unique(prefix: str) -> str:
    """A name no other query or table of this Spark session uses."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def run_to_end(writer, timeout: float = QUERY_TIMEOUT_S):
    """Start an ``availableNow`` query from ``writer`` and wait until it has read everything
    there was when it started; returns the stopped query (its error, if any, raised)."""
    query = writer.trigger(availableNow=True).start()
    try:
        finished = query.awaitTermination(timeout)
    finally:
        if query.isActive:
            query.stop()
    assert finished, f"query {query.name or query.id} did not finish in {timeout} s"
    return query


def memory_query(spark, df, timeout: float = QUERY_TIMEOUT_S) -> list:
    """Run a streaming ``df`` to the end into a memory table; its rows, sorted."""
    name = unique("rows")
    run_to_end(df.writeStream.format("memory").queryName(name), timeout)
    try:
        return sorted(spark.table(name).collect())
    finally:
        spark.catalog.dropTempView(name)


def landed(cluster: MockCluster, topic: str) -> list[tuple[int, int, str | None, str | None,
                                                         list[tuple[str, bytes | None]]]]:
    """Everything in ``topic`` as (partition, offset, key, value, headers), in offset order."""
    return [(r.partition, r.offset, r.key, r.value, [(h.key, h.raw) for h in r.headers])
            for r in cluster.admin.records(topic, limit=100_000)]


def consumed(bootstrap: str, topic: str, timeout: float = 30) -> list[tuple]:
    """Everything in ``topic`` as (partition, offset, key, value), in offset order, read by a
    plain consumer to the high watermarks it found on starting: :func:`landed` on either
    target, cheap enough to poll.  For topics without transactions, whose last offset is a
    record (a commit marker there would leave the reader waiting for it, then failing)."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"),
                            "enable.auto.commit": False, "logger": RDKAFKA_LOG})
    try:
        partitions = consumer.list_topics(topic, timeout=timeout).topics[topic].partitions
        ends = {p: consumer.get_watermark_offsets(ck.TopicPartition(topic, p),
                                                  timeout=timeout)[1] for p in partitions}
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING)
                         for p, end in ends.items() if end > 0])
        pending = {p for p, end in ends.items() if end > 0}
        out: list[tuple] = []

        def drained() -> bool:
            for msg in consumer.consume(500, 0.2):
                assert msg.error() is None, msg.error()
                p, o = msg.partition(), msg.offset()
                if o < ends[p]:
                    out.append((p, o, text(msg.key()), text(msg.value())))
                if o + 1 >= ends[p]:
                    pending.discard(p)
            return not pending
        wait_for(drained, f"{topic} to its high watermarks {ends}", timeout)
        return sorted(out)
    finally:
        consumer.close()


def text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode()


def read_back(spark, bootstrap: str, topic: str) -> list[tuple]:
    """Everything in ``topic`` as (partition, offset, key, value, headers), read by Spark in
    a batch query: :func:`landed` as a client sees it, on either target."""
    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic).option("includeHeaders", "true").load()
            .selectExpr("partition", "offset", "CAST(key AS STRING)", "CAST(value AS STRING)",
                        "headers").collect())
    return sorted((r[0], r[1], r[2], r[3], [(h.key, bytes(h.value)) for h in r[4] or []])
                  for r in rows)


def start_copy(spark, bootstrap: str, checkpoint: str, source: str = "in", sink: str = "out"):
    """A streaming query copying ``source`` to ``sink`` every 200 ms: key and value as they
    are, each record to the partition number it came from."""
    return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source).option("startingOffsets", "earliest").load()
            .selectExpr("key", "value", "partition")
            .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink).option("checkpointLocation", checkpoint)
            .trigger(processingTime="200 milliseconds").start())


@pytest.fixture
def checkpoint(tmp_path):
    """A fresh checkpoint directory for this test's query."""
    return str(tmp_path / "checkpoint")


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory):
    """A Spark standalone cluster for the worker's run, started on first use (or the one
    ``$MOCKBROKER_SPARK_MASTER`` names).  Its workers may still be registering when it is
    returned: a driver waits for its executors."""
    directory = tmp_path_factory.mktemp("spark-standalone")
    master = os.environ.get(MASTER_ENV)
    if master:
        yield StandaloneCluster.external(master, directory)
        return
    cluster = StandaloneCluster(directory).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def spark_cluster_driver(spark_standalone):
    """A Spark driver process on ``spark_standalone``, with its executors, for the worker's
    run."""
    driver = ClusterDriver(spark_standalone).start()
    try:
        yield driver
    finally:
        driver.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that ran on the standalone cluster reports the tails of its logs."""
    report = yield
    cluster = getattr(item, "funcargs", {}).get("spark_standalone")
    if report.failed and cluster is not None:
        report.sections.append(("Spark standalone cluster", cluster.logs()))
    return report
