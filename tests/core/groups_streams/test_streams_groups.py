"""KIP-1071 streams groups in the core, driven by StreamsGroupHeartbeat (and the other group
APIs) as a Kafka Streams client frames them, on a manual clock.

Every expected value is what a Kafka 4.4.0 broker answered to the same requests, sent raw with
mockbroker's codec (``group.streams.initial.rebalance.delay.ms=0``, so a group assigns at
once; the assignment interval stays at its default of one second): error codes and messages,
statuses, epochs, the tasks each member is given step by step, and what StreamsGroupDescribe,
ListGroups, DescribeGroups, DeleteGroups, OffsetCommit and OffsetFetch say about the group.
"""

from __future__ import annotations

import pytest

import wire
from tests.core.harness import make_core, send
from wire import errors

HEARTBEAT, DESCRIBE, DESCRIPTION_UPDATE = 88, 89, 93
HB = wire.request_class(HEARTBEAT)
GROUP = "app"
GROUP_RESOURCE = 32
REBALANCE_MS = 30_000
INTERVAL_MS = 1_000  # Kafka's default streams.assignment.interval.ms
SESSION_MS = 45_000
#: status codes
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED, MISSING_INTERNAL_TOPICS = \
    0, 1, 2, 3
SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED = 4, 5
DELAYED = (ASSIGNMENT_DELAYED, "Assignment delayed due to the configured assignment interval.")


# -- topologies as the Streams client sends them ----------------------------------------------

def info(name: str, partitions: int = 0, **configs: str):
    return HB.TopicInfo(name=name, partitions=partitions, replication_factor=0,
                        topic_configs=[HB.KeyValue(key=k.replace("_", "."), value=v)
                                       for k, v in configs.items()])


def sub(sid: str, sources=(), changelogs=(), sinks=(), repartitions=(), copartition=(),
        regex=()):
    return HB.Subtopology(
        subtopology_id=sid, source_topics=list(sources), source_topic_regex=list(regex),
        state_changelog_topics=list(changelogs), repartition_sink_topics=list(sinks),
        repartition_source_topics=list(repartitions),
        copartition_groups=[HB.CopartitionGroup(source_topics=list(s), source_topic_regex=[],
                                                repartition_source_topics=list(r))
                            for s, r in copartition])


def topology(*subs, epoch: int = 0):
    return HB.Topology(epoch=epoch, subtopologies=list(subs))


#: one stateless subtopology reading "input" (4 partitions)
SIMPLE = topology(sub("0", sources=["input"]))
#: one stateful subtopology: "input" and its store's changelog
STATEFUL = topology(sub("0", sources=["input"], changelogs=[info("app-store-changelog")]))
#: a word count: input -> repartition -> aggregation, two stores
WORDS = topology(
    sub("0", sources=["input"], sinks=["app-rep-repartition"],
        changelogs=[info("app-store-changelog", cleanup_policy="compact")]),
    sub("1", repartitions=[info("app-rep-repartition", cleanup_policy="delete")],
        changelogs=[info("app-agg-changelog")]))


def tasks(entries) -> dict[str, list[int]] | None:
    """A response's task list as {subtopology: partitions} (None when not sent)."""
    if entries is None:
        return None
    return {t.subtopology_id: list(t.partitions) for t in entries}


def task_ids(tasks_: dict[str, list[int]]) -> list:
    return [HB.TaskIds(subtopology_id=s, partitions=list(ps)) for s, ps in tasks_.items()]


def statuses(answer) -> list[tuple[int, str]]:
    return [(s.status_code, s.status_detail) for s in answer.status]


