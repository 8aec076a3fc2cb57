"""The base of the coordinators over an internal topic, on a coordinator of its own.

The toy coordinator here keeps counters in ``__toy_state`` (4 partitions, 3 replicas on a
cluster of 3): a record is a key and its count, and a shard replays the last count of each
key.  It is a subclass and a replay function, as any coordinator built on the base is; the
hooks record when they run.  Everything else (the topic made on first use, where a key lives,
loading and unloading as leadership moves, the load delay, the errors of the wrong broker) is
the base's, and each test checks one of those on it.
"""

from __future__ import annotations

import pytest
from msgspec import field

from mockbroker.core.cluster import Partition
from mockbroker.core.coordinators.placement import partition_for
from mockbroker.core.coordinators.sharded import CoordinatorShard, ShardedCoordinator
from mockbroker.core.errors import ApiException
from tests.core.harness import make_core
from wire import errors, records

TOPIC = "__toy_state"
PARTITIONS = 4
SETTINGS = {"toy_state_num_partitions": PARTITIONS, "toy_state_replication_factor": 3}


class ToyShard(CoordinatorShard):
    counts: dict[str, int] = field(default_factory=dict)


class Toy(ShardedCoordinator[ToyShard]):
    topic_name = TOPIC
    partitions_config = "toy.state.num.partitions"
    replication_config = "toy.state.replication.factor"
    shard_type = ToyShard

    def __init__(self, cluster, *, load_delay_ms: int = 0):
        #: (hook, partition index, leader) as the hooks ran
        self.calls: list[tuple[str, int, int]] = []
        super().__init__(cluster, dict(SETTINGS), load_delay_ms=load_delay_ms)

    def replay(self, shard: ToyShard, partition: Partition) -> None:
        for stored in partition.log.batches:
            for record in records.decode_records(stored.data, verify_crc=False):
                shard.counts[bytes(record.key).decode()] = int(bytes(record.value))

    def on_loaded(self, shard: ToyShard) -> None:
        self.calls.append(("loaded", shard.index, shard.leader))

    def on_unloaded(self, shard: ToyShard) -> None:
        self.calls.append(("unloaded", shard.index, shard.leader))

    def count(self, key: str, value: int) -> None:
        """A record of ``key``'s count on its partition, as a coordinator writes its state."""
        partition = self.placement.partition(key)
        batch = records.encode_batch([(key.encode(), str(value).encode(), [], self.now)])
        partition.log.append(batch, records.read_batch_header(batch), partition.leader_epoch,
                             self.now)


class StrictToy(Toy):
    strict_partition_count = True


def key_on(index: int, partitions: int = PARTITIONS) -> str:
    """A key that lives on partition ``index``."""
    return next(key for key in (f"k{i}" for i in range(1000))
                if partition_for(key, partitions) == index)


KEY = key_on(1)


def error_of(call) -> int:
    with pytest.raises(ApiException) as caught:
        call()
    return caught.value.error_code


def another_replica(partition: Partition) -> int:
    return next(r for r in partition.replicas if r != partition.leader)


def test_the_topic_is_made_on_first_use_and_every_partition_loads():
    core = make_core(3)
    toy = Toy(core.cluster)
    assert TOPIC not in core.cluster.topics and toy.shards == {}
    leader = toy.placement.coordinator_for(KEY)
    topic = core.cluster.topics[TOPIC]
    assert len(topic.partitions) == PARTITIONS
    assert {len(p.replicas) for p in topic.partitions} == {3}
    assert topic.configs == {"cleanup.policy": "compact"}
    assert sorted(toy.shards) == list(range(PARTITIONS))
    assert [s.loading for s in toy.shards.values()] == [False] * PARTITIONS
    assert sorted(toy.calls) == sorted(("loaded", p.index, p.leader) for p in topic.partitions)
    shard = toy.shard_for(KEY, leader)
    assert (shard.index, shard.leader) == (toy.placement.index(KEY), leader) == (1, leader)
    assert toy.shard_of(KEY) is shard


def test_a_shard_is_rebuilt_from_its_records_where_leadership_moves():
    core = make_core(3)
    toy = Toy(core.cluster)
    toy.count(KEY, 1)
    toy.count(KEY, 2)
    toy.count(key_on(2), 7)
    partition = toy.placement.partition(KEY)
    old, new = partition.leader, another_replica(partition)
    toy.calls.clear()
    core.cluster.move_leader(partition, new)
    assert toy.calls == [("unloaded", 1, old), ("loaded", 1, new)]
    assert error_of(lambda: toy.shard_for(KEY, old)) == errors.NOT_COORDINATOR
    shard = toy.shard_for(KEY, new)
    assert shard.counts == {KEY: 2}  # its own partition's records, the last count of each
    assert shard.leader_epoch == partition.leader_epoch == 1
    # a move of another topic's partition is none of its business
    core.cluster.create_topic("other", 1, 3)
    other = core.cluster.topics["other"].partitions[0]
    core.cluster.move_leader(other, another_replica(other))
    assert toy.calls == [("unloaded", 1, old), ("loaded", 1, new)]


