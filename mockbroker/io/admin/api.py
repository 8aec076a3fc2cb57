"""The admin API's handlers, one per route of :mod:`mockbroker.adminapi.routes`, apart from
any transport: the HTTP server (:mod:`mockbroker.io.admin.http`) and the in-process transport
(:mod:`mockbroker.io.admin.local`) both call :meth:`AdminApi.handle`, so they answer alike: the
same statuses, the same bodies, the same ``{"error": "..."}`` messages.

Each handler runs on the cluster's loop, between two Kafka requests, and checks a call in full
before anything changes; a refusal is an :class:`ApiError` (a 4xx with its reason).  A request
body is read as the view its route declares (:func:`~mockbroker.adminapi.jsonview.read_body`),
the same declaration its OpenAPI schema is written from; what is left to check here is what a
schema cannot say (a topic name Kafka refuses, a broker that does not exist).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from mockbroker.core.observe import inspect, waits
from mockbroker.adminapi import routes
from mockbroker.core.cluster import topic_name_error
from mockbroker.core.errors import ApiException
from mockbroker.core.control.rules import RuleError
from mockbroker.core.quotas.entities import AlterOp, entity
from mockbroker.adminapi.jsonview import BodyError, read_body, to_json
from mockbroker.core.observe.events import parse_types
from mockbroker.adminapi.views import (
    BrokerLatency, ClockAdvance, ClockView, Deleted, EventWait, GroupLoadingView, GroupWait,
    LagWait, NewTopic, QuorumFailover, QuorumReplicaView, QuorumView, QuotaSpec, QuotaView,
    RebalanceView, RecordsWait, Removed, ReplicaLagging, Status, TargetBroker,
)
from mockbroker.core.observe.watch import rebalances
from mockbroker.core.quorum import FailoverError, kafka_uuid, quorum_of
from mockbroker.adminapi.openapi import document
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


class Call(Struct):
    """One call, whatever carried it: the route's path parameters (unquoted), the query
    parameters (first value of each) and the raw body."""

    path: dict[str, str]
    query: dict[str, str]
    body: bytes = b""


class Answer(Struct):
    """A handler's answer when its status is not the route's usual one."""

    status: int
    data: Any


def no_such_endpoint(method: str, path: str) -> tuple[int, dict[str, str]]:
    return 404, {"error": f"no such endpoint: {method} {path}"}


def not_allowed(method: str, path: str) -> tuple[int, dict[str, str]]:
    return 405, {"error": f"{method} is not allowed on {path}"}


def _bad(message: str) -> ApiError:
    return ApiError(400, message)


def _json(call: Call, *, required: bool = True) -> Any:
    """The call's body as parsed JSON (None when empty and not ``required``)."""
    raw = call.body
    if not raw.strip():
        if required:
            raise _bad("this call needs a JSON object body")
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(f"malformed JSON: {exc}") from None


def _read(call: Call, view: type) -> Any:
    """The call's body as an instance of its route's body ``view``, checked against it."""
    try:
        return read_body(view, _json(call))
    except BodyError as exc:
        raise _bad(str(exc)) from None


def _no_body(call: Call) -> None:
    """A call whose route takes no body: nothing, or a JSON object (which it ignores)."""
    data = _json(call, required=False)
    if data is not None and not isinstance(data, dict):
        raise _bad("the body must be a JSON object")


def _only_query(call: Call, route_name: str) -> None:
    allowed = [p.name for p in routes.by_name(route_name).query]
    unknown = sorted(set(call.query) - set(allowed))
    if unknown:
        raise _bad(f"unknown query parameter(s) {', '.join(unknown)}; expected "
                   f"{', '.join(allowed)}")


#: the query parameters of GET /events that filter on an event's field
EVENT_FILTERS = ("group", "topic", "transactional_id", "member_id")


