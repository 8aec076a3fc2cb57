"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp offsets."""

from __future__ import annotations

from mockbroker.core import data
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import epoch_error, leader_error
from wire import errors, response_class

API_KEY = 2
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 1, 11)
def handle(core, ctx, request):
    cluster = core.cluster
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            partition = cluster.partition(topic.name, p.partition_index)
            out = RESPONSE.ListOffsetsPartitionResponse(partition_index=p.partition_index)
            out.error_code = leader_error(partition, ctx.broker_id)
            if out.error_code == errors.NONE:
                out.error_code = epoch_error(partition, p.current_leader_epoch)
            if out.error_code == errors.NONE:
                out.offset, out.timestamp = data.list_offset(partition, p.timestamp)
                if out.offset >= 0:
                    out.leader_epoch = partition.leader_epoch
            partitions.append(out)
        topics.append(RESPONSE.ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    return RESPONSE(topics=topics)
