"""KIP-932 share groups in the core, on a manual clock: ShareGroupHeartbeat and
ShareGroupDescribe, and ShareFetch and ShareAcknowledge with share sessions and the
share-partition state table, every row of which is fired here (acquire; accept, release, reject,
gap, renew; lock expiry; a member's session ending; an aborted transaction), with the delivery
limit, the errors Kafka gives for bad acknowledgements and sessions, and a leader and a share
coordinator moving with every acknowledged state kept."""

from __future__ import annotations

import uuid

import pytest

import wire
from mockbroker.core.deferred import Deferred
from mockbroker.core.dispatch import Connection
from mockbroker.core.share.coordinator import state_key
from mockbroker.core.share.state import TABLE, AckType, Event, RecordState
from tests.core.harness import make_core, send, settled
from tests.share_client import acquired_records
from wire import errors, records

HEARTBEAT, DESCRIBE, FETCH, ACK = 76, 77, 78, 79
GROUP, TOPIC = "workers", "jobs"
LOCK_MS = 30_000
ACCEPT, RELEASE, REJECT, GAP, RENEW = (int(t) for t in (AckType.ACCEPT, AckType.RELEASE,
                                                        AckType.REJECT, AckType.GAP,
                                                        AckType.RENEW))


def member_id() -> str:
    return str(uuid.uuid4())


class Share:
    """A core with one topic and a share group starting at the earliest offset."""

    def __init__(self, partitions: int = 1, brokers: int = 1, **settings):
        self.core = make_core(brokers, group_share_assignment_interval_ms=0, **settings)
        self.topic = self.core.cluster.create_topic(TOPIC, partitions, min(brokers, 3))
        self.configure(**{"share.auto.offset.reset": "earliest"})
        self.epochs: dict[str, int] = {}

    def configure(self, **configs: str) -> None:
        """Set group configs of the share group (as IncrementalAlterConfigs keeps them)."""
        state = self.core.cluster.broker_configs
        state.group_configs.setdefault(GROUP, {}).update(configs)
        state.changed()

    @property
    def topic_id(self) -> uuid.UUID:
        return self.topic.topic_id

    def leader(self, partition: int = 0) -> int:
        return self.topic.partitions[partition].leader

    def coordinator(self) -> int:
        return self.core.groups.placement.coordinator_for(GROUP)

    def produce(self, *values: bytes, partition: int = 0, **batch) -> None:
        cls = wire.request_class(0)
        body = cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
            name=TOPIC, partition_data=[cls.PartitionProduceData(
                index=partition, records=records.encode_batch(
                    [(b"k", v, [], 1) for v in values], **batch))])])
        answer = send(self.core, 0, 9, body, broker=self.leader(partition))
        assert answer.responses[0].partition_responses[0].error_code == errors.NONE

    def heartbeat(self, member: str, epoch: int | None = None, topics=(TOPIC,), **fields):
        epoch = self.epochs.get(member, 0) if epoch is None else epoch
        answer = send(self.core, HEARTBEAT, 1, broker=self.coordinator(), group_id=GROUP,
                      member_id=member, member_epoch=epoch,
                      subscribed_topic_names=list(topics) if topics is not None else None,
                      **fields)
        if answer.error_code == errors.NONE and answer.member_epoch >= 0:
            self.epochs[member] = answer.member_epoch
        return answer

    def join(self, member: str) -> list[int]:
        """A member joins and heartbeats until it is assigned partitions (its second
        heartbeat, as on Kafka); returns them."""
        first = self.heartbeat(member)
        assert first.error_code == errors.NONE, first
        if first.assignment.topic_partitions:  # the partitions have their share state already
            return [p for tp in first.assignment.topic_partitions for p in tp.partitions]
        self.core.clock.advance(0)  # the share state is initialized after the answer
        second = self.heartbeat(member, topics=None)
        assert second.error_code == errors.NONE, second
        return [p for tp in second.assignment.topic_partitions for p in tp.partitions]

    def fetch(self, member: str, epoch: int, partitions=(0,), acks=None, *, max_records=500,
              batch_size=500, max_wait_ms=0, version=2, connection_id=1, forget=(),
              group_id=GROUP, **fields):
        cls = wire.request_class(FETCH)
        acks = acks or {}
        named = sorted(set(partitions) | set(acks))
        body = cls(group_id=group_id, member_id=member, share_session_epoch=epoch,
                   max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
                   max_records=max_records, batch_size=batch_size, topics=[cls.FetchTopic(
                       topic_id=self.topic_id, partitions=[cls.FetchPartition(
                           partition_index=p, acknowledgement_batches=[
                               cls.AcknowledgementBatch(first_offset=f, last_offset=la,
                                                        acknowledge_types=list(t))
                               for f, la, t in acks.get(p, ())]) for p in named])] if named else [],
                   forgotten_topics_data=[cls.ForgottenTopic(topic_id=self.topic_id,
                                                             partitions=list(forget))]
                   if forget else [], **fields)
        return send(self.core, FETCH, version, body, broker=self.leader(named[0] if named else 0),
                    connection_id=connection_id)

    def ack(self, member: str, epoch: int, acks: dict, *, version=2, **fields):
        cls = wire.request_class(ACK)
        body = cls(group_id=GROUP, member_id=member, share_session_epoch=epoch,
                   topics=[cls.AcknowledgeTopic(topic_id=self.topic_id, partitions=[
                       cls.AcknowledgePartition(partition_index=p, acknowledgement_batches=[
                           cls.AcknowledgementBatch(first_offset=f, last_offset=la,
                                                    acknowledge_types=list(t))
                           for f, la, t in batches]) for p, batches in acks.items()])],
                   **fields)
        return send(self.core, ACK, version, body, broker=self.leader(next(iter(acks))))

    def share_partition(self, partition: int = 0):
        return self.core.share_partitions.find(GROUP, self.topic_id, partition)

    def states(self, partition: int = 0) -> list[tuple[int, int, str, int, str]]:
        """(first, last, state, delivery count, member) of each run in flight."""
        return [(r.first, r.last, r.state.label, r.delivery_count, r.member)
                for r in self.share_partition(partition).records()]


