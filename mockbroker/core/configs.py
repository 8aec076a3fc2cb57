"""Topic and broker configs under Kafka's own names: types, defaults, validation and sources.

What the config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and the configs of
CreateTopics) work on:

- a topic's overrides live in ``Topic.configs``, as strings under Kafka's names, normalised the
  way Kafka prints them (the data path reads ``max.message.bytes`` and
  ``message.timestamp.type`` from there);
- a broker's configs come in four layers, as on a KRaft broker: Kafka's defaults, the static
  settings the cluster was started with (what ``server.properties`` would say), dynamic
  cluster-wide defaults, and dynamic per-broker values (:class:`BrokerConfigs`);
- a topic config without an override takes its value from its broker synonym
  (``retention.ms`` from ``log.retention.ms``, ``log.retention.minutes`` or
  ``log.retention.hours``), and reports where that value came from.

The tables follow Apache Kafka 4.1 (LogConfig, ServerTopicConfigSynonyms, the broker config
definitions and DynamicBrokerConfig); sources and synonyms follow ConfigHelper for
DescribeConfigs and KafkaConfigSchema for CreateTopics results; validation and its error codes
follow ConfigAdminManager (the broker's checks), ConfigurationControlManager and
ControllerConfigurationValidator (the controller's).

Of the broker configs only ``message.max.bytes`` and ``log.message.timestamp.type`` change what
the mock does; a dynamic cluster-wide value of either is copied into the cluster's settings.
Everything else is stored and described faithfully but has no effect (there is no retention,
compaction or flushing in a mock).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from math import copysign, inf, isnan
from typing import TYPE_CHECKING, Any, Iterable

from mockbroker.core.errors import ApiException
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.cluster import Cluster


class ConfigType(IntEnum):
    """``DescribeConfigsResponse.ConfigType``."""
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """``DescribeConfigsResponse.ConfigSource``."""
    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ResourceType(IntEnum):
    """``ConfigResource.Type``."""
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class OpType(IntEnum):
    """``AlterConfigOp.OpType``."""
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


#: Longest value the controller stores (a ConfigRecord value is a short-length string).
MAX_VALUE_LENGTH = 32767
LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1
_BITS = {ConfigType.SHORT: 16, ConfigType.INT: 32, ConfigType.LONG: 64}


class InvalidValue(ValueError):
    """A value Kafka's ConfigDef would refuse; the message is worded as Kafka words it."""

    def __init__(self, name: str, value: Any, reason: str):
        super().__init__(f"Invalid value {_java_repr(value)} for configuration {name}: {reason}")


# -- values as Java prints them ----------------------------------------------------------------

def _java_double(x: float) -> str:
    """``Double.toString``: plain between 10^-3 and 10^7, computerized scientific otherwise."""
    if isnan(x):
        return "NaN"
    if x in (inf, -inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if copysign(1.0, x) < 0 else "0.0"
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + exponent  # digits before the decimal point
    prefix = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole, frac = text[:point].ljust(point, "0"), text[point:]
        return f"{prefix}{whole}.{frac or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _java_repr(value: Any) -> str:
    """How Java's string concatenation prints a parsed config value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _java_trim(text: str) -> str:
    """``String.trim``: drops every character up to U+0020 at both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?\Z")
_LIST_SEPARATOR = re.compile(r"\s*,\s*")


# -- validators ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Range:
    lo: int | None = None
    hi: int | None = None

    def check(self, name: str, value: Any) -> None:
        if self.lo is not None and value < self.lo:
            raise InvalidValue(name, value, f"Value must be at least {self.lo}")
        if self.hi is not None and value > self.hi:
            raise InvalidValue(name, value, f"Value must be no more than {self.hi}")


@dataclass(frozen=True, slots=True)
class OneOf:
    choices: tuple[str, ...]

    def check(self, name: str, value: Any) -> None:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item not in self.choices:
                raise InvalidValue(name, item, "String must be one of: " + ", ".join(self.choices))


@dataclass(frozen=True, slots=True)
class GzipLevel:
    """1 to 9, or -1 for zlib's default."""

    def check(self, name: str, value: Any) -> None:
        if value > 9 or (value < 1 and value != -1):
            raise InvalidValue(name, value, "Value must be between 1 and 9 or equal to -1")


@dataclass(frozen=True, slots=True)
class ThrottledReplicas:
    """``*`` or a list of ``partition:broker`` pairs."""

    def check(self, name: str, value: Any) -> None:
        items = [item.strip() for item in value]
        if "".join(items) == "*":
            return
        if not all(re.fullmatch(r"([0-9]+:[0-9]+)?", item) for item in items):
            raise InvalidValue(name, value, f"{name} must be '*' or a list of "
                                            "[partitionId]:[brokerId] pairs")


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One config: Kafka's name, type and default (parsed; None for a null default)."""

    name: str
    type: ConfigType
    default: Any
    validator: Any = None
    doc: str = ""
    #: broker configs only: can be changed at runtime (Kafka's DynamicBrokerConfig)
    dynamic: bool = False
    #: broker configs only: dynamic per broker, never as a cluster-wide default
    per_broker: bool = False

    def parse(self, raw: str) -> Any:
        """The value of ``raw`` as Kafka's ConfigDef parses and validates it."""
        trimmed = _java_trim(raw)
        t = self.type
        if t is ConfigType.BOOLEAN:
            if trimmed.lower() not in ("true", "false"):
                raise InvalidValue(self.name, raw, "Expected value to be either true or false")
            value: Any = trimmed.lower() == "true"
        elif t in _BITS:
            bits = _BITS[t]
            value = int(trimmed) if _INTEGER.match(trimmed) else None
            if value is None or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
                raise InvalidValue(self.name, raw, f"Not a number of type {t.name}")
        elif t is ConfigType.DOUBLE:
            if not _DOUBLE.match(trimmed):
                raise InvalidValue(self.name, raw, "Not a number of type DOUBLE")
            value = float(trimmed.rstrip("fFdD"))
        elif t is ConfigType.LIST:
            value = _LIST_SEPARATOR.split(trimmed) if trimmed else []
        else:
            value = trimmed
        if self.validator is not None:
            self.validator.check(self.name, value)
        return value

    def to_string(self, value: Any) -> str | None:
        """``ConfigDef.convertToString``."""
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return _java_double(value)
        if isinstance(value, list):
            return ",".join(value)
        return str(value)

    def normalise(self, raw: str) -> str:
        return self.to_string(self.parse(raw))

    @property
    def default_string(self) -> str | None:
        return self.to_string(self.default)


def _key(name, type_, default, validator=None, doc="", **flags) -> ConfigKey:
    return ConfigKey(name, type_, default, validator, doc, **flags)


B, S, I, L, D, LS, SH = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG,
                         ConfigType.DOUBLE, ConfigType.LIST, ConfigType.SHORT)
