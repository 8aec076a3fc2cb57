"""KIP-848 consumer groups, driven by ConsumerGroupHeartbeat requests as clients frame them, on
a manual clock.

The assignments and epochs of the join sequences are what a Kafka 4.4 broker answered to the
same heartbeats (uniform and range assignors, six partitions, members joining over a second
apart): the first member subscribing gets epoch 2 and every partition; a second one gets epoch
3 and nothing until the first has revoked half; a third takes one partition from each.
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.clock import ManualClock
from mockbroker.core.groups.consumer.assignors import java_hashmap_order
from tests.core.harness import START_MS, make_core, send
from wire import errors

GROUP = "g"
REBALANCE_MS = 30_000


class Group:
    """A cluster on a manual clock with topic "t" (6 partitions) and a consumer group's
    members, each heartbeating as the Java client does."""

    def __init__(self, brokers: int = 1, partitions: int = 6, **settings):
        self.clock = ManualClock(START_MS)
        self.core = make_core(brokers, clock=self.clock, **settings)
        self.core.cluster.create_topic("t", partitions, min(brokers, 3))
        self.tid = self.core.cluster.topics["t"].topic_id
        self.owned: dict[str, list[int]] = {}
        self.epochs: dict[str, int] = {}

    def coordinator(self) -> int:
        return self.core.groups.placement.coordinator_for(GROUP)

    @property
    def group(self):
        return self.core.groups.find_group(GROUP)

    def heartbeat(self, member: str, epoch: int | None = None, *, topics=("t",),
                  owned: list[int] | None = None, version: int = 1, join: bool = False,
                  client_id: str = "app", **fields):
        """One heartbeat of ``member``: at its last epoch (0 when ``join``), reporting what
        it owns; remembers the epoch and assignment it is given."""
        cls = wire.request_class(68)
        if epoch is None:
            epoch = 0 if join else self.epochs[member]
        if owned is None:
            owned = [] if epoch == 0 else self.owned.get(member, [])
        body = dict(group_id=GROUP, member_id=member, member_epoch=epoch,
                    rebalance_timeout_ms=REBALANCE_MS if epoch == 0 else -1,
                    subscribed_topic_names=list(topics) if epoch == 0 else None,
                    topic_partitions=[cls.TopicPartitions(topic_id=self.tid, partitions=owned)]
                    if owned else [])
        body.update(fields)
        answer = send(self.core, 68, version, broker=self.coordinator(), client_id=client_id,
                      **body)
        if answer.error_code == errors.NONE:
            self.epochs[answer.member_id or member] = answer.member_epoch
            if answer.assignment is not None:
                self.owned[answer.member_id or member] = sorted(
                    p for tp in answer.assignment.topic_partitions for p in tp.partitions)
        return answer

    def assigned(self, answer) -> list[int] | None:
        if answer.assignment is None:
            return None
        return sorted(p for tp in answer.assignment.topic_partitions for p in tp.partitions)

    def settle(self, *members: str, rounds: int = 6) -> None:
        """Heartbeat every member in turn until nothing moves."""
        for _ in range(rounds):
            for member in members:
                assert self.heartbeat(member).error_code == errors.NONE


def _in_order(*members: str) -> list[str]:
    """The members in the order Kafka's uniform assignor visits them."""
    return java_hashmap_order(list(members))


# -- joining and reconciling ---------------------------------------------------------------------

def test_the_first_member_gets_epoch_2_and_every_partition():
    g = Group()
    answer = g.heartbeat("m1", join=True)
    assert (answer.error_code, answer.member_id, answer.member_epoch,
            answer.heartbeat_interval_ms) == (errors.NONE, "m1", 2, 5000)
    assert g.assigned(answer) == [0, 1, 2, 3, 4, 5]
    assert (g.group.state.value, g.group.group_epoch, g.group.assignment_epoch) == \
        ("Stable", 2, 2)
    again = g.heartbeat("m1")
    assert (again.member_epoch, again.assignment) == (2, None)  # nothing changed: no assignment


