"""Seeing and steering with stock clients: the waits that replace polling loops, and a broker
clock the test moves.

The waits (``wait_for_group``, ``wait_for_records``, ``wait_for_lag_zero``,
``wait_for_event``) answer when the broker's own events say the condition holds: the tests
below have no sleep and no polling loop of their own.  Under ``clock="manual"`` the broker's
time stands still while kafka-python and confluent-kafka run on real time: a member killed
mid-group stays a member however long the test waits, until the test advances the clock past
its session timeout, and then it is gone at once; a transaction left open and records past
their retention go the same way.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading

import confluent_kafka as ck
import pytest
from kafka import KafkaConsumer

from mockbroker import MockCluster, WaitTimeout
from tests.clients.helpers import RDKAFKA_LOG, wait_for

TOPIC = "orders"
GROUP = "billing"
EVERY = {TOPIC: list(range(6))}

#: a member in another process, which the test kills with SIGKILL: it never leaves, it just
#: stops heartbeating (and consumes with auto-commit meanwhile)
DOOMED = r"""
import sys
client, bootstrap, group, topic, session_ms = sys.argv[1:]
if client == "kafka-python":
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id="doomed",
                             session_timeout_ms=int(session_ms), heartbeat_interval_ms=200,
                             auto_offset_reset="earliest", auto_commit_interval_ms=100)
    consumer.subscribe([topic])
    consumer.partitions_for_topic(topic)
    poll = lambda: consumer.poll(timeout_ms=100)
else:
    import confluent_kafka
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": "doomed",
        "session.timeout.ms": int(session_ms), "heartbeat.interval.ms": 200,
        "auto.offset.reset": "earliest", "auto.commit.interval.ms": 100, "log_level": 0})
    consumer.subscribe([topic])
    poll = lambda: consumer.poll(0.1)
while True:
    poll()
"""


def doomed(stack, cluster: MockCluster, client: str, session_ms: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", DOOMED, client, cluster.bootstrap_servers, GROUP, TOPIC,
         str(session_ms)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def reap():
        process.kill()
        process.wait(10)
    stack.callback(reap)
    return process


class Live:
    """A consumer of the group polling on its own thread, committing automatically."""

    def __init__(self, stack, cluster: MockCluster, client: str, name: str, session_ms: int):
        self.client = client
        if client == "kafka-python":
            self.consumer = KafkaConsumer(
                bootstrap_servers=cluster.bootstrap_servers, group_id=GROUP, client_id=name,
                session_timeout_ms=session_ms, heartbeat_interval_ms=200,
                auto_offset_reset="earliest", auto_commit_interval_ms=100)
            self.consumer.subscribe([TOPIC])
            self.consumer.partitions_for_topic(TOPIC)
        else:
            self.consumer = ck.Consumer({
                "bootstrap.servers": cluster.bootstrap_servers, "group.id": GROUP,
                "client.id": name, "session.timeout.ms": session_ms,
                "heartbeat.interval.ms": 200, "auto.offset.reset": "earliest",
                "auto.commit.interval.ms": 100, "logger": RDKAFKA_LOG})
            self.consumer.subscribe([TOPIC])
        self._stop = threading.Event()
        self._assignment: frozenset = frozenset()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        stack.callback(self.close)

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.client == "kafka-python":
                self.consumer.poll(timeout_ms=100)
            else:
                self.consumer.poll(0.1)
            self._assignment = frozenset(tp.partition for tp in self.consumer.assignment())

    def assignment(self) -> frozenset:
        return self._assignment

    def close(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join(30)
            self.consumer.close()


def produce(cluster: MockCluster, count: int) -> None:
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG, "linger.ms": 5})
    for i in range(count):
        producer.produce(TOPIC, f"r{i}".encode(), partition=i % 6)
    assert producer.flush(30) == 0


def ids_of(group) -> dict[str, str]:
    """{client id: member id} of a group's members."""
    return {m.client_id: m.member_id for m in group.members}


# -- waiting on what the broker says, not polling ------------------------------------------------

@pytest.mark.mockbroker_only("mockbroker")
def test_waits_for_a_stable_group_lag_zero_and_the_expiry_of_a_killed_member(stack):
    cluster = stack.enter_context(MockCluster(topics={TOPIC: 6},
                                              group_min_session_timeout_ms=1000))
    Live(stack, cluster, "kafka-python", "kp", 30_000)
    Live(stack, cluster, "confluent-kafka", "ck", 30_000)
    crashing = doomed(stack, cluster, "confluent-kafka", 2000)

    group = cluster.wait_for_group(GROUP, members=3, assignment=EVERY, timeout=90)
    assert group.state == "Stable" and sorted(ids_of(group)) == ["ck", "doomed", "kp"]
    produce(cluster, 60)
    assert sum(p.records for p in cluster.wait_for_records(TOPIC, 60).partitions) == 60
    caught_up = cluster.wait_for_lag_zero(GROUP, timeout=90)
    assert caught_up.offsets[TOPIC] == {p: 10 for p in range(6)}
    assert caught_up.lag[TOPIC] == {p: 0 for p in range(6)}

    victim = ids_of(group)["doomed"]
    crashing.kill()
    expired = cluster.wait_for_event("member_expired", group=GROUP, member_id=victim,
                                     timeout=90)
    assert (expired["reason"], expired["client_id"]) == ("session timeout", "doomed")
    after = cluster.wait_for_group(GROUP, members=2, assignment=EVERY, timeout=90)
    assert sorted(ids_of(after)) == ["ck", "kp"]
    # the rebalance that made `after`: a client may have rejoined once more since, and a
    # rebalance still under way shows the generation it started from
    [last] = [r for r in cluster.admin.rebalances(GROUP)
              if r.generation == after.generation and r.ended_ms is not None]
    assert last.expired == [victim] and last.cause == f"session timeout of {victim}"
    assert last.outcome == "Stable"

    with pytest.raises(WaitTimeout) as timed_out:
        cluster.wait_for_group(GROUP, members=5, timeout=0.5)
    # it says what it saw: the group as it stood then, which may be a generation past `after`
    # (a client rejoins when, say, its auto-commit met the last rebalance, as it would on Kafka)
    seen = re.search(r"to be Stable with 5 members; last seen: (\w+), generation (\d+), "
                     r"(\d+) members: (.+)$", str(timed_out.value))
    assert seen, timed_out.value
    assert int(seen[2]) >= after.generation, cluster.admin.rebalances(GROUP)
    assert (seen[3], sorted(re.findall(r"\((\w+)\)", seen[4]))) == ("2", ["ck", "kp"])


