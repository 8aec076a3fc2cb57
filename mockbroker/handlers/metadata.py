"""Metadata (key 3): brokers, controller, topics and partition leaders, auto-creating topics."""

from __future__ import annotations

from mockbroker.core.error_responses import TopicErrors
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import CLUSTER_OPERATIONS, NO_OPERATIONS, TOPIC_OPERATIONS
from wire import errors, response_class

API_KEY = 3
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 0, 13, errors=TopicErrors(), names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    requested = request.topics
    # v0 asks for every topic with an empty list; later versions with null.
    all_topics = requested is None or (version == 0 and not requested)
    allow_auto = request.allow_auto_topic_creation if version >= 4 else True
    topics = []
    if all_topics:
        for topic in sorted(cluster.topics.values(), key=lambda t: t.name):
            topics.append(_topic(cluster, topic, errors.NONE, topic.name, request))
    else:
        for wanted in requested:
            name = wanted.name
            if name is None and version >= 10:
                topic = cluster.topics_by_id.get(wanted.topic_id)
                error = errors.NONE if topic else errors.UNKNOWN_TOPIC_ID
            else:
                topic, error = cluster.lookup_or_create(name, allow_auto)
            topics.append(_topic(cluster, topic, error, name, request, wanted.topic_id))
    brokers = [RESPONSE.MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port,
                                               rack=b.rack) for b in cluster.live_brokers()]
    return RESPONSE(brokers=brokers, cluster_id=cluster.cluster_id,
                    controller_id=cluster.controller_id, topics=topics,
                    cluster_authorized_operations=CLUSTER_OPERATIONS
                    if request.include_cluster_authorized_operations else NO_OPERATIONS)


def _topic(cluster, topic, error, name, request, topic_id=None):
    if topic is None:
        kwargs = {"topic_id": topic_id} if topic_id is not None else {}
        return RESPONSE.MetadataResponseTopic(error_code=error, name=name, partitions=[],
                                              topic_authorized_operations=NO_OPERATIONS, **kwargs)
    partitions = []
    for p in topic.partitions:
        offline = [r for r in p.replicas if not cluster.brokers[r].alive]
        partitions.append(RESPONSE.MetadataResponsePartition(
            error_code=errors.NONE if p.leader != -1 else errors.LEADER_NOT_AVAILABLE,
            partition_index=p.index, leader_id=p.leader, leader_epoch=p.leader_epoch,
            replica_nodes=list(p.replicas), isr_nodes=list(p.isr), offline_replicas=offline))
    return RESPONSE.MetadataResponseTopic(
        error_code=errors.NONE, name=topic.name, topic_id=topic.topic_id,
        is_internal=topic.internal, partitions=partitions,
        topic_authorized_operations=TOPIC_OPERATIONS
        if request.include_topic_authorized_operations else NO_OPERATIONS)