def test_a_second_member_waits_until_the_first_has_revoked_as_on_kafka():
    g = Group()
    g.heartbeat("m1", join=True)
    g.clock.advance(1200)
    joined = g.heartbeat("m2", join=True)
    assert (joined.member_epoch, g.assigned(joined)) == (3, [])  # its partitions are not free
    assert g.group.state.value == "Reconciling"
    revoke = g.heartbeat("m1")
    assert (revoke.member_epoch, g.assigned(revoke)) == (2, [0, 1, 2])  # revoke first, epoch 2
    assert g.heartbeat("m2").assignment is None  # 3, 4, 5 are still m1's
    done = g.heartbeat("m1", owned=[0, 1, 2])  # revoked: moves to the new epoch
    assert (done.member_epoch, done.assignment) == (3, None)
    released = g.heartbeat("m2")
    assert (released.member_epoch, g.assigned(released)) == (3, [3, 4, 5])
    assert g.group.state.value == "Stable"


def test_a_third_member_takes_one_partition_from_each_as_on_kafka():
    g = Group()
    g.heartbeat("m1", join=True)
    g.clock.advance(1200)
    g.heartbeat("m2", join=True)
    g.settle("m1", "m2")
    g.clock.advance(1200)
    g.heartbeat("m3", join=True)
    g.settle("m1", "m2", "m3")
    assert {m: g.owned[m] for m in ("m1", "m2", "m3")} == \
        {"m1": [0, 1], "m2": [3, 4], "m3": [2, 5]}
    assert set(g.epochs.values()) == {4} and g.group.state.value == "Stable"


def test_the_range_assignor_gives_contiguous_ranges_by_member_id():
    g = Group(group_consumer_assignors="range,uniform")
    for member in ("c", "a", "b"):
        g.heartbeat(member, join=True)
        g.clock.advance(1200)
    g.settle("a", "b", "c")
    assert {m: g.owned[m] for m in "abc"} == {"a": [0, 1], "b": [2, 3], "c": [4, 5]}


def test_members_joining_at_once_get_one_target_per_assignment_interval():
    g = Group()
    g.heartbeat("m1", join=True)
    g.heartbeat("m2", join=True)  # within the interval: reconciled against the old target
    assert (g.group.group_epoch, g.group.assignment_epoch) == (3, 2)
    assert g.group.state.value == "Assigning"
    g.clock.advance(1000)
    g.settle("m1", "m2")
    assert sorted(g.owned["m1"] + g.owned["m2"]) == list(range(6))
    assert len(g.owned["m1"]) == len(g.owned["m2"]) == 3


def test_a_leaving_member_bumps_the_epoch_and_its_partitions_go_to_the_others():
    g = Group()
    for member in ("m1", "m2"):
        g.heartbeat(member, join=True)
        g.clock.advance(1200)
    g.settle("m1", "m2")
    left = g.heartbeat("m2", -1)
    assert (left.error_code, left.member_id, left.member_epoch) == (errors.NONE, "m2", -1)
    assert g.group.group_epoch == 4 and "m2" not in g.group.members
    g.clock.advance(1200)
    g.settle("m1")
    assert g.owned["m1"] == list(range(6)) and g.epochs["m1"] == 4


def test_new_partitions_of_a_subscribed_topic_are_assigned():
    g = Group(partitions=2)
    g.heartbeat("m1", join=True)
    g.core.cluster.admin_create_partitions("t", 4)
    g.clock.advance(1200)
    answer = g.heartbeat("m1")
    assert (answer.member_epoch, g.assigned(answer)) == (3, [0, 1, 2, 3])


