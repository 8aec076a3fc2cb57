"""The coordinators' own topics made, deleted and made again by clients, as Kafka 4.4 lets them.

``__consumer_offsets`` and ``__transaction_state`` are created by the first request that needs
them, but a client may create either by hand first (with any partition count) or delete it
(Kafka 4's controller allows both).  Each expectation here was seen on Apache Kafka 4.4 with the
same requests:

- A key maps to partition ``hash % n`` of the *configured* count (50 by default) whatever the
  topic holds, so with a hand-made topic of 3 partitions a group on partition 0-2 is served
  and every other group has none: FindCoordinator says COORDINATOR_NOT_AVAILABLE and the group
  APIs NOT_COORDINATOR.  (Of the names used here, "g9" hashes to partition 1 of 50, "g0" to 31.)
- The transaction coordinator refuses to load a ``__transaction_state`` whose partition count
  is not the configured one, so its ids stay COORDINATOR_LOAD_IN_PROGRESS.
- Deleting ``__consumer_offsets`` makes its coordinator resign: a JoinGroup waiting in a
  rebalance is answered NOT_COORDINATOR at once (and its group is gone).
"""

from __future__ import annotations

import uuid

import wire
from mockbroker.core.deferred import Deferred
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC, TRANSACTION_TOPIC
from tests.core.harness import make_core, received, send
from wire import errors

NEAR, FAR = "g9", "g0"  # on partitions 1 and 31 of 50
CREATE_TOPICS, DELETE_TOPICS, FIND_COORDINATOR, JOIN_GROUP, INIT_PRODUCER_ID = 19, 20, 10, 11, 22


def create(core, name: str, partitions: int) -> None:
    R = wire.request_class(CREATE_TOPICS)
    [result] = send(core, CREATE_TOPICS, 7, timeout_ms=5000, topics=[R.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1)]).topics
    assert result.error_code == errors.NONE, result


def delete(core, name: str) -> None:
    R = wire.request_class(DELETE_TOPICS)
    [result] = send(core, DELETE_TOPICS, 6, timeout_ms=5000, topics=[
        R.DeleteTopicState(name=name, topic_id=uuid.UUID(int=0))]).responses
    assert result.error_code == errors.NONE, result


def coordinators(core, key_type: int, *keys: str) -> dict[str, int]:
    """FindCoordinator v4: key -> its error code."""
    answer = send(core, FIND_COORDINATOR, 4, key_type=key_type, coordinator_keys=list(keys))
    return {c.key: c.error_code for c in answer.coordinators}


def join(core, group_id: str, member_id: str = "", *, connection_id: int = 1):
    R = wire.request_class(JOIN_GROUP)
    return send(core, JOIN_GROUP, 9, group_id=group_id, session_timeout_ms=30_000,
                rebalance_timeout_ms=60_000, member_id=member_id, protocol_type="consumer",
                protocols=[R.JoinGroupRequestProtocol(name="range", metadata=b"m")],
                connection_id=connection_id)


def joined(core, group_id: str, *, connection_id: int = 1):
    """A dynamic member's two joins (the first one is told its member id), and the timers due
    now run: the second's answer, or its Deferred if it still waits."""
    first = join(core, group_id, connection_id=connection_id)
    assert first.error_code == errors.MEMBER_ID_REQUIRED, first
    second = join(core, group_id, first.member_id, connection_id=connection_id)
    core.clock.advance(0)
    if isinstance(second, Deferred) and second.done:
        second = received(JOIN_GROUP, 9, second.value)
    return first.member_id, second


def init_producer_id(core, transactional_id: str) -> int:
    return send(core, INIT_PRODUCER_ID, 4, transactional_id=transactional_id,
                transaction_timeout_ms=10_000, producer_id=-1, producer_epoch=-1).error_code


def test_a_hand_made_consumer_offsets_serves_only_the_groups_its_partitions_hold():
    core = make_core()
    create(core, OFFSETS_TOPIC, 3)
    assert coordinators(core, 0, NEAR, FAR) == {
        NEAR: errors.NONE, FAR: errors.COORDINATOR_NOT_AVAILABLE}
    _, answer = joined(core, NEAR)
    assert (answer.error_code, answer.generation_id) == (errors.NONE, 1)
    assert join(core, FAR).error_code == errors.NOT_COORDINATOR
    # the groups' view and the topic stay as they were: nothing made the topic again
    assert [name for _, group in core.groups.all_groups() for name in [group.group_id]] == [NEAR]
    assert len(core.cluster.topics[OFFSETS_TOPIC].partitions) == 3


def test_growing_a_hand_made_consumer_offsets_gives_the_far_groups_their_coordinator():
    core = make_core()
    create(core, OFFSETS_TOPIC, 3)
    R = wire.request_class(37)
    [grown] = send(core, 37, 3, timeout_ms=5000, topics=[
        R.CreatePartitionsTopic(name=OFFSETS_TOPIC, count=50, assignments=None)]).results
    assert grown.error_code == errors.NONE, grown
    assert coordinators(core, 0, FAR) == {FAR: errors.NONE}
    _, answer = joined(core, FAR)
    assert (answer.error_code, answer.generation_id) == (errors.NONE, 1)


def test_a_hand_made_transaction_state_of_another_size_is_never_loaded():
    core = make_core()
    create(core, TRANSACTION_TOPIC, 1)
    on_partition_0, elsewhere = "t6", "t0"  # partitions 0 and 44 of 50
    assert coordinators(core, 1, on_partition_0, elsewhere) == {
        on_partition_0: errors.NONE, elsewhere: errors.COORDINATOR_NOT_AVAILABLE}
    assert init_producer_id(core, on_partition_0) == errors.COORDINATOR_LOAD_IN_PROGRESS
    assert init_producer_id(core, elsewhere) == errors.NOT_COORDINATOR
    # deleted, it is made again at the next FindCoordinator with the configured count
    delete(core, TRANSACTION_TOPIC)
    assert coordinators(core, 1, on_partition_0, elsewhere) == {
        on_partition_0: errors.NONE, elsewhere: errors.NONE}
    assert init_producer_id(core, elsewhere) == errors.NONE


def test_deleting_consumer_offsets_answers_a_join_waiting_in_its_group():
    core = make_core()
    first, answer = joined(core, NEAR, connection_id=1)
    assert answer.error_code == errors.NONE
    _, waiting = joined(core, NEAR, connection_id=2)
    # the second member waits for the first to rejoin, up to the rebalance timeout
    assert isinstance(waiting, Deferred) and not waiting.done
    delete(core, OFFSETS_TOPIC)
    assert waiting.done
    assert received(JOIN_GROUP, 9, waiting.value).error_code == errors.NOT_COORDINATOR
    # the topic comes back with the next group request, and the group starts anew
    assert coordinators(core, 0, NEAR) == {NEAR: errors.NONE}
    assert join(core, NEAR, first).error_code == errors.UNKNOWN_MEMBER_ID
    _, again = joined(core, NEAR)
    assert (again.error_code, again.generation_id) == (errors.NONE, 1)
