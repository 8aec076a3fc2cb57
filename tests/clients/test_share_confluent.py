"""confluent-kafka's preview ``ShareConsumer`` (librdkafka 2.16) in a share group (KIP-932), on
both targets, as a new user meets it.

A user who produces some records, then starts a ``ShareConsumer`` with nothing but
``bootstrap.servers`` and ``group.id`` and polls, gets nothing, however long they poll.  That is
not the client's fault: a share group starts where its share partitions are when they are first
read, the end of each log, unless the *group* config ``share.auto.offset.reset`` says
``earliest`` (KIP-932; ``latest`` is the default).  It is a group config, set with
IncrementalAlterConfigs on a ``GROUP`` resource, not a consumer setting: the client refuses
``auto.offset.reset`` and does not know ``share.auto.offset.reset``.  Records produced after the
consumer's share partitions were first read are delivered with the defaults; with ``earliest``
set on the group, everything is.  The client's requests (ShareGroupHeartbeat v1, ShareFetch v1,
ShareAcknowledge v1) get no error from either target in any of these cases.
"""

from __future__ import annotations

import itertools

import confluent_kafka as ck
import pytest

import wire
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.test_share_groups import share_group, share_members
from tests.real_kafka import ask
from wire import errors


def share_consumer(stack, target, group: str, topic: str, **config: str) -> ck.ShareConsumer:
    """A ShareConsumer configured as the client's documentation asks (``group.id``,
    ``bootstrap.servers``), subscribed to ``topic``; closed at the end of the test."""
    consumer = ck.ShareConsumer({"bootstrap.servers": target.bootstrap_servers,
                                 "group.id": group, "logger": RDKAFKA_LOG, **config})
    stack.callback(consumer.close)
    consumer.subscribe([topic])
    return consumer


class Producer:
    """A producer that remembers where each value it produced went: value -> (partition,
    offset)."""

    def __init__(self, stack, target, topic: str):
        self.topic = topic
        self.placed: dict[str, tuple[int, int]] = {}
        self._producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                                      "logger": RDKAFKA_LOG})
        stack.callback(self._producer.flush, TIMEOUT_S)

    def produce(self, partition: int, *values: str) -> None:
        def placed(err, msg):
            assert err is None, err
            self.placed[msg.value().decode()] = (msg.partition(), msg.offset())
        for value in values:
            self._producer.produce(self.topic, value.encode(), partition=partition,
                                   on_delivery=placed)
        assert self._producer.flush(TIMEOUT_S) == 0


def polled(consumer: ck.ShareConsumer) -> list[tuple[int, int, str, int]]:
    """What one poll returned: (partition, offset, value, delivery count) of each record; an
    error in place of a record fails the test."""
    got = []
    for message in consumer.poll(0.5):
        assert message.error() is None, message.error()
        got.append((message.partition(), message.offset(), message.value().decode(),
                    message.delivery_count()))
    return got


def share_group_lag(target, group: str) -> dict[int, int]:
    """DescribeShareGroupOffsets (v1) of ``group`` at its coordinator, as the Java Admin asks
    it: partition -> lag (records not yet acknowledged past the start offset)."""
    found = target.coordinator(0, group)
    assert found.error_code == errors.NONE, found
    cls = wire.request_class(90)
    [entry] = ask(found.port, 90, 1, cls(groups=[cls.DescribeShareGroupOffsetsRequestGroup(
        group_id=group, topics=None)]), host=found.host).groups
    assert entry.error_code == errors.NONE, entry
    return {p.partition_index: p.lag for t in entry.topics for p in t.partitions}