def test_a_regex_subscription_picks_up_a_topic_created_later():
    g = Group()
    cls = wire.request_class(68)
    first = send(g.core, 68, 1, broker=g.coordinator(), group_id=GROUP, member_id="r",
                 member_epoch=0, rebalance_timeout_ms=REBALANCE_MS,
                 subscribed_topic_regex="orders-.*", topic_partitions=[])
    assert (first.error_code, first.member_epoch, first.assignment.topic_partitions) == \
        (errors.NONE, 1, [])  # nothing matches yet, and an empty subscription: epoch 1
    g.core.cluster.create_topic("orders-eu", 2, 1)
    g.clock.advance(1200)
    later = send(g.core, 68, 1, broker=g.coordinator(), group_id=GROUP, member_id="r",
                 member_epoch=1, topic_partitions=[])
    orders = g.core.cluster.topics["orders-eu"].topic_id
    assert [(tp.topic_id, list(tp.partitions)) for tp in later.assignment.topic_partitions] \
        == [(orders, [0, 1])]
    assert later.member_epoch == 2
    bad = send(g.core, 68, 1, broker=g.coordinator(), group_id=GROUP, member_id="s",
               member_epoch=0, rebalance_timeout_ms=1, subscribed_topic_regex="[",
               topic_partitions=[], subscribed_topic_names=None, server_assignor=None,
               instance_id=None, rack_id=None)
    assert bad.error_code == errors.INVALID_REGULAR_EXPRESSION
    del cls


#: regexes and what Kafka 4.4 answered a joining member subscribing with each (None: accepted)
REGEXES_ON_KAFKA = [
    ("[", "missing closing ]"), ("(?=a)t", "invalid or unsupported Perl syntax"),
    ("(a)\\1", "invalid escape sequence"), ("a**", "invalid nested repetition operator"),
    ("(ab", "missing closing )"), ("ab)", "regexp/syntax: internal error"),
    ("*a", "missing argument to repetition operator"),
    ("\\", "trailing backslash at end of expression"),
    ("[b-a]", "invalid character class range"), ("\\Q", None), ("(?P<n>a)", None),
    ("(?P=n)", "invalid or unsupported Perl syntax"), ("\\pN", None),
    ("a{2,1}", "invalid repeat count"),
]


