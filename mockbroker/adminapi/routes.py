"""The admin API's routes, each described once.

The HTTP server registers a handler per route (the handler's name is the route's ``name``),
``GET /openapi.json`` documents them, the in-process transport dispatches to them, and
:class:`mockbroker.admin.AdminClient` has a method of the same name that reads the answer as
the route's ``answer`` type.  Adding a route is one entry here, plus its handler and its client
method (tests check that all three exist).

Standard library only: the stdlib-only admin client imports this module.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass  # not msgspec: the AdminClient, stdlib-only, reads these
from typing import Any

from mockbroker.adminapi.views import (
    AclsView, BrokerLatency, BrokerView, ClientMetricView, ClientView, ClockAdvance, ClockView,
    Deleted, Error, EventWait, FaultSpec, FaultView, GroupLoadingView, GroupSummaryView,
    GroupView, GroupWait, LagWait, LoggedRequestView, NewTopic, QuorumFailover, QuorumView,
    QuotaSpec, QuotaView, RebalanceView, RecordsWait, RecordView, Removed, ReplicaLagging,
    SchemaRegistryView, Status, TargetBroker, TopicView, TransactionView, UserView,
)

__all__ = ["PATH_PARAMS", "Param", "ROUTES", "Route", "by_name", "match"]


@dataclass(frozen=True)
class Param:
    name: str
    type: Any
    description: str


#: every ``{placeholder}`` a path may have: its type and description
PATH_PARAMS = {p.name: p for p in (
    Param("broker_id", int, "broker id"),
    Param("name", str, "topic name"),
    Param("partition", int, "partition"),
    Param("group_id", str, "group id"),
    Param("member_id", str, "member id"),
    Param("fault_id", int, "fault id"),
    Param("transactional_id", str, "transactional id"),
    Param("client_instance_id", str, "client instance id (Kafka's base64 form, or a UUID)"),
)}


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    path: str
    summary: str
    #: the type of the success answer's body: a view, ``list[View]``, a union, ``dict``
    answer: Any
    #: what the success answer is, in a few words
    answer_doc: str
    status: int = 200
    query: tuple[Param, ...] = ()
    body: type | None = None
    body_required: bool = True
    errors: tuple[int, ...] = ()
    #: the body of an error answer
    error_body: type = Error
    #: served without a token even where the API requires one (``Authorization: Bearer``)
    public: bool = False

    @property
    def path_params(self) -> tuple[Param, ...]:
        return tuple(PATH_PARAMS[n] for n in re.findall(r"\{(\w+)\}", self.path))

    def url(self, **values: Any) -> str:
        """The path with its placeholders filled in (and quoted)."""
        filled = {p.name: urllib.parse.quote(str(p.type(values[p.name])), safe="")
                  for p in self.path_params}
        return self.path.format(**filled)

    @property
    def _pattern(self) -> re.Pattern[str]:
        return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)",
                                        re.escape(self.path)) + "$")


_BY_NAME: dict[str, Route] = {}


def _routes(*routes: Route) -> tuple[Route, ...]:
    for route in routes:
        assert route.name not in _BY_NAME, route.name
        _BY_NAME[route.name] = route
    return routes


_TARGET_ERRORS = (400, 404, 409)

ROUTES: tuple[Route, ...] = _routes(
    Route("health", "GET", "/health", "200 once every listener is up", Status, "up",
          errors=(503,), error_body=Status, public=True),
    Route("openapi", "GET", "/openapi.json", "this document", dict, "OpenAPI 3.1"),
    # -- brokers
    Route("brokers", "GET", "/brokers", "brokers", list[BrokerView], "every broker"),
    Route("broker", "GET", "/brokers/{broker_id}", "one broker", BrokerView, "the broker",
          errors=(404,)),
    Route("stop_broker", "POST", "/brokers/{broker_id}/stop",
          "take a broker down: its listener closes, leadership and coordination move to live "
          "brokers", BrokerView, "the broker",
          query=(Param("controlled", bool, "a controlled shutdown: the broker stays an "
                                           "eligible leader replica where it is one, as after "
                                           "a clean shutdown (default: it crashed)"),),
          errors=(400, 404)),
    Route("start_broker", "POST", "/brokers/{broker_id}/start",
          "bring a stopped broker back on its port; its replicas rejoin their ISRs, and the "
          "next preferred-leader election gives it back its preferred partitions",
          BrokerView, "the broker", errors=(404,)),
    Route("set_broker_latency", "PUT", "/brokers/{broker_id}/latency",
          "add latency to every answer of a broker (0 removes it)", BrokerView, "the broker",
          body=BrokerLatency, errors=(400, 404)),
    # -- topics
    Route("topics", "GET", "/topics", "topics with partitions and offsets", list[TopicView],
          "topics", query=(Param("internal", bool, "include __consumer_offsets and other "
                                                   "internal topics"),), errors=(400,)),
    Route("create_topic", "POST", "/topics", "create a topic", TopicView, "created",
          status=201, body=NewTopic, errors=(400, 409)),
    Route("topic", "GET", "/topics/{name}", "one topic", TopicView, "the topic",
          errors=(404,)),
    Route("delete_topic", "DELETE", "/topics/{name}", "delete a topic", Deleted, "deleted",
          errors=(404,)),
    Route("records", "GET", "/topics/{name}/records",
          "decoded records, in offset order per partition", list[RecordView], "records",
          query=(Param("partition", int, "one partition (default: all)"),
                 Param("offset", int, "first offset (default: the log start)"),
                 Param("limit", int, "at most this many (default 100)")),
          errors=(400, 404)),
    Route("move_leader", "POST", "/topics/{name}/partitions/{partition}/leader",
          "make a live replica the partition's leader (new leader epoch)", TopicView,
          "the topic", body=TargetBroker, errors=_TARGET_ERRORS),
    Route("set_replica_lagging", "PUT", "/topics/{name}/partitions/{partition}/replicas/"
                                        "{broker_id}",
          "hold a follower replica back as lagging: it leaves the ISR (into the eligible "
          "leader replicas while the ISR is below min.insync.replicas) though its broker runs; "
          "or let it follow again, to rejoin the ISR once caught up (replica_catch_up_ms)",
          TopicView, "the topic", body=ReplicaLagging, errors=_TARGET_ERRORS),
    # -- groups
    Route("groups", "GET", "/groups", "groups", list[GroupSummaryView], "groups",
          query=(Param("type", str, "only groups of this type: classic or consumer"),),
          errors=(400,)),
    Route("group", "GET", "/groups/{group_id}",
          "one group: state, generation, protocol, leader, coordinator, members with their "
          "assignments, committed offsets and lag", GroupView, "the group", errors=(404,)),
    Route("move_coordinator", "POST", "/groups/{group_id}/coordinator",
          "move the group's coordinator (the leader of its __consumer_offsets partition)",
          GroupView | GroupLoadingView, "the group (loading while the new coordinator loads "
                                        "it)", body=TargetBroker, errors=_TARGET_ERRORS),
    Route("rebalance", "POST", "/groups/{group_id}/rebalance",
          "start a rebalance as if membership had changed", GroupView, "the group",
          errors=(404, 409)),
    Route("expire_member", "POST", "/groups/{group_id}/members/{member_id}/expire",
          "remove a member as if its session had timed out", GroupView, "the group",
          errors=(404,)),
    # -- transactions
    Route("transactions", "GET", "/transactions", "transactional ids and their transactions",
          list[TransactionView], "transactional ids"),
    Route("transaction", "GET", "/transactions/{transactional_id}",
          "one transactional id: state, producer id and epoch, partitions, offsets committed in "
          "the open transaction, timeout, age, coordinator", TransactionView, "the transaction",
          errors=(404,)),
    Route("abort_transaction", "POST", "/transactions/{transactional_id}/abort",
          "time the open transaction out now: the coordinator fences its producer (new epoch) "
          "and aborts it, as when transaction.timeout.ms passes", TransactionView,
          "the transaction", errors=(404, 409)),
    Route("move_transaction_coordinator", "POST", "/transactions/{transactional_id}/coordinator",
          "move the transaction coordinator (the leader of the id's __transaction_state "
          "partition); the new one rebuilds its transactions from the partition and finishes "
          "any commit or abort under way", TransactionView, "the transaction",
          body=TargetBroker, errors=_TARGET_ERRORS),
    # -- faults
    Route("faults", "GET", "/faults", "faults in force, in the order they apply",
          list[FaultView], "faults"),
    Route("add_fault", "POST", "/faults", "add a fault", FaultView, "added", status=201,
          body=FaultSpec, errors=(400,)),
    Route("clear_faults", "DELETE", "/faults", "remove every fault", Removed,
          "how many were removed"),
    Route("get_fault", "GET", "/faults/{fault_id}", "one fault", FaultView, "the fault",
          errors=(404,)),
    Route("remove_fault", "DELETE", "/faults/{fault_id}", "remove one fault", FaultView,
          "the removed fault", errors=(404,)),
    # -- the request log
    Route("requests", "GET", "/requests", "recent requests, oldest first",
          list[LoggedRequestView], "requests",
          query=(Param("api", str, "API name or key"), Param("broker", int, "broker id"),
                 Param("client_id", str, "client id"), Param("limit", int, "only the last N")),
          errors=(400, 404)),
    Route("clear_requests", "DELETE", "/requests", "clear the request log", Status, "cleared"),
    # -- security
    Route("acls", "GET", "/acls",
          "the authorizer's ACLs, super users and rule for resources no ACL covers (no ACLs, "
          "and authorizer false, when none is configured)", AclsView, "the ACLs"),
    Route("users", "GET", "/users",
          "SASL users and the mechanisms each has credentials for (never a password or key)",
          list[UserView], "users"),
    # -- client quotas
    Route("quotas", "GET", "/quotas", "client quotas: every entity with its values",
          list[QuotaView], "the quota entities"),
    Route("set_quota", "POST", "/quotas",
          "set or remove values of a client quota entity, checked as Kafka's "
          "AlterClientQuotas checks them", QuotaView, "the entity with its values now",
          body=QuotaSpec, errors=(400,)),
    # -- seeing it: events, rebalance timelines, the clock, waits
    Route("events", "GET", "/events",
          "what happened, oldest first (the most recent 20000 events are kept); "
          "GET /events/stream serves the same as server-sent events, live",
          list[dict[str, Any]], "events, each an Event object with its type's fields",
          query=(Param("since", int, "only events after this seq"),
                 Param("type", str, "only these types (comma-separated)"),
                 Param("group", str, "only events of this group"),
                 Param("topic", str, "only events of this topic"),
                 Param("transactional_id", str, "only events of this transactional id"),
                 Param("member_id", str, "only events of this member"),
                 Param("limit", int, "at most this many (the oldest)")),
          errors=(400,)),
    Route("rebalances", "GET", "/groups/{group_id}/rebalances",
          "the group's rebalances, oldest first, from the events still kept: when each "
          "started and ended, its cause, who joined, left or timed out",
          list[RebalanceView], "rebalances", errors=(404,)),
    Route("clock", "GET", "/clock", "the broker clock: real, or manual (moved by "
          "POST /clock/advance)", ClockView, "the clock"),
    Route("advance_clock", "POST", "/clock/advance",
          "move the manual clock forward: every timer due by then fires, in deadline order "
          "(sessions, rebalances, transaction timeouts, retention, fetch waits)",
          ClockView, "the clock after", body=ClockAdvance, errors=(400, 409)),
    Route("wait_for_group", "POST", "/wait/group",
          "answer once the group is in the state (with the members or assignment asked for); "
          "408 with what was seen instead if the timeout passes first",
          GroupView, "the group", body=GroupWait, errors=(400, 408, 503)),
    Route("wait_for_records", "POST", "/wait/records",
          "answer once the topic holds at least the records asked for; 408 with what was "
          "seen instead if the timeout passes first", TopicView, "the topic",
          body=RecordsWait, errors=(400, 408, 503)),
    Route("wait_for_lag_zero", "POST", "/wait/lag",
          "answer once the group's committed offsets reach the high watermark of every "
          "partition it consumes; 408 with what was seen instead if the timeout passes first",
          GroupView, "the group", body=LagWait, errors=(400, 408, 503)),
    Route("wait_for_event", "POST", "/wait/event",
          "answer with the first event after since that matches; 408 if none comes in time",
          dict[str, Any], "the event (an Event object)", body=EventWait,
          errors=(400, 408, 503)),
    # -- the KRaft controller quorum
    Route("quorum", "GET", "/quorum",
          "the KRaft controller quorum (kafka-metadata-quorum.sh describe): leader, epoch, "
          "high watermark, voters and observers", QuorumView, "the quorum"),
    Route("quorum_failover", "POST", "/quorum/failover",
          "hand the quorum's leadership to another live voter in a new epoch, as a leader "
          "that resigns does (event quorum_leader_changed)", QuorumView, "the quorum after",
          body=QuorumFailover, body_required=False, errors=(400, 404, 409)),
    # -- client telemetry (KIP-714), with the telemetry receiver on
    Route("clients", "GET", "/clients",
          "client instances that sent telemetry to the receiver, in the order first seen: "
          "their client id, software, address, subscription and pushes (404 when the cluster "
          "runs without telemetry_receiver)", list[ClientView], "clients", errors=(404,)),
    Route("client", "GET", "/clients/{client_instance_id}", "one client instance",
          ClientView, "the client", errors=(404,)),
    Route("client_metrics", "GET", "/clients/{client_instance_id}/metrics",
          "the latest value of each metric (name and attributes) the client pushed, decoded "
          "from OTLP, by name", list[ClientMetricView], "metrics",
          query=(Param("prefix", str, "only metrics whose name starts with this"),),
          errors=(400, 404)),
    # -- the Schema Registry
    Route("schema_registry", "GET", "/schema-registry",
          "the Schema Registry's subjects with every version (id, type, schema, references), "
          "their compatibility and mode (404 when the cluster runs none)", SchemaRegistryView,
          "the registry", errors=(404,)),
    # -- reset
    Route("reset", "POST", "/reset",
          "drop all topics, groups, offsets, faults and latency, start stopped brokers, close "
          "client connections; listeners stay up", Status, "reset"),
)


def by_name(name: str) -> Route:
    return _BY_NAME[name]


def match(method: str, path: str) -> tuple[Route | None, dict[str, str], bool]:
    """The route serving ``method path``, its (unquoted) path parameters, and whether the path
    is served at all (for a 405 rather than a 404 when only the method is wrong)."""
    path_known = False
    for route in ROUTES:
        found = route._pattern.match(path)
        if found is None:
            continue
        path_known = True
        if route.method == method.upper():
            return route, {k: urllib.parse.unquote(v) for k, v in found.groupdict().items()}, True
    return None, {}, path_known
