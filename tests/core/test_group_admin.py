"""Group administration answered by the core (no sockets, a manual clock): DescribeGroups,
ListGroups, DeleteGroups and OffsetDelete against classic groups built with the coordinator's
own JoinGroup and SyncGroup.

Requests and responses go through the codec at the version under test, so what is checked is
what a client at that version would read.
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.groups.classic_api import JoinRequest, JoinResult, SyncResult
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC, partition_for
from mockbroker.core.deferred import Deferred
from tests.core.harness import make_core, send
from wire import errors, records

GROUP_OPERATIONS = 3400  # READ(3) DELETE(6) DESCRIBE(8) DESCRIBE_CONFIGS(10) ALTER_CONFIGS(11)
NO_OPERATIONS = -2147483648


@pytest.fixture
def core():
    core = make_core(3, offsets_topic_num_partitions=6)
    core.cluster.create_topic("orders", 3)
    core.cluster.create_topic("audit", 2)
    return core


# -- driving the core ------------------------------------------------------------------------

def call(core, api_key: int, version: int, broker: int, **body):
    """One request through the codec and the core; the response as the client decodes it."""
    response = send(core, api_key, version, broker=broker, client_id="admin", **body)
    encoded = wire.encode_response(api_key, version, 7, response, size_prefix=False)
    return wire.decode_response(api_key, version, encoded)[1]


def coordinator(core, group_id: str) -> int:
    return core.groups.placement.coordinator_for(group_id)


def other_broker(core, group_id: str) -> int:
    return (coordinator(core, group_id) + 1) % 3


def group_on(core, broker: int, prefix: str, *, same: bool = True) -> str:
    """A group id whose coordinator is (or, with same=False, is not) ``broker``."""
    return next(f"{prefix}-{i}" for i in range(1000)
                if (coordinator(core, f"{prefix}-{i}") == broker) == same)


def subscription(*topics: str, version: int = 1) -> bytes:
    cls = wire.embedded_struct("ConsumerProtocolSubscription", version).cls
    return wire.encode_embedded("ConsumerProtocolSubscription", version,
                                cls(topics=list(topics), user_data=None, owned_partitions=[]))


def assignment(**partitions: list[int]) -> bytes:
    cls = wire.embedded_struct("ConsumerProtocolAssignment", 0).cls
    return wire.encode_embedded("ConsumerProtocolAssignment", 0, cls(
        assigned_partitions=[cls.TopicPartition(topic=t, partitions=p)
                             for t, p in partitions.items()], user_data=None))


def join(core, group_id: str, client_id: str, metadata: bytes, *, protocol_type="consumer",
         protocol="range", instance_id=None) -> Deferred | JoinResult:
    return core.groups.classic.join_group(coordinator(core, group_id), JoinRequest(
        group_id=group_id, member_id="", group_instance_id=instance_id, client_id=client_id,
        client_host="/10.0.0.7", session_timeout_ms=10_000, rebalance_timeout_ms=30_000,
        protocol_type=protocol_type, protocols=[(protocol, metadata)], api_version=3))


def joined(pending: Deferred) -> JoinResult:
    assert pending.done, "the join phase has not completed"
    return pending.value


def form_group(core, group_id: str, members: dict[str, bytes], *, protocol_type="consumer",
               assignments: dict[str, bytes] | None = None, instance_ids=None):
    """Members join (client id -> metadata), the leader assigns: a Stable group.
    Returns {client id: member id}."""
    pending = {client: join(core, group_id, client, metadata, protocol_type=protocol_type,
                            instance_id=(instance_ids or {}).get(client))
               for client, metadata in members.items()}
    core.clock.advance(0)  # group.initial.rebalance.delay.ms is 0: the join phase completes
    results = {client: joined(p) for client, p in pending.items()}
    member_ids = {client: r.member_id for client, r in results.items()}
    leader_client, leader = next((c, r) for c, r in results.items() if r.member_id == r.leader)
    plan = {member_ids[c]: a for c, a in (assignments or {}).items()}
    synced = core.groups.classic.sync_group(coordinator(core, group_id), group_id, leader.member_id,
                                    (instance_ids or {}).get(leader_client),
                                    leader.generation_id, protocol_type, leader.protocol_name,
                                    plan)
    result = synced.value if isinstance(synced, Deferred) else synced
    assert isinstance(result, SyncResult) and result.error_code == errors.NONE
    return member_ids


def leave_all(core, group_id: str, member_ids: dict[str, str]) -> None:
    left = core.groups.classic.leave_group(coordinator(core, group_id), group_id,
                                           [(m, None) for m in member_ids.values()])
    assert left.error_code == errors.NONE and set(left.member_errors) == {errors.NONE}
    core.clock.advance(0)


def commit(core, group_id: str, offsets: dict[tuple[str, int], int], *, member_id="",
           generation=-1) -> list[int]:
    cls = wire.request_class(8)
    by_topic: dict[str, list] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append(cls.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_leader_epoch=-1,
            committed_metadata=""))
    response = call(core, 8, 8, coordinator(core, group_id), group_id=group_id,
                    generation_id_or_member_epoch=generation, member_id=member_id,
                    group_instance_id=None, topics=[
                        cls.OffsetCommitRequestTopic(name=t, partitions=p)
                        for t, p in by_topic.items()])
    return [p.error_code for t in response.topics for p in t.partitions]


def committed(core, group_id: str) -> dict[tuple[str, int], int]:
    return {key: entry.offset for key, entry in
            core.groups.offsets.fetch(coordinator(core, group_id), group_id, None).items()}


def offsets_log(core, group_id: str) -> list[tuple[bytes, bytes | None]]:
    """(key, value) of every record in the group's __consumer_offsets partition."""
    partition = core.cluster.topics[OFFSETS_TOPIC].partitions[partition_for(group_id, 6)]
    return [(bytes(r.key), None if r.value is None else bytes(r.value))
            for batch in partition.log.batches
            for r in records.decode_records(batch.data, verify_crc=False)]


