"""ListOffsets answers each distinct partition once, grouped by topic, as Kafka's broker does
(found by running the client tests on Apache Kafka as well): a partition asked for twice gets
one INVALID_REQUEST entry, and a topic named twice one topic entry."""

from __future__ import annotations

import wire
from tests.core.harness import make_core, send
from wire import errors

LIST_OFFSETS = 2


def test_a_repeated_partition_is_answered_once_with_invalid_request():
    core = make_core()
    core.cluster.create_topic("orders", 2)
    cls = wire.request_class(LIST_OFFSETS)

    def asked(*partitions):
        return cls.ListOffsetsTopic(name="orders", partitions=[
            cls.ListOffsetsPartition(partition_index=p, timestamp=-1) for p in partitions])

    got = send(core, LIST_OFFSETS, 9, replica_id=-1, isolation_level=0,
               topics=[asked(0, 1), asked(0)])
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in got.topics] == [("orders", [(0, errors.INVALID_REQUEST), (1, errors.NONE)])]
