"""What a cluster per test costs: in-process start time, and a pytest run of tiny tests.

Two figures:

* start: median time of ``MockCluster(...).start()`` (every listener and the admin API up)
  with 1 and 3 brokers, and of ``stop()``; targets: start <= 20 ms for one broker and
  <= 50 ms for three.  The ratio printed is target / measured (above 1: within target).
* per test: wall time of a pytest run of N tiny tests (each produces one message with
  confluent-kafka and reads it back with an assigned consumer), divided by N, in three
  setups measured in the same run: ``kafka_bootstrap`` with a fresh cluster per test, the
  same tests on one module-scoped cluster (what the fresh cluster is compared with), and,
  with ``--compare HOST:PORT``, the same tests against that Kafka through
  ``--kafka-bootstrap``.  The ratio printed is fresh / shared (the price of isolation).

    .venv/bin/python bench/fixtures.py [--tests 100] [--rounds 50] [--compare localhost:9092]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from mockbroker import MockCluster

TINY_TESTS = '''
import uuid
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
{fixture_setup}

@pytest.mark.parametrize("i", range({count}))
def test_tiny(i, {fixture}):
    bootstrap = {bootstrap}
    topic = "tiny-" + uuid.uuid4().hex[:8]
    producer = Producer({{"bootstrap.servers": bootstrap, "linger.ms": 0}})
    producer.produce(topic, b"value-%d" % i, key=b"k")
    assert producer.flush(10) == 0
    consumer = Consumer({{"bootstrap.servers": bootstrap, "group.id": "tiny",
                         "enable.auto.commit": False}})
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        for _ in range(200):
            message = consumer.poll(0.05)
            if message is not None and message.error() is None:
                assert message.value() == b"value-%d" % i
                return
        raise AssertionError("nothing consumed")
    finally:
        consumer.close()
'''

SETUPS = {
    "fresh": dict(fixture_setup="", fixture="kafka_bootstrap", bootstrap="kafka_bootstrap"),
    "shared": dict(fixture_setup="from conftest_plugin import cluster_fixture\n"
                                 "shared = cluster_fixture(scope='module')",
                   fixture="shared", bootstrap="shared.bootstrap_servers"),
}


def start_times(brokers: int, rounds: int) -> tuple[float, float]:
    starts, stops = [], []
    for _ in range(rounds):
        cluster = MockCluster(brokers=brokers)
        t0 = time.perf_counter()
        cluster.start()
        t1 = time.perf_counter()
        cluster.stop()
        t2 = time.perf_counter()
        starts.append(t1 - t0)
        stops.append(t2 - t1)
    return statistics.median(starts), statistics.median(stops)


def per_test(setup: str, count: int, extra: list[str]) -> float:
    """Wall seconds per test of a pytest run of ``count`` tiny tests (pytest's start-up
    excluded by subtracting a run that collects the same file and runs nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "test_tiny.py"
        path.write_text(textwrap.dedent(TINY_TESTS.format(count=count, **SETUPS[setup])))
        (Path(tmp) / "pytest.ini").write_text("[pytest]\n")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path),
                *extra]
        t0 = time.perf_counter()
        subprocess.run([*base, "--collect-only"], cwd=tmp, check=True, capture_output=True)
        overhead = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = subprocess.run(base, cwd=tmp, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if result.returncode != 0:
            raise SystemExit(f"{setup} run failed:\n{result.stdout[-3000:]}")
    return max(0.0, elapsed - overhead) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="also run the tiny tests against this Kafka")
    args = parser.parse_args()

    print("in-process start (median of %d):" % args.rounds)
    for brokers, target in ((1, 0.020), (3, 0.050)):
        start, stop = start_times(brokers, args.rounds)
        print(f"  {brokers} broker(s): start {start * 1000:6.2f} ms  stop {stop * 1000:6.2f} ms"
              f"  target {target * 1000:.0f} ms  ratio target/start {target / start:6.1f}")

    print(f"pytest, {args.tests} tiny tests (produce one message, read it back):")
    fresh = per_test("fresh", args.tests, [])
    shared = per_test("shared", args.tests, [])
    print(f"  fresh cluster per test : {fresh * 1000:7.1f} ms per test")
    print(f"  one shared cluster     : {shared * 1000:7.1f} ms per test")
    print(f"  ratio fresh/shared     : {fresh / shared:7.2f}")
    if args.compare:
        other = per_test("fresh", args.tests, [f"--kafka-bootstrap={args.compare}"])
        print(f"  against {args.compare:15s}: {other * 1000:7.1f} ms per test"
              f"  ratio mockbroker/other {fresh / other:5.2f}")


if __name__ == "__main__":
    main()
