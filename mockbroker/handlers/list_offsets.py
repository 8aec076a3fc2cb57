"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp offsets."""

from __future__ import annotations

from collections import Counter

from mockbroker.core.datapath.fetch import list_offset
from mockbroker.core.datapath.replica import replica_error
from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 2
RESPONSE = response_class(API_KEY)
#: The first version that may ask for each special timestamp: LATEST, EARLIEST, MAX_TIMESTAMP
#: (KIP-734), EARLIEST_LOCAL (KIP-405), LATEST_TIERED (KIP-1005), EARLIEST_PENDING_UPLOAD
#: (KIP-1023).  Kafka refuses any other negative timestamp.
FIRST_VERSION = {-1: 1, -2: 1, -3: 7, -4: 8, -5: 9, -6: 11}


ERRORS = PartitionShape("topics", "name", "partitions", "partition_index", "topics", "name",
                        "partitions", "partition_index")


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    """Answered as Kafka does: once per distinct partition, grouped by topic, so a partition
    asked for twice gets one INVALID_REQUEST, and a topic named twice one entry.

    With an authorizer each topic needs DESCRIBE (KafkaApis' check): the topics the principal
    may not describe come last, each as asked, every partition TOPIC_AUTHORIZATION_FAILED."""
    cluster = core.cluster
    acl = access(core, ctx)
    described = acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics))
    refused = [RESPONSE.ListOffsetsTopicResponse(name=t.name, partitions=[
        RESPONSE.ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                              error_code=errors.TOPIC_AUTHORIZATION_FAILED)
        for p in t.partitions]) for t in request.topics if t.name not in described]
    wanted = [t for t in request.topics if t.name in described]
    asked = [(t.name, p.partition_index) for t in wanted for p in t.partitions]
    twice = set() if len(set(asked)) == len(asked) else \
        {key for key, times in Counter(asked).items() if times > 1}
    answers: dict[str, dict[int, object]] = {}
    for topic in wanted:
        partitions = answers.setdefault(topic.name, {})
        for p in topic.partitions:
            partition = cluster.partition(topic.name, p.partition_index)
            out = RESPONSE.ListOffsetsPartitionResponse(partition_index=p.partition_index)
            if (topic.name, p.partition_index) in twice:
                out.error_code = errors.INVALID_REQUEST
            elif p.timestamp < 0 and ctx.api_version < FIRST_VERSION.get(p.timestamp, 1 << 15):
                out.error_code = errors.UNSUPPORTED_VERSION
            else:
                out.error_code = replica_error(partition, ctx.broker_id, p.current_leader_epoch)
            if out.error_code == errors.NONE:
                out.offset, out.timestamp, out.leader_epoch = list_offset(
                    partition, p.timestamp, read_committed=request.isolation_level == 1)
            partitions[p.partition_index] = out
    return RESPONSE(topics=[RESPONSE.ListOffsetsTopicResponse(name=name,
                                                              partitions=list(parts.values()))
                            for name, parts in answers.items()] + refused)