class App:
    """A cluster on a manual clock with topic "input" (4 partitions) and the members of
    streams groups, each heartbeating as a Streams client does: what it was last given is
    what it says it owns."""

    def __init__(self, brokers: int = 1, topics: dict[str, int] | None = None, **settings):
        self.core = make_core(brokers, **settings)
        self.clock = self.core.clock
        for name, partitions in (topics or {"input": 4}).items():
            self.core.cluster.create_topic(name, partitions, min(brokers, 3))
        #: member -> its epoch and (active, standby, warmup) as last given
        self.epochs: dict[str, int] = {}
        self.owned: dict[str, tuple[dict, dict, dict]] = {}
        #: member -> its process id ("p-<member>" unless it joined with another)
        self.processes: dict[str, str] = {}

    def coordinator(self, group: str = GROUP) -> int:
        return self.core.groups.placement.coordinator_for(group)

    def group(self, group: str = GROUP):
        return self.core.groups.find_group(group)

    def configure(self, group: str = GROUP, **configs: str):
        """Group configs set with IncrementalAlterConfigs (``streams_num_standby_replicas``
        is ``streams.num.standby.replicas``); the answer's (error code, message)."""
        cls = wire.request_class(44)
        body = cls(resources=[cls.AlterConfigsResource(
            resource_type=GROUP_RESOURCE, resource_name=group, configs=[
                cls.AlterableConfig(name=k.replace("_", "."), config_operation=0, value=v)
                for k, v in configs.items()])], validate_only=False)
        (result,) = send(self.core, 44, 1, body).responses
        return result.error_code, result.error_message

    def join(self, member: str, topology_=SIMPLE, *, group: str = GROUP, **fields):
        return self.heartbeat(member, 0, group=group, topology=topology_, **fields)

    def heartbeat(self, member: str, epoch: int | None = None, *, group: str = GROUP,
                  owned: tuple | None = None, version: int = 1, **fields):
        """One heartbeat: a join (epoch 0) sends the topology and empty task lists, later
        ones the member's last epoch and what it owns."""
        epoch = self.epochs[member] if epoch is None else epoch
        if epoch == 0:
            owned = ({}, {}, {})
        elif owned is None:
            owned = self.owned.get(member, ({}, {}, {}))
        body = dict(group_id=group, member_id=member, member_epoch=epoch,
                    endpoint_information_epoch=0, instance_id=None, rack_id=None,
                    rebalance_timeout_ms=REBALANCE_MS if epoch == 0 else -1, topology=None,
                    active_tasks=task_ids(owned[0]), standby_tasks=task_ids(owned[1]),
                    warmup_tasks=task_ids(owned[2]),
                    process_id=self.processes.setdefault(member, f"p-{member}"),
                    user_endpoint=None, client_tags=[], task_offsets=None,
                    task_end_offsets=None, shutdown_application=False)
        body.update(fields)
        self.processes[member] = body["process_id"]
        answer = send(self.core, HEARTBEAT, version, HB(**body),
                      broker=self.coordinator(group))
        if answer.error_code == errors.NONE and answer.member_epoch >= 0:
            self.epochs[answer.member_id] = answer.member_epoch
            if answer.active_tasks is not None:
                self.owned[answer.member_id] = (tasks(answer.active_tasks),
                                                tasks(answer.standby_tasks),
                                                tasks(answer.warmup_tasks))
        return answer

    def describe(self, group: str = GROUP, version: int = 1, **fields):
        fields.setdefault("include_authorized_operations", False)
        if version >= 1:
            fields.setdefault("include_topology_description", False)
        answer = send(self.core, DESCRIBE, version, broker=self.coordinator(group),
                      group_ids=[group], **fields)
        return answer.groups[0]

    def view(self, group: str = GROUP) -> tuple:
        """(state, group epoch, assignment epoch, {member: (epoch, active, target active)})
        as StreamsGroupDescribe shows them."""
        d = self.describe(group)
        return (d.group_state, d.group_epoch, d.assignment_epoch, {
            m.member_id: (m.member_epoch, tasks(m.assignment.active_tasks),
                          tasks(m.target_assignment.active_tasks)) for m in d.members})


def no_delay(app: App, group: str = GROUP) -> None:
    assert app.configure(group, streams_initial_rebalance_delay_ms="0") == (errors.NONE, None)


def app_with(group: str = GROUP, **kw) -> App:
    app = App(**kw)
    no_delay(app, group)
    return app


def refusal(answer) -> tuple:
    """An error answer: (code, message), with the rest of it as Kafka leaves it."""
    assert (answer.member_id, answer.member_epoch, answer.heartbeat_interval_ms,
            answer.task_offset_interval_ms, answer.acceptable_recovery_lag, answer.status,
            answer.active_tasks, answer.standby_tasks, answer.warmup_tasks,
            answer.partitions_by_user_endpoint, answer.endpoint_information_epoch,
            answer.topology_description_required) == \
        ("", 0, 0, 0, -1, [], None, None, None, None, 0, False)
    return answer.error_code, answer.error_message


# -- 1. checks of the request and its topology -------------------------------------------------

LONG = "a" * 250
INVALID_REQUEST = [
    ("regex", dict(topology=topology(sub("0", regex=["in.*"]))), errors.INVALID_REQUEST,
     "Regular expressions for source topics are not supported yet."),
    ("empty member id", dict(member_id=""), errors.INVALID_REQUEST, "MemberId can't be empty."),
    ("blank group id", dict(group_id=" "), errors.INVALID_REQUEST, "GroupId can't be empty."),
    ("blank instance id", dict(instance_id=" "), errors.INVALID_REQUEST,
     "InstanceId can't be empty."),
    ("empty rack id", dict(rack_id=""), errors.INVALID_REQUEST, "RackId can't be empty."),
    ("no rebalance timeout", dict(rebalance_timeout_ms=-1), errors.INVALID_REQUEST,
     "RebalanceTimeoutMs must be provided in first request."),
    ("null active tasks", dict(active_tasks=None), errors.INVALID_REQUEST,
     "ActiveTasks must be empty when (re-)joining."),
    ("tasks on join", dict(active_tasks=task_ids({"0": [1]})), errors.INVALID_REQUEST,
     "ActiveTasks must be empty when (re-)joining."),
    ("standby tasks on join", dict(standby_tasks=task_ids({"0": [1]})), errors.INVALID_REQUEST,
     "StandbyTasks must be empty when (re-)joining."),
    ("null topology", dict(topology=None), errors.INVALID_REQUEST,
     "Topology must be non-null when (re-)joining."),
    ("changelog with a partition count",
     dict(topology=topology(sub("0", sources=["input"],
                                changelogs=[info("g-store-changelog", 3)]))),
     errors.STREAMS_INVALID_TOPOLOGY,
     "Changelog topic g-store-changelog must have an undefined partition count, but it is "
     "set to 3."),
    ("static leave without instance", dict(member_epoch=-2, topology=None),
     errors.INVALID_REQUEST, "InstanceId can't be null."),
    ("epoch -3", dict(member_epoch=-3, topology=None), errors.INVALID_REQUEST,
     "MemberEpoch is -3, but must be greater than or equal to -2."),
    ("topology on a heartbeat", dict(member_epoch=5), errors.INVALID_REQUEST,
     "Topology can only be provided when (re-)joining."),
    ("partial task lists", dict(member_epoch=5, topology=None, standby_tasks=None),
     errors.INVALID_REQUEST, "If one task-type is non-null, all must be non-null."),
    ("internal topics",
     dict(topology=topology(sub("0", sources=["__transaction_state", "__consumer_offsets"]))),
     errors.STREAMS_INVALID_TOPOLOGY,
     "Use of Kafka internal topics __transaction_state,__consumer_offsets in a Kafka Streams "
     "topology is prohibited."),
    ("internal sink and changelog",
     dict(topology=topology(sub("0", sources=["input"], sinks=["__consumer_offsets"],
                                changelogs=[info("__transaction_state")]))),
     errors.STREAMS_INVALID_TOPOLOGY,
     "Use of Kafka internal topics __consumer_offsets,__transaction_state in a Kafka Streams "
     "topology is prohibited."),
    ("invalid names", dict(topology=topology(sub("0", sources=["zz topic!", "bad topic!",
                                                               LONG]))),
     errors.STREAMS_INVALID_TOPOLOGY,
     f"Topic names zz topic!,bad topic!,{LONG} are not valid topic names."),
    ("unknown group", dict(group_id="nog", member_epoch=1, topology=None),
     errors.GROUP_ID_NOT_FOUND, "Streams group nog not found."),
    ("leave of an unknown group", dict(group_id="nog", member_epoch=-1, topology=None),
     errors.GROUP_ID_NOT_FOUND, "Group nog not found."),
]


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("case, fields, code, message", INVALID_REQUEST,
                         ids=[c[0] for c in INVALID_REQUEST])
