"""Client telemetry as Kafka 4.4's ClientMetricsManager serves it, and the receiver that keeps
what clients push.

**Client instances.**  Each broker keeps its own client instances, by client instance id: a
client asks GetTelemetrySubscriptions with the zero id first and is given a new random one.  An
instance is made from the request that first names the id on that broker and holds what the
subscriptions make of its client (the metric prefixes it must send, the push interval, the
subscription id); it is made again, with the same client facts, at the first request after a
subscription changed (so the client learns of the change at once), and forgotten when its
connection closes or when no request came for max(60 s, 3 push intervals).

**What a client is subscribed to.**  Every subscription (:mod:`mockbroker.core.config.
client_metrics`) whose match patterns all fully match the client's facts (``client_id``,
``client_instance_id`` in Kafka's base64 form, ``client_software_name`` and
``client_software_version`` from its ApiVersions, ``client_source_address`` and
``client_source_port``): the union of their metric prefixes (only ``*`` when one of them has
``*``), and the shortest of their intervals (5 minutes without any).  The subscription id is
Kafka's: the CRC-32C of the prefixes as a Java ``HashSet`` prints them followed by the interval,
xor the id's ``hashCode``, so it is the same on every broker and changes with the
subscription.

**The errors, in Kafka's order.**  A GetTelemetrySubscriptions sooner than one push interval
after the instance's last request is THROTTLING_QUOTA_EXCEEDED, unless its last push failed
with UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE.  A PushTelemetry is refused
INVALID_REQUEST for the zero or one id or after a terminating push; THROTTLING_QUOTA_EXCEEDED
when it comes sooner than a push interval after the last push and no GetTelemetrySubscriptions
came in between (a terminating push is never early); UNKNOWN_SUBSCRIPTION_ID when its
subscription id is not the instance's; UNSUPPORTED_COMPRESSION_TYPE for a compression Kafka
does not know; TELEMETRY_TOO_LARGE over ``telemetry.max.bytes``; INVALID_RECORD when its
metrics do not decompress within that size (or, with the receiver on, are not OTLP).

**The receiver.**  Kafka serves both APIs with or without a metrics reporter that receives
telemetry, and advertises them only with one; ``telemetry_receiver`` stands for that reporter.
With it on, each client that subscribed or pushed is kept (:class:`TelemetryClient`), with the
latest value of each metric (name and attributes) it pushed, decoded from OTLP (and, for a sum
pushed as deltas, as Kafka asks clients to, the deltas added up), and every push is a
``telemetry_pushed`` event.  They stay after the client is gone, until a reset.
"""

from __future__ import annotations

import base64
import math
import uuid
from typing import Any

from crc32c import crc32c
from msgspec import Struct, field

from mockbroker.core.config.client_metrics import (
    ALL_METRICS, DEFAULT_INTERVAL_MS, subscriptions,
)
from mockbroker.core.javaorder import string_order, uuid_hash
from wire import compression, errors
from wire.exceptions import CorruptRecordBatchError

#: what GetTelemetrySubscriptions answers a client may compress its pushes with, in Kafka's
#: order of preference: zstd, lz4, gzip, snappy
ACCEPTED_COMPRESSION = (compression.ZSTD, compression.LZ4, compression.GZIP,
                        compression.SNAPPY)
_KNOWN_COMPRESSION = (compression.NONE, *ACCEPTED_COMPRESSION)
ZERO_ID = uuid.UUID(int=0)
#: the ids Kafka reserves (``Uuid.RESERVED``): no client instance has one
RESERVED_IDS = (ZERO_ID, uuid.UUID(int=1))
#: an instance no request came for this long (or three push intervals, if longer) is forgotten
EXPIRY_MS = 60_000


def kafka_id(instance_id: uuid.UUID) -> str:
    """How Kafka writes a Uuid (``Uuid.toString``): URL-safe base64, unpadded."""
    return base64.urlsafe_b64encode(instance_id.bytes).decode().rstrip("=")


