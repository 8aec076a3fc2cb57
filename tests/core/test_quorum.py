"""The KRaft controller quorum (mockbroker.core.quorum) as DescribeQuorum, AddRaftVoter and
RemoveRaftVoter show it, with what Kafka 4.4 answers: every broker a voter of a static quorum,
the lowest live one leading in epoch 1, a high watermark that moves with the metadata, and
voter changes refused as a static quorum refuses them.  Failover and elections move the
leadership to another voter in a new epoch."""

from __future__ import annotations

import uuid

import pytest

import wire
from mockbroker.core.quorum import (
    OBSERVER_SESSION_TIMEOUT_MS, FailoverError, directory_id, kafka_uuid, quorum_of)
from mockbroker.core.security import Principal
from mockbroker.core.security.acls import (
    AclBinding, AclOperation as Op, AclPermissionType as Perm, Authorizer, PatternType,
    ResourceType as Res)
from tests.core.harness import START_MS, make_core, send
from wire import errors

DQ, ADD, REMOVE = 55, 80, 81
REQUEST = wire.request_class(DQ)
ADD_REQUEST = wire.request_class(ADD)
ZERO = uuid.UUID(int=0)
METADATA = "__cluster_metadata"
NOT_HOSTED = "This server does not host this topic-partition."


def describe(core, version: int = 2, topics=((METADATA, (0,)),), broker: int = 0, **kw):
    return send(core, DQ, version, REQUEST(topics=[
        REQUEST.TopicData(topic_name=name, partitions=[
            REQUEST.PartitionData(partition_index=p) for p in partitions])
        for name, partitions in topics]), broker=broker, **kw)


def partition(core, **kw):
    answer = describe(core, **kw)
    assert answer.error_code == errors.NONE
    if kw.get("version", 2) >= 2:  # no messages before v2
        assert answer.error_message is None
    [topic] = answer.topics
    [found] = topic.partitions
    assert (topic.topic_name, found.partition_index, found.error_code) == (METADATA, 0, 0)
    assert found.error_message == (None if kw.get("version", 2) >= 2 else "")
    return found


def voters(found) -> list[tuple[int, int, int, int]]:
    return [(v.replica_id, v.log_end_offset, v.last_fetch_timestamp,
             v.last_caught_up_timestamp) for v in found.current_voters]


def hwm(core) -> int:
    return partition(core).high_watermark


# -- DescribeQuorum ----------------------------------------------------------------------------

def test_one_broker_is_the_only_voter_and_leads_in_epoch_1():
    core = make_core(1)
    found = partition(core)
    assert (found.leader_id, found.leader_epoch) == (0, 1)
    now = core.clock.now_ms()
    assert voters(found) == [(0, found.high_watermark, now, now)]
    assert found.current_voters[0].replica_directory_id == ZERO
    assert found.observers == []
    answer = describe(core)
    assert [(n.node_id, [(l.name, l.host, l.port) for l in n.listeners])
            for n in answer.nodes] == [(0, [("CONTROLLER", "127.0.0.1", 9092)])]


def test_every_broker_votes_and_the_lowest_live_one_leads_as_the_controller_id_says():
    core = make_core(3)
    found = partition(core)
    assert found.leader_id == core.cluster.controller_id == 0
    assert [v.replica_id for v in found.current_voters] == [0, 1, 2]
    assert {v.log_end_offset for v in found.current_voters} == {found.high_watermark}
    assert [n.node_id for n in describe(core).nodes] == [0, 1, 2]
    # any broker answers the same (Kafka's brokers forward to the active controller)
    assert partition(core, broker=2) == found


def test_each_version_has_its_fields():
    core = make_core(2)
    v0, v1 = partition(core, version=0), partition(core, version=1)
    now = core.clock.now_ms()
    # v0 has no timestamps: the decoder fills in their default
    assert [(v.last_fetch_timestamp, v.last_caught_up_timestamp) for v in v0.current_voters] \
        == [(-1, -1)] * 2
    assert [(v.last_fetch_timestamp, v.last_caught_up_timestamp) for v in v1.current_voters] \
        == [(now, now)] * 2
    assert describe(core, version=1).nodes == []
    assert [n.node_id for n in describe(core, version=2).nodes] == [0, 1]


