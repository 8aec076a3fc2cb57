"""OffsetForLeaderEpoch (key 23): where a leader epoch ended, for consumers validating their
position after a leader change (KIP-320)."""

from __future__ import annotations

from mockbroker.core.replica import replica_error
from mockbroker.core.error_responses import PartitionShape
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 23
RESPONSE = response_class(API_KEY)


ERRORS = PartitionShape("topics", "topic", "partitions", "partition", "topics", "topic",
                        "partitions", "partition")


@REGISTRY.handler(API_KEY, 2, 4, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            partition = cluster.partition(topic.topic, p.partition)
            out = RESPONSE.EpochEndOffset(partition=p.partition)
            out.error_code = replica_error(partition, ctx.broker_id, p.current_leader_epoch)
            if out.error_code == errors.NONE:
                out.leader_epoch, out.end_offset = partition.log.end_offset_for_epoch(
                    p.leader_epoch, partition.leader_epoch)
            partitions.append(out)
        topics.append(RESPONSE.OffsetForLeaderTopicResult(topic=topic.topic, partitions=partitions))
    return RESPONSE(topics=topics)
