"""Produce (key 0): append record batches; acks=0 gets no response at all.

Kafka 4 advertises Produce from version 0 but refuses 0-2 with UNSUPPORTED_VERSION (older
librdkafka stops compressing when a broker's Produce minimum is 3), so we do the same: the
definitions start at 3, ApiVersions says 0, and a v0-2 request closes the connection as it
does on Kafka.
"""

from __future__ import annotations

from mockbroker.core import data
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import leader_error, node_endpoints
from wire import errors, response_class

API_KEY = 0
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 3, 13, advertised_min=0)
def handle(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    topics = []
    leaders = set()
    for topic_data in request.topic_data:
        if version >= 13:
            topic = cluster.topics_by_id.get(topic_data.topic_id)
            missing = errors.UNKNOWN_TOPIC_ID
        else:
            topic = cluster.topics.get(topic_data.name)
            missing = errors.UNKNOWN_TOPIC_OR_PARTITION
        partitions = []
        for pdata in topic_data.partition_data:
            partition = None
            if topic is not None and 0 <= pdata.index < len(topic.partitions):
                partition = topic.partitions[pdata.index]
            out = RESPONSE.PartitionProduceResponse(index=pdata.index, base_offset=-1)
            if partition is None:
                out.error_code = missing if topic is None else errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                out.error_code = leader_error(partition, ctx.broker_id)
                if out.error_code == errors.NONE:
                    result = data.produce(cluster, partition, pdata.records, ctx.now_ms)
                    out.error_code = result.error_code
                    out.base_offset = result.base_offset
                    out.log_append_time_ms = result.log_append_time
                    out.log_start_offset = result.log_start_offset
                    out.error_message = result.error_message
                elif out.error_code == errors.NOT_LEADER_OR_FOLLOWER and version >= 10:
                    out.current_leader = RESPONSE.LeaderIdAndEpoch(
                        leader_id=partition.leader, leader_epoch=partition.leader_epoch)
                    leaders.add(partition.leader)
            partitions.append(out)
        topics.append(RESPONSE.TopicProduceResponse(
            name=topic_data.name, topic_id=topic_data.topic_id, partition_responses=partitions))
    if request.acks == 0:
        return None
    return RESPONSE(responses=topics, throttle_time_ms=0,
                    node_endpoints=node_endpoints(cluster, leaders, RESPONSE.NodeEndpoint))
