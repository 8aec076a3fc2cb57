"""Codec speed against kafka-python's own protocol classes, measured in the same run.

Two messages, each decoded and re-encoded by both implementations from the same bytes:

- a Produce request with 8 partitions of 16 KiB of records each;
- a Metadata response with 1,000 topics of 10 partitions each.

Prints the time per encode+decode for each and the ratio kafka-python time / our time
(1.0 = as fast as kafka-python, above 1.0 = faster).  Target: ratio >= 0.5.

    .venv/bin/python bench/codec.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from kafka.protocol.metadata import MetadataResponse as KpMetadataResponse
from kafka.protocol.producer import ProduceRequest as KpProduceRequest

from wire import REQUEST, RESPONSE, message_codec

PRODUCE_VERSION = 9
METADATA_VERSION = 12


def produce_request_bytes() -> bytes:
    codec = message_codec(0, PRODUCE_VERSION, REQUEST)
    cls = codec.cls
    records = os.urandom(16 * 1024)
    value = cls(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
        cls.TopicProduceData(name="bench-topic", partition_data=[
            cls.PartitionProduceData(index=p, records=records) for p in range(8)])])
    return bytes(codec.encode(value))


def metadata_response_bytes() -> bytes:
    codec = message_codec(3, METADATA_VERSION, RESPONSE)
    cls = codec.cls
    value = cls(
        throttle_time_ms=0, cluster_id="mockbroker-bench", controller_id=0,
        brokers=[cls.MetadataResponseBroker(node_id=i, host="127.0.0.1", port=9092 + i, rack=None)
                 for i in range(3)],
        topics=[cls.MetadataResponseTopic(
            error_code=0, name=f"topic-{t:04d}", topic_id=uuid.uuid4(), is_internal=False,
            partitions=[cls.MetadataResponsePartition(
                error_code=0, partition_index=p, leader_id=p % 3, leader_epoch=1,
                replica_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3],
                isr_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3], offline_replicas=[])
                for p in range(10)],
            topic_authorized_operations=-2147483648) for t in range(1000)])
    return bytes(codec.encode(value))


def best_of(fn, rounds: int) -> float:
    """Median seconds per call over ``rounds`` timed batches."""
    fn()  # warm caches and generated code
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        if time.perf_counter() - start > 0.05:
            break
        batch *= 2
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - start) / batch)
    return statistics.median(samples)


def compare(label: str, data: bytes, ours, theirs_cls, version: int, rounds: int) -> float:
    def ours_round_trip():
        value, _ = ours.decode(data)
        ours.encode(value)

    def theirs_round_trip():
        value = theirs_cls.decode(data, version=version)
        value.encode()

    # Both sides must agree on the bytes, or the comparison means nothing.
    assert bytes(ours.encode(ours.decode(data)[0])) == data
    assert theirs_cls.decode(data, version=version).encode() == data
    mine = best_of(ours_round_trip, rounds)
    theirs = best_of(theirs_round_trip, rounds)
    ratio = theirs / mine
    print(f"{label:<42} mockbroker {mine * 1e6:10.1f} us   kafka-python {theirs * 1e6:10.1f} us"
          f"   ratio {ratio:5.2f}")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    produce = produce_request_bytes()
    metadata = metadata_response_bytes()
    print(f"encode+decode, median of {args.rounds} rounds (ratio = kafka-python time / ours)")
    ratios = [
        compare(f"Produce v{PRODUCE_VERSION} request, 8 x 16 KiB ({len(produce)} B)", produce,
                message_codec(0, PRODUCE_VERSION, REQUEST), KpProduceRequest, PRODUCE_VERSION,
                args.rounds),
        compare(f"Metadata v{METADATA_VERSION} response, 1000 x 10 ({len(metadata)} B)", metadata,
                message_codec(3, METADATA_VERSION, RESPONSE), KpMetadataResponse,
                METADATA_VERSION, args.rounds),
    ]
    verdict = "meets" if min(ratios) >= 0.5 else "MISSES"
    print(f"lowest ratio {min(ratios):.2f}: {verdict} the target of 0.5")


if __name__ == "__main__":
    main()
