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
or framework.  A refused call raises :class:`AdminError` with the HTTP status and the server's
message; nothing changes on the server in that case.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Iterator, TypeVar

__all__ = [
    "AdminClient", "AdminError", "Broker", "Fault", "Group", "GroupSummary", "Header",
    "LoggedRequest", "Member", "Partition", "Record", "Topic",
]

T = TypeVar("T")


class AdminError(Exception):
    """The admin API refused a call (a 4xx) or failed (a 5xx)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


def _build(cls: type[T], data: dict[str, Any], **overrides: Any) -> T:
    """A dataclass from a JSON object, ignoring keys a newer server may add."""
    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in data.items() if k in names}
    values.update(overrides)
    return cls(**values)


def _int_keys(table: dict[str, dict[str, Any]]) -> dict[str, dict[int, Any]]:
    return {topic: {int(p): v for p, v in parts.items()} for topic, parts in table.items()}


@dataclass(frozen=True)
class Fault:
    """A fault in force (``count`` is what is left; None: until removed)."""

    id: int
    action: str
    api: str | None
    api_key: int | None
    error: str | None
    error_code: int | None
    count: int | None
    fired: int
    broker: int | None
    topic: str | None
    partition: int | None
    client_id: str | None
    delay_ms: int
    probability: float


@dataclass(frozen=True)
class Broker:
    id: int
    host: str
    port: int
    state: str  # "up" or "down"
    rack: str | None = None
    controller: bool = False
    latency_ms: int = 0
    leader_partitions: int = 0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Partition:
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    log_start_offset: int
    high_watermark: int
    records: int


@dataclass(frozen=True)
class Topic:
    name: str
    topic_id: str
    internal: bool
    configs: dict[str, str]
    partitions: list[Partition]


@dataclass(frozen=True)
class Header:
    key: str
    value: str | None
    value_base64: str | None

    @property
    def raw(self) -> bytes | None:
        return None if self.value_base64 is None else _b64(self.value_base64)


@dataclass(frozen=True)
class Record:
    """A record as stored; ``key``/``value`` are UTF-8 text (None when absent or not text),
    ``raw_key``/``raw_value`` the exact bytes."""

    partition: int
    offset: int
    timestamp: int
    timestamp_type: str
    key: str | None
    key_base64: str | None
    value: str | None
    value_base64: str | None
    headers: list[Header]

    @property
    def raw_key(self) -> bytes | None:
        return None if self.key_base64 is None else _b64(self.key_base64)

    @property
    def raw_value(self) -> bytes | None:
        return None if self.value_base64 is None else _b64(self.value_base64)


@dataclass(frozen=True)
class Member:
    member_id: str
    client_id: str
    group_instance_id: str | None
    #: {topic: [partitions]} for consumer groups (None if the group is not one)
    assignment: dict[str, list[int]] | None
    client_host: str = ""
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = 0
    assignment_base64: str = ""


@dataclass(frozen=True)
class Group:
    group_id: str
    state: str  # Empty, PreparingRebalance, CompletingRebalance, Stable, Dead
    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None
    coordinator: int
    members: list[Member]
    #: {topic: {partition: committed offset}}
    offsets: dict[str, dict[int, int]]
    #: {topic: {partition: high watermark - committed offset}}
    lag: dict[str, dict[int, int]] = field(default_factory=dict)
    offset_metadata: dict[str, dict[int, str]] = field(default_factory=dict)

    def assignment(self) -> dict[str, dict[str, list[int]]]:
        """{member id: {topic: [partitions]}}."""
        return {m.member_id: m.assignment or {} for m in self.members}


@dataclass(frozen=True)
class GroupSummary:
    group_id: str
    state: str
    generation: int = 0
    protocol_type: str | None = None
    coordinator: int = -1
    members: int = 0


@dataclass(frozen=True)
class LoggedRequest:
    """One request a broker received, with what became of it."""

    seq: int
    time_ms: int
    broker: int
    api: str
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    outcome: str  # pending, answered, no response, dropped, disconnected, failed
    error: str | None
    error_code: int
    fault: int | None


def _b64(text: str) -> bytes:
    import base64
    return base64.b64decode(text)


def _topic(data: dict[str, Any]) -> Topic:
    return _build(Topic, data, partitions=[_build(Partition, p) for p in data["partitions"]])


def _group(data: dict[str, Any]) -> Group:
    return _build(Group, data, members=[_build(Member, m) for m in data["members"]],
                  offsets=_int_keys(data.get("offsets", {})),
                  lag=_int_keys(data.get("lag", {})),
                  offset_metadata=_int_keys(data.get("offset_metadata", {})))


class AdminClient:
    """Talks to one cluster's admin API at ``url`` (``MockCluster.admin_url``)."""

    def __init__(self, url: str, *, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"AdminClient({self.url!r})"

    # -- plumbing -----------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: Any = None,
              query: dict[str, Any] | None = None) -> Any:
        url = self.url + path
        if query:
            pairs = {k: v for k, v in query.items() if v is not None}
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                message = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                message = raw.decode(errors="replace") or exc.reason
            raise AdminError(exc.code, message) from None

    @staticmethod
    def _quote(text: str) -> str:
        return urllib.parse.quote(text, safe="")

    # -- health -------------------------------------------------------------------------------

    def health(self) -> bool:
        """True once every listener is up."""
        try:
            return self._call("GET", "/health").get("status") == "ok"
        except AdminError:
            return False

    def openapi(self) -> dict[str, Any]:
        return self._call("GET", "/openapi.json")

    # -- faults -------------------------------------------------------------------------------

    def add_fault(self, api: str | int | None = None, *, error: str | int | None = None,
                  action: str | None = None, count: int | None = 1,
                  broker: int | None = None, topic: str | None = None,
                  partition: int | None = None, client_id: str | None = None,
                  delay_ms: int = 0, probability: float = 1.0) -> Fault:
        """Add a fault.  ``api``: a Kafka API name or key (None: any).  ``action``: error
        (the default when ``error`` is given), delay (the default otherwise), drop or
        disconnect.  ``count``: how many requests it picks; None until removed."""
        spec: dict[str, Any] = {"api": api, "count": count, "broker": broker, "topic": topic,
                                "partition": partition, "client_id": client_id,
                                "delay_ms": delay_ms, "probability": probability}
        if error is not None:
            spec["error"] = error
        if action is not None:
            spec["action"] = action
        return _build(Fault, self._call("POST", "/faults", spec))

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
        return [_build(Fault, f) for f in self._call("GET", "/faults")]

    def get_fault(self, fault_id: int) -> Fault:
        return _build(Fault, self._call("GET", f"/faults/{int(fault_id)}"))

    def remove_fault(self, fault_id: int) -> Fault:
        return _build(Fault, self._call("DELETE", f"/faults/{int(fault_id)}"))

    def clear_faults(self) -> int:
        """Remove every fault; returns how many there were."""
        return self._call("DELETE", "/faults")["removed"]

    # -- brokers ------------------------------------------------------------------------------

    def brokers(self) -> list[Broker]:
        return [_build(Broker, b) for b in self._call("GET", "/brokers")]

    def broker(self, broker_id: int) -> Broker:
        return _build(Broker, self._call("GET", f"/brokers/{int(broker_id)}"))

    def stop_broker(self, broker_id: int) -> Broker:
        """Take a broker down as if it had died: its listener and connections close, its
        partitions and groups move to live brokers."""
        return _build(Broker, self._call("POST", f"/brokers/{int(broker_id)}/stop"))

    def start_broker(self, broker_id: int) -> Broker:
        return _build(Broker, self._call("POST", f"/brokers/{int(broker_id)}/start"))

    def set_broker_latency(self, broker_id: int, delay_ms: int) -> Broker:
        """Delay every answer of a broker by ``delay_ms`` (0 removes the latency)."""
        return _build(Broker, self._call("PUT", f"/brokers/{int(broker_id)}/latency",
                                         {"delay_ms": delay_ms}))

    # -- topics -------------------------------------------------------------------------------

    def topics(self, *, internal: bool = False) -> list[Topic]:
        return [_topic(t) for t in self._call("GET", "/topics",
                                              query={"internal": str(internal).lower()})]

    def topic(self, name: str) -> Topic:
        return _topic(self._call("GET", f"/topics/{self._quote(name)}"))

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
        return _topic(self._call("POST", "/topics", body))

    def delete_topic(self, name: str) -> None:
        self._call("DELETE", f"/topics/{self._quote(name)}")

    def records(self, topic: str, partition: int | None = None, *, offset: int | None = None,
                limit: int = 100) -> list[Record]:
        """Decoded records, in offset order per partition."""
        data = self._call("GET", f"/topics/{self._quote(topic)}/records",
                          query={"partition": partition, "offset": offset, "limit": limit})
        return [_build(Record, r, headers=[_build(Header, h) for h in r["headers"]])
                for r in data]

    def move_leader(self, topic: str, partition: int, broker_id: int) -> Topic:
        """Make ``broker_id`` (a live replica) the partition's leader."""
        return _topic(self._call(
            "POST", f"/topics/{self._quote(topic)}/partitions/{int(partition)}/leader",
            {"broker": broker_id}))

    # -- groups -------------------------------------------------------------------------------

    def groups(self) -> list[GroupSummary]:
        return [_build(GroupSummary, g) for g in self._call("GET", "/groups")]

    def group(self, group_id: str) -> Group:
        return _group(self._call("GET", f"/groups/{self._quote(group_id)}"))

    def move_coordinator(self, group_id: str, broker_id: int) -> dict[str, Any]:
        """Move the group's coordinator to ``broker_id``; returns the group as JSON (its state
        is "loading" while the new coordinator loads)."""
        return self._call("POST", f"/groups/{self._quote(group_id)}/coordinator",
                          {"broker": broker_id})

    def rebalance(self, group_id: str) -> Group:
        """Start a rebalance as if membership had changed."""
        return _group(self._call("POST", f"/groups/{self._quote(group_id)}/rebalance"))

    def expire_member(self, group_id: str, member_id: str) -> Group:
        """Remove a member as if its session had timed out."""
        return _group(self._call("POST", f"/groups/{self._quote(group_id)}/members/"
                                         f"{self._quote(member_id)}/expire"))

    # -- the request log ----------------------------------------------------------------------

    def requests(self, api: str | int | None = None, *, broker: int | None = None,
                 client_id: str | None = None, limit: int | None = None) -> list[LoggedRequest]:
        """Recent requests, oldest first."""
        return [_build(LoggedRequest, r) for r in self._call(
            "GET", "/requests", query={"api": api, "broker": broker, "client_id": client_id,
                                       "limit": limit})]

    def clear_requests(self) -> None:
        self._call("DELETE", "/requests")

    # -- reset --------------------------------------------------------------------------------

    def reset(self) -> None:
        """Drop all topics, groups, offsets and faults; stopped brokers start again."""
        self._call("POST", "/reset")
