"""Metadata (key 3): brokers, controller, topics and partition leaders, auto-creating topics.

Topics by id, as Kafka 4 answers them: v10 and v11 carry a topic id field but Kafka refuses a
topic with a null name or a non-zero id there (the whole request fails with INVALID_REQUEST); from
v12, once any topic has an id the names are ignored and each id is answered, an unknown one with
UNKNOWN_TOPIC_ID and a null name.  A request that fails as a whole gets Kafka's error response
(``MetadataRequest.getErrorResponse``): no brokers, and each topic asked for with the error, its
id, and its name or "".
"""

from __future__ import annotations

import uuid

from mockbroker.core.error_responses import TopicErrors
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import CLUSTER_OPERATIONS, NO_OPERATIONS, TOPIC_OPERATIONS
from mockbroker.handlers._common import address as _address
from wire import errors, response_class

API_KEY = 3
RESPONSE = response_class(API_KEY)
NO_TOPIC_ID = uuid.UUID(int=0)
#: the first version whose requests may name topics by id
BY_ID_VERSION = 12


@REGISTRY.handler(API_KEY, 0, 13, errors=TopicErrors(), names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    requested = request.topics
    # v0 asks for every topic with an empty list; later versions with null.
    all_topics = requested is None or (version == 0 and not requested)
    allow_auto = request.allow_auto_topic_creation if version >= 4 else True
    topics = []
    ids = [] if all_topics or version < 10 else \
        list(dict.fromkeys(t.topic_id for t in requested if t.topic_id != NO_TOPIC_ID))
    if all_topics:
        for topic in sorted(cluster.topics.values(), key=lambda t: t.name):
            topics.append(_topic(cluster, topic, errors.NONE, topic.name, request))
    elif version >= 10 and version < BY_ID_VERSION and \
            any(t.name is None or t.topic_id != NO_TOPIC_ID for t in requested):
        return _failed(requested, errors.INVALID_REQUEST)
    elif ids:
        found = {topic_id: cluster.topics_by_id.get(topic_id) for topic_id in ids}
        topics = [_topic(cluster, None, errors.UNKNOWN_TOPIC_ID, None, request, topic_id)
                  for topic_id, topic in found.items() if topic is None]
        topics += [_topic(cluster, topic, errors.NONE, topic.name, request)
                   for topic in found.values() if topic is not None]
    elif any(t.name is None for t in requested):
        # neither a name nor an id: Kafka fails the whole request (its lookup of a null name)
        return _failed(requested, errors.UNKNOWN_SERVER_ERROR)
    else:
        for wanted in requested:
            topic, error = cluster.lookup_or_create(wanted.name, allow_auto)
            topics.append(_topic(cluster, topic, error, wanted.name, request))
    brokers = [RESPONSE.MetadataResponseBroker(node_id=b.node_id, rack=b.rack,
                                               **_address(b, ctx.listener))
               for b in cluster.live_brokers()]
    return RESPONSE(brokers=brokers, cluster_id=cluster.cluster_id,
                    controller_id=cluster.controller_id, topics=topics,
                    cluster_authorized_operations=CLUSTER_OPERATIONS
                    if request.include_cluster_authorized_operations else NO_OPERATIONS)


def _failed(requested, error: int):
    """Kafka's answer to a Metadata request that failed as a whole."""
    return RESPONSE(brokers=[], cluster_id=None, controller_id=-1, topics=[
        RESPONSE.MetadataResponseTopic(error_code=error, name=t.name or "", topic_id=t.topic_id,
                                       is_internal=False, partitions=[],
                                       topic_authorized_operations=NO_OPERATIONS)
        for t in requested], cluster_authorized_operations=NO_OPERATIONS)


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
