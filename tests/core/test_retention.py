"""Retention by size and time, as Kafka's log cleaner deletes segments under
``cleanup.policy=delete``, on a manual clock.

The figures of the first two tests are what a Kafka 4.4 broker answered to the same records
(single-record batches with 10,000-byte values, ``segment.bytes`` 1 MiB): ListOffsets EARLIEST
104 under ``retention.bytes`` 1,500,000 with 300 records; 5 with ``segment.ms`` 2000, 5 records,
then 5 more three seconds later, under ``retention.bytes`` 15,000; and the log end offset (the
active segment deleted too) once ``retention.ms`` has passed.
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.datapath import fetch
from mockbroker.core.clock import ManualClock
from tests.core.harness import make_core, send
from wire import errors, records

START = 1_700_000_000_000
CHECK_MS = 300_000  # Kafka's log.retention.check.interval.ms
VALUE = b"x" * 10_000
MIB = 1024 * 1024


@pytest.fixture
def clock():
    return ManualClock(START)


@pytest.fixture
def core(clock):
    return make_core(clock=clock)


def produce(core, topic: str, count: int, *, first: int = 0) -> None:
    """``count`` single-record batches, timestamped now, as a producer with linger 0 sends."""
    cls = wire.request_class(0)
    for i in range(first, first + count):
        batch = records.encode_batch([(b"k%d" % i, VALUE, [], core.clock.now_ms())])
        body = cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
            name=topic, partition_data=[cls.PartitionProduceData(index=0, records=batch)])])
        response = send(core, 0, 9, body)
        assert response.responses[0].partition_responses[0].error_code == errors.NONE


def earliest(core, topic: str) -> int:
    return fetch.list_offset(core.cluster.topics[topic].partitions[0], -2)[0]


def fetch_at(core, topic: str, offset: int):
    cls = wire.request_class(1)
    body = cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_id=0,
               session_epoch=-1, topics=[cls.FetchTopic(
                   topic=topic, topic_id=core.cluster.topics[topic].topic_id,
                   partitions=[cls.FetchPartition(
                       partition=0, current_leader_epoch=-1, fetch_offset=offset,
                       last_fetched_epoch=-1, partition_max_bytes=1 << 20)])])
    return send(core, 1, 12, body).responses[0].partitions[0]


def test_size_retention_deletes_whole_old_segments_as_kafka_does(core, clock):
    core.cluster.create_topic("size", 1, configs={"segment.bytes": str(MIB),
                                                  "retention.bytes": "1500000"})
    produce(core, "size", 300)
    log = core.cluster.topics["size"].partitions[0].log
    assert [s.base_offset for s in log.segments] == [0, 104, 208]
    clock.advance(CHECK_MS - 1)
    assert earliest(core, "size") == 0  # not checked yet
    clock.advance(1)
    # 3 MB over 1.5 MB: the first segment goes; the second would take the log under the limit
    assert earliest(core, "size") == 104
    assert [s.base_offset for s in log.segments] == [104, 208]
    assert log.size_bytes == sum(len(b.data) for b in log.batches)
    clock.advance(10 * CHECK_MS)
    assert earliest(core, "size") == 104  # under the limit now: nothing more goes


def test_segment_ms_rolls_on_the_next_append_and_size_retention_drops_the_old(core, clock):
    core.cluster.create_topic("roll", 1, configs={"segment.ms": "2000",
                                                  "retention.bytes": "15000"})
    produce(core, "roll", 5)
    clock.advance(3000)
    produce(core, "roll", 5, first=5)
    log = core.cluster.topics["roll"].partitions[0].log
    assert [s.base_offset for s in log.segments] == [0, 5]
    clock.advance(CHECK_MS)
    # the active segment alone is still over 15,000 bytes, but deleting it would leave the log
    # smaller than the limit by more than nothing: Kafka keeps it
    assert earliest(core, "roll") == 5
    assert fetch.list_offset(core.cluster.topics["roll"].partitions[0], -1)[0] == 10


def test_time_retention_deletes_every_segment_the_active_one_too(core, clock):
    core.cluster.create_topic("time", 1, configs={"segment.bytes": str(MIB),
                                                  "retention.ms": "600000"})
    produce(core, "time", 150)
    clock.advance(CHECK_MS)
    produce(core, "time", 150, first=150)
    log = core.cluster.topics["time"].partitions[0].log
    assert [s.base_offset for s in log.segments] == [0, 104, 208]
    clock.advance(CHECK_MS)  # 600 s after the first records: not more than retention.ms
    assert earliest(core, "time") == 0
    clock.advance(CHECK_MS)  # the first 150 records are 900 s old, the rest 600 s
    # segment 104-207 holds records of both ages: its largest timestamp keeps it
    assert earliest(core, "time") == 104
    clock.advance(CHECK_MS)
    assert earliest(core, "time") == 300 == log.log_end_offset
    assert log.batches == [] and log.size_bytes == 0
    assert [s.base_offset for s in log.segments] == [300]  # a new, empty active segment
    produce(core, "time", 1, first=300)
    assert fetch_at(core, "time", 300).error_code == errors.NONE


def test_a_consumer_before_the_new_log_start_is_out_of_range(core, clock):
    core.cluster.create_topic("t", 1, configs={"segment.bytes": str(MIB),
                                               "retention.bytes": str(MIB)})
    produce(core, "t", 250)
    assert fetch_at(core, "t", 10).error_code == errors.NONE
    clock.advance(CHECK_MS)
    part = fetch_at(core, "t", 10)
    assert part.error_code == errors.OFFSET_OUT_OF_RANGE
    assert earliest(core, "t") == 104
    assert fetch_at(core, "t", 104).error_code == errors.NONE


def test_the_epoch_cache_and_aborted_index_follow_the_log_start(core, clock):
    core.cluster.create_topic("t", 1, configs={"segment.bytes": str(MIB),
                                               "retention.ms": "1000"})
    partition = core.cluster.topics["t"].partitions[0]
    produce(core, "t", 104)
    core.cluster.set_leader(partition, 0)  # epoch 1
    clock.advance(1)
    produce(core, "t", 104, first=104)
    core.cluster.set_leader(partition, 0)  # epoch 2
    produce(core, "t", 10, first=208)
    assert partition.log.epoch_entries(2) == [(0, 0), (1, 104), (2, 208)]
    # after the first check everything is older than a second
    clock.advance(CHECK_MS)
    assert partition.log.epoch_entries(2) == [(2, 218)]
    assert partition.log.epochs == [(2, 218)]
    assert fetch.list_offset(partition, -2) == (218, -1, 2)


def test_compacted_topics_and_unlimited_retention_keep_everything(core, clock):
    core.cluster.create_topic("compacted", 1, configs={
        "segment.bytes": str(MIB), "retention.ms": "1000", "retention.bytes": "0",
        "cleanup.policy": "compact"})
    core.cluster.create_topic("default", 1, configs={"segment.bytes": str(MIB)})
    produce(core, "compacted", 300)
    produce(core, "default", 300)
    clock.advance(6 * 24 * 3600 * 1000)  # under a week: Kafka's default retention
    assert earliest(core, "compacted") == 0
    assert earliest(core, "default") == 0
    clock.advance(24 * 3600 * 1000 + CHECK_MS)
    assert earliest(core, "compacted") == 0
    assert earliest(core, "default") == 300  # log.retention.hours=168 has passed


def test_broker_defaults_and_the_check_interval_are_settings(clock):
    core = make_core(clock=clock, log_retention_check_interval_ms=1000,
                     log_retention_bytes=MIB, log_segment_bytes=MIB)
    core.cluster.create_topic("t", 1)
    produce(core, "t", 250)
    clock.advance(1000)
    assert earliest(core, "t") == 104
    # a topic override wins over the broker default
    core.cluster.create_topic("kept", 1, configs={"retention.bytes": "-1"})
    produce(core, "kept", 250)
    clock.advance(1000)
    assert earliest(core, "kept") == 0


def test_delete_records_then_retention_drops_segments_below_the_log_start(core, clock):
    core.cluster.create_topic("t", 1, configs={"segment.bytes": str(MIB)})
    produce(core, "t", 250)
    log = core.cluster.topics["t"].partitions[0].log
    size = log.size_bytes
    assert core.cluster.delete_records("t", 0, 150, broker_id=0) == 150
    assert log.size_bytes == size  # the segment files are still there
    clock.advance(CHECK_MS)
    assert [s.base_offset for s in log.segments] == [104, 208]
    assert earliest(core, "t") == 150  # the log start does not go back to 104
    assert log.batches[0].base_offset == 150