def acquired(answer, partition: int = 0) -> list[tuple[int, int, int]]:
    for topic in answer.responses:
        for p in topic.partitions:
            if p.partition_index == partition:
                return [(a.first_offset, a.last_offset, a.delivery_count)
                        for a in p.acquired_records]
    return []


def values(answer) -> list[bytes]:
    """The record values the answer carries, of its acquired offsets only (as a client keeps
    them)."""
    return [value for topic in answer.responses for p in topic.partitions
            for _, value in acquired_records(p)]


def partition_error(answer, partition: int = 0, field: str = "error_code"):
    for topic in answer.responses:
        for p in topic.partitions:
            if p.partition_index == partition:
                return getattr(p, field)
    return None


# -- the state table ------------------------------------------------------------------------------

def test_the_table_has_a_row_for_every_event_from_acquired_and_only_acquire_from_available():
    assert {event for (state, event) in TABLE if state is RecordState.ACQUIRED} == \
        set(Event) - {Event.ACQUIRE, Event.DEAD_LETTERED}
    assert [event for (state, event) in TABLE if state is RecordState.AVAILABLE] == \
        [Event.ACQUIRE]
    # Archiving only waits for the dead-letter queue
    assert [(event, target) for (state, event), target in TABLE.items()
            if state is RecordState.ARCHIVING] == [(Event.DEAD_LETTERED, RecordState.ARCHIVED)]
    assert not any(state.terminal for state, _ in TABLE)


# -- ShareGroupHeartbeat and ShareGroupDescribe ---------------------------------------------------

def test_a_member_learns_its_partitions_on_its_second_heartbeat_as_on_kafka():
    h = Share(partitions=2)
    m = member_id()
    first = h.heartbeat(m)
    assert (first.error_code, first.member_id, first.member_epoch) == (errors.NONE, m, 2)
    assert first.assignment.topic_partitions == []
    assert first.heartbeat_interval_ms == 5000
    h.core.clock.advance(0)
    second = h.heartbeat(m, topics=None)
    assert second.member_epoch == 3
    assert [(tp.topic_id, tp.partitions) for tp in second.assignment.topic_partitions] == \
        [(h.topic_id, [0, 1])]
    # nothing changed: no assignment in the answer
    assert h.heartbeat(m, topics=None).assignment is None


def test_members_share_a_partition_when_there_are_more_members_than_partitions():
    h = Share(partitions=1)
    a, b, c = member_id(), member_id(), member_id()
    assert h.join(a) == [0]
    h.heartbeat(b)
    h.heartbeat(c)
    for m in (a, b, c):
        h.heartbeat(m, topics=None)
    described = send(h.core, DESCRIBE, 1, broker=h.coordinator(), group_ids=[GROUP],
                     include_authorized_operations=False).groups[0]
    assert (described.error_code, described.group_state, described.assignor_name) == \
        (errors.NONE, "Stable", "simple")
    assert {m.member_id: [p for tp in m.assignment.topic_partitions for p in tp.partitions]
            for m in described.members} == {a: [0], b: [0], c: [0]}
    assert {tp.topic_name for m in described.members for tp in m.assignment.topic_partitions} \
        == {TOPIC}


def assignments(h: Share) -> dict[str, list[int]]:
    described = send(h.core, DESCRIBE, 1, broker=h.coordinator(), group_ids=[GROUP],
                     include_authorized_operations=False).groups[0]
    return {m.member_id: sorted(p for tp in m.assignment.topic_partitions
                                for p in tp.partitions) for m in described.members}


