"""The HTTP admin API: faults, brokers, topics, groups, the request log and reset.

Served by aiohttp on the same event loop as the brokers, so every handler sees the cluster
between two Kafka requests, never in the middle of one.  JSON in and out; a bad call gets a 4xx
with ``{"error": "..."}`` and is checked in full before anything changes.  The routes and their
bodies are described by ``GET /openapi.json`` (:mod:`mockbroker.io.openapi`).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mockbroker.core import inspect
from mockbroker.core.cluster import topic_name_error
from mockbroker.core.errors import ApiException
from mockbroker.core.faults import FaultSpecError
from mockbroker.io.openapi import document
from wire import errors
from wire.apis import resolve_api

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime

log = logging.getLogger("mockbroker.http")


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _bad(message: str) -> ApiError:
    return ApiError(400, message)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status)


async def _body(request: web.Request, *, required: bool = True) -> dict[str, Any]:
    raw = await request.read()
    if not raw.strip():
        if required:
            raise _bad("this call needs a JSON object body")
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(f"malformed JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _bad("the body must be a JSON object")
    return data


def _only(body: dict[str, Any], *allowed: str) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise _bad(f"unknown field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")


def _int_field(body: dict[str, Any], name: str, *, minimum: int = 0, required: bool = True,
               default: int | None = None) -> int | None:
    if name not in body or body[name] is None:
        if required:
            raise _bad(f"{name} is required")
        return default
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise _bad(f"{name} must be at least {minimum}, got {value}")
    return value


def _int_param(request: web.Request, name: str, *, minimum: int = 0,
               default: int | None = None) -> int | None:
    text = request.query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise _bad(f"query parameter {name} must be an integer, got {text!r}") from None
    if value < minimum:
        raise _bad(f"query parameter {name} must be at least {minimum}, got {value}")
    return value


def _path_int(request: web.Request, name: str, what: str) -> int:
    text = request.match_info[name]
    try:
        return int(text)
    except ValueError:
        raise ApiError(404, f"unknown {what} {text!r}") from None


class AdminApi:
    """The routes, bound to one running cluster."""

    def __init__(self, runtime: "ClusterRuntime"):
        self.runtime = runtime

    @property
    def core(self):
        return self.runtime.core  # replaced by a reset: always read it afresh

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/health", self.health),
            web.get("/openapi.json", self.openapi),
            web.get("/brokers", self.list_brokers),
            web.get("/brokers/{broker_id}", self.get_broker),
            web.post("/brokers/{broker_id}/stop", self.stop_broker),
            web.post("/brokers/{broker_id}/start", self.start_broker),
            web.put("/brokers/{broker_id}/latency", self.set_latency),
            web.get("/topics", self.list_topics),
            web.post("/topics", self.create_topic),
            web.get("/topics/{name}", self.get_topic),
            web.delete("/topics/{name}", self.delete_topic),
            web.get("/topics/{name}/records", self.records),
            web.post("/topics/{name}/partitions/{partition}/leader", self.move_leader),
            web.get("/groups", self.list_groups),
            web.get("/groups/{group_id}", self.get_group),
            web.post("/groups/{group_id}/coordinator", self.move_coordinator),
            web.post("/groups/{group_id}/rebalance", self.rebalance),
            web.post("/groups/{group_id}/members/{member_id}/expire", self.expire_member),
            web.get("/faults", self.list_faults),
            web.post("/faults", self.add_fault),
            web.delete("/faults", self.clear_faults),
            web.get("/faults/{fault_id}", self.get_fault),
            web.delete("/faults/{fault_id}", self.remove_fault),
            web.get("/requests", self.list_requests),
            web.delete("/requests", self.clear_requests),
            web.post("/reset", self.reset),
        ]

    # -- health and description ---------------------------------------------------------------

    async def health(self, request: web.Request) -> web.Response:
        if self.runtime.ready:
            return _json({"status": "ok"})
        return _json({"status": "starting"}, status=503)

    async def openapi(self, request: web.Request) -> web.Response:
        return _json(document())

    # -- brokers ------------------------------------------------------------------------------

    def _broker_id(self, request: web.Request) -> int:
        node_id = _path_int(request, "broker_id", "broker")
        try:
            inspect.broker(self.core, node_id)
        except inspect.NotFound as exc:
            raise ApiError(404, str(exc)) from None
        return node_id

    def _broker_json(self, node_id: int) -> dict[str, Any]:
        return next(b for b in inspect.brokers(self.core) if b["id"] == node_id)

    async def list_brokers(self, request: web.Request) -> web.Response:
        return _json(inspect.brokers(self.core))

    async def get_broker(self, request: web.Request) -> web.Response:
        return _json(self._broker_json(self._broker_id(request)))

    async def stop_broker(self, request: web.Request) -> web.Response:
        node_id = self._broker_id(request)
        await self.runtime.stop_broker(node_id)
        return _json(self._broker_json(node_id))

    async def start_broker(self, request: web.Request) -> web.Response:
        node_id = self._broker_id(request)
        await self.runtime.start_broker(node_id)
        return _json(self._broker_json(node_id))

    async def set_latency(self, request: web.Request) -> web.Response:
        node_id = self._broker_id(request)
        body = await _body(request)
        _only(body, "delay_ms")
        delay_ms = _int_field(body, "delay_ms")
        if delay_ms:
            self.core.broker_latency_ms[node_id] = delay_ms
        else:
            self.core.broker_latency_ms.pop(node_id, None)
        return _json(self._broker_json(node_id))

    # -- topics -------------------------------------------------------------------------------

    def _topic(self, request: web.Request):
        try:
            return inspect.topic(self.core, request.match_info["name"])
        except inspect.NotFound as exc:
            raise ApiError(404, str(exc)) from None

    async def list_topics(self, request: web.Request) -> web.Response:
        internal = request.query.get("internal", "false").lower()
        if internal not in ("true", "false", "1", "0"):
            raise _bad(f"query parameter internal must be true or false, got {internal!r}")
        return _json(inspect.topics(self.core, include_internal=internal in ("true", "1")))

    async def create_topic(self, request: web.Request) -> web.Response:
        body = await _body(request)
        _only(body, "name", "partitions", "replication_factor", "configs")
        name = body.get("name")
        if not isinstance(name, str):
            raise _bad("name is required and must be a string")
        problem = topic_name_error(name)
        if problem:
            raise _bad(problem)
        partitions = _int_field(body, "partitions", minimum=1, required=False, default=-1)
        replication = _int_field(body, "replication_factor", minimum=1, required=False,
                                 default=-1)
        configs = body.get("configs") or {}
        if not isinstance(configs, dict) or not all(
                isinstance(k, str) and (v is None or isinstance(v, str))
                for k, v in configs.items()):
            raise _bad("configs must map config names to string values")
        try:
            topic = self.core.cluster.create_topic(
                name, partitions, replication, list(configs.items()) or None)
        except ApiException as exc:
            status = 409 if exc.error_code == errors.TOPIC_ALREADY_EXISTS else 400
            raise ApiError(status, str(exc)) from None
        return _json(inspect.topic_json(topic), status=201)

    async def get_topic(self, request: web.Request) -> web.Response:
        return _json(inspect.topic_json(self._topic(request)))

    async def delete_topic(self, request: web.Request) -> web.Response:
        topic = self._topic(request)
        self.core.cluster.delete_topic(topic.name)
        return _json({"deleted": topic.name})

    async def records(self, request: web.Request) -> web.Response:
        topic = self._topic(request)
        unknown = sorted(set(request.query) - {"partition", "offset", "limit"})
        if unknown:
            raise _bad(f"unknown query parameter(s) {', '.join(unknown)}; expected "
                       "partition, offset, limit")
        partition = _int_param(request, "partition")
        offset = _int_param(request, "offset")
        limit = _int_param(request, "limit", default=100)
        try:
            found = inspect.records(self.core, topic.name, partition, offset, limit)
        except inspect.NotFound as exc:
            raise ApiError(404, str(exc)) from None
        return _json(found)

    async def move_leader(self, request: web.Request) -> web.Response:
        topic = self._topic(request)
        index = _path_int(request, "partition", "partition")
        if not 0 <= index < len(topic.partitions):
            raise ApiError(404, f"topic {topic.name!r} has no partition {index}")
        body = await _body(request)
        _only(body, "broker")
        node_id = _int_field(body, "broker")
        if node_id not in self.core.cluster.brokers:
            raise ApiError(404, f"unknown broker {node_id}")
        try:
            self.core.cluster.move_leader(topic.partitions[index], node_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return _json(inspect.topic_json(topic))

    # -- groups -------------------------------------------------------------------------------

    def _group(self, request: web.Request):
        try:
            return inspect.group(self.core, request.match_info["group_id"])
        except inspect.NotFound as exc:
            raise ApiError(404, str(exc)) from None

    async def list_groups(self, request: web.Request) -> web.Response:
        return _json(inspect.groups(self.core))

    async def get_group(self, request: web.Request) -> web.Response:
        return _json(inspect.group_json(self.core, *self._group(request)))

    async def move_coordinator(self, request: web.Request) -> web.Response:
        """Move the leader of the group's ``__consumer_offsets`` partition, as a reassignment
        would: the new coordinator loads the group from the partition (other groups on that
        partition move with it)."""
        shard, group = self._group(request)
        body = await _body(request)
        _only(body, "broker")
        node_id = _int_field(body, "broker")
        if node_id not in self.core.cluster.brokers:
            raise ApiError(404, f"unknown broker {node_id}")
        core = self.core
        try:
            core.groups.admin.move_coordinator(group.group_id, node_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        try:
            return _json(inspect.group_json(core, *inspect.group(core, group.group_id)))
        except inspect.NotFound:  # the new coordinator is still loading the partition
            return _json({"group_id": group.group_id, "coordinator": node_id,
                          "state": "loading"})

    async def rebalance(self, request: web.Request) -> web.Response:
        shard, group = self._group(request)
        await _body(request, required=False)
        try:
            self.core.groups.admin.force_rebalance(group.group_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return _json(inspect.group_json(self.core, shard, group))

    async def expire_member(self, request: web.Request) -> web.Response:
        shard, group = self._group(request)
        member_id = request.match_info["member_id"]
        if member_id not in group.members:
            raise ApiError(404, f"group {group.group_id!r} has no member {member_id!r}")
        await _body(request, required=False)
        self.core.groups.admin.expire_member(group.group_id, member_id)
        return _json(inspect.group_json(self.core, shard, group))

    # -- faults -------------------------------------------------------------------------------

    def _fault_id(self, request: web.Request) -> int:
        fault_id = _path_int(request, "fault_id", "fault")
        if self.core.faults.get(fault_id) is None:
            raise ApiError(404, f"no fault {fault_id}")
        return fault_id

    async def list_faults(self, request: web.Request) -> web.Response:
        return _json([fault.to_json() for fault in self.core.faults])

    async def add_fault(self, request: web.Request) -> web.Response:
        body = await _body(request)
        try:
            fault = self.core.faults.add(body)
        except FaultSpecError as exc:
            raise _bad(str(exc)) from None
        return _json(fault.to_json(), status=201)

    async def get_fault(self, request: web.Request) -> web.Response:
        return _json(self.core.faults.get(self._fault_id(request)).to_json())

    async def remove_fault(self, request: web.Request) -> web.Response:
        fault = self.core.faults.remove(self._fault_id(request))
        return _json(fault.to_json())

    async def clear_faults(self, request: web.Request) -> web.Response:
        return _json({"removed": self.core.faults.clear()})

    # -- the request log ----------------------------------------------------------------------

    async def list_requests(self, request: web.Request) -> web.Response:
        unknown = sorted(set(request.query) - {"api", "broker", "client_id", "limit"})
        if unknown:
            raise _bad(f"unknown query parameter(s) {', '.join(unknown)}; expected "
                       "api, broker, client_id, limit")
        api = request.query.get("api")
        if api is not None:
            try:
                api = resolve_api(api)
            except (KeyError, TypeError) as exc:
                raise _bad(f"api: {exc.args[0]}") from None
        broker_id = _int_param(request, "broker")
        if broker_id is not None and broker_id not in self.core.cluster.brokers:
            raise ApiError(404, f"unknown broker {broker_id}")
        limit = _int_param(request, "limit")
        return _json(inspect.requests(self.core, api, broker_id, request.query.get("client_id"),
                                      limit))

    async def clear_requests(self, request: web.Request) -> web.Response:
        self.core.requests.clear()
        return _json({"status": "ok"})

    # -- reset --------------------------------------------------------------------------------

    async def reset(self, request: web.Request) -> web.Response:
        await _body(request, required=False)
        await self.runtime.reset()
        return _json({"status": "ok"})


@web.middleware
async def _errors_as_json(request: web.Request, handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        return _json({"error": exc.message}, status=exc.status)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if exc.status == 404:
            message = f"no such endpoint: {request.method} {request.path}"
        elif exc.status == 405:
            message = f"{request.method} is not allowed on {request.path}"
        else:
            message = exc.reason
        response = _json({"error": message}, status=exc.status)
        if "Allow" in exc.headers:
            response.headers["Allow"] = exc.headers["Allow"]
        return response
    except Exception:
        log.exception("admin API: %s %s failed", request.method, request.path)
        return _json({"error": "internal error (see the server log)"}, status=500)


def make_app(runtime: "ClusterRuntime") -> web.Application:
    app = web.Application(middlewares=[_errors_as_json])
    app.add_routes(AdminApi(runtime).routes())
    return app


class AdminServer:
    def __init__(self, host: str, port: int, runtime: "ClusterRuntime"):
        self.host = host
        self.port = port
        self._runner = web.AppRunner(make_app(runtime), access_log=None)
        self._site: web.TCPSite | None = None

    async def start(self) -> None:
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, self.host, self.port)
        await self._site.start()
        self.port = self._site._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await self._runner.cleanup()
