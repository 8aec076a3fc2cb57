"""A Python client for the admin HTTP API: faults, brokers, topics, groups, the request log.

It is what the ``kafka_admin`` pytest fixture returns, and works on its own against any running
mockbroker (in-process, ``mockbroker serve``, or the container)::

    from mockbroker import AdminClient

    admin = AdminClient("http://127.0.0.1:8080")
    fault = admin.add_fault("Produce", error="NOT_LEADER_OR_FOLLOWER", count=2)
    ...
    assert admin.group("orders-app").state == "Stable"
    admin.reset()

Calls are synchronous (the standard library's ``urllib``), so they work from any test, thread
or framework.  An admin API that requires a token (one bound off loopback, or given a token)
takes it as ``AdminClient(url, token=TOKEN)``, sent as ``Authorization: Bearer TOKEN``; over
HTTPS (``admin_tls``), ``ca_location`` is the PEM of the CA to trust
(``MockCluster.ssl_ca_location``, or ``ca=`` in ``mockbroker serve``'s ready line).  A refused
call raises :class:`AdminError` with the HTTP status and the server's message; nothing changes
on the server in that case.

``MockCluster.admin`` is the same client with an in-process transport: the calls run the
server's own handlers on the cluster's loop thread, with the same answers and errors, without
HTTP.  Each method is a route of :mod:`mockbroker.adminapi.routes` of the same name, and returns
that route's answer as the views of :mod:`mockbroker.adminapi.views`.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import ssl
import textwrap
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterator, Protocol

from mockbroker.adminapi import actions, routes
from mockbroker.adminapi.jsonview import from_json
from mockbroker.adminapi.views import QuorumView, SchemaRegistryView
from mockbroker.adminapi.views import ClientMetricView, ClientView
from mockbroker.adminapi.views import (
    AclsView, BrokerView, ClockView, FaultView, GroupSummaryView, GroupView, HeaderView,
    LoggedRequestView, MemberView, PartitionView, QuotaView, RebalanceView, RecordView,
    TopicView, TransactionView, UserView,
)

__all__ = [
    "AdminClient", "AdminError", "Broker", "Clock", "Fault", "Group", "GroupSummary", "Header",
    "HttpTransport", "LoggedRequest", "Member", "Partition", "Quota", "Rebalance", "Record",
    "Topic", "Transaction", "Transport", "WaitTimeout",
]

# the names the client has always used for the views
Broker = BrokerView
Clock = ClockView
Rebalance = RebalanceView
Fault = FaultView
Group = GroupView
GroupSummary = GroupSummaryView
Header = HeaderView
LoggedRequest = LoggedRequestView
Member = MemberView
Partition = PartitionView
Quota = QuotaView
Record = RecordView
Topic = TopicView
Transaction = TransactionView


class AdminError(Exception):
    """The admin API refused a call (a 4xx) or failed (a 5xx)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class WaitTimeout(AdminError, TimeoutError):
    """A wait (``wait_for_group``, ...) timed out; the message says what was seen instead."""


class Transport(Protocol):
    def call(self, method: str, path: str, query: dict[str, str] | None = None,
             body: bytes | None = None) -> tuple[int, Any]:
        """(status, JSON body) of one call.  A transport that also takes ``timeout=``
        (seconds) lets a wait longer than its own default through."""


def _takes_timeout(transport: Transport) -> bool:
    """Whether ``transport.call`` takes ``timeout=`` (ours do; one of the user's may not)."""
    try:
        return "timeout" in inspect.signature(transport.call).parameters
    except (TypeError, ValueError):
        return False