def _int_param(call: Call, name: str, *, minimum: int = 0,
               default: int | None = None) -> int | None:
    text = call.query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise _bad(f"query parameter {name} must be an integer, got {text!r}") from None
    if value < minimum:
        raise _bad(f"query parameter {name} must be at least {minimum}, got {value}")
    return value


def _path_int(call: Call, name: str, what: str) -> int:
    text = call.path[name]
    try:
        return int(text)
    except ValueError:
        raise ApiError(404, f"unknown {what} {text!r}") from None


def _not_found(exc: inspect.NotFound) -> ApiError:
    return ApiError(404, str(exc))


def _quorum_view(quorum) -> QuorumView:
    """The quorum as ``kafka-metadata-quorum.sh describe --replication`` lists it: the leader,
    the other voters, the observers."""
    brokers = quorum.cluster.brokers
    voters = quorum.voter_states()
    leader_end = next((s.log_end_offset for s in voters if s.node_id == quorum.leader_id), -1)

    def replica(state, status: str, endpoint: bool) -> QuorumReplicaView:
        name, host, port = quorum.endpoint(state.node_id)
        broker = brokers.get(state.node_id)
        return QuorumReplicaView(
            id=state.node_id, directory_id=kafka_uuid(state.directory_id), status=status,
            log_end_offset=state.log_end_offset, lag=leader_end - state.log_end_offset,
            last_fetch_timestamp=state.last_fetch_timestamp,
            last_caught_up_timestamp=state.last_caught_up_timestamp,
            alive=broker is not None and broker.alive,
            endpoint=f"{name}://{host}:{port}" if endpoint else None)

    ordered = [s for s in voters if s.node_id == quorum.leader_id] + \
        [s for s in voters if s.node_id != quorum.leader_id]
    return QuorumView(
        leader_id=quorum.leader_id, leader_epoch=quorum.leader_epoch,
        high_watermark=quorum.high_watermark, kraft_version=quorum.kraft_version,
        voters=[replica(s, "Leader" if s.node_id == quorum.leader_id else "Follower", True)
                for s in ordered],
        observers=[replica(s, "Observer", False) for s in quorum.observer_states()])


