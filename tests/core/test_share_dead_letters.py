"""The share groups' dead-letter queue (KIP-1191) in the core, on a manual clock: what a group
with ``errors.deadletterqueue.topic.name`` does with a record it rejects or gives up on (it is
Archiving, the broker writes a record for it to the queue's topic, then it is Archived), the
queue's records as Kafka 4.4 writes them (headers, partition, key and value only when asked),
the queues Kafka refuses (the records are archived regardless), the topic it creates when the
broker allows, and records still Archiving when their leader moves."""

from __future__ import annotations

import pytest

from mockbroker.core.config.group import validate_group_overrides
from mockbroker.core.errors import ApiException
from mockbroker.core.share.deadletter import AUTO_CREATE, PREFIX, TOPIC_ENABLE
from mockbroker.core.share.state import RecordState
from tests.core.test_share_groups import (ACCEPT, GROUP, LOCK_MS, RELEASE, REJECT, TOPIC, Share,
                                          acquired, member_id, opened)
from wire import errors, records

QUEUE = "dlq.jobs"
REJECTED = "Offset rejected by client."
EXHAUSTED = "Offset delivery count exceeded the threshold."


def with_queue(partitions: int = 1, queue_partitions: int = 2, brokers: int = 1,
               **configs: str) -> Share:
    """A share group whose dead-letter queue is ``dlq.jobs``, a topic that allows it."""
    h = Share(partitions=partitions, brokers=brokers)
    h.core.cluster.create_topic(QUEUE, queue_partitions, min(brokers, 3),
                                configs={TOPIC_ENABLE: "true"})
    h.configure(**{"errors.deadletterqueue.topic.name": QUEUE, **configs})
    return h


def queued(h: Share, topic: str = QUEUE) -> list[tuple]:
    """(partition, key, value, headers, timestamp) of every record in the queue's topic."""
    out = []
    for partition in h.core.cluster.topics[topic].partitions:
        for batch in partition.log.stored_from(0):
            out += [(partition.index, r.key, r.value, r.headers, r.timestamp)
                    for r in records.decode_records(batch.data)]
    return out


def headers(offset: int, count: int, why: str, partition: int = 0) -> list:
    return [("__dlq.errors.topic", TOPIC.encode()),
            ("__dlq.errors.partition", str(partition).encode()),
            ("__dlq.errors.offset", str(offset).encode()),
            ("__dlq.errors.group", GROUP.encode()),
            ("__dlq.errors.delivery.count", str(count).encode()),
            ("__dlq.errors.message", why.encode())]


def written_states(h: Share, partition: int = 0) -> list[tuple[int, int, int, int]]:
    """The state batches the share coordinator keeps for the share partition."""
    state = h.core.share_states.peek(GROUP, h.topic_id, partition)
    return [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in state.batches]


def dead_letter_events(h: Share, mark: int) -> list[dict]:
    return [e for e in h.core.events.since(mark) if e["type"] == "share_dead_lettered"]


def reject_one(h: Share) -> int:
    """A record produced, acquired and rejected, and the broker's write to the queue done;
    returns the event sequence before the rejection."""
    h.produce(b"a")
    m = member_id()
    opened(h, m)
    mark = h.core.events.last_seq
    h.fetch(m, 1, acks={0: [(0, 0, [REJECT])]}, max_records=0)
    h.core.clock.advance(0)
    return mark


