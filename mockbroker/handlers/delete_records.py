"""DeleteRecords (key 21): move partitions' log start offsets forward on their leader.

Offset -1 means the high watermark.  Every replica of a mock partition is in sync, so the
answer comes at once with the new low watermark (the log start offset).

With an authorizer each topic needs DELETE (KafkaApis' check): the partitions of one the
principal may not delete from answer TOPIC_AUTHORIZATION_FAILED, whether it exists or not.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 21
RESPONSE = response_class(API_KEY)
#: ``DeleteRecordsResponse.INVALID_LOW_WATERMARK``
INVALID_LOW_WATERMARK = -1


ERRORS = PartitionShape("topics", "name", "partitions", "partition_index", "topics", "name",
                        "partitions", "partition_index")


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    deletable = access(core, ctx).allowed(Op.DELETE, ResourceType.TOPIC,
                                          (t.name for t in request.topics))
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            out = RESPONSE.DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=INVALID_LOW_WATERMARK,
                error_code=errors.NONE)
            if topic.name not in deletable:
                out.error_code = errors.TOPIC_AUTHORIZATION_FAILED
                partitions.append(out)
                continue
            try:
                out.low_watermark = cluster.delete_records(topic.name, p.partition_index,
                                                           p.offset, ctx.broker_id)
            except ApiException as exc:
                out.error_code = exc.error_code
            partitions.append(out)
        topics.append(RESPONSE.DeleteRecordsTopicResult(name=topic.name, partitions=partitions))
    return RESPONSE(throttle_time_ms=0, topics=topics)