def test_more_partitions_than_members_are_spread_evenly():
    h = Share(partitions=5)
    a, b = member_id(), member_id()
    h.join(a)
    h.heartbeat(b)
    for _ in range(2):
        for m in (a, b):
            h.heartbeat(m, topics=None)
    got = assignments(h)
    assert sorted(len(ps) for ps in got.values()) == [2, 3]
    assert sorted(got[a] + got[b]) == [0, 1, 2, 3, 4]


def test_heartbeat_refusals_carry_kafkas_messages():
    h = Share()
    m = member_id()
    assert (h.heartbeat(m, topics=[]).error_code,
            h.heartbeat(m, topics=[]).error_message) == \
        (errors.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
    assert h.heartbeat(m, epoch=-2).error_message == "MemberEpoch is invalid."
    assert (h.heartbeat(m, epoch=1).error_code, h.heartbeat(m, epoch=1).error_message) == \
        (errors.GROUP_ID_NOT_FOUND, f"Share group {GROUP} not found.")
    h.heartbeat(m)
    stranger = member_id()
    other = h.heartbeat(stranger, epoch=4)
    assert (other.error_code, other.error_message) == (
        errors.UNKNOWN_MEMBER_ID, f"Member {stranger} is not a member of group {GROUP}.")
    fenced = h.heartbeat(m, epoch=9)
    assert fenced.error_code == errors.FENCED_MEMBER_EPOCH
    assert fenced.error_message.startswith("The share group member has a greater member epoch "
                                           "(9) than the one known by the group coordinator")
    long_id = h.heartbeat("x" * 37)
    assert (long_id.error_code, long_id.error_message) == (
        errors.INVALID_REQUEST, "Invalid member id in the request.")


def test_a_group_of_another_type_is_not_a_share_group():
    h = Share()
    send(h.core, 68, 1, broker=h.coordinator(), group_id=GROUP, member_id=member_id(),
         member_epoch=0, rebalance_timeout_ms=1000, subscribed_topic_names=[TOPIC],
         topic_partitions=[])
    answer = h.heartbeat(member_id())
    assert (answer.error_code, answer.error_message) == (
        errors.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a share group.")
    described = send(h.core, DESCRIBE, 1, broker=h.coordinator(), group_ids=[GROUP],
                     include_authorized_operations=False).groups[0]
    assert (described.error_code, described.error_message) == (
        errors.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a share group.")


def test_list_groups_and_describe_groups_see_a_share_group_as_kafka_does():
    h = Share()
    h.heartbeat(member_id())
    listed = send(h.core, 16, 5, broker=h.coordinator(), states_filter=[],
                  types_filter=["share"]).groups
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed] == \
        [(GROUP, "share", "Stable", "share")]
    described = send(h.core, 15, 6, broker=h.coordinator(), groups=[GROUP],
                     include_authorized_operations=False).groups[0]
    assert (described.error_code, described.group_state, described.error_message) == (
        errors.GROUP_ID_NOT_FOUND, "Dead", f"Group {GROUP} is not a classic group.")


def test_a_leaving_member_gets_minus_one_and_the_group_empties():
    h = Share()
    m = member_id()
    h.join(m)
    left = h.heartbeat(m, epoch=-1, topics=None)
    assert (left.error_code, left.member_epoch) == (errors.NONE, -1)
    described = send(h.core, DESCRIBE, 1, broker=h.coordinator(), group_ids=[GROUP],
                     include_authorized_operations=False).groups[0]
    assert (described.group_state, described.members) == ("Empty", [])


def test_a_share_group_is_rebuilt_from_its_records_when_its_coordinator_moves():
    h = Share(partitions=2, brokers=3)
    m = member_id()
    assert h.join(m) == [0, 1]
    group = h.core.groups.find_group(GROUP)
    partition = h.core.groups.placement.partition(GROUP)
    new = next(r for r in partition.replicas if r != partition.leader)
    h.core.cluster.move_leader(partition, new)
    moved = h.core.groups.find_group(GROUP)
    assert moved is not group and moved.type == "share"
    assert (moved.group_epoch, moved.assignment_epoch) == (group.group_epoch,
                                                           group.assignment_epoch)
    assert {t: sorted(ps) for t, ps in moved.members[m].assigned.items()} == \
        {h.topic_id: [0, 1]}
    assert moved.initialized == {h.topic_id: {0, 1}}
    assert h.heartbeat(m, topics=None).error_code == errors.NONE


# -- ShareFetch and the records' states -----------------------------------------------------------

def opened(h: Share, m: str, **fields):
    """A share session opened by a member that has joined: the first fetch's answer."""
    h.join(m)
    return h.fetch(m, 0, **fields)


def test_a_fetch_acquires_records_and_an_accept_acknowledges_them():
    h = Share()
    h.produce(b"a", b"b", b"c")
    m = member_id()
    first = opened(h, m)
    assert first.error_code == errors.NONE
    assert first.acquisition_lock_timeout_ms == LOCK_MS
    assert acquired(first) == [(0, 2, 1)]
    assert values(first) == [b"a", b"b", b"c"]
    assert h.states() == [(0, 2, "Acquired", 1, m)]
    second = h.fetch(m, 1, acks={0: [(0, 2, [ACCEPT])]})
    assert partition_error(second, field="acknowledge_error_code") == errors.NONE
    assert h.states() == []
    assert h.share_partition().start_offset == 3


def test_release_brings_a_record_back_with_a_higher_delivery_count():
    h = Share()
    h.produce(b"a", b"b")
    m = member_id()
    opened(h, m)
    again = h.fetch(m, 1, acks={0: [(0, 1, [RELEASE, ACCEPT])]})
    assert partition_error(again, field="acknowledge_error_code") == errors.NONE
    assert acquired(again) == [(0, 0, 2)]
    assert values(again) == [b"a"]


def test_reject_and_gap_archive_and_the_start_offset_moves_past_them():
    h = Share()
    h.produce(b"a", b"b", b"c")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [REJECT]), (1, 1, [GAP])]})
    assert h.states()[0] == (2, 2, "Acquired", 1, m)
    assert h.share_partition().start_offset == 2


