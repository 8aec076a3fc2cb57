"""The OpenAPI 3.1 description of the admin API, served at ``GET /openapi.json``.

Kept beside the routes in :mod:`mockbroker.io.http`; a test checks that the two list the same
paths and methods.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mockbroker import __version__


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(properties: dict[str, Any], required: tuple[str, ...] = (), **extra) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


_INT = {"type": "integer"}
_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_NINT = {"type": ["integer", "null"]}
_INT_MAP = {"type": "object", "additionalProperties": {"type": "object",
                                                       "additionalProperties": _INT}}


def _json_body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def _answer(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description}
    if schema is not None:
        out["content"] = {"application/json": {"schema": schema}}
    return out


_ERROR = _answer("the call was refused; nothing changed", _ref("Error"))


def _op(summary: str, ok: tuple[str, str, dict | None], *, body: dict | None = None,
        params: list[dict] | None = None, errors: tuple[str, ...] = ()) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary,
                          "responses": {ok[0]: _answer(ok[1], ok[2])}}
    for status in errors:
        op["responses"][status] = _ERROR
    if body is not None:
        op["requestBody"] = body
    if params:
        op["parameters"] = params
    return op


def _path_param(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema,
            "description": description}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema,
            "description": description}


_BROKER = _path_param("broker_id", _INT, "broker id")
_TOPIC = _path_param("name", _STR, "topic name")
_GROUP = _path_param("group_id", _STR, "group id")
_TARGET_BROKER = _json_body(_obj({"broker": _INT}, ("broker",)))

SCHEMAS: dict[str, Any] = {
    "Error": _obj({"error": _STR}, ("error",)),
    "Status": _obj({"status": _STR}, ("status",)),
    "FaultSpec": _obj({
        "api": {"type": ["string", "integer", "null"],
                "description": "Kafka API name (Produce, JoinGroup, ...) or key; null: any"},
        "action": {"enum": ["error", "delay", "drop", "disconnect"],
                   "description": "default: error when an error is given, else delay"},
        "error": {"type": ["string", "integer", "null"],
                  "description": "Kafka error name (NOT_LEADER_OR_FOLLOWER) or code; used "
                                 "by action error only"},
        "count": {"type": ["integer", "null"], "minimum": 1,
                  "description": "how many requests it picks (default 1); null: until removed"},
        "broker": _NINT, "topic": _NSTR,
        "partition": {"type": ["integer", "null"], "minimum": 0},
        "client_id": _NSTR,
        "delay_ms": {"type": "integer", "minimum": 0,
                     "description": "wait before the action (the whole action for delay)"},
        "probability": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    }, additionalProperties=False),
    "Fault": _obj({
        "id": _INT, "action": _STR, "api": _NSTR, "api_key": _NINT, "error": _NSTR,
        "error_code": _NINT, "count": _NINT, "fired": _INT, "broker": _NINT, "topic": _NSTR,
        "partition": _NINT, "client_id": _NSTR, "delay_ms": _INT,
        "probability": {"type": "number"},
    }, ("id", "action", "count", "fired")),
    "Broker": _obj({
        "id": _INT, "host": _STR, "port": _INT, "rack": _NSTR,
        "state": {"enum": ["up", "down"]}, "controller": {"type": "boolean"},
        "latency_ms": _INT, "leader_partitions": _INT,
    }, ("id", "host", "port", "state")),
    "Partition": _obj({
        "partition": _INT, "leader": _INT, "leader_epoch": _INT,
        "replicas": {"type": "array", "items": _INT}, "isr": {"type": "array", "items": _INT},
        "log_start_offset": _INT, "high_watermark": _INT, "records": _INT,
    }, ("partition", "leader", "log_start_offset", "high_watermark")),
    "Topic": _obj({
        "name": _STR, "topic_id": _STR, "internal": {"type": "boolean"},
        "configs": {"type": "object", "additionalProperties": _STR},
        "partitions": {"type": "array", "items": _ref("Partition")},
    }, ("name", "topic_id", "partitions")),
    "NewTopic": _obj({
        "name": _STR, "partitions": {"type": "integer", "minimum": 1},
        "replication_factor": {"type": "integer", "minimum": 1},
        "configs": {"type": "object", "additionalProperties": _NSTR},
    }, ("name",), additionalProperties=False),
    "Header": _obj({"key": _STR, "value": _NSTR, "value_base64": _NSTR}),
    "Record": _obj({
        "partition": _INT, "offset": _INT, "timestamp": _INT,
        "timestamp_type": {"enum": ["CreateTime", "LogAppendTime"]},
        "key": {**_NSTR, "description": "UTF-8 text, or null when absent or not text"},
        "key_base64": _NSTR, "value": _NSTR, "value_base64": _NSTR,
        "headers": {"type": "array", "items": _ref("Header")},
    }, ("partition", "offset", "timestamp", "key", "value", "headers")),
    "Member": _obj({
        "member_id": _STR, "client_id": _STR, "client_host": _STR,
        "group_instance_id": _NSTR, "session_timeout_ms": _INT, "rebalance_timeout_ms": _INT,
        "assignment": {"type": ["object", "null"],
                       "additionalProperties": {"type": "array", "items": _INT},
                       "description": "{topic: [partitions]} for consumer groups"},
        "assignment_base64": _STR,
    }, ("member_id", "client_id", "group_instance_id", "assignment")),
    "Group": _obj({
        "group_id": _STR,
        "state": {"enum": ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable",
                           "Dead"]},
        "generation": _INT, "protocol_type": _NSTR, "protocol": _NSTR, "leader": _NSTR,
        "coordinator": _INT, "members": {"type": "array", "items": _ref("Member")},
        "offsets": {**_INT_MAP, "description": "{topic: {partition: committed offset}}"},
        "offset_metadata": {"type": "object"},
        "lag": {**_INT_MAP, "description": "{topic: {partition: high watermark - committed}}"},
    }, ("group_id", "state", "generation", "protocol_type", "protocol", "leader",
        "coordinator", "members", "offsets")),
    "GroupSummary": _obj({
        "group_id": _STR, "state": _STR, "generation": _INT, "protocol_type": _NSTR,
        "coordinator": _INT, "members": _INT,
    }, ("group_id", "state")),
    "LoggedRequest": _obj({
        "seq": _INT, "time_ms": _INT, "broker": _INT, "api": _STR, "api_key": _INT,
        "api_version": _INT, "correlation_id": _INT, "client_id": _NSTR,
        "outcome": {"enum": ["pending", "answered", "no response", "dropped", "disconnected",
                             "failed"]},
        "error": {**_NSTR, "description": "the first error code in the response, by name"},
        "error_code": _INT, "fault": {**_NINT, "description": "the fault that picked it"},
    }, ("seq", "broker", "api", "api_version", "client_id", "outcome", "error")),
}


def _paths() -> dict[str, Any]:
    arr = lambda name: {"type": "array", "items": _ref(name)}  # noqa: E731
    return {
        "/health": {"get": _op("200 once every listener is up", ("200", "up", _ref("Status")),
                               errors=("503",))},
        "/openapi.json": {"get": _op("this document", ("200", "OpenAPI 3.1", {"type": "object"}))},
        "/brokers": {"get": _op("brokers", ("200", "every broker", arr("Broker")))},
        "/brokers/{broker_id}": {"get": _op("one broker", ("200", "the broker", _ref("Broker")),
                                            params=[_BROKER], errors=("404",))},
        "/brokers/{broker_id}/stop": {"post": _op(
            "take a broker down: its listener closes, leadership and coordination move to "
            "live brokers", ("200", "the broker", _ref("Broker")), params=[_BROKER],
            errors=("404",))},
        "/brokers/{broker_id}/start": {"post": _op(
            "bring a stopped broker back on its port; it takes back its preferred partitions",
            ("200", "the broker", _ref("Broker")), params=[_BROKER], errors=("404",))},
        "/brokers/{broker_id}/latency": {"put": _op(
            "add latency to every answer of a broker (0 removes it)",
            ("200", "the broker", _ref("Broker")), params=[_BROKER],
            body=_json_body(_obj({"delay_ms": {"type": "integer", "minimum": 0}},
                                 ("delay_ms",))), errors=("400", "404"))},
        "/topics": {
            "get": _op("topics with partitions and offsets", ("200", "topics", arr("Topic")),
                       params=[_query("internal", {"type": "boolean"},
                                      "include __consumer_offsets and other internal topics")],
                       errors=("400",)),
            "post": _op("create a topic", ("201", "created", _ref("Topic")),
                        body=_json_body(_ref("NewTopic")), errors=("400", "409")),
        },
        "/topics/{name}": {
            "get": _op("one topic", ("200", "the topic", _ref("Topic")), params=[_TOPIC],
                       errors=("404",)),
            "delete": _op("delete a topic", ("200", "deleted", _obj({"deleted": _STR})),
                          params=[_TOPIC], errors=("404",)),
        },
        "/topics/{name}/records": {"get": _op(
            "decoded records, in offset order per partition",
            ("200", "records", arr("Record")),
            params=[_TOPIC, _query("partition", _INT, "one partition (default: all)"),
                    _query("offset", _INT, "first offset (default: the log start)"),
                    _query("limit", _INT, "at most this many (default 100)")],
            errors=("400", "404"))},
        "/topics/{name}/partitions/{partition}/leader": {"post": _op(
            "make a live replica the partition's leader (new leader epoch)",
            ("200", "the topic", _ref("Topic")),
            params=[_TOPIC, _path_param("partition", _INT, "partition")],
            body=_TARGET_BROKER, errors=("400", "404", "409"))},
        "/groups": {"get": _op("groups", ("200", "groups", arr("GroupSummary")))},
        "/groups/{group_id}": {"get": _op(
            "one group: state, generation, protocol, leader, coordinator, members with their "
            "assignments, committed offsets and lag", ("200", "the group", _ref("Group")),
            params=[_GROUP], errors=("404",))},
        "/groups/{group_id}/coordinator": {"post": _op(
            "move the group's coordinator (the leader of its __consumer_offsets partition)",
            ("200", "the group", _ref("Group")), params=[_GROUP], body=_TARGET_BROKER,
            errors=("400", "404", "409"))},
        "/groups/{group_id}/rebalance": {"post": _op(
            "start a rebalance as if membership had changed", ("200", "the group",
                                                                _ref("Group")),
            params=[_GROUP], errors=("404", "409"))},
        "/groups/{group_id}/members/{member_id}/expire": {"post": _op(
            "remove a member as if its session had timed out", ("200", "the group",
                                                                 _ref("Group")),
            params=[_GROUP, _path_param("member_id", _STR, "member id")], errors=("404",))},
        "/faults": {
            "get": _op("faults in force, in the order they apply", ("200", "faults",
                                                                    arr("Fault"))),
            "post": _op("add a fault", ("201", "added", _ref("Fault")),
                        body=_json_body(_ref("FaultSpec")), errors=("400",)),
            "delete": _op("remove every fault", ("200", "how many were removed",
                                                 _obj({"removed": _INT}))),
        },
        "/faults/{fault_id}": {
            "get": _op("one fault", ("200", "the fault", _ref("Fault")),
                       params=[_path_param("fault_id", _INT, "fault id")], errors=("404",)),
            "delete": _op("remove one fault", ("200", "the removed fault", _ref("Fault")),
                          params=[_path_param("fault_id", _INT, "fault id")], errors=("404",)),
        },
        "/requests": {
            "get": _op("recent requests, oldest first", ("200", "requests",
                                                         arr("LoggedRequest")),
                       params=[_query("api", _STR, "API name or key"),
                               _query("broker", _INT, "broker id"),
                               _query("client_id", _STR, "client id"),
                               _query("limit", _INT, "only the last N")],
                       errors=("400", "404")),
            "delete": _op("clear the request log", ("200", "cleared", _ref("Status"))),
        },
        "/reset": {"post": _op(
            "drop all topics, groups, offsets, faults and latency, start stopped brokers, "
            "close client connections; listeners stay up", ("200", "reset", _ref("Status")))},
    }


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "mockbroker admin API", "version": __version__,
                 "description": "Fault injection and inspection for a mock Kafka cluster."},
        "paths": _paths(),
        "components": {"schemas": SCHEMAS},
    }
