"""Consumer-group latency with confluent-kafka: mockbroker against another Kafka.

Two figures a test suite waits for over and over:

* first message: from ``subscribe()`` in a new single-member group to the first record
  returned by ``poll()`` (FindCoordinator, JoinGroup, SyncGroup, OffsetFetch, ListOffsets,
  Fetch), with the consumer's and the broker's default settings; target <= 100 ms on
  mockbroker.  librdkafka spends about 150 ms of it in its own timers whatever the broker:
  it drops its bootstrap connection (and the FindCoordinator in flight on it) once Metadata
  names the brokers and asks again ~40 ms later, and with no committed offset it schedules
  the ListOffsets that resets the position 100 ms later (``rd_kafka_offset_reset`` passes a
  100 ms backoff whenever the reset has an error code, and "no committed offset" is one);
* first, after a commit: the same for a group that has offsets committed, so the position
  comes from OffsetFetch and that 100 ms wait is not taken;
* settle: how long a group of 10 consumers, each polled in its own thread, takes to reach a
  complete assignment again (every partition owned by exactly one member, every member owning
  one) after a tenth member joins nine, and after it leaves (``close()``).  Members learn of a
  rebalance from their heartbeats, and each change comes right after the previous rebalance,
  so these figures are about one ``heartbeat.interval.ms`` (librdkafka's default 3000 ms
  unless ``--heartbeat-interval-ms`` says otherwise).

With ``--compare HOST:PORT`` (any Kafka broker) the same runs go against it too and the ratio
mockbroker / other is printed (below 1: mockbroker is faster).  A broker that refuses
CreateTopics and auto-creates topics with fewer than 10 partitions gives no settle figures.

    .venv/bin/python bench/groups.py [--rounds 5] [--heartbeat-interval-ms 3000] \\
        [--compare localhost:9092]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from mockbroker import MockCluster

MEMBERS = 10
PARTITIONS = 20  # two for each of the ten members (where the broker lets us choose)
SETTLE_DEADLINE_S = 60


def make_topic(bootstrap: str, partitions: int) -> tuple[str, int]:
    """A fresh topic with ``partitions`` partitions, or with the broker's default count where it
    refuses CreateTopics but creates topics on first use; returns (name, partition count)."""
    name = f"bench-groups-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=10)[name].result(15)
    except Exception:
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
        producer.produce(name, b"create")
        producer.flush(15)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # wait until every partition has a leader
        topic = admin.list_topics(name, timeout=5).topics.get(name)
        if topic is not None and topic.error is None and topic.partitions \
                and all(p.leader >= 0 for p in topic.partitions.values()):
            return name, len(topic.partitions)
        time.sleep(0.05)
    raise RuntimeError(f"topic {name} did not get leaders for its partitions")


def first_message(bootstrap: str, topic: str, committed: bool = False) -> float:
    """Seconds from subscribe() in a new group to the first record polled; with ``committed``
    the group already has offset 0 committed for every partition (a consumer resuming)."""
    group = f"first-{uuid.uuid4().hex[:12]}"
    if committed:
        committer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        partitions = committer.list_topics(topic, timeout=10).topics[topic].partitions
        committer.commit(offsets=[confluent_kafka.TopicPartition(topic, p, 0)
                                  for p in partitions], asynchronous=False)
        committer.close()
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                         "auto.offset.reset": "earliest"})
    try:
        start = time.perf_counter()
        consumer.subscribe([topic])
        deadline = start + SETTLE_DEADLINE_S
        while time.perf_counter() < deadline:
            message = consumer.poll(0.01)
            if message is not None and message.error() is None:
                return time.perf_counter() - start
        raise RuntimeError("no message within the deadline")
    finally:
        consumer.close()


class Member(threading.Thread):
    """One consumer of the group, polled on its own thread; ``leave()`` closes it."""

    def __init__(self, bootstrap: str, topic: str, group: str, heartbeat_ms: int | None):
        super().__init__(daemon=True)
        config = {"bootstrap.servers": bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False}
        if heartbeat_ms is not None:
            config["heartbeat.interval.ms"] = heartbeat_ms
        self.consumer = confluent_kafka.Consumer(config)
        self.topic = topic
        self.assignment: frozenset = frozenset()
        self._leave = threading.Event()

    def run(self) -> None:
        self.consumer.subscribe([self.topic])
        while not self._leave.is_set():
            self.consumer.poll(0.01)
            self.assignment = frozenset(tp.partition for tp in self.consumer.assignment())
        self.consumer.close()

    def leave(self) -> None:
        self._leave.set()


class Unsupported(Exception):
    """The target cannot give this figure."""


def settled(members: list[Member], partitions: int) -> bool:
    owned = [m.assignment for m in members]
    return all(owned) and sum(map(len, owned)) == partitions and \
        frozenset().union(*owned) == frozenset(range(partitions))


def wait_settled(members: list[Member], partitions: int, start: float) -> float:
    deadline = start + SETTLE_DEADLINE_S
    while time.perf_counter() < deadline:
        if settled(members, partitions):
            return time.perf_counter() - start
        time.sleep(0.002)
    raise RuntimeError(f"{len(members)} members did not settle within {SETTLE_DEADLINE_S} s")


def settle_rounds(bootstrap: str, rounds: int, heartbeat_ms: int | None
                  ) -> tuple[list[float], list[float]]:
    """(join times, leave times): a tenth member joining nine, then leaving, ``rounds`` times."""
    topic, partitions = make_topic(bootstrap, PARTITIONS)
    if partitions < MEMBERS:
        # with fewer partitions than members a newcomer may own nothing, and a complete
        # assignment says nothing about whether the rebalance has happened
        raise Unsupported(f"its topics get {partitions} partitions, fewer than {MEMBERS} members")
    group = f"settle-{uuid.uuid4().hex[:12]}"
    stayers = [Member(bootstrap, topic, group, heartbeat_ms) for _ in range(MEMBERS - 1)]
    for member in stayers:
        member.start()
    joins, leaves = [], []
    try:
        wait_settled(stayers, partitions, time.perf_counter())
        for _ in range(rounds):
            start = time.perf_counter()
            tenth = Member(bootstrap, topic, group, heartbeat_ms)
            tenth.start()
            joins.append(wait_settled(stayers + [tenth], partitions, start))
            start = time.perf_counter()
            tenth.leave()
            leaves.append(wait_settled(stayers, partitions, start))
            tenth.join(30)
    finally:
        for member in stayers:
            member.leave()
        for member in stayers:
            member.join(30)
    return joins, leaves


def measure(bootstrap: str, rounds: int, heartbeat_ms: int | None) -> dict[str, list[float]]:
    topic, partitions = make_topic(bootstrap, 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for partition in range(partitions):  # something to read wherever the consumer starts
        producer.produce(topic, b"hello", partition=partition)
    if producer.flush(15) != 0:
        raise RuntimeError("could not produce the first messages")
    results = {"first message": [first_message(bootstrap, topic) for _ in range(rounds)],
               "first, after a commit": [first_message(bootstrap, topic, committed=True)
                                         for _ in range(rounds)]}
    try:
        results["settle after a join"], results["settle after a leave"] = \
            settle_rounds(bootstrap, rounds, heartbeat_ms)
    except Unsupported as exc:
        print(f"no settle figures for {bootstrap}: {exc}")
    return results


def describe(times: list[float]) -> str:
    ms = [t * 1000 for t in times]
    return (f"median {statistics.median(ms):>8.1f} ms   min {min(ms):>8.1f}   "
            f"max {max(ms):>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=None,
                        help="the members' heartbeat.interval.ms (default: librdkafka's)")
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    args = parser.parse_args()
    with MockCluster() as cluster:
        targets = [("mockbroker", cluster.bootstrap_servers)]
        if args.compare:
            targets.append(("other", args.compare))
        results = {}
        for label, bootstrap in targets:
            results[label] = measure(bootstrap, args.rounds, args.heartbeat_interval_ms)
            for figure, times in results[label].items():
                print(f"{figure:<22} {label:<10} {describe(times)}")
        first = statistics.median(results["mockbroker"]["first message"]) * 1000
        print(f"first message on mockbroker: {first:.1f} ms (target <= 100 ms)")
        if args.compare:
            for figure in [f for f in results["mockbroker"] if f in results["other"]]:
                mine = statistics.median(results["mockbroker"][figure])
                other = statistics.median(results["other"][figure])
                print(f"{figure}: mockbroker / other = {mine / other:.2f}")


if __name__ == "__main__":
    main()
