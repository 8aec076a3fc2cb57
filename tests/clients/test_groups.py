"""Consumer groups with stock clients over real sockets: membership, assignment, offsets.

kafka-python and confluent-kafka (librdkafka) consumers subscribe to a topic in a group; what the
tests check is what their users see — which partitions each member is given, which records each
consumes, the rebalance callbacks, what is committed and where a new member resumes — and the
group as an Admin client describes it.  Each test runs on mockbroker and on Apache Kafka
(``target``) with a topic and group of its own; one that stops the coordinator's broker runs on
three brokers of either (``lifecycle_target``), and one that expires a member on command on
mockbroker alone (``mockbroker_only``).

Records are produced only while a group is stable, and every member commits what it consumed
before the next change of membership, so a correct coordinator hands each record to exactly one
member: each test collects what all its members consumed and compares it with what it produced.
A member that crashes is a consumer in a subprocess killed with SIGKILL: it never leaves, so
only its session timeout takes it out of the group.
"""

from __future__ import annotations

import concurrent.futures
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass

import confluent_kafka as ck
import kafka.errors
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.structs import OffsetAndMetadata

from confluent_kafka.admin import AdminClient

import wire
from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.targets import Target
from tests.real_kafka import ask
from wire import errors

TOPIC = "orders"
PARTITIONS = 6
ALL = frozenset(range(PARTITIONS))
GROUP = "billing"
CLIENTS = ["kafka-python", "confluent-kafka"]
DEADLINE_S = 12
#: Short sessions keep crash tests fast; the broker's minimum is lowered to allow them.
SESSION_MS = 2000
HEARTBEAT_MS = 200


# -- fixtures and helpers ----------------------------------------------------------------------

@dataclass
class Scene:
    """Where a group test plays: a broker, a topic of PARTITIONS partitions and a group id.

    ``mock`` is the MockCluster on mockbroker.  A mockbroker-only test's scene (:meth:`of`)
    also reads the group from the coordinator's state rather than through the Admin API
    (``inspect``): those tests stop brokers and move coordinators under the Admin's feet."""
    bootstrap_servers: str
    topic: str = TOPIC
    group: str = GROUP
    mock: MockCluster | None = None
    inspect: bool = False
    _admin: AdminClient | None = None

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient({"bootstrap.servers": self.bootstrap_servers,
                                       "socket.timeout.ms": 5000, "logger": RDKAFKA_LOG})
        return self._admin

    @classmethod
    def of(cls, cluster: MockCluster) -> "Scene":
        """A mockbroker-only test's own cluster, holding TOPIC."""
        return cls(cluster.bootstrap_servers, mock=cluster, inspect=True)


def start(target: Target) -> Scene:
    return Scene(target.bootstrap_servers, target.create_topic(TOPIC, PARTITIONS),
                 target.unique(GROUP), target.mock)


def start_mock(stack, **settings) -> Scene:
    settings.setdefault("brokers", 3)
    settings.setdefault("topics", {TOPIC: PARTITIONS})
    settings.setdefault("group_initial_rebalance_delay_ms", 0)
    settings.setdefault("group_min_session_timeout_ms", 1000)
    return Scene.of(stack.enter_context(MockCluster(**settings)))


@dataclass(frozen=True)
class Got:
    """A record as one member consumed it."""
    member: str
    partition: int
    offset: int
    value: bytes


@dataclass(frozen=True)
class GroupView:
    """A group as the Admin API describes it (DescribeGroups, OffsetFetch)."""
    state: str
    members: dict  # member id -> group instance id
    protocol: str | None
    committed: dict  # partition of the scene's topic -> committed offset


#: librdkafka's group states by Kafka's names
_STATES = {"STABLE": "Stable", "EMPTY": "Empty", "PREPARING_REBALANCING": "PreparingRebalance",
           "COMPLETING_REBALANCING": "CompletingRebalance", "DEAD": "Dead"}