def test_a_request_kafka_refuses_is_answered_with_its_code_and_message(case, fields, code,
                                                                       message, version):
    app = App()
    body = dict(topology=SIMPLE)
    body.update(fields)
    answer = app.heartbeat("m1", body.pop("member_epoch", 0), version=version,
                           group=body.pop("group_id", GROUP), **body)
    assert refusal(answer) == (code, message)
    assert app.group() is None  # a refused join leaves no group behind


def test_topology_updates_are_refused_and_an_older_topology_is_told_it_is_stale():
    app = app_with()
    newer = topology(sub("0", sources=["input"]), epoch=1)
    assert app.join("m1", newer).member_epoch == 2
    other = topology(sub("0", sources=["input"], sinks=["x-repartition"]), epoch=1)
    assert refusal(app.join("m3", other)) == (errors.INVALID_REQUEST,
                                              "Topology updates are not supported yet.")
    same_but_later = topology(sub("0", sources=["input"]), epoch=2)
    assert refusal(app.join("m4", same_but_later)) == (
        errors.INVALID_REQUEST, "Topology updates are not supported yet.")
    stale = app.join("m2", SIMPLE)  # epoch 0: the group keeps its own
    assert (stale.error_code, stale.member_epoch, statuses(stale)) == (errors.NONE, 2, [
        (STALE_TOPOLOGY, "The member's topology epoch 0 is behind the group's topology epoch 1."),
        DELAYED])
    described = app.describe()
    assert described.topology.epoch == 1
    assert {m.member_id: m.topology_epoch for m in described.members} == {"m1": 1, "m2": 0}
    assert app.view()[:3] == ("Assigning", 3, 2)


def test_tasks_a_member_says_it_owns_must_exist_in_the_topology():
    app = app_with()
    app.join("m1")
    assert refusal(app.heartbeat("m1", owned=({"9": [0]}, {}, {}))) == (
        errors.INVALID_REQUEST, "Subtopology 9 does not exist in the topology.")
    assert refusal(app.heartbeat("m1", owned=({"0": [7]}, {}, {}))) == (
        errors.INVALID_REQUEST,
        "Task 7 for subtopology 0 is invalid. Number of tasks for this subtopology: 4")


# -- 2. the topology against the topics there are ---------------------------------------------

def test_missing_source_topics_leave_the_group_not_ready():
    app = app_with()
    answer = app.join("a", topology(sub("0", sources=["input", "nosuch1", "nosuch2"]),
                                    sub("1", sources=["nosuch3", "nosuch4", "nosuch5"])))
    assert (answer.error_code, answer.member_epoch, tasks(answer.active_tasks),
            statuses(answer)) == (errors.NONE, 2, {}, [
                (MISSING_SOURCE_TOPICS, "Source topics nosuch1, nosuch2, nosuch3 and 2 "
                                        "additional topics are missing.")])
    d = app.describe(include_topology_description=True)
    assert (d.group_state, d.group_epoch, d.assignment_epoch, d.topology_description_status,
            d.assignor_name) == ("NotReady", 2, 2, 1, "sticky")
    assert [(s.subtopology_id, list(s.source_topics)) for s in d.topology.subtopologies] == [
        ("0", ["input", "nosuch1", "nosuch2"]), ("1", ["nosuch3", "nosuch4", "nosuch5"])]


