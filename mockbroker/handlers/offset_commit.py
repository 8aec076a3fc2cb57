"""OffsetCommit (key 8): store committed offsets in the group's ``__consumer_offsets``
partition.  Group-level refusals (unknown member, old generation, rebalance in progress) are
given to every partition, as Kafka does."""

from __future__ import annotations

from mockbroker.core.groups.offsets import OffsetEntry
from mockbroker.core.errors import ApiException
from mockbroker.core.error_responses import PartitionShape
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 8
RESPONSE = response_class(API_KEY)
#: Kafka's offset.metadata.max.bytes
MAX_METADATA_BYTES = 4096


ERRORS = PartitionShape("topics", "name", "partitions", "partition_index", "topics", "name",
                        "partitions", "partition_index")


@REGISTRY.handler(API_KEY, 2, 10, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    by_id = ctx.api_version >= 10
    try:
        group = core.groups.classic.validate_offset_commit(
            ctx.broker_id, request.group_id, request.member_id, request.group_instance_id,
            request.generation_id_or_member_epoch, ctx.api_version)
        group_error = errors.NONE
    except ApiException as exc:
        group, group_error = None, exc.error_code
    entries = {}
    topics = []
    for t in request.topics:
        topic = cluster.topics_by_id.get(t.topic_id) if by_id else cluster.topics.get(t.name)
        partitions = []
        for p in t.partitions:
            if group_error != errors.NONE:
                code = group_error
            elif topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code = errors.UNKNOWN_TOPIC_ID if by_id and topic is None \
                    else errors.UNKNOWN_TOPIC_OR_PARTITION
            elif p.committed_metadata is not None and \
                    len(p.committed_metadata.encode()) > MAX_METADATA_BYTES:
                code = errors.OFFSET_METADATA_TOO_LARGE
            else:
                code = errors.NONE
                entries[(topic.name, p.partition_index)] = OffsetEntry(
                    p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "",
                    ctx.now_ms)
            partitions.append(RESPONSE.OffsetCommitResponsePartition(
                partition_index=p.partition_index, error_code=code))
        topics.append(RESPONSE.OffsetCommitResponseTopic(name=t.name, topic_id=t.topic_id,
                                                         partitions=partitions))
    if entries:
        core.groups.offsets.store(group, entries)
    return RESPONSE(topics=topics)
