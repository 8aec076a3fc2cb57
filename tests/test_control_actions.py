"""The actions' table (:mod:`mockbroker.adminapi.actions`) against everything that shows or
uses it: the OpenAPI document, the admin client's docstring, the README's list, the rules'
validation (in the core and over the admin API), the functions that carry actions out, and
each control action end to end, as a user sees it."""

from __future__ import annotations

import dataclasses
import inspect as pyinspect
import re
from pathlib import Path

import pytest

import wire
from wire import records
from mockbroker import AdminError
from mockbroker.admin import AdminClient
from mockbroker.adminapi import actions as table
from mockbroker.adminapi.openapi import document
from mockbroker.adminapi.views import FaultSpec
from mockbroker.core import dispatch
from mockbroker.core.control import actions as appliers
from mockbroker.core.control.rules import Rule, RuleError
from mockbroker.core.deferred import Close
from mockbroker.core.groups.classic_api import JoinRequest
from mockbroker.core.observe import inspect
from tests.core.harness import make_core, send
from wire import errors
from wire.apis import resolve_api

#: the fields of POST /faults
SPEC_FIELDS = {f.name for f in dataclasses.fields(FaultSpec)}

README = Path(__file__).resolve().parents[1] / "README.md"
HTTP = [a for a in table.ACTIONS if a.http]
CONTROL = [a.name for a in table.ACTIONS if a.kind is table.Kind.CONTROL]
#: what the answer actions need besides targets
NEEDS = {"error": {"error": "NOT_COORDINATOR"}, "delay": {"delay_ms": 10},
         "throttle": {"throttle_ms": 10}}
#: a value of each target parameter that the core accepts (brokers 0..2)
VALUES = {"broker": 1, "topic": "orders", "partition": 0, "group": "g", "member": "m-1",
          "transactional id": "payer"}


def _spec(action: table.Action, **more) -> dict:
    """A rule that takes ``action`` with every target it needs, picking nothing real."""
    spec = {"client_id": "nobody", "action": action.name, **NEEDS.get(action.name, {})}
    spec.update({t.name: VALUES[t.refers_to] for t in action.targets})
    spec.update(more)
    return spec


def test_the_table_is_consistent():
    assert len(table.names()) == len(set(table.names()))
    assert "callback" in table.names() and "callback" not in table.http_names()
    for action in table.ACTIONS:
        assert action.description and "\n" not in action.description, action.name
        assert set(action.targets) <= set(table.TARGETS), action.name
        if action.kind is not table.Kind.CONTROL:
            assert not action.targets, f"only a control action has targets: {action.name}"
        if action.api is not None:
            resolve_api(action.api)  # a name the codec knows
    for param in table.TARGETS:
        assert table.users(param.name), f"no action takes {param.name}"
        assert param.type in (int, str)
        assert param.name in Rule.__struct_fields__ and param.name in SPEC_FIELDS
        if param.default_from is not None:  # a field of the match, of the same type
            assert param.default_from in SPEC_FIELDS
            assert not param.default_from.startswith("target_")
            assert Rule.__annotations__[param.default_from] == \
                Rule.__annotations__[param.name], param.name


# -- the admin API's description --------------------------------------------------------------

@pytest.mark.parametrize("schema_name, default", [("FaultSpec", True), ("Fault", False)])
def test_the_openapi_document_describes_the_actions_and_their_targets(schema_name, default):
    properties = document()["components"]["schemas"][schema_name]["properties"]
    enum = properties["action"]["enum"]
    # a body takes what POST /faults may add; a rule in force may be any action
    assert [v for v in enum if v is not None] == \
        list(table.http_names() if default else table.names())
    targets = [name for name in properties if name.startswith("target_")]
    assert targets == [t.name for t in table.TARGETS]
    kind = {int: "integer", str: "string"}
    for param in table.TARGETS:
        prop = properties[param.name]
        assert prop["type"] == [kind[param.type], "null"], param.name
        assert prop["description"] == table.target_description(param.name, default=default)
        for user in table.users(param.name):
            assert user in prop["description"]
        if default:  # what a body is checked against
            assert prop.get("minimum") == param.minimum, param.name
            if param.default_from is not None:
                assert f"(default: {param.default_from})" in prop["description"]


