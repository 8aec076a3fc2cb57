"""The event log, driven through the core's front door on a manual clock: what a group's
members do (join, leave, time out), what the coordinator makes of it (states, generations,
assignments, the rebalance timeline), and the cluster's other events — topics, brokers,
leaders, coordinators, control rules, transactions — each with its cause."""

from __future__ import annotations

import wire
from mockbroker.core.observe.events import EventLog, matches
from mockbroker.core.observe.watch import rebalances
from tests.core.harness import answer, make_core, send
from tests.core.test_consumer_groups import Group as ConsumerScene
from wire import errors

JOIN, SYNC, HEARTBEAT, LEAVE, COMMIT = 11, 14, 12, 13, 8
J = wire.request_class(JOIN)
GROUP = "g"
SESSION_MS = 10_000


def _types(events, *kinds):
    return [e for e in events if e["type"] in kinds]


class Classic:
    """A classic group of stock-client-like members on one broker, over the codec."""

    def __init__(self, **settings):
        self.core = make_core(**settings)
        self.core.cluster.create_topic("t", 4)
        self.generation = 0

    @property
    def events(self) -> EventLog:
        return self.core.events

    def join(self, client: str, member_id: str = ""):
        body = J(group_id=GROUP, session_timeout_ms=SESSION_MS, rebalance_timeout_ms=30_000,
                 member_id=member_id, protocol_type="consumer",
                 protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"sub")])
        first = send(self.core, JOIN, 5, body, client_id=client)
        if getattr(first, "error_code", None) == errors.MEMBER_ID_REQUIRED:
            body.member_id = first.member_id
            return send(self.core, JOIN, 5, body, client_id=client)
        return first

    def sync(self, client: str, member_id: str, assignments=None):
        cls = wire.request_class(SYNC)
        return send(self.core, SYNC, 3, client_id=client, group_id=GROUP,
                    generation_id=self.generation, member_id=member_id,
                    group_instance_id=None, assignments=[
                        cls.SyncGroupRequestAssignment(member_id=m, assignment=a)
                        for m, a in (assignments or {}).items()])

    def form(self, *clients: str) -> dict[str, str]:
        """Members join at once and the leader assigns: {client: member id}."""
        pending = {c: self.join(c) for c in clients}
        self.core.clock.advance(0)
        joined = {c: answer(p) for c, p in pending.items()}
        self.generation = next(iter(joined.values())).generation_id
        ids = {c: j.member_id for c, j in joined.items()}
        leader = next(c for c, j in joined.items() if j.leader == j.member_id)
        syncs = [self.sync(leader, ids[leader], {m: b"" for m in ids.values()})]
        syncs += [self.sync(c, m) for c, m in ids.items() if c != leader]
        assert all(answer(s).error_code == errors.NONE for s in syncs)
        return ids

    def heartbeat(self, client: str, member_id: str) -> int:
        return send(self.core, HEARTBEAT, 3, client_id=client, group_id=GROUP,
                    generation_id=self.generation, member_id=member_id,
                    group_instance_id=None).error_code


def test_a_classic_group_tells_joins_leaves_and_expiries_with_their_causes():
    g = Classic()
    ids = g.form("a", "b", "c")
    joined = _types(g.events, "member_joined")
    assert {e["member_id"] for e in joined} == set(ids.values())
    assert all(e["request"] == "JoinGroup" and e["group"] == GROUP and
               e["client_host"] == "/127.0.0.1" for e in joined)
    states = [(e["from"], e["to"]) for e in _types(g.events, "group_state")]
    assert states[-3:] == [("Empty", "PreparingRebalance"),
                           ("PreparingRebalance", "CompletingRebalance"),
                           ("CompletingRebalance", "Stable")]
    stable = _types(g.events, "group_state")[-1]
    assert (stable["generation"], stable["members"], stable["request"]) == (1, 3, "SyncGroup")

    # b leaves by itself; then c stops heartbeating while a keeps at it
    mark = g.events.last_seq
    send(g.core, LEAVE, 3, client_id="b", group_id=GROUP, members=[
        wire.request_class(LEAVE).MemberIdentity(member_id=ids["b"], group_instance_id=None)])
    [left] = _types(g.events.since(mark), "member_left")
    assert (left["member_id"], left["client_id"], left["request"]) == \
        (ids["b"], "b", "LeaveGroup")
    start = _types(g.events.since(mark), "group_state")[0]
    assert (start["from"], start["to"]) == ("Stable", "PreparingRebalance")
    assert start["cause"] == f"LeaveGroup from client b (member {ids['b']} left)"

    mark = g.events.last_seq
    for _ in range(3):
        g.core.clock.advance(4_000)
        g.heartbeat("a", ids["a"])
    [expired] = _types(g.events.since(mark), "member_expired")
    assert (expired["member_id"], expired["reason"], expired["timer"]) == \
        (ids["c"], "session timeout", "heartbeat")
    # nothing expires while the clock stands still, however often the others heartbeat
    mark = g.events.last_seq
    for _ in range(5):
        g.heartbeat("a", ids["a"])
    assert not _types(g.events.since(mark), "member_expired", "member_left")


