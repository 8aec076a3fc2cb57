"""OffsetForLeaderEpoch (key 23): where a leader epoch ended, for consumers validating their
position after a leader change (KIP-320).

With an authorizer (KafkaApis' check) CLUSTER_ACTION on the cluster allows every topic (the
brokers' own use); otherwise each topic needs DESCRIBE, and the partitions of one the principal
may not describe answer TOPIC_AUTHORIZATION_FAILED, after the others."""

from __future__ import annotations

from mockbroker.core.datapath.replica import replica_error
from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 23
RESPONSE = response_class(API_KEY)


ERRORS = PartitionShape("topics", "topic", "partitions", "partition", "topics", "topic",
                        "partitions", "partition")


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    acl = access(core, ctx)
    described = {t.topic for t in request.topics} if acl.cluster(Op.CLUSTER_ACTION) else \
        acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, (t.topic for t in request.topics))
    topics = []
    for topic in request.topics:
        if topic.topic not in described:
            continue
        partitions = []
        for p in topic.partitions:
            partition = cluster.partition(topic.topic, p.partition)
            out = RESPONSE.EpochEndOffset(partition=p.partition)
            out.error_code = replica_error(partition, ctx.broker_id, p.current_leader_epoch)
            if out.error_code == errors.NONE:
                out.leader_epoch, out.end_offset = partition.log.end_offset_for_epoch(
                    p.leader_epoch, partition.leader_epoch)
            partitions.append(out)
        topics.append(RESPONSE.OffsetForLeaderTopicResult(topic=topic.topic,
                                                          partitions=partitions))
    return RESPONSE(topics=topics + [RESPONSE.OffsetForLeaderTopicResult(
        topic=t.topic, partitions=[
            RESPONSE.EpochEndOffset(partition=p.partition,
                                    error_code=errors.TOPIC_AUTHORIZATION_FAILED)
            for p in t.partitions]) for t in request.topics if t.topic not in described])
