"""Control rules (faults and control actions) in the core, driven with a manual clock and no sockets: which requests a fault
picks, what each action does, the error responses' shapes for every API and version served, and
the request log."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import wire
from mockbroker.core.control import error_responses
from mockbroker.core.deferred import Deferred
from mockbroker.core.deferred import Close
from mockbroker.core.observe import inspect
from mockbroker.core.control.rules import ControlTable, RuleError
from mockbroker.adminapi.jsonview import to_json
from mockbroker.handlers import REGISTRY
from tests.wire.strategies import message_values
from tests.core.harness import make_core, send
from wire import errors, records
from wire.definitions import APIS

PRODUCE, FETCH, METADATA, JOIN_GROUP, HEARTBEAT, DESCRIBE_GROUPS = 0, 1, 3, 11, 12, 15


@pytest.fixture
def core():
    core = make_core(3)
    core.cluster.create_topic("orders", 3, 1)
    core.cluster.create_topic("audit", 1, 1)
    return core


def _send(core, api_key, version, body, *, broker=None, client_id="app"):
    if broker is None:
        broker = core.cluster.topics["orders"].partitions[0].leader
    return send(core, api_key, version, body, broker=broker, client_id=client_id)


def _produce_body(topic_partitions, acks=-1):
    cls = wire.request_class(PRODUCE)
    batch = records.encode_batch([(b"k", b"v", [], 1)])
    return cls(acks=acks, timeout_ms=1000, topic_data=[
        cls.TopicProduceData(name=topic, partition_data=[
            cls.PartitionProduceData(index=p, records=batch) for p in partitions])
        for topic, partitions in topic_partitions.items()])


def _produce(core, topic_partitions, acks=-1, **kw):
    """Produce one record to each partition through its leader (the core does not check
    which broker a multi-leader request reaches when every partition has one replica, so
    every partition goes through its own leader here)."""
    answers = {}
    for topic, partitions in topic_partitions.items():
        for p in partitions:
            leader = core.cluster.topics[topic].partitions[p].leader
            response = _send(core, PRODUCE, 9, _produce_body({topic: [p]}, acks), broker=leader,
                             **kw)
            if response is None or isinstance(response, (Deferred, Close)):
                answers[(topic, p)] = response
                continue
            (entry,) = [pr for t in response.responses for pr in t.partition_responses]
            answers[(topic, p)] = entry
    return answers


def _heartbeat(core, **kw):
    body = wire.request_class(HEARTBEAT)(group_id="g", generation_id=1, member_id="m")
    return _send(core, HEARTBEAT, 4, body, **kw)


def _high_watermarks(core, topic):
    return [p.log.high_watermark for p in core.cluster.topics[topic].partitions]


# -- describing faults ----------------------------------------------------------------------------

@pytest.mark.parametrize("spec, message", [
    ([], "a fault is a JSON object"),
    ({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "colour": "red"}, "unknown field"),
    ({"api": "Prodooce", "error": 6}, "unknown API name"),
    ({"api": 999, "error": 6}, "unknown API key"),
    ({"api": "Produce", "error": "NOT_A_KAFKA_ERROR"}, "unknown Kafka error name"),
    ({"api": "Produce", "error": 4242}, "unknown Kafka error code"),
    ({"api": "Produce", "error": "NONE"}, "NONE is not an error"),
    ({"api": "Produce"}, "say what the fault does"),
    ({"api": "Produce", "action": "explode"}, "action must be one of"),
    ({"api": "Produce", "action": "error"}, "needs an error"),
    ({"api": "Produce", "action": "delay"}, "needs a delay_ms above 0"),
    ({"api": "Produce", "error": 6, "count": 0}, "count must be at least 1"),
    ({"api": "Produce", "error": 6, "count": -3}, "count must be at least 1"),
    ({"api": "Produce", "error": 6, "count": "2"}, "count must be an integer"),
    ({"api": "Produce", "error": 6, "broker": 7}, "unknown broker 7"),
    ({"api": "Produce", "error": 6, "topic": "bad name!"}, "topic:"),
    ({"api": "JoinGroup", "error": 6, "topic": "orders"}, "JoinGroup requests name no topics"),
    ({"api": "Produce", "error": 6, "partition": 1}, "partition needs a topic"),
    ({"api": "Metadata", "error": 6, "topic": "orders", "partition": 0},
     "Metadata requests name no partitions"),
    ({"api": "Produce", "error": 6, "probability": 0}, "probability must be"),
    ({"api": "Produce", "error": 6, "probability": 1.5}, "probability must be"),
    ({"api": "Produce", "error": 6, "client_id": 12}, "client_id must be a string"),
    ({"api": "Produce", "error": 6, "delay_ms": -1}, "delay_ms must be at least 0"),
    ({"api": "ReadShareGroupState", "error": 6}, "not served by mockbroker"),
])
def test_a_bad_fault_is_refused_with_the_reason_and_nothing_is_added(core, spec, message):
    with pytest.raises(RuleError, match=message):
        core.control.add(spec)
    assert list(core.control) == []


def test_an_error_given_with_another_action_is_not_used(core):
    fault = core.control.add({"api": "Produce", "action": "drop", "error": 6})
    assert (fault.action, fault.error) == ("drop", None)


def test_apis_and_errors_by_name_or_number(core):
    by_name = core.control.add({"api": "produce", "error": "not_leader_or_follower"})
    by_number = core.control.add({"api": 0, "error": 6})
    shown = to_json(inspect.fault_view(by_name))
    assert shown["api"] == to_json(inspect.fault_view(by_number))["api"] == "Produce"
    assert by_name.error == by_number.error == errors.NOT_LEADER_OR_FOLLOWER
    assert shown["error"] == "NOT_LEADER_OR_FOLLOWER"


# -- which requests a fault picks -----------------------------------------------------------------

def test_count_fires_that_many_times_then_the_fault_is_gone(core):
    fault = core.control.add({"api": "Heartbeat", "error": "COORDINATOR_LOAD_IN_PROGRESS",
                             "count": 2})
    codes = [_heartbeat(core).error_code for _ in range(3)]
    assert codes[:2] == [errors.COORDINATOR_LOAD_IN_PROGRESS] * 2
    assert codes[2] != errors.COORDINATOR_LOAD_IN_PROGRESS  # the real answer again
    assert fault.fired == 2 and core.control.get(fault.id) is None


def test_count_null_fires_until_removed(core):
    fault = core.control.add({"api": "Heartbeat", "error": 15, "count": None})
    assert all(_heartbeat(core).error_code == 15 for _ in range(5))
    core.control.remove(fault.id)
    assert _heartbeat(core).error_code != 15


def test_broker_and_client_id_filters(core):
    core.control.add({"api": "Heartbeat", "error": 15, "broker": 2, "client_id": "victim",
                     "count": None})
    assert _heartbeat(core, broker=2, client_id="victim").error_code == 15
    assert _heartbeat(core, broker=1, client_id="victim").error_code != 15
    assert _heartbeat(core, broker=2, client_id="bystander").error_code != 15


def test_probability_picks_about_that_share(core):
    core.control = ControlTable(core, seed=7)
    core.control.add({"api": "Heartbeat", "error": 15, "count": None, "probability": 0.25})
    hits = sum(_heartbeat(core).error_code == 15 for _ in range(400))
    assert 60 < hits < 140


def test_the_first_matching_fault_applies(core):
    first = core.control.add({"api": "Heartbeat", "error": 15, "count": 1})
    core.control.add({"error": 16, "count": 1})  # any API
    assert _heartbeat(core).error_code == 15
    assert _heartbeat(core).error_code == 16
    assert first.fired == 1 and list(core.control) == []


# -- errors in each API's shape -------------------------------------------------------------------

def test_a_partition_fault_fails_only_that_partition_and_the_rest_is_written(core):
    core.control.add({"api": "Produce", "error": "NOT_ENOUGH_REPLICAS", "topic": "orders",
                     "partition": 1, "count": None})
    cls = wire.request_class(PRODUCE)
    batch = records.encode_batch([(b"k", b"v", [], 1)])
    leader = core.cluster.topics["orders"].partitions[1].leader
    for partition in core.cluster.all_partitions():
        partition.leader = leader  # one leader for all, so one request can carry them all
        partition.replicas = [leader]
    body = cls(acks=-1, timeout_ms=1000, topic_data=[
        cls.TopicProduceData(name="orders", partition_data=[
            cls.PartitionProduceData(index=i, records=batch) for i in range(3)]),
        cls.TopicProduceData(name="audit", partition_data=[
            cls.PartitionProduceData(index=0, records=batch)])])
    response = _send(core, PRODUCE, 9, body, broker=leader)
    got = {(t.name, p.index): (p.error_code, p.base_offset)
           for t in response.responses for p in t.partition_responses}
    assert got == {("orders", 0): (0, 0), ("orders", 1): (errors.NOT_ENOUGH_REPLICAS, -1),
                   ("orders", 2): (0, 0), ("audit", 0): (0, 0)}
    assert _high_watermarks(core, "orders") == [1, 0, 1]
    assert _high_watermarks(core, "audit") == [1]


def test_an_error_fault_writes_nothing_and_counts_per_request(core):
    fault = core.control.add({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": 2})
    first = _produce(core, {"orders": [0]})
    second = _produce(core, {"orders": [0]})
    third = _produce(core, {"orders": [0]})
    assert [a[("orders", 0)].error_code for a in (first, second, third)] == [6, 6, 0]
    assert third[("orders", 0)].base_offset == 0  # only the third was written
    assert _high_watermarks(core, "orders")[0] == 1 and fault.fired == 2


def test_acks_zero_produce_in_error_closes_the_connection(core):
    core.control.add({"api": "Produce", "error": 6})
    assert isinstance(_produce(core, {"orders": [0]}, acks=0)[("orders", 0)], Close)
    assert _high_watermarks(core, "orders")[0] == 0


def test_a_fetch_with_a_failed_partition_answers_at_once(core):
    for partition in core.cluster.all_partitions():
        partition.leader, partition.replicas = 0, [0]
    core.control.add({"api": "Fetch", "error": "UNKNOWN_LEADER_EPOCH", "topic": "orders",
                     "partition": 2})
    cls = wire.request_class(FETCH)
    body = cls(max_wait_ms=5000, min_bytes=1, max_bytes=1 << 20, topics=[
        cls.FetchTopic(topic="orders", partitions=[
            cls.FetchPartition(partition=i, fetch_offset=0, partition_max_bytes=1 << 20)
            for i in range(3)])])
    response = _send(core, FETCH, 12, body, broker=0)
    assert not isinstance(response, Deferred)
    got = {p.partition_index: (p.error_code, p.high_watermark)
           for t in response.responses for p in t.partitions}
    assert got == {0: (0, 0), 1: (0, 0), 2: (errors.UNKNOWN_LEADER_EPOCH, -1)}


def test_metadata_errors_land_on_the_picked_topic_and_brokers_are_still_listed(core):
    core.control.add({"api": "Metadata", "error": "LEADER_NOT_AVAILABLE", "topic": "orders"})
    cls = wire.request_class(METADATA)
    body = cls(topics=[cls.MetadataRequestTopic(name="orders"),
                       cls.MetadataRequestTopic(name="audit")])
    response = _send(core, METADATA, 12, body)
    topics = {t.name: (t.error_code, len(t.partitions)) for t in response.topics}
    assert topics == {"orders": (errors.LEADER_NOT_AVAILABLE, 0), "audit": (0, 1)}
    assert len(response.brokers) == 3


def test_a_metadata_error_reaches_the_client_and_leaves_the_kept_answer_alone(core):
    cls = wire.request_class(METADATA)
    body = cls(topics=[cls.MetadataRequestTopic(name="orders")])
    _send(core, METADATA, 12, body)  # the answer the broker keeps for the next ones
    core.control.add({"api": "Metadata", "error": "LEADER_NOT_AVAILABLE", "topic": "orders",
                      "count": 1})
    answers = [_send(core, METADATA, 12, body) for _ in range(2)]
    assert [[(t.name, t.error_code, len(t.partitions)) for t in a.topics] for a in answers] == [
        [("orders", errors.LEADER_NOT_AVAILABLE, 0)], [("orders", errors.NONE, 3)]]


def test_keyed_and_top_level_shapes(core):
    core.control.add({"api": "DescribeGroups", "error": "COORDINATOR_NOT_AVAILABLE"})
    body = wire.request_class(DESCRIBE_GROUPS)(groups=["a", "b"])
    response = _send(core, DESCRIBE_GROUPS, 5, body)
    assert [(g.group_id, g.error_code) for g in response.groups] == [
        ("a", errors.COORDINATOR_NOT_AVAILABLE), ("b", errors.COORDINATOR_NOT_AVAILABLE)]

    core.control.add({"api": "JoinGroup", "error": "COORDINATOR_LOAD_IN_PROGRESS"})
    cls = wire.request_class(JOIN_GROUP)
    body = cls(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000,
               member_id="m-1", protocol_type="consumer",
               protocols=[cls.JoinGroupRequestProtocol(name="range", metadata=b"")])
    response = _send(core, JOIN_GROUP, 9, body)
    assert (response.error_code, response.member_id, response.generation_id) == \
        (errors.COORDINATOR_LOAD_IN_PROGRESS, "m-1", -1)
    assert core.groups.all_groups() == []  # nothing joined


_SERVED = [(key, version) for key in sorted(APIS) if (entry := REGISTRY.get(key))
           for version in range(entry.min_version, entry.max_version + 1)]


def _error_codes(message) -> set[int]:
    """Every error code a decoded response holds, at any depth (``error_code``, and the
    ``partition_error_code`` of AddPartitionsToTxn v0-3)."""
    found = set()
    for f in getattr(type(message), "_fields", ()):
        value = getattr(message, f.name)
        if f.name.endswith("error_code"):
            found.add(value)
        elif f.is_struct:
            for item in (value or ()) if f.is_array else [value]:
                if item is not None:
                    found |= _error_codes(item)
    return found


def _reaches(shape, items) -> bool:
    """Whether a keyed shape's request list holds an item down to its innermost level (where
    the error goes)."""
    inner = shape.inner
    return any(inner is None or _reaches(inner, getattr(item, inner.request_list))
               for item in items or ())


def _expects_error(api_key, version, declared, body) -> bool:
    """Whether the error answer to ``body`` has somewhere to put the error: the top level, or
    an entry for something the request names."""
    response_cls = wire.response_class(api_key)
    if isinstance(declared, error_responses.OwnAnswer):
        # AlterUserScramCredentials answers each user named, AlterClientQuotas each entity;
        # DescribeLogDirs always has one
        name = APIS[api_key].name
        if name == "AlterUserScramCredentials":
            return bool(body.deletions or body.upsertions)
        if name == "AlterClientQuotas":
            return bool(body.entries)
        if name == "AlterReplicaLogDirs":  # each partition of each directory named
            return any(t.partitions for d in body.dirs for t in d.topics)
        if name == "ElectLeaders" and version == 0:  # no top-level error: each partition
            return any(t.partitions for t in body.topic_partitions or ())
        return True
    if any(f.name == "error_code" and f.present(version) for f in response_cls._fields):
        return True
    shape = error_responses._keyed_shape(declared, version, type(body), response_cls)
    return _reaches(shape, getattr(body, shape.request_list))


@pytest.mark.parametrize("api_key, version", _SERVED,
                         ids=[f"{APIS[k].name}-v{v}" for k, v in _SERVED])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_served_api_and_version_can_answer_an_error_that_encodes(api_key, version, data):
    """For any valid request, the error answer encodes at the request's version and carries
    the error wherever the request gave it a place.  Every version served has a place for one
    (TxnOffsetCommit's is each partition); without its declared shape, a version with no
    top-level error code is refused, naming the version."""
    spec = APIS[api_key]
    body = data.draw(message_values(spec.request, wire.request_class(api_key), version))
    code = errors.NOT_COORDINATOR
    declared = REGISTRY.get(api_key).error_shape
    assert error_responses.can_express(api_key, version, declared)
    if not any(f.name == "error_code" and f.present(version)
               for f in wire.response_class(api_key)._fields):
        assert not error_responses.can_express(api_key, version, None)
        with pytest.raises(error_responses.CannotExpress, match=f"{spec.name} v{version} "):
            error_responses.error_response(api_key, version, body, code, None)
    if isinstance(declared, error_responses.PartitionShape):
        rest, hit = error_responses.split_partitioned(declared, body, lambda t, p: True)
        assert rest is None
        response = error_responses.merge_partitioned(api_key, declared, None, hit, code)
        expect_error = bool(hit)
    elif isinstance(declared, error_responses.TopicErrors):
        return  # answered by the real handler, then marked (tested above)
    else:
        response = error_responses.error_response(api_key, version, body, code, declared)
        expect_error = _expects_error(api_key, version, declared, body)
    frame = wire.encode_response(api_key, version, 3, response)
    _, decoded = wire.decode_response(api_key, version, frame[4:])
    found = _error_codes(decoded)
    assert found <= {0, code}
    assert (code in found) == expect_error


# -- delay, drop, disconnect, latency ---------------------------------------------------------------

def test_delay_answers_after_the_delay_and_handles_the_request_at_once(core):
    core.control.add({"api": "Produce", "action": "delay", "delay_ms": 250})
    (pending,) = _produce(core, {"orders": [0]}).values()
    assert isinstance(pending, Deferred) and not pending.done
    assert _high_watermarks(core, "orders")[0] == 1  # written already
    core.clock.advance(249)
    assert not pending.done
    core.clock.advance(1)
    assert pending.value.responses[0].partition_responses[0].error_code == 0


def test_an_error_can_be_delayed_too(core):
    core.control.add({"api": "Heartbeat", "error": 27, "delay_ms": 100})
    pending = _heartbeat(core)
    core.clock.advance(100)
    assert pending.value.error_code == errors.REBALANCE_IN_PROGRESS


def test_drop_handles_the_request_and_never_answers(core):
    core.control.add({"api": "Produce", "action": "drop"})
    (lost,) = _produce(core, {"orders": [0]}).values()
    core.clock.advance(3_600_000)
    assert isinstance(lost, Deferred) and not lost.done
    assert _high_watermarks(core, "orders")[0] == 1
    (logged,) = [r for r in core.requests if r.api_key == PRODUCE]
    assert logged.outcome == "dropped"


def test_disconnect_closes_without_handling(core):
    core.control.add({"api": "Produce", "action": "disconnect"})
    assert isinstance(_produce(core, {"orders": [0]})[("orders", 0)], Close)
    assert _high_watermarks(core, "orders")[0] == 0
    core.control.add({"api": "Heartbeat", "action": "disconnect", "delay_ms": 50})
    closing = _heartbeat(core)
    core.clock.advance(50)
    assert isinstance(closing.value, Close)
    outcomes = [r.outcome for r in core.requests]
    assert outcomes == ["disconnected", "disconnected"]


def test_broker_latency_delays_every_answer_of_that_broker_only(core):
    core.control.set_latency(1, 40)
    slow = _heartbeat(core, broker=1)
    fast = _heartbeat(core, broker=2)
    assert not isinstance(fast, Deferred)
    assert isinstance(slow, Deferred) and not slow.done
    core.clock.advance(39)
    assert not slow.done
    core.clock.advance(1)
    core.control.set_latency(1, 0)
    assert slow.value == _heartbeat(core, broker=1)  # the same answer, only later


def test_the_request_log_says_what_each_request_got(core):
    core.control.add({"api": "Heartbeat", "error": "ILLEGAL_GENERATION"})
    _heartbeat(core, client_id="one")
    _produce(core, {"orders": [0]}, client_id="two")
    _produce(core, {"orders": [1]}, acks=0, client_id="three")
    logged = [to_json(view) for view in inspect.requests(core)]
    assert [(r["api"], r["client_id"], r["outcome"], r["error"], r["fault"] is not None)
            for r in logged] == [
        ("Heartbeat", "one", "answered", "ILLEGAL_GENERATION", True),
        ("Produce", "two", "answered", None, False),
        ("Produce", "three", "no response", None, False),
    ]
    assert logged[0]["correlation_id"] == 7 and logged[0]["api_version"] == 4


# -- the rest of the rule model: after, groups, control actions, chains, callbacks ----------------

def _fetch(core, broker):
    cls = wire.request_class(FETCH)
    body = cls(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=[cls.FetchTopic(
        topic="orders", partitions=[cls.FetchPartition(partition=0, fetch_offset=0,
                                                        partition_max_bytes=1 << 20)])])
    return _send(core, FETCH, 12, body, broker=broker)


@pytest.mark.parametrize("spec, message", [
    ({"action": "stop_broker"}, "needs target_broker"),
    ({"action": "stop_broker", "target_broker": 9}, "unknown target_broker 9"),
    ({"action": "move_leader", "target_broker": 1}, "needs target_topic"),
    ({"action": "move_coordinator", "target_broker": 1}, "needs target_group"),
    ({"action": "expire_member", "target_group": "g"}, "needs target_member"),
    ({"error": 6, "target_broker": 1}, "target_broker is for"),
    ({"action": "callback"}, "action must be one of"),
    ({"error": 6, "chain": True}, "only a delay can chain"),
    ({"error": 6, "after": -1}, "after must be at least 0"),
    ({"error": 6, "group": 5}, "group must be a string"),
])
def test_a_bad_rule_is_refused_with_the_reason_and_nothing_is_added(core, spec, message):
    with pytest.raises(RuleError, match=message):
        core.control.add(spec)
    assert list(core.control) == []


def test_after_lets_that_many_matching_requests_through_first(core):
    normal = _heartbeat(core).error_code
    assert normal != errors.COORDINATOR_NOT_AVAILABLE
    rule = core.control.add({"api": "Heartbeat", "error": 15, "after": 2})
    codes = [_heartbeat(core).error_code for _ in range(4)]
    assert codes == [normal, normal, errors.COORDINATOR_NOT_AVAILABLE, normal]
    assert rule.fired == 1 and core.control.get(rule.id) is None


def test_stop_a_broker_when_the_third_fetch_arrives(core):
    partition = core.cluster.topics["orders"].partitions[0]
    leader = partition.leader
    other = next(b for b in core.cluster.brokers if b != leader)
    stopped = []
    core.broker_watchers.append(lambda node, alive: stopped.append((node, alive)))
    core.control.add({"api": "Fetch", "after": 2, "action": "stop_broker",
                      "target_broker": leader})
    assert [_fetch(core, leader).responses[0].partitions[0].error_code
            for _ in range(2)] == [errors.NONE, errors.NONE]
    assert stopped == []
    # the third Fetch stops the leader it was sent to: it gets no answer, the partition moves
    third = _fetch(core, leader)
    assert isinstance(third, Close)
    assert stopped == [(leader, False)] and not core.cluster.brokers[leader].alive
    assert partition.leader != leader
    # a Fetch to another broker after that is answered by the cluster as it now is
    core.control.add({"api": "Fetch", "action": "start_broker", "target_broker": leader})
    answer = _fetch(core, other).responses[0].partitions[0]
    assert core.cluster.brokers[leader].alive and stopped[-1] == (leader, True)
    expected = errors.NONE if partition.leader == other else errors.NOT_LEADER_OR_FOLLOWER
    assert answer.error_code == expected


def test_move_a_leader_when_a_produce_arrives(core):
    core.cluster.create_topic("spread", 1, 3)
    partition = core.cluster.topics["spread"].partitions[0]
    before, epoch = partition.leader, partition.leader_epoch
    target = next(r for r in partition.replicas if r != before)
    core.control.add({"api": "Produce", "topic": "spread", "partition": 0,
                      "action": "move_leader", "target_broker": target})
    (answer,) = _produce(core, {"spread": [0]}).values()
    # the leader moved first, so the produce reached a broker that no longer leads
    assert (partition.leader, partition.leader_epoch) == (target, epoch + 1)
    assert answer.error_code == errors.NOT_LEADER_OR_FOLLOWER
    (again,) = _produce(core, {"spread": [0]}).values()
    assert again.error_code == errors.NONE


def test_a_group_rule_picks_only_requests_naming_that_group(core):
    other = wire.request_class(HEARTBEAT)(group_id="other", generation_id=1, member_id="m")
    node = core.groups.placement.coordinator_for("other")
    assert _send(core, HEARTBEAT, 4, other, broker=node).error_code == errors.UNKNOWN_MEMBER_ID
    core.control.add({"group": "g", "error": 24, "count": None})
    assert _heartbeat(core).error_code == errors.INVALID_GROUP_ID
    assert _send(core, HEARTBEAT, 4, other, broker=node).error_code == errors.UNKNOWN_MEMBER_ID
    describe = wire.request_class(DESCRIBE_GROUPS)(groups=["x", "g"])
    answered = _send(core, DESCRIBE_GROUPS, 5, describe)
    assert [g.error_code for g in answered.groups] == [errors.INVALID_GROUP_ID] * 2


def test_move_the_coordinator_and_expire_a_member_by_rule(core):
    group = core.groups.classic
    node = core.groups.placement.coordinator_for("g")
    target = next(b for b in core.cluster.brokers if b != node)
    from mockbroker.core.groups.classic_api import JoinRequest

    join = group.join_group(node, JoinRequest("g", "", "static-1", "c", "/h", 10_000, 10_000,
                                              "consumer", [("range", b"")], 5))
    core.clock.advance(0)
    member = join.value.member_id
    core.control.add({"api": "Heartbeat", "action": "expire_member", "target_group": "g",
                      "target_member": member})
    _heartbeat(core, broker=node)
    assert member not in core.groups.find_group("g").members
    core.control.add({"api": "Heartbeat", "group": "g", "action": "move_coordinator",
                      "target_broker": target})
    answered = _heartbeat(core, broker=node)
    assert core.groups.placement.coordinator_for("g") == target
    assert answered.error_code == errors.NOT_COORDINATOR  # it reached the old coordinator


def test_a_chained_latency_adds_to_the_fault_that_applies(core):
    core.control.set_latency(1, 40)
    fault = core.control.add({"api": "Heartbeat", "error": 15, "delay_ms": 10})
    answer = _heartbeat(core, broker=1)
    core.clock.advance(49)
    assert not answer.done
    core.clock.advance(1)
    assert answer.value.error_code == errors.COORDINATOR_NOT_AVAILABLE
    (logged,) = [r for r in core.requests if r.api_key == HEARTBEAT]
    latency = next(r for r in core.control if r.chain)
    assert logged.fault == fault.id and logged.rules == [latency.id, fault.id]
    assert core.control.latency_ms(1) == 40 and core.control.latency_ms(0) == 0


def test_a_callback_answers_passes_or_disconnects(core):
    seen = []

    def answer_once(request):
        seen.append((request.api_key, request.broker_id, request.body.member_id))
        return wire.response_class(HEARTBEAT)(error_code=errors.REBALANCE_IN_PROGRESS)

    normal = _heartbeat(core, broker=2).error_code
    core.control.control("Heartbeat", answer_once)
    assert _heartbeat(core, broker=2).error_code == errors.REBALANCE_IN_PROGRESS
    assert seen == [(HEARTBEAT, 2, "m")]
    assert _heartbeat(core, broker=2).error_code == normal  # one-shot: gone
    passes = []
    kept = core.control.control("Heartbeat", lambda request: passes.append(1), keep=True)
    assert [_heartbeat(core, broker=2).error_code for _ in range(2)] == [normal] * 2
    assert passes == [1, 1] and core.control.get(kept.id) is kept
    core.control.remove(kept.id)
    from mockbroker import DISCONNECT

    core.control.control(None, lambda request: DISCONNECT)
    assert isinstance(_heartbeat(core), Close)


def test_the_apis_declared_to_name_topics_are_those_whose_requests_carry_them():
    """A rule's ``topic`` can pick an API's requests only where the handler declares that its
    requests name topics; the declarations must agree with Kafka's message definitions."""
    def field_names(fields, depth=2):
        found = set()
        for f in fields:
            found.add(f.name)
            if f.name in ("groups", "dirs") and depth:  # what each group or log dir names
                found |= field_names(f.fields, depth - 1)
        return found

    for registration in REGISTRY:
        names = field_names(APIS[registration.api_key].request.fields)
        assert registration.names_topics == bool(names & {"topics", "topic_data", "topic_names"}), \
            registration.name