def test_the_broker_creates_missing_internal_topics_and_then_assigns_every_task():
    app = app_with()
    joined = app.join("m1", WORDS, user_endpoint=HB.Endpoint(host="h1", port=8080))
    assert (joined.member_epoch, tasks(joined.active_tasks), statuses(joined)) == (2, {}, [
        (MISSING_INTERNAL_TOPICS, "Internal topics are missing: app-agg-changelog, "
                                  "app-store-changelog, app-rep-repartition")])
    assert [(e.user_endpoint.host, e.user_endpoint.port, e.active_partitions,
             e.standby_partitions) for e in joined.partitions_by_user_endpoint] == \
        [("h1", 8080, [], [])]
    topics = app.core.cluster.topics
    for name in ("app-store-changelog", "app-rep-repartition", "app-agg-changelog"):
        assert len(topics[name].partitions) == 4  # as many as "input"
        assert len(topics[name].partitions[0].replicas) == 1  # replication factor -1: default
    described = send(app.core, 32, 4, resources=[wire.request_class(32).DescribeConfigsResource(
        resource_type=2, resource_name=name, configuration_keys=["cleanup.policy"])
        for name in ("app-store-changelog", "app-rep-repartition", "app-agg-changelog")],
        include_synonyms=False, include_documentation=False)
    assert [(r.resource_name, r.configs[0].value, r.configs[0].config_source)
            for r in described.results] == [("app-store-changelog", "compact", 1),
                                             ("app-rep-repartition", "delete", 1),
                                             ("app-agg-changelog", "delete", 5)]
    app.clock.advance(INTERVAL_MS)
    ready = app.heartbeat("m1")
    assert (ready.member_epoch, tasks(ready.active_tasks), tasks(ready.standby_tasks),
            statuses(ready), ready.endpoint_information_epoch) == \
        (3, {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]}, {}, [], 1)
    (endpoint,) = ready.partitions_by_user_endpoint
    # (Kafka lists the subtopologies in no fixed order)
    assert sorted((tp.topic, list(tp.partitions)) for tp in endpoint.active_partitions) == [
        ("app-rep-repartition", [0, 1, 2, 3]), ("input", [0, 1, 2, 3])]
    assert app.view() == ("Stable", 3, 3, {"m1": (3, {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]},
                                                  {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]})})


def test_an_existing_internal_topic_with_another_partition_count_is_reported():
    app = app_with("gw", topics={"input": 4, "gw-store-changelog": 2})
    answer = app.join("a", topology(sub("0", sources=["input"],
                                        changelogs=[info("gw-store-changelog")])), group="gw")
    assert (answer.error_code, statuses(answer)) == (errors.NONE, [
        (INCORRECTLY_PARTITIONED, "Existing topic gw-store-changelog has different number of "
                                  "partitions: expected 4, found 2")])
    assert app.describe("gw").group_state == "NotReady"


def test_copartitioned_sources_must_have_as_many_partitions():
    app = app_with(topics={"left": 2, "right": 3})
    answer = app.join("a", topology(sub("0", sources=["left", "right"],
                                        copartition=[([0, 1], [])])))
    assert (answer.error_code, statuses(answer)) == (errors.NONE, [
        (INCORRECTLY_PARTITIONED,
         "Following topics do not have the same number of partitions: [{left=2, right=3}]")])


def test_repartition_topics_whose_partitions_cannot_be_worked_out_are_invalid():
    app = app_with()
    loop = topology(sub("0", sinks=["b-repartition"], repartitions=[info("a-repartition")]),
                    sub("1", sinks=["a-repartition"], repartitions=[info("b-repartition")]))
    assert refusal(app.join("a", loop)) == (
        errors.STREAMS_INVALID_TOPOLOGY,
        "Failed to compute number of partitions for all repartition topics. There may be "
        "loops in the topology that cannot be resolved.")
    never_sunk = topology(sub("0", sources=["input"]),
                          sub("1", repartitions=[info("c-repartition")]))
    assert refusal(app.join("a", never_sunk)) == (
        errors.STREAMS_INVALID_TOPOLOGY,
        "Failed to compute number of partitions for all repartition topics, because a "
        "repartition source topic is never used as a sink topic.")


# -- 3. assignment and reconciliation over several processes ----------------------------------

def test_a_second_member_gets_its_tasks_once_the_first_has_revoked_them():
    app = app_with()
    first = app.join("m1")
    assert (first.member_epoch, tasks(first.active_tasks), statuses(first)) == \
        (2, {"0": [0, 1, 2, 3]}, [])
    second = app.join("m2")
    assert (second.member_epoch, tasks(second.active_tasks), statuses(second)) == \
        (2, {}, [DELAYED])
    assert app.view()[:3] == ("Assigning", 3, 2)
    still = app.heartbeat("m1")  # within the interval: nothing yet
    assert (still.member_epoch, still.active_tasks, statuses(still)) == (2, None, [DELAYED])
    app.clock.advance(INTERVAL_MS)
    revoking = app.heartbeat("m1", owned=({"0": [0, 1, 2, 3]}, {}, {}))
    # m1 keeps its epoch until it has given up 2 and 3
    assert (revoking.member_epoch, tasks(revoking.active_tasks), statuses(revoking)) == \
        (2, {"0": [0, 1]}, [])
    waiting = app.heartbeat("m2")
    assert (waiting.member_epoch, waiting.active_tasks) == (3, None)
    assert app.view() == ("Reconciling", 3, 3, {"m1": (2, {"0": [0, 1]}, {"0": [0, 1]}),
                                                 "m2": (3, {}, {"0": [2, 3]})})
    revoked = app.heartbeat("m1")
    assert (revoked.member_epoch, revoked.active_tasks) == (3, None)
    granted = app.heartbeat("m2")
    assert (granted.member_epoch, tasks(granted.active_tasks)) == (3, {"0": [2, 3]})
    assert app.view() == ("Stable", 3, 3, {"m1": (3, {"0": [0, 1]}, {"0": [0, 1]}),
                                           "m2": (3, {"0": [2, 3]}, {"0": [2, 3]})})