def group_view(scene: Scene, group_id: str | None = None) -> GroupView | None:
    group_id = group_id or scene.group
    if scene.inspect:
        return _inspected(scene, group_id)
    try:
        [described] = scene.admin.describe_consumer_groups([group_id]).values()
        group = described.result(timeout=TIMEOUT_S)
        [listed] = scene.admin.list_consumer_group_offsets(
            [ck.ConsumerGroupTopicPartitions(group_id)]).values()
        offsets = listed.result(timeout=TIMEOUT_S).topic_partitions
    except ck.KafkaException as e:
        if e.args[0].code() == ck.KafkaError.GROUP_ID_NOT_FOUND:
            return None
        raise
    return GroupView(_STATES.get(group.state.name, group.state.name),
                     {m.member_id: m.group_instance_id for m in group.members},
                     group.partition_assignor or None,
                     {tp.partition: tp.offset for tp in offsets
                      if tp.topic == scene.topic and tp.offset >= 0})


#: what a coordinator answers while a group's coordination moves, which its user retries:
#: the new coordinator still loading the group, the old one no longer coordinating it
_MOVING = {errors.COORDINATOR_LOAD_IN_PROGRESS, errors.NOT_COORDINATOR,
           errors.COORDINATOR_NOT_AVAILABLE}


def offset_fetch(coordinator, group_id: str):
    """The group's entry in OffsetFetch (v8, every topic) as ``coordinator`` (FindCoordinator's
    answer) gives it."""
    fetch = wire.request_class(9)
    [offsets] = ask(coordinator.port, 9, 8, fetch(require_stable=False, groups=[
        fetch.OffsetFetchRequestGroup(group_id=group_id, topics=None)]),
        host=coordinator.host).groups
    return offsets


def committed_answered(target: Target, group_id: str, topic: str) -> dict[int, int] | None:
    """The offsets ``group_id`` committed on ``topic``, asked of its coordinator over a plain
    OffsetFetch (for librdkafka's Admin, see below), or None while its coordination moves."""
    found = target.coordinator(0, group_id)
    if found.error_code in _MOVING:
        return None
    assert found.error_code == errors.NONE, found
    try:
        offsets = offset_fetch(found, group_id)
    except (OSError, EOFError):  # the coordinator stopped as it was asked
        return None
    if offsets.error_code in _MOVING:
        return None
    assert offsets.error_code == errors.NONE, offsets
    return committed_on(offsets, topic)


def committed_on(offsets, topic: str) -> dict[int, int]:
    """The offsets an OffsetFetch group entry gives as committed on ``topic``, by partition."""
    assert all(p.error_code == errors.NONE for t in offsets.topics for p in t.partitions)
    return {p.partition_index: p.committed_offset for t in offsets.topics if t.name == topic
            for p in t.partitions if p.committed_offset >= 0}


def group_view_answered(scene: Scene, target: Target) -> GroupView | None:
    """The group as DescribeGroups and OffsetFetch (v8) at its coordinator tell it once the
    coordinator answers both, asked again while its coordination moves.  Asked over plain
    requests, not with confluent-kafka's Admin: librdkafka 2.16's crashes the process on an
    OffsetFetch answered NOT_COORDINATOR (``rd_kafka_handle_OffsetFetch`` reaches for the
    consumer group an Admin client does not have)."""
    def answered():
        found = target.coordinator(0, scene.group)
        if found.error_code in _MOVING:
            return None
        assert found.error_code == errors.NONE, found
        try:
            [group] = ask(found.port, 15, 5, wire.request_class(15)(
                groups=[scene.group], include_authorized_operations=False),
                host=found.host).groups
            offsets = offset_fetch(found, scene.group)
        except (OSError, EOFError):  # the coordinator stopped as it was asked
            return None
        if {group.error_code, offsets.error_code} & _MOVING:
            return None
        assert (group.error_code, offsets.error_code) == (errors.NONE, errors.NONE), \
            (group, offsets)
        if group.group_state == "Dead":
            return "no group"
        return GroupView(group.group_state, {m.member_id: m.group_instance_id
                                             for m in group.members},
                         group.protocol_data or None, committed_on(offsets, scene.topic))
    view = wait_for(answered, "the coordinator's answer", timeout=60)
    return None if view == "no group" else view