def test_a_rejected_record_is_archiving_until_the_queue_has_it():
    h = with_queue()
    h.produce(b"a", b"b")
    m = member_id()
    opened(h, m)
    mark = h.core.events.last_seq
    h.fetch(m, 1, acks={0: [(0, 0, [REJECT])]}, max_records=0)
    # written as Archiving first, and nothing acquires it meanwhile
    assert h.states() == [(0, 0, "Archiving", 1, ""), (1, 1, "Acquired", 1, m)]
    assert written_states(h) == [(0, 0, RecordState.ARCHIVING, 1)]
    assert h.share_partition().start_offset == 0
    assert queued(h) == []
    now = h.core.clock.now_ms()
    h.core.clock.advance(0)  # the broker's write to the queue
    assert h.states() == [(1, 1, "Acquired", 1, m)]
    assert h.share_partition().start_offset == 1
    assert written_states(h) == [(0, 0, RecordState.ARCHIVED, 1)]
    # partition 0 of the source, 0 % 2 of the queue; no key or value: copying is off
    assert queued(h) == [(0, None, None, headers(0, 1, REJECTED), now)]
    [event] = dead_letter_events(h, mark)
    assert (event["topic"], event["partition"], event["ranges"], event["queue"],
            event["error"], event["reason"]) == (TOPIC, 0, [[0, 0]], QUEUE, None, REJECTED)


def test_a_record_at_its_delivery_limit_goes_to_the_queue_when_its_lock_expires():
    h = with_queue(partitions=3, **{"share.delivery.count.limit": "2"})
    h.produce(b"poison", partition=1)
    m = member_id()
    assert opened(h, m, partitions=(1,)).error_code == errors.NONE
    h.core.clock.advance(LOCK_MS)
    again = h.fetch(m, 1, partitions=(1,))
    assert acquired(again, 1) == [(0, 0, 2)]
    h.core.clock.advance(LOCK_MS)  # expired at the limit: Archiving, then written at once
    assert h.states(1) == []
    # source partition 1 goes to partition 1 % 2 of the queue
    assert [(p, key, value, hs) for p, key, value, hs, _ in queued(h)] == \
        [(1, None, None, headers(0, 2, EXHAUSTED, partition=1))]


def test_a_record_released_at_its_limit_goes_to_the_queue_and_never_comes_back():
    h = with_queue(**{"share.delivery.count.limit": "2"})
    h.produce(b"a", b"b")
    m = member_id()
    opened(h, m)
    second = h.fetch(m, 1, acks={0: [(0, 1, [RELEASE])]})
    assert acquired(second) == [(0, 1, 2)]
    h.fetch(m, 2, acks={0: [(0, 0, [RELEASE]), (1, 1, [ACCEPT])]}, max_records=0)
    h.core.clock.advance(0)
    assert [hs for _, _, _, hs, _ in queued(h)] == [headers(0, 2, EXHAUSTED)]
    assert acquired(h.fetch(m, 3)) == []
    assert h.share_partition().start_offset == 2


def test_copying_puts_the_records_key_and_value_in_the_queue_not_its_headers():
    h = with_queue(**{"errors.deadletterqueue.copy.record.enable": "true"})
    h.produce(b"a", b"b", b"c")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 2, [REJECT, ACCEPT, REJECT])]}, max_records=0)
    h.core.clock.advance(0)
    assert [(key, value, hs) for _, key, value, hs, _ in queued(h)] == [
        (b"k", b"a", headers(0, 1, REJECTED)), (b"k", b"c", headers(2, 1, REJECTED))]


def test_without_a_queue_a_rejected_record_is_archived_at_once():
    h = Share()
    h.core.cluster.create_topic(QUEUE, 1, 1, configs={TOPIC_ENABLE: "true"})
    h.produce(b"a")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [REJECT])]}, max_records=0)
    assert written_states(h) == [(0, 0, RecordState.ARCHIVED, 1)]
    h.core.clock.advance(0)
    assert queued(h) == []


@pytest.mark.parametrize("case, queue, error", [
    ("missing", "dlq.absent", "DLQ topic does not exist and auto create is disabled on cluster "
                              f"for share group: {GROUP}, topic: dlq.absent."),
    ("not enabled", "dlq.plain", "DLQ is not enabled on configured DLQ topic for share group: "
                                 f"{GROUP}, topic: dlq.plain."),
    ("no prefix", "errors-of-jobs", "Configured DLQ topic name does not comply with the DLQ "
                                    f"topic prefix in share group: {GROUP}, topic: "
                                    "errors-of-jobs, prefix: dlq.."),  # Kafka's format: "%s."
])
def test_a_queue_kafka_refuses_leaves_the_records_archived(case, queue, error):
    h = Share()
    h.core.cluster.create_topic("dlq.plain", 1, 1)
    h.core.cluster.create_topic("errors-of-jobs", 1, 1, configs={TOPIC_ENABLE: "true"})
    h.configure(**{"errors.deadletterqueue.topic.name": queue})
    mark = reject_one(h)
    assert h.states() == [] and h.share_partition().start_offset == 1
    assert written_states(h) == [(0, 0, RecordState.ARCHIVED, 1)]
    [event] = dead_letter_events(h, mark)
    assert (event["queue"], event["error"]) == (None, error)
    assert "dlq.absent" not in h.core.cluster.topics
    assert queued(h, "dlq.plain") == queued(h, "errors-of-jobs") == []