def test_a_member_that_leaves_hands_its_tasks_to_the_other():
    app = app_with()
    _two_stable(app)
    left = app.heartbeat("m1", -1)
    assert (left.error_code, left.member_id, left.member_epoch, left.status,
            left.heartbeat_interval_ms, left.acceptable_recovery_lag) == \
        (errors.NONE, "m1", -1, [], 0, -1)
    assert app.view()[:3] == ("Assigning", 4, 3)
    assert statuses(app.heartbeat("m2")) == [DELAYED]
    app.clock.advance(INTERVAL_MS)
    taken = app.heartbeat("m2")
    assert (taken.member_epoch, tasks(taken.active_tasks)) == (4, {"0": [0, 1, 2, 3]})
    assert app.view()[:3] == ("Stable", 4, 4)


def _two_stable(app: App, topology_=SIMPLE, **fields) -> None:
    """m1 and m2 (two processes) settled at epoch 3 as on Kafka."""
    assert app.join("m1", topology_, **fields.get("m1", {})).member_epoch == 2
    assert app.join("m2", topology_, **fields.get("m2", {})).member_epoch == 2
    app.clock.advance(INTERVAL_MS)
    for member in ("m1", "m2", "m1", "m2"):
        assert app.heartbeat(member).error_code == errors.NONE
    assert app.view()[:3] == ("Stable", 3, 3)


def test_members_with_stale_epochs_are_fenced():
    app = app_with()
    _two_stable(app)
    assert refusal(app.heartbeat("m2", 8)) == (
        errors.FENCED_MEMBER_EPOCH,
        "The streams group member has a greater member epoch (8) than the one known by the "
        "group coordinator (3). The member must abandon all its partitions and rejoin.")
    assert refusal(app.heartbeat("m2", 2)) == (
        errors.FENCED_MEMBER_EPOCH,
        "The streams group member has a smaller member epoch (2) than the one known by the "
        "group coordinator (3). The member must abandon all its partitions and rejoin.")
    assert refusal(app.heartbeat("zz", 3)) == (errors.UNKNOWN_MEMBER_ID,
                                               "Member zz is not a member of group app.")


def test_standby_replicas_active_tasks_are_demoted_at_once():
    app = App(topics={"input": 4, "app-store-changelog": 4})
    assert app.configure(streams_initial_rebalance_delay_ms="0",
                         streams_num_standby_replicas="1") == (errors.NONE, None)
    s1 = app.join("s1", STATEFUL, instance_id="inst-1")
    assert (s1.member_epoch, tasks(s1.active_tasks), tasks(s1.standby_tasks)) == \
        (2, {"0": [0, 1, 2, 3]}, {})
    s2 = app.join("s2", STATEFUL, instance_id="inst-2")
    assert (s2.member_epoch, tasks(s2.active_tasks), statuses(s2)) == (2, {}, [DELAYED])
    app.clock.advance(INTERVAL_MS)
    s1 = app.heartbeat("s1", instance_id="inst-1")
    # 2 and 3 become standbys of s1 at once; it keeps its epoch while revoking nothing else
    assert (s1.member_epoch, tasks(s1.active_tasks), tasks(s1.standby_tasks)) == \
        (2, {"0": [0, 1]}, {"0": [2, 3]})
    s2 = app.heartbeat("s2", instance_id="inst-2")
    assert (s2.member_epoch, tasks(s2.active_tasks), tasks(s2.standby_tasks)) == \
        (3, {}, {"0": [0, 1]})
    s1 = app.heartbeat("s1", instance_id="inst-1")
    assert (s1.member_epoch, s1.active_tasks) == (3, None)
    s2 = app.heartbeat("s2", instance_id="inst-2")
    assert (s2.member_epoch, tasks(s2.active_tasks), tasks(s2.standby_tasks)) == \
        (3, {"0": [2, 3]}, {"0": [0, 1]})
    d = app.describe()
    assert (d.group_state, d.group_epoch, d.assignment_epoch) == ("Stable", 3, 3)
    assert {m.member_id: (m.instance_id, m.member_epoch, tasks(m.assignment.active_tasks),
                          tasks(m.assignment.standby_tasks)) for m in d.members} == {
        "s1": ("inst-1", 3, {"0": [0, 1]}, {"0": [2, 3]}),
        "s2": ("inst-2", 3, {"0": [2, 3]}, {"0": [0, 1]})}


def test_asking_for_standby_replicas_rebalances_a_stable_group():
    app = App(topics={"input": 4, "app-store-changelog": 4})
    no_delay(app)
    _two_stable(app, STATEFUL)
    assert app.configure(streams_num_standby_replicas="1") == (errors.NONE, None)
    for member in ("m1", "m2"):
        answer = app.heartbeat(member)
        assert (answer.member_epoch, answer.active_tasks, statuses(answer)) == \
            (3, None, [DELAYED])
    assert app.view()[:3] == ("Assigning", 4, 3)
    app.clock.advance(INTERVAL_MS)
    m1, m2 = app.heartbeat("m1"), app.heartbeat("m2")
    assert [(a.member_epoch, tasks(a.active_tasks), tasks(a.standby_tasks)) for a in (m1, m2)] \
        == [(4, {"0": [0, 1]}, {"0": [2, 3]}), (4, {"0": [2, 3]}, {"0": [0, 1]})]
    assert app.view()[:3] == ("Stable", 4, 4)


def test_group_configs_of_streams_groups_are_checked():
    app = App()
    assert app.configure(streams_num_standby_replicas="3") == (
        errors.INVALID_CONFIG, "streams.num.standby.replicas must be less than or equal to 2")
    assert app.configure(streams_session_timeout_ms="1000") == (
        errors.INVALID_CONFIG,
        "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.")


# -- 4. static members --------------------------------------------------------------------------