def _inspected(scene: Scene, group_id: str) -> GroupView | None:
    def read():
        for _shard, group in scene.mock.core.groups.all_groups():
            if group.group_id == group_id:
                return GroupView(
                    group.state.value,
                    {m.member_id: m.group_instance_id for m in group.members.values()},
                    group.protocol_name,
                    {p: e.offset for (t, p), e in group.offsets.items() if t == scene.topic})
        return None
    return scene.mock.call(read)


def produce(stack, scene: Scene, tag: str, count: int = 60) -> set[bytes]:
    """``count`` records spread evenly over the partitions; returns their values."""
    producer = ck.Producer({"bootstrap.servers": scene.bootstrap_servers, "log_level": 0,
                            "linger.ms": 1})
    values = set()
    for i in range(count):
        value = f"{tag}-{i}".encode()
        producer.produce(scene.topic, value=value, partition=i % PARTITIONS)
        values.add(value)
    assert producer.flush(10) == 0
    return values


# -- one consumer in a group, whichever client -------------------------------------------------

class Member:
    """A subscribed consumer as its user sees it: what it consumed, its assignment, its
    commits and rebalance callbacks.

    Each member has a thread of its own that polls it (committing what each poll returned, as
    an application that commits synchronously does), and does on that thread whatever the test
    asks of the consumer (:meth:`call`): neither client's consumer may be used from two threads
    at once.  kafka-python needs a poll that keeps coming back: it completes a rebalance only
    inside ``poll()``, and a JoinGroup that finishes between two polls is sent again (a leader
    that rejoins starts another rebalance, on Kafka as here), so one thread polling several
    kafka-python consumers in turn would rebalance forever.
    """

    client: str

    def __init__(self, name: str, *, commit_each_poll: bool = True):
        self.name = name
        self.commit_each_poll = commit_each_poll
        self.got: list[Got] = []
        #: what the rebalance callbacks reported, in order: ("assign"|"revoke", partitions)
        self.events: list[tuple[str, frozenset]] = []
        self._assignment: frozenset = frozenset()
        self._consumed: dict[int, int] = {}  # partition -> next offset, since the last commit
        self._requests: queue.Queue = queue.Queue()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.failure: BaseException | None = None

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"member-{self.name}",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                while True:
                    try:
                        fn, result = self._requests.get_nowait()
                    except queue.Empty:
                        break
                    try:
                        result.set_result(fn())
                    except BaseException as exc:
                        result.set_exception(exc)
                got = self._poll()
                for g in got:
                    self._consumed[g.partition] = g.offset + 1
                if got and self.commit_each_poll:
                    self.commit()
                self.got += got  # only now, so a test that has seen a record sees it committed
                self._assignment = self._read_assignment()
        except BaseException as exc:  # reported by the test's next look at this member
            self.failure = exc
            while True:
                try:
                    _, result = self._requests.get_nowait()
                except queue.Empty:
                    break
                result.set_exception(exc)

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the member's own thread and return its result."""
        self._check()
        result: concurrent.futures.Future = concurrent.futures.Future()
        self._requests.put((lambda: fn(*args), result))
        return result.result(timeout=DEADLINE_S)

    def _check(self) -> None:
        if self.failure is not None:
            raise AssertionError(f"member {self.name} failed") from self.failure

    def assignment(self) -> frozenset:
        """The partitions the consumer held after its latest poll."""
        self._check()
        return self._assignment

    def values(self) -> set[bytes]:
        return {g.value for g in list(self.got)}

    def commit(self) -> None:
        """Commit what has been consumed since the last commit, and wait for the answer."""
        if self._consumed:
            self.commit_offsets(self._consumed)
            self._consumed = {}

    def committed(self, partition: int) -> int | None:
        return self.call(self._committed, partition)

    def commit_on_its_thread(self, offsets: dict[int, int]) -> None:
        self.call(self.commit_offsets, offsets)

    def close(self) -> None:
        """Close the consumer (leaving the group, unless static) and stop its thread."""
        if self._closed:
            return
        self._closed = True
        if self.failure is None and self._thread is not None:
            self.call(self._close)
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(DEADLINE_S)


