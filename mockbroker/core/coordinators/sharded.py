"""A coordinator over an internal topic, written once: its topic, its shards, and the loading
and unloading of each shard as the topic's leadership moves.

Kafka 4.x runs its group, share-group and transaction state this way (``CoordinatorRuntime``
with a ``CoordinatorShard`` per partition of the coordinator's topic): a key lives on one
partition of the topic (:mod:`.placement`), the partition's leader holds the keys of that
partition in a shard, and a broker that becomes leader rebuilds the shard by replaying the
partition's records.  :class:`ShardedCoordinator` owns all of that; a coordinator built on it
names its topic and its shard type and says how records become shard state (:meth:`replay`),
and what else happens once a shard is loaded (:meth:`on_loaded`) or let go
(:meth:`on_unloaded`).

A shard comes to be when its partition gets a leader (the topic is created or grown, or
leadership moves), and goes when leadership moves again or the topic is deleted.  Until its
load has finished (after ``load_delay_ms`` on the cluster's timers, when set) a shard is
loading, and its keys are answered COORDINATOR_LOAD_IN_PROGRESS; a load that leadership
overtook is dropped.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import ClassVar, Generic, TypeVar

from msgspec import Struct

from mockbroker.core.cluster import Cluster, Partition, Topic
from mockbroker.core.coordinators.placement import TopicPlacement
from mockbroker.core.errors import ApiException
from wire import errors

log = logging.getLogger(__name__)


class CoordinatorShard(Struct):
    """What a coordinator holds of one partition of its topic, as loaded by the partition's
    leader.  A coordinator's shard type adds the state its records rebuild."""

    index: int
    leader: int
    #: the partition's leader epoch when the shard was made (the transaction coordinator's
    #: epoch, which its markers carry)
    leader_epoch: int
    loading: bool = True


S = TypeVar("S", bound=CoordinatorShard)