def _static_pair(app: App) -> None:
    assert app.configure(streams_initial_rebalance_delay_ms="0",
                         streams_num_standby_replicas="1") == (errors.NONE, None)
    app.join("s1", STATEFUL, instance_id="inst-1")
    app.join("s2", STATEFUL, instance_id="inst-2")
    app.clock.advance(INTERVAL_MS)
    for member in ("s1", "s2", "s1", "s2"):
        answer = app.heartbeat(member, instance_id=f"inst-{member[1]}")
        assert answer.error_code == errors.NONE


def test_a_static_member_leaves_and_comes_back_under_a_new_id_with_its_tasks():
    app = App(topics={"input": 4, "app-store-changelog": 4})
    _static_pair(app)
    left = app.heartbeat("s1", -2, instance_id="inst-1")
    assert (left.error_code, left.member_id, left.member_epoch, left.status) == \
        (errors.NONE, "s1", -2, [])
    d = app.describe()
    assert (d.group_state, d.group_epoch, d.assignment_epoch) == ("Reconciling", 3, 3)
    assert {m.member_id: (m.member_epoch, tasks(m.assignment.active_tasks),
                          tasks(m.assignment.standby_tasks)) for m in d.members} == {
        "s1": (-2, {"0": [0, 1]}, {"0": [2, 3]}), "s2": (3, {"0": [2, 3]}, {"0": [0, 1]})}
    assert refusal(app.heartbeat("s1", 3, instance_id="inst-1")) == (
        errors.FENCED_MEMBER_EPOCH,
        "The streams group member has a greater member epoch (3) than the one known by the "
        "group coordinator (-2). The member must abandon all its partitions and rejoin.")
    assert refusal(app.join("s9", STATEFUL, instance_id="inst-2")) == (
        errors.UNRELEASED_INSTANCE_ID,
        "Static member s9 with instance id inst-2 cannot join the group because the instance "
        "id is owned by s2 member.")
    back = app.join("s1b", STATEFUL, instance_id="inst-1", process_id="p-s1")  # same process
    assert (back.error_code, back.member_id, back.member_epoch, tasks(back.active_tasks),
            tasks(back.standby_tasks)) == (errors.NONE, "s1b", 3, {"0": [0, 1]}, {"0": [2, 3]})
    assert refusal(app.heartbeat("s1", 3, instance_id="inst-1")) == (
        errors.FENCED_INSTANCE_ID,
        "Static member s1 with instance id inst-1 was fenced by member s1b.")
    assert refusal(app.heartbeat("s1b", 3, instance_id="inst-x")) == (
        errors.UNKNOWN_MEMBER_ID, "Instance id inst-x is unknown.")
    d = app.describe()
    assert (d.group_state, d.group_epoch, d.assignment_epoch) == ("Stable", 3, 3)
    assert sorted(m.member_id for m in d.members) == ["s1b", "s2"]
    shutdown = app.heartbeat("s2", instance_id="inst-2", shutdown_application=True)
    message = ("Streams group member s2 encountered a fatal error and requested a shutdown for "
               "the entire application.")
    assert statuses(shutdown) == [(SHUTDOWN_APPLICATION, message)]
    other = app.heartbeat("s1b", instance_id="inst-1")
    assert (other.member_epoch, statuses(other)) == (3, [(SHUTDOWN_APPLICATION, message)])


# -- 5. a member's session ends ------------------------------------------------------------------

def test_a_member_whose_session_ends_is_fenced_and_its_tasks_go_to_the_other():
    app = app_with()
    _two_stable(app)
    app.clock.advance(SESSION_MS - 5_000)
    assert app.heartbeat("m1").error_code == errors.NONE
    app.clock.advance(5_000)  # m2 has not been heard of for a whole session
    assert refusal(app.heartbeat("m2")) == (errors.UNKNOWN_MEMBER_ID,
                                            "Member m2 is not a member of group app.")
    assert app.view()[:3] == ("Assigning", 4, 3)
    taken = app.heartbeat("m1")
    assert (taken.member_epoch, tasks(taken.active_tasks)) == (4, {"0": [0, 1, 2, 3]})


# -- 6. a new coordinator ----------------------------------------------------------------------

def test_a_new_coordinator_rebuilds_the_group_from_its_records():
    app = App(brokers=3, topics={"input": 4, "app-store-changelog": 4})
    _static_pair(app)
    before = app.describe()
    group = app.group()
    old = app.coordinator()
    partition = app.core.groups.placement.partition(GROUP)
    app.core.cluster.move_leader(partition, next(b for b in partition.replicas if b != old))
    assert app.coordinator() != old
    moved = app.group()
    assert moved is not group
    wrong = send(app.core, HEARTBEAT, 1, broker=old, group_id=GROUP, member_id="s1",
                 member_epoch=3, instance_id="inst-1")
    assert refusal(wrong) == (errors.NOT_COORDINATOR, None)
    after = app.describe()
    assert (after.group_state, after.group_epoch, after.assignment_epoch) == \
        (before.group_state, before.group_epoch, before.assignment_epoch) == ("Stable", 3, 3)
    assert sorted(after.members, key=lambda m: m.member_id) == \
        sorted(before.members, key=lambda m: m.member_id)
    # no record holds the topology as configured: until a heartbeat it is shown as sent
    assert [[(t.name, t.partitions) for t in s.state_changelog_topics]
            for s in after.topology.subtopologies] == [[("app-store-changelog", 0)]]
    for member in ("s1", "s2"):
        answer = app.heartbeat(member, instance_id=f"inst-{member[1]}")
        assert (answer.error_code, answer.member_epoch, answer.active_tasks) == \
            (errors.NONE, 3, None)
    assert app.describe().topology == before.topology
    # it carries on: one leaves, the other takes over its tasks
    assert app.heartbeat("s1", -1, instance_id="inst-1").member_epoch == -1
    app.clock.advance(INTERVAL_MS)
    taken = app.heartbeat("s2", instance_id="inst-2")
    assert (taken.member_epoch, tasks(taken.active_tasks)) == (4, {"0": [0, 1, 2, 3]})