class KafkaPythonMember(Member, ConsumerRebalanceListener):
    client = "kafka-python"

    def __init__(self, cluster: MockCluster, name: str, group_id: str = GROUP, *,
                 commit_each_poll: bool = True, topic: str = TOPIC, **config):
        super().__init__(name, commit_each_poll=commit_each_poll)
        self.topic = topic
        config.setdefault("session_timeout_ms", SESSION_MS)
        config.setdefault("heartbeat_interval_ms", HEARTBEAT_MS)
        self.consumer = KafkaConsumer(
            bootstrap_servers=cluster.bootstrap_servers, group_id=group_id, client_id=name,
            enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=100,
            request_timeout_ms=5000, retry_backoff_ms=50, **config)
        self.consumer.subscribe([topic], listener=self)
        # Learn the subscribed topic's partitions before the first poll joins.  A leader that
        # joins first assigns without them and rejoins when they arrive; kafka-python 3.0.12
        # starts that rejoin without raising its rejoin flag, so when a poll times out while
        # the JoinGroup is in flight and the leader's assignment lands meanwhile, no later poll
        # completes the join: the member never takes its partitions nor heartbeats again, and
        # its session expires.  (A broker with group.initial.rebalance.delay.ms > 0, Kafka's
        # default, hides the race: the metadata arrives while the join waits.)
        self.consumer.partitions_for_topic(topic)
        self._start()

    def on_partitions_assigned(self, assigned):
        self.events.append(("assign", frozenset(tp.partition for tp in assigned)))

    def on_partitions_revoked(self, revoked):
        self.events.append(("revoke", frozenset(tp.partition for tp in revoked)))

    def _poll(self) -> list[Got]:
        return [Got(self.name, r.partition, r.offset, r.value)
                for records in self.consumer.poll(timeout_ms=100).values() for r in records]

    def _read_assignment(self) -> frozenset:
        return frozenset(tp.partition for tp in self.consumer.assignment())

    def commit_offsets(self, offsets: dict[int, int]) -> None:
        self.consumer.commit({TopicPartition(self.topic, p): OffsetAndMetadata(o, "", -1)
                              for p, o in offsets.items()})

    def _committed(self, partition: int) -> int | None:
        return self.consumer.committed(TopicPartition(self.topic, partition))

    def _close(self) -> None:
        self.consumer.close()


