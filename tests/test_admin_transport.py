"""The admin API live, against its route table and views: every route served and documented,
every answer of the shape its schema says and read back by the client, and the in-process
transport of ``MockCluster.admin`` answering exactly as HTTP does."""

from __future__ import annotations

import dataclasses
import json
import urllib.parse

import confluent_kafka as ck
import pytest

from mockbroker import AdminClient, AdminError, MockCluster
from mockbroker.adminapi import routes
from mockbroker.adminapi.jsonview import from_json, schema, to_json
from mockbroker.adminapi.views import BrokerView
from mockbroker.io.admin.local import LocalTransport
from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.test_http_api import _bad_calls, _produce, _raw

_JSON_TYPES = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
               "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
               "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
               "null": lambda v: v is None, "object": lambda v: isinstance(v, dict),
               "array": lambda v: isinstance(v, list)}


def check(shape: dict, value, components: dict, where: str = "$") -> None:
    """Assert that ``value`` has the shape of a JSON Schema as the OpenAPI document writes
    them: types, enums, required keys, no undocumented keys, items, nested components."""
    if "$ref" in shape:
        shape = components[shape["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in shape:
        failures = []
        for option in shape["anyOf"]:
            try:
                return check(option, value, components, where)
            except AssertionError as exc:
                failures.append(str(exc))
        raise AssertionError(f"{where}: no option fits: {failures}")
    if "enum" in shape:
        assert value in shape["enum"], (where, value, shape["enum"])
    if "type" in shape:
        types = shape["type"] if isinstance(shape["type"], list) else [shape["type"]]
        assert any(_JSON_TYPES[t](value) for t in types), (where, value, types)
    if isinstance(value, dict):
        properties = shape.get("properties", {})
        for key in shape.get("required", []):
            assert key in value, (where, key)
        for key, item in value.items():
            if key in properties:
                check(properties[key], item, components, f"{where}.{key}")
            elif isinstance(shape.get("additionalProperties"), dict):
                check(shape["additionalProperties"], item, components, f"{where}.{key}")
            else:
                assert not properties, (where, f"undocumented key {key!r}")
    if isinstance(value, list) and "items" in shape:
        for index, item in enumerate(value):
            check(shape["items"], item, components, f"{where}[{index}]")


def _consume(bootstrap: str, group: str, topic: str, count: int,
             commit: dict[int, int] | None = None) -> ck.Consumer:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                            "auto.offset.reset": "earliest", "enable.auto.commit": False,
                            "logger": RDKAFKA_LOG})
    consumer.subscribe([topic])
    seen = []
    wait_for(lambda: seen.extend(m for m in [consumer.poll(0.2)] if m and not m.error())
             or len(seen) >= count, f"{count} messages")
    consumer.commit(offsets=[ck.TopicPartition(topic, p, o)
                             for p, o in (commit or {0: 1}).items()], asynchronous=False)
    return consumer