# -- 7. offsets ---------------------------------------------------------------------------------

def _commit(app: App, member: str, epoch: int, partitions, topic: str = "input",
            version: int = 9) -> list[int]:
    cls = wire.request_class(8)
    answer = send(app.core, 8, version, broker=app.coordinator(), group_id=GROUP,
                  generation_id_or_member_epoch=epoch, member_id=member,
                  group_instance_id=None, retention_time_ms=-1,
                  topics=[cls.OffsetCommitRequestTopic(name=topic, partitions=[
                      cls.OffsetCommitRequestPartition(partition_index=p, committed_offset=5,
                                                       committed_leader_epoch=-1,
                                                       committed_metadata="")
                      for p in partitions])])
    return [p.error_code for p in answer.topics[0].partitions]


def _fetch(app: App, member: str, epoch: int):
    cls = wire.request_class(9)
    answer = send(app.core, 9, 9, broker=app.coordinator(), require_stable=False, groups=[
        cls.OffsetFetchRequestGroup(group_id=GROUP, member_id=member, member_epoch=epoch,
                                    topics=None)])
    return answer.groups[0]


def test_offset_commits_are_checked_against_the_epochs_tasks_were_assigned_at():
    app = App(topics={"input": 4, "other": 1})
    no_delay(app)
    app.join("m1")
    stale = errors.STALE_MEMBER_EPOCH
    assert _commit(app, "m1", 2, [0]) == [errors.NONE]
    assert _commit(app, "m1", 2, [0], version=8) == [errors.UNSUPPORTED_VERSION]
    assert _commit(app, "m1", 3, [0]) == [stale]  # newer than the member's
    app.join("m2")
    app.clock.advance(INTERVAL_MS)
    app.heartbeat("m1")  # now revoking 2 and 3, at epoch 2
    assert _commit(app, "m1", 1, [2]) == [stale]  # older than the task's assignment epoch 2
    app.heartbeat("m1")
    app.heartbeat("m2")
    assert (app.epochs["m1"], app.epochs["m2"]) == (3, 3)
    assert _commit(app, "m1", 2, [0, 1]) == [errors.NONE, errors.NONE]  # held since epoch 2
    assert _commit(app, "m1", 2, [2]) == [stale]  # no longer its task
    assert _commit(app, "m2", 2, [2]) == [stale]  # its task only since epoch 3
    assert _commit(app, "m2", 2, [0], topic="other") == [stale]  # not in the topology
    assert _commit(app, "m2", 3, [2]) == [errors.NONE]
    assert _commit(app, "zz", 3, [2]) == [errors.UNKNOWN_MEMBER_ID]
    old = _fetch(app, "m1", 2)
    assert (old.error_code, old.topics) == (errors.STALE_MEMBER_EPOCH, [])
    current = _fetch(app, "m1", 3)
    assert current.error_code == errors.NONE
    assert sorted((t.name, p.partition_index, p.committed_offset)
                  for t in current.topics for p in t.partitions) == \
        [("input", 0, 5), ("input", 1, 5), ("input", 2, 5)]
    for member in ("m1", "m2"):
        app.heartbeat(member, -1)
    assert _commit(app, "", -1, [3]) == [errors.NONE]  # an admin's, to the empty group


def test_what_no_record_holds_is_lost_with_a_new_groups_first_answer():
    app = app_with()
    joined = app.join("m1", STATEFUL, shutdown_application=True, task_offsets=[
        HB.TaskOffset(subtopology_id="0", partition=1, offset=7)])
    message = ("Streams group member m1 encountered a fatal error and requested a shutdown for "
               "the entire application.")
    assert statuses(joined)[-1] == (SHUTDOWN_APPLICATION, message)
    assert app.describe().members[0].task_offsets == []
    app.clock.advance(INTERVAL_MS)
    assert SHUTDOWN_APPLICATION not in [code for code, _ in statuses(app.heartbeat("m1"))]


# -- 8. the other group APIs ---------------------------------------------------------------------