def test_a_lock_expires_on_the_broker_clock_and_the_record_is_delivered_again():
    h = Share()
    h.produce(b"a")
    m, other = member_id(), member_id()
    opened(h, m)
    h.core.clock.advance(LOCK_MS - 1)
    assert h.states() == [(0, 0, "Acquired", 1, m)]
    h.core.clock.advance(1)
    assert h.states() == [(0, 0, "Available", 1, "")]
    h.join(other)
    got = h.fetch(other, 0)
    assert acquired(got) == [(0, 0, 2)]
    late = h.fetch(m, 1, acks={0: [(0, 0, [ACCEPT])]})
    assert partition_error(late, field="acknowledge_error_code") == errors.INVALID_RECORD_STATE
    assert partition_error(late, field="acknowledge_error_message") == \
        "Member is not the owner of batch record"


def test_the_delivery_limit_archives_a_record_instead_of_releasing_it():
    h = Share()
    h.configure(**{"share.delivery.count.limit": "2"})
    h.produce(b"poison")
    m = member_id()
    first = opened(h, m)
    assert acquired(first) == [(0, 0, 1)]
    second = h.fetch(m, 1, acks={0: [(0, 0, [RELEASE])]})
    assert acquired(second) == [(0, 0, 2)]
    h.fetch(m, 2, acks={0: [(0, 0, [RELEASE])]})
    assert h.states() == []
    assert h.share_partition().start_offset == 1


def test_renew_restarts_the_lock_without_a_delivery():
    h = Share()
    h.produce(b"a")
    m = member_id()
    opened(h, m)
    h.core.clock.advance(LOCK_MS - 1000)
    renewed = h.ack(m, 1, {0: [(0, 0, [RENEW])]}, is_renew_ack=True)
    assert renewed.responses[0].partitions[0].error_code == errors.NONE
    h.core.clock.advance(LOCK_MS - 1)
    assert h.states() == [(0, 0, "Acquired", 1, m)]
    h.core.clock.advance(1)
    assert h.states() == [(0, 0, "Available", 1, "")]


def test_a_closed_session_releases_what_its_member_held():
    h = Share()
    h.produce(b"a", b"b", b"c")
    m = member_id()
    opened(h, m)
    closing = h.ack(m, -1, {0: [(0, 0, [ACCEPT])]})
    assert (closing.error_code, closing.responses[0].partitions[0].error_code) == \
        (errors.NONE, errors.NONE)
    assert h.states() == [(1, 2, "Available", 1, "")]
    assert h.ack(m, 1, {0: [(1, 1, [ACCEPT])]}).error_code == errors.SHARE_SESSION_NOT_FOUND


def test_a_dropped_connection_releases_what_its_sessions_held():
    h = Share()
    h.produce(b"a")
    m = member_id()
    h.join(m)
    h.fetch(m, 0, connection_id=42)
    h.core.connection_closed(Connection(h.leader(), 42))
    assert h.states() == [(0, 0, "Available", 1, "")]