@pytest.mark.parametrize("topics", [
    (("orders", (0,)),),
    ((METADATA, (1,)),),
    ((METADATA, (0, 1)),),
    ((METADATA, (0,)), ("other", (3,))),
])
def test_anything_but_the_metadata_partition_is_echoed_as_not_hosted(topics):
    core = make_core()
    answer = describe(core, topics=topics)
    assert (answer.error_code, answer.error_message, answer.nodes) == (errors.NONE, None, [])
    assert [(t.topic_name, [(p.partition_index, p.error_code, p.error_message, p.leader_id,
                             p.leader_epoch, p.high_watermark, p.current_voters, p.observers)
                            for p in t.partitions]) for t in answer.topics] == [
        (name, [(p, errors.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED, 0, 0, 0, [], [])
                for p in partitions]) for name, partitions in topics]


def test_no_topics_or_no_partitions_echo_nothing():
    core = make_core()
    answer = describe(core, topics=())
    assert (answer.error_code, answer.topics, answer.nodes) == (errors.NONE, [], [])
    answer = describe(core, topics=((METADATA, ()),))
    assert [(t.topic_name, t.partitions) for t in answer.topics] == [(METADATA, [])]


def test_describing_needs_describe_on_the_cluster():
    core = make_core()
    core.security.authorizer = Authorizer()
    alice = Principal("User", "alice")
    answer = describe(core, principal=alice)
    assert (answer.error_code, answer.error_message, answer.topics) == (
        errors.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", [])
    assert describe(core, version=1, principal=alice).error_code == \
        errors.CLUSTER_AUTHORIZATION_FAILED
    core.security.authorizer.acls.create([AclBinding(
        Res.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:alice", "*", Op.DESCRIBE,
        Perm.ALLOW)])
    assert partition(core, principal=alice).leader_id == 0


# -- the high watermark: the metadata log's end offset ---------------------------------------

def alter_topic_configs(core, topic: str, **configs: str) -> None:
    cls = wire.request_class(44)
    answer = send(core, 44, 1, cls(validate_only=False, resources=[cls.AlterConfigsResource(
        resource_type=2, resource_name=topic, configs=[
            cls.AlterableConfig(name=k.replace("_", "."), config_operation=0, value=v)
            for k, v in configs.items()])]))
    assert [r.error_code for r in answer.responses] == [errors.NONE]


def test_the_high_watermark_counts_the_records_each_change_takes():
    core = make_core(3)
    cluster = core.cluster
    start = hwm(core)
    assert hwm(core) == start  # reading changes nothing
    cluster.create_topic("orders", 3, 3)  # a topic record, three partition records
    assert hwm(core) == start + 4
    cluster.admin_create_partitions("orders", 5)  # two partition records
    assert hwm(core) == start + 6
    alter_topic_configs(core, "orders", retention_ms="1000", cleanup_policy="compact")
    assert hwm(core) == start + 8  # a config record each
    cluster.move_leader(cluster.topics["orders"].partitions[0],
                        cluster.topics["orders"].partitions[0].replicas[1])
    assert hwm(core) == start + 9  # a partition change record
    cluster.delete_topic("orders")
    assert hwm(core) == start + 10  # a topic removal (its configs go with it)
    assert {v.log_end_offset for v in partition(core).current_voters} == {start + 10}


def test_a_quorum_built_late_starts_from_the_records_the_state_took():
    early, late = make_core(3), make_core(3)
    quorum_of(early.cluster)
    for core in (early, late):
        core.cluster.create_topic("orders", 2, 3)
        alter_topic_configs(core, "orders", retention_ms="1000")
        core.cluster.move_leader(core.cluster.topics["orders"].partitions[1],
                                 core.cluster.topics["orders"].partitions[1].replicas[2])
    assert hwm(late) == hwm(early)


# -- leadership: failover and elections ------------------------------------------------------

def test_failover_hands_leadership_to_the_next_live_voter_in_a_new_epoch():
    core = make_core(3)
    quorum = quorum_of(core.cluster)
    start = hwm(core)
    seq = core.events.last_seq
    quorum.failover()
    found = partition(core)
    assert (found.leader_id, found.leader_epoch) == (1, 2)
    assert found.high_watermark == start + 1  # the new leader's leader-change record
    quorum.failover(0)
    assert (partition(core).leader_id, partition(core).leader_epoch) == (0, 3)
    events = core.events.since(seq, types=["quorum_leader_changed"])
    assert [(e["leader"], e["previous_leader"], e["leader_epoch"]) for e in events] == [
        (1, 0, 2), (0, 1, 3)]


def test_failover_needs_another_live_voter():
    core = make_core(2)
    quorum = quorum_of(core.cluster)
    with pytest.raises(FailoverError, match="already leads"):
        quorum.failover(0)
    with pytest.raises(FailoverError, match="unknown controller 5") as info:
        quorum.failover(5)
    assert info.value.unknown
    core.stop_broker(1)
    with pytest.raises(FailoverError, match="controller 1 is stopped"):
        quorum.failover(1)
    with pytest.raises(FailoverError, match="no other live voter"):
        quorum.failover()
    assert (partition(core).leader_id, partition(core).leader_epoch) == (0, 1)


def test_a_stopped_leader_is_replaced_and_has_not_fetched_from_the_new_one():
    core = make_core(3)
    quorum_of(core.cluster)
    core.stop_broker(0)
    found = partition(core, broker=1)
    assert (found.leader_id, found.leader_epoch) == (1, 2)
    now = core.clock.now_ms()
    # as Kafka shows a voter that has not fetched in the leader's epoch
    assert voters(found) == [(0, -1, -1, -1), (1, found.high_watermark, now, now),
                             (2, found.high_watermark, now, now)]
    core.start_broker(0)  # it fetches again, and leadership stays
    found = partition(core)
    assert (found.leader_id, found.leader_epoch) == (1, 2)
    assert {v.log_end_offset for v in found.current_voters} == {found.high_watermark}


def test_a_stopped_follower_stays_where_it_stopped_while_the_log_moves_on():
    core = make_core(3)
    quorum_of(core.cluster)
    stopped_at = core.clock.now_ms()
    before = hwm(core)
    core.stop_broker(2)
    core.clock.advance(5_000)
    core.cluster.create_topic("orders", 1, 1)
    found = partition(core)
    assert (found.leader_id, found.leader_epoch) == (0, 1)
    assert found.high_watermark > before
    assert voters(found)[2] == (2, before, stopped_at, stopped_at)
    core.start_broker(2)
    now = core.clock.now_ms()
    assert voters(partition(core))[2] == (2, partition(core).high_watermark, now, now)


def test_with_every_voter_stopped_there_is_no_leader_until_one_starts():
    core = make_core(2)
    quorum = quorum_of(core.cluster)
    core.stop_broker(1)
    core.stop_broker(0)
    assert (quorum.leader_id, quorum.leader_epoch) == (-1, 1)
    core.start_broker(1)
    assert (quorum.leader_id, quorum.leader_epoch) == (1, 2)
    events = core.events.since(0, types=["quorum_leader_changed"])
    assert [(e["leader"], e["previous_leader"]) for e in events] == [(-1, 0), (1, -1)]


# -- AddRaftVoter and RemoveRaftVoter on a static quorum --------------------------------------

def add(core, voter_id=1, directory=None, listeners=(("CONTROLLER", "127.0.0.1", 9093),),
        cluster_id=None, version=1):
    return send(core, ADD, version, ADD_REQUEST(
        cluster_id=cluster_id, timeout_ms=30_000, voter_id=voter_id,
        voter_directory_id=uuid.uuid4() if directory is None else directory,
        listeners=[ADD_REQUEST.Listener(name=n, host=h, port=p) for n, h, p in listeners],
        ack_when_committed=True))


def remove(core, voter_id=0, directory=None, cluster_id=None):
    return send(core, REMOVE, 0, wire.request_class(REMOVE)(
        cluster_id=cluster_id, voter_id=voter_id,
        voter_directory_id=uuid.uuid4() if directory is None else directory))


def outcome(answer) -> tuple[int, str | None]:
    return answer.error_code, answer.error_message


STATIC_ADD = (errors.UNSUPPORTED_VERSION,
              "Cluster doesn't support adding voter because the kraft.version feature is 0")
STATIC_REMOVE = (errors.UNSUPPORTED_VERSION,
                 "Cluster doesn't support removing voter because the kraft.version feature is 0")


def test_add_voter_on_a_static_quorum_is_refused_after_the_request_is_checked():
    core = make_core(2)
    cid = core.cluster.cluster_id
    assert outcome(add(core, cluster_id="nope")) == (
        errors.INCONSISTENT_CLUSTER_ID,
        f'The given id "nope" doesn\'t match the cluster id "{cid}"')
    assert outcome(add(core, directory=ZERO)) == (
        errors.INVALID_REQUEST, "Add voter request didn't include a valid voter")
    assert outcome(add(core, voter_id=-1)) == (
        errors.INVALID_REQUEST, "Add voter request didn't include a valid voter")
    assert outcome(add(core, listeners=())) == (
        errors.INVALID_REQUEST, "Add voter request didn't include the endpoint "
        "(Endpoints(endpoints={})) for the default listener ListenerName(CONTROLLER)")
    assert outcome(add(core, listeners=(("PLAINTEXT", "127.0.0.1", 1),))) == (
        errors.INVALID_REQUEST, "Add voter request didn't include the endpoint "
        "(Endpoints(endpoints={ListenerName(PLAINTEXT)=127.0.0.1/<unresolved>:1})) for the "
        "default listener ListenerName(CONTROLLER)")
    for voter_id in (1, 7):
        assert outcome(add(core, voter_id=voter_id, cluster_id=cid)) == STATIC_ADD
    assert outcome(add(core, version=0, listeners=(("controller", "h", 1),))) == STATIC_ADD
    assert [v.replica_id for v in partition(core).current_voters] == [0, 1]


def test_remove_voter_on_a_static_quorum_is_refused_after_the_request_is_checked():
    core = make_core(2)
    cid = core.cluster.cluster_id
    assert outcome(remove(core, cluster_id="x")) == (
        errors.INCONSISTENT_CLUSTER_ID, f'The given id "x" doesn\'t match the cluster id "{cid}"')
    # a static voter's key has no directory id
    assert outcome(remove(core, directory=ZERO)) == (
        errors.INVALID_REQUEST, "Remove voter request didn't include a valid voter")
    assert outcome(remove(core, cluster_id=cid)) == STATIC_REMOVE
    assert outcome(remove(core, voter_id=9)) == STATIC_REMOVE
    assert partition(core).leader_id == 0


def test_voter_changes_need_alter_on_the_cluster():
    core = make_core()
    core.security.authorizer = Authorizer()
    alice = Principal("User", "alice")
    refused = (errors.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    assert outcome(send(core, ADD, 1, ADD_REQUEST(
        cluster_id=None, timeout_ms=1, voter_id=1, voter_directory_id=uuid.uuid4(),
        listeners=[], ack_when_committed=True), principal=alice)) == refused
    assert outcome(send(core, REMOVE, 0, wire.request_class(REMOVE)(
        cluster_id=None, voter_id=0, voter_directory_id=uuid.uuid4()),
        principal=alice)) == refused


# -- a dynamic quorum (kraft.version 1) -----------------------------------------------------------

def dynamic(brokers: int = 3):
    """A core whose kraft.version is 1, set as UpdateFeatures would set it."""
    core = make_core(brokers)
    quorum_of(core.cluster)
    core.cluster.features.levels["kraft.version"] = 1
    core.cluster.features.epoch += 1
    return core


def key(core, node_id: int) -> str:
    return f"ReplicaKey(id={node_id}, directoryId=" \
        f"{kafka_uuid(directory_id(core.cluster.cluster_id, node_id))})"


def test_a_dynamic_quorums_voters_have_directory_ids():
    core = dynamic(2)
    found = partition(core)
    assert [v.replica_directory_id for v in found.current_voters] == [
        directory_id(core.cluster.cluster_id, n) for n in (0, 1)]


def test_a_removed_voter_fetches_on_as_an_observer_and_can_be_added_back():
    core = dynamic(3)
    cid = core.cluster.cluster_id
    dir2 = directory_id(cid, 2)
    start = hwm(core)
    assert outcome(remove(core, voter_id=2, directory=dir2)) == (errors.NONE, None)
    found = partition(core)
    assert [v.replica_id for v in found.current_voters] == [0, 1]
    assert [(o.replica_id, o.replica_directory_id, o.log_end_offset)
            for o in found.observers] == [(2, dir2, start + 1)]
    # a voter id already in the set; the set is printed in a Java HashSet's order (checked
    # against Kafka's ReplicaKey with these two directory ids)
    assert outcome(add(core, voter_id=1, directory=directory_id(cid, 1))) == (
        errors.DUPLICATE_VOTER, f"The voter id for {key(core, 1)} is already part of the set "
                                f"of voters [{key(core, 1)}, {key(core, 0)}].")
    # nobody answers at the endpoint given
    assert outcome(add(core, voter_id=2, directory=dir2,
                       listeners=(("CONTROLLER", "127.0.0.1", 1),))) == (
        errors.REQUEST_TIMED_OUT,
        "Aborted add voter operation for since API_VERSIONS returned an error "
        "BROKER_NOT_AVAILABLE")
    # its endpoint answers, but no observer with that directory id fetches
    wrong = uuid.uuid4()
    assert outcome(add(core, voter_id=2, directory=wrong,
                       listeners=(("CONTROLLER", "127.0.0.1", 9094),))) == (
        errors.REQUEST_TIMED_OUT,
        f"Aborted add voter operation for ReplicaKey(id=2, directoryId={kafka_uuid(wrong)}) "
        "since it is lagging behind")
    assert outcome(add(core, voter_id=2, directory=dir2,
                       listeners=(("CONTROLLER", "127.0.0.1", 9094),))) == (errors.NONE, None)
    found = partition(core)
    assert [v.replica_id for v in found.current_voters] == [0, 1, 2]
    assert found.observers == [] and found.high_watermark == start + 2


def test_the_last_voter_cannot_be_removed_nor_one_of_another_directory():
    core = dynamic(1)
    cid = core.cluster.cluster_id
    other = uuid.uuid4()
    assert outcome(remove(core, voter_id=0, directory=other)) == (
        errors.VOTER_NOT_FOUND,
        f"Cannot remove voter ReplicaKey(id=0, directoryId={kafka_uuid(other)}) from the set "
        f"of voters [{key(core, 0)}]")
    assert outcome(remove(core, voter_id=0, directory=directory_id(cid, 0))) == (
        errors.VOTER_NOT_FOUND,
        f"Cannot remove voter {key(core, 0)} from the set of voters [{key(core, 0)}]")


def test_a_leader_that_removes_itself_hands_leadership_on():
    core = dynamic(3)
    dir0 = directory_id(core.cluster.cluster_id, 0)
    assert outcome(remove(core, voter_id=0, directory=dir0)) == (errors.NONE, None)
    found = partition(core)
    assert (found.leader_id, found.leader_epoch) == (1, 2)
    assert [o.replica_id for o in found.observers] == [0]


def test_a_stopped_observer_is_forgotten_after_five_minutes():
    core = dynamic(3)
    remove(core, voter_id=2, directory=directory_id(core.cluster.cluster_id, 2))
    core.stop_broker(2)
    stopped_at = core.clock.now_ms()
    core.clock.advance(OBSERVER_SESSION_TIMEOUT_MS - 1)
    [observer] = partition(core).observers
    assert (observer.replica_id, observer.last_fetch_timestamp) == (2, stopped_at)
    core.clock.advance(1)
    assert partition(core).observers == []
    assert START_MS <= stopped_at
