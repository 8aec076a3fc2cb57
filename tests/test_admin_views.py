"""The admin API's single description: the views, their JSON and schemas, the route table, and
the client against it.  No cluster here (see test_admin_transport.py for the live checks)."""

from __future__ import annotations

import dataclasses
import inspect as pyinspect
import json
import typing
from typing import Any, Literal, get_args, get_origin

import pytest

from mockbroker.admin import AdminClient
from mockbroker.core.observe import inspect
from mockbroker.adminapi import actions, routes, views
from mockbroker.core.groups.classic.state import GroupState
from mockbroker.core.groups.consumer.group import ConsumerGroupState
from mockbroker.core.groups.streams.group import StreamsGroupState
from mockbroker.core.transactions.state import TxnState
from mockbroker.core.control.rules import Rule
from mockbroker.core.observe.requests import LoggedRequest
from mockbroker.adminapi.jsonview import from_json, hints, schema, schema_name, to_json
from mockbroker.adminapi.openapi import document

#: client methods that are conveniences over other routes, not routes of their own
CLIENT_HELPERS = {"fault", "last_event_seq"}
#: client methods that return something simpler than their route's view (the rest return it)
RETURNS_OTHER = {"health": bool, "clear_faults": int, "delete_topic": type(None),
                 "clear_requests": type(None), "reset": type(None),
                 "move_coordinator": dict,  # the group as JSON, as it always did
                 "events": list[dict], "wait_for_event": dict}  # events as JSON: open-ended


def _required(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]


def test_each_component_schema_lists_exactly_its_views_fields():
    components = document()["components"]["schemas"]
    assert set(components) == {schema_name(cls) for cls in views.VIEWS}
    for cls in views.VIEWS:
        component = components[schema_name(cls)]
        assert list(component["properties"]) == [f.name for f in dataclasses.fields(cls)], cls
        assert component.get("required", []) == _required(cls), cls
        for f in dataclasses.fields(cls):  # a field's description and keywords are kept
            for key, value in f.metadata.items():
                assert component["properties"][f.name][key] == value, (cls, f.name)


def test_schemas_follow_the_type_hints():
    assert schema(int) == {"type": "integer"} and schema(bool) == {"type": "boolean"}
    assert schema(float) == {"type": "number"} and schema(str | None) == \
        {"type": ["string", "null"]}
    assert schema(str | int | None) == {"type": ["string", "integer", "null"]}
    assert schema(list[int]) == {"type": "array", "items": {"type": "integer"}}
    assert schema(dict[str, list[int]] | None) == {
        "type": ["object", "null"],
        "additionalProperties": {"type": "array", "items": {"type": "integer"}}}
    assert schema(Literal["up", "down"]) == {"enum": ["up", "down"], "type": "string"}
    assert schema(Literal["a"] | None) == {"enum": ["a", None], "type": ["string", "null"]}
    assert schema(views.TopicView) == {"$ref": "#/components/schemas/Topic"}
    assert schema(list[views.RecordView])["items"] == {"$ref": "#/components/schemas/Record"}
    assert schema(views.GroupView | views.GroupLoadingView) == {"anyOf": [
        {"$ref": "#/components/schemas/Group"}, {"$ref": "#/components/schemas/GroupLoading"}]}
    with pytest.raises(TypeError):
        schema(set[int])


def test_json_keys_partitions_by_string_and_the_client_reads_them_back_as_integers():
    group = views.GroupView(
        group_id="g", state="Stable", generation=3, protocol_type="consumer",
        protocol="range", leader="m-1", coordinator=1,
        members=[views.MemberView(member_id="m-1", client_id="c", group_instance_id=None,
                                  assignment={"orders": [0, 1]})],
        offsets={"orders": {0: 5, 1: 7}}, lag={"orders": {0: 1}})
    data = to_json(group)
    assert data["offsets"] == {"orders": {"0": 5, "1": 7}}
    assert data["offset_metadata"] == {}
    assert list(data) == [f.name for f in dataclasses.fields(views.GroupView)]
    assert from_json(views.GroupView, data) == group
    newer = {**data, "epoch": 9, "members": [{**data["members"][0], "tag": "x"}]}
    assert from_json(views.GroupView, newer) == group  # keys a newer server adds are ignored
    loading = {"group_id": "g", "coordinator": 1, "state": "loading"}
    assert from_json(views.GroupView | views.GroupLoadingView, loading) == \
        views.GroupLoadingView(**loading)
    assert from_json(views.GroupView | views.GroupLoadingView, data) == group


