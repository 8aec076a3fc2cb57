"""End-to-end latency of a Spark micro-batch: produce → Spark → sink topic, on mockbroker and
optionally on another Kafka.

A streaming query copies a fresh one-partition topic to another, starting a new micro-batch as
soon as the previous one ends (Spark's default trigger).  One record at a time is produced with
confluent-kafka and timed until a consumer of the sink topic sees it; each target gets a few
unmeasured records first, so Spark's first-batch costs stay out of the figures.  Prints the
median, 90th percentile and extremes per target; with ``--compare HOST:PORT`` the same query
runs against that Kafka in the same Spark session and the ratio of medians is printed
(mockbroker / other: below 1 is faster).

    .venv/bin/python bench/spark_latency.py [--records 30] [--compare localhost:9092]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from conftest_plugin.spark import spark_session
from mockbroker import MockCluster

WARM_UP = 5
TIMEOUT_S = 120


def make_topic(bootstrap: str, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def start_copy(spark, bootstrap: str, source: str, sink: str, checkpoint: str):
    query = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", source).option("startingOffsets", "latest").load()
             .selectExpr("key", "value")
             .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
             .option("topic", sink).option("checkpointLocation", checkpoint).start())
    deadline = time.monotonic() + TIMEOUT_S
    # the first trigger fixes "latest"; records produced before it would be skipped
    while query.lastProgress is None:
        if time.monotonic() > deadline or query.exception() is not None:
            raise RuntimeError(f"the query did not start: {query.exception()}")
        time.sleep(0.05)
    return query


def measure(spark, bootstrap: str, records: int) -> list[float]:
    """Latencies in milliseconds of ``records`` single-record round trips through Spark."""
    source, sink = make_topic(bootstrap, "spark-in"), make_topic(bootstrap, "spark-out")
    with tempfile.TemporaryDirectory(prefix="spark-latency-") as checkpoint:
        query = start_copy(spark, bootstrap, source, sink, checkpoint)
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": sink,
                                             "enable.auto.commit": False,
                                             "fetch.wait.max.ms": 10})
        consumer.assign([confluent_kafka.TopicPartition(sink, 0, 0)])
        latencies = []
        try:
            for i in range(WARM_UP + records):
                key = str(i).encode()
                start = time.perf_counter()
                producer.produce(source, value=b"x" * 100, key=key)
                producer.flush(TIMEOUT_S)
                while True:
                    message = consumer.poll(1.0)
                    if message is not None and message.error() is None and message.key() == key:
                        break
                    if time.perf_counter() - start > TIMEOUT_S:
                        raise RuntimeError(f"record {i} did not come through Spark in "
                                           f"{TIMEOUT_S} s ({query.exception()})")
                if i >= WARM_UP:
                    latencies.append((time.perf_counter() - start) * 1000)
        finally:
            consumer.close()
            stop_between_batches(query)
    return latencies


def stop_between_batches(query) -> None:
    # the last record is visible before its batch commits; stopping then aborts the batch
    deadline = time.monotonic() + TIMEOUT_S
    while query.status["isTriggerActive"] and time.monotonic() < deadline:
        time.sleep(0.01)
    query.stop()


def summary(latencies: list[float]) -> str:
    p90 = statistics.quantiles(latencies, n=10)[-1]
    return (f"median {statistics.median(latencies):7.0f} ms   p90 {p90:7.0f} ms   "
            f"min {min(latencies):6.0f} ms   max {max(latencies):6.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=30, help="measured round trips")
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    args = parser.parse_args()
    spark = spark_session("spark-latency")
    try:
        with MockCluster() as cluster:
            targets = [("mockbroker", cluster.bootstrap_servers)]
            if args.compare:
                targets.append(("other", args.compare))
            results = {}
            for label, bootstrap in targets:
                results[label] = measure(spark, bootstrap, args.records)
                print(f"spark micro-batch  {label:<10} {summary(results[label])}", flush=True)
            if args.compare:
                ratio = statistics.median(results["mockbroker"]) / \
                    statistics.median(results["other"])
                print(f"spark micro-batch: mockbroker / other = {ratio:.2f} "
                      f"(median latency; below 1 is faster)")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