def parse_id(text: str) -> uuid.UUID | None:
    """A client instance id written Kafka's way or as a UUID; None if it is neither."""
    try:
        return uuid.UUID(text)
    except ValueError:
        pass
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        return None
    return uuid.UUID(bytes=raw) if len(raw) == 16 else None


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def subscription_id(metrics: list[str], push_interval_ms: int,
                    instance_id: uuid.UUID) -> int:
    """Kafka's subscription id: CRC-32C over the prefixes (in ``metrics``' order, printed as a
    Java set: ``[a, b]``) and the interval, xor the instance id's hash."""
    text = "[" + ", ".join(metrics) + "]" + str(push_interval_ms)
    return _int32(crc32c(text.encode()) ^ uuid_hash(instance_id))


class ClientInstance(Struct):
    """A client instance as one broker knows it."""

    instance_id: uuid.UUID
    #: the facts subscriptions match on (attribute -> value, None when unknown)
    attributes: dict[str, str | None]
    subscription_id: int
    #: the subscriptions' change count it was worked out at
    version: int
    #: the metric prefixes it must send, in the order Kafka answers them
    metrics: list[str]
    push_interval_ms: int
    #: the names of the subscriptions it matches
    subscriptions: list[str]
    last_get_ms: int = 0
    last_push_ms: int = 0
    terminating: bool = False
    last_error: int = errors.NONE
    #: its last request, for its expiry
    touched_ms: int = 0

    def may_get(self, now_ms: int) -> bool:
        """Whether a GetTelemetrySubscriptions comes a push interval after the last request
        (and if so, it is now the last)."""
        if now_ms - max(self.last_get_ms, self.last_push_ms) >= self.push_interval_ms:
            self.last_get_ms = now_ms
            return True
        return False

    def may_push(self, now_ms: int) -> bool:
        """Whether a push comes right after a GetTelemetrySubscriptions (the client staggers
        its first push) or a push interval after the last push (and if so, it is now the
        last)."""
        ok = self.last_get_ms > self.last_push_ms or \
            now_ms - self.last_push_ms >= self.push_interval_ms
        if ok:
            self.last_push_ms = now_ms
        return ok


class TelemetryMetric(Struct):
    """The latest value of one metric (a name and its attributes) a client pushed."""

    name: str
    type: str
    unit: str
    description: str
    attributes: dict[str, Any]
    value: Any
    time_ms: int
    start_time_ms: int
    temporality: str | None
    monotonic: bool | None
    #: when it was pushed, on the broker clock
    pushed_ms: int
    #: a delta sum's deltas added up over every push the receiver got (the client's total)
    total: Any = None


class TelemetryClient(Struct):
    """A client instance as the receiver saw it, across brokers."""

    client_instance_id: str
    instance_id: uuid.UUID
    client_id: str | None
    client_software_name: str | None
    client_software_version: str | None
    client_source_address: str | None
    client_source_port: int | None
    broker: int
    subscription_id: int
    subscriptions: list[str]
    requested_metrics: list[str]
    push_interval_ms: int
    first_seen_ms: int
    last_push_ms: int | None = None
    pushes: int = 0
    terminating: bool = False
    #: the attributes it gave of itself (the OTLP resource)
    resource: dict[str, Any] = field(default_factory=dict)
    metrics: dict[tuple, TelemetryMetric] = field(default_factory=dict)


