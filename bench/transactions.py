"""Transactions per second with confluent-kafka: mockbroker against another Kafka.

A transactional producer (``init_transactions`` once, untimed) runs N transactions of a small
fixed batch (10 records of 100 bytes by default, spread over the topic's partitions) to a
fresh topic, each one begin, produce, ``commit_transaction``; the figure is committed
transactions per second, with the median and 99th percentile time of one transaction.  Each
transaction is a few round trips whatever the batch (AddPartitionsToTxn, Produce, EndTxn), and
the next one may wait for the coordinator to finish writing the markers of this one.

Then a ``read_committed`` consumer reads the topic back from the start (every record of every
transaction, past the commit markers): the time from ``assign()`` to its first record, and
records per second from there to the last (``--transactions`` sets how many there are; a few
thousand are read in well under a second, so the rate is a rough figure).

With ``--bootstrap HOST:PORT`` (any Kafka broker with transactions, e.g. a one-node KRaft
cluster) the same runs go against it too and the ratio mockbroker / other of each rate is
printed (above 1: mockbroker is faster).

The broker runs in its own process (``python -m mockbroker.cli serve``), as it does for a
user's clients and as the other Kafka does.

    .venv/bin/python bench/transactions.py [--transactions 1000] [--batch 10] \\
        [--partitions 3] [--bootstrap localhost:9092]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

import confluent_kafka

# the benches run as scripts: make the repository importable for their shared helper
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.served import make_topic, served  # noqa: E402

PAYLOAD = b"x" * 100
WARMUP = 20  # transactions before the clock starts: connections, coordinator, metadata
DEADLINE_S = 120


def produce_transactions(bootstrap: str, topic: str, partitions: int, transactions: int,
                         batch: int) -> list[float]:
    """Seconds each of ``transactions`` committed transactions took (after the warm-up)."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap,
                                         "transactional.id": f"bench-{uuid.uuid4().hex[:12]}"})
    producer.init_transactions(30)
    times = []
    for n in range(WARMUP + transactions):
        start = time.perf_counter()
        producer.begin_transaction()
        for i in range(batch):
            producer.produce(topic, PAYLOAD, partition=i % partitions)
        producer.commit_transaction(30)
        if n >= WARMUP:
            times.append(time.perf_counter() - start)
    producer.flush(10)
    return times


def read_committed(bootstrap: str, topic: str, partitions: int,
                   expected: int) -> tuple[float, float]:
    """A read_committed consumer reading ``topic`` from the start: (seconds from assign() to
    its first record, records per second from there to the last)."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap,
                                         "group.id": f"bench-{uuid.uuid4().hex[:12]}",
                                         "isolation.level": "read_committed",
                                         "enable.auto.commit": False,
                                         "enable.partition.eof": False})
    seen = 0
    start = time.perf_counter()
    first = None
    deadline = start + DEADLINE_S
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, p,
                                                        confluent_kafka.OFFSET_BEGINNING)
                         for p in range(partitions)])
        while seen < expected and time.perf_counter() < deadline:
            # asking for no more than is left: consume() returns as soon as it has them all
            for message in consumer.consume(min(1000, expected - seen), 0.05):
                if message.error() is None:
                    if first is None:
                        first = time.perf_counter()
                    seen += 1
        end = time.perf_counter()
    finally:
        consumer.close()
    if seen != expected:
        raise RuntimeError(f"the read_committed consumer got {seen} of {expected} records")
    return first - start, (seen - 1) / (end - first)


def measure(bootstrap: str, transactions: int, batch: int, partitions: int) -> dict[str, float]:
    topic, partitions = make_topic(bootstrap, partitions, "bench-txn")
    times = produce_transactions(bootstrap, topic, partitions, transactions, batch)
    # the warm-up's transactions are in the topic too
    records = (WARMUP + transactions) * batch
    first, rate = read_committed(bootstrap, topic, partitions, records)
    return {"txn/s": transactions / sum(times),
            "median ms": statistics.median(times) * 1000,
            "p99 ms": statistics.quantiles(times, n=100)[98] * 1000,
            "read_committed first record ms": first * 1000,
            "read_committed records/s": rate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=10, help="records per transaction")
    parser.add_argument("--partitions", type=int, default=3,
                        help="partitions of the topic, each transaction writing to all")
    parser.add_argument("--bootstrap", "--compare", metavar="HOST:PORT", dest="other",
                        help="bootstrap of another Kafka to measure in the same run")
    args = parser.parse_args()
    with served() as broker:
        targets = [("mockbroker", broker.bootstrap)]
        if args.other:
            targets.append(("other", args.other))
        results = {}
        for label, bootstrap in targets:
            r = results[label] = measure(bootstrap, args.transactions, args.batch,
                                         args.partitions)
            print(f"{label:<10} {r['txn/s']:>8,.0f} txn/s   one transaction: median "
                  f"{r['median ms']:>6.2f} ms, p99 {r['p99 ms']:>6.2f} ms")
            print(f"{label:<10} read_committed: first record after "
                  f"{r['read_committed first record ms']:>6.1f} ms, then "
                  f"{r['read_committed records/s']:>9,.0f} records/s")
        if args.other:
            for figure in ("txn/s", "read_committed records/s"):
                ratio = results["mockbroker"][figure] / results["other"][figure]
                print(f"{figure}: mockbroker / other = {ratio:.2f}")


if __name__ == "__main__":
    main()
