"""Fetch with ``last_fetched_epoch`` (v12+), answered by the core as Kafka's leader answers it.

Found by sending the same requests to mockbroker and to a Kafka 4.1 broker: a fetch naming an
epoch the partition never had was answered with records instead of OFFSET_OUT_OF_RANGE.
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.deferred import Deferred
from tests.core.harness import make_core, send
from wire import errors, records

VERSION = 17


def _call(core, api_key, version, body):
    return send(core, api_key, version, body, client_id="c")


def _produce(core, *values: bytes):
    cls = wire.request_class(0)
    batch = records.encode_batch([(b"k", v, [], 1) for v in values])
    body = cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name="t", partition_data=[cls.PartitionProduceData(index=0, records=batch)])])
    assert _call(core, 0, 9, body).responses[0].partition_responses[0].error_code == 0


def _fetch(core, offset: int, last_fetched_epoch: int, *, max_wait_ms: int = 0,
           version: int = VERSION):
    cls = wire.request_class(1)
    body = cls(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
               session_id=0, session_epoch=-1, topics=[cls.FetchTopic(
                   topic="t", topic_id=core.cluster.topics["t"].topic_id,
                   partitions=[cls.FetchPartition(
                       partition=0, current_leader_epoch=-1, fetch_offset=offset,
                       last_fetched_epoch=last_fetched_epoch, partition_max_bytes=1 << 20)])])
    return _call(core, 1, version, body)


def _values(part) -> list[bytes]:
    return [r.value for _, batch in records.split_batches(part.records)
            for r in records.decode_records(batch)]


@pytest.fixture
def core():
    """Offsets 0-2 written in leader epoch 0, offsets 3-4 in epoch 1."""
    core = make_core()
    core.cluster.create_topic("t", 1)
    _produce(core, b"a", b"b", b"c")
    partition = core.cluster.topics["t"].partitions[0]
    core.cluster.set_leader(partition, 0)  # a new leader epoch, as after an election
    assert partition.leader_epoch == 1
    _produce(core, b"d", b"e")
    return core


def test_an_epoch_the_partition_never_had_is_out_of_range(core):
    part = _fetch(core, 0, last_fetched_epoch=7).responses[0].partitions[0]
    assert part.error_code == errors.OFFSET_OUT_OF_RANGE
    assert (part.high_watermark, part.log_start_offset, part.records) == (-1, -1, b"")


def test_a_position_inside_its_epoch_reads_as_usual(core):
    part = _fetch(core, 1, last_fetched_epoch=0).responses[0].partitions[0]
    assert part.error_code == errors.NONE and part.diverging_epoch.epoch == -1
    assert _values(part) == [b"a", b"b", b"c", b"d", b"e"]  # whole batches from offset 1's
    part = _fetch(core, 4, last_fetched_epoch=1).responses[0].partitions[0]
    assert part.error_code == errors.NONE and _values(part) == [b"d", b"e"]


def test_a_position_past_the_end_of_its_epoch_gets_the_diverging_epoch(core):
    # a fetcher that wrote offset 3 in epoch 0 (which ended at 3 here) must truncate to 3
    part = _fetch(core, 4, last_fetched_epoch=0).responses[0].partitions[0]
    assert part.error_code == errors.NONE
    assert (part.diverging_epoch.epoch, part.diverging_epoch.end_offset) == (0, 3)
    assert part.records == b""
    assert (part.high_watermark, part.log_start_offset) == (5, 0)


def test_a_diverging_epoch_ends_a_long_poll_at_once(core):
    response = _fetch(core, 5, last_fetched_epoch=0, max_wait_ms=500)
    assert not isinstance(response, Deferred)
    assert response.responses[0].partitions[0].diverging_epoch.end_offset == 3
    # the same position without a last fetched epoch waits for data
    assert isinstance(_fetch(core, 5, last_fetched_epoch=-1, max_wait_ms=500), Deferred)


def test_below_the_log_start_is_out_of_range_even_with_a_known_epoch(core):
    core.cluster.topics["t"].partitions[0].log.delete_records_before(2)
    part = _fetch(core, 1, last_fetched_epoch=0).responses[0].partitions[0]
    assert part.error_code == errors.OFFSET_OUT_OF_RANGE


def test_before_v12_there_is_no_last_fetched_epoch_to_check(core):
    part = _fetch(core, 0, last_fetched_epoch=7, version=11).responses[0].partitions[0]
    assert part.error_code == errors.NONE and _values(part)[0] == b"a"
