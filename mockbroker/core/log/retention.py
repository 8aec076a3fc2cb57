"""Log retention: the log cleaner's delete policy, on the core's clock.

Every ``log.retention.check.interval.ms`` each partition log deletes its old segments as
Kafka's ``LogManager.cleanupLogs`` has it do (:meth:`PartitionLog.delete_old_segments`): by
``retention.bytes`` and ``retention.ms`` when the topic's ``cleanup.policy`` includes
``delete``; a compacted-only topic (``__consumer_offsets``) only drops segments wholly below
its log start offset.  Kafka's first check waits an internal delay (30 s); here the first
comes one interval after the cluster starts, like the others.  The same check forgets the
state of producers idle for ``producer.id.expiration.ms``.

A topic config is read as the broker reads it: the topic's override, else the first of its
broker synonyms set in the leader's config layers, else Kafka's default.  This is done on every
append (``segment.bytes``, ``segment.ms``) without building the merged broker config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockbroker.core.clock import Timer
from mockbroker.core.config.broker import BROKER_DEFAULTS, SETTING_CONFIGS
from mockbroker.core.config.topic import TOPIC_CONFIGS, topic_value_from_broker

if TYPE_CHECKING:
    from mockbroker.core.cluster import Cluster, Partition, Topic


class _BrokerLayers:
    """The merged broker config of one broker, looked up lazily: per-broker dynamic values,
    cluster-wide dynamic values, the static settings, Kafka's defaults."""

    __slots__ = ("_cluster", "_broker_id")

    def __init__(self, cluster: "Cluster", broker_id: int):
        self._cluster = cluster
        self._broker_id = broker_id

    def get(self, name: str) -> str | None:
        configs = self._cluster.broker_configs
        for layer in (configs.per_broker(self._broker_id), configs.dynamic_default):
            if name in layer:
                return layer[name]
        key = SETTING_CONFIGS.get(name)
        if key is not None:
            text = key.to_string(self._cluster.settings[key.python_name])
            if text is not None:
                return text
        return BROKER_DEFAULTS.get(name)


def topic_config(cluster: "Cluster", topic: "Topic", name: str, broker_id: int) -> Any:
    """The value of topic config ``name`` on ``broker_id``, parsed."""
    raw = topic.configs.get(name)
    if raw is None:
        raw = topic_value_from_broker(name, _BrokerLayers(cluster, broker_id))  # type: ignore
    return TOPIC_CONFIGS[name].parse(raw)


def _broker_of(cluster: "Cluster", partition: "Partition") -> int:
    return partition.leader if partition.leader >= 0 else max(cluster.controller_id, 0)


class LogRetention:
    """Schedules the retention check on the cluster's timers and runs it."""

    def __init__(self, cluster: "Cluster"):
        self.cluster = cluster
        self._timer: Timer | None = None
        #: segments deleted since the cluster started
        self.deleted_segments = 0
        self._schedule()

    def segment_config(self, partition: "Partition") -> tuple[int, int]:
        """``segment.bytes`` and ``segment.ms`` of ``partition``'s topic now (asked on every
        append: kept until a config changes)."""
        cluster = self.cluster
        broker = _broker_of(cluster, partition)
        topic = partition.topic
        return cluster.broker_configs.kept(("segment", topic.topic_id, broker), lambda: (
            topic_config(cluster, topic, "segment.bytes", broker),
            topic_config(cluster, topic, "segment.ms", broker)))

    def deadline(self) -> int | None:
        """When the next check is due."""
        return self._timer.deadline_ms if self._timer is not None else None

    def _schedule(self) -> None:
        interval = self.cluster.settings["log_retention_check_interval_ms"]
        self._timer = self.cluster.timers.call_later(interval, self._check)

    def _check(self) -> None:
        self._schedule()
        self.run()

    def run(self) -> int:
        """One check over every partition; returns how many segments were deleted.  Producers
        idle for ``producer.id.expiration.ms`` are forgotten too (Kafka runs that on a timer of
        its own)."""
        cluster = self.cluster
        now = cluster.clock.now_ms()
        deleted = 0
        producer_expiry = cluster.settings["producer_id_expiration_ms"]
        for partition in cluster.all_partitions():
            partition.log.producer_state.expire(now, producer_expiry)
            broker = _broker_of(cluster, partition)
            topic = partition.topic
            policy = topic_config(cluster, topic, "cleanup.policy", broker)
            delete = "delete" in [p.strip().lower() for p in policy]
            retention_ms = retention_bytes = -1
            if delete:
                retention_ms = topic_config(cluster, topic, "retention.ms", broker)
                retention_bytes = topic_config(cluster, topic, "retention.bytes", broker)
            start = partition.log.log_start_offset
            removed = partition.log.delete_old_segments(now, retention_ms, retention_bytes,
                                                        delete=delete)
            if removed:
                deleted += removed
                cluster.events.emit("segments_deleted", topic=topic.name,
                                    partition=partition.index, segments=removed,
                                    log_start_offset=partition.log.log_start_offset,
                                    previous_log_start_offset=start)
        self.deleted_segments += deleted
        return deleted