def test_the_fault_and_request_log_views_show_what_the_core_objects_do():
    """The views are built from the core objects field by field, in the JSON users read."""
    fault = Rule(4, "error", api=0, error=6, count=2, broker=1, topic="t", partition=0,
                 client_id="c", delay_ms=5, probability=0.5, fired=1)
    assert to_json(inspect.fault_view(fault)) == {
        "id": 4, "action": "error", "api": "Produce", "api_key": 0, "registry": None,
        "subject": None,
        "error": "NOT_LEADER_OR_FOLLOWER", "error_code": 6, "count": 2, "after": 0, "fired": 1,
        "broker": 1, "topic": "t", "partition": 0, "group": None, "client_id": "c",
        "principal": None, "delay_ms": 5, "throttle_ms": 0, "probability": 0.5, "chain": False,
        "target_broker": None,
        "target_topic": None, "target_partition": None, "target_group": None,
        "target_member": None, "target_transaction": None}
    delay = Rule(5, "delay", delay_ms=10, count=None)
    shown = to_json(inspect.fault_view(delay))
    assert (shown["action"], shown["api"], shown["error"], shown["count"], shown["delay_ms"]) \
        == ("delay", None, None, None, 10)
    logged = LoggedRequest(7, 1000, 1, 0, 9, 42, "writer", "answered", 6, 4, [4])
    assert [to_json(v) for v in inspect.requests(_Core([logged]))] == [{
        "seq": 7, "time_ms": 1000, "broker": 1, "api": "Produce", "api_key": 0,
        "api_version": 9, "correlation_id": 42, "client_id": "writer", "outcome": "answered",
        "error": "NOT_LEADER_OR_FOLLOWER", "error_code": 6, "fault": 4, "rules": [4],
        "principal": "User:ANONYMOUS", "listener": "PLAINTEXT", "mechanism": None}]
    quiet = LoggedRequest(8, 1001, 0, 3, 12, 43, None)
    (view,) = [to_json(v) for v in inspect.requests(_Core([quiet]))]
    assert (view["api"], view["outcome"], view["error"], view["fault"], view["rules"]) == \
        ("Metadata", "pending", None, None, [])


class _Core:
    def __init__(self, requests):
        self.requests = requests


def test_the_views_enums_and_the_fault_spec_match_the_core():
    assert set(get_args(views.GroupState)) == {s.value for s in GroupState} | \
        {s.value for s in ConsumerGroupState} | {s.value for s in StreamsGroupState}
    assert set(get_args(views.TransactionState)) == {s.value for s in TxnState}
    assert get_args(views.FaultAction) == actions.names()
    # a parsed rule keeps every field a fault spec has
    assert {f.name for f in dataclasses.fields(views.FaultSpec)} <= set(Rule.__struct_fields__)


def test_routes_are_matched_like_the_http_router():
    route, params, known = routes.match("GET", "/topics/a%2Eb/records")
    assert (route.name, params, known) == ("records", {"name": "a.b"}, True)
    route, params, _ = routes.match("post", "/groups/g%2F1/members/m-1/expire")
    assert (route.name, params) == ("expire_member", {"group_id": "g/1", "member_id": "m-1"})
    assert routes.match("PATCH", "/faults") == (None, {}, True)
    assert routes.match("GET", "/nowhere") == (None, {}, False)
    assert routes.match("GET", "/topics/a/b") == (None, {}, False)
    assert routes.by_name("records").url(name="a/b") == "/topics/a%2Fb/records"
    assert routes.by_name("broker").url(broker_id="2") == "/brokers/2"


def test_every_route_has_a_client_method_of_its_name_and_back():
    methods = {name for name, _ in pyinspect.getmembers(AdminClient, pyinspect.isfunction)
               if not name.startswith("_")}
    assert methods - CLIENT_HELPERS == {route.name for route in routes.ROUTES}
    assert len({(r.method, r.path) for r in routes.ROUTES}) == len(routes.ROUTES)


def _sample(tp: Any) -> Any:
    """A JSON value of type hint ``tp``, as a server could send it."""
    if dataclasses.is_dataclass(tp):
        return {name: _sample(hint) for name, hint in hints(tp).items()}
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return args[0]
    if origin in (typing.Union, type(int | None)):
        return _sample(next(a for a in args if a is not type(None)))
    if origin is list:
        return [_sample(args[0])]
    if origin is dict:
        return {"1": _sample(args[1])}
    return {int: 1, str: "x", bool: True, float: 0.5, dict: {}}.get(tp)


class _Recorder:
    """A transport that answers every call with a sample of its route's answer."""

    def __init__(self):
        self.calls = []

    def call(self, method, path, query=None, body=None):
        route, _, _ = routes.match(method, path)
        self.calls.append((route and route.name, query, body))
        return route.status, _sample(route.answer)


