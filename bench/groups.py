"""Consumer-group latency with confluent-kafka, classic and consumer protocol: mockbroker
against another Kafka.

Every figure is taken twice, side by side: with the classic group protocol (JoinGroup,
SyncGroup, Heartbeat; librdkafka's default eager assignors) and with ``group.protocol=consumer``
(KIP-848: ConsumerGroupHeartbeat, the broker computing the assignment).  The figures a test
suite waits for over and over:

* first message: from ``subscribe()`` in a new single-member group to the first record
  returned by ``poll()``, with the consumer's and the broker's default settings; target
  <= 100 ms on mockbroker with the classic protocol.  Classic: FindCoordinator, JoinGroup,
  SyncGroup, OffsetFetch, ListOffsets, Fetch; librdkafka spends about 150 ms of it in its own
  timers whatever the broker: it drops its bootstrap connection (and the FindCoordinator in
  flight on it) once Metadata names the brokers and asks again ~40 ms later, and with no
  committed offset it schedules the ListOffsets that resets the position 100 ms later
  (``rd_kafka_offset_reset`` passes a 100 ms backoff whenever the reset has an error code, and
  "no committed offset" is one).  Consumer protocol: FindCoordinator, ConsumerGroupHeartbeat
  (the broker's answer to a new member's first heartbeat carries its assignment, or the next
  one does), OffsetFetch, ListOffsets, Fetch, with the same librdkafka timers;
* first, after a commit: the same for a group that has offset 1 committed (by a consumer of
  the same protocol that never subscribed), so the position comes from OffsetFetch and that
  100 ms wait is not taken; the first record must then be at offset 1, and a warning says
  when it is not (the broker lost or hid the commit, and the figure times a reset instead);
* settle: how long a group of 10 consumers, each polled in its own thread, takes to reach a
  complete assignment again (every partition owned by exactly one member, every member owning
  one) after a tenth member joins nine, and after it leaves (``close()``).  Members learn of a
  rebalance from their heartbeats, and each change comes right after the previous rebalance,
  so these figures are about one heartbeat interval.  Classic: the members'
  ``heartbeat.interval.ms`` (librdkafka's default 3000 ms unless ``--heartbeat-interval-ms``
  says otherwise), then JoinGroup and SyncGroup of all ten.  Consumer protocol: the members
  set no ``heartbeat.interval.ms`` nor ``session.timeout.ms`` (librdkafka ignores or refuses
  them); the broker dictates the interval, so mockbroker is started with
  ``--group-consumer-heartbeat-interval-ms`` equal to the classic members' interval (3000 ms
  unless ``--heartbeat-interval-ms`` is given) and the two protocols wait on the same clock.
  The broker also computes a new target assignment at most once per
  ``group.consumer.assignment.interval.ms`` (1000 ms on both brokers by default), and moving a
  partition takes its owner's heartbeat to learn of the revocation, then one to report it,
  then the new owner's heartbeat to be given it.

With ``--compare HOST:PORT`` (any Kafka broker) the same runs go against it too and the ratio
mockbroker / other is printed for each protocol (below 1: mockbroker is faster), with the
ratio consumer / classic on each broker.  For a fair consumer-protocol comparison start that
broker with ``group.consumer.heartbeat.interval.ms`` equal to the classic interval (Kafka's
floor ``group.consumer.min.heartbeat.interval.ms`` is 5000 ms unless lowered too) and
``group.initial.rebalance.delay.ms=0`` (mockbroker's default; Kafka's is 3000 ms); the bench
reads the other broker's setting and warns if it differs.  A broker that refuses CreateTopics
and auto-creates topics with fewer than 10 partitions gives no settle figures; one without the
consumer protocol gives none for it.  ``--protocol classic|consumer|both`` picks the protocols
(default both).

The broker runs in its own process (``python -m mockbroker.cli serve``), as it does for a
user's clients and as the other Kafka does.

    .venv/bin/python bench/groups.py [--rounds 5] [--heartbeat-interval-ms 3000] \\
        [--protocol both] [--compare localhost:9092]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import AdminClient, ConfigResource

# the benches run as scripts: make the repository importable for their shared helper
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.served import make_topic, served  # noqa: E402

MEMBERS = 10
PARTITIONS = 20  # two for each of the ten members (where the broker lets us choose)
SETTLE_DEADLINE_S = 60
PROTOCOLS = ("classic", "consumer")
LIBRDKAFKA_HEARTBEAT_MS = 3000  # librdkafka's default heartbeat.interval.ms


def consumer_config(bootstrap: str, group: str, protocol: str, **config) -> dict:
    """A consumer's configuration for ``protocol`` ("classic" or "consumer")."""
    return {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
            **config}