def test_read_committed_share_groups_archive_aborted_transactions():
    h = Share()
    h.configure(**{"share.isolation.level": "read_committed"})
    partition = h.topic.partitions[0]
    log, now = partition.log, h.core.clock.now_ms()
    pid = 4000
    txn = records.encode_batch([(b"k", b"aborted", [], 1)], producer_id=pid, producer_epoch=0,
                               base_sequence=0, is_transactional=True)
    log.append(txn, records.read_batch_header(txn), partition.leader_epoch, now)
    marker = records.encode_end_txn_marker(False, producer_id=pid, producer_epoch=0)
    log.append_marker(marker, records.read_batch_header(marker), partition.leader_epoch, now,
                      commit=False)
    h.produce(b"plain")
    m = member_id()
    got = opened(h, m)
    # the aborted record is archived and not acquired; the abort marker is acquired with the
    # plain record (the client acknowledges it as a gap)
    assert values(got) == [b"plain"]
    assert acquired(got) == [(1, 2, 1)]
    assert h.share_partition().start_offset == 1


def test_acknowledgements_kafka_refuses():
    h = Share()
    h.produce(b"a", b"b", b"c")
    m = member_id()
    opened(h, m)
    past = h.fetch(m, 1, acks={0: [(5, 6, [ACCEPT])]})
    assert (partition_error(past, field="acknowledge_error_code"),
            partition_error(past, field="acknowledge_error_message")) == (
        errors.INVALID_REQUEST,
        "Batch record not found. The first offset in request is past acquired records.")
    backwards = h.fetch(m, 2, acks={0: [(2, 1, [ACCEPT])]})
    assert partition_error(backwards, field="acknowledge_error_code") == errors.INVALID_REQUEST
    overlapping = h.fetch(m, 3, acks={0: [(0, 2, [ACCEPT]), (1, 1, [ACCEPT])]})
    assert partition_error(overlapping, field="acknowledge_error_code") == \
        errors.INVALID_REQUEST
    # nothing of a refused partition's acknowledgements is taken
    assert h.states() == [(0, 2, "Acquired", 1, m)]
    h.fetch(m, 4, acks={0: [(0, 0, [ACCEPT])]})
    twice = h.fetch(m, 5, acks={0: [(0, 0, [ACCEPT])]})
    assert partition_error(twice, field="acknowledge_error_code") == errors.NONE  # done already
    rest = h.fetch(m, 6, acks={0: [(1, 2, [ACCEPT, ACCEPT])]})
    assert partition_error(rest, field="acknowledge_error_code") == errors.NONE
    h.produce(b"d")
    assert acquired(h.fetch(m, 7)) == [(3, 3, 1)]
    h.core.clock.advance(LOCK_MS)
    stale = h.fetch(m, 8, acks={0: [(3, 3, [ACCEPT])]}, max_records=0)
    assert (partition_error(stale, field="acknowledge_error_code"),
            partition_error(stale, field="acknowledge_error_message")) == (
        errors.INVALID_RECORD_STATE,
        "The batch cannot be acknowledged. The batch is not in the acquired state.")


def test_share_session_epochs():
    h = Share()
    m = member_id()
    h.join(m)
    assert h.fetch(m, 3).error_code == errors.SHARE_SESSION_NOT_FOUND
    assert h.fetch(m, 0).error_code == errors.NONE
    assert h.fetch(m, 2).error_code == errors.INVALID_SHARE_SESSION_EPOCH
    assert h.fetch(m, 1).error_code == errors.NONE
    assert h.fetch(m, 2).error_code == errors.NONE
    # acknowledgements may not open a session; ShareAcknowledge may not either
    assert h.fetch(m, 0, acks={0: [(0, 0, [ACCEPT])]}).error_code == errors.INVALID_REQUEST
    assert h.ack(m, 0, {0: [(0, 0, [ACCEPT])]}).error_code == \
        errors.INVALID_SHARE_SESSION_EPOCH
    refused = h.fetch(m, 0, group_id=None)
    assert (refused.error_code, refused.error_message) == (
        errors.INVALID_REQUEST, "Invalid group id in the request.")


def test_the_session_limit_is_reached_without_evicting_a_session():
    h = Share(group_share_max_share_sessions=1)
    a, b = member_id(), member_id()
    h.join(a)
    assert h.fetch(a, 0).error_code == errors.NONE
    assert h.fetch(b, 0).error_code == errors.SHARE_SESSION_LIMIT_REACHED
    assert h.fetch(a, 1).error_code == errors.NONE


def test_a_fetch_with_nothing_to_acquire_waits_for_a_record():
    h = Share()
    m = member_id()
    h.join(m)
    waiting = h.fetch(m, 0, max_wait_ms=5000)
    assert isinstance(waiting, Deferred) and not waiting.done
    h.produce(b"late")
    got = settled(waiting)
    assert values(got) == [b"late"]
    assert acquired(got) == [(0, 0, 1)]