class Telemetry:
    """Every broker's client instances, and the receiver's clients."""

    def __init__(self, broker_configs, settings: dict[str, Any], events) -> None:
        self._configs = broker_configs
        self.receiver: bool = settings["telemetry_receiver"]
        self.max_bytes: int = settings["telemetry_max_bytes"]
        self._events = events
        #: (broker id, client instance id) -> instance
        self._instances: dict[tuple[int, uuid.UUID], ClientInstance] = {}
        #: (broker id, connection id) -> the instance its last telemetry request named
        self._connections: dict[tuple[int, int], uuid.UUID] = {}
        #: what the receiver kept, by client instance id, in the order first seen
        self.clients: dict[uuid.UUID, TelemetryClient] = {}

    # -- instances ---------------------------------------------------------------------------

    def _new_id(self, broker_id: int) -> uuid.UUID:
        while True:
            candidate = uuid.uuid4()
            if candidate not in RESERVED_IDS and not kafka_id(candidate).startswith("-") \
                    and (broker_id, candidate) not in self._instances:
                return candidate

    def _made(self, instance_id: uuid.UUID, attributes: dict[str, str | None]
              ) -> ClientInstance:
        matched = [s for s in subscriptions(self._configs) if s.matches(attributes)]
        interval = min([DEFAULT_INTERVAL_MS, *(s.interval_ms for s in matched)])
        prefixes = [metric for s in matched for metric in string_order(s.metrics)]
        if ALL_METRICS in prefixes:
            prefixes = [ALL_METRICS]
        metrics = string_order(prefixes)
        return ClientInstance(instance_id, attributes,
                              subscription_id(metrics, interval, instance_id),
                              self._configs.client_metrics_version, metrics, interval,
                              [s.name for s in matched])

    def _instance(self, ctx, software, instance_id: uuid.UUID) -> ClientInstance:
        key = (ctx.broker_id, instance_id)
        instance = self._instances.get(key)
        if instance is not None and ctx.now_ms - instance.touched_ms >= \
                max(EXPIRY_MS, 3 * instance.push_interval_ms):
            instance = None  # expired
        if instance is None:
            name, version = software or (None, None)
            port = getattr(ctx, "client_port", None)
            instance = self._made(instance_id, {
                "client_instance_id": kafka_id(instance_id), "client_id": ctx.client_id,
                "client_software_name": name, "client_software_version": version,
                "client_source_address": ctx.client_host,
                "client_source_port": None if port is None else str(port)})
        elif instance.version < self._configs.client_metrics_version:
            instance = self._made(instance_id, instance.attributes)
        else:
            instance.touched_ms = ctx.now_ms
            return instance
        instance.touched_ms = ctx.now_ms
        self._instances[key] = instance
        self._connections[(ctx.broker_id, ctx.connection_id)] = instance_id
        return instance

    def connection_closed(self, broker_id: int, connection_id: int) -> None:
        """A connection closed: the instance its telemetry named is forgotten, as Kafka's
        broker forgets it (the receiver keeps what it received)."""
        instance_id = self._connections.pop((broker_id, connection_id), None)
        if instance_id is not None:
            self._instances.pop((broker_id, instance_id), None)

    # -- the two APIs ------------------------------------------------------------------------

    def get_subscriptions(self, ctx, software, instance_id: uuid.UUID | None
                          ) -> tuple[int, ClientInstance | None]:
        """GetTelemetrySubscriptions: (error code, the instance when there is none)."""
        if instance_id is None or instance_id == ZERO_ID:
            instance_id = self._new_id(ctx.broker_id)
        instance = self._instance(ctx, software, instance_id)
        if not instance.may_get(ctx.now_ms) and instance.last_error not in (
                errors.UNKNOWN_SUBSCRIPTION_ID, errors.UNSUPPORTED_COMPRESSION_TYPE):
            return errors.THROTTLING_QUOTA_EXCEEDED, None
        instance.last_error = errors.NONE
        if self.receiver:
            self._client(ctx, instance)
        return errors.NONE, instance

    def push(self, ctx, software, request) -> int:
        """PushTelemetry: its error code."""
        instance_id = request.client_instance_id
        if instance_id is None or instance_id in RESERVED_IDS:
            return errors.INVALID_REQUEST
        instance = self._instance(ctx, software, instance_id)
        error = self._refusal(ctx.now_ms, instance, request)
        instance.terminating = request.terminating
        if error != errors.NONE:
            instance.last_error = error
            return error
        data = request.metrics
        points = None
        if data:
            try:
                points = self._export(request.compression_type, data)
            except ValueError:
                instance.last_error = errors.INVALID_RECORD
                return errors.INVALID_RECORD
        instance.last_error = errors.NONE
        if self.receiver:
            self._received(ctx, instance, request.terminating, points or [])
        return errors.NONE

    def _refusal(self, now_ms: int, instance: ClientInstance, request) -> int:
        if instance.terminating:
            return errors.INVALID_REQUEST
        if not instance.may_push(now_ms) and not request.terminating:
            return errors.THROTTLING_QUOTA_EXCEEDED
        if request.subscription_id != instance.subscription_id:
            return errors.UNKNOWN_SUBSCRIPTION_ID
        if request.compression_type not in _KNOWN_COMPRESSION:
            return errors.UNSUPPORTED_COMPRESSION_TYPE
        if len(request.metrics or b"") > self.max_bytes:
            return errors.TELEMETRY_TOO_LARGE
        return errors.NONE

    def _export(self, codec: int, data: bytes) -> list | None:
        """The pushed metrics, decompressed as Kafka does before it hands them to a reporter
        (ValueError when they do not decompress within the size limit), and decoded when the
        receiver is on (ValueError when they are not OTLP)."""
        if codec != compression.NONE:
            try:
                data = compression.decompress(codec, data, max_size=self.max_bytes)
            except CorruptRecordBatchError as exc:
                raise ValueError(str(exc)) from None
        if not self.receiver:
            return None
        from mockbroker.core.telemetry.otlp import decode_metrics_data

        return decode_metrics_data(bytes(data))  # OtlpError is a ValueError

    # -- the receiver ------------------------------------------------------------------------

    def _client(self, ctx, instance: ClientInstance) -> TelemetryClient:
        attributes = instance.attributes
        found = self.clients.get(instance.instance_id)
        port = attributes["client_source_port"]
        facts = dict(
            client_id=attributes["client_id"],
            client_software_name=attributes["client_software_name"],
            client_software_version=attributes["client_software_version"],
            client_source_address=attributes["client_source_address"],
            client_source_port=None if port is None else int(port), broker=ctx.broker_id,
            subscription_id=instance.subscription_id,
            subscriptions=list(instance.subscriptions),
            requested_metrics=list(instance.metrics),
            push_interval_ms=instance.push_interval_ms)
        if found is None:
            found = TelemetryClient(kafka_id(instance.instance_id), instance.instance_id,
                                    first_seen_ms=ctx.now_ms, **facts)
            self.clients[instance.instance_id] = found
        else:
            for name, value in facts.items():
                setattr(found, name, value)
        return found

    def _received(self, ctx, instance: ClientInstance, terminating: bool,
                  points: list) -> None:
        client = self._client(ctx, instance)
        client.last_push_ms = ctx.now_ms
        client.pushes += 1
        client.terminating = terminating
        for point in points:
            if point.resource:
                client.resource = dict(point.resource)
            key = (point.name, _frozen(point.attributes))
            value = _finite(point.value)
            total = None
            if point.kind == "sum" and point.temporality == "delta" and value is not None:
                before = client.metrics.get(key)
                total = value + (before.total or 0 if before is not None else 0)
            client.metrics[key] = TelemetryMetric(
                point.name, point.kind, point.unit, point.description, point.attributes,
                value, point.time_unix_nano // 1_000_000,
                point.start_time_unix_nano // 1_000_000, point.temporality, point.monotonic,
                ctx.now_ms, total)
        self._events.emit("telemetry_pushed", client_instance_id=client.client_instance_id,
                          client_id=client.client_id, broker=ctx.broker_id,
                          metrics=len(points), terminating=terminating)


def _finite(value: Any) -> Any:
    """A value JSON can carry: NaN and the infinities (a Java average of no samples is NaN)
    become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _frozen(value: Any) -> Any:
    """A hashable form of an attribute value (attributes may hold lists and maps)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value