def _calls(admin: AdminClient):
    """A call of every route, in an order that leaves each something to act on."""
    fault = {}
    member = lambda: admin.group("billing").members[0].member_id  # noqa: E731
    return [
        ("health", {}, None), ("openapi", {}, None), ("brokers", {}, None),
        ("broker", {"broker_id": 1}, None), ("topics", {}, None), ("topic", {"name": "orders"}, None),
        ("records", {"name": "orders"}, None), ("groups", {}, None),
        ("group", {"group_id": "billing"}, None),
        ("wait_for_group", {}, lambda: {"group_id": "billing", "timeout_ms": 10_000,
                                        "state": admin.group("billing").state}),
        ("wait_for_records", {}, {"topic": "orders", "records": 3, "timeout_ms": 10_000}),
        ("wait_for_lag_zero", {}, {"group_id": "ledger", "timeout_ms": 10_000}),
        ("wait_for_event", {}, {"type": "topic_created", "match": {"topic": "orders"}}),
        ("events", {}, None), ("rebalances", {"group_id": "billing"}, None),
        ("clock", {}, None), ("advance_clock", {}, {"ms": 0}),
        ("quorum", {}, None), ("quorum_failover", {}, {"controller": 1}),
        ("add_fault", {}, {"api": "Heartbeat", "error": 27, "count": None, "topic": None}),
        ("faults", {}, None),
        ("get_fault", {"fault_id": lambda: fault.setdefault("id", admin.faults()[0].id)}, None),
        ("requests", {}, None),
        ("set_broker_latency", {"broker_id": 0}, {"delay_ms": 5}),
        ("move_leader", {"name": "orders", "partition": 0},
         lambda: {"broker": next(b for b in admin.topic("orders").partitions[0].replicas
                                 if b != admin.topic("orders").partitions[0].leader)}),
        ("set_replica_lagging", {"name": "orders", "partition": 0, "broker_id": lambda: next(
            b for b in admin.topic("orders").partitions[0].replicas
            if b != admin.topic("orders").partitions[0].leader)}, {"lagging": False}),
        ("rebalance", {"group_id": "billing"}, None),
        ("expire_member", {"group_id": "billing", "member_id": member}, None),
        ("move_coordinator", {"group_id": "billing"},
         lambda: {"broker": 1 - admin.group("billing").coordinator}),
        ("remove_fault", {"fault_id": lambda: fault["id"]}, None),
        ("clear_faults", {}, None), ("stop_broker", {"broker_id": 1}, None),
        ("start_broker", {"broker_id": 1}, None),
        ("create_topic", {}, {"name": "events", "partitions": 2, "configs": {"retention.ms": "1000"}}),
        ("delete_topic", {"name": "events"}, None), ("clear_requests", {}, None),
        ("transactions", {}, None), ("transaction", {"transactional_id": "payer"}, None),
        ("move_transaction_coordinator", {"transactional_id": "payer"},
         lambda: {"broker": 1 - admin.transaction("payer").coordinator}),
        ("abort_transaction", {"transactional_id": "payer"}, None),
        ("acls", {}, None), ("users", {}, None),
        ("set_quota", {}, {"entity": {"client-id": "app"}, "values": {"producer_byte_rate": 1e4}}),
        ("quotas", {}, None),
        # the clients above asked for their telemetry subscriptions (the receiver is on)
        ("clients", {}, None),
        ("client", {"client_instance_id": lambda: admin.clients()[0].client_instance_id}, None),
        ("client_metrics",
         {"client_instance_id": lambda: admin.clients()[0].client_instance_id}, None),
        ("schema_registry", {}, None),
        ("reset", {}, None),
    ]


@pytest.mark.kafka(brokers=2, topics={"orders": 2}, clock="manual", telemetry_receiver=True,
                   schema_registry=True)
def test_every_route_is_served_documented_and_answers_in_the_shape_of_its_view(
        kafka_cluster, kafka_admin):
    table = {(r.method, r.path) for r in routes.ROUTES}
    app = kafka_cluster.call(lambda: kafka_cluster._started().admin._runner.app)
    assert {(r.method, r.resource.canonical) for r in app.router.routes()
            if r.method != "HEAD"} == table
    document = kafka_admin.openapi()
    assert {(m.upper(), p) for p, ops in document["paths"].items() for m in ops} == table
    components = document["components"]["schemas"]
    good = to_json(kafka_admin.broker(0))
    check(schema(BrokerView), good, components)
    for bad in ({**good, "port": "9092"}, {**good, "state": "gone"}, {**good, "extra": 1},
                {k: v for k, v in good.items() if k != "host"}):
        with pytest.raises(AssertionError):  # the check is not vacuous
            check(schema(BrokerView), bad, components)

    _produce(kafka_cluster.bootstrap_servers, "orders", [
        (0, b"k", b"v", [("h", b"1"), ("none", None)]), (0, None, b"\xff", None),
        (1, b"x", b"y", None)])
    consumer = _consume(kafka_cluster.bootstrap_servers, "billing", "orders", 3)
    # a group that has read partition 0 to its end and gone (the open transaction below
    # writes to partition 1), for the wait for lag 0
    _consume(kafka_cluster.bootstrap_servers, "ledger", "orders", 3, commit={0: 2}).close()
    payer = ck.Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                         "transactional.id": "payer", "logger": RDKAFKA_LOG})
    payer.init_transactions(30)
    payer.begin_transaction()
    payer.produce("orders", b"open", partition=1)
    payer.flush(30)  # a transaction left open, for the transaction routes to act on
    try:
        calls = _calls(kafka_admin)
        assert sorted(name for name, _, _ in calls) == sorted(r.name for r in routes.ROUTES)
        for name, params, body in calls:
            route = routes.by_name(name)
            params = {k: v() if callable(v) else v for k, v in params.items()}
            body = body() if callable(body) else body
            status, data = _raw(kafka_cluster.admin_url, route.method, route.url(**params),
                                None if body is None else json.dumps(body).encode())
            assert status == route.status, (name, data)
            assert document["paths"][route.path][route.method.lower()]["responses"][
                str(status)]["content"]["application/json"]["schema"] == schema(route.answer)
            check(schema(route.answer), data, components, name)
            if data and route.answer is not dict:  # the client reads back what was sent
                assert to_json(from_json(route.answer, data)) == data, name
    finally:
        consumer.close()


