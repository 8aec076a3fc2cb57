"""Every group API, in every version the broker serves, asked of a broker that does not
coordinate the group (NOT_COORDINATOR) or that is still loading it (COORDINATOR_LOAD_IN_PROGRESS).

Each request goes through :meth:`Core.receive` as a client's frame does, so the answer must also
encode; the test reads the error where that version of the response carries it (Kafka 4's
shapes: a top-level code, one per partition, or one per group).
"""

from __future__ import annotations

import uuid

import pytest

import wire
from mockbroker.core.dispatch import Connection
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC, partition_for
from mockbroker.handlers import REGISTRY
from tests.core.harness import make_core, send
from wire import errors

GROUP = "billing"
TOPIC = "orders"
JOIN, SYNC, HEARTBEAT, LEAVE, COMMIT, FETCH, DESCRIBE, DELETE, DELETE_OFFSETS = \
    11, 14, 12, 13, 8, 9, 15, 42, 47


def _request(api: int, version: int, topic_id):
    R = wire.request_class(api)
    if api == JOIN:
        return R(group_id=GROUP, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                 member_id="", protocol_type="consumer",
                 protocols=[R.JoinGroupRequestProtocol(name="range", metadata=b"")])
    if api == SYNC:
        return R(group_id=GROUP, generation_id=1, member_id="m-1", protocol_type="consumer",
                 protocol_name="range", assignments=[])
    if api == HEARTBEAT:
        return R(group_id=GROUP, generation_id=1, member_id="m-1")
    if api == LEAVE:
        return R(group_id=GROUP, member_id="m-1", members=[R.MemberIdentity(member_id="m-1")])
    if api == COMMIT:
        return R(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="", topics=[
            R.OffsetCommitRequestTopic(name=TOPIC, topic_id=topic_id, partitions=[
                R.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])])
    if api == FETCH and version < 8:
        return R(group_id=GROUP, topics=[
            R.OffsetFetchRequestTopic(name=TOPIC, partition_indexes=[0, 1])])
    if api == FETCH:
        return R(groups=[R.OffsetFetchRequestGroup(group_id=GROUP, topics=[
            R.OffsetFetchRequestTopics(name=TOPIC, topic_id=topic_id, partition_indexes=[0])])])
    if api == DESCRIBE:
        return R(groups=[GROUP])
    if api == DELETE:
        return R(groups_names=[GROUP])
    assert api == DELETE_OFFSETS
    return R(group_id=GROUP, topics=[R.OffsetDeleteRequestTopic(
        name=TOPIC, partitions=[R.OffsetDeleteRequestPartition(partition_index=0)])])


def _codes(api: int, version: int, response) -> list[int]:
    """The error codes a client reads from this version of the response."""
    if api == COMMIT:
        return [p.error_code for t in response.topics for p in t.partitions]
    if api == FETCH and version < 2:
        # no top-level error before v2: every partition asked for carries it
        return [p.error_code for t in response.topics for p in t.partitions]
    if api == FETCH and version < 8:
        assert response.topics == []
        return [response.error_code]
    if api == FETCH:
        assert [g.topics for g in response.groups] == [[]]
        return [g.error_code for g in response.groups]
    if api == DESCRIBE:
        assert [(g.group_id, g.members) for g in response.groups] == [(GROUP, [])]
        return [g.error_code for g in response.groups]
    if api == DELETE:
        return [r.error_code for r in response.results]
    if api == LEAVE and version >= 3:
        assert response.members == []
    return [response.error_code]


CASES = [(api, version) for api in (JOIN, SYNC, HEARTBEAT, LEAVE, COMMIT, FETCH, DESCRIBE,
                                    DELETE, DELETE_OFFSETS)
         for version in range(REGISTRY.get(api).min_version, REGISTRY.get(api).max_version + 1)]


def _ask(core, broker: int, api: int, version: int):
    topic_id = core.cluster.topics[TOPIC].topic_id
    frame = wire.encode_request(api, version, 11, "app", _request(api, version, topic_id),
                                size_prefix=False)
    outcome = core.receive(frame, Connection(broker, 1))
    assert outcome.done and isinstance(outcome.value, (bytes, bytearray)), outcome.value
    correlation_id, response = wire.decode_response(api, version, outcome.value[4:])
    assert correlation_id == 11
    return response


def _coordinated_elsewhere():
    core = make_core(2)
    core.cluster.create_topic(TOPIC, 2)
    coordinator = core.groups.placement.coordinator_for(GROUP)
    return core, coordinator, 1 - coordinator