def test_a_load_delay_keeps_the_shard_loading_until_the_clock_passes_it():
    core = make_core(3)
    toy = Toy(core.cluster, load_delay_ms=500)
    leader = toy.placement.coordinator_for(KEY)  # made now: every partition starts loading
    assert error_of(lambda: toy.shard_for(KEY, leader)) == errors.COORDINATOR_LOAD_IN_PROGRESS
    assert toy.loaded_shards() == [] and toy.calls == []
    core.clock.advance(499)
    assert error_of(lambda: toy.shard_for(KEY, leader)) == errors.COORDINATOR_LOAD_IN_PROGRESS
    core.clock.advance(1)
    assert not toy.shard_for(KEY, leader).loading
    assert len(toy.loaded_shards()) == PARTITIONS

    toy.count(KEY, 3)
    partition = toy.placement.partition(KEY)
    new = another_replica(partition)
    core.cluster.move_leader(partition, new)
    assert error_of(lambda: toy.shard_for(KEY, new)) == errors.COORDINATOR_LOAD_IN_PROGRESS
    with pytest.raises(ApiException) as caught:
        toy.led_shards(new)  # an answer over all its shards waits for this one too
    assert caught.value.error_code == errors.COORDINATOR_LOAD_IN_PROGRESS
    core.clock.advance(500)
    assert toy.shard_for(KEY, new).counts == {KEY: 3}
    assert 1 in [shard.index for shard in toy.led_shards(new)]


def test_a_load_overtaken_by_another_move_is_dropped():
    core = make_core(3)
    toy = Toy(core.cluster)
    partition = toy.placement.partition(KEY)
    first = partition.leader
    second, third = [r for r in partition.replicas if r != first]
    toy.count(KEY, 5)
    toy.load_delay_ms = 500
    toy.calls.clear()
    core.cluster.move_leader(partition, second)
    core.clock.advance(200)
    core.cluster.move_leader(partition, third)
    core.clock.advance(300)  # the load under the second leader would finish now
    assert toy.calls == [("unloaded", 1, first), ("unloaded", 1, second)]
    assert toy.shards[1].leader == third and toy.shards[1].loading
    core.clock.advance(200)
    assert toy.calls[-1] == ("loaded", 1, third)
    assert toy.shard_for(KEY, third).counts == {KEY: 5}


def test_deleting_the_topic_lets_every_shard_go_until_it_is_made_again():
    core = make_core(3)
    toy = Toy(core.cluster)
    toy.count(KEY, 1)
    toy.calls.clear()
    core.cluster.delete_topic(TOPIC)
    assert toy.shards == {}
    assert sorted(call[:2] for call in toy.calls) == [("unloaded", i) for i in range(PARTITIONS)]
    assert toy.shard_of(KEY) is None
    leader = toy.placement.coordinator_for(KEY)  # made again, empty
    assert toy.shard_for(KEY, leader).counts == {}


def test_the_wrong_broker_is_told_why():
    core = make_core(3)
    toy = Toy(core.cluster)
    partition = toy.placement.partition(KEY)
    leader = partition.leader
    assert error_of(lambda: toy.shard_for(KEY, another_replica(partition))) == \
        errors.NOT_COORDINATOR
    core.cluster.set_leader(partition, -1)
    assert toy.shard_of(KEY) is None
    assert error_of(lambda: toy.shard_for(KEY, leader)) == errors.COORDINATOR_NOT_AVAILABLE
    assert error_of(lambda: toy.placement.coordinator_for(KEY)) == \
        errors.COORDINATOR_NOT_AVAILABLE
    toy.load_delay_ms = 100
    core.cluster.set_leader(partition, leader)
    assert error_of(lambda: toy.shard_for(KEY, leader)) == errors.COORDINATOR_LOAD_IN_PROGRESS


def test_a_key_beyond_a_hand_made_topic_has_no_coordinator():
    core = make_core(3)
    core.cluster.create_topic(TOPIC, 2, 3)  # fewer partitions than configured
    toy = Toy(core.cluster)
    toy.partitions_added(core.cluster.topics[TOPIC], core.cluster.topics[TOPIC].partitions)
    near, far = key_on(1), key_on(3)
    assert toy.shard_for(near, toy.placement.coordinator_for(near)).index == 1
    assert error_of(lambda: toy.placement.coordinator_for(far)) == \
        errors.COORDINATOR_NOT_AVAILABLE
    assert all(error_of(lambda b=broker: toy.shard_for(far, b)) == errors.NOT_COORDINATOR
               for broker in range(3))
    assert len(core.cluster.topics[TOPIC].partitions) == 2  # nothing made it again


def test_a_strict_coordinator_never_loads_a_topic_of_another_size():
    core = make_core(3)
    core.cluster.create_topic(TOPIC, 2, 3)
    toy = StrictToy(core.cluster)
    toy.partitions_added(core.cluster.topics[TOPIC], core.cluster.topics[TOPIC].partitions)
    leader = toy.placement.coordinator_for(KEY)
    assert error_of(lambda: toy.shard_for(KEY, leader)) == errors.COORDINATOR_LOAD_IN_PROGRESS
    core.clock.advance(60_000)
    assert toy.calls == [] and toy.loaded_shards() == []
    core.cluster.delete_topic(TOPIC)
    leader = toy.placement.coordinator_for(KEY)  # made again with the configured count
    assert not toy.shard_for(KEY, leader).loading