def test_a_fetch_that_waits_in_vain_answers_at_max_wait():
    h = Share()
    m = member_id()
    h.join(m)
    waiting = h.fetch(m, 0, max_wait_ms=500)
    h.core.clock.advance(500)
    got = settled(waiting)
    assert (got.error_code, acquired(got)) == (errors.NONE, [])


def test_record_limit_mode_acquires_exactly_the_records_asked_for():
    h = Share()
    h.produce(b"a", b"b", b"c", b"d")
    m = member_id()
    h.join(m)
    got = h.fetch(m, 0, max_records=2, share_acquire_mode=1)
    assert acquired(got) == [(0, 1, 1)]
    assert h.states() == [(0, 1, "Acquired", 1, m), (2, 3, "Available", 0, "")]
    rest = h.fetch(m, 1, max_records=5)
    assert acquired(rest) == [(2, 3, 1)]


def test_batch_optimized_mode_takes_whole_batches():
    h = Share()
    h.produce(b"a", b"b", b"c", b"d")
    m = member_id()
    h.join(m)
    got = h.fetch(m, 0, max_records=2)
    assert acquired(got) == [(0, 3, 1)]


def test_two_members_sharing_a_partition_get_each_record_once():
    h = Share()
    a, b = member_id(), member_id()
    h.join(a)
    h.heartbeat(b)
    h.produce(b"1", b"2")
    h.produce(b"3", b"4")
    first = h.fetch(a, 0, max_records=1)
    second = h.fetch(b, 0, max_records=1)
    assert values(first) == [b"1", b"2"] and values(second) == [b"3", b"4"]


def test_a_moved_leader_reads_every_acknowledged_state_back():
    h = Share(brokers=3)
    h.produce(b"a", b"b", b"c", b"d")
    m = member_id()
    opened(h, m)
    # 0 accepted, 1 rejected, 2 released (delivered once), 3 still held
    h.fetch(m, 1, acks={0: [(0, 2, [ACCEPT, REJECT, RELEASE])]}, max_records=0)
    assert h.states() == [(2, 2, "Available", 1, ""), (3, 3, "Acquired", 1, m)]
    partition = h.topic.partitions[0]
    new = next(r for r in partition.replicas if r != partition.leader)
    h.core.cluster.move_leader(partition, new)
    assert h.share_partition() is None  # the old leader let it go
    other = member_id()
    h.join(other)
    got = h.fetch(other, 0)
    assert got.error_code == errors.NONE
    # 2 comes back with its count, 3 (an acquisition, never written) as never delivered
    assert acquired(got) == [(2, 2, 2), (3, 3, 1)]
    assert h.share_partition().start_offset == 2


def test_the_share_coordinator_rebuilds_states_from_its_records_when_it_moves():
    h = Share(brokers=3)
    h.produce(b"a", b"b")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [ACCEPT])]}, max_records=0)
    states = h.core.share_states
    key = (GROUP, h.topic_id, 0)
    before = states.peek(*key)
    # written as Kafka writes it: the start offset when the acknowledgement was taken, and the
    # record it acknowledged
    assert (before.start_offset, [(b.first_offset, b.last_offset, b.delivery_state,
                                   b.delivery_count) for b in before.batches]) == (
        0, [(0, 0, RecordState.ACKNOWLEDGED, 1)])
    partition = states.placement.partition(state_key(*key))
    new = next(r for r in partition.replicas if r != partition.leader)
    h.core.cluster.move_leader(partition, new)
    after = states.peek(*key)
    assert after is not before
    assert (after.state_epoch, after.start_offset, after.batches) == \
        (before.state_epoch, before.start_offset, before.batches)
    # and a new leader of the data partition starts past the acknowledged record
    data = h.topic.partitions[0]
    h.core.cluster.move_leader(data, next(r for r in data.replicas if r != data.leader))
    other = member_id()
    h.join(other)
    assert acquired(h.fetch(other, 0)) == [(1, 1, 1)]


@pytest.mark.parametrize("version", [1, 2])
def test_a_share_fetch_for_a_topic_this_broker_does_not_lead_names_the_leader(version):
    h = Share(brokers=2, partitions=2)
    m = member_id()
    h.join(m)
    wrong = next(b for b in (0, 1) if b != h.leader(0))
    cls = wire.request_class(FETCH)
    body = cls(group_id=GROUP, member_id=m, share_session_epoch=0, max_wait_ms=0, min_bytes=1,
               max_bytes=1 << 20, max_records=10, batch_size=10, topics=[cls.FetchTopic(
                   topic_id=h.topic_id, partitions=[cls.FetchPartition(partition_index=0)])])
    answer = send(h.core, FETCH, version, body, broker=wrong)
    p = answer.responses[0].partitions[0]
    assert p.error_code == errors.NOT_LEADER_OR_FOLLOWER
    assert p.current_leader.leader_id == h.leader(0)
    assert [n.node_id for n in answer.node_endpoints] == [h.leader(0)]


