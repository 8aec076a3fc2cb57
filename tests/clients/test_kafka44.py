"""Kafka 4.4's handling of a topic's compression.type and timestamp bounds, as stock clients
see it over real sockets."""

from __future__ import annotations

import time

import confluent_kafka as ck
import pytest

from tests.clients.test_data_path import (
    CLIENTS, CONSUME_WITH, PRODUCE_WITH, TOPIC, ck_producer, idempotent_config, sample, start,
    state,
)
from wire import records

HOUR_MS = 3600 * 1000


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("topic_codec, sent, stored", [
    ("gzip", "none", records.GZIP), ("uncompressed", "lz4", records.NONE),
    ("zstd", "snappy", records.ZSTD)])
def test_records_come_back_intact_from_a_topic_that_recompresses(stack, client, topic_codec,
                                                                  sent, stored):
    cluster = start(stack)
    state(cluster, lambda c: c.topics[TOPIC].configs.__setitem__("compression.type",
                                                                 topic_codec))
    msgs = sample(12, 3)
    delivered = PRODUCE_WITH[client](stack, cluster, msgs, **idempotent_config(client, sent))
    got = CONSUME_WITH[client](stack, cluster, len(msgs), range(3))
    assert sorted((g.partition, g.offset) for g in got) == \
        sorted((d.partition, d.offset) for d in delivered)
    assert sorted((g.msg for g in got), key=repr) == sorted(msgs, key=repr)
    codecs = state(cluster, lambda c: {records.read_batch_header(b.data).compression
                                       for p in c.topics[TOPIC].partitions
                                       for b in p.log.batches})
    assert codecs == {stored}


def test_a_record_two_hours_ahead_fails_with_invalid_timestamp(stack):
    cluster = start(stack)
    producer = ck_producer(stack, cluster, **{"acks": "all", "retries": 0})
    reports = []
    producer.produce(TOPIC, key=b"k", value=b"v", partition=0,
                     timestamp=int(time.time() * 1000) + 2 * HOUR_MS,
                     on_delivery=lambda err, msg: reports.append(err))
    assert producer.flush(10) == 0
    assert [err.code() for err in reports] == [ck.KafkaError.INVALID_TIMESTAMP]
    assert state(cluster, lambda c: c.topics[TOPIC].partitions[0].log.log_end_offset) == 0
