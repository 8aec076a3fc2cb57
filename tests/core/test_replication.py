"""Replication as the controller keeps it: ISR, eligible leader replicas (KIP-966), elections,
unclean elections with their truncation, min.insync.replicas, reassignments and the
preferred-leader rebalance, checked against what Kafka 4.4 did in the same steps."""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.controller import states
from tests.core.harness import make_core, send
from wire import errors, records

ELECT, ALTER, LIST = 43, 45, 46


def topic(core, name, replicas, **configs):
    core.cluster.create_topic(name, configs={k.replace("_", "."): str(v)
                                             for k, v in configs.items()},
                              assignments=[(0, replicas)])
    return core.cluster.topics[name].partitions[0]


def state(p):
    return p.leader, p.isr, p.elr, p.last_known_elr


def produce(core, name, *values, acks=-1):
    cls = wire.request_class(0)
    partition = core.cluster.topics[name].partitions[0]
    batch = records.encode_batch([(None, v, [], 1) for v in values])
    body = cls(acks=acks, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name=name, partition_data=[cls.PartitionProduceData(index=0, records=batch)])])
    out = send(core, 0, 9, body, broker=max(partition.leader, 0))
    return None if out is None else out.responses[0].partition_responses[0].error_code


def fetch(core, name, offset):
    cls = wire.request_class(1)
    partition = core.cluster.topics[name].partitions[0]
    body = cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_id=0,
               session_epoch=-1, topics=[cls.FetchTopic(
                   topic=name, topic_id=partition.topic.topic_id, partitions=[
                       cls.FetchPartition(partition=0, current_leader_epoch=-1,
                                          fetch_offset=offset, log_start_offset=-1,
                                          partition_max_bytes=1 << 20)])])
    part = send(core, 1, 12, body, broker=partition.leader).responses[0].partitions[0]
    return part.error_code, part.high_watermark


# -- the ISR and eligible leader replicas, broker by broker -------------------------------------

def test_stopped_brokers_leave_the_isr_for_the_eligible_leaders_below_min_isr():
    core = make_core(3)
    p = topic(core, "m3", [2, 1, 0], min_insync_replicas=3)
    core.stop_broker(2)
    assert (state(p), p.leader_epoch) == ((1, [1, 0], [2], []), 1)
    core.stop_broker(1)
    assert (state(p), p.leader_epoch) == ((0, [0], [1, 2], []), 2)


def test_the_last_isr_member_stopping_leaves_no_leader_and_its_last_leader_known():
    core = make_core(3)
    p = topic(core, "u2", [2, 1], min_insync_replicas=2)
    core.stop_broker(2)
    assert state(p) == (1, [1], [2], [])
    core.stop_broker(1)
    assert (state(p), p.leader_epoch) == ((-1, [], [1, 2], [1]), 2)
    metadata = send(core, 3, 12, topics=None, allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False)
    (answer,) = [t for t in metadata.topics if t.name == "u2"]
    assert (answer.partitions[0].error_code, answer.partitions[0].isr_nodes,
            sorted(answer.partitions[0].offline_replicas)) == (
        errors.LEADER_NOT_AVAILABLE, [], [1, 2])
    described = send(core, 75, 0, topics=[wire.request_class(75).TopicRequest(name="u2")],
                     response_partition_limit=10, cursor=None)
    part = described.topics[0].partitions[0]
    assert (part.error_code, part.leader_id, part.eligible_leader_replicas,
            part.last_known_elr) == (errors.NONE, -1, [1, 2], [1])


def test_a_crashed_broker_is_no_eligible_leader_when_it_comes_back():
    core = make_core(3)
    p = topic(core, "u2", [2, 1], min_insync_replicas=2)
    core.stop_broker(2)
    core.stop_broker(1)
    core.start_broker(2)  # it died: it may have lost records, it leaves the ELR
    assert state(p) == (-1, [], [1], [1])
    core.start_broker(1)  # the last known leader comes back: elected, then 2 catches up
    assert state(p) == (1, [1, 2], [], [])


def test_after_a_controlled_shutdown_a_broker_is_elected_from_the_eligible_leaders():
    core = make_core(3)
    p = topic(core, "u2", [2, 1], min_insync_replicas=2)
    core.cluster.stop_broker(2, controlled=True)
    core.cluster.stop_broker(1, controlled=True)
    core.start_broker(2)
    assert state(p)[:3] == (2, [2], [1])