# -- the admin APIs of share group offsets --------------------------------------------------------

def describe_offsets(h: Share, topics=None) -> dict[int, tuple[int, int]]:
    cls = wire.request_class(90)
    answer = send(h.core, 90, 1, broker=h.coordinator(), groups=[
        cls.DescribeShareGroupOffsetsRequestGroup(
            group_id=GROUP, topics=None if topics is None else [
                cls.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
                for t, ps in topics.items()])])
    group = answer.groups[0]
    assert group.error_code == errors.NONE
    return {p.partition_index: (p.start_offset, p.lag)
            for t in group.topics for p in t.partitions}


def test_describe_share_group_offsets_shows_the_start_offset_and_lag():
    h = Share(partitions=2)
    h.produce(b"a", b"b", b"c")
    m = member_id()
    h.join(m)
    # the partitions have a share state, but no start yet: nothing fetched
    assert describe_offsets(h) == {0: (-1, -1), 1: (-1, -1)}
    h.fetch(m, 0, partitions=(0, 1))
    h.fetch(m, 1, partitions=(0, 1), acks={0: [(0, 0, [ACCEPT])]}, max_records=0)
    h.fetch(m, 2, partitions=(0, 1), acks={0: [(1, 1, [ACCEPT])]}, max_records=0)
    # as Kafka: the start written with the last acknowledgement, lag past what is done
    assert describe_offsets(h, {TOPIC: [0]}) == {0: (1, 1)}
    assert describe_offsets(h, {"nothing": [0]}) == {0: (-1, -1)}


def test_alter_share_group_offsets_moves_an_empty_groups_start():
    h = Share()
    h.produce(b"a", b"b", b"c", b"d")
    m = member_id()
    opened(h, m)
    cls = wire.request_class(91)

    def alter(offset: int):
        return send(h.core, 91, 0, broker=h.coordinator(), group_id=GROUP, topics=[
            cls.AlterShareGroupOffsetsRequestTopic(topic_name=TOPIC, partitions=[
                cls.AlterShareGroupOffsetsRequestPartition(partition_index=0,
                                                           start_offset=offset)])])

    busy = alter(2)
    assert (busy.error_code, busy.error_message) == (errors.NON_EMPTY_GROUP,
                                                     "The group is not empty.")
    h.heartbeat(m, epoch=-1, topics=None)
    h.ack(m, -1, {0: [(0, 0, [ACCEPT])]})
    done = alter(2)
    assert done.error_code == errors.NONE
    assert [(p.partition_index, p.error_code) for t in done.responses
            for p in t.partitions] == [(0, errors.NONE)]
    assert describe_offsets(h) == {0: (2, 2)}
    again = member_id()
    h.join(again)
    assert values(h.fetch(again, 0)) == [b"c", b"d"]


def test_delete_share_group_offsets_and_delete_groups():
    h = Share()
    h.produce(b"a")
    m = member_id()
    opened(h, m)
    cls = wire.request_class(92)

    def delete(*names):
        return send(h.core, 92, 0, broker=h.coordinator(), group_id=GROUP, topics=[
            cls.DeleteShareGroupOffsetsRequestTopic(topic_name=n) for n in names])

    assert delete(TOPIC).error_code == errors.NON_EMPTY_GROUP
    h.heartbeat(m, epoch=-1, topics=None)
    answer = delete(TOPIC, "nothing")
    assert [(t.topic_name, t.error_code, t.error_message) for t in answer.responses] == [
        (TOPIC, errors.NONE, None),
        ("nothing", errors.UNKNOWN_TOPIC_OR_PARTITION,
         "This server does not host this topic-partition.")]
    assert describe_offsets(h) == {}
    assert h.core.share_states.peek(GROUP, h.topic_id, 0) is None
    assert [(t.topic_name, t.error_code, t.error_message) for t in delete(TOPIC).responses] \
        == [(TOPIC, errors.UNKNOWN_TOPIC_OR_PARTITION,
             "There is no offset information to delete.")]
    # the group itself, and with it any share state it has
    h.join(member_id())
    deleted = send(h.core, 42, 2, broker=h.coordinator(), groups_names=[GROUP]).results[0]
    assert deleted.error_code == errors.NON_EMPTY_GROUP


# -- steering it ----------------------------------------------------------------------------------

def test_a_held_member_acknowledges_nothing_and_its_records_come_back_after_the_lock():
    h = Share()
    h.produce(b"a")
    m = member_id()
    opened(h, m)
    rule = h.core.control.add({"api": "ShareFetch", "action": "hold_acknowledgements",
                               "count": None})
    answer = h.fetch(m, 1, acks={0: [(0, 0, [ACCEPT])]}, max_records=0)
    # the client is told nothing went wrong; the broker never saw the acknowledgement
    assert answer.error_code == errors.NONE
    assert h.states() == [(0, 0, "Acquired", 1, m)]
    h.core.clock.advance(LOCK_MS)
    assert h.states() == [(0, 0, "Available", 1, "")]
    h.core.control.remove(rule.id)
    again = h.fetch(m, 2)
    assert acquired(again) == [(0, 0, 2)]