def describe(core, version: int, *group_ids: str, broker=None, include_ops=False):
    broker = coordinator(core, group_ids[0]) if broker is None else broker
    body = {"groups": list(group_ids)}
    if version >= 3:
        body["include_authorized_operations"] = include_ops
    return call(core, 15, version, broker, **body).groups


def delete_offsets(core, group_id: str, topics: dict[str, list[int]], broker=None):
    cls = wire.request_class(47)
    return call(core, 47, 0, coordinator(core, group_id) if broker is None else broker,
                group_id=group_id, topics=[cls.OffsetDeleteRequestTopic(name=t, partitions=[
                    cls.OffsetDeleteRequestPartition(partition_index=p) for p in ps])
                    for t, ps in topics.items()])


def answers(response) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.error_code
            for t in response.topics for p in t.partitions}


# -- DescribeGroups --------------------------------------------------------------------------

def test_a_stable_group_shows_its_protocol_and_each_members_metadata_and_assignment(core):
    subs = {"c1": subscription("orders"), "c2": subscription("orders", "audit")}
    plan = {"c1": assignment(orders=[0, 1]), "c2": assignment(orders=[2], audit=[0, 1])}
    ids = form_group(core, "billing", subs, assignments=plan)
    for version in range(7):
        (group,) = describe(core, version, "billing", include_ops=True)
        assert (group.error_code, group.group_id, group.group_state, group.protocol_type,
                group.protocol_data) == (0, "billing", "Stable", "consumer", "range")
        by_client = {m.client_id: m for m in group.members}
        assert set(by_client) == {"c1", "c2"}
        for client, member in by_client.items():
            assert member.member_id == ids[client]
            assert member.client_host == "/10.0.0.7"
            assert member.member_metadata == subs[client]
            assert member.member_assignment == plan[client]
        if version >= 3:
            assert group.authorized_operations == GROUP_OPERATIONS
    (group,) = describe(core, 5, "billing", include_ops=False)
    assert group.authorized_operations == NO_OPERATIONS