def _split(path: str):
    parts = urllib.parse.urlsplit(path)
    return parts.path, dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))


@pytest.mark.kafka(brokers=2, topics={"orders": 2})
def test_the_in_process_transport_answers_every_bad_call_as_http_does(kafka_cluster,
                                                                      kafka_admin):
    local = kafka_cluster.admin
    assert isinstance(local.transport, LocalTransport)
    kafka_admin.add_fault("Heartbeat", error=27, count=None)
    before = kafka_admin.faults(), kafka_admin.topics(internal=True), kafka_admin.brokers()
    for method, path, body, status, message in _bad_calls(kafka_admin):
        over_http = _raw(kafka_cluster.admin_url, method, path, body)
        in_process = local.transport.call(method, *_split(path), body)
        assert in_process == over_http, (method, path)
        assert in_process[0] == status and message in in_process[1]["error"]
    assert (local.faults(), local.topics(internal=True), local.brokers()) == before
    for method, path in [("GET", "/brokers"), ("GET", "/topics/orders"), ("GET", "/faults"),
                         ("GET", "/topics?internal=true"), ("GET", "/health")]:
        assert local.transport.call(method, *_split(path)) == \
            _raw(kafka_cluster.admin_url, method, path), path
    with pytest.raises(AdminError) as refused:
        local.topic("missing")
    assert (refused.value.status, refused.value.message) == (404, "unknown topic 'missing'")


def _snapshot(admin: AdminClient):
    """The cluster as the API shows it, without what differs between two clusters."""
    topics = [{**to_json(t), "topic_id": None} for t in admin.topics(internal=True)]
    brokers = [{**to_json(b), "port": None, "listeners": sorted(b.listeners)}
               for b in admin.brokers()]
    return brokers, topics, to_json(admin.faults()), to_json(admin.groups())


def _steps():
    def move(admin):
        partition = admin.topic("orders").partitions[0]
        return admin.move_leader("orders", 0, next(b for b in partition.replicas  # 1 is down
                                                   if b not in (partition.leader, 1)))
    return [
        lambda a: a.create_topic("events", 2, configs={"retention.ms": "1000"}),
        lambda a: a.add_fault("Produce", error="NOT_ENOUGH_REPLICAS", count=2, topic="orders"),
        lambda a: a.add_fault("Fetch", action="delay", delay_ms=50, count=None, broker=1),
        lambda a: a.set_broker_latency(2, 30),
        lambda a: a.stop_broker(1),
        move,
        lambda a: a.start_broker(1),
        lambda a: a.remove_fault(a.faults()[0].id),
        lambda a: a.delete_topic("events"),
        lambda a: a.clear_faults(),
        lambda a: a.reset(),
    ]


def _comparable(value):
    if dataclasses.is_dataclass(value):
        data = to_json(value)
        comparable = {k: v for k, v in data.items() if k not in ("topic_id", "port")}
        if isinstance(comparable.get("listeners"), dict):  # their ports differ too
            comparable["listeners"] = sorted(comparable["listeners"])
        return comparable
    return value


def test_in_process_calls_change_state_exactly_as_http_calls_do():
    settings = {"brokers": 3, "topics": {"orders": 3}}
    with MockCluster(**settings) as one, MockCluster(**settings) as other:
        local, http = one.admin, AdminClient(other.admin_url)
        assert isinstance(local.transport, LocalTransport)
        assert _snapshot(local) == _snapshot(http)
        for index, step in enumerate(_steps()):
            assert _comparable(step(local)) == _comparable(step(http)), index
            assert _snapshot(local) == _snapshot(http), index
    with pytest.raises(OSError):  # a stopped cluster refuses, as its HTTP server would
        local.brokers()