def test_the_admin_client_lists_the_actions_it_can_add():
    doc = pyinspect.getdoc(AdminClient.add_fault)
    bullets: list[str] = []
    for line in doc.splitlines():
        if line.startswith("* "):
            bullets.append(line[2:])
        elif line.startswith("  ") and bullets:
            bullets[-1] += " " + line.strip()
    assert bullets == table.listing()
    assert [b.split()[0].rstrip(":") for b in bullets] == list(table.http_names())
    assert "callback" not in doc


def _readme_actions() -> list[list[tuple[str, list[str], str]]]:
    """The README's lists of actions (section "Breaking it on purpose"), each a list of (name,
    the target parameters in its parentheses, its text)."""
    text = README.read_text()
    section = text[text.index("## Breaking it on purpose"):]
    section = section[:section.index("\n## ", 1)]
    lists: list[list[tuple[str, list[str], str]]] = []
    in_list = False
    for line in section.splitlines():
        found = re.match(r"- `(\w+)`(?: \(([^)]*)\))?:?(.*)", line)
        if found:
            if not in_list:
                lists.append([])
            in_list = True
            name, targets, rest = found.groups()
            lists[-1].append((name, re.findall(r"`(\w+)`", targets or ""), rest))
        elif in_list and line.startswith("  "):
            name, targets, rest = lists[-1][-1]
            lists[-1][-1] = (name, targets, rest + " " + line.strip())
        elif line.strip():
            in_list = False
    return lists


def test_the_readme_lists_every_action_a_fault_can_take():
    lists = _readme_actions()
    by_kind = [[a.name for a in HTTP if a.kind is kind] for kind in table.Kind]
    assert [[name for name, _, _ in listed] for listed in lists] == by_kind
    for listed in lists:
        for name, targets, text in listed:
            action = table.find(name)
            assert targets == list(action.target_names), name
            if any(t.default_from for t in action.targets):
                assert "default" in text, f"the README does not say what {name} defaults to"
            if action.api is not None:
                assert action.api in text, name


# -- validation ---------------------------------------------------------------------------------

@pytest.fixture
def core():
    core = make_core(3)
    core.cluster.create_topic("orders", 3, 1)
    return core


@pytest.mark.parametrize("action", HTTP, ids=lambda a: a.name)
def test_every_action_is_taken_with_its_targets_and_refused_without(core, action):
    rule = core.control.parse(_spec(action))
    assert rule.action == action.name
    for param in table.TARGETS:
        expected = VALUES[param.refers_to] if param in action.targets else None
        assert getattr(rule, param.name) == expected, param.name
    if action.api is not None:
        assert rule.api == resolve_api(action.api)
        other = "Heartbeat" if action.api != "Heartbeat" else "Fetch"
        with pytest.raises(RuleError, match=f"action {action.name} is for {action.api}"):
            core.control.parse(_spec(action, api=other))
    for param in action.targets:
        spec = _spec(action)
        del spec[param.name]
        with pytest.raises(RuleError, match=f"action {action.name} needs {param.name}$"):
            core.control.parse(spec)
        if param.default_from is not None:  # the match gives it
            spec[param.default_from] = VALUES[param.refers_to]
            if param.default_from == "partition":
                spec["topic"] = VALUES["topic"]
            assert getattr(core.control.parse(spec), param.name) == VALUES[param.refers_to]
        if param.minimum is not None:
            spec = _spec(action, **{param.name: param.minimum - 1})
            with pytest.raises(RuleError, match=f"{param.name} must be at least"):
                core.control.parse(spec)
        if param.refers_to == "broker":
            with pytest.raises(RuleError, match=f"unknown {param.name} 9"):
                core.control.parse(_spec(action, **{param.name: 9}))
    for param in table.TARGETS:
        if param not in action.targets:
            spec = _spec(action, **{param.name: VALUES[param.refers_to]})
            users = ", ".join(table.users(param.name))
            with pytest.raises(RuleError, match=f"^{param.name} is for {users}$"):
                core.control.parse(spec)
    assert list(core.control) == []


