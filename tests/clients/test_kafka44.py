"""Kafka 4.4's handling of a topic's compression.type and timestamp bounds, as stock clients
see it over real sockets."""

from __future__ import annotations

import time

import confluent_kafka as ck
import pytest

from tests.clients.test_data_path import (
    CLIENTS, CONSUME_WITH, PRODUCE_WITH, ck_producer, fetch_body, idempotent_config, list_offsets,
    raw_to_leader, sample, start,
)
from wire import records

HOUR_MS = 3600 * 1000


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("topic_codec, sent, stored", [
    ("gzip", "none", records.GZIP), ("uncompressed", "lz4", records.NONE),
    ("zstd", "snappy", records.ZSTD)])
def test_records_come_back_intact_from_a_topic_that_recompresses(stack, target, client,
                                                                  topic_codec, sent, stored):
    cluster = start(target, **{"compression.type": topic_codec})
    msgs = sample(12, 3)
    delivered = PRODUCE_WITH[client](stack, cluster, msgs, **idempotent_config(client, sent))
    got = CONSUME_WITH[client](stack, cluster, len(msgs), range(3))
    assert sorted((g.partition, g.offset) for g in got) == \
        sorted((d.partition, d.offset) for d in delivered)
    assert sorted((g.msg for g in got), key=repr) == sorted(msgs, key=repr)
    # the batches as stored, read with a bare Fetch
    conn = raw_to_leader(stack, cluster)
    response = conn.call(1, 12, fetch_body(conn.topic, {p: 0 for p in range(3)}))
    codecs = {header.compression for part in response.responses[0].partitions
              for header, _ in records.split_batches(part.records)}
    assert codecs == {stored}


def test_a_record_two_hours_ahead_fails_with_invalid_timestamp(stack, target):
    cluster = start(target)
    producer = ck_producer(stack, cluster, **{"acks": "all", "retries": 0})
    reports = []
    producer.produce(cluster.topic, key=b"k", value=b"v", partition=0,
                     timestamp=int(time.time() * 1000) + 2 * HOUR_MS,
                     on_delivery=lambda err, msg: reports.append(err))
    assert producer.flush(10) == 0
    assert [err.code() for err in reports] == [ck.KafkaError.INVALID_TIMESTAMP]
    assert list_offsets(raw_to_leader(stack, cluster), [(0, -1)])[0][:2] == (0, 0)
