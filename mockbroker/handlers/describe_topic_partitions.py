"""DescribeTopicPartitions (key 75): topics and their partitions, a page at a time.

Topics are answered in name order starting at the request's cursor; once
``response_partition_limit`` partitions (at most 2000, Kafka's max.request.partition.size.limit)
are in the response, ``next_cursor`` says where the next page starts.  An empty topic list
means every topic.  Each partition carries its eligible leader replicas (KIP-966) and its last
known leader while it has none, as the replication control keeps them.

With an authorizer (Kafka's DescribeTopicPartitionsRequestHandler): every topic lists only the
topics the principal may DESCRIBE; a topic named without DESCRIBE answers
TOPIC_AUTHORIZATION_FAILED with a zero id, after the page (it takes no room in it); the
authorized operations of the topics paged are the principal's.
"""

from __future__ import annotations

import uuid

from mockbroker.core.names import topic_name_error
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import NO_OPERATIONS, TOPIC_OPERATIONS
from wire import errors, response_class

API_KEY = 75
RESPONSE = response_class(API_KEY)
#: Kafka's max.request.partition.size.limit default
MAX_PARTITIONS = 2000
ZERO_UUID = uuid.UUID(int=0)


ERRORS = (KeyedShape("topics", "name", "topics", "name"),)


@REGISTRY.handler(API_KEY, errors=ERRORS, names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    cursor = request.cursor
    start_topic = cursor.topic_name if cursor is not None else ""
    every_topic = not request.topics
    if every_topic:
        names = sorted(n for n in cluster.topics if n >= start_topic)
    else:
        names = sorted({t.name for t in request.topics if t.name >= start_topic})
        if cursor is not None and cursor.topic_name not in names:
            return _refused(request, "DescribeTopicPartitionsRequest topic list should contain "
                                     f"the cursor topic: {cursor.topic_name}")
    if cursor is not None and cursor.partition_index < 0:
        return _refused(request, "DescribeTopicPartitionsRequest cursor partition must be valid")
    acl = access(core, ctx)
    hidden = [name for name in names if not acl.topic(Op.DESCRIBE, name)]
    names = [name for name in names if acl.topic(Op.DESCRIBE, name)]
    operations = (lambda name: acl.operations(ResourceType.TOPIC, name)) if acl.enforced \
        else (lambda name: TOPIC_OPERATIONS)
    remaining = max(min(MAX_PARTITIONS, request.response_partition_limit), 1)
    topics = []
    next_cursor = None
    for name in names:
        if remaining <= 0:
            next_cursor = RESPONSE.Cursor(topic_name=name, partition_index=0)
            break
        topic = cluster.topics.get(name)
        if topic is None:
            if not every_topic:
                topics.append(RESPONSE.DescribeTopicPartitionsResponseTopic(
                    error_code=errors.INVALID_TOPIC_EXCEPTION if topic_name_error(name)
                    else errors.UNKNOWN_TOPIC_OR_PARTITION,
                    name=name, topic_id=ZERO_UUID, is_internal=False, partitions=[],
                    topic_authorized_operations=operations(name)))
            continue
        first = cursor.partition_index if cursor is not None and name == start_topic else 0
        upper = min(len(topic.partitions), first + remaining)
        partitions = [_partition(cluster, p) for p in topic.partitions[first:upper]]
        topics.append(RESPONSE.DescribeTopicPartitionsResponseTopic(
            error_code=errors.NONE, name=name, topic_id=topic.topic_id,
            is_internal=topic.internal, partitions=partitions,
            topic_authorized_operations=operations(name)))
        if upper < len(topic.partitions):
            next_cursor = RESPONSE.Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= len(partitions)
    if not every_topic:
        topics += [RESPONSE.DescribeTopicPartitionsResponseTopic(
            error_code=errors.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID,
            is_internal=False, partitions=[], topic_authorized_operations=NO_OPERATIONS)
            for name in hidden]
    return RESPONSE(throttle_time_ms=0, topics=topics, next_cursor=next_cursor)


def _partition(cluster, p):
    offline = [r for r in p.replicas if not cluster.brokers[r].active]
    leader = p.leader if p.leader >= 0 and cluster.brokers[p.leader].active else -1
    return RESPONSE.DescribeTopicPartitionsResponsePartition(
        error_code=errors.NONE, partition_index=p.index, leader_id=leader,
        leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
        eligible_leader_replicas=list(p.elr), last_known_elr=list(p.last_known_elr),
        offline_replicas=offline)


def _refused(request, message):
    """Kafka answers a malformed request with INVALID_REQUEST on every topic it named."""
    return RESPONSE(throttle_time_ms=0, next_cursor=None, topics=[
        RESPONSE.DescribeTopicPartitionsResponseTopic(
            error_code=errors.INVALID_REQUEST, name=t.name, topic_id=ZERO_UUID,
            is_internal=False, partitions=[], topic_authorized_operations=NO_OPERATIONS)
        for t in request.topics])