@pytest.mark.parametrize("api,version", CASES,
                         ids=[f"{wire.apis.API_NAMES[a]}-v{v}" for a, v in CASES])
def test_a_broker_that_does_not_coordinate_the_group_says_not_coordinator(api, version):
    core, _, other = _coordinated_elsewhere()
    response = _ask(core, other, api, version)
    expected = 2 if api == FETCH and version < 2 else 1
    assert _codes(api, version, response) == [errors.NOT_COORDINATOR] * expected


@pytest.mark.parametrize("api,version", CASES,
                         ids=[f"{wire.apis.API_NAMES[a]}-v{v}" for a, v in CASES])
def test_a_coordinator_still_loading_the_group_says_load_in_progress(api, version):
    core, old, new = _coordinated_elsewhere()
    core.groups.load_delay_ms = 500
    offsets = core.cluster.topics[OFFSETS_TOPIC]
    core.cluster.set_leader(offsets.partitions[partition_for(GROUP, len(offsets.partitions))],
                            new)
    assert core.groups.placement.coordinator_for(GROUP) == new
    response = _ask(core, new, api, version)
    expected = 2 if api == FETCH and version < 2 else 1
    assert _codes(api, version, response) == [errors.COORDINATOR_LOAD_IN_PROGRESS] * expected
    # the broker that gave the group up is not its coordinator any more
    assert _codes(api, version, _ask(core, old, api, version)) == \
        [errors.NOT_COORDINATOR] * expected


def test_offset_fetch_v8_answers_each_group_by_where_it_lives():
    core = make_core(2)
    core.cluster.create_topic(TOPIC, 1)
    here = next(g for g in (f"g{i}" for i in range(100))
                if core.groups.placement.coordinator_for(g) == 0)
    elsewhere = next(g for g in (f"g{i}" for i in range(100))
                     if core.groups.placement.coordinator_for(g) == 1)
    R = wire.request_class(FETCH)
    body = R(groups=[R.OffsetFetchRequestGroup(group_id=g, topics=None)
                     for g in (here, elsewhere)])
    frame = wire.encode_request(FETCH, 8, 3, "app", body, size_prefix=False)
    outcome = core.receive(frame, Connection(0, 1))
    _, response = wire.decode_response(FETCH, 8, outcome.value[4:])
    assert [(g.group_id, g.error_code, g.topics) for g in response.groups] == [
        (here, errors.NONE, []), (elsewhere, errors.NOT_COORDINATOR, [])]


def test_sync_group_v5_without_its_protocol_is_refused_before_the_coordinator_is_asked():
    core, coordinator, other = _coordinated_elsewhere()
    R = wire.request_class(SYNC)
    for broker in (coordinator, other):
        frame = wire.encode_request(SYNC, 5, 3, "app", R(group_id=GROUP, generation_id=1,
                                                         member_id="m-1", assignments=[]),
                                    size_prefix=False)
        _, response = wire.decode_response(
            SYNC, 5, core.receive(frame, Connection(broker, 1)).value[4:])
        assert response.error_code == errors.INCONSISTENT_GROUP_PROTOCOL


def test_offset_fetch_by_id_of_a_deleted_topic_answers_with_the_zero_id():
    """Found by fuzzing: OffsetFetch v10 for every partition of a group that committed to a
    topic since deleted could not be encoded (the topic has no id any more)."""
    core = make_core()
    core.cluster.create_topic("gone", 1)
    node = core.groups.placement.coordinator_for("g")
    commit = wire.request_class(8)
    assert send(core, 8, 8, commit(group_id="g", generation_id_or_member_epoch=-1, topics=[
        commit.OffsetCommitRequestTopic(name="gone", partitions=[
            commit.OffsetCommitRequestPartition(partition_index=0, committed_offset=4)])]),
        broker=node).topics[0].partitions[0].error_code == 0
    core.cluster.delete_topic("gone")
    fetch = wire.request_class(9)
    outcome = core.receive(wire.encode_request(9, 10, 3, "c", fetch(groups=[
        fetch.OffsetFetchRequestGroup(group_id="g", topics=None)]), size_prefix=False),
        Connection(node, 1))
    _, response = wire.decode_response(9, 10, outcome.value[4:])
    (group,) = response.groups
    assert [(t.topic_id, [p.committed_offset for p in t.partitions]) for t in group.topics] == \
        [(uuid.UUID(int=0), [4])]