@pytest.mark.parametrize("regex, refusal", REGEXES_ON_KAFKA)
def test_subscription_regexes_are_checked_with_kafkas_re2j_rules(regex, refusal):
    g = Group()
    answer = g.heartbeat("m1", join=True, topics=(), subscribed_topic_names=None,
                         subscribed_topic_regex=regex)
    if refusal is None:
        assert answer.error_code == errors.NONE
    else:
        assert (answer.error_code, answer.error_message) == (
            errors.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {refusal}.")


def test_re2_quoting_and_unicode_classes_match_topics():
    g = Group()
    for name in ("a.b-1", "axb-1", "a.b-x"):
        g.core.cluster.create_topic(name, 1, 1)
    answer = g.heartbeat("m1", join=True, topics=(), subscribed_topic_names=None,
                         subscribed_topic_regex="\\Qa.b\\E-\\pN")
    assert answer.error_code == errors.NONE
    g.clock.advance(1200)
    g.heartbeat("m1")
    by_id = g.core.cluster.topics_by_id
    assert {by_id[t].name for t in g.group.target["m1"]} == {"a.b-1"}


# -- timeouts -----------------------------------------------------------------------------------

def test_a_member_that_stops_heartbeating_is_expired_after_the_session_timeout():
    g = Group()
    g.heartbeat("m1", join=True)
    g.heartbeat("m2", join=True)
    for _ in range(10):  # m1 keeps heartbeating, m2 has gone quiet
        g.clock.advance(5000)
        g.heartbeat("m1")
    assert "m2" not in g.group.members
    assert g.owned["m1"] == list(range(6))
    gone = g.heartbeat("m2", 2)
    assert gone.error_code == errors.UNKNOWN_MEMBER_ID
    assert gone.error_message == "Member m2 is not a member of group g."


def test_a_member_that_does_not_revoke_in_its_rebalance_timeout_is_fenced():
    g = Group()
    g.heartbeat("m1", join=True)
    g.clock.advance(1200)
    g.heartbeat("m2", join=True)
    assert g.assigned(g.heartbeat("m1")) == [0, 1, 2]  # asked to revoke 3, 4, 5
    for _ in range(int(REBALANCE_MS / 5000) + 1):
        g.clock.advance(5000)
        g.heartbeat("m2")  # m1 never reports the revocation
    assert "m1" not in g.group.members
    g.clock.advance(1200)
    g.settle("m2")
    assert g.owned["m2"] == list(range(6))


def test_a_rule_holds_a_members_revocation_until_it_is_removed_or_times_out():
    g = Group()
    g.heartbeat("m1", join=True, client_id="slow")
    g.clock.advance(1200)
    g.heartbeat("m2", join=True)
    assert g.assigned(g.heartbeat("m1", client_id="slow")) == [0, 1, 2]
    rule = g.core.control.add({"action": "hold_revocation", "client_id": "slow",
                               "count": None})
    for _ in range(3):  # it says it gave 3, 4, 5 up; the coordinator hears it still has them
        g.clock.advance(5000)
        held = g.heartbeat("m1", owned=[0, 1, 2], client_id="slow")
        assert (held.error_code, held.member_epoch) == (errors.NONE, 2)
        assert g.heartbeat("m2").assignment is None
    assert g.group.members["m1"].state.name == "UNREVOKED_PARTITIONS"
    g.core.control.remove(rule.id)
    assert g.heartbeat("m1", owned=[0, 1, 2], client_id="slow").member_epoch == 3
    assert g.assigned(g.heartbeat("m2")) == [3, 4, 5]
    # held for good, the member is fenced by its rebalance timeout
    g.core.control.add({"action": "hold_revocation", "client_id": "slow", "count": None})
    g.clock.advance(1200)
    g.heartbeat("m3", join=True)
    g.heartbeat("m1", owned=[0, 1, 2], client_id="slow")
    assert g.group.members["m1"].state.name == "UNREVOKED_PARTITIONS"
    for _ in range(int(REBALANCE_MS / 5000) + 1):
        g.clock.advance(5000)
        g.heartbeat("m1", owned=[0, 1], client_id="slow")
        g.heartbeat("m2")
    assert "m1" not in g.group.members


def test_a_hold_revocation_rule_is_only_for_consumer_group_heartbeats():
    g = Group()
    with pytest.raises(ValueError, match="hold_revocation is for ConsumerGroupHeartbeat"):
        g.core.control.add({"api": "Heartbeat", "action": "hold_revocation"})


# -- refusals -----------------------------------------------------------------------------------

def test_heartbeats_are_refused_with_kafkas_errors_and_messages():
    g = Group()
    assert g.heartbeat("m1", join=True).error_code == errors.NONE

    def refused(**fields):
        answer = send(g.core, 68, 1, broker=g.coordinator(), **{
            "group_id": GROUP, "member_id": "m1", "member_epoch": 2, **fields})
        return answer.error_code, answer.error_message

    assert refused(member_id="") == (errors.INVALID_REQUEST, "MemberId can't be empty.")
    assert refused(group_id=" ") == (errors.INVALID_REQUEST, "GroupId can't be empty.")
    assert refused(member_epoch=0, member_id="new", subscribed_topic_names=["t"]) == \
        (errors.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
    assert refused(member_epoch=-3) == (errors.INVALID_REQUEST, "MemberEpoch is invalid.")
    assert refused(server_assignor="sticky") == (
        errors.UNSUPPORTED_ASSIGNOR,
        "ServerAssignor sticky is not supported. Supported assignors: uniform, range.")
    assert refused(member_epoch=3) == (
        errors.FENCED_MEMBER_EPOCH,
        "The consumer group member has a greater member epoch (3) than the one known by the "
        "group coordinator (2). The member must abandon all its partitions and rejoin.")
    assert refused(member_epoch=1)[0] == errors.FENCED_MEMBER_EPOCH
    assert refused(member_id="nobody") == (errors.UNKNOWN_MEMBER_ID,
                                           "Member nobody is not a member of group g.")
    assert refused(group_id="other") == (errors.GROUP_ID_NOT_FOUND,
                                         "Consumer group other not found.")
    other = next(b for b in g.core.cluster.brokers if b != g.coordinator()) \
        if len(g.core.cluster.brokers) > 1 else None
    assert other is None  # one broker here; see the failover test for NOT_COORDINATOR


def test_a_classic_group_whose_subscriptions_cannot_be_read_is_not_upgraded():
    g = Group()
    cls = wire.request_class(11)
    joined = send(g.core, 11, 5, broker=g.coordinator(), group_id=GROUP, member_id="",
                  session_timeout_ms=10_000, rebalance_timeout_ms=10_000, group_instance_id=None,
                  protocol_type="consumer", protocols=[cls.JoinGroupRequestProtocol(
                      name="range", metadata=b"")])
    assert joined.error_code == errors.MEMBER_ID_REQUIRED
    send(g.core, 11, 5, broker=g.coordinator(), group_id=GROUP, member_id=joined.member_id,
         session_timeout_ms=10_000, rebalance_timeout_ms=10_000, group_instance_id=None,
         protocol_type="consumer", protocols=[cls.JoinGroupRequestProtocol(
             name="range", metadata=b"")])
    answer = g.heartbeat("m1", join=True)
    assert answer.error_code == errors.GROUP_ID_NOT_FOUND
    assert answer.error_message == ("Cannot upgrade classic group g to consumer group because "
                                    "the embedded consumer protocol is malformed.")


# -- static members ---------------------------------------------------------------------------

def test_a_static_member_comes_back_under_a_new_id_to_the_same_partitions():
    g = Group()
    for member, instance in (("a1", "a"), ("b1", "b")):
        g.heartbeat(member, join=True, instance_id=instance)
        g.clock.advance(1200)
    g.settle("a1", "b1")
    before = g.owned["a1"]
    epoch = g.group.group_epoch
    left = g.heartbeat("a1", -2, instance_id="a")
    assert (left.error_code, left.member_epoch) == (errors.NONE, -2)
    assert g.group.group_epoch == epoch  # a static member's leave changes nothing yet
    taken = g.heartbeat("b2", join=True, instance_id="b")
    assert taken.error_code == errors.UNRELEASED_INSTANCE_ID
    back = g.heartbeat("a2", join=True, instance_id="a")
    assert (back.error_code, g.assigned(back)) == (errors.NONE, before)
    assert g.group.group_epoch == epoch and "a1" not in g.group.members
    fenced = g.heartbeat("a1", 3, instance_id="a")
    assert (fenced.error_code, fenced.error_message) == (
        errors.FENCED_INSTANCE_ID, "Static member a1 with instance id a was fenced by member a2.")


# -- offsets ------------------------------------------------------------------------------------

def _commit(g: Group, member: str, epoch: int, version: int = 9) -> int:
    cls = wire.request_class(8)
    answer = send(g.core, 8, version, broker=g.coordinator(), group_id=GROUP, member_id=member,
                  generation_id_or_member_epoch=epoch, group_instance_id=None,
                  topics=[cls.OffsetCommitRequestTopic(name="t", partitions=[
                      cls.OffsetCommitRequestPartition(partition_index=0,
                                                       committed_offset=10,
                                                       committed_metadata="")])])
    return answer.topics[0].partitions[0].error_code


def test_offset_commits_check_the_member_epoch():
    g = Group()
    g.heartbeat("m1", join=True)
    assert _commit(g, "m1", 2) == errors.NONE
    assert _commit(g, "m1", 3) == errors.STALE_MEMBER_EPOCH
    assert _commit(g, "m1", 2, version=8) == errors.UNSUPPORTED_VERSION
    assert _commit(g, "nobody", 2) == errors.UNKNOWN_MEMBER_ID
    cls = wire.request_class(9)
    fetched = send(g.core, 9, 9, broker=g.coordinator(), require_stable=False, groups=[
        cls.OffsetFetchRequestGroup(group_id=GROUP, member_id="m1", member_epoch=1,
                                    topics=None)])
    assert fetched.groups[0].error_code == errors.STALE_MEMBER_EPOCH


# -- describing, listing, failover ----------------------------------------------------------

def test_consumer_group_describe_list_groups_and_describe_groups():
    g = Group()
    g.heartbeat("m1", join=True, server_assignor="range")
    described = send(g.core, 69, 1, broker=g.coordinator(), group_ids=[GROUP, "none"],
                     include_authorized_operations=False)
    group, missing = described.groups
    assert (group.error_code, group.group_state, group.group_epoch, group.assignment_epoch,
            group.assignor_name) == (errors.NONE, "Stable", 2, 2, "range")
    (member,) = group.members
    assert (member.member_id, member.member_epoch, list(member.subscribed_topic_names),
            member.member_type) == ("m1", 2, ["t"], 1)  # 1: the consumer protocol (Kafka 4.4)
    assert [(tp.topic_name, list(tp.partitions)) for tp in member.assignment.topic_partitions] \
        == [("t", [0, 1, 2, 3, 4, 5])]
    assert (missing.error_code, missing.error_message) == (errors.GROUP_ID_NOT_FOUND,
                                                           "Group none not found.")
    listed = send(g.core, 16, 5, broker=g.coordinator(), states_filter=[],
                  types_filter=["Consumer"])
    assert [(x.group_id, x.group_type, x.protocol_type, x.group_state)
            for x in listed.groups] == [(GROUP, "consumer", "consumer", "Stable")]
    classic = send(g.core, 15, 6, broker=g.coordinator(), groups=[GROUP],
                   include_authorized_operations=False)
    assert (classic.groups[0].error_code, classic.groups[0].group_state,
            classic.groups[0].error_message) == (errors.GROUP_ID_NOT_FOUND, "Dead",
                                                 "Group g is not a classic group.")


def test_a_new_coordinator_rebuilds_the_group_and_members_carry_on_with_their_epochs():
    g = Group(brokers=3)
    for member in ("m1", "m2"):
        g.heartbeat(member, join=True)
        g.clock.advance(1200)
    g.settle("m1", "m2")
    owned, epochs = dict(g.owned), dict(g.epochs)
    old = g.coordinator()
    partition = g.core.groups.placement.partition(GROUP)
    g.core.cluster.move_leader(partition, next(b for b in partition.replicas if b != old))
    wrong = send(g.core, 68, 1, broker=old, group_id=GROUP, member_id="m1",
                 member_epoch=epochs["m1"])
    assert wrong.error_code == errors.NOT_COORDINATOR
    for member in ("m1", "m2"):
        answer = g.heartbeat(member)
        assert (answer.error_code, answer.member_epoch) == (errors.NONE, epochs[member])
    assert g.owned == owned
    rebuilt = g.group
    assert (rebuilt.group_epoch, rebuilt.assignment_epoch, rebuilt.state.value) == \
        (epochs["m1"], epochs["m1"], "Stable")
    assert {m: sorted(p for ps in rebuilt.target[m].values() for p in ps)
            for m in ("m1", "m2")} == owned


def _simple_commit(g: Group, offset: int, version: int = 9) -> int:
    """A commit from outside any group protocol (an admin, a consumer that assigned itself)."""
    cls = wire.request_class(8)
    answer = send(g.core, 8, version, broker=g.coordinator(), group_id=GROUP, member_id="",
                  generation_id_or_member_epoch=-1, group_instance_id=None,
                  topics=[cls.OffsetCommitRequestTopic(name="t", partitions=[
                      cls.OffsetCommitRequestPartition(partition_index=0,
                                                       committed_offset=offset,
                                                       committed_metadata="")])])
    return answer.topics[0].partitions[0].error_code


def _committed(g: Group, member: str | None = None, epoch: int = -1) -> int:
    cls = wire.request_class(9)
    answer = send(g.core, 9, 9, broker=g.coordinator(), require_stable=False, groups=[
        cls.OffsetFetchRequestGroup(group_id=GROUP, member_id=member, member_epoch=epoch,
                                    topics=[cls.OffsetFetchRequestTopics(
                                        name="t", partition_indexes=[0])])])
    return answer.groups[0].topics[0].partitions[0].committed_offset


def test_offsets_committed_before_the_group_used_the_consumer_protocol_are_kept():
    g = Group(brokers=3)
    assert _simple_commit(g, 5) == errors.NONE  # an empty classic group holds the offset
    assert g.group.type == "classic"
    g.heartbeat("m1", join=True)
    assert g.group.type == "consumer"
    assert _committed(g, "m1", 2) == 5  # where the member resumes, as on Kafka
    partition = g.core.groups.placement.partition(GROUP)
    g.core.cluster.move_leader(partition, next(b for b in partition.replicas
                                               if b != partition.leader))
    assert _committed(g) == 5  # and a new coordinator reads it back


def test_an_empty_consumer_group_becomes_classic_for_a_classic_member_keeping_offsets():
    g = Group()
    g.heartbeat("m1", join=True)
    assert _commit(g, "m1", 2) == errors.NONE
    assert g.heartbeat("m1", -1).error_code == errors.NONE
    cls = wire.request_class(11)
    joined = send(g.core, 11, 5, broker=g.coordinator(), group_id=GROUP, member_id="",
                  session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                  group_instance_id=None, protocol_type="consumer",
                  protocols=[cls.JoinGroupRequestProtocol(name="range", metadata=b"")])
    assert joined.error_code == errors.MEMBER_ID_REQUIRED
    assert g.group.type == "classic" and _committed(g) == 10


# -- the member states of the package README, arrow by arrow -----------------------------------

def _state(g: Group, member: str) -> str:
    return g.group.members[member].state.name


# -- the member state diagram, edge by edge ------------------------------------------------------

def _range_group(partitions: int) -> Group:
    return Group(partitions=partitions, group_consumer_assignors="range,uniform")


def _joins(g: Group) -> None:
    g.heartbeat("m1", join=True)
    assert _state(g, "m1") == "STABLE"


def _must_revoke(g: Group) -> None:
    _joins(g)
    g.clock.advance(1200)
    g.heartbeat("m2", join=True)
    g.heartbeat("m1")
    assert _state(g, "m1") == "UNREVOKED_PARTITIONS"


def _revokes(g: Group) -> None:
    _must_revoke(g)
    g.heartbeat("m1", owned=[0, 1, 2])
    assert (_state(g, "m1"), g.epochs["m1"]) == ("STABLE", 3)


def _waits(g: Group) -> None:
    _joins(g)
    g.clock.advance(1200)
    g.heartbeat("m2", join=True)
    assert _state(g, "m2") == "UNRELEASED_PARTITIONS"


def _released(g: Group) -> None:
    _revokes(g)
    g.heartbeat("m2")
    assert (_state(g, "m2"), g.owned["m2"]) == ("STABLE", [3, 4, 5])


def _new_epoch_nothing_to_wait_for(g: Group) -> None:
    _joins(g)
    g.clock.advance(1200)
    g.core.cluster.admin_create_partitions("t", 8)  # two more partitions, nobody else here
    g.heartbeat("m1")
    assert (_state(g, "m1"), g.epochs["m1"], g.owned["m1"]) == ("STABLE", 3, list(range(8)))


def _revokes_then_waits(g: Group) -> None:
    """range, 4 partitions: c [0-3]; b joins (b [0,1], c [2,3]); a joins (a [0,1], b [2],
    c [3]): b revokes 0 and 1, then waits for 2, which c has not given up yet."""
    g.heartbeat("c", join=True)
    g.clock.advance(1200)
    g.heartbeat("b", join=True)
    g.heartbeat("c")
    g.heartbeat("c", owned=[2, 3])
    g.heartbeat("b")
    assert g.owned["b"] == [0, 1]
    g.clock.advance(1200)
    g.heartbeat("a", join=True)
    g.heartbeat("b")
    assert (_state(g, "b"), g.owned["b"]) == ("UNREVOKED_PARTITIONS", [])
    g.heartbeat("b", owned=[])
    assert _state(g, "b") == "UNRELEASED_PARTITIONS"
    g.heartbeat("c")
    g.heartbeat("c", owned=[3])
    assert g.assigned(g.heartbeat("b")) == [2] and _state(g, "b") == "STABLE"


def _fenced_while_revoking(g: Group) -> None:
    _must_revoke(g)
    for _ in range(int(REBALANCE_MS / 5000) + 1):
        g.clock.advance(5000)
        g.heartbeat("m2")
    assert "m1" not in g.group.members


#: each edge of the member state diagram in the consumer README -> a group and what walks it
MEMBER_EDGES = {
    ("[*]", "Stable"): (Group, _joins),
    ("Stable", "UnrevokedPartitions"): (Group, _must_revoke),
    ("Stable", "UnreleasedPartitions"): (Group, _waits),
    ("Stable", "Stable"): (lambda: Group(partitions=6), _new_epoch_nothing_to_wait_for),
    ("UnrevokedPartitions", "Stable"): (Group, _revokes),
    ("UnrevokedPartitions", "UnreleasedPartitions"): (lambda: _range_group(4),
                                                      _revokes_then_waits),
    ("UnrevokedPartitions", "[*]"): (Group, _fenced_while_revoking),
    ("UnreleasedPartitions", "Stable"): (Group, _released),
}


def _readme_edges() -> set[tuple[str, str]]:
    from pathlib import Path

    from mockbroker.core.groups import consumer

    text = (Path(consumer.__file__).parent / "README.md").read_text()
    diagram = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    edges = set()
    for line in diagram.splitlines():
        if "-->" in line:
            source, _, rest = line.strip().partition(" --> ")
            edges.add((source, rest.split(":", 1)[0].strip()))
    return edges


def test_every_edge_of_the_member_state_diagram_has_a_scenario():
    assert set(MEMBER_EDGES) == _readme_edges()


@pytest.mark.parametrize("edge", list(MEMBER_EDGES), ids=lambda e: f"{e[0]}-{e[1]}")
def test_each_member_state_edge_is_walked_by_heartbeats(edge):
    make, walk = MEMBER_EDGES[edge]
    walk(make())


def test_the_group_states_follow_from_its_members_and_epochs():
    g = Group()
    g.heartbeat("m1", join=True)
    assert g.group.state.value == "Stable"
    g.heartbeat("m2", join=True)  # within the assignment interval: no target for epoch 3 yet
    assert g.group.state.value == "Assigning"
    g.clock.advance(1200)
    g.heartbeat("m2")
    assert g.group.state.value == "Reconciling"
    g.settle("m1", "m2")
    assert g.group.state.value == "Stable"
    for member in ("m1", "m2"):
        g.heartbeat(member, -1)
    assert g.group.state.value == "Empty"
    group = g.group
    g.core.groups.delete_group(g.core.groups.shard_of(GROUP), group)
    assert group.state.value == "Dead" and g.group is None