def _args(method) -> dict[str, Any]:
    values = {"int": 1, "str": "x", "dict[str, str | None]": {"client-id": "x"}}
    return {name: values[str(p.annotation)] if str(p.annotation) in values
            else values[str(p.annotation).split(" |")[0]]
            for name, p in pyinspect.signature(method).parameters.items()
            if name != "self" and p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


@pytest.mark.parametrize("route", routes.ROUTES, ids=lambda r: r.name)
def test_each_client_method_calls_its_route_and_builds_the_routes_views(route):
    recorder = _Recorder()
    client = AdminClient("http://test", transport=recorder)
    method = getattr(AdminClient, route.name)
    got = method(client, **_args(method))
    assert [name for name, _, _ in recorder.calls] == [route.name]
    answer = RETURNS_OTHER.get(route.name, route.answer)
    if get_origin(answer) is list:
        (item,) = get_args(answer)
        assert got and all(type(v) is item for v in got)
    else:
        assert type(got) is answer
    if route.body is not None:  # what the client sends is what the body's view allows
        sent = json.loads(recorder.calls[0][2])
        assert set(sent) <= {f.name for f in dataclasses.fields(route.body)}
    query = recorder.calls[0][1] or {}
    assert set(query) <= {p.name for p in route.query}


# -- security: the ACL and user views, and the bearer scheme ---------------------------------

def test_the_acl_and_user_views_enums_match_the_core():
    from mockbroker.core.security import acls
    from mockbroker.core.security.mechanisms import PLAIN, SCRAM_HASHES

    only_in_filters = {"UNKNOWN", "ANY", "MATCH"}
    for hint, enum in ((views.AclResourceType, acls.ResourceType),
                       (views.AclPatternType, acls.PatternType),
                       (views.AclOperation, acls.AclOperation),
                       (views.AclPermissionType, acls.AclPermissionType)):
        assert list(get_args(hint)) == [e.name for e in enum if e.name not in only_in_filters]
    assert get_args(views.CredentialMechanism) == (PLAIN, *SCRAM_HASHES)


def _secured_core(**settings):
    from mockbroker.core.cluster import Broker
    from mockbroker.core.security.config import check_security
    from mockbroker.handlers import new_core

    return new_core([Broker(0, "127.0.0.1", 0)], {}, None, check_security(settings))


def test_acls_and_users_show_names_and_mechanisms_never_secrets():
    from mockbroker.core.security.acls import AclBinding
    from mockbroker.core.security.mechanisms import SCRAM_SHA_512, ScramCredential

    core = _secured_core(security_protocol="SASL_PLAINTEXT", authorizer=True,
                         users={"alice": "alice-secret", "admin": "admin-secret"},
                         super_users=["admin"])
    read = AclBinding(2, "orders", 3, "User:alice", "*", 3, 3)
    deny = AclBinding(3, "billing-", 4, "User:*", "10.0.0.1", 2, 2)
    assert all(r.ok for r in core.security.authorizer.acls.create([read, deny]))
    # a user with a SCRAM credential only, as AlterUserScramCredentials makes one
    core.security.credentials.scram[SCRAM_SHA_512]["carol"] = \
        ScramCredential.from_password(SCRAM_SHA_512, "carol-secret")

    shown = to_json(inspect.acls(core))
    assert shown == {
        "authorizer": True, "allow_everyone_if_no_acl_found": False,
        "super_users": ["User:admin"],
        "acls": [{"resource_type": "TOPIC", "resource_name": "orders",
                  "pattern_type": "LITERAL", "principal": "User:alice", "host": "*",
                  "operation": "READ", "permission_type": "ALLOW"},
                 {"resource_type": "GROUP", "resource_name": "billing-",
                  "pattern_type": "PREFIXED", "principal": "User:*", "host": "10.0.0.1",
                  "operation": "ALL", "permission_type": "DENY"}]}
    assert from_json(views.AclsView, shown) == inspect.acls(core)

    users = to_json(inspect.users(core))
    both = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert users == [{"name": "admin", "mechanisms": both, "super_user": True},
                     {"name": "alice", "mechanisms": both, "super_user": False},
                     {"name": "carol", "mechanisms": ["SCRAM-SHA-512"], "super_user": False}]
    assert "secret" not in json.dumps(users)


def test_without_an_authorizer_acls_are_empty_and_say_so():
    core = _secured_core()
    assert to_json(inspect.acls(core)) == {"authorizer": False,
                                           "allow_everyone_if_no_acl_found": False,
                                           "super_users": [], "acls": []}
    assert inspect.users(core) == []


def test_the_bearer_document_secures_every_operation_but_the_public_ones():
    plain, bearer = document(), document(bearer=True)
    assert "security" not in plain and "securitySchemes" not in plain["components"]
    assert plain["paths"] == document(bearer=False)["paths"]
    assert bearer["components"]["securitySchemes"] == {"bearer": {
        "type": "http", "scheme": "bearer",
        "description": bearer["components"]["securitySchemes"]["bearer"]["description"]}}
    assert bearer["security"] == [{"bearer": []}]
    assert bearer["components"]["schemas"] == plain["components"]["schemas"]
    public = {(r.method.lower(), r.path) for r in routes.ROUTES if r.public}
    assert public == {("get", "/health")}
    for path, ops in bearer["paths"].items():
        for method, op in ops.items():
            if (method, path) in public:
                assert op["security"] == [] and "401" not in op["responses"]
            else:
                assert "security" not in op  # the document's own applies
                assert op["responses"]["401"]["content"]["application/json"]["schema"] == \
                    schema(views.Error)
                unsecured = plain["paths"][path][method]
                assert {k: v for k, v in op["responses"].items() if k != "401"} == \
                    unsecured["responses"]