def test_the_broker_creates_the_queue_when_allowed_and_an_empty_prefix_allows_any_name():
    h = Share()
    configs = h.core.cluster.broker_configs
    configs.dynamic_default.update({AUTO_CREATE: "true", PREFIX: ""})
    configs.changed()
    h.configure(**{"errors.deadletterqueue.topic.name": "rejects"})
    reject_one(h)
    created = h.core.cluster.topics["rejects"]
    assert created.configs == {TOPIC_ENABLE: "true", "message.timestamp.type": "CreateTime"}
    assert len(created.partitions) == 1  # the broker's num.partitions
    assert [hs for _, _, _, hs, _ in queued(h, "rejects")] == [headers(0, 1, REJECTED)]


def test_records_still_archiving_when_the_leader_moves_go_to_the_queue_once_from_the_next():
    h = with_queue(brokers=3)
    h.produce(b"a", b"b")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [REJECT])]}, max_records=0)
    assert written_states(h) == [(0, 0, RecordState.ARCHIVING, 1)]
    partition = h.topic.partitions[0]
    h.core.cluster.move_leader(partition, next(r for r in partition.replicas
                                               if r != partition.leader))
    h.core.clock.advance(0)  # the old leader's write finds its share partition gone
    assert queued(h) == []
    other = member_id()
    h.join(other)
    got = h.fetch(other, 0)  # the new leader reads the state back and resumes the write
    assert acquired(got) == [(1, 1, 1)]
    h.core.clock.advance(0)
    assert [hs for _, _, _, hs, _ in queued(h)] == [headers(0, 1, REJECTED)]
    assert written_states(h) == [(0, 0, RecordState.ARCHIVED, 1)]
    assert h.share_partition().start_offset == 1


def test_a_queue_name_starting_with_two_underscores_is_an_invalid_group_config():
    with pytest.raises(ApiException) as refused:
        validate_group_overrides({"errors.deadletterqueue.topic.name": "__errors"},
                                 Share().core.cluster.broker_configs.effective(0))
    assert (refused.value.error_code, str(refused.value)) == (
        errors.INVALID_CONFIG,
        "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'")


def test_the_queue_gets_batches_no_larger_than_its_max_message_bytes():
    h = with_queue()
    h.core.cluster.topics[QUEUE].configs["max.message.bytes"] = "600"
    h.core.cluster.broker_configs.changed()
    h.produce(*(b"v%d" % i for i in range(7)))
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 6, [REJECT])]}, max_records=0)
    h.core.clock.advance(0)
    batches = list(h.core.cluster.topics[QUEUE].partitions[0].log.stored_from(0))
    assert len(batches) > 1 and all(len(b.data) <= 600 for b in batches)
    assert [hs for _, _, _, hs, _ in queued(h)] == [headers(o, 1, REJECTED) for o in range(7)]


def test_a_queue_that_refuses_the_produce_leaves_the_records_archived():
    h = with_queue()
    h.core.cluster.topics[QUEUE].configs["max.message.bytes"] = "100"
    h.core.cluster.broker_configs.changed()
    mark = reject_one(h)
    assert h.states() == [] and queued(h) == []
    [event] = dead_letter_events(h, mark)
    assert event["error"].startswith(
        f"Unable to produce to DLQ topic {QUEUE} partition 0: MESSAGE_TOO_LARGE")