# -- a broker clock the test moves ---------------------------------------------------------------

@pytest.mark.mockbroker_only("clock")
@pytest.mark.parametrize("killed", ["confluent-kafka", "kafka-python"])
def test_a_killed_member_stays_until_the_clock_passes_its_session_then_goes_at_once(stack,
                                                                                   killed):
    cluster = stack.enter_context(MockCluster(clock="manual", topics={TOPIC: 6}))
    survivor = "kafka-python" if killed == "confluent-kafka" else "confluent-kafka"
    live = Live(stack, cluster, survivor, "survivor", 45_000)
    crashing = doomed(stack, cluster, killed, 6_000)
    group = cluster.wait_for_group(GROUP, members=2, assignment=EVERY, timeout=90)
    victim = ids_of(group)["doomed"]
    mark = cluster.admin.last_event_seq()

    crashing.kill()
    crashing.wait(10)
    # longer, in real time, than its 6 s session: the broker's clock has not moved, so it
    # stays a member while the survivor heartbeats on
    with pytest.raises(WaitTimeout):
        cluster.wait_for_event("member_expired", group=GROUP, since=mark, timeout=8)
    assert victim in ids_of(cluster.admin.group(GROUP)).values()

    start = cluster.now_ms
    cluster.advance_clock(6_000)
    gone = cluster.admin.group(GROUP)  # at once: the advance has run its session timer
    assert victim not in ids_of(gone).values() and "survivor" in ids_of(gone)
    expired = cluster.wait_for_event("member_expired", since=mark, timeout=0)
    assert (expired["member_id"], expired["time_ms"]) == (victim, start + 6_000)

    after = cluster.wait_for_group(GROUP, members=1, assignment=EVERY, timeout=90)
    assert list(ids_of(after)) == ["survivor"]
    # the survivor's own session (45 s) was not over: it stayed, and now holds everything
    wait_for(lambda: live.assignment() == frozenset(range(6)),
             "the survivor's client to take every partition")


@pytest.mark.mockbroker_only("clock")
def test_an_open_transaction_times_out_only_when_the_clock_passes_its_timeout(stack):
    cluster = stack.enter_context(MockCluster(
        clock="manual", topics={TOPIC: 6},
        transaction_abort_timed_out_transaction_cleanup_interval_ms=100))
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "transactional.id": "slow", "transaction.timeout.ms": 1000,
                            "logger": RDKAFKA_LOG})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(TOPIC, b"left open", partition=0)
    producer.flush(30)
    assert cluster.admin.transaction("slow").state == "Ongoing"
    mark = cluster.admin.last_event_seq()

    # past its 1 s timeout in real time, many checks later: the broker's clock stood still
    with pytest.raises(WaitTimeout):
        cluster.wait_for_event("transaction_aborted", since=mark, timeout=3)
    assert cluster.admin.transaction("slow").state == "Ongoing"

    cluster.advance_clock(1_100)
    aborted = cluster.wait_for_event("transaction_aborted", transactional_id="slow",
                                     since=mark, timeout=30)
    assert aborted["fenced"] is True and aborted["partitions"] == [f"{TOPIC}-0"]
    assert cluster.admin.transaction("slow").state == "CompleteAbort"
    with pytest.raises(ck.KafkaException) as refused:
        producer.commit_transaction(30)
    assert refused.value.args[0].code() == ck.KafkaError._FENCED


@pytest.mark.mockbroker_only("clock")
def test_records_past_their_retention_go_only_when_the_clock_passes_it(stack):
    cluster = stack.enter_context(MockCluster(clock="manual",
                                              log_retention_check_interval_ms=100))
    cluster.admin.create_topic("short-lived", 1, configs={"retention.ms": "1000",
                                                          "segment.ms": "500"})
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG})
    for i in range(5):
        producer.produce("short-lived", f"r{i}".encode())
    assert producer.flush(30) == 0
    mark = cluster.admin.last_event_seq()

    with pytest.raises(WaitTimeout):
        cluster.wait_for_event("segments_deleted", since=mark, timeout=3)
    [partition] = cluster.admin.topic("short-lived").partitions
    assert (partition.log_start_offset, partition.high_watermark) == (0, 5)

    cluster.advance_clock(60_000)
    deleted = cluster.wait_for_event("segments_deleted", topic="short-lived", since=mark,
                                     timeout=0)
    assert deleted["log_start_offset"] == 5
    [partition] = cluster.admin.topic("short-lived").partitions
    assert (partition.log_start_offset, partition.high_watermark) == (5, 5)
    reader = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "late",
                          "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG})
    stack.callback(reader.close)
    low, high = reader.get_watermark_offsets(ck.TopicPartition("short-lived", 0), timeout=30)
    assert (low, high) == (5, 5)