def test_list_describe_and_delete_see_a_streams_group():
    app = app_with()
    no_delay(app, "gm")
    _two_stable(app)
    app.join("a", topology(sub("0", sources=["nosuch"])), group="gm")
    listed = send(app.core, 16, 5, broker=app.coordinator(), states_filter=[],
                  types_filter=[])
    assert sorted((g.group_id, g.protocol_type, g.group_state, g.group_type)
                  for g in listed.groups) == [("app", "streams", "Stable", "streams"),
                                              ("gm", "streams", "NotReady", "streams")]
    not_ready = send(app.core, 16, 5, broker=app.coordinator(), states_filter=["not_ready"],
                     types_filter=["streams"])
    assert [(g.group_id, g.group_state) for g in not_ready.groups] == [("gm", "NotReady")]
    classic = send(app.core, 15, 6, broker=app.coordinator(), groups=[GROUP],
                   include_authorized_operations=False).groups[0]
    assert (classic.error_code, classic.error_message, classic.group_state) == \
        (errors.GROUP_ID_NOT_FOUND, "Group app is not a classic group.", "Dead")
    consumer = send(app.core, 69, 1, broker=app.coordinator(), group_ids=[GROUP],
                    include_authorized_operations=False).groups[0]
    assert (consumer.error_code, consumer.error_message) == \
        (errors.GROUP_ID_NOT_FOUND, "Group app is not a consumer group.")
    deleted = send(app.core, 42, 2, broker=app.coordinator(), groups_names=[GROUP])
    assert [(r.group_id, r.error_code, r.error_message) for r in deleted.results] == \
        [(GROUP, errors.NON_EMPTY_GROUP, None)]
    for member in ("m1", "m2"):
        app.heartbeat(member, -1)
    assert app.describe().group_state == "Empty"
    deleted = send(app.core, 42, 2, broker=app.coordinator(), groups_names=[GROUP])
    assert [(r.group_id, r.error_code) for r in deleted.results] == [(GROUP, errors.NONE)]
    listed = send(app.core, 16, 5, broker=app.coordinator(), states_filter=[],
                  types_filter=[])
    assert [g.group_id for g in listed.groups] == ["gm"]


def test_deleting_a_streams_group_keeps_its_internal_topics():
    app = app_with()
    app.join("m1", WORDS)
    app.heartbeat("m1", -1)
    deleted = send(app.core, 42, 2, broker=app.coordinator(), groups_names=[GROUP])
    assert deleted.results[0].error_code == errors.NONE
    assert {"app-store-changelog", "app-rep-repartition", "app-agg-changelog"} <= \
        set(app.core.cluster.topics)


# -- 9. StreamsGroupDescribe -------------------------------------------------------------------

def test_describe_shows_the_configured_topology_members_and_assignments():
    app = app_with()
    app.join("m1", WORDS, user_endpoint=HB.Endpoint(host="h1", port=8080))
    app.clock.advance(INTERVAL_MS)
    app.heartbeat("m1")
    d = app.describe(include_authorized_operations=True, include_topology_description=True)
    assert (d.error_code, d.error_message, d.group_id, d.group_state, d.group_epoch,
            d.assignment_epoch, d.authorized_operations, d.topology_description,
            d.topology_description_status, d.assignor_name) == \
        (errors.NONE, None, GROUP, "Stable", 3, 3, 3400, None, 1, "sticky")
    described = [(s.subtopology_id, list(s.source_topics), list(s.repartition_sink_topics),
                  [(t.name, t.partitions, t.replication_factor,
                    [(c.key, c.value) for c in t.topic_configs])
                   for t in s.state_changelog_topics],
                  [(t.name, t.partitions, t.replication_factor,
                    [(c.key, c.value) for c in t.topic_configs])
                   for t in s.repartition_source_topics]) for s in d.topology.subtopologies]
    assert (d.topology.epoch, described) == (0, [
        ("0", ["input"], ["app-rep-repartition"],
         [("app-store-changelog", 4, 0, [("cleanup.policy", "compact")])], []),
        ("1", [], [], [("app-agg-changelog", 4, 0, [])],
         [("app-rep-repartition", 4, 0, [("cleanup.policy", "delete")])])])
    (m,) = d.members
    every = [("0", [0, 1, 2, 3]), ("1", [0, 1, 2, 3])]
    assert (m.member_id, m.member_epoch, m.instance_id, m.rack_id, m.client_id, m.client_host,
            m.topology_epoch, m.process_id, (m.user_endpoint.host, m.user_endpoint.port),
            m.client_tags, m.task_offsets, m.task_end_offsets, m.is_classic) == \
        ("m1", 3, None, None, "app", "/127.0.0.1", 0, "p-m1", ("h1", 8080), [], [], [],
         False)
    for assignment in (m.assignment, m.target_assignment):
        assert ([(t.subtopology_id, list(t.partitions)) for t in assignment.active_tasks],
                assignment.standby_tasks, assignment.warmup_tasks) == (every, [], [])
    v0 = app.describe(version=0)
    assert (v0.group_state, v0.assignor_name, v0.topology_description_status) == \
        ("Stable", None, 0)
    not_asked = app.describe()
    assert (not_asked.topology_description_status, not_asked.authorized_operations) == \
        (0, -(1 << 31))


def test_describe_of_an_empty_or_unknown_group_id():
    app = App()
    answer = send(app.core, DESCRIBE, 1, group_ids=["", "nog"],
                  include_authorized_operations=False, include_topology_description=True)
    assert [(g.group_id, g.error_code, g.error_message, g.group_state, g.group_epoch,
             g.topology, g.members, g.topology_description_status, g.assignor_name)
            for g in answer.groups] == [
        ("", errors.INVALID_GROUP_ID, None, "", 0, None, [], 0, None),
        ("nog", errors.GROUP_ID_NOT_FOUND, "Group nog not found.", "", 0, None, [], 0, None)]


# -- 10. StreamsGroupTopologyDescriptionUpdate --------------------------------------------------

def test_a_topology_description_update_finds_no_plugin():
    app = app_with()
    app.join("m1")
    cls = wire.request_class(DESCRIPTION_UPDATE)
    body = cls(group_id=GROUP, member_id="m1", topology_epoch=0,
               topology_description=cls.TopologyDescription(subtopologies=[],
                                                            global_stores=[]))
    answer = send(app.core, DESCRIPTION_UPDATE, 0, body, broker=app.coordinator())
    assert (answer.error_code, answer.error_message) == (
        errors.UNSUPPORTED_VERSION,
        "The broker has no streams group topology description plugin configured.")