class ConfluentMember(Member):
    client = "confluent-kafka"

    def __init__(self, cluster: MockCluster, name: str, group_id: str = GROUP, *,
                 commit_each_poll: bool = True, classic_timeouts: bool = True,
                 topic: str = TOPIC, **config):
        super().__init__(name, commit_each_poll=commit_each_poll)
        self.topic = topic
        if classic_timeouts:  # the consumer protocol takes them from the broker
            config.setdefault("session.timeout.ms", SESSION_MS)
            config.setdefault("heartbeat.interval.ms", HEARTBEAT_MS)
        self.consumer = ck.Consumer({
            "bootstrap.servers": cluster.bootstrap_servers, "group.id": group_id,
            "client.id": name, "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100, "log_level": 0, **config})
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        self._start()

    def _on_assign(self, _consumer, partitions):
        self.events.append(("assign", frozenset(tp.partition for tp in partitions)))

    def _on_revoke(self, _consumer, partitions):
        self.events.append(("revoke", frozenset(tp.partition for tp in partitions)))

    def _poll(self) -> list[Got]:
        out = []
        for message in self.consumer.consume(num_messages=500, timeout=0.1):
            if message.error() is not None:
                raise ck.KafkaException(message.error())
            out.append(Got(self.name, message.partition(), message.offset(), message.value()))
        return out

    def _read_assignment(self) -> frozenset:
        return frozenset(tp.partition for tp in self.consumer.assignment())

    def commit_offsets(self, offsets: dict[int, int]) -> None:
        results = self.consumer.commit(offsets=[ck.TopicPartition(self.topic, p, o)
                                                for p, o in offsets.items()],
                                       asynchronous=False)
        assert all(tp.error is None for tp in results), results

    def _committed(self, partition: int) -> int | None:
        [tp] = self.consumer.committed([ck.TopicPartition(self.topic, partition)], timeout=5)
        assert tp.error is None, tp.error
        return None if tp.offset < 0 else tp.offset

    def _close(self) -> None:
        self.consumer.close()


MEMBER_OF = {"kafka-python": KafkaPythonMember, "confluent-kafka": ConfluentMember}


def join(stack, scene: Scene, client: str, name: str, **config) -> Member:
    config.setdefault("group_id", scene.group)
    config.setdefault("topic", scene.topic)
    member = MEMBER_OF[client](scene, name, **config)
    stack.callback(member.close)
    return member


def settle(cluster: Scene, members, group_id: str | None = None, *,
           timeout: float = 30) -> dict[str, frozenset]:
    """Wait until the coordinator has exactly these members in a stable group and their
    assignments split the partitions: disjoint, all covered, nobody left out."""
    def settled():
        view = group_view(cluster, group_id)
        if view is None or view.state != "Stable" or len(view.members) != len(members):
            return None
        owned = {m.name: m.assignment() for m in members}
        if sum(map(len, owned.values())) != PARTITIONS or \
                frozenset().union(*owned.values()) != ALL:
            return None
        if len(members) <= PARTITIONS and not all(owned.values()):
            return None
        return owned
    try:
        return wait_for(settled, f"{len(members)} members to settle", timeout)
    except AssertionError:
        held = {m.name: sorted(m.assignment()) for m in members}
        raise AssertionError(f"{len(members)} members did not settle: assignments {held}, "
                             f"coordinator's view {group_view(cluster, group_id)}") from None


def consume_all(members, values: set[bytes]) -> None:
    """Wait until every one of ``values`` has been consumed by one of the members."""
    def missing():
        return values - set().union(*(m.values() for m in members))
    try:
        wait_for(lambda: not missing(), f"{len(values)} records to be consumed")
    except AssertionError:
        lost = sorted(missing())
        held = {m.name: sorted(m.assignment()) for m in members}
        raise AssertionError(f"{len(lost)} records never consumed (first: {lost[:5]}); "
                             f"assignments {held}") from None


def assert_once(members, values: set[bytes]) -> None:
    """Every produced record consumed exactly once across the members, nothing else."""
    consumed = [g.value for m in members for g in m.got]
    assert len(consumed) == len(set(consumed)), "a record was consumed twice"
    assert set(consumed) == values


# -- assignment --------------------------------------------------------------------------------

@pytest.mark.parametrize("client", CLIENTS)
def test_a_single_member_gets_every_partition(stack, target, client):
    cluster = start(target)
    values = produce(stack, cluster, "solo")
    member = join(stack, cluster, client, "solo")
    assert settle(cluster, [member]) == {"solo": ALL}
    consume_all([member], values)
    assert_once([member], values)
    view = group_view(cluster)
    assert (view.state, len(view.members)) == ("Stable", 1)
    assert changes(member) == [("assign", ALL)]  # one rebalance, which gave it everything
    wait_for(lambda: group_view(cluster).committed == {p: 10 for p in ALL}, "the commits")


@pytest.mark.parametrize("client", CLIENTS)
def test_members_split_partitions_and_hand_them_over_when_joining_and_leaving(stack, target,
                                                                            client):
    cluster = start(target)
    members = [join(stack, cluster, client, f"m{i}") for i in range(3)]
    owned = settle(cluster, members)
    assert all(len(partitions) == 2 for partitions in owned.values())
    values = produce(stack, cluster, "three")
    consume_all(members, values)
    for m in members:  # each consumed from its own partitions only
        assert {g.partition for g in m.got} == owned[m.name]

    members.append(join(stack, cluster, client, "m3"))
    owned = settle(cluster, members)
    assert sorted(map(len, owned.values())) == [1, 1, 2, 2]
    more = produce(stack, cluster, "four")
    values |= more
    consume_all(members, values)

    leaving = members.pop(0)
    leaving.close()
    settle(cluster, members)
    values |= produce(stack, cluster, "after-leave")
    consume_all(members + [leaving], values)
    assert_once(members + [leaving], values)
    wait_for(lambda: group_view(cluster).committed == {p: 30 for p in ALL}, "the commits")


def test_kafka_python_and_confluent_members_share_a_range_assigned_group(stack, target):
    cluster = start(target)
    members = [
        join(stack, cluster, "kafka-python", "kp",
             partition_assignment_strategy=[RangePartitionAssignor]),
        join(stack, cluster, "confluent-kafka", "ck",
             **{"partition.assignment.strategy": "range"}),
    ]
    owned = settle(cluster, members)
    assert sorted(map(len, owned.values())) == [3, 3]
    # range hands each member a contiguous block of partitions
    for partitions in owned.values():
        assert max(partitions) - min(partitions) == 2
    values = produce(stack, cluster, "mixed")
    consume_all(members, values)
    assert_once(members, values)
    for m in members:
        assert {g.partition for g in m.got} == owned[m.name]


# -- failures ----------------------------------------------------------------------------------

CRASHING_MEMBER = r"""
import sys, time
client, bootstrap, group, topic, session_ms, heartbeat_ms = sys.argv[1:]
if client == "kafka-python":
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id="doomed",
                             enable_auto_commit=False, session_timeout_ms=int(session_ms),
                             heartbeat_interval_ms=int(heartbeat_ms))
    consumer.subscribe([topic])
    consumer.partitions_for_topic(topic)  # see KafkaPythonMember
    poll = lambda: consumer.poll(timeout_ms=100)
else:
    import confluent_kafka
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": "doomed",
        "enable.auto.commit": False, "session.timeout.ms": int(session_ms),
        "heartbeat.interval.ms": int(heartbeat_ms), "log_level": 0})
    consumer.subscribe([topic])
    poll = lambda: consumer.poll(0.1)
while True:
    poll()
"""


def crashing_member(stack, scene: Scene, client: str) -> subprocess.Popen:
    """A member in another process, to be killed with SIGKILL: it can never say goodbye."""
    process = subprocess.Popen(
        [sys.executable, "-c", CRASHING_MEMBER, client, scene.bootstrap_servers, scene.group,
         scene.topic,
         str(SESSION_MS), str(HEARTBEAT_MS)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def reap():
        process.kill()
        process.wait(10)
    stack.callback(reap)
    return process


@pytest.mark.parametrize("client", CLIENTS)
def test_a_crashed_member_is_expired_after_its_session_timeout(stack, target, client):
    cluster = start(target)
    survivor = join(stack, cluster, client, "survivor")
    doomed = crashing_member(stack, cluster, client)
    owned = settle(cluster, [survivor, _Elsewhere(survivor)])
    assert len(owned["survivor"]) == 3
    before = group_view(cluster)
    [doomed_id] = [m for m in before.members if m.startswith("doomed")]

    doomed.kill()
    doomed.wait(10)
    # its connections are closed, but a closed connection is not a leave: only the session
    # timeout takes it out
    assert doomed_id in group_view(cluster).members
    assert settle(cluster, [survivor]) == {"survivor": ALL}
    assert doomed_id not in group_view(cluster).members
    values = produce(stack, cluster, "after-crash")
    consume_all([survivor], values)
    assert_once([survivor], values)


@pytest.mark.mockbroker_only("lifecycle")
@pytest.mark.parametrize("client", CLIENTS)
def test_a_member_the_coordinator_expired_is_refused_its_commit_and_rejoins(stack, client):
    cluster = start_mock(stack)
    # heartbeats far apart, so that the refused commit, not a heartbeat, is the first to learn
    slow = {"kafka-python": {"session_timeout_ms": 10000, "heartbeat_interval_ms": 3000},
            "confluent-kafka": {"session.timeout.ms": 10000, "heartbeat.interval.ms": 3000}}
    member = join(stack, cluster, client, "m", commit_each_poll=False, **slow[client])
    settle(cluster, [member])
    values = produce(stack, cluster, "before")
    consume_all([member], values)
    [member_id] = group_view(cluster).members

    cluster.mock.call(cluster.mock.core.groups.admin.expire_member, GROUP, member_id)
    everything = {p: 10 for p in ALL}
    if client == "kafka-python":
        with pytest.raises(kafka.errors.CommitFailedError):
            member.commit_on_its_thread(everything)
    else:
        with pytest.raises(ck.KafkaException) as refused:
            member.commit_on_its_thread(everything)
        assert refused.value.args[0].code() == ck.KafkaError.UNKNOWN_MEMBER_ID
    assert group_view(cluster).committed == {}
    # it finds out it was expired, joins again with a new member id, and may commit again
    assert settle(cluster, [member]) == {"m": ALL}
    assert member_id not in group_view(cluster).members
    member.commit_on_its_thread(everything)
    assert group_view(cluster).committed == everything


class _Elsewhere:
    """Stands in, for :func:`settle`, for a member in another process: it owns whatever the
    group's other members do not."""

    def __init__(self, *others: Member):
        self.name = "elsewhere"
        self.others = others

    def assignment(self) -> frozenset:
        mine = ALL - frozenset().union(*(m.assignment() for m in self.others))
        return mine if len(mine) < PARTITIONS else frozenset()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_new_member_resumes_exactly_after_the_commit(stack, target, client):
    cluster = start(target)
    first = join(stack, cluster, client, "first", commit_each_poll=False)
    settle(cluster, [first])
    values = produce(stack, cluster, "before")
    consume_all([first], values)
    # commit only part of what was consumed: the first 4 of each partition's 10
    first.commit_on_its_thread({p: 4 for p in ALL})
    assert [first.committed(p) for p in sorted(ALL)] == [4] * PARTITIONS
    first.close()
    wait_for(lambda: group_view(cluster).state == "Empty", "the group to empty")

    later = produce(stack, cluster, "after")
    second = join(stack, cluster, client, "second")
    settle(cluster, [second])
    consume_all([second], later)
    resumed = sorted((g.partition, g.offset) for g in second.got)
    assert resumed == sorted((p, o) for p in ALL for o in range(4, 20))
    assert {g.value for g in second.got} == later | {g.value for g in first.got if g.offset >= 4}
    assert [second.committed(p) for p in sorted(ALL)] == [20] * PARTITIONS


@pytest.mark.parametrize("client", CLIENTS)
def test_a_static_member_restarts_without_a_rebalance(stack, target, client):
    cluster = start(target)
    instance = {"kafka-python": "group_instance_id",
                "confluent-kafka": "group.instance.id"}[client]
    session = {"kafka-python": "session_timeout_ms",
               "confluent-kafka": "session.timeout.ms"}[client]
    static = {session: 6000}
    stay = join(stack, cluster, client, "stay", **{instance: "stay"}, **static)
    bounce = join(stack, cluster, client, "bounce", **{instance: "bounce"}, **static)
    owned = settle(cluster, [stay, bounce])
    before = group_view(cluster)
    assert sorted(before.members.values()) == ["bounce", "stay"]
    stay_events = list(stay.events)
    values = produce(stack, cluster, "before")
    consume_all([stay, bounce], values)

    bounce.close()  # a static member does not leave the group when it shuts down
    assert group_view(cluster).members == before.members
    again = join(stack, cluster, client, "bounce-again", **{instance: "bounce"}, **static)
    wait_for(lambda: again.assignment() == owned["bounce"], "the old assignment back")
    after = group_view(cluster)
    assert after.state == "Stable"
    assert sorted(after.members.values()) == ["bounce", "stay"]
    assert after.members.keys() != before.members.keys()  # the new instance has a new member id
    more = produce(stack, cluster, "after")
    consume_all([stay, again], more)
    # no rebalance: the member that stayed was neither revoked nor assigned anything
    assert stay.assignment() == owned["stay"] and stay.events == stay_events
    assert_once([stay, bounce, again], values | more)
    assert {g.partition for g in again.got} == owned["bounce"]


COOPERATIVE = {"kafka-python": {"partition_assignment_strategy": [CooperativeStickyAssignor]},
               "confluent-kafka": {"partition.assignment.strategy": "cooperative-sticky"}}


def changes(member: Member) -> list[tuple[str, frozenset]]:
    """The rebalance callbacks that gave or took something."""
    return [event for event in member.events if event[1]]


@pytest.mark.parametrize("client", CLIENTS)
def test_cooperative_sticky_moves_only_what_it_must(stack, target, client):
    cluster = start(target)
    first = join(stack, cluster, client, "first", **COOPERATIVE[client])
    settle(cluster, [first])
    assert group_view(cluster).protocol == "cooperative-sticky"
    assert changes(first) == [("assign", ALL)]
    values = produce(stack, cluster, "alone")
    consume_all([first], values)

    second = join(stack, cluster, client, "second", **COOPERATIVE[client])
    owned = settle(cluster, [first, second])
    kept, moved = owned["first"], owned["second"]
    assert (len(kept), len(moved)) == (3, 3)
    # first gave up only what moved (an eager member gives up everything and gets some back)
    assert changes(first) == [("assign", ALL), ("revoke", moved)]
    assert changes(second) == [("assign", moved)]
    values |= produce(stack, cluster, "together")
    consume_all([first, second], values)

    second.close()
    settle(cluster, [first])
    assert changes(first) == [("assign", ALL), ("revoke", moved), ("assign", moved)]
    values |= produce(stack, cluster, "alone-again")
    consume_all([first, second], values)
    assert_once([first, second], values)


# -- coordinator failover ----------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_group_survives_its_coordinator_stopping_and_coming_back(stack, lifecycle_target,
                                                                 client):
    target = lifecycle_target
    cluster = start(target)
    members = [join(stack, cluster, client, "m0")]
    settle(cluster, members)
    values = produce(stack, cluster, "before")
    consume_all(members, values)
    wait_for(lambda: group_view(cluster).committed == {p: 10 for p in ALL}, "the commits")
    committed = group_view(cluster).committed

    old = target.coordinator_id(cluster.group)
    target.stop_broker(old)
    cluster._admin = None  # a new Admin client (librdkafka's may wait on the broker that left)
    new = target.coordinator_id(cluster.group)
    assert new != old
    # rebuilt from __consumer_offsets (on Kafka the newest commits show a moment later: the new
    # leader of the group's partition reads up to a high watermark it learns from its followers)
    wait_for(lambda: group_view_answered(cluster, target).committed == committed,
             "the commits at the new coordinator")
    # the group goes on at the new coordinator: a member joins, partitions move through the
    # committed offsets, and commits keep landing
    members.append(join(stack, cluster, client, "m1"))
    settle(cluster, members)
    values |= produce(stack, cluster, "failed-over")
    consume_all(members, values)
    wait_for(lambda: group_view_answered(cluster, target).committed ==
             {p: 20 for p in ALL}, "the commits")
    assert [members[1].committed(p) for p in sorted(ALL)] == [20] * PARTITIONS

    target.start_broker(old)
    # it rejoins the ISR; a preferred-leader election gives it __consumer_offsets back
    target.admin.elect_leaders(ck.ElectionType.PREFERRED, None).result(timeout=TIMEOUT_S)
    wait_for(lambda: target.coordinator_id(cluster.group) == old,
             "the coordinator to move back")
    assert group_view_answered(cluster, target).committed == {p: 20 for p in ALL}
    values |= produce(stack, cluster, "restarted")
    consume_all(members, values)
    wait_for(lambda: group_view_answered(cluster, target).committed ==
             {p: 30 for p in ALL}, "the commits")
    assert_once(members, values)