def test_a_restarted_broker_rejoins_the_isr_and_leads_again_at_the_next_rebalance():
    core = make_core(3)
    p = topic(core, "t", [0, 1, 2])
    core.stop_broker(0)
    assert state(p) == (1, [1, 2], [], [])
    core.start_broker(0)
    assert state(p) == (1, [0, 1, 2], [], [])  # the ISR in ascending order, as Kafka's
    core.clock.advance(299_000)
    core.cluster.timers.run_due()
    assert p.leader == 1
    core.clock.advance(1_000)  # leader.imbalance.check.interval.seconds
    core.cluster.timers.run_due()
    assert p.leader == 0


def test_without_the_rebalance_leadership_stays_where_it_went():
    core = make_core(3, auto_leader_rebalance_enable=False)
    p = topic(core, "t", [0, 1, 2])
    core.stop_broker(0)
    core.start_broker(0)
    core.clock.advance(3_600_000)
    core.cluster.timers.run_due()
    assert p.leader == 1


# -- min.insync.replicas ------------------------------------------------------------------------

def test_acks_all_below_min_isr_is_refused_and_the_high_watermark_holds():
    core = make_core(3)
    p = topic(core, "m", [0, 1, 2], min_insync_replicas=2)
    assert produce(core, "m", b"a", b"b") == errors.NONE
    core.cluster.replication.set_lagging(p, 1, True)
    core.cluster.replication.set_lagging(p, 2, True)
    assert p.isr == [0]
    assert produce(core, "m", b"c") == errors.NOT_ENOUGH_REPLICAS
    assert produce(core, "m", b"c", acks=1) == errors.NONE  # written, not yet committed
    assert (p.log.log_end_offset, fetch(core, "m", 0)) == (3, (errors.NONE, 2))
    core.cluster.replication.set_lagging(p, 1, False)  # it catches up: the ISR is back at 2
    assert p.isr == [0, 1] and fetch(core, "m", 0) == (errors.NONE, 3)
    assert produce(core, "m", b"d") == errors.NONE


def configs(core, resource_type, name, *ops, incremental=True, validate_only=False):
    """(error code, message) of an (Incremental)AlterConfigs of one resource: ``ops`` are
    (name, operation, value) or, for the legacy API, (name, value)."""
    if incremental:
        cls = wire.request_class(44)
        body = cls(validate_only=validate_only, resources=[cls.AlterConfigsResource(
            resource_type=resource_type, resource_name=name, configs=[
                cls.AlterableConfig(name=n, config_operation=o, value=v) for n, o, v in ops])])
        (result,) = send(core, 44, 1, body).responses
    else:
        cls = wire.request_class(33)
        body = cls(validate_only=validate_only, resources=[cls.AlterConfigsResource(
            resource_type=resource_type, resource_name=name, configs=[
                cls.AlterableConfig(name=n, value=v) for n, v in ops])])
        (result,) = send(core, 33, 2, body).responses
    return result.error_code, result.error_message


TOPIC, BROKER, SET, DELETE = 2, 4, 0, 1
BROKER_LEVEL = "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
CLUSTER_LEVEL = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."


def test_with_eligible_leaders_min_isr_is_kept_at_the_cluster_level_only():
    core = make_core(2)
    for validate_only in (True, False):
        assert configs(core, BROKER, "0", ("min.insync.replicas", SET, "2"),
                       validate_only=validate_only) == (errors.INVALID_CONFIG, BROKER_LEVEL)
        assert configs(core, BROKER, "", ("min.insync.replicas", DELETE, None),
                       validate_only=validate_only) == (errors.INVALID_CONFIG, CLUSTER_LEVEL)
    assert configs(core, BROKER, "0", ("min.insync.replicas", DELETE, None)) == \
        (errors.INVALID_CONFIG, BROKER_LEVEL)
    # the legacy API replaces the whole set: leaving it out removes it
    assert configs(core, BROKER, "", ("log.retention.ms", "1000"), incremental=False) == \
        (errors.INVALID_CONFIG, CLUSTER_LEVEL)
    assert configs(core, BROKER, "", ("min.insync.replicas", SET, "2")) == (errors.NONE, None)
    assert core.cluster.broker_configs.dynamic_default == {"min.insync.replicas": "2"}
    # without eligible leaders each broker may have its own, and the cluster's may go
    assert features(core, 0) == errors.NONE
    assert configs(core, BROKER, "0", ("min.insync.replicas", SET, "2")) == (errors.NONE, None)
    assert configs(core, BROKER, "", ("min.insync.replicas", DELETE, None)) == \
        (errors.NONE, None)
    # turned on again, the controller moves it back to the cluster level (the static value)
    assert features(core, 1) == errors.NONE
    assert core.cluster.broker_configs.dynamic_default == {"min.insync.replicas": "1"}
    assert core.cluster.broker_configs.dynamic_per_broker == {}