@pytest.mark.parametrize("spec", [{"action": "callback"}, {"action": "explode"}])
def test_an_action_that_is_not_addable_is_refused_listing_those_that_are(core, spec):
    with pytest.raises(RuleError) as refused:
        core.control.add(spec)
    assert str(refused.value) == \
        f"action must be one of {', '.join(table.http_names())}, got {spec['action']!r}"
    with pytest.raises(RuleError, match=re.escape(f"({', '.join(table.http_names())})")):
        core.control.add({"api": "Produce"})


@pytest.mark.kafka(brokers=3, topics={"orders": 3})
def test_the_admin_api_takes_every_addable_action_with_its_targets(kafka_cluster, kafka_admin):
    """Over HTTP and in-process: the body's declaration and the core agree with the table."""
    for admin in (kafka_admin, kafka_cluster.admin):
        for action in HTTP:
            added = admin.add_fault(**_spec(action))
            assert added.action == action.name
            assert {t.name: getattr(added, t.name) for t in table.TARGETS} == \
                {t.name: VALUES[t.refers_to] if t in action.targets else None
                 for t in table.TARGETS}
            for param in action.targets:
                spec = _spec(action)
                del spec[param.name]
                with pytest.raises(AdminError, match=f"needs {param.name}") as refused:
                    admin.add_fault(**spec)
                assert refused.value.status == 400
        with pytest.raises(AdminError, match="action must be one of") as refused:
            admin.add_fault(action="callback")
        assert refused.value.status == 400
        assert [f.action for f in admin.faults()] == list(table.http_names())
        assert admin.clear_faults() == len(HTTP)


# -- the functions that carry actions out -------------------------------------------------------

def test_every_control_and_request_action_has_exactly_one_function():
    assert appliers.check(appliers.REGISTERED) == []
    assert set(appliers.APPLIERS) == set(CONTROL)
    assert set(appliers.REWRITERS) == \
        {a.name for a in table.ACTIONS if a.kind is table.Kind.REQUEST}
    assert dispatch.PASSIVE_ACTIONS == {a.name for a in table.ACTIONS if a.passive}


def test_a_function_for_no_action_or_the_wrong_kind_or_twice_or_none_is_found():
    def one(core, rule):
        pass

    def two(core, rule):
        pass

    control, request = table.Kind.CONTROL, table.Kind.REQUEST
    registered = [r for r in appliers.REGISTERED if r[0] != "stop_broker"]
    problems = appliers.check(registered + [("explode", control, one),
                                            ("hold_revocation", control, one),
                                            ("move_leader", control, two),
                                            ("error", request, one)])
    assert problems == [
        "one is for 'explode', which is no action",
        "one is for hold_revocation, an action of kind request",
        f"move_leader has two functions: {appliers.APPLIERS['move_leader'].__name__} and two",
        "one is for error, an action of kind answer",
        "the control action stop_broker has no function",
    ]


# -- each control action end to end -------------------------------------------------------------

def _metadata(core, broker: int):
    return send(core, 3, 12, broker=broker, topics=None, allow_auto_topic_creation=False)


def _coordinator(core, key: str, key_type: int, broker: int = 0) -> int:
    (found,) = send(core, 10, 4, broker=broker, key_type=key_type,
                    coordinator_keys=[key]).coordinators
    assert found.error_code == errors.NONE
    return found.node_id


def _leader(core, topic: str, partition: int, broker: int) -> tuple[int, int]:
    (found,) = [p for t in _metadata(core, broker).topics if t.name == topic
                for p in t.partitions if p.partition_index == partition]
    return found.leader_id, found.leader_epoch


