"""Topic configs: Kafka's definitions, the broker configs they fall back to, and the checks a
topic's set of overrides must pass (CreateTopics, and AlterConfigs through
:mod:`~mockbroker.core.config.alter`).

A topic's overrides live in ``Topic.configs``, as strings under Kafka's names, normalised the
way Kafka prints them (the data path reads ``max.message.bytes`` and ``message.timestamp.type``
from there).  A topic config without an override takes its value from its broker synonym
(``retention.ms`` from ``log.retention.ms``, ``log.retention.minutes`` or
``log.retention.hours``), converted to the topic config's unit.

The tables follow Apache Kafka 4.1's LogConfig and ServerTopicConfigSynonyms; the checks and
their error codes the controller's ConfigurationControlManager; the CreateTopics result's
sources KafkaConfigSchema.

:class:`ConfigCluster` is what every config operation needs of the cluster, which they take
as an argument: this package never imports the cluster module (the cluster imports it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol

from msgspec import Struct

from mockbroker.core.config.values import (
    B, D, I, L, LONG_MAX, LS, MAX_VALUE_LENGTH, S, ConfigEntry, ConfigKey, ConfigSource,
    GzipLevel, InvalidValue, OneOf, Range, ThrottledReplicas, java_trim,
)
from mockbroker.core.errors import ApiException
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.config.broker import BrokerConfigs


class ConfigCluster(Protocol):
    """What the config operations need of a cluster (``mockbroker.core.cluster.Cluster``)."""

    #: topic name -> topic; a topic's overrides are its ``configs`` dict
    topics: Mapping[str, Any]
    #: node id -> broker (``host``, ``port``, ``rack``)
    brokers: Mapping[int, Any]
    broker_configs: "BrokerConfigs"

    @property
    def controller_id(self) -> int: ...

    @property
    def elr_enabled(self) -> bool:
        """Whether eligible leader replicas (KIP-966) are on."""

    def min_isr_changed(self, topic: str | None) -> None:
        """``min.insync.replicas`` was written for ``topic`` (None: cluster-wide)."""


_key = ConfigKey
_WEEK_MS = 7 * 24 * 3600 * 1000
_COMPRESSION_TYPES = OneOf(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"))
_TIMESTAMP_TYPES = OneOf(("CreateTime", "LogAppendTime"))
_CLEANUP_POLICIES = OneOf(("compact", "delete"))

#: Topic configs, in the order Kafka's LogConfig defines them (the order it validates in): 4.1's,
#: and 4.4's dead-letter queue switch.
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
    _key("errors.deadletterqueue.group.enable", B, False, None,
         "Whether share groups may use this topic as their dead-letter queue."),
)}


class Synonym(Struct, frozen=True):
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


# -- values without an override ------------------------------------------------------------------

def topic_value_from_broker(name: str, broker: dict[str, str]) -> str | None:
    """A topic config's value when it has no override: its first broker synonym that is set,
    converted to the topic config's unit."""
    key = TOPIC_CONFIGS[name]
    for synonym in TOPIC_SYNONYMS.get(name, ()):
        raw = broker.get(synonym.name)
        if raw is not None:
            value = key.parse(raw) if synonym.factor == 1 else int(java_trim(raw)) * synonym.factor
            if name == "retention.ms" and value < 0:
                value = -1
            return key.to_string(value)
    return key.default_string


def _controller(cluster: ConfigCluster) -> int:
    controller = cluster.controller_id
    return controller if controller >= 0 else min(cluster.brokers)


# -- CreateTopics ------------------------------------------------------------------------------

def validate_topic_overrides(cluster: ConfigCluster, overrides: dict[str, str]
                             ) -> dict[str, str]:
    """A topic's complete set of overrides, checked as the controller checks it; returns them
    normalised.  Raises :class:`ApiException` with INVALID_CONFIG."""
    for name, value in overrides.items():
        if value is None:
            raise ApiException(errors.INVALID_CONFIG,
                               "Null value not supported for topic configs: " + name)
        if len(value) > MAX_VALUE_LENGTH:
            raise ApiException(errors.INVALID_CONFIG, "The configuration value cannot be added "
                               f"because it exceeds the maximum value size of {MAX_VALUE_LENGTH} "
                               "bytes.")
    for name in overrides:
        if name not in TOPIC_CONFIGS:
            raise ApiException(errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
    parsed: dict[str, Any] = {}
    for key in TOPIC_CONFIGS.values():
        if key.name in overrides:
            try:
                parsed[key.name] = key.parse(overrides[key.name])
            except InvalidValue as exc:
                raise ApiException(errors.INVALID_CONFIG, str(exc)) from None
    broker = cluster.broker_configs.effective(_controller(cluster))

    def effective(name: str) -> Any:
        if name in parsed:
            return parsed[name]
        return TOPIC_CONFIGS[name].parse(topic_value_from_broker(name, broker))

    low, high = effective("min.compaction.lag.ms"), effective("max.compaction.lag.ms")
    if low > high:
        raise ApiException(errors.INVALID_CONFIG, "conflict topic config setting "
                           f"min.compaction.lag.ms ({low}) > max.compaction.lag.ms ({high})")
    if effective("remote.storage.enable"):
        raise ApiException(errors.INVALID_CONFIG, "Tiered Storage functionality is disabled "
                           "in the broker. Topic cannot be configured with remote log storage.")
    return {name: TOPIC_CONFIGS[name].to_string(value) for name, value in parsed.items()}


def new_topic_configs(cluster: ConfigCluster, configs: Iterable[tuple[str, str | None]]
                      ) -> dict[str, str]:
    """The configs of a CreateTopics entry, checked; null values are refused by name."""
    configs = list(configs)
    nulls = [name for name, value in configs if value is None]
    if nulls:
        raise ApiException(errors.INVALID_CONFIG,
                           "Null value not supported for topic configs: " + ",".join(nulls))
    return validate_topic_overrides(cluster, dict(configs))


def created_topic_configs(cluster: ConfigCluster, overrides: dict[str, str]
                          ) -> list[ConfigEntry]:
    """Every config of a topic just created, as the controller reports them (sorted by name):
    the override, else the first synonym in the highest layer, else Kafka's default."""
    state = cluster.broker_configs
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
                    value = raw if hit.factor == 1 else str(int(java_trim(raw)) * hit.factor)
                    source = layer_source
                    break
        out.append(ConfigEntry(name, value, source, key.type))
    return out