def test_events_tell_what_happened_to_the_records():
    h = Share()
    h.produce(b"a", b"b")
    m = member_id()
    mark = h.core.events.last_seq
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [ACCEPT]), (1, 1, [RELEASE])]}, max_records=0)
    seen = [(e["type"], e.get("ranges") or e.get("batches"))
            for e in h.core.events.since(mark) if e["type"].startswith("share_")]
    assert seen == [("share_acquired", [[0, 1]]),
                    ("share_acknowledged", [[0, 0, [ACCEPT]], [1, 1, [RELEASE]]])]


def test_the_group_view_shows_each_share_partition_and_its_records_in_flight():
    from mockbroker.core.observe import inspect

    h = Share()
    h.produce(b"a", b"b", b"c")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [ACCEPT]), (1, 1, [RELEASE])]}, max_records=0)
    shard = h.core.groups.shard_of(GROUP)
    view = inspect.group_view(h.core, shard, h.core.groups.find_group(GROUP))
    assert (view.type, view.state, view.protocol) == ("share", "Stable", "simple")
    assert [mv.assignment for mv in view.members] == [{TOPIC: [0]}]
    (sp,) = view.share_partitions
    assert (sp.topic, sp.partition, sp.start_offset, sp.end_offset, sp.high_watermark,
            sp.lag) == (TOPIC, 0, 1, 3, 3, 2)
    assert [(r.first_offset, r.last_offset, r.state, r.delivery_count, r.member_id,
             r.lock_deadline_ms) for r in sp.in_flight] == [
        (1, 1, "Available", 1, None, None),
        (2, 2, "Acquired", 1, m, h.core.clock.now_ms() + LOCK_MS)]


def test_classic_requests_to_a_share_group_are_answered_as_kafka_answers_them():
    h = Share()
    h.heartbeat(member_id())
    node = h.coordinator()
    joined = send(h.core, 11, 9, broker=node, group_id=GROUP, session_timeout_ms=10_000,
                  rebalance_timeout_ms=10_000, member_id="", protocol_type="consumer",
                  protocols=[wire.request_class(11).JoinGroupRequestProtocol(
                      name="range", metadata=b"")], reason=None)
    assert (joined.error_code, joined.member_id) == (errors.INCONSISTENT_GROUP_PROTOCOL, "")
    assert send(h.core, 14, 5, broker=node, group_id=GROUP, generation_id=1, member_id="x",
                protocol_type="consumer", protocol_name="range",
                assignments=[]).error_code == errors.UNKNOWN_MEMBER_ID
    assert send(h.core, 12, 4, broker=node, group_id=GROUP, generation_id=1,
                member_id="x").error_code == errors.UNKNOWN_MEMBER_ID
    assert send(h.core, 13, 5, broker=node, group_id=GROUP, members=[
        wire.request_class(13).MemberIdentity(member_id="x")]).error_code == \
        errors.UNKNOWN_MEMBER_ID
    committed = send(h.core, 8, 9, broker=node, group_id=GROUP, generation_id_or_member_epoch=-1,
                     member_id="", topics=[wire.request_class(8).OffsetCommitRequestTopic(
                         name=TOPIC, partitions=[wire.request_class(8).OffsetCommitRequestPartition(
                             partition_index=0, committed_offset=1)])])
    assert committed.topics[0].partitions[0].error_code == errors.GROUP_ID_NOT_FOUND


def test_a_share_fetch_for_an_unknown_topic_or_a_group_of_another_type():
    h = Share()
    m = member_id()
    cls = wire.request_class(FETCH)
    unknown = send(h.core, FETCH, 1, broker=h.leader(), group_id=GROUP, member_id=m,
                   share_session_epoch=0, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                   max_records=10, batch_size=10, topics=[cls.FetchTopic(
                       topic_id=uuid.uuid4(), partitions=[cls.FetchPartition(partition_index=0)])])
    assert unknown.responses[0].partitions[0].error_code == errors.UNKNOWN_TOPIC_ID
    # a group that never had a share state of the partition (a consumer group, say): Kafka's
    # share coordinator refuses the read, and the fetch answers an unknown server error
    stranger = h.fetch(member_id(), 0, group_id="consumers")
    assert stranger.error_code == errors.NONE
    assert partition_error(stranger) == errors.UNKNOWN_SERVER_ERROR
    assert partition_error(stranger, field="error_message") is None