def first_message(bootstrap: str, topic: str, protocol: str, committed: bool = False
                  ) -> tuple[float, int]:
    """(seconds from subscribe() in a new group to the first record polled, that record's
    offset); with ``committed`` the group already has offset 1 committed for every partition (a
    consumer resuming), so the record must be the second of its partition."""
    group = f"first-{uuid.uuid4().hex[:12]}"
    if committed:
        committer = confluent_kafka.Consumer(consumer_config(bootstrap, group, protocol))
        partitions = committer.list_topics(topic, timeout=10).topics[topic].partitions
        committer.commit(offsets=[confluent_kafka.TopicPartition(topic, p, 1)
                                  for p in partitions], asynchronous=False)
        committer.close()
    consumer = confluent_kafka.Consumer(consumer_config(bootstrap, group, protocol,
                                                        **{"auto.offset.reset": "earliest"}))
    try:
        start = time.perf_counter()
        consumer.subscribe([topic])
        deadline = start + SETTLE_DEADLINE_S
        while time.perf_counter() < deadline:
            message = consumer.poll(0.01)
            if message is not None and message.error() is None:
                return time.perf_counter() - start, message.offset()
        raise RuntimeError("no message within the deadline")
    finally:
        consumer.close()


class Member(threading.Thread):
    """One consumer of the group, polled on its own thread; ``leave()`` closes it."""

    def __init__(self, bootstrap: str, topic: str, group: str, protocol: str,
                 heartbeat_ms: int | None):
        super().__init__(daemon=True)
        config = consumer_config(bootstrap, group, protocol, **{
            "auto.offset.reset": "earliest", "enable.auto.commit": False})
        if heartbeat_ms is not None and protocol == "classic":
            # with the consumer protocol the broker dictates the interval
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


def settle_rounds(bootstrap: str, rounds: int, protocol: str, heartbeat_ms: int | None
                  ) -> tuple[list[float], list[float]]:
    """(join times, leave times): a tenth member joining nine, then leaving, ``rounds`` times."""
    topic, partitions = make_topic(bootstrap, PARTITIONS, "bench-groups")
    if partitions < MEMBERS:
        # with fewer partitions than members a newcomer may own nothing, and a complete
        # assignment says nothing about whether the rebalance has happened
        raise Unsupported(f"its topics get {partitions} partitions, fewer than {MEMBERS} members")
    group = f"settle-{uuid.uuid4().hex[:12]}"
    stayers = [Member(bootstrap, topic, group, protocol, heartbeat_ms)
               for _ in range(MEMBERS - 1)]
    for member in stayers:
        member.start()
    joins, leaves = [], []
    try:
        wait_settled(stayers, partitions, time.perf_counter())
        for _ in range(rounds):
            start = time.perf_counter()
            tenth = Member(bootstrap, topic, group, protocol, heartbeat_ms)
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


def measure(bootstrap: str, rounds: int, protocol: str, heartbeat_ms: int | None
            ) -> dict[str, list[float]]:
    topic, partitions = make_topic(bootstrap, 1, "bench-groups")
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for partition in range(partitions):  # something to read wherever the consumer starts
        for _ in range(2):
            producer.produce(topic, b"hello", partition=partition)
    if producer.flush(15) != 0:
        raise RuntimeError("could not produce the first messages")
    results = {"first message": [first_message(bootstrap, topic, protocol)[0]
                                 for _ in range(rounds)]}
    resumed = [first_message(bootstrap, topic, protocol, committed=True) for _ in range(rounds)]
    results["first, after a commit"] = [seconds for seconds, _ in resumed]
    if wrong := [offset for _, offset in resumed if offset != 1]:
        # the committed offset was not used: the figure times an offset reset instead
        print(f"warning: {bootstrap} ({protocol}): {len(wrong)} of {rounds} consumers resuming "
              f"at committed offset 1 started at offset {wrong[0]} instead")
    try:
        results["settle after a join"], results["settle after a leave"] = \
            settle_rounds(bootstrap, rounds, protocol, heartbeat_ms)
    except Unsupported as exc:
        print(f"no settle figures for {bootstrap} ({protocol}): {exc}")
    return results