def _stop_broker(core):
    leader = core.cluster.partition("orders", 0).leader
    other = next(b for b in core.cluster.brokers if b != leader)
    core.control.add({"api": "Metadata", "broker": leader, "action": "stop_broker",
                      "target_broker": leader})
    assert isinstance(_metadata(core, leader), Close)  # it reached the broker it stopped
    assert [b.node_id for b in _metadata(core, other).brokers] == \
        [b for b in sorted(core.cluster.brokers) if b != leader]
    assert inspect.broker_view(core, leader).state == "down"
    return {"broker_stopped": {"broker": leader}}


def _start_broker(core):
    core.stop_broker(2)
    core.control.add({"api": "Metadata", "action": "start_broker", "target_broker": 2})
    assert [b.node_id for b in _metadata(core, 0).brokers] == [0, 1, 2]  # handled after it
    assert inspect.broker_view(core, 2).state == "up"
    return {"broker_started": {"broker": 2}}


def _move_leader(core):
    core.cluster.create_topic("spread", 1, 3)
    before, epoch = _leader(core, "spread", 0, 0)
    target = next(b for b in core.cluster.brokers if b != before)
    core.control.add({"api": "Metadata", "action": "move_leader", "target_topic": "spread",
                      "target_partition": 0, "target_broker": target})
    assert _leader(core, "spread", 0, 0) == (target, epoch + 1)
    return {"leader_changed": {"topic": "spread", "partition": 0, "leader": target}}


def _isr(core, topic: str, partition: int, broker: int) -> list[int]:
    (found,) = [p for t in _metadata(core, broker).topics if t.name == topic
                for p in t.partitions if p.partition_index == partition]
    return found.isr_nodes


def _lag_replica(core):
    core.cluster.create_topic("spread", 1, 3)
    leader, _ = _leader(core, "spread", 0, 0)
    follower = max(b for b in core.cluster.brokers if b != leader)
    core.control.add({"api": "Metadata", "action": "lag_replica", "target_topic": "spread",
                      "target_partition": 0, "target_broker": follower})
    # the Metadata request that fired the rule already shows the ISR without it
    assert _isr(core, "spread", 0, 0) == sorted(b for b in core.cluster.brokers
                                               if b != follower)
    assert inspect.topic_view(core.cluster.topics["spread"]).partitions[0].lagging == \
        [follower]
    assert inspect.broker_view(core, follower).state == "up"
    return {"isr_changed": {"topic": "spread", "partition": 0, "leader": leader}}


def _catch_up_replica(core):
    core.cluster.create_topic("spread", 1, 3)
    leader, _ = _leader(core, "spread", 0, 0)
    follower = max(b for b in core.cluster.brokers if b != leader)
    core.cluster.replication.set_lagging(core.cluster.partition("spread", 0), follower, True)
    assert follower not in _isr(core, "spread", 0, 0)
    core.control.add({"api": "Metadata", "action": "catch_up_replica",
                      "target_topic": "spread", "target_partition": 0,
                      "target_broker": follower})
    assert _isr(core, "spread", 0, 0) == sorted(core.cluster.brokers)  # caught up at once
    assert inspect.topic_view(core.cluster.topics["spread"]).partitions[0].lagging == []
    return {"isr_changed": {"topic": "spread", "partition": 0, "isr": [0, 1, 2]}}


def _join(core, group: str = "g") -> str:
    node = core.groups.placement.coordinator_for(group)
    join = core.groups.classic.join_group(node, JoinRequest(
        group, "", "static-1", "c", "/h", 10_000, 10_000, "consumer", [("range", b"")], 5))
    core.clock.advance(0)
    return join.value.member_id


def _move_coordinator(core):
    _join(core)
    before = _coordinator(core, "g", 0)
    target = next(b for b in core.cluster.brokers if b != before)
    core.control.add({"api": "DescribeGroups", "group": "g", "action": "move_coordinator",
                      "target_broker": target})
    (described,) = send(core, 15, 5, broker=before, groups=["g"]).groups
    assert described.error_code == errors.NOT_COORDINATOR  # it reached the old coordinator
    assert _coordinator(core, "g", 0) == target
    return {"coordinator_moved": {"kind": "group", "broker": target}}


