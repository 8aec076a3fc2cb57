"""Produce refusals answered by the core: the error code, and no error message.

Kafka writes a partition's ``error_message`` only for per-record validation failures (those that
also carry ``record_errors``); every other refusal goes out with the code alone, and the Java
client then raises the error's standard exception text.  Spark's sink surfaced the difference: a
batch over ``max.message.bytes`` failed with our own sentence instead of Kafka's
"The request included a message larger than the max message size the server will accept."
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.datapath.produce import append_records
from tests.core.harness import make_core, send
from wire import errors, records


@pytest.fixture
def core():
    core = make_core()
    core.cluster.create_topic("small", 1, configs={"max.message.bytes": "200"})
    return core


def _produce(core, batch: bytes | None, topic: str = "small", client_id: str = "c",
             version: int = 11):
    cls = wire.request_class(0)
    body = cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name=topic, partition_data=[cls.PartitionProduceData(index=0, records=batch)])])
    response = send(core, 0, version, body, client_id=client_id)
    part = response.responses[0].partition_responses[0]
    return part.error_code, part.error_message, part.record_errors


def _corrupt_crc(batch: bytes) -> bytes:
    return batch[:-1] + bytes([batch[-1] ^ 0xFF])


def _refusals(core) -> dict[str, bytes]:
    one = records.encode_batch([(b"k", b"v", [], 1)])
    return {
        "over max.message.bytes": records.encode_batch([(b"k", b"x" * 500, [], 1)]),
        "bad CRC": _corrupt_crc(one),
        "control batch": records.encode_batch([(b"k", b"v", [], 1)], is_control=True),
        "idempotent without a sequence": records.encode_batch(
            [(b"k", b"v", [], 1)], producer_id=7, producer_epoch=0),
        "two batches": one + one,
    }


EXPECTED = {
    "over max.message.bytes": errors.MESSAGE_TOO_LARGE,
    "bad CRC": errors.CORRUPT_MESSAGE,
    "control batch": errors.INVALID_RECORD,
    "idempotent without a sequence": errors.INVALID_RECORD,
    "two batches": errors.INVALID_RECORD,
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_refusals_carry_the_code_without_a_message(core, case):
    code, message, record_errors = _produce(core, _refusals(core)[case])
    assert (code, message, record_errors) == (EXPECTED[case], None, [])


def test_producer_state_refusals_carry_no_message(core):
    core.cluster.create_topic("t", 1)
    first = records.encode_batch([(b"k", b"v", [], 1)], producer_id=7, producer_epoch=1,
                                 base_sequence=0)
    assert _produce(core, first, "t")[0] == errors.NONE
    gap = records.encode_batch([(b"k", b"v", [], 1)], producer_id=7, producer_epoch=1,
                               base_sequence=5)
    assert _produce(core, gap, "t") == (errors.OUT_OF_ORDER_SEQUENCE_NUMBER, None, [])
    stale = records.encode_batch([(b"k", b"v", [], 1)], producer_id=7, producer_epoch=0,
                                 base_sequence=1)
    assert _produce(core, stale, "t") == (errors.INVALID_PRODUCER_EPOCH, None, [])


def test_writing_to_an_internal_topic_carries_no_message(core):
    core.cluster.create_topic("__consumer_offsets", 1)
    batch = records.encode_batch([(b"k", b"v", [], 1)])
    assert _produce(core, batch, "__consumer_offsets") == \
        (errors.INVALID_TOPIC_EXCEPTION, None, [])


def test_the_core_still_says_why(core):
    partition = core.cluster.topics["small"].partitions[0]
    refused = append_records(core.cluster, partition,
                             records.encode_batch([(b"k", b"x" * 500, [], 1)]), acks=-1,
                             broker_id=0, client_id="c", now_ms=0)
    assert refused.error_code == errors.MESSAGE_TOO_LARGE
    assert "max.message.bytes 200" in refused.reason