_WEEK_MS = 7 * 24 * 3600 * 1000
_COMPRESSION_TYPES = OneOf(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"))
_TIMESTAMP_TYPES = OneOf(("CreateTime", "LogAppendTime"))
_CLEANUP_POLICIES = OneOf(("compact", "delete"))

#: Topic configs, in the order Kafka 4.1's LogConfig defines them (the order it validates in).
TOPIC_CONFIGS: dict[str, ConfigKey] = {k.name: k for k in (
    _key("segment.bytes", I, 1024 ** 3, Range(1024 * 1024),
         "Size of one log segment file."),
    _key("segment.ms", L, _WEEK_MS, Range(1),
         "Time after which a new segment is rolled even if the current one is not full."),
    _key("segment.jitter.ms", L, 0, Range(0),
         "Largest random amount taken off segment.ms so segments do not all roll together."),
    _key("segment.index.bytes", I, 10 * 1024 * 1024, Range(4),
         "Size of the index that maps offsets to file positions."),
    _key("flush.messages", L, LONG_MAX, Range(1),
         "Messages written before the log is forced to disk."),
    _key("flush.ms", L, LONG_MAX, Range(0),
         "Time after which the log is forced to disk."),
    _key("retention.bytes", L, -1, None,
         "Largest size a partition's log may grow to before old segments are deleted; -1 "
         "for no limit."),
    _key("retention.ms", L, _WEEK_MS, Range(-1),
         "How long records are kept before old segments are deleted; -1 for ever."),
    _key("max.message.bytes", I, 1024 * 1024 + 12, Range(0),
         "Largest record batch the topic accepts."),
    _key("index.interval.bytes", I, 4096, Range(0),
         "How often an entry is added to the offset index."),
    _key("delete.retention.ms", L, 24 * 3600 * 1000, Range(0),
         "How long delete tombstones are kept on compacted topics."),
    _key("min.compaction.lag.ms", L, 0, Range(0),
         "Shortest time a record stays uncompacted."),
    _key("max.compaction.lag.ms", L, LONG_MAX, Range(1),
         "Longest time a record may stay uncompacted."),
    _key("file.delete.delay.ms", L, 60000, Range(0),
         "Time to wait before deleting a file from the file system."),
    _key("min.cleanable.dirty.ratio", D, 0.5, Range(0, 1),
         "Share of the log that must be uncompacted before the cleaner compacts it."),
    _key("cleanup.policy", LS, ["delete"], _CLEANUP_POLICIES,
         "What happens to old segments: delete, compact, or both."),
    _key("unclean.leader.election.enable", B, False, None,
         "Whether a replica outside the ISR may become leader, at the risk of data loss."),
    _key("min.insync.replicas", I, 1, Range(1),
         "Fewest in-sync replicas that must acknowledge a write with acks=all."),
    _key("compression.type", S, "producer", _COMPRESSION_TYPES,
         "Compression the topic stores batches with; producer keeps the producer's."),
    _key("compression.gzip.level", I, -1, GzipLevel(),
         "Level used when compression.type is gzip."),
    _key("compression.lz4.level", I, 9, Range(1, 17),
         "Level used when compression.type is lz4."),
    _key("compression.zstd.level", I, 3, Range(-131072, 22),
         "Level used when compression.type is zstd."),
    _key("preallocate", B, False, None,
         "Whether segment files are preallocated on disk."),
    _key("message.timestamp.type", S, "CreateTime", _TIMESTAMP_TYPES,
         "Whether record timestamps are the producer's (CreateTime) or the broker's "
         "(LogAppendTime)."),
    _key("message.timestamp.before.max.ms", L, LONG_MAX, Range(0),
         "How far a record's timestamp may be behind the broker's clock."),
    _key("message.timestamp.after.max.ms", L, 3600000, Range(0),
         "How far a record's timestamp may be ahead of the broker's clock."),
    _key("leader.replication.throttled.replicas", LS, [], ThrottledReplicas(),
         "Replicas whose leader-side replication is throttled."),
    _key("follower.replication.throttled.replicas", LS, [], ThrottledReplicas(),
         "Replicas whose follower-side replication is throttled."),
    _key("remote.storage.enable", B, False, None,
         "Whether the topic uses tiered storage."),
    _key("local.retention.ms", L, -2, Range(-2),
         "How long segments stay on local disk when tiered storage is on; -2 for "
         "retention.ms."),
    _key("local.retention.bytes", L, -2, Range(-2),
         "How large the local log may grow when tiered storage is on; -2 for "
         "retention.bytes."),
    _key("remote.log.copy.disable", B, False, None,
         "Whether copying segments to tiered storage is stopped."),
    _key("remote.log.delete.on.disable", B, False, None,
         "Whether turning tiered storage off deletes the remote data."),
)}


@dataclass(frozen=True, slots=True)
class Synonym:
    """A broker config a topic config falls back to, and the factor turning it into the topic
    config's unit (hours and minutes into milliseconds)."""

    name: str
    factor: int = 1


_H, _M = 3600 * 1000, 60 * 1000

#: Kafka's ServerTopicConfigSynonyms: topic config -> broker configs, first one wins.
TOPIC_SYNONYMS: dict[str, tuple[Synonym, ...]] = {
    "segment.bytes": (Synonym("log.segment.bytes"),),
    "segment.ms": (Synonym("log.roll.ms"), Synonym("log.roll.hours", _H)),
    "segment.jitter.ms": (Synonym("log.roll.jitter.ms"), Synonym("log.roll.jitter.hours", _H)),
    "segment.index.bytes": (Synonym("log.index.size.max.bytes"),),
    "flush.messages": (Synonym("log.flush.interval.messages"),),
    "flush.ms": (Synonym("log.flush.interval.ms"), Synonym("log.flush.scheduler.interval.ms")),
    "retention.bytes": (Synonym("log.retention.bytes"),),
    "retention.ms": (Synonym("log.retention.ms"), Synonym("log.retention.minutes", _M),
                     Synonym("log.retention.hours", _H)),
    "max.message.bytes": (Synonym("message.max.bytes"),),
    "index.interval.bytes": (Synonym("log.index.interval.bytes"),),
    "delete.retention.ms": (Synonym("log.cleaner.delete.retention.ms"),),
    "min.compaction.lag.ms": (Synonym("log.cleaner.min.compaction.lag.ms"),),
    "max.compaction.lag.ms": (Synonym("log.cleaner.max.compaction.lag.ms"),),
    "file.delete.delay.ms": (Synonym("log.segment.delete.delay.ms"),),
    "min.cleanable.dirty.ratio": (Synonym("log.cleaner.min.cleanable.ratio"),),
    "cleanup.policy": (Synonym("log.cleanup.policy"),),
    "unclean.leader.election.enable": (Synonym("unclean.leader.election.enable"),),
    "min.insync.replicas": (Synonym("min.insync.replicas"),),
    "compression.type": (Synonym("compression.type"),),
    "compression.gzip.level": (Synonym("compression.gzip.level"),),
    "compression.lz4.level": (Synonym("compression.lz4.level"),),
    "compression.zstd.level": (Synonym("compression.zstd.level"),),
    "preallocate": (Synonym("log.preallocate"),),
    "message.timestamp.type": (Synonym("log.message.timestamp.type"),),
    "message.timestamp.before.max.ms": (Synonym("log.message.timestamp.before.max.ms"),),
    "message.timestamp.after.max.ms": (Synonym("log.message.timestamp.after.max.ms"),),
    "local.retention.ms": (Synonym("log.local.retention.ms"),),
    "local.retention.bytes": (Synonym("log.local.retention.bytes"),),
}


def _topic_default_synonym(topic_name: str, **flags) -> ConfigKey:
    """The broker config backing a topic config: same type, default and rule."""
    topic_key = TOPIC_CONFIGS[topic_name]
    return ConfigKey(TOPIC_SYNONYMS[topic_name][0].name, topic_key.type, topic_key.default,
                     topic_key.validator, f"Broker default for the topic config {topic_name}.",
                     dynamic=True, **flags)


#: The broker configs the mock describes: its own settings, the broker defaults of every topic
#: config, and the usual identity configs.  ``dynamic`` marks what Kafka lets an admin change
#: at runtime; the rest is read-only.
BROKER_CONFIGS: dict[str, ConfigKey] = {k.name: k for k in (
    _key("broker.id", I, -1, None, "This broker's id (the node id in KRaft mode)."),
    _key("node.id", I, None, Range(0), "This node's id."),
    _key("process.roles", LS, None, OneOf(("broker", "controller")),
         "The roles this node plays: broker, controller or both."),
    _key("listeners", S, "PLAINTEXT://:9092", None, "Addresses the broker listens on.",
         dynamic=True, per_broker=True),
    _key("advertised.listeners", S, None, None, "Addresses clients are told to use.",
         dynamic=True, per_broker=True),
    _key("broker.rack", S, None, None, "The rack this broker is in."),
    _key("log.dir", S, "/tmp/kafka-logs", None, "Directory the broker keeps its logs in."),
    _key("log.dirs", S, None, None, "Directories the broker keeps its logs in."),
    _key("auto.create.topics.enable", B, True, None,
         "Whether a Metadata request for an unknown topic creates it."),
    _key("num.partitions", I, 1, Range(1), "Partitions of a topic created with the default."),
    _key("default.replication.factor", I, 1, None,
         "Replication factor of a topic created with the default."),
    _key("delete.topic.enable", B, True, None, "Whether topics may be deleted."),
    _key("offsets.topic.num.partitions", I, 50, Range(1),
         "Partitions of the __consumer_offsets topic."),
    _key("offsets.topic.replication.factor", SH, 3, Range(1),
         "Replication factor of the __consumer_offsets topic."),
    _key("offsets.retention.minutes", I, 7 * 24 * 60, Range(1),
         "How long committed offsets of an empty group are kept."),
    _key("group.initial.rebalance.delay.ms", I, 3000, None,
         "How long the coordinator waits for more members before the first rebalance."),
    _key("group.min.session.timeout.ms", I, 6000, None, "Shortest session timeout allowed."),
    _key("group.max.session.timeout.ms", I, 1800000, None, "Longest session timeout allowed."),
    _key("group.max.size", I, INT_MAX, Range(1), "Most members a classic group may have."),
    _key("socket.request.max.bytes", I, 100 * 1024 * 1024, Range(1),
         "Largest request the broker reads."),
    _key("log.roll.hours", I, 168, Range(1), "Segment roll time in hours, if log.roll.ms is "
                                             "not set."),
    _key("log.roll.jitter.hours", I, 0, Range(0), "Segment roll jitter in hours, if "
                                                  "log.roll.jitter.ms is not set."),
    _key("log.retention.minutes", I, None, None, "Retention in minutes, if log.retention.ms is "
                                                 "not set."),
    _key("log.retention.hours", I, 168, None, "Retention in hours, if neither log.retention.ms "
                                              "nor log.retention.minutes is set."),
    _key("log.flush.scheduler.interval.ms", L, LONG_MAX, None,
         "How often the flusher checks whether a log needs flushing."),
    *(_topic_default_synonym(name) for name in TOPIC_SYNONYMS if name not in (
        "segment.ms", "segment.jitter.ms", "flush.ms", "retention.ms")),
    # the broker defaults that fall back to another config have no default of their own
    _key("log.roll.ms", L, None, None, "Segment roll time.", dynamic=True),
    _key("log.roll.jitter.ms", L, None, None, "Segment roll jitter.", dynamic=True),
    _key("log.flush.interval.ms", L, None, None, "Time after which a log is flushed.",
         dynamic=True),
    _key("log.retention.ms", L, None, None, "How long logs are kept; -1 for ever.",
         dynamic=True),
)}

#: Kafka's default broker configs with a non-null default, as Kafka prints them.
BROKER_DEFAULTS: dict[str, str] = {
    k.name: k.default_string for k in BROKER_CONFIGS.values() if k.default is not None}

#: Settings of the mock that are broker configs under the same Kafka name.
_SETTING_CONFIGS = ("auto.create.topics.enable", "num.partitions", "delete.topic.enable",
                    "offsets.topic.num.partitions", "offsets.topic.replication.factor",
                    "offsets.retention.minutes", "group.initial.rebalance.delay.ms",
                    "group.min.session.timeout.ms", "group.max.session.timeout.ms",
                    "group.max.size", "message.max.bytes", "socket.request.max.bytes",
                    "log.message.timestamp.type")

#: Dynamic broker configs the data path reads from the cluster's settings.
_MIRRORED = {"message.max.bytes": "message_max_bytes",
             "log.message.timestamp.type": "log_message_timestamp_type"}

_SYNONYM_GROUPS = (("log.roll.ms", "log.roll.hours"),
                   ("log.roll.jitter.ms", "log.roll.jitter.hours"),
                   ("log.retention.ms", "log.retention.minutes", "log.retention.hours"))


def broker_synonyms(name: str) -> list[str]:
    """Broker configs that set the same thing, in priority order (DynamicBrokerConfig)."""
    for group in _SYNONYM_GROUPS:
        if name in group:
            return list(group)
    if name == "log.flush.interval.ms":
        return [name, "log.flush.scheduler.interval.ms"]
    return [name]


def _setting_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class BrokerConfigs:
    """The broker config layers: defaults, static settings, dynamic defaults, dynamic
    per-broker values."""

    def __init__(self, cluster: "Cluster"):
        self._cluster = cluster
        # Dynamic values of some configs are copied into the settings; keep what they were.
        self._static_settings = dict(cluster.settings)
        self._static_replication_factor = cluster.default_replication_factor()
        self.dynamic_default: dict[str, str] = {}
        self.dynamic_per_broker: dict[int, dict[str, str]] = {}

    def static(self, broker_id: int) -> dict[str, str]:
        """What ``server.properties`` would hold: identity, listener, and every setting the
        mock runs with that differs from Kafka's default."""
        broker = self._cluster.brokers[broker_id]
        listener = f"PLAINTEXT://{broker.host}:{broker.port}"
        out = {"broker.id": str(broker_id), "node.id": str(broker_id),
               "process.roles": "broker,controller", "listeners": listener,
               "advertised.listeners": listener}
        rack = broker.rack or self._static_settings.get("broker_rack") or None
        if rack:
            out["broker.rack"] = rack
        for name in _SETTING_CONFIGS:
            text = _setting_text(self._static_settings[name.replace(".", "_")])
            if text != BROKER_DEFAULTS.get(name):
                out[name] = text
        # the mock creates topics with min(3, brokers) replicas when asked for the default
        if str(self._static_replication_factor) != BROKER_DEFAULTS["default.replication.factor"]:
            out["default.replication.factor"] = str(self._static_replication_factor)
        return out

    def per_broker(self, broker_id: int) -> dict[str, str]:
        return self.dynamic_per_broker.get(broker_id, {})

    def layers(self, broker_id: int) -> list[tuple[dict[str, str], ConfigSource]]:
        """Highest priority first."""
        return [(self.per_broker(broker_id), ConfigSource.DYNAMIC_BROKER_CONFIG),
                (self.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                (self.static(broker_id), ConfigSource.STATIC_BROKER_CONFIG),
                (BROKER_DEFAULTS, ConfigSource.DEFAULT_CONFIG)]

    def effective(self, broker_id: int) -> dict[str, str]:
        """The broker's current config: every layer merged."""
        merged: dict[str, str] = {}
        for layer, _ in reversed(self.layers(broker_id)):
            merged.update(layer)
        return merged

    def synonyms(self, name: str, names: Iterable[str], broker_id: int
                 ) -> list[tuple[str, str | None, ConfigSource]]:
        """ConfigHelper's synonym list: each layer in priority order, within it each synonym
        in priority order; anything before ``name`` itself is dropped."""
        found = []
        for layer, source in self.layers(broker_id):
            for synonym in names:
                if synonym in layer:
                    found.append((synonym, layer[synonym], source))
        while found and found[0][0] != name:
            found.pop(0)
        return found

    def sync_settings(self) -> None:
        """Copy cluster-wide dynamic values the data path reads into the settings."""
        for name, setting in _MIRRORED.items():
            value = self.dynamic_default.get(name)
            if value is None:
                self._cluster.settings[setting] = self._static_settings[setting]
            else:
                parsed = BROKER_CONFIGS[name].parse(value)
                self._cluster.settings[setting] = parsed


# -- results -----------------------------------------------------------------------------------

@dataclass(slots=True)
class ConfigEntry:
    """One config as DescribeConfigs (and CreateTopics v5+) report it."""

    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    read_only: bool = False
    sensitive: bool = False
    synonyms: list[tuple[str, str | None, ConfigSource]] = field(default_factory=list)
    documentation: str | None = None


def _error(code: int, message: str | None) -> ApiException:
    return ApiException(code, message or "")


def topic_name_problem(name: str | None) -> str | None:
    """Why Kafka refuses ``name`` as a topic name, in Kafka's words (``Topic.validate``)."""
    if name is None:
        return "Topic name is invalid: null"
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > 249:
        reason = f"the length of '{name}' is longer than the max allowed length 249"
    elif not re.fullmatch(r"[a-zA-Z0-9._-]+", name):
        reason = (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                  "'.', '_' and '-'")
    else:
        return None
    return f"Topic name is invalid: {reason}"


# -- topic configs -----------------------------------------------------------------------------

def topic_value_from_broker(name: str, broker: dict[str, str]) -> str | None:
    """A topic config's value when it has no override: its first broker synonym that is set,
    converted to the topic config's unit."""
    key = TOPIC_CONFIGS[name]
    for synonym in TOPIC_SYNONYMS.get(name, ()):
        raw = broker.get(synonym.name)
        if raw is not None:
            value = key.parse(raw) if synonym.factor == 1 else int(_java_trim(raw)) * synonym.factor
            if name == "retention.ms" and value < 0:
                value = -1
            return key.to_string(value)
    return key.default_string


def validate_topic_overrides(cluster: "Cluster", overrides: dict[str, str]) -> dict[str, str]:
    """A topic's complete set of overrides, checked as the controller checks it; returns them
    normalised.  Raises :class:`ApiException` with INVALID_CONFIG."""
    for name, value in overrides.items():
        if value is None:
            raise _error(errors.INVALID_CONFIG,
                         "Null value not supported for topic configs: " + name)
        if len(value) > MAX_VALUE_LENGTH:
            raise _error(errors.INVALID_CONFIG, "The configuration value cannot be added "
                         f"because it exceeds the maximum value size of {MAX_VALUE_LENGTH} "
                         "bytes.")
    for name in overrides:
        if name not in TOPIC_CONFIGS:
            raise _error(errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
    parsed: dict[str, Any] = {}
    for key in TOPIC_CONFIGS.values():
        if key.name in overrides:
            try:
                parsed[key.name] = key.parse(overrides[key.name])
            except InvalidValue as exc:
                raise _error(errors.INVALID_CONFIG, str(exc)) from None
    broker = cluster.broker_config_state().effective(_controller(cluster))

    def effective(name: str) -> Any:
        if name in parsed:
            return parsed[name]
        return TOPIC_CONFIGS[name].parse(topic_value_from_broker(name, broker))

    low, high = effective("min.compaction.lag.ms"), effective("max.compaction.lag.ms")
    if low > high:
        raise _error(errors.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms "
                     f"({low}) > max.compaction.lag.ms ({high})")
    if effective("remote.storage.enable"):
        raise _error(errors.INVALID_CONFIG, "Tiered Storage functionality is disabled in the "
                     "broker. Topic cannot be configured with remote log storage.")
    return {name: TOPIC_CONFIGS[name].to_string(value) for name, value in parsed.items()}


def _controller(cluster: "Cluster") -> int:
    controller = cluster.controller_id
    return controller if controller >= 0 else min(cluster.brokers)


def new_topic_configs(cluster: "Cluster", configs: Iterable[tuple[str, str | None]]
                      ) -> dict[str, str]:
    """The configs of a CreateTopics entry, checked; null values are refused by name."""
    configs = list(configs)
    nulls = [name for name, value in configs if value is None]
    if nulls:
        raise _error(errors.INVALID_CONFIG,
                     "Null value not supported for topic configs: " + ",".join(nulls))
    return validate_topic_overrides(cluster, dict(configs))


def created_topic_configs(cluster: "Cluster", overrides: dict[str, str]) -> list[ConfigEntry]:
    """Every config of a topic just created, as the controller reports them (sorted by name):
    the override, else the first synonym in the highest layer, else Kafka's default."""
    state = cluster.broker_config_state()
    layers = state.layers(_controller(cluster))[:-1]
    out = []
    for name in sorted(TOPIC_CONFIGS):
        key = TOPIC_CONFIGS[name]
        value, source = key.default_string, ConfigSource.DEFAULT_CONFIG
        if name in overrides:
            value, source = overrides[name], ConfigSource.TOPIC_CONFIG
        else:
            for layer, layer_source in layers:
                hit = next((s for s in TOPIC_SYNONYMS.get(name, ()) if s.name in layer), None)
                if hit is not None:
                    raw = layer[hit.name]
                    value = raw if hit.factor == 1 else str(int(_java_trim(raw)) * hit.factor)
                    source = layer_source
                    break
        out.append(ConfigEntry(name, value, source, key.type))
    return out


def describe_topic(cluster: "Cluster", name: str, broker_id: int, include_synonyms: bool = False,
                   include_documentation: bool = False) -> list[ConfigEntry]:
    """Every config of a topic, as DescribeConfigs reports it on ``broker_id``."""
    problem = topic_name_problem(name)
    if problem:
        raise _error(errors.INVALID_TOPIC_EXCEPTION, problem)
    topic = cluster.topics.get(name)
    if topic is None:
        raise _error(errors.UNKNOWN_TOPIC_OR_PARTITION, None)
    state = cluster.broker_config_state()
    broker = state.effective(broker_id)
    out = []
    for key in TOPIC_CONFIGS.values():
        override = topic.configs.get(key.name)
        if override is None:
            value = topic_value_from_broker(key.name, broker)
        else:
            try:
                value = key.normalise(override)
            except InvalidValue:  # set by something that skipped validation: show it as is
                value = override
        synonyms = []
        if key.name in TOPIC_SYNONYMS:
            primary = TOPIC_SYNONYMS[key.name][0].name
            synonyms = state.synonyms(primary, broker_synonyms(primary), broker_id)
        if override is not None:
            synonyms.insert(0, (key.name, value, ConfigSource.TOPIC_CONFIG))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        out.append(ConfigEntry(key.name, value, source, key.type, False, False,
                               synonyms if include_synonyms else [],
                               key.doc if include_documentation else None))
    return out


def alter_topic(cluster: "Cluster", name: str, new: dict[str, str], *,
                validate_only: bool) -> None:
    """Give a topic exactly these overrides (the legacy AlterConfigs)."""
    _store_topic_configs(cluster, name, dict(new), validate_only)


def incremental_alter_topic(cluster: "Cluster", name: str,
                            ops: Iterable[tuple[str, int, str | None]], *,
                            validate_only: bool) -> None:
    """Apply SET / DELETE / APPEND / SUBTRACT to a topic's overrides, all or nothing."""
    topic = cluster.topics.get(name)
    current = dict(topic.configs) if topic is not None else {}
    new = dict(current)
    for config, op, value in ops:
        if op == OpType.SET:
            new[config] = value
        elif op == OpType.DELETE:
            new.pop(config, None)
        elif op in (OpType.APPEND, OpType.SUBTRACT):
            key = TOPIC_CONFIGS.get(config)
            if key is None or key.type is not ConfigType.LIST:
                raise _error(errors.INVALID_CONFIG, f"Can't {OpType(op).name} to key {config} "
                             "because its type is not LIST.")
            base = current[config] if config in current else key.default_string
            parts = [p for p in (base or "").split(",") if p]
            if op == OpType.APPEND:
                parts += [v for v in value.split(",") if v not in parts]
            else:
                for v in value.split(","):
                    if v in parts:
                        parts.remove(v)
            new[config] = ",".join(parts)
        else:
            raise _error(errors.INVALID_REQUEST, f"Unknown operations type {op}")
    _store_topic_configs(cluster, name, new, validate_only)


def _store_topic_configs(cluster: "Cluster", name: str, new: dict[str, str],
                         validate_only: bool) -> None:
    if name == "":
        raise _error(errors.INVALID_REQUEST, "Default topic resources are not allowed.")
    problem = topic_name_problem(name)
    if problem:
        raise _error(errors.INVALID_TOPIC_EXCEPTION, problem)
    normalised = validate_topic_overrides(cluster, new)
    topic = cluster.topics.get(name)
    if topic is None:
        raise _error(errors.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    if not validate_only:
        # in place: the data path holds on to the topic, not to its config dict
        topic.configs.clear()
        topic.configs.update(normalised)


# -- broker configs ----------------------------------------------------------------------------

def _broker_resource(name: str, broker_id: int) -> int | None:
    """The broker a BROKER resource names (None for the cluster-wide default ``""``)."""
    if name == "":
        return None
    try:
        wanted = int(name)
    except ValueError:
        raise _error(errors.INVALID_REQUEST,
                     f"Node id must be an integer, but it is: {name}") from None
    if wanted != broker_id:
        raise _error(errors.INVALID_REQUEST,
                     f"Unexpected broker id, expected {broker_id}, but received {name}")
    return wanted


def describe_broker(cluster: "Cluster", name: str, broker_id: int, include_synonyms: bool = False,
                    include_documentation: bool = False) -> list[ConfigEntry]:
    """A broker's configs (``name`` is this broker's id) or the cluster-wide dynamic defaults
    (``name`` is empty), as DescribeConfigs reports them."""
    if name != "":
        try:
            wanted = int(name)
        except ValueError:
            raise _error(errors.INVALID_REQUEST,
                         f"Broker id must be an integer, but it is: {name}") from None
        if wanted != broker_id:
            raise _error(errors.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id} "
                         f"or empty string, but received {name}")
    state = cluster.broker_config_state()
    if name == "":
        values = dict(state.dynamic_default)
    else:
        effective = state.effective(broker_id)
        values = {n: effective.get(n) for n in BROKER_CONFIGS}
        for layer, _ in state.layers(broker_id)[:2]:
            values.update({n: v for n, v in layer.items() if n not in BROKER_CONFIGS})
    out = []
    for config in sorted(values):
        key = BROKER_CONFIGS.get(config)
        # Kafka hides the value of a config it cannot type, in case it is a password
        sensitive = key is None
        synonyms = state.synonyms(config, broker_synonyms(config), broker_id)
        if name == "":
            synonyms = [s for s in synonyms if s[2] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        if sensitive:
            synonyms = [(n, None, s) for n, _, s in synonyms]
        out.append(ConfigEntry(
            config, None if sensitive else values[config],
            synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG,
            key.type if key else ConfigType.UNKNOWN,
            read_only=key is None or not key.dynamic, sensitive=sensitive,
            synonyms=synonyms if include_synonyms else [],
            documentation=(key.doc if key else "") if include_documentation else None))
    return out


def _check_broker_props(props: dict[str, str], per_broker: bool) -> dict[str, str]:
    """DynamicBrokerConfig's checks, with the INVALID_REQUEST Kafka answers them with."""
    static = [n for n in props if n in BROKER_CONFIGS and not BROKER_CONFIGS[n].dynamic]
    if static:
        raise _error(errors.INVALID_REQUEST,
                     f"Cannot update these configs dynamically: Set({', '.join(static)})")
    if not per_broker:
        only = [n for n in props if n in BROKER_CONFIGS and BROKER_CONFIGS[n].per_broker]
        if only:
            raise _error(errors.INVALID_REQUEST, "Cannot update these configs at default "
                         f"cluster level, broker id must be specified: Set({', '.join(only)})")
    out = {}
    for name, value in props.items():
        key = BROKER_CONFIGS.get(name)
        try:
            out[name] = key.normalise(value) if key else value
        except InvalidValue as exc:
            raise _error(errors.INVALID_REQUEST, str(exc)) from None
    return out


def alter_broker(cluster: "Cluster", name: str, broker_id: int, new: dict[str, str], *,
                 validate_only: bool) -> None:
    """Replace a broker's (or the cluster-wide) dynamic configs (the legacy AlterConfigs)."""
    target = _broker_resource(name, broker_id)
    _store_broker_configs(cluster, target, _check_broker_props(new, target is not None),
                          validate_only)


def incremental_alter_broker(cluster: "Cluster", name: str, broker_id: int,
                             ops: Iterable[tuple[str, int, str | None]], *,
                             validate_only: bool) -> None:
    target = _broker_resource(name, broker_id)
    state = cluster.broker_config_state()
    props = dict(state.dynamic_default if target is None else state.per_broker(target))
    for config, op, value in ops:
        if op == OpType.SET:
            props[config] = value
        elif op == OpType.DELETE:
            props.pop(config, None)
        elif op in (OpType.APPEND, OpType.SUBTRACT):
            key = BROKER_CONFIGS.get(config)
            if key is None:
                raise _error(errors.INVALID_CONFIG, f"Unknown config name: {config}")
            verb = "append" if op == OpType.APPEND else "subtract"
            if key.type is not ConfigType.LIST:
                raise _error(errors.INVALID_CONFIG, f"Config value {verb} is not allowed for "
                             f"config key: {config}")
            base = props.get(config, key.default_string) or ""
            if op == OpType.APPEND:
                parts = [p for p in base.split(",") if p]
                parts += [v for v in value.split(",") if v not in parts]
            else:
                removed = value.split(",")
                parts = [p for p in base.split(",") if p not in removed]
            props[config] = ",".join(parts)
        else:
            raise _error(errors.INVALID_REQUEST, f"Unknown operations type {op}")
    _store_broker_configs(cluster, target, _check_broker_props(props, target is not None),
                          validate_only)


def _store_broker_configs(cluster: "Cluster", target: int | None, props: dict[str, str],
                          validate_only: bool) -> None:
    if validate_only:
        return
    state = cluster.broker_config_state()
    if target is None:
        state.dynamic_default = props
    elif props:
        state.dynamic_per_broker[target] = props
    else:
        state.dynamic_per_broker.pop(target, None)
    state.sync_settings()


# -- the APIs' resource loops -----------------------------------------------------------------

def describe(cluster: "Cluster", resource_type: int, resource_name: str, broker_id: int,
             keys: list[str] | None, include_synonyms: bool, include_documentation: bool
             ) -> list[ConfigEntry]:
    """One resource of a DescribeConfigs request; raises :class:`ApiException`."""
    if resource_type == ResourceType.TOPIC:
        entries = describe_topic(cluster, resource_name, broker_id, include_synonyms,
                                 include_documentation)
    elif resource_type == ResourceType.BROKER:
        entries = describe_broker(cluster, resource_name, broker_id, include_synonyms,
                                  include_documentation)
    elif resource_type == ResourceType.BROKER_LOGGER:
        if not resource_name:
            raise _error(errors.INVALID_REQUEST, "Broker id must not be empty")
        _broker_resource(resource_name, broker_id)
        entries = [ConfigEntry("root", "INFO", ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
                               ConfigType.UNKNOWN)]
    else:
        raise _error(errors.INVALID_REQUEST,
                     f"Unsupported resource type: {_type_name(resource_type)}")
    if keys:
        wanted = set(keys)
        entries = [e for e in entries if e.name in wanted]
    return entries


def _type_name(resource_type: int) -> str:
    try:
        return ResourceType(resource_type).name
    except ValueError:
        return str(resource_type)


@dataclass(slots=True)
class AlterResource:
    """One resource of an AlterConfigs or IncrementalAlterConfigs request.  ``configs`` holds
    (name, value) for the legacy API and (name, operation, value) for the incremental one."""

    resource_type: int
    resource_name: str
    configs: list[tuple]


def alter(cluster: "Cluster", resources: list[AlterResource], broker_id: int, *,
          incremental: bool, validate_only: bool) -> list[tuple[int, str | None]]:
    """Every resource of an (Incremental)AlterConfigs request, in request order:
    (error code, error message) each.  A failing resource changes nothing."""
    seen: dict[tuple[int, str], int] = {}
    for resource in resources:
        ident = (resource.resource_type, resource.resource_name)
        seen[ident] = seen.get(ident, 0) + 1
    results = []
    for resource in resources:
        if seen[(resource.resource_type, resource.resource_name)] > 1:
            results.append((errors.INVALID_REQUEST, "Each resource must appear at most once."))
            continue
        try:
            _alter_one(cluster, resource, broker_id, incremental, validate_only)
        except ApiException as exc:
            results.append((exc.error_code, exc.message or None))
        else:
            results.append((errors.NONE, None))
    return results


def _alter_one(cluster: "Cluster", resource: AlterResource, broker_id: int, incremental: bool,
               validate_only: bool) -> None:
    names = [c[0] for c in resource.configs]
    if len(set(names)) != len(names):
        raise _error(errors.INVALID_REQUEST, "Error due to duplicate config keys")
    if incremental:
        nulls = [c[0] for c in resource.configs if c[1] != OpType.DELETE and c[2] is None]
    else:
        nulls = [c[0] for c in resource.configs if c[1] is None]
    if nulls:
        raise _error(errors.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    kind, name = resource.resource_type, resource.resource_name
    if kind == ResourceType.TOPIC:
        if incremental:
            incremental_alter_topic(cluster, name, resource.configs, validate_only=validate_only)
        else:
            alter_topic(cluster, name, dict(resource.configs), validate_only=validate_only)
    elif kind == ResourceType.BROKER:
        if incremental:
            incremental_alter_broker(cluster, name, broker_id, resource.configs,
                                     validate_only=validate_only)
        else:
            alter_broker(cluster, name, broker_id, dict(resource.configs),
                         validate_only=validate_only)
    elif kind in (ResourceType.CLIENT_METRICS, ResourceType.GROUP) or \
            (kind == ResourceType.BROKER_LOGGER and incremental):
        raise _error(errors.INVALID_REQUEST,
                     f"Unsupported resource type: {_type_name(kind)}")
    else:
        raise _error(errors.INVALID_REQUEST, f"Unknown resource type {kind}")