def _expire_member(core):
    member = _join(core)
    node = _coordinator(core, "g", 0)
    core.control.add({"api": "Metadata", "action": "expire_member", "target_group": "g",
                      "target_member": member})
    _metadata(core, 0)
    (described,) = send(core, 15, 5, broker=node, groups=["g"]).groups
    assert (described.error_code, described.members) == (errors.NONE, [])
    # Metadata names no group: only an action that is not passive has the watch look at all
    return {"member_expired": {"group": "g", "member_id": member},
            "group_state": {"group": "g", "to": "Empty"}}


def _open_transaction(core, tid: str = "payer") -> tuple[int, int, int]:
    node = _coordinator(core, tid, 1)
    started = send(core, 22, 4, broker=node, transactional_id=tid,
                   transaction_timeout_ms=60_000, producer_id=-1, producer_epoch=-1)
    pid, epoch = started.producer_id, started.producer_epoch
    cls = wire.request_class(24)
    added = send(core, 24, 3, broker=node, v3_and_below_transactional_id=tid,
                 v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
                 v3_and_below_topics=[cls.AddPartitionsToTxnTopic(name="orders",
                                                                   partitions=[0])])
    (result,) = added.results_by_topic_v3_and_below[0].results_by_partition
    assert result.partition_error_code == errors.NONE
    return node, pid, epoch


def _abort_transaction(core):
    node, pid, epoch = _open_transaction(core)
    core.control.add({"api": "EndTxn", "action": "abort_transaction",
                      "target_transaction": "payer"})
    ended = send(core, 26, 4, broker=node, transactional_id="payer", producer_id=pid,
                 producer_epoch=epoch, committed=True)
    assert ended.error_code != errors.NONE  # the commit came too late: it was aborted
    core.clock.advance(0)
    view = inspect.transaction_view(core, inspect.transaction(core, "payer"))
    assert (view.state, view.producer_epoch) == ("CompleteAbort", epoch + 1)
    return {"transaction_aborted": {"transactional_id": "payer"}}


def _move_transaction_coordinator(core):
    before, _, _ = _open_transaction(core)
    target = next(b for b in core.cluster.brokers if b != before)
    core.control.add({"api": "FindCoordinator", "action": "move_transaction_coordinator",
                      "target_transaction": "payer", "target_broker": target})
    assert _coordinator(core, "payer", 1) == target  # the request that moved it sees it
    core.clock.advance(0)
    view = inspect.transaction_view(core, inspect.transaction(core, "payer"))
    assert (view.coordinator, view.state) == (target, "Ongoing")
    return {"coordinator_moved": {"kind": "transaction", "broker": target}}


def _expire_share_locks(core):
    core.cluster.broker_configs.group_configs["sg"] = {"share.auto.offset.reset": "earliest"}
    leader = core.cluster.topics["orders"].partitions[0].leader
    produce = wire.request_class(0)
    send(core, 0, 9, broker=leader, acks=-1, timeout_ms=1000, topic_data=[
        produce.TopicProduceData(name="orders", partition_data=[produce.PartitionProduceData(
            index=0, records=records.encode_batch([(b"k", b"job", [], 1)]))])])
    member = "m-1"
    node = _coordinator(core, "sg", 0)
    for epoch in (0, None):
        answer = send(core, 76, 1, broker=node, group_id="sg", member_id=member,
                      member_epoch=answer.member_epoch if epoch is None else 0,
                      subscribed_topic_names=["orders"])
        core.clock.advance(0)
    fetch = wire.request_class(78)
    topic_id = core.cluster.topics["orders"].topic_id
    got = send(core, 78, 1, broker=leader, group_id="sg", member_id=member,
               share_session_epoch=0, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
               max_records=10, batch_size=10, topics=[fetch.FetchTopic(
                   topic_id=topic_id, partitions=[fetch.FetchPartition(partition_index=0)])])
    assert [a.first_offset for t in got.responses for p in t.partitions
            for a in p.acquired_records] == [0]
    core.control.add({"api": "Metadata", "action": "expire_share_locks", "target_group": "sg"})
    _metadata(core, 0)
    (held,) = core.share_partitions.find("sg", topic_id, 0).records()
    assert (held.state.label, held.delivery_count, held.member) == ("Available", 1, "")
    return {"share_lock_expired": {"group": "sg", "topic": "orders", "partition": 0,
                                   "ranges": [[0, 0]]}}