def features(core, elr_level):
    cls = wire.request_class(57)
    return send(core, 57, 1, timeout_ms=1000, validate_only=False, feature_updates=[
        cls.FeatureUpdateKey(feature="eligible.leader.replicas.version",
                             max_version_level=elr_level,
                             upgrade_type=1 if elr_level else 2)]).error_code


def test_a_new_min_isr_clears_the_eligible_leaders_it_was_worked_out_with():
    core = make_core(3)
    a = topic(core, "a", [2, 1, 0], min_insync_replicas=3)
    b = topic(core, "b", [2, 1, 0], min_insync_replicas=3)
    core.stop_broker(2)
    assert (a.elr, b.elr) == ([2], [2])
    epochs = a.leader_epoch, a.partition_epoch
    # the topic's own value: only its partitions, with a new partition epoch and the same
    # leader epoch
    assert configs(core, TOPIC, "a", ("min.insync.replicas", SET, "2")) == (errors.NONE, None)
    assert (state(a), state(b)) == ((1, [1, 0], [], []), (1, [1, 0], [2], []))
    assert (a.leader_epoch, a.partition_epoch) == (epochs[0], epochs[1] + 1)
    # unchanged: nothing written, nothing cleared
    assert configs(core, TOPIC, "b", ("min.insync.replicas", SET, "3")) == (errors.NONE, None)
    assert b.elr == [2]
    # the cluster's value, even unchanged: every partition
    assert configs(core, BROKER, "", ("min.insync.replicas", SET, "1")) == (errors.NONE, None)
    assert b.elr == []


# -- brokers unregistered -----------------------------------------------------------------------

def metadata_brokers(core, broker=0):
    answer = send(core, 3, 12, topics=None, allow_auto_topic_creation=False, broker=broker)
    return [b.node_id for b in answer.brokers]


def test_an_unregistered_broker_leaves_the_cluster_until_it_starts_again():
    core = make_core(3)
    p = topic(core, "t", [1, 2, 0])
    answer = send(core, 64, 0, broker_id=1)
    assert (answer.error_code, answer.error_message) == (errors.NONE, "")
    # still running, but no longer a replica anyone follows, nor a broker clients are told of
    assert state(p) == (2, [2, 0], [], [])
    assert metadata_brokers(core) == [0, 2]
    described = send(core, 60, 2, include_cluster_authorized_operations=False,
                     include_fenced_brokers=True)
    assert [b.broker_id for b in described.brokers] == [0, 2]
    again = send(core, 64, 0, broker_id=1)
    assert (again.error_code, again.error_message) == \
        (errors.BROKER_ID_NOT_REGISTERED, "Broker ID 1 is not currently registered")
    assert alter(core, {"t": {0: [1, 2]}}) == {("t", 0): (
        errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker "
                                           "1, but no such broker is registered.")}
    # a stopped broker may be unregistered too; starting a broker registers it again
    core.stop_broker(0)
    assert send(core, 64, 0, broker_id=0, broker=2).error_code == errors.NONE
    core.stop_broker(1)
    core.start_broker(1)
    core.start_broker(0)
    assert metadata_brokers(core) == [0, 1, 2]
    assert state(p) == (2, [0, 1, 2], [], [])
    assert [e["broker"] for e in core.events.since(0) if e["type"] == "broker_unregistered"] \
        == [1, 0]