class HttpTransport:
    """Calls over HTTP (or HTTPS) with the standard library; with ``token``, each call carries
    ``Authorization: Bearer <token>``; ``ca_location``: the CA (PEM) an HTTPS server's
    certificate is checked against (default: the system's)."""

    def __init__(self, url: str, *, timeout: float = 30.0, token: str | None = None,
                 ca_location: str | None = None):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.token = token
        self._context = (ssl.create_default_context(cafile=ca_location)
                         if ca_location and self.url.startswith("https:") else None)

    def __repr__(self) -> str:
        return f"HttpTransport({self.url!r})"

    def call(self, method: str, path: str, query: dict[str, str] | None = None,
             body: bytes | None = None, timeout: float | None = None) -> tuple[int, Any]:
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url, data=body, method=method)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        if self.token is not None:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout,
                                        context=self._context) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                data = json.loads(raw)
                if not isinstance(data, dict) or "error" not in data:
                    raise ValueError
            except ValueError:
                data = {"error": raw.decode(errors="replace") or exc.reason}
            return exc.code, data


class AdminClient:
    """Talks to one cluster's admin API at ``url`` (``MockCluster.admin_url``), over HTTP
    unless another ``transport`` is given.  ``token``: what an admin API off loopback requires
    (``MockCluster.admin_token``, ``token=`` in the ready line); ``ca_location``: the CA to
    trust for an HTTPS one."""

    def __init__(self, url: str, *, timeout: float = 30.0, transport: Transport | None = None,
                 token: str | None = None, ca_location: str | None = None):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.transport: Transport = transport or HttpTransport(
            self.url, timeout=timeout, token=token, ca_location=ca_location)

    def __repr__(self) -> str:
        return f"AdminClient({self.url!r})"

    # -- plumbing -----------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: Any = None,
              query: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        pairs = {k: str(v) for k, v in (query or {}).items() if v is not None}
        data = None if body is None else json.dumps(body).encode()
        if timeout is None or not _takes_timeout(self.transport):
            status, answer = self.transport.call(method, path, pairs or None, data)
        else:
            status, answer = self.transport.call(method, path, pairs or None, data,
                                                 timeout=timeout)
        if status >= 400:
            message = answer.get("error") if isinstance(answer, dict) else None
            error = WaitTimeout if status == 408 else AdminError
            raise error(status, message if message is not None else str(answer))
        return answer

    def _json(self, route_name: str, /, body: Any = None, query: dict[str, Any] | None = None,
              **path: Any) -> Any:
        route = routes.by_name(route_name)
        return self._call(route.method, route.url(**path), body, query)

    def _route(self, route_name: str, /, body: Any = None, query: dict[str, Any] | None = None,
               **path: Any) -> Any:
        """Call a route (by name) and read its answer as the route's view type."""
        answer = self._json(route_name, body, query, **path)
        return from_json(routes.by_name(route_name).answer, answer)

    # -- health -------------------------------------------------------------------------------

    def health(self) -> bool:
        """True once every listener is up."""
        try:
            return self._route("health").status == "ok"
        except AdminError:
            return False

    def openapi(self) -> dict[str, Any]:
        return self._route("openapi")

    # -- faults -------------------------------------------------------------------------------

    def add_fault(self, api: str | int | None = None, *, error: str | int | None = None,
                  action: str | None = None, count: int | None = 1,
                  broker: int | None = None, topic: str | None = None,
                  partition: int | None = None, client_id: str | None = None,
                  delay_ms: int = 0, probability: float = 1.0, **more: Any) -> Fault:
        # the docstring, which lists the actions of their table, is set below
        spec: dict[str, Any] = {"api": api, "count": count, "broker": broker, "topic": topic,
                                "partition": partition, "client_id": client_id,
                                "delay_ms": delay_ms, "probability": probability, **more}
        if error is not None:
            spec["error"] = error
        if action is not None:
            spec["action"] = action
        return self._route("add_fault", spec)

    add_fault.__doc__ = """Add a fault (a control rule).  ``api``: a Kafka API name or key (None:
        any).  ``action`` (default: error when ``error`` is given, else delay) is one of these,
        the control actions with their ``target_*`` fields:

{actions}

        ``count``: how many requests it picks; None until removed.  Other keyword arguments
        (``after``, ``group``, ``chain``, ``target_broker``, ...) are sent as fields of the
        rule (see ``FaultSpec``).""".format(actions="\n".join(
        textwrap.fill(line, 92, initial_indent=" " * 8 + "* ", subsequent_indent=" " * 10)
        for line in actions.listing()))

    @contextlib.contextmanager
    def fault(self, api: str | int | None = None, **spec: Any) -> Iterator[Fault]:
        """A fault for the duration of a ``with`` block (removed on exit if still there)."""
        added = self.add_fault(api, **spec)
        try:
            yield added
        finally:
            with contextlib.suppress(AdminError):
                self.remove_fault(added.id)

    def faults(self) -> list[Fault]:
        return self._route("faults")

    def get_fault(self, fault_id: int) -> Fault:
        return self._route("get_fault", fault_id=fault_id)

    def remove_fault(self, fault_id: int) -> Fault:
        return self._route("remove_fault", fault_id=fault_id)

    def clear_faults(self) -> int:
        """Remove every fault; returns how many there were."""
        return self._route("clear_faults").removed

    # -- brokers ------------------------------------------------------------------------------

    def brokers(self) -> list[Broker]:
        return self._route("brokers")

    def broker(self, broker_id: int) -> Broker:
        return self._route("broker", broker_id=broker_id)

    def stop_broker(self, broker_id: int, *, controlled: bool = False) -> Broker:
        """Take a broker down as if it had died (or, ``controlled``, in a controlled
        shutdown): its listener and connections close, its partitions and groups move to live
        brokers."""
        return self._route("stop_broker", broker_id=broker_id,
                           query={"controlled": str(controlled).lower()})

    def start_broker(self, broker_id: int) -> Broker:
        return self._route("start_broker", broker_id=broker_id)

    def set_broker_latency(self, broker_id: int, delay_ms: int) -> Broker:
        """Delay every answer of a broker by ``delay_ms`` (0 removes the latency)."""
        return self._route("set_broker_latency", {"delay_ms": delay_ms}, broker_id=broker_id)

    # -- topics -------------------------------------------------------------------------------

    def topics(self, *, internal: bool = False) -> list[Topic]:
        return self._route("topics", query={"internal": str(internal).lower()})

    def topic(self, name: str) -> Topic:
        return self._route("topic", name=name)

    def create_topic(self, name: str, partitions: int | None = None, *,
                     replication_factor: int | None = None,
                     configs: dict[str, str] | None = None) -> Topic:
        body: dict[str, Any] = {"name": name}
        if partitions is not None:
            body["partitions"] = partitions
        if replication_factor is not None:
            body["replication_factor"] = replication_factor
        if configs:
            body["configs"] = configs
        return self._route("create_topic", body)

    def delete_topic(self, name: str) -> None:
        self._route("delete_topic", name=name)

    def records(self, topic: str, partition: int | None = None, *, offset: int | None = None,
                limit: int = 100) -> list[Record]:
        """Decoded records, in offset order per partition."""
        return self._route("records", name=topic, query={
            "partition": partition, "offset": offset, "limit": limit})

    def set_replica_lagging(self, topic: str, partition: int, broker_id: int,
                            lagging: bool = True) -> Topic:
        """Hold a follower replica back as lagging (it leaves the ISR though its broker
        runs), or with ``lagging=False`` let it follow again and rejoin the ISR."""
        return self._route("set_replica_lagging", {"lagging": lagging}, name=topic,
                           partition=partition, broker_id=broker_id)

    def move_leader(self, topic: str, partition: int, broker_id: int) -> Topic:
        """Make ``broker_id`` (a live replica) the partition's leader."""
        return self._route("move_leader", {"broker": broker_id}, name=topic,
                           partition=partition)

    # -- groups -------------------------------------------------------------------------------

    def groups(self, type: str | None = None) -> list[GroupSummary]:
        """Groups; ``type``: only groups of that type ("classic", "consumer", "share" or
        "streams")."""
        return self._route("groups", query={"type": type})

    def group(self, group_id: str) -> Group:
        return self._route("group", group_id=group_id)

    def move_coordinator(self, group_id: str, broker_id: int) -> dict[str, Any]:
        """Move the group's coordinator to ``broker_id``; returns the group as JSON (its state
        is "loading" while the new coordinator loads)."""
        return self._json("move_coordinator", {"broker": broker_id}, group_id=group_id)

    def rebalance(self, group_id: str) -> Group:
        """Start a rebalance as if membership had changed."""
        return self._route("rebalance", group_id=group_id)

    def expire_member(self, group_id: str, member_id: str) -> Group:
        """Remove a member as if its session had timed out."""
        return self._route("expire_member", group_id=group_id, member_id=member_id)

    # -- transactions -------------------------------------------------------------------------

    def transactions(self) -> list[Transaction]:
        return self._route("transactions")

    def transaction(self, transactional_id: str) -> Transaction:
        return self._route("transaction", transactional_id=transactional_id)

    def abort_transaction(self, transactional_id: str) -> Transaction:
        """Time the open transaction out now: its producer is fenced and it is aborted."""
        return self._route("abort_transaction", transactional_id=transactional_id)

    def move_transaction_coordinator(self, transactional_id: str,
                                     broker_id: int) -> Transaction:
        """Move the id's transaction coordinator to ``broker_id``."""
        return self._route("move_transaction_coordinator", {"broker": broker_id},
                           transactional_id=transactional_id)

    # -- the request log ----------------------------------------------------------------------

    def requests(self, api: str | int | None = None, *, broker: int | None = None,
                 client_id: str | None = None, limit: int | None = None) -> list[LoggedRequest]:
        """Recent requests, oldest first."""
        return self._route("requests", query={"api": api, "broker": broker,
                                              "client_id": client_id, "limit": limit})

    def clear_requests(self) -> None:
        self._route("clear_requests")

    # -- security -----------------------------------------------------------------------------

    def acls(self) -> AclsView:
        """The authorizer's ACLs (``.acls``), super users, and whether one is configured
        (``.authorizer``; without one there are no ACLs)."""
        return self._route("acls")

    def users(self) -> list[UserView]:
        """SASL users and the mechanisms each has credentials for."""
        return self._route("users")

    # -- client quotas --------------------------------------------------------------------------

    def quotas(self) -> list[Quota]:
        """Every client quota entity with its values."""
        return self._route("quotas")

    def set_quota(self, entity: dict[str, str | None], **values: float | None) -> Quota:
        """Set quota values of an entity, as ``kafka-configs.sh --alter --add-config`` does:
        ``set_quota({"client-id": "ingest"}, producer_byte_rate=10240)``; a value of None
        removes it; a name of None is the default entity of its type (``{"user": None}``).
        Refused (AdminError 400) with Kafka's message where Kafka would refuse it."""
        return self._route("set_quota", {"entity": entity, "values": values})

    # -- events and rebalance timelines ---------------------------------------------------------

    def events(self, type: str | list[str] | None = None, *, since: int = 0,
               group: str | None = None, topic: str | None = None,
               transactional_id: str | None = None, member_id: str | None = None,
               limit: int | None = None) -> list[dict[str, Any]]:
        """Events after ``since``, oldest first, as dicts (``seq``, ``time_ms``, ``type`` and
        the type's fields); ``type`` is one type or several."""
        types = ",".join(type) if isinstance(type, (list, tuple)) else type
        return self._json("events", query={
            "since": since, "type": types, "group": group, "topic": topic,
            "transactional_id": transactional_id, "member_id": member_id, "limit": limit})

    def last_event_seq(self) -> int:
        """The seq of the newest event (0: none): pass it as ``since`` to wait for what
        happens after now only."""
        newest = self._json("events", query={"since": 0})
        return newest[-1]["seq"] if newest else 0

    def rebalances(self, group_id: str) -> list[Rebalance]:
        """The group's rebalances, oldest first: start, end, duration, cause, and who
        joined, left or timed out for each."""
        return self._route("rebalances", group_id=group_id)

    # -- client telemetry (KIP-714) -----------------------------------------------------------

    def clients(self) -> list[ClientView]:
        """The client instances that sent telemetry to the receiver (a cluster started with
        ``telemetry_receiver=True``; AdminError 404 without it), in the order first seen."""
        return self._route("clients")

    def client(self, client_instance_id: str) -> ClientView:
        """One client instance, by its id (Kafka's base64 form, or a UUID)."""
        return self._route("client", client_instance_id=client_instance_id)

    def client_metrics(self, client_instance_id: str, prefix: str | None = None
                       ) -> list[ClientMetricView]:
        """The latest value of each metric the client pushed (``prefix``: only names that
        start with it), by name."""
        query = {"prefix": prefix} if prefix is not None else None
        return self._route("client_metrics", query=query,
                           client_instance_id=client_instance_id)

    # -- the clock ----------------------------------------------------------------------------

    def clock(self) -> Clock:
        """The broker clock: ``.mode`` (real or manual) and ``.now_ms``."""
        return self._route("clock")

    def advance_clock(self, ms: int) -> Clock:
        """Move a manual clock ``ms`` forward; every timer due by then fires at once."""
        return self._route("advance_clock", {"ms": ms})

    # -- the KRaft controller quorum -----------------------------------------------------------

    def schema_registry(self) -> SchemaRegistryView:
        """The Schema Registry's subjects with every version (id, type, schema, references),
        each subject's compatibility and mode, and the global ones (AdminError 404 when the
        cluster runs none)."""
        return self._route("schema_registry")

    def quorum(self) -> QuorumView:
        """The controller quorum as ``kafka-metadata-quorum.sh describe`` shows it: leader,
        epoch, high watermark, and each voter's and observer's log end offset and lag."""
        return self._route("quorum")

    def quorum_failover(self, controller: int | None = None) -> QuorumView:
        """Hand the quorum's leadership to the live voter ``controller`` (default: the next
        live one after the leader) in a new epoch; returns the quorum after."""
        body = {} if controller is None else {"controller": controller}
        return self._route("quorum_failover", body)

    # -- waits (no polling: the server answers when the condition holds) --------------------------

    def _wait(self, route_name: str, body: dict[str, Any], timeout: float) -> Any:
        body["timeout_ms"] = max(0, int(timeout * 1000))
        answer = self._call("POST", routes.by_name(route_name).path, body,
                            timeout=timeout + 30)
        return from_json(routes.by_name(route_name).answer, answer)

    def wait_for_group(self, group_id: str, *, state: str = "Stable",
                       members: int | None = None,
                       assignment: dict[str, list[int]] | None = None,
                       timeout: float = 30.0) -> Group:
        """Return the group once it is in ``state`` (with exactly ``members`` members, and
        the members together assigned exactly ``assignment``, when given); after ``timeout``
        seconds raise :class:`WaitTimeout` saying what was seen instead."""
        return self._wait("wait_for_group", {"group_id": group_id, "state": state,
                                             "members": members, "assignment": assignment},
                          timeout)

    def wait_for_records(self, topic: str, records: int, *, timeout: float = 30.0) -> Topic:
        """Return the topic once it holds at least ``records`` records (transaction markers
        not counted)."""
        return self._wait("wait_for_records", {"topic": topic, "records": records}, timeout)

    def wait_for_lag_zero(self, group_id: str, *, topic: str | None = None,
                          timeout: float = 30.0) -> Group:
        """Return the group once its committed offsets reach the high watermark of every
        partition it has offsets for or is assigned (of ``topic`` only, when given)."""
        return self._wait("wait_for_lag_zero", {"group_id": group_id, "topic": topic},
                          timeout)

    def wait_for_event(self, type: str | None = None, *, since: int = 0,
                       timeout: float = 30.0, **match: Any) -> dict[str, Any]:
        """Return the first event after ``since`` of ``type`` whose fields equal ``match``
        (``wait_for_event("member_expired", group="g")``), waiting for it if it has not
        happened yet."""
        body = {"type": type, "match": match, "since": since,
                "timeout_ms": max(0, int(timeout * 1000))}
        return self._call("POST", routes.by_name("wait_for_event").path, body,
                          timeout=timeout + 30)

    # -- reset --------------------------------------------------------------------------------

    def reset(self) -> None:
        """Drop all topics, groups, offsets and faults; stopped brokers start again."""
        self._route("reset")