def consumer_heartbeat_ms(bootstrap: str) -> int | None:
    """The broker's group.consumer.heartbeat.interval.ms, where it tells (DescribeConfigs)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        broker = min(admin.list_topics(timeout=10).brokers)
        resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
        configs = admin.describe_configs([resource], request_timeout=10)[resource].result(15)
        return int(configs["group.consumer.heartbeat.interval.ms"].value)
    except Exception:
        return None


def describe(times: list[float]) -> str:
    ms = [t * 1000 for t in times]
    return (f"median {statistics.median(ms):>8.1f} ms   min {min(ms):>8.1f}   "
            f"max {max(ms):>8.1f}")


def ratio(results: dict, mine: tuple[str, str], other: tuple[str, str], figure: str
          ) -> str | None:
    """The ratio of the medians of ``figure`` for (broker, protocol) ``mine`` and ``other``."""
    if figure not in results.get(mine, {}) or figure not in results.get(other, {}):
        return None
    mine_s, other_s = (statistics.median(results[key][figure]) for key in (mine, other))
    return f"{mine_s / other_s:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=None,
                        help="the classic members' heartbeat.interval.ms (default: librdkafka's, "
                             f"{LIBRDKAFKA_HEARTBEAT_MS}), and mockbroker's "
                             "group.consumer.heartbeat.interval.ms")
    parser.add_argument("--protocol", choices=("classic", "consumer", "both"), default="both",
                        help="group protocol(s) to measure (default: both)")
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    args = parser.parse_args()
    protocols = PROTOCOLS if args.protocol == "both" else (args.protocol,)
    interval = args.heartbeat_interval_ms or LIBRDKAFKA_HEARTBEAT_MS
    if args.compare and "consumer" in protocols:
        theirs = consumer_heartbeat_ms(args.compare)
        if theirs != interval:
            print(f"warning: {args.compare} has group.consumer.heartbeat.interval.ms="
                  f"{theirs if theirs is not None else '(unknown)'}, not {interval}: its "
                  "consumer-protocol settle figures wait on another clock")
    with served("--group-consumer-heartbeat-interval-ms", str(interval)) as broker:
        targets = [("mockbroker", broker.bootstrap)]
        if args.compare:
            targets.append(("other", args.compare))
        results = {}
        for label, bootstrap in targets:
            for protocol in protocols:
                print(f"measuring {label}, {protocol} protocol ...", flush=True)
                try:
                    results[label, protocol] = measure(bootstrap, args.rounds, protocol,
                                                       args.heartbeat_interval_ms)
                except (confluent_kafka.KafkaException, RuntimeError) as exc:
                    if label == "mockbroker":
                        raise
                    print(f"no {protocol} figures for {label}: {exc}")
    figures = list(dict.fromkeys(f for r in results.values() for f in r))
    print(f"\n{'':<22} {'protocol':<9} {'broker':<10}")
    for figure in figures:
        for protocol in protocols:
            for label, _ in targets:
                if figure in results.get((label, protocol), {}):
                    print(f"{figure:<22} {protocol:<9} {label:<10} "
                          f"{describe(results[label, protocol][figure])}")
    if "classic" in protocols:
        first = statistics.median(results["mockbroker", "classic"]["first message"]) * 1000
        print(f"first message on mockbroker (classic): {first:.1f} ms (target <= 100 ms)")
    if args.compare or len(protocols) == 2:
        print("\nratios of medians")
    for figure in figures:
        cells = []
        if args.compare:
            for protocol in protocols:
                value = ratio(results, ("mockbroker", protocol), ("other", protocol), figure)
                if value is not None:
                    cells.append(f"mockbroker / other, {protocol}: {value}")
        if len(protocols) == 2:
            for label, _ in targets:
                value = ratio(results, (label, "consumer"), (label, "classic"), figure)
                if value is not None:
                    cells.append(f"consumer / classic on {label}: {value}")
        if cells:
            print(f"{figure:<22} " + "   ".join(cells))


if __name__ == "__main__":
    main()