def test_static_members_show_their_instance_id_from_v4(core):
    form_group(core, "static", {"c1": subscription("orders")},
               assignments={"c1": assignment(orders=[0, 1, 2])}, instance_ids={"c1": "pod-1"})
    assert [m.group_instance_id for m in describe(core, 4, "static")[0].members] == ["pod-1"]
    assert [m.group_instance_id for m in describe(core, 6, "static")[0].members] == ["pod-1"]


def test_during_a_rebalance_the_protocol_and_metadata_are_not_shown(core):
    plan = {"c1": assignment(orders=[0, 1, 2])}
    ids = form_group(core, "moving", {"c1": subscription("orders")}, assignments=plan)
    newcomer = join(core, "moving", "c2", subscription("orders"))
    (group,) = describe(core, 5, "moving")
    assert (group.group_state, group.protocol_type, group.protocol_data) == \
        ("PreparingRebalance", "consumer", "")
    # Kafka 4 keeps showing the assignment a member last had; the metadata only when Stable
    assert [(m.client_id, m.member_metadata, m.member_assignment) for m in group.members] == \
        [("c1", b"", plan["c1"]), ("c2", b"", b"")]
    assert group.members[0].member_id == ids["c1"]
    rejoin = core.groups.classic.join_group(coordinator(core, "moving"), JoinRequest(
        "moving", ids["c1"], None, "c1", "/10.0.0.7", 10_000, 30_000, "consumer",
        [("range", subscription("orders"))], 3))
    assert joined(rejoin).error_code == 0 and joined(newcomer).error_code == 0
    (group,) = describe(core, 5, "moving")
    assert group.group_state == "CompletingRebalance" and group.protocol_data == ""
    # until the leader's SyncGroup, a member's assignment is the one of the last generation
    assert sorted((m.client_id, m.member_metadata, m.member_assignment)
                  for m in group.members) == [("c1", b"", plan["c1"]), ("c2", b"", b"")]


def test_an_unknown_group_is_dead_without_error_before_v6_and_not_found_from_v6(core):
    for version in range(6):
        (group,) = describe(core, version, "nobody", include_ops=True)
        assert (group.error_code, group.group_state, group.protocol_type, group.members) == \
            (0, "Dead", "", [])
        if version >= 3:  # no error, so the operations are filled in as for any group
            assert group.authorized_operations == GROUP_OPERATIONS
    (group,) = describe(core, 6, "nobody", include_ops=True)
    assert (group.error_code, group.group_state, group.error_message) == \
        (errors.GROUP_ID_NOT_FOUND, "Dead", "Group nobody not found.")
    assert group.authorized_operations == NO_OPERATIONS


def test_several_groups_in_one_request_each_get_their_answer(core):
    form_group(core, "billing", {"c1": subscription("orders")})
    broker = coordinator(core, "billing")
    here, elsewhere = group_on(core, broker, "nobody"), group_on(core, broker, "other", same=False)
    got = describe(core, 6, "billing", here, elsewhere, broker=broker)
    assert [(g.group_id, g.error_code, g.group_state) for g in got] == [
        ("billing", 0, "Stable"), (here, errors.GROUP_ID_NOT_FOUND, "Dead"),
        (elsewhere, errors.NOT_COORDINATOR, "")]


