"""Produce-then-consume throughput with stock clients: mockbroker against another Kafka.

For each client (confluent-kafka, kafka-python) it produces N messages of 100 bytes to a fresh
topic, then consumes them all back, and prints messages per second for both phases.  With
``--compare HOST:PORT`` (any Kafka broker) the same runs go against it too and the ratio
mockbroker / other is printed; targets: >= 0.5 with confluent-kafka, >= 0.9 with kafka-python.

The broker runs in its own process (``python -m mockbroker.cli serve``, the interpreter running
this script, importing mockbroker from its usual path or PYTHONPATH), as it does for a user's
clients and as the other Kafka does: a broker sharing this interpreter would share its GIL with
kafka-python's client threads and measure them as much as itself.

    .venv/bin/python bench/throughput.py [--messages 50000] [--compare localhost:9092]
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

# the benches run as scripts: make the repository importable for their shared helper
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.served import produce_all, served  # noqa: E402

PAYLOAD = b"x" * 100


def make_topic(bootstrap: str) -> str:
    name = f"bench-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(15)
    except Exception:
        # Brokers without CreateTopics (or with auto-creation) get the topic on first produce.
        pass
    return name


def confluent_round(bootstrap: str, n: int) -> tuple[float, float]:
    topic = make_topic(bootstrap)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                                         "enable.idempotence": True})
    start = time.perf_counter()
    produce_all(producer, topic, PAYLOAD, n)
    producer.flush(60)
    produced = n / (time.perf_counter() - start)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": topic,
                                         "enable.auto.commit": False})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    seen = 0
    start = time.perf_counter()
    deadline = start + 120
    while seen < n and time.perf_counter() < deadline:
        for message in consumer.consume(1000, 1.0):
            if message.error() is None:
                seen += 1
    consumed = seen / (time.perf_counter() - start)
    consumer.close()
    if seen != n:
        raise RuntimeError(f"confluent-kafka consumed {seen} of {n}")
    return produced, consumed


def kafka_python_round(bootstrap: str, n: int) -> tuple[float, float]:
    topic = make_topic(bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    start = time.perf_counter()
    for _ in range(n):
        producer.send(topic, PAYLOAD, partition=0)
    producer.flush(60)
    produced = n / (time.perf_counter() - start)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=10000)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    seen = 0
    start = time.perf_counter()
    for _ in consumer:
        seen += 1
        if seen == n:
            break
    consumed = seen / (time.perf_counter() - start)
    consumer.close()
    if seen != n:
        raise RuntimeError(f"kafka-python consumed {seen} of {n}")
    return produced, consumed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=50000)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    args = parser.parse_args()
    with served() as broker:
        bootstrap = broker.bootstrap
        targets = [("mockbroker", bootstrap)]
        if args.compare:
            targets.append(("other", args.compare))
        results = {}
        for client, run in (("confluent-kafka", confluent_round), ("kafka-python", kafka_python_round)):
            for label, bootstrap in targets:
                produced, consumed = run(bootstrap, args.messages)
                results[client, label] = (produced, consumed)
                print(f"{client:<16} {label:<10} produce {produced:>10,.0f} msg/s   "
                      f"consume {consumed:>10,.0f} msg/s")
        if args.compare:
            for client, target in (("confluent-kafka", 0.5), ("kafka-python", 0.9)):
                mine, other = results[client, "mockbroker"], results[client, "other"]
                ratio = min(mine[0] / other[0], mine[1] / other[1])
                print(f"{client}: mockbroker / other = {ratio:.2f} (target {target})")


if __name__ == "__main__":
    main()
