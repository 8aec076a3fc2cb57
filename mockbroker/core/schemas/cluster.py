"""The registry's place in the cluster: its records in the ``_schemas`` topic (one partition,
compacted, created as the registry starts, as Confluent's registry creates it with up to three
replicas), written as its leader appends them and read back up to the log's end.

:func:`registry_of` gives the cluster's registry, built on first use.
"""

from __future__ import annotations

from typing import Iterable

from mockbroker.core.schemas.registry import RegistryError, SchemaRegistry
from mockbroker.core.schemas.store import TOPIC
from wire import records

#: Confluent's ``kafkastore.topic.replication.factor``
REPLICATION_FACTOR = 3


class TopicSource:
    """The ``_schemas`` topic of a cluster, as the registry's record source."""

    def __init__(self, cluster):
        self.cluster = cluster

    def topic(self):
        """The topic, created now if it is missing."""
        cluster = self.cluster
        topic = cluster.topics.get(TOPIC)
        if topic is None:
            live = len(cluster.live_brokers()) or 1
            topic = cluster.create_topic(TOPIC, 1, min(REPLICATION_FACTOR, live),
                                         {"cleanup.policy": "compact"})
        return topic

    def identity(self) -> object:
        topic = self.cluster.topics.get(TOPIC)
        return None if topic is None else topic.topic_id

    def append(self, entries: list[tuple[bytes, bytes | None]]) -> None:
        partition = self.topic().partitions[0]
        if partition.leader < 0:
            raise RegistryError(500, 50001, f"Error while writing to the Kafka store: "
                                            f"{TOPIC}-0 has no leader")
        now = self.cluster.clock.now_ms()
        batch = records.encode_batch([(key, value, [], now) for key, value in entries])
        partition.log.append(batch, records.read_batch_header(batch), partition.leader_epoch,
                             now)
        self.cluster.notify_append(partition)

    def read_from(self, offset: int) -> Iterable[tuple[int, bytes | None, bytes | None]]:
        topic = self.cluster.topics.get(TOPIC)
        if topic is None:
            return
        log = topic.partitions[0].log
        for stored in log.stored_from(offset, log.log_end_offset):
            if records.read_batch_header(stored.data).is_control:
                continue
            for record in records.decode_records(stored.data, verify_crc=False):
                if record.offset >= offset:
                    yield record.offset, record.key, record.value


def registry_of(cluster) -> SchemaRegistry:
    """The cluster's registry (built, with its topic, on first use)."""
    found = cluster.__dict__.get("schema_registry")
    if found is None:
        source = TopicSource(cluster)
        source.topic()
        found = SchemaRegistry(source, emit=cluster.events.emit)
        cluster.__dict__["schema_registry"] = found
    return found