def test_controllers_are_unregistered_as_the_active_controller_allows():
    core = make_core(3)
    quorum = core.cluster.quorum
    asked = [(a.error_code, a.error_message) for a in (
        send(core, 94, 0, controller_id=c) for c in (0, 7, 1))]
    assert asked == [
        (errors.INVALID_REQUEST, "Controller cannot unregister itself while it is active."),
        (errors.CONTROLLER_ID_NOT_REGISTERED, "Controller ID 7 is not currently registered."),
        (errors.NONE, "")]
    assert 1 in quorum.registered  # running: it registered again at once
    core.stop_broker(2)
    end = quorum.high_watermark
    assert send(core, 94, 0, controller_id=2).error_code == errors.NONE
    assert quorum.high_watermark == end + 1 and 2 not in quorum.registered
    assert send(core, 94, 0, controller_id=2).error_code == errors.CONTROLLER_ID_NOT_REGISTERED
    core.start_broker(2)
    assert 2 in quorum.registered


# -- unclean elections ----------------------------------------------------------------------------

def test_an_unclean_election_truncates_the_log_to_the_new_leaders_end():
    core = make_core(2)
    p = topic(core, "x", [0, 1], unclean_leader_election_enable="true")
    produce(core, "x", b"0", b"1", b"2")
    core.cluster.replication.set_lagging(p, 1, True)  # 1 stops at offset 3
    produce(core, "x", b"3", b"4", acks=1)
    mark = core.events.last_seq
    core.stop_broker(0)
    assert (p.leader, p.isr, p.log.log_end_offset) == (1, [1], 3)
    truncated = [e for e in core.events.since(mark) if e["type"] == "log_truncated"]
    assert [(e["offset"], e["offsets_lost"]) for e in truncated] == [(3, 2)]
    assert fetch(core, "x", 4)[0] == errors.OFFSET_OUT_OF_RANGE
    assert produce(core, "x", b"after") == errors.NONE and p.log.log_end_offset == 4
    core.start_broker(0)  # the old leader follows the new one
    assert p.isr == [0, 1]


def test_unclean_allowed_later_elects_at_the_next_periodic_scan():
    core = make_core(2)
    p = topic(core, "x", [0, 1])
    core.cluster.replication.set_lagging(p, 1, True)
    core.stop_broker(0)
    assert (p.leader, p.isr, p.elr) == (-1, [], [0])
    p.topic.configs["unclean.leader.election.enable"] = "true"
    core.clock.advance(300_000)  # unclean.leader.election.interval.ms
    core.cluster.timers.run_due()
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (1, [1], [], [])


# -- ElectLeaders ---------------------------------------------------------------------------------

def elect(core, election_type, wanted, version=2):
    cls = wire.request_class(ELECT)
    asked = None if wanted is None else [cls.TopicPartitions(topic=t, partitions=ps)
                                         for t, ps in wanted.items()]
    answer = send(core, ELECT, version, election_type=election_type, topic_partitions=asked,
                  timeout_ms=1000)
    return answer.error_code, {(t.topic, r.partition_id): (r.error_code, r.error_message)
                               for t in answer.replica_election_results
                               for r in t.partition_result}


