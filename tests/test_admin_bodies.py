"""Each request body of the admin API is described once: the server refuses exactly what its
OpenAPI schema rules out.

The bad bodies here are made from the served OpenAPI document alone (each field's type, its
minimum, maximum and minimum length, its enum, the required fields, no others), so a check the
server makes that the document does not say, or the reverse, fails a test.  They go to the
server through a route that takes each body, over the in-process transport (the server's own
handlers); every one is answered 400 naming the field, and nothing changes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockbroker.adminapi import routes
from mockbroker.adminapi.jsonview import BodyError, read_body, schema_name
from mockbroker.adminapi.openapi import document

#: a route taking each body whose path can be filled on the test's cluster (broker 0, topic
#: "orders"); the test checks every body of the route table has one
ROUTE_OF_BODY = {
    "FaultSpec": ("add_fault", {}),
    "BrokerLatency": ("set_broker_latency", {"broker_id": 0}),
    "TargetBroker": ("move_leader", {"name": "orders", "partition": 0}),
    "ReplicaLagging": ("set_replica_lagging", {"name": "orders", "partition": 0,
                                               "broker_id": 1}),
    "NewTopic": ("create_topic", {}),
    "ClockAdvance": ("advance_clock", {}),
    "GroupWait": ("wait_for_group", {}),
    "RecordsWait": ("wait_for_records", {}),
    "LagWait": ("wait_for_lag_zero", {}),
    "EventWait": ("wait_for_event", {}),
    "QuotaSpec": ("set_quota", {}),
    "QuorumFailover": ("quorum_failover", {}),
}
#: a value for a body's required field that the server takes, where a made-up one would be
#: refused for what it names rather than for its shape (a broker that does not exist)
GOOD = {("TargetBroker", "broker"): 1, ("GroupWait", "group_id"): "no-such-group",
        ("RecordsWait", "topic"): "orders", ("LagWait", "group_id"): "no-such-group",
        ("QuotaSpec", "entity"): {"client-id": "app"}, ("QuotaSpec", "values"): {}}
#: what a body needs besides its required fields to be taken, where the schema cannot say it
#: (a fault does something: an error, a delay or an action)
BASE = {"FaultSpec": {"error": "NOT_COORDINATOR"}}


def _components() -> dict[str, Any]:
    return document()["components"]["schemas"]


def _types(prop: dict) -> list[str]:
    kind = prop.get("type", [])
    return kind if isinstance(kind, list) else [kind]


def _good_value(body: str, name: str, prop: dict) -> Any:
    if (body, name) in GOOD:
        return GOOD[(body, name)]
    if "enum" in prop:
        return next(v for v in prop["enum"] if v is not None)
    kind = _types(prop)[0]
    if kind == "integer":
        return max(prop.get("minimum", 0), 1)
    return {"string": "orders", "number": 1, "boolean": True, "object": {},
            "array": []}[kind]


def _minimal(body: str) -> dict[str, Any]:
    component = _components()[body]
    return {**BASE.get(body, {}), **{
        name: _good_value(body, name, component["properties"][name])
        for name in component.get("required", [])}}


def _bad_bodies(body: str):
    """(what is wrong, the body, the field the answer must name) for every rule the schema
    of ``body`` states."""
    component = _components()[body]
    base = _minimal(body)
    for name in component.get("required", []):
        yield f"{name} missing", {k: v for k, v in base.items() if k != name}, name
    yield "a field of no body", {**base, "colour": "red"}, "colour"
    for name, prop in component["properties"].items():
        kinds = _types(prop)
        if "enum" in prop:
            yield f"{name} outside its enum", {**base, name: "no-such-value"}, name
        if ("integer" in kinds or "number" in kinds) and "string" not in kinds:
            yield f"{name} of text", {**base, name: "soon"}, name
            if "minimum" in prop:
                yield f"{name} below its minimum", {**base, name: prop["minimum"] - 1}, name
            if "maximum" in prop:
                yield f"{name} above its maximum", {**base, name: prop["maximum"] + 1}, name
            if "exclusiveMinimum" in prop:
                yield f"{name} at its exclusive minimum", \
                    {**base, name: prop["exclusiveMinimum"]}, name
        elif kinds and "string" not in kinds and "enum" not in prop:
            yield f"{name} of text", {**base, name: "soon"}, name
        if "string" in kinds and "enum" not in prop:
            yield f"{name} a list", {**base, name: [1]}, name
            if prop.get("minLength"):
                yield f"{name} empty", {**base, name: ""}, name
        if "boolean" in kinds:
            yield f"{name} a number", {**base, name: 7}, name
        items = prop.get("additionalProperties") or prop.get("items")
        if isinstance(items, dict) and items:
            yield f"{name} holding a nested object", {**base, name: (
                {"x": {"deep": 1}} if "object" in kinds else [{"deep": 1}])}, name


def test_every_body_of_the_route_table_is_checked_here():
    bodies = {schema_name(route.body) for route in routes.ROUTES if route.body is not None}
    assert bodies == set(ROUTE_OF_BODY)
    for body, (route_name, _) in ROUTE_OF_BODY.items():
        assert schema_name(routes.by_name(route_name).body) == body


@pytest.mark.parametrize("body", sorted(ROUTE_OF_BODY))
@pytest.mark.kafka(brokers=2, topics={"orders": 1}, clock="manual")
def test_the_server_refuses_what_the_schema_rules_out(body, kafka_cluster, kafka_admin):
    route_name, path_values = ROUTE_OF_BODY[body]
    route = routes.by_name(route_name)
    path = route.url(**path_values)
    transport = kafka_cluster.admin.transport  # the server's own handlers, without HTTP
    faults, topics = kafka_admin.faults(), kafka_admin.topics()
    cases = list(_bad_bodies(body))
    assert cases
    for what, data, field in cases:
        status, answer = transport.call(route.method, path, body=json.dumps(data).encode())
        assert status == 400 and field in answer.get("error", ""), (what, data, answer)
    assert kafka_admin.faults() == faults and kafka_admin.topics() == topics
    status, answer = transport.call(route.method, path, body=json.dumps(
        {**_minimal(body), "timeout_ms": 0} if "timeout_ms" in _components()[body][
            "properties"] else _minimal(body)).encode())
    assert status != 400, answer  # the smallest body the schema allows is taken


@pytest.mark.parametrize("body", sorted(set(ROUTE_OF_BODY) - {"FaultSpec"}))
def test_read_body_takes_the_schemas_smallest_body_and_refuses_the_rest(body):
    view = routes.by_name(ROUTE_OF_BODY[body][0]).body
    taken = read_body(view, _minimal(body))
    assert isinstance(taken, view)
    for what, data, field in _bad_bodies(body):
        with pytest.raises(BodyError, match=field):
            read_body(view, data)
