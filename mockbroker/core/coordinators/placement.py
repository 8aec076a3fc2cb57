"""Which broker coordinates a key: a group (``__consumer_offsets``) or a transactional id
(``__transaction_state``).

The coordinator of a key is the leader of partition ``abs(java_string_hashcode(key)) % n`` of
the coordinator's internal topic, created on first use as Kafka creates it.  The group
coordinator and the transaction coordinator share this.

``n`` is the configured partition count (``offsets.topic.num.partitions``,
``transaction.state.log.num.partitions``), whatever the topic holds now: Kafka fixes it when
the broker starts, before any client could have created the topic.  So a topic created by hand
with fewer partitions leaves some keys on a partition that does not exist: they have no
coordinator, as in Kafka (FindCoordinator says COORDINATOR_NOT_AVAILABLE, the coordinators'
own APIs NOT_COORDINATOR).
"""

from __future__ import annotations

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.errors import ApiException
from wire import errors

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
#: FindCoordinator's key types
GROUP_KEY, TRANSACTION_KEY = 0, 1


def java_string_hashcode(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def _utf16_units(text: str):
    for ch in text:
        code = ord(ch)
        if code >= 0x10000:
            code -= 0x10000
            yield 0xD800 + (code >> 10)
            yield 0xDC00 + (code & 0x3FF)
        else:
            yield code


def partition_for(key: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(key.hashCode()) % partitions`` (abs of MIN_VALUE is 0)."""
    h = java_string_hashcode(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class Placement:
    """Where keys live.  The coordinators learn of their topics' partitions from the cluster
    (``partitions_added_listeners``), however the topic was created."""

    def __init__(self, cluster: Cluster, settings: dict):
        self.cluster = cluster
        self.settings = settings

    @property
    def offsets_partitions(self) -> int:
        return self.settings["offsets_topic_num_partitions"]

    def _internal_topic(self, name: str, partitions: int, replication: int):
        topic = self.cluster.topics.get(name)
        if topic is not None:
            return topic
        rf = min(replication, len(self.cluster.live_brokers()) or 1)
        return self.cluster.create_topic(name, partitions, rf, {"cleanup.policy": "compact"})

    def offsets_topic(self):
        return self._internal_topic(OFFSETS_TOPIC, self.offsets_partitions,
                                    self.settings["offsets_topic_replication_factor"])

    def offsets_index(self, group_id: str) -> int:
        """The index of the group's ``__consumer_offsets`` partition (and of its shard)."""
        return partition_for(group_id, self.offsets_partitions)

    def find_offsets_partition(self, group_id: str) -> Partition | None:
        """The group's ``__consumer_offsets`` partition, None if the topic has no partition of
        that index."""
        return _nth(self.offsets_topic(), self.offsets_index(group_id))

    def offsets_partition(self, group_id: str) -> Partition:
        """The group's ``__consumer_offsets`` partition; COORDINATOR_NOT_AVAILABLE if the topic
        has no partition of that index."""
        return _required(self.find_offsets_partition(group_id))

    def transactions_topic(self):
        return self._internal_topic(TRANSACTION_TOPIC,
                                    self.settings["transaction_state_log_num_partitions"],
                                    self.settings["transaction_state_log_replication_factor"])

    def transaction_index(self, transactional_id: str) -> int:
        """The index of the id's ``__transaction_state`` partition (and of its shard)."""
        return partition_for(transactional_id,
                             self.settings["transaction_state_log_num_partitions"])

    def find_transaction_partition(self, transactional_id: str) -> Partition | None:
        """The id's ``__transaction_state`` partition, None if the topic has no partition of
        that index."""
        return _nth(self.transactions_topic(), self.transaction_index(transactional_id))

    def transaction_partition(self, transactional_id: str) -> Partition:
        """The id's ``__transaction_state`` partition; COORDINATOR_NOT_AVAILABLE if the topic
        has no partition of that index."""
        return _required(self.find_transaction_partition(transactional_id))

    def coordinator_for(self, key: str, key_type: int = GROUP_KEY) -> int:
        """The node id that coordinates ``key`` (FindCoordinator); raises
        COORDINATOR_NOT_AVAILABLE when its partition has no leader."""
        partition = self.transaction_partition(key) if key_type == TRANSACTION_KEY \
            else self.offsets_partition(key)
        if partition.leader == -1:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        return partition.leader


def _nth(topic, index: int) -> Partition | None:
    return topic.partitions[index] if index < len(topic.partitions) else None


def _required(partition: Partition | None) -> Partition:
    if partition is None:
        raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)  # and no message, as Kafka
    return partition


def coordinating_shard(partition: Partition | None, shards: dict, broker_id: int):
    """The shard of ``partition`` (in ``shards``, by partition index) if ``broker_id`` leads it
    and has loaded it, else :class:`ApiException` with what a client gets from the wrong
    broker: COORDINATOR_NOT_AVAILABLE with no leader, NOT_COORDINATOR from another broker (or
    for a partition the topic does not have, which no broker coordinates),
    COORDINATOR_LOAD_IN_PROGRESS while the leader loads.  Both coordinators answer so."""
    if partition is None:
        raise ApiException(errors.NOT_COORDINATOR)
    if partition.leader == -1:
        raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
    if partition.leader != broker_id:
        raise ApiException(errors.NOT_COORDINATOR)
    shard = shards.get(partition.index)
    if shard is None or shard.leader != broker_id:
        raise ApiException(errors.NOT_COORDINATOR)
    if shard.loading:
        raise ApiException(errors.COORDINATOR_LOAD_IN_PROGRESS)
    return shard