def test_elect_leaders_answers_each_partition_as_kafka_does():
    core = make_core(3)
    topic(core, "t", [0, 1])
    p = topic(core, "solo", [2])
    assert elect(core, 0, {"t": [0, 7], "nope": [0]}) == (errors.NONE, {
        ("t", 0): (errors.ELECTION_NOT_NEEDED, "Leader election not needed for topic "
                                               "partition."),
        ("t", 7): (errors.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-7"),
        ("nope", 0): (errors.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")})
    assert elect(core, 1, {"t": [0]})[1] == {
        ("t", 0): (errors.ELECTION_NOT_NEEDED, "Leader election not needed for topic "
                                               "partition.")}
    core.stop_broker(2)
    assert p.leader == -1
    assert elect(core, 1, {"solo": [0]})[1] == {("solo", 0): (
        errors.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        "Eligible topic partition leaders are not available.")}
    assert elect(core, 0, {"solo": [0]})[1] == {("solo", 0): (
        errors.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available.")}
    assert send(core, ELECT, 2, election_type=5, topic_partitions=[], timeout_ms=1).error_code \
        == errors.INVALID_REQUEST


def test_a_preferred_election_gives_the_lead_back_and_every_partition_lists_only_changes():
    core = make_core(3, auto_leader_rebalance_enable=False)
    p = topic(core, "t", [0, 1])
    topic(core, "u", [1, 2])
    core.stop_broker(0)
    core.start_broker(0)
    assert p.leader == 1
    assert elect(core, 0, None) == (errors.NONE, {("t", 0): (errors.NONE, None)})
    assert (p.leader, p.leader_epoch) == (0, 2)
    assert elect(core, 0, {"t": [0]}, version=0)[1] == {
        ("t", 0): (errors.ELECTION_NOT_NEEDED, "Leader election not needed for topic "
                                               "partition.")}


# -- reassignments --------------------------------------------------------------------------------

def alter(core, wanted, version=1, allow=True):
    cls = wire.request_class(ALTER)
    answer = send(core, ALTER, version, timeout_ms=1000, allow_replication_factor_change=allow,
                  topics=[cls.ReassignableTopic(name=t, partitions=[
                      cls.ReassignablePartition(partition_index=i, replicas=r)
                      for i, r in ps.items()]) for t, ps in wanted.items()])
    return {(t.name, q.partition_index): (q.error_code, q.error_message)
            for t in answer.responses for q in t.partitions}


def listed(core, topics=None):
    cls = wire.request_class(LIST)
    asked = None if topics is None else [
        cls.ListPartitionReassignmentsTopics(name=t, partition_indexes=ps)
        for t, ps in topics.items()]
    answer = send(core, LIST, 0, timeout_ms=1000, topics=asked)
    return {(t.name, q.partition_index): (q.replicas, q.adding_replicas, q.removing_replicas)
            for t in answer.topics for q in t.partitions}


def test_a_reassignment_watched_step_by_step_on_the_broker_clock():
    core = make_core(3, replica_catch_up_ms=5000)
    p = topic(core, "t", [0, 1])
    produce(core, "t", b"a")
    mark = core.events.last_seq
    assert alter(core, {"t": {0: [1, 2]}}) == {("t", 0): (errors.NONE, None)}
    assert listed(core) == {("t", 0): ([1, 2, 0], [2], [0])}
    assert (p.replicas, p.isr, p.leader) == ([1, 2, 0], [0, 1], 0)
    assert states.replica_state(p, 2, True) is states.ReplicaState.ADDING
    core.clock.advance(4999)
    core.cluster.timers.run_due()
    assert listed(core, {"t": [0]}) == {("t", 0): ([1, 2, 0], [2], [0])}
    core.clock.advance(1)  # the new replica caught up: it joins, 0 leaves, leadership moves
    core.cluster.timers.run_due()
    assert listed(core) == {}
    assert (p.replicas, p.isr, p.leader, p.leader_epoch) == ([1, 2], [1, 2], 1, 1)
    kinds = [e["type"] for e in core.events.since(mark)
             if e["type"].startswith("reassignment") or e["type"] == "leader_changed"]
    assert kinds == ["reassignment_started", "reassignment_completed", "leader_changed"]


def test_a_cancelled_reassignment_goes_back_without_its_adding_replicas():
    core = make_core(3, replica_catch_up_ms=5000)
    p = topic(core, "t", [2, 0])
    alter(core, {"t": {0: [1, 0]}})
    assert p.replicas == [1, 0, 2]
    assert alter(core, {"t": {0: None}}) == {("t", 0): (errors.NONE, None)}
    assert (p.replicas, p.isr, listed(core)) == ([0, 2], [2, 0], {})  # as Kafka reorders it
    assert alter(core, {"t": {0: None}}) == {("t", 0): (errors.NO_REASSIGNMENT_IN_PROGRESS,
                                                        None)}


def test_a_reassignment_is_refused_as_kafka_refuses_it():
    core = make_core(3)
    topic(core, "t", [0, 1])
    assert alter(core, {"t": {0: [1, 99], 1: [0]}, "zz": {0: [0]}}) == {
        ("t", 0): (errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                   "includes broker 99, but no such broker is registered."),
        ("t", 1): (errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:1."),
        ("zz", 0): (errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named zz.")}
    assert alter(core, {"t": {0: [1, 1]}}) == {("t", 0): (
        errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the "
        "broker 1 more than once.")}
    assert alter(core, {"t": {0: []}}) == {("t", 0): (
        errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an "
        "empty replica list.")}
    assert alter(core, {"t": {0: [0, 1, 2]}}, allow=False) == {("t", 0): (
        errors.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 3")}
    assert alter(core, {"t": {0: [0, 1]}}) == {("t", 0): (errors.NONE, None)}
    assert listed(core) == {}


def test_a_reassignment_to_a_stopped_broker_waits_for_it():
    core = make_core(3)
    p = topic(core, "t", [0, 1])
    core.stop_broker(2)
    alter(core, {"t": {0: [0, 2]}})
    assert listed(core) == {("t", 0): ([0, 2, 1], [2], [1])}
    core.start_broker(2)
    assert (listed(core), p.replicas, p.isr) == ({}, [0, 2], [0, 2])


# -- the state tables -----------------------------------------------------------------------------

def test_every_move_of_the_state_tables_happens_and_no_other(monkeypatch):
    seen = {id(states.PARTITION_TABLE): set(), id(states.REPLICA_TABLE): set()}
    check = states.check

    def recording(table, before, after, what):
        why = check(table, before, after, what)
        if why is not None:
            seen[id(table)].add((before, after))
        return why
    monkeypatch.setattr(states, "check", recording)
    for scenario in (test_stopped_brokers_leave_the_isr_for_the_eligible_leaders_below_min_isr,
                     test_the_last_isr_member_stopping_leaves_no_leader_and_its_last_leader_known,
                     test_a_crashed_broker_is_no_eligible_leader_when_it_comes_back,
                     test_a_restarted_broker_rejoins_the_isr_and_leads_again_at_the_next_rebalance,
                     test_acks_all_below_min_isr_is_refused_and_the_high_watermark_holds,
                     test_an_unclean_election_truncates_the_log_to_the_new_leaders_end,
                     test_a_reassignment_watched_step_by_step_on_the_broker_clock,
                     test_a_cancelled_reassignment_goes_back_without_its_adding_replicas,
                     test_a_reassignment_to_a_stopped_broker_waits_for_it,
                     _rows_the_scenarios_leave):
        scenario()
    assert seen[id(states.PARTITION_TABLE)] == set(states.PARTITION_TABLE)
    assert seen[id(states.REPLICA_TABLE)] == set(states.REPLICA_TABLE)


def _rows_the_scenarios_leave():
    """Moves no scenario above makes: a replica created on a stopped broker, an adding replica
    whose broker stops and starts, a lagging replica whose broker stops, the ISR back at its
    minimum with an eligible leader alive or down, and topics deleted in every state."""
    core = make_core(3, replica_catch_up_ms=5000)
    core.stop_broker(2)
    topic(core, "down", [0, 2])
    core.start_broker(2)
    core.clock.advance(5000)
    core.cluster.timers.run_due()
    p = topic(core, "adding", [0])
    alter(core, {"adding": {0: [0, 1]}})
    core.stop_broker(1)
    core.start_broker(1)
    core.cluster.delete_topic("adding")
    lag = topic(core, "lag", [0, 1])
    core.cluster.replication.set_lagging(lag, 1, True)
    core.stop_broker(1)
    core.start_broker(1)  # still held back: it stays out of sync
    assert lag.isr == [0]
    core.cluster.delete_topic("lag")
    e = topic(core, "elr", [0, 1, 2], min_insync_replicas=3)
    core.cluster.replication.set_lagging(e, 1, True)  # 1: out of sync but eligible
    core.stop_broker(2)  # 2: eligible while down
    core.cluster.topics["elr"].configs["min.insync.replicas"] = "1"
    core.cluster.replication.change(e)  # the ISR at its minimum: no one eligible any more
    assert (e.isr, e.elr) == ([0], [])
    core.cluster.replication.set_lagging(e, 1, False)
    core.clock.advance(5000)
    core.cluster.timers.run_due()
    assert e.isr == [0, 1]
    core.stop_broker(0)
    core.stop_broker(1)
    assert e.leader == -1
    for name in list(core.cluster.topics):
        core.cluster.delete_topic(name)
    del p