class AdminApi:
    """The handlers, bound to one running cluster."""

    def __init__(self, runtime: "ClusterRuntime"):
        self.runtime = runtime

    @property
    def core(self):
        return self.runtime.core  # replaced by a reset: always read it afresh

    async def handle(self, route: routes.Route, call: Call) -> tuple[int, Any]:
        """Run the route's handler: (status, JSON-ready body).  What a call that changes
        things causes is told as events naming the call (``admin``)."""
        try:
            if route.method == "GET" or route.name.startswith("wait_for_"):
                answer = await getattr(self, route.name)(call)
            else:
                events = self.runtime.events
                saved = events.swap_cause({"admin": route.name})
                try:
                    answer = await getattr(self, route.name)(call)
                    self.core.watch.look(None)
                finally:
                    events.swap_cause(saved)
        except ApiError as exc:
            return exc.status, {"error": exc.message}
        except Exception:
            log.exception("admin API: %s %s failed", route.method, route.path)
            return 500, {"error": "internal error (see the server log)"}
        if isinstance(answer, Answer):
            return answer.status, to_json(answer.data)
        return route.status, to_json(answer)

    async def dispatch(self, method: str, path: str, query: dict[str, str],
                       body: bytes) -> tuple[int, Any]:
        """Find the route of ``method path`` and run it, as the HTTP server would."""
        route, params, path_known = routes.match(method, path)
        if route is None:
            return not_allowed(method, path) if path_known else no_such_endpoint(method, path)
        return await self.handle(route, Call(params, dict(query), body))

    # -- health and description ---------------------------------------------------------------

    async def health(self, call: Call):
        if self.runtime.ready:
            return Status(status="ok")
        return Answer(503, Status(status="starting"))

    async def openapi(self, call: Call):
        # the document as the HTTP server serves it: with the bearer scheme if it needs a token
        return document(bearer=getattr(self.runtime, "admin_token", None) is not None)

    # -- brokers ------------------------------------------------------------------------------

    def _broker_id(self, call: Call) -> int:
        node_id = _path_int(call, "broker_id", "broker")
        try:
            inspect.broker(self.core, node_id)
        except inspect.NotFound as exc:
            raise _not_found(exc) from None
        return node_id

    async def brokers(self, call: Call):
        return inspect.brokers(self.core)

    async def broker(self, call: Call):
        return inspect.broker_view(self.core, self._broker_id(call))

    async def stop_broker(self, call: Call):
        node_id = self._broker_id(call)
        _only_query(call, "stop_broker")
        controlled = call.query.get("controlled", "false").lower()
        if controlled not in ("true", "false", "1", "0"):
            raise _bad(f"query parameter controlled must be true or false, got {controlled!r}")
        await self.runtime.stop_broker(node_id, controlled=controlled in ("true", "1"))
        return inspect.broker_view(self.core, node_id)

    async def start_broker(self, call: Call):
        node_id = self._broker_id(call)
        await self.runtime.start_broker(node_id)
        return inspect.broker_view(self.core, node_id)

    async def set_broker_latency(self, call: Call):
        node_id = self._broker_id(call)
        body = _read(call, BrokerLatency)
        self.core.control.set_latency(node_id, body.delay_ms)
        return inspect.broker_view(self.core, node_id)

    # -- topics -------------------------------------------------------------------------------

    def _topic(self, call: Call):
        try:
            return inspect.topic(self.core, call.path["name"])
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    async def topics(self, call: Call):
        internal = call.query.get("internal", "false").lower()
        if internal not in ("true", "false", "1", "0"):
            raise _bad(f"query parameter internal must be true or false, got {internal!r}")
        return inspect.topics(self.core, include_internal=internal in ("true", "1"))

    async def create_topic(self, call: Call):
        body = _read(call, NewTopic)
        problem = topic_name_error(body.name)
        if problem:
            raise _bad(problem)
        # -1: the broker's default, as CreateTopics says it
        partitions = -1 if body.partitions is None else body.partitions
        replication = -1 if body.replication_factor is None else body.replication_factor
        try:
            topic = self.core.cluster.create_topic(
                body.name, partitions, replication, list(body.configs.items()) or None)
        except ApiException as exc:
            status = 409 if exc.error_code == errors.TOPIC_ALREADY_EXISTS else 400
            raise ApiError(status, str(exc)) from None
        return inspect.topic_view(topic)

    async def topic(self, call: Call):
        return inspect.topic_view(self._topic(call))

    async def delete_topic(self, call: Call):
        topic = self._topic(call)
        self.core.cluster.delete_topic(topic.name)
        return Deleted(deleted=topic.name)

    async def records(self, call: Call):
        topic = self._topic(call)
        _only_query(call, "records")
        partition = _int_param(call, "partition")
        offset = _int_param(call, "offset")
        limit = _int_param(call, "limit", default=100)
        try:
            return inspect.records(self.core, topic.name, partition, offset, limit)
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    def _target_broker(self, call: Call) -> int:
        node_id = _read(call, TargetBroker).broker
        if node_id not in self.core.cluster.brokers:
            raise ApiError(404, f"unknown broker {node_id}")
        return node_id

    async def move_leader(self, call: Call):
        topic = self._topic(call)
        index = _path_int(call, "partition", "partition")
        if not 0 <= index < len(topic.partitions):
            raise ApiError(404, f"topic {topic.name!r} has no partition {index}")
        node_id = self._target_broker(call)
        try:
            self.core.cluster.move_leader(topic.partitions[index], node_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return inspect.topic_view(topic)

    async def set_replica_lagging(self, call: Call):
        topic = self._topic(call)
        index = _path_int(call, "partition", "partition")
        if not 0 <= index < len(topic.partitions):
            raise ApiError(404, f"topic {topic.name!r} has no partition {index}")
        node_id = self._broker_id(call)
        body = _read(call, ReplicaLagging)
        try:
            self.core.cluster.replication.set_lagging(topic.partitions[index], node_id,
                                                      body.lagging)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return inspect.topic_view(topic)

    # -- groups -------------------------------------------------------------------------------

    def _group(self, call: Call):
        try:
            return inspect.group(self.core, call.path["group_id"])
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    async def groups(self, call: Call):
        group_type = call.query.get("type")
        names = self.core.groups.type_names()
        if group_type is not None and group_type not in names:
            raise ApiError(400, f"type must be {', '.join(names[:-1])} or {names[-1]}, "
                                f"not {group_type!r}")
        return inspect.groups(self.core, group_type)

    async def group(self, call: Call):
        return inspect.group_view(self.core, *self._group(call))

    async def move_coordinator(self, call: Call):
        """Move the leader of the group's ``__consumer_offsets`` partition, as a reassignment
        would: the new coordinator loads the group from the partition (other groups on that
        partition move with it)."""
        shard, group = self._group(call)
        node_id = self._target_broker(call)
        core = self.core
        try:
            core.groups.admin.move_coordinator(group.group_id, node_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        try:
            return inspect.group_view(core, *inspect.group(core, group.group_id))
        except inspect.NotFound:  # the new coordinator is still loading the partition
            return GroupLoadingView(group_id=group.group_id, coordinator=node_id,
                                    state="loading")

    async def rebalance(self, call: Call):
        shard, group = self._group(call)
        _no_body(call)
        try:
            self.core.groups.admin.force_rebalance(group.group_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return inspect.group_view(self.core, shard, group)

    async def expire_member(self, call: Call):
        shard, group = self._group(call)
        member_id = call.path["member_id"]
        if member_id not in group.members:
            raise ApiError(404, f"group {group.group_id!r} has no member {member_id!r}")
        _no_body(call)
        self.core.groups.admin.expire_member(group.group_id, member_id)
        return inspect.group_view(self.core, shard, group)

    # -- transactions -------------------------------------------------------------------------

    def _transaction(self, call: Call):
        try:
            return inspect.transaction(self.core, call.path["transactional_id"])
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    async def transactions(self, call: Call):
        return inspect.transactions(self.core)

    async def transaction(self, call: Call):
        return inspect.transaction_view(self.core, self._transaction(call))

    async def abort_transaction(self, call: Call):
        meta = self._transaction(call)
        _no_body(call)
        try:
            self.core.transactions.abort_now(meta.transactional_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return inspect.transaction_view(self.core, self._transaction(call))

    async def move_transaction_coordinator(self, call: Call):
        meta = self._transaction(call)
        node_id = self._target_broker(call)
        partition = self.core.transactions.placement.partition(meta.transactional_id)
        try:
            self.core.cluster.move_leader(partition, node_id)
        except ApiException as exc:
            raise ApiError(409, str(exc)) from None
        return inspect.transaction_view(self.core, self._transaction(call))

    # -- faults -------------------------------------------------------------------------------

    def _fault(self, call: Call):
        fault_id = _path_int(call, "fault_id", "fault")
        fault = self.core.control.get(fault_id)
        if fault is None:
            raise ApiError(404, f"no fault {fault_id}")
        return fault

    async def faults(self, call: Call):
        return inspect.faults(self.core)

    async def add_fault(self, call: Call):
        body = _json(call)
        try:
            fault = self.core.control.add(body)
        except RuleError as exc:
            raise _bad(str(exc)) from None
        return inspect.fault_view(fault)

    async def get_fault(self, call: Call):
        return inspect.fault_view(self._fault(call))

    async def remove_fault(self, call: Call):
        return inspect.fault_view(self.core.control.remove(self._fault(call).id))

    async def clear_faults(self, call: Call):
        return Removed(removed=self.core.control.clear())

    # -- the request log ----------------------------------------------------------------------

    async def requests(self, call: Call):
        _only_query(call, "requests")
        api = call.query.get("api")
        if api is not None:
            try:
                api = resolve_api(api)
            except (KeyError, TypeError) as exc:
                raise _bad(f"api: {exc.args[0]}") from None
        broker_id = _int_param(call, "broker")
        if broker_id is not None and broker_id not in self.core.cluster.brokers:
            raise ApiError(404, f"unknown broker {broker_id}")
        limit = _int_param(call, "limit")
        return inspect.requests(self.core, api, broker_id, call.query.get("client_id"), limit)

    async def clear_requests(self, call: Call):
        self.core.requests.clear()
        return Status(status="ok")

    # -- security -----------------------------------------------------------------------------

    async def acls(self, call: Call):
        return inspect.acls(self.core)

    # -- client quotas --------------------------------------------------------------------------

    async def quotas(self, call: Call):
        _only_query(call, "quotas")
        return [QuotaView(entity=dict(e), values=values)
                for e, values in self.core.quotas.entities.describe([], False)]

    async def set_quota(self, call: Call):
        body = _read(call, QuotaSpec)
        wanted = entity(body.entity.items())
        ops = [AlterOp(key, 0.0 if value is None else float(value), value is None)
               for key, value in body.values.items()]
        quotas = self.core.quotas.entities
        [(_, code, message)] = quotas.alter([(wanted, ops)], validate_only=False)
        if code != 0:
            raise _bad(message or "refused")
        self.core.events.emit("client_quotas_altered", admin="set_quota",
                              entities=[dict(wanted)])
        return QuotaView(entity=dict(wanted), values=dict(quotas.values.get(wanted, {})))

    async def users(self, call: Call):
        return inspect.users(self.core)

    # -- client telemetry -----------------------------------------------------------------------

    async def clients(self, call: Call):
        _only_query(call, "clients")
        try:
            return inspect.clients(self.core)
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    async def client(self, call: Call):
        try:
            return inspect.client_view(inspect.client(self.core,
                                                      call.path["client_instance_id"]))
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    async def client_metrics(self, call: Call):
        _only_query(call, "client_metrics")
        try:
            return inspect.client_metrics(self.core, call.path["client_instance_id"],
                                          call.query.get("prefix"))
        except inspect.NotFound as exc:
            raise _not_found(exc) from None

    # -- seeing it: events, rebalances, the clock ---------------------------------------------

    async def events(self, call: Call):
        _only_query(call, "events")
        since = _int_param(call, "since", default=0)
        limit = _int_param(call, "limit", minimum=1)
        try:
            types = parse_types(call.query.get("type"))
        except ValueError as exc:
            raise _bad(str(exc)) from None
        match = {name: call.query[name] for name in EVENT_FILTERS if name in call.query}
        return self.runtime.events.since(since, types=types, match=match, limit=limit)

    async def rebalances(self, call: Call):
        group_id = call.path["group_id"]
        found = rebalances(self.runtime.events, group_id)
        if not found:
            try:
                inspect.group(self.core, group_id)
            except inspect.NotFound as exc:
                raise _not_found(exc) from None
        return [RebalanceView(**entry) for entry in found]

    def _clock_view(self) -> ClockView:
        return ClockView(mode="manual" if self.runtime.manual_clock else "real",
                         now_ms=self.runtime.clock.now_ms())

    async def clock(self, call: Call):
        return self._clock_view()

    async def advance_clock(self, call: Call):
        ms = _read(call, ClockAdvance).ms
        if not self.runtime.manual_clock:
            raise ApiError(409, "the broker clock is real: start the cluster with "
                                "clock=\"manual\" (mockbroker serve --clock manual) to move it")
        self.runtime.advance_clock(ms)
        return self._clock_view()

    # -- waits --------------------------------------------------------------------------------

    async def wait_for_group(self, call: Call):
        body = _read(call, GroupWait)
        members, assignment = body.members, body.assignment
        what = f"group {body.group_id!r} to be {body.state}" + (
            f" with {members} member{'s' if members != 1 else ''}"
            if members is not None else "") + (
            f" and assignment {assignment}" if assignment is not None else "")
        return await self._wait(body.timeout_ms, what, lambda core: waits.group(
            core, body.group_id, body.state, members, assignment))

    async def wait_for_records(self, call: Call):
        body = _read(call, RecordsWait)
        return await self._wait(body.timeout_ms,
                                f"topic {body.topic!r} to hold {body.records} records",
                                lambda core: waits.records(core, body.topic, body.records))

    async def wait_for_lag_zero(self, call: Call):
        body = _read(call, LagWait)
        what = f"group {body.group_id!r} to have lag 0" + (
            f" on {body.topic!r}" if body.topic else "")
        return await self._wait(body.timeout_ms, what,
                                lambda core: waits.lag_zero(core, body.group_id, body.topic))

    async def wait_for_event(self, call: Call):
        body = _read(call, EventWait)
        kind, match = body.type, body.match
        what = f"an event{' ' + kind if kind else ''}" + (f" matching {match}" if match else "")
        return await self._wait(body.timeout_ms, what,
                                lambda core: waits.event(core, kind, match, body.since))

    async def _wait(self, timeout_ms: int, what: str, check):
        """Answer with ``check``'s result once it holds: looked at now, then again after
        every event and every append (batched: once per loop turn), until ``timeout_ms``."""
        if self.runtime.stopping:
            raise ApiError(503, f"the cluster is stopping: not waiting for {what}")
        found = check(self.core)
        if found.met:
            return found.result
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()
        scheduled = False
        last_seen = [found.seen]

        def look() -> None:
            nonlocal scheduled
            scheduled = False
            if done.done():
                return
            try:
                result = check(self.core)
            except Exception as exc:  # a bug of ours: answer it rather than hang
                done.set_exception(exc)
                return
            last_seen[0] = result.seen
            if result.met:
                done.set_result(result.result)

        def changed(*_: Any) -> None:
            nonlocal scheduled
            if not scheduled and not done.done():
                scheduled = True
                loop.call_soon(look)

        def stopped() -> None:
            if not done.done():
                done.set_exception(ApiError(503, f"the cluster stopped while waiting for {what}; "
                                                 f"last seen: {last_seen[0]}"))

        events = self.runtime.events
        events.listeners.append(changed)
        events.append_listeners.append(changed)
        self.runtime.on_stop.append(stopped)
        try:
            return await asyncio.wait_for(done, timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise ApiError(408, f"timed out after {timeout_ms} ms waiting for {what}; "
                                f"last seen: {last_seen[0]}") from None
        finally:
            events.listeners.remove(changed)
            events.append_listeners.remove(changed)
            if stopped in self.runtime.on_stop:
                self.runtime.on_stop.remove(stopped)

    # -- the KRaft controller quorum -----------------------------------------------------------

    async def schema_registry(self, call: Call):
        _only_query(call, "schema_registry")
        url = self.runtime.schema_registry_url
        if url is None:
            raise ApiError(404, "the cluster runs no Schema Registry (start it with "
                                "schema_registry=True, or mockbroker serve --schema-registry)")
        return inspect.schema_registry(self.core, url)

    async def quorum(self, call: Call):
        _only_query(call, "quorum")
        return _quorum_view(quorum_of(self.core.cluster))

    async def quorum_failover(self, call: Call):
        data = _json(call, required=False)
        try:
            body = read_body(QuorumFailover, {} if data is None else data)
        except BodyError as exc:
            raise _bad(str(exc)) from None
        quorum = quorum_of(self.core.cluster)
        try:
            quorum.failover(body.controller)
        except FailoverError as exc:
            raise ApiError(404 if exc.unknown else 409, str(exc)) from None
        return _quorum_view(quorum)

    # -- reset --------------------------------------------------------------------------------

    async def reset(self, call: Call):
        _no_body(call)
        await self.runtime.reset()
        return Status(status="ok")