@pytest.mark.parametrize("client", ["confluent-kafka"])
def test_the_share_consumer_refuses_auto_offset_reset_which_is_a_group_config(target, client):
    """Where a user of the classic consumer would set ``auto.offset.reset``, the share consumer
    stops them at once: the reset of a share group is the group config
    ``share.auto.offset.reset``, which is no client property either."""
    config = {"bootstrap.servers": target.bootstrap_servers, "group.id": target.unique("g"),
              "logger": RDKAFKA_LOG}
    with pytest.raises(ValueError) as refused:
        ck.ShareConsumer({**config, "auto.offset.reset": "earliest"})
    assert str(refused.value) == ("Failed to create share consumer: `auto.offset.reset` is not "
                                  "applicable for share consumer")
    with pytest.raises(ck.KafkaException) as unknown:
        ck.ShareConsumer({**config, "share.auto.offset.reset": "earliest"})
    assert unknown.value.args[0].code() == ck.KafkaError._INVALID_ARG
    assert unknown.value.args[0].str() == \
        'No such configuration property: "share.auto.offset.reset"'


@pytest.mark.parametrize("client", ["confluent-kafka"])
def test_with_the_defaults_records_produced_before_it_joined_never_reach_a_new_consumer(
        stack, target, client):
    """The issue as a new user sees it: records produced, then a ShareConsumer started with the
    defaults, polls and gets none of them.  The group's share partitions start at the end of
    their logs when first read (``share.auto.offset.reset`` is ``latest`` unless the group says
    otherwise), so what was produced before is behind the group's start for good; what is
    produced once the consumer reads is delivered, in order, once each.

    Records go on being produced, one to each partition per poll, until the consumer has been
    given some of each partition: when it starts reading is the target's business, and nothing
    before that point is delivered either way."""
    topic = target.create_topic("share-ck-defaults", 2)
    group = target.unique("share-ck-defaults")
    producer = Producer(stack, target, topic)
    producer.produce(0, "before-0", "before-2")
    producer.produce(1, "before-1", "before-3")
    consumer = share_consumer(stack, target, group, topic)

    got = []
    counter = itertools.count()

    def both_partitions_delivered():
        for partition in (0, 1):
            producer.produce(partition, f"after-{next(counter)}")
        got.extend(polled(consumer))
        return {partition for partition, *_ in got} == {0, 1}
    wait_for(both_partitions_delivered, "records produced while the consumer polls")

    assert share_members(target, group) == {"rdkafka": [0, 1]}
    assert not [value for _, _, value, _ in got if value.startswith("before")]
    # every record given is one produced after the others, where the producer put it, once
    assert all(value.startswith("after-") and producer.placed[value] == (partition, offset)
               and count == 1 for partition, offset, value, count in got)
    for partition in (0, 1):
        offsets = [offset for p, offset, _, _ in got if p == partition]
        assert offsets[0] >= 2 and offsets == list(range(offsets[0], offsets[0] + len(offsets)))


@pytest.mark.parametrize("client", ["confluent-kafka"])
def test_with_share_auto_offset_reset_earliest_on_the_group_it_gets_every_record(stack, target,
                                                                             client):
    """The same records, the same consumer, once the group is told to start at the earliest
    offset (IncrementalAlterConfigs on the GROUP resource, before the consumer starts): every
    record arrives once, from both partitions, and is accepted (implicit acknowledgement: each
    poll accepts what the one before returned, close accepts the rest), which leaves the group
    no lag."""
    topic = target.create_topic("share-ck-earliest", 2)
    group = share_group(target, "share-ck-earliest")   # share.auto.offset.reset=earliest
    producer = Producer(stack, target, topic)
    producer.produce(0, "job-0", "job-2", "job-4")
    producer.produce(1, "job-1", "job-3", "job-5")
    consumer = share_consumer(stack, target, group, topic)

    got = []

    def every_record():
        got.extend(polled(consumer))
        return len(got) >= 6
    wait_for(every_record, "the six records produced before the consumer started")

    assert sorted(got) == [(0, 0, "job-0", 1), (0, 1, "job-2", 1), (0, 2, "job-4", 1),
                           (1, 0, "job-1", 1), (1, 1, "job-3", 1), (1, 2, "job-5", 1)]
    results = consumer.commit_sync(float(TIMEOUT_S))
    assert all(error is None for error in results.values()), results
    consumer.close()
    assert share_group_lag(target, group) == {0: 0, 1: 0}