#: each control action, carried out by a rule: what the user sees checked inside, and the
#: events it must have caused
SCENARIOS = {f.__name__.lstrip("_"): f for f in (
    _stop_broker, _start_broker, _move_leader, _lag_replica, _catch_up_replica,
    _move_coordinator, _expire_member,
    _expire_share_locks, _abort_transaction, _move_transaction_coordinator)}


def test_every_control_action_has_an_end_to_end_test():
    assert list(SCENARIOS) == CONTROL


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_control_action_changes_the_cluster_then_the_request_is_handled(core, name):
    mark = core.events.last_seq
    caused = SCENARIOS[name](core)
    happened = core.events.since(mark)
    (fired,) = [e for e in happened if e["type"] == "rule_fired"]
    assert fired["action"] == name
    assert [r for r in core.control] == []  # count 1: fired once, then gone
    for kind, fields in caused.items():
        assert any(e["type"] == kind and e.get("action") == name
                   and all(e.get(k) == v for k, v in fields.items()) for e in happened), \
            (kind, fields, happened)


@pytest.mark.parametrize("spec, logged", [
    ({"action": "abort_transaction", "target_transaction": "nobody"},
     "unknown transactional id 'nobody'"),
    ({"action": "abort_transaction", "target_transaction": "payer"}, "no open transaction"),
    ({"action": "move_coordinator", "target_group": "nobody", "target_broker": 1}, "nobody"),
    ({"action": "expire_member", "target_group": "g", "target_member": "nobody"},
     "UNKNOWN_MEMBER_ID"),
    ({"action": "move_leader", "target_topic": "single", "target_partition": 0},
     "is not a replica of single-0"),
    ({"action": "move_transaction_coordinator", "target_transaction": "payer"},
     "is stopped"),
    ({"action": "move_leader", "target_topic": "single", "target_partition": 7}, None),
])
def test_a_control_action_that_cannot_be_carried_out_does_nothing_but_fires(core, spec,
                                                                           logged, caplog):
    core.cluster.create_topic("single", 1, 1)
    leader = core.cluster.partition("single", 0).leader
    elsewhere = next(b for b in core.cluster.brokers if b != leader)
    _join(core)
    send(core, 22, 4, broker=_coordinator(core, "payer", 1), transactional_id="payer",
         transaction_timeout_ms=60_000, producer_id=-1, producer_epoch=-1)
    if spec["action"] == "move_transaction_coordinator":  # to a broker that is down
        elsewhere = next(b for b in core.cluster.brokers if b != _coordinator(core, "payer", 1))
        core.stop_broker(elsewhere)
    if spec["action"].startswith("move_"):
        spec = {**spec, "target_broker": elsewhere}
    before = (inspect.brokers(core), inspect.topics(core, True), inspect.groups(core),
              inspect.transactions(core))
    rule = core.control.add({"api": "Metadata", **spec})
    caplog.set_level("INFO", "mockbroker.control")
    assert _metadata(core, leader).brokers  # the request is answered as usual
    assert rule.fired == 1 and core.control.get(rule.id) is None
    assert (inspect.brokers(core), inspect.topics(core, True), inspect.groups(core),
            inspect.transactions(core)) == before
    if logged is not None:
        assert f"rule {rule.id}: {spec['action']} did nothing" in caplog.text
        assert logged in caplog.text