def test_the_rebalance_timeline_has_each_rebalance_its_cause_and_who_came_and_went():
    g = Classic()
    ids = g.form("a", "b")
    g.core.clock.advance(1_000)
    # c joins a Stable group: a rebalance, which waits for a and b to rejoin
    pending = g.join("c")
    rejoins = [g.join(c, ids[c]) for c in ("a", "b")]
    g.core.clock.advance(250)
    results = [answer(r) for r in [pending, *rejoins]]
    g.generation = results[0].generation_id
    leader = next(r for r in results if r.leader == r.member_id)
    leader_client = next(c for c, m in ids.items() if m == leader.member_id)
    answer(g.sync(leader_client, leader.member_id, {r.member_id: b"" for r in results}))
    timeline = rebalances(g.events, GROUP)
    assert [r["generation"] for r in timeline] == [1, 2]
    first, second = timeline
    assert sorted(first["joined"]) == sorted(ids.values()) and first["outcome"] == "Stable"
    assert second["joined"] == [results[0].member_id] and not second["left"]
    assert second["cause"].startswith("JoinGroup from client c (member ")
    assert second["duration_ms"] == 250 and second["members"] == 3


def test_a_consumer_group_tells_joins_leaves_expiries_and_epochs():
    g = ConsumerScene()
    for member in ("m1", "m2"):
        g.heartbeat(member, join=True)
        g.clock.advance(1200)  # the assignment interval
    g.settle("m1", "m2")
    events = list(g.core.events)
    assert [e["member_id"] for e in _types(events, "member_joined")] == ["m1", "m2"]
    epochs = [e["generation"] for e in _types(events, "group_state")]
    assert epochs == sorted(epochs) and epochs[-1] == g.group.group_epoch
    assignment = _types(events, "assignment")[-1]["assignments"]
    assert sorted(assignment["m1"]["t"] + assignment["m2"]["t"]) == list(range(6))

    mark = g.core.events.last_seq
    g.heartbeat("m2", -1)
    [left] = _types(g.core.events.since(mark), "member_left")
    assert (left["member_id"], left["request"]) == ("m2", "ConsumerGroupHeartbeat")

    g.heartbeat("m3", join=True)
    mark = g.core.events.last_seq
    for _ in range(10):  # m1 heartbeats, m3 has gone quiet
        g.clock.advance(5_000)
        g.heartbeat("m1")
    [expired] = _types(g.core.events.since(mark), "member_expired")
    assert (expired["member_id"], expired["reason"]) == ("m3", "session timeout")


def test_topics_brokers_leaders_and_coordinators_are_events():
    core = make_core(3)
    core.cluster.create_topic("orders", 2, 3)
    core.groups.placement.coordinator_for(GROUP)  # creates __consumer_offsets
    partition = core.cluster.partition("orders", 0)
    leader = partition.leader
    mark = core.events.last_seq
    core.stop_broker(leader)
    core.start_broker(leader)
    core.cluster.replication.rebalance_leaders()  # the periodic preferred-leader election
    core.cluster.delete_topic("orders")
    happened = core.events.since(mark)
    assert happened[0] == {**happened[0], "type": "broker_stopped", "broker": leader}
    moved = [e for e in _types(happened, "leader_changed") if e["topic"] == "orders"
             and e["partition"] == 0]
    assert [(e["previous_leader"], e["leader"] != leader) for e in moved[:1]] == \
        [(leader, True)]
    assert moved[-1]["leader"] == leader  # the preferred leader has it back
    coordinators = _types(happened, "coordinator_moved")
    assert coordinators and all(e["kind"] == "group" for e in coordinators)
    assert _types(happened, "broker_started")[0]["broker"] == leader
    assert _types(happened, "topic_deleted")[0]["topic"] == "orders"
    created = _types(list(core.events), "topic_created")
    assert [(e["topic"], e["partitions"], e["internal"]) for e in created] == \
        [("orders", 2, False), ("__consumer_offsets", 50, True)]


def test_a_rule_that_fires_is_an_event_naming_the_request():
    core = make_core()
    core.cluster.create_topic("t", 1)
    rule = core.control.add({"api": "Metadata", "error": "NOT_CONTROLLER"})
    send(core, 3, 12, client_id="probe", topics=None, allow_auto_topic_creation=False,
         include_topic_authorized_operations=False)
    [fired] = _types(list(core.events), "rule_fired")
    assert (fired["rule"], fired["action"], fired["error"], fired["request"],
            fired["client_id"]) == (rule.id, "error", "NOT_CONTROLLER", "Metadata", "probe")


def test_events_can_be_read_since_a_seq_by_type_and_by_field():
    log = EventLog(make_core().clock, capacity=3)
    for i in range(5):
        log.emit("topic_created", topic=f"t{i}", partitions=i)
    assert [e["seq"] for e in log] == [3, 4, 5] and log.first_seq == 3
    assert [e["topic"] for e in log.since(3)] == ["t3", "t4"]
    assert log.since(0, match={"partitions": "4"})[0]["topic"] == "t4"
    assert log.since(0, types=["topic_deleted"]) == []
    assert matches({"a": 1}, {"a": "1"}) and not matches({"a": 1}, {"b": 1})
    with log.caused_by(admin="reset"):
        assert log.emit("reset")["admin"] == "reset"
    assert "admin" not in log.emit("reset")