def test_describe_on_another_broker_or_while_the_coordinator_loads(core):
    form_group(core, "billing", {"c1": subscription("orders")})
    (group,) = describe(core, 5, "billing", broker=other_broker(core, "billing"),
                        include_ops=True)
    assert (group.error_code, group.group_state, group.members,
            group.authorized_operations) == (errors.NOT_COORDINATOR, "", [], NO_OPERATIONS)
    old = coordinator(core, "billing")
    core.groups.load_delay_ms = 500
    partition = core.cluster.topics[OFFSETS_TOPIC].partitions[partition_for("billing", 6)]
    core.cluster.set_leader(partition, other_broker(core, "billing"))
    new = coordinator(core, "billing")
    assert new != old
    assert describe(core, 5, "billing", broker=new)[0].error_code == \
        errors.COORDINATOR_LOAD_IN_PROGRESS
    assert describe(core, 5, "billing", broker=old)[0].error_code == errors.NOT_COORDINATOR
    core.clock.advance(500)
    (group,) = describe(core, 5, "billing", broker=new)
    # rebuilt from __consumer_offsets: the members carry on
    assert (group.error_code, group.group_state, [m.client_id for m in group.members]) == \
        (0, "Stable", ["c1"])


# -- ListGroups ------------------------------------------------------------------------------

def list_groups(core, version: int, broker: int, states=None, types=None):
    body = {}
    if version >= 4:
        body["states_filter"] = states or []
    if version >= 5:
        body["types_filter"] = types or []
    return call(core, 16, version, broker, **body)


def test_each_broker_lists_the_groups_it_coordinates_with_state_and_type(core):
    form_group(core, "stable", {"c1": subscription("orders")})
    form_group(core, "connectors", {"w1": b"\x00\x01"}, protocol_type="connect")
    assert commit(core, "offsets-only", {("orders", 0): 5}) == [0]
    expected = {"stable": ("consumer", "Stable"), "connectors": ("connect", "Stable"),
                "offsets-only": ("", "Empty")}
    seen = {}
    for broker in range(3):
        response = list_groups(core, 5, broker)
        assert response.error_code == 0
        for g in response.groups:
            assert g.group_type == "classic"
            assert coordinator(core, g.group_id) == broker
            seen[g.group_id] = (g.protocol_type, g.group_state)
    assert seen == expected
    v0 = {g.group_id: g.protocol_type for b in range(3) for g in list_groups(core, 0, b).groups}
    assert v0 == {name: ptype for name, (ptype, _) in expected.items()}


def test_list_filters_by_state_case_insensitively_and_by_type(core):
    form_group(core, "stable", {"c1": subscription("orders")})
    assert commit(core, "offsets-only", {("orders", 0): 5}) == [0]

    def listed(version, states=None, types=None):
        return sorted(g.group_id for b in range(3)
                      for g in list_groups(core, version, b, states, types).groups)

    assert listed(4, states=["stable"]) == ["stable"]
    assert listed(4, states=[" EMPTY ", "Dead"]) == ["offsets-only"]
    assert listed(4, states=["PreparingRebalance"]) == []
    assert listed(5, types=["Classic"]) == ["offsets-only", "stable"]
    assert listed(5, types=["consumer"]) == []
    assert listed(5, types=["no-such-type"]) == []
    assert listed(5, states=["stable"], types=["classic"]) == ["stable"]


def test_list_fails_while_one_of_the_brokers_shards_loads(core):
    form_group(core, "billing", {"c1": subscription("orders")})
    core.groups.load_delay_ms = 500
    partition = core.cluster.topics[OFFSETS_TOPIC].partitions[partition_for("billing", 6)]
    target = other_broker(core, "billing")
    core.cluster.set_leader(partition, target)
    response = list_groups(core, 5, target)
    assert (response.error_code, response.groups) == (errors.COORDINATOR_LOAD_IN_PROGRESS, [])
    core.clock.advance(500)
    assert "billing" in [g.group_id for g in list_groups(core, 5, target).groups]


def test_no_groups_before_the_offsets_topic_exists(core):
    assert list_groups(core, 3, 0).groups == []
    assert OFFSETS_TOPIC not in core.cluster.topics


# -- DeleteGroups ----------------------------------------------------------------------------

def delete_groups(core, version: int, broker: int, *names: str) -> dict[str, int]:
    response = call(core, 42, version, broker, groups_names=list(names))
    return {r.group_id: r.error_code for r in response.results}


