"""Where a coordinator's keys live: a group (``__consumer_offsets``) or a transactional id
(``__transaction_state``), each on a partition of its coordinator's internal topic.

The coordinator of a key is the leader of partition ``abs(java_string_hashcode(key)) % n`` of
the coordinator's internal topic, created on first use as Kafka creates it.  Each coordinator
holds a :class:`TopicPlacement` of its own topic (:mod:`.sharded`).

``n`` is the configured partition count (``offsets.topic.num.partitions``,
``transaction.state.log.num.partitions``), whatever the topic holds now: Kafka fixes it when
the broker starts, before any client could have created the topic.  So a topic created by hand
with fewer partitions leaves some keys on a partition that does not exist: they have no
coordinator, as in Kafka (FindCoordinator says COORDINATOR_NOT_AVAILABLE, the coordinators'
own APIs NOT_COORDINATOR).
"""

from __future__ import annotations

from mockbroker.core.javaorder import java_string_hashcode
from mockbroker.core.cluster import Cluster, Partition, Topic
from mockbroker.core.errors import ApiException
from wire import errors

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
SHARE_STATE_TOPIC = "__share_group_state"


def partition_for(key: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(key.hashCode()) % partitions`` (abs of MIN_VALUE is 0)."""
    h = java_string_hashcode(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class TopicPlacement:
    """Where the keys of one internal topic live.

    The topic's partition count and replication factor are broker settings, named here by
    Kafka's config names (``offsets.topic.num.partitions``) and read when needed.  The
    coordinators learn of the topic's partitions from the cluster
    (``partitions_added_listeners``), however the topic was created."""

    def __init__(self, cluster: Cluster, settings: dict, name: str, partitions_config: str,
                 replication_config: str):
        self.cluster = cluster
        self.settings = settings
        self.name = name
        #: Kafka's name of the setting of the partition count (a warning names it)
        self.partitions_config = partitions_config
        self._partitions_setting = partitions_config.replace(".", "_")
        self._replication_setting = replication_config.replace(".", "_")

    @property
    def partition_count(self) -> int:
        """The configured partition count, the one keys are placed by."""
        return self.settings[self._partitions_setting]

    def topic(self) -> Topic:
        """The topic, created now if it does not exist (compacted, with as many replicas as
        configured and brokers are alive)."""
        topic = self.cluster.topics.get(self.name)
        if topic is not None:
            return topic
        rf = min(self.settings[self._replication_setting],
                 len(self.cluster.live_brokers()) or 1)
        return self.cluster.create_topic(self.name, self.partition_count, rf,
                                         {"cleanup.policy": "compact"})

    def index(self, key: str) -> int:
        """The index of the key's partition (and of its shard)."""
        return partition_for(key, self.partition_count)

    def find_partition(self, key: str) -> Partition | None:
        """The key's partition, None if the topic has no partition of that index."""
        topic, index = self.topic(), self.index(key)
        return topic.partitions[index] if index < len(topic.partitions) else None

    def partition(self, key: str) -> Partition:
        """The key's partition; COORDINATOR_NOT_AVAILABLE if the topic has no partition of
        that index."""
        partition = self.find_partition(key)
        if partition is None:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)  # and no message, as Kafka
        return partition

    def coordinator_for(self, key: str) -> int:
        """The node id that coordinates ``key`` (FindCoordinator); raises
        COORDINATOR_NOT_AVAILABLE when its partition has no leader."""
        partition = self.partition(key)
        if partition.leader == -1:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        return partition.leader