class ShardedCoordinator(ABC, Generic[S]):
    """The shards of one internal topic on every broker: which one holds a key, and their
    loading and unloading as the cluster's leadership changes.

    A subclass sets the class attributes and :meth:`replay`.  Built, a coordinator follows its
    topic; one built after the topic was created or grown is handed what it missed
    (:meth:`partitions_added`) by whoever builds it."""

    #: the internal topic, and Kafka's names of the settings of its partition count and
    #: replication factor
    topic_name: ClassVar[str]
    partitions_config: ClassVar[str]
    replication_config: ClassVar[str]
    #: the shard type, made with (partition index, leader, leader epoch)
    shard_type: ClassVar[type[CoordinatorShard]]
    #: whether a partition loads only while the topic has the configured partition count, as
    #: Kafka's transaction coordinator checks (its group coordinator loads whatever the count)
    strict_partition_count: ClassVar[bool] = False

    def __init__(self, cluster: Cluster, settings: dict, *, load_delay_ms: int = 0):
        self.cluster = cluster
        self.settings = settings
        #: how long a shard stays loading once its partition has a new leader
        self.load_delay_ms = load_delay_ms
        self.placement = TopicPlacement(cluster, settings, self.topic_name,
                                        self.partitions_config, self.replication_config)
        #: partition index -> its shard, loaded or loading
        self.shards: dict[int, S] = {}
        cluster.leadership_listeners.append(self._on_leadership_change)
        cluster.partitions_added_listeners.append(self.partitions_added)
        cluster.topic_deleted_listeners.append(self._on_topic_deleted)

    @property
    def now(self) -> int:
        return self.cluster.clock.now_ms()

    # -- what a coordinator built on this supplies -----------------------------------------------

    @abstractmethod
    def replay(self, shard: S, partition: Partition) -> None:
        """Rebuild ``shard``'s state from ``partition``'s records."""

    def on_loaded(self, shard: S) -> None:
        """``shard`` has just been loaded: whatever its state needs done now."""

    def on_unloaded(self, shard: S) -> None:
        """``shard`` has just been let go (loaded or not): whoever waits on its state is
        told."""

    # -- where keys live -------------------------------------------------------------------------

    def shard_for(self, key: str, broker_id: int) -> S:
        """The shard of ``key`` if ``broker_id`` leads its partition and has loaded it, else
        :class:`ApiException` with what a client gets from the wrong broker:
        COORDINATOR_NOT_AVAILABLE with no leader, NOT_COORDINATOR from another broker (or for
        a partition the topic does not have, which no broker coordinates),
        COORDINATOR_LOAD_IN_PROGRESS while the leader loads."""
        partition = self.placement.find_partition(key)
        if partition is None:
            raise ApiException(errors.NOT_COORDINATOR)
        if partition.leader == -1:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if partition.leader != broker_id:
            raise ApiException(errors.NOT_COORDINATOR)
        shard = self.shards.get(partition.index)
        if shard is None or shard.leader != broker_id:
            raise ApiException(errors.NOT_COORDINATOR)
        if shard.loading:
            raise ApiException(errors.COORDINATOR_LOAD_IN_PROGRESS)
        return shard

    def shard_of(self, key: str) -> S | None:
        """The shard of ``key``'s partition wherever it is (loaded or loading), if any; it
        creates no topic (admin and inspection)."""
        return self.shards.get(self.placement.index(key))

    def loaded_shards(self, broker_id: int | None = None) -> list[S]:
        """The shards loaded (those ``broker_id`` leads, when given)."""
        return [shard for shard in list(self.shards.values()) if not shard.loading
                and (broker_id is None or shard.leader == broker_id)]

    def led_shards(self, broker_id: int) -> list[S]:
        """Every shard ``broker_id`` leads, by index, for an answer over all of them (listing);
        one still loading fails it with COORDINATOR_LOAD_IN_PROGRESS, as one failed shard read
        fails Kafka's combined answer."""
        shards = sorted((s for s in self.shards.values() if s.leader == broker_id),
                        key=lambda s: s.index)
        if any(shard.loading for shard in shards):
            raise ApiException(errors.COORDINATOR_LOAD_IN_PROGRESS)
        return shards

    # -- loading and unloading shards ------------------------------------------------------------

    def _on_leadership_change(self, partition: Partition) -> None:
        if partition.topic.name == self.topic_name:
            self.unload(partition.index)
            if partition.leader != -1:
                self.load(partition)

    def partitions_added(self, topic: Topic, partitions: list[Partition]) -> None:
        """The topic created (by the first request that needs it, or by hand) or grown: each
        new partition with a leader is loaded."""
        if topic.name == self.topic_name:
            for partition in partitions:
                if partition.leader != -1:
                    self.load(partition)

    def _on_topic_deleted(self, topic: Topic) -> None:
        """The topic deleted: as its partitions' leader resigns in Kafka, every shard goes."""
        if topic.name == self.topic_name:
            for partition in topic.partitions:
                self.unload(partition.index)

    def unload(self, index: int) -> None:
        """The old leader lets the shard of partition ``index`` go."""
        shard = self.shards.pop(index, None)
        if shard is not None:
            self.on_unloaded(shard)

    def load(self, partition: Partition) -> None:
        """Load a partition of the topic under its current leader: its shard is loading until
        its records are replayed, after the load delay."""
        shard = self.shard_type(partition.index, partition.leader, partition.leader_epoch)
        self.shards[partition.index] = shard

        def finish() -> None:
            if self.shards.get(partition.index) is not shard:
                return  # leadership moved again before the load finished
            if self.strict_partition_count and not self._count_as_configured(partition):
                return  # never loaded: its keys wait until the topic is deleted
            self.replay(shard, partition)
            shard.loading = False
            self.on_loaded(shard)

        if self.load_delay_ms > 0:
            self.cluster.timers.call_later(self.load_delay_ms, finish)
        else:
            finish()

    def _count_as_configured(self, partition: Partition) -> bool:
        """Whether the topic has the configured partition count (a topic created by hand may
        not), warning as Kafka does when it has not."""
        held, expected = len(partition.topic.partitions), self.placement.partition_count
        if held != expected:
            log.warning("%s-%d not loaded: the topic has %d partitions, the broker expects %d "
                        "(%s)", self.topic_name, partition.index, held, expected,
                        self.placement.partitions_config)
        return held == expected