def test_deleting_an_empty_group_writes_tombstones_and_forgets_it(core):
    ids = form_group(core, "billing", {"c1": subscription("orders")})
    assert commit(core, "billing", {("orders", 0): 7, ("orders", 2): 9}, member_id=ids["c1"],
                  generation=1) == [0, 0]
    leave_all(core, "billing", ids)
    assert describe(core, 5, "billing")[0].group_state == "Empty"
    before = len(offsets_log(core, "billing"))
    assert delete_groups(core, 2, coordinator(core, "billing"), "billing") == {"billing": 0}
    tombstones = offsets_log(core, "billing")[before:]
    assert all(value is None for _, value in tombstones)
    kinds = sorted(int.from_bytes(key[:2], "big") for key, _ in tombstones)
    assert kinds == [1, 1, 2]  # two offset commits, then the group metadata
    assert describe(core, 5, "billing")[0].group_state == "Dead"
    assert committed(core, "billing") == {}
    assert "billing" not in [g.group_id for g in list_groups(core, 3, coordinator(
        core, "billing")).groups]
    # a new coordinator replays the log and finds nothing either
    partition = core.cluster.topics[OFFSETS_TOPIC].partitions[partition_for("billing", 6)]
    core.cluster.set_leader(partition, other_broker(core, "billing"))
    assert describe(core, 6, "billing")[0].error_code == errors.GROUP_ID_NOT_FOUND
    assert committed(core, "billing") == {}


def test_delete_refuses_groups_with_members_and_unknown_groups(core):
    form_group(core, "busy", {"c1": subscription("orders")})
    assert commit(core, "idle", {("audit", 1): 3}) == [0]
    busy = coordinator(core, "busy")
    ghost = group_on(core, busy, "ghost")
    for version in range(3):
        assert delete_groups(core, version, busy, "busy", ghost) == \
            {"busy": errors.NON_EMPTY_GROUP, ghost: errors.GROUP_ID_NOT_FOUND}
    assert describe(core, 5, "busy")[0].group_state == "Stable"
    # the wrong broker says so; a name given twice is answered once
    assert delete_groups(core, 1, other_broker(core, "idle"), "idle") == \
        {"idle": errors.NOT_COORDINATOR}
    response = call(core, 42, 2, coordinator(core, "idle"), groups_names=["idle", "idle"])
    assert [(r.group_id, r.error_code) for r in response.results] == [("idle", 0)]
    assert committed(core, "idle") == {}


def test_a_member_of_a_deleted_group_must_join_again(core):
    ids = form_group(core, "billing", {"c1": subscription("orders")})
    leave_all(core, "billing", ids)
    assert delete_groups(core, 2, coordinator(core, "billing"), "billing") == {"billing": 0}
    beat = core.groups.classic.heartbeat(coordinator(core, "billing"), "billing", ids["c1"],
                                         None, 1)
    assert beat.error_code == errors.UNKNOWN_MEMBER_ID
    again = join(core, "billing", "c1", subscription("orders"))
    core.clock.advance(0)
    assert joined(again).error_code == 0 and joined(again).generation_id == 1


# -- OffsetDelete ----------------------------------------------------------------------------

def test_offsets_of_an_empty_group_are_deleted_with_tombstones(core):
    assert commit(core, "idle", {("orders", 0): 4, ("orders", 1): 5, ("audit", 0): 6}) == \
        [0, 0, 0]
    before = len(offsets_log(core, "idle"))
    response = delete_offsets(core, "idle", {"orders": [0, 2], "audit": [0]})
    assert response.error_code == 0
    assert answers(response) == {("orders", 0): 0, ("orders", 2): 0, ("audit", 0): 0}
    assert committed(core, "idle") == {("orders", 1): 5}
    # only offsets that existed get a tombstone
    assert [value for _, value in offsets_log(core, "idle")[before:]] == [None, None]


def test_unknown_topics_and_partitions_are_answered_first_then_the_coordinators_answers(core):
    assert commit(core, "idle", {("orders", 0): 4}) == [0]
    response = delete_offsets(core, "idle", {"orders": [0, 9], "nope": [0, 1], "audit": [1]})
    assert response.error_code == 0
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in response.topics] == [
        ("orders", [(9, errors.UNKNOWN_TOPIC_OR_PARTITION), (0, 0)]),
        ("nope", [(0, errors.UNKNOWN_TOPIC_OR_PARTITION), (1, errors.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("audit", [(1, 0)])]
    assert committed(core, "idle") == {}


def test_a_consumer_group_keeps_the_offsets_of_topics_it_subscribes_to(core):
    ids = form_group(core, "billing", {"c1": subscription("orders"),
                                       "c2": subscription("orders", version=3)})
    assert commit(core, "billing", {("orders", 0): 1, ("audit", 0): 2, ("audit", 1): 3},
                  member_id=ids["c1"], generation=1) == [0, 0, 0]
    response = delete_offsets(core, "billing", {"orders": [0, 1], "audit": [0, 1]})
    assert response.error_code == 0
    assert answers(response) == {("orders", 0): errors.GROUP_SUBSCRIBED_TO_TOPIC,
                                 ("orders", 1): errors.GROUP_SUBSCRIBED_TO_TOPIC,
                                 ("audit", 0): 0, ("audit", 1): 0}
    assert committed(core, "billing") == {("orders", 0): 1}
    assert core.groups.admin.describe_group(
        coordinator(core, "billing"), "billing").subscribed_topics() == {"orders"}


def test_group_level_refusals_answer_alone(core):
    form_group(core, "connectors", {"w1": b"\x00\x01"}, protocol_type="connect")
    response = delete_offsets(core, "connectors", {"audit": [0], "nope": [0]})
    assert (response.error_code, response.topics) == (errors.NON_EMPTY_GROUP, [])
    response = delete_offsets(core, "ghost", {"orders": [0]})
    assert (response.error_code, response.topics) == (errors.GROUP_ID_NOT_FOUND, [])
    response = delete_offsets(core, "ghost", {"orders": [0]}, broker=other_broker(core, "ghost"))
    assert (response.error_code, response.topics) == (errors.NOT_COORDINATOR, [])
    response = delete_offsets(core, "", {"orders": [0]}, broker=0)
    assert (response.error_code, response.topics) == (errors.INVALID_GROUP_ID, [])


def test_a_consumer_group_whose_subscriptions_cannot_be_read_consumes_everything(core):
    ids = form_group(core, "odd", {"c1": b"\x00\x00\xff"})  # a truncated Subscription
    assert commit(core, "odd", {("audit", 0): 2}, member_id=ids["c1"], generation=1) == [0]
    response = delete_offsets(core, "odd", {"audit": [0]})
    assert answers(response) == {("audit", 0): errors.GROUP_SUBSCRIBED_TO_TOPIC}
    assert committed(core, "odd") == {("audit", 0): 2}


def test_while_a_new_group_forms_every_topic_counts_as_subscribed(core):
    # a consumer group that has never had a generation: the coordinator cannot know yet
    core.settings["group_initial_rebalance_delay_ms"] = 1000
    assert commit(core, "forming", {("audit", 0): 2}) == [0]
    pending = join(core, "forming", "c1", subscription("orders"))
    assert describe(core, 5, "forming")[0].group_state == "PreparingRebalance"
    assert answers(delete_offsets(core, "forming", {"audit": [0]})) == \
        {("audit", 0): errors.GROUP_SUBSCRIBED_TO_TOPIC}
    core.clock.advance(1000)
    assert joined(pending).error_code == 0
    # CompletingRebalance: the generation's subscriptions are known
    assert answers(delete_offsets(core, "forming", {"audit": [0]})) == {("audit", 0): 0}
    assert committed(core, "forming") == {}
