"""Metadata (key 3): brokers, controller, topics and partition leaders, auto-creating topics.

Topics by id, as Kafka 4 answers them: v10 and v11 carry a topic id field but Kafka refuses a
topic with a null name or a non-zero id there (the whole request fails with INVALID_REQUEST); from
v12, once any topic has an id the names are ignored and each id is answered, an unknown one with
UNKNOWN_TOPIC_ID and a null name.  A request that fails as a whole gets Kafka's error response
(``MetadataRequest.getErrorResponse``): no brokers, and each topic asked for with the error, its
id, and its name or "".

With an authorizer (KafkaApis' checks): a request for every topic lists only the topics the
principal may DESCRIBE; a topic asked for by name without DESCRIBE answers
TOPIC_AUTHORIZATION_FAILED with a zero id (by id: with its id and a null name), and one that
would be auto-created needs CREATE on the cluster or the topic, or answers the same.  Those
refusals come after the topics described.  The KIP-430 fields are the principal's operations
(a cluster the principal may not DESCRIBE shows 0).
"""

from __future__ import annotations

import uuid

from mockbroker.core.control.error_responses import TopicErrors
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import INTERNAL_TOPICS, access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import CLUSTER_OPERATIONS, NO_OPERATIONS, TOPIC_OPERATIONS
from mockbroker.handlers._common import address as _address
from wire import encode_response_body, errors, response_class

API_KEY = 3
RESPONSE = response_class(API_KEY)
NO_TOPIC_ID = uuid.UUID(int=0)
#: the first version whose requests may name topics by id
BY_ID_VERSION = 12


@REGISTRY.handler(API_KEY, errors=TopicErrors(), names_topics=True)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if acl.enforced:  # what a principal sees is its own: nothing kept
        return _answer(core, ctx, request, acl)
    requested = request.topics
    key = (ctx.api_version, ctx.listener,
           None if requested is None else tuple((t.name, t.topic_id) for t in requested),
           request.allow_auto_topic_creation, request.include_cluster_authorized_operations,
           request.include_topic_authorized_operations)
    # A large cluster's answer costs milliseconds to build and encode; clients ask again and
    # again (every refresh, every NOT_LEADER), so it is kept until the cluster changes (one
    # that creates a topic as it is worked out is not kept: the next request sees the topic).
    return core.cluster.metadata_answers.get(key, lambda: encode_response_body(
        API_KEY, ctx.api_version, _answer(core, ctx, request, acl)))


def _answer(core, ctx, request, acl):
    cluster = core.cluster
    version = ctx.api_version
    requested = request.topics
    # v0 asks for every topic with an empty list; later versions with null.
    all_topics = requested is None or (version == 0 and not requested)
    allow_auto = request.allow_auto_topic_creation if version >= 4 else True
    topics = []
    # what KafkaApis answers after the topics it describes: topics the principal may not
    # create (auto-creation), then those it may not describe
    refused_create, refused_describe = [], []
    ids = [] if all_topics or version < 10 else \
        list(dict.fromkeys(t.topic_id for t in requested if t.topic_id != NO_TOPIC_ID))
    if all_topics:
        for topic in sorted(cluster.topics.values(), key=lambda t: t.name):
            # a principal learns nothing of the topics it may not describe
            if acl.topic(Op.DESCRIBE, topic.name):
                topics.append(_topic(cluster, topic, errors.NONE, topic.name, request, acl))
    elif version >= 10 and version < BY_ID_VERSION and \
            any(t.name is None or t.topic_id != NO_TOPIC_ID for t in requested):
        return _failed(requested, errors.INVALID_REQUEST)
    elif ids:
        found = {topic_id: cluster.topics_by_id.get(topic_id) for topic_id in ids}
        topics = [_topic(cluster, None, errors.UNKNOWN_TOPIC_ID, None, request, acl, topic_id)
                  for topic_id, topic in found.items() if topic is None]
        for topic in found.values():
            if topic is None:
                continue
            if acl.topic(Op.DESCRIBE, topic.name):
                topics.append(_topic(cluster, topic, errors.NONE, topic.name, request, acl))
            else:
                # topic ids are no secret: the refusal names the id, not the topic
                refused_describe.append(_refused(None, topic.topic_id, False))
    elif any(t.name is None for t in requested):
        # neither a name nor an id: Kafka fails the whole request (its lookup of a null name)
        return _failed(requested, errors.UNKNOWN_SERVER_ERROR)
    else:
        may_create = not acl.enforced or acl.cluster(Op.CREATE)
        for wanted in requested:
            if not acl.topic(Op.DESCRIBE, wanted.name):
                refused_describe.append(_refused(wanted.name, NO_TOPIC_ID, False))
                continue
            if not may_create and allow_auto and cluster.settings["auto_create_topics_enable"] \
                    and wanted.name not in cluster.topics \
                    and not acl.topic(Op.CREATE, wanted.name):
                refused_create.append(_refused(wanted.name, NO_TOPIC_ID,
                                               wanted.name in INTERNAL_TOPICS))
                continue
            topic, error = cluster.lookup_or_create(wanted.name, allow_auto)
            topics.append(_topic(cluster, topic, error, wanted.name, request, acl))
    brokers = [RESPONSE.MetadataResponseBroker(node_id=b.node_id, rack=b.rack,
                                               **_address(b, ctx.listener))
               for b in cluster.live_brokers()]
    cluster_operations = NO_OPERATIONS
    if request.include_cluster_authorized_operations:
        cluster_operations = acl.cluster_operations() if acl.enforced else CLUSTER_OPERATIONS
    return RESPONSE(brokers=brokers, cluster_id=cluster.cluster_id,
                    controller_id=cluster.controller_id,
                    topics=topics + refused_create + refused_describe,
                    cluster_authorized_operations=cluster_operations)


def _refused(name, topic_id, internal: bool):
    """A topic the principal may not describe (or create), as Kafka answers it."""
    return RESPONSE.MetadataResponseTopic(
        error_code=errors.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=topic_id,
        is_internal=internal, partitions=[], topic_authorized_operations=NO_OPERATIONS)


def _failed(requested, error: int):
    """Kafka's answer to a Metadata request that failed as a whole."""
    return RESPONSE(brokers=[], cluster_id=None, controller_id=-1, topics=[
        RESPONSE.MetadataResponseTopic(error_code=error, name=t.name or "", topic_id=t.topic_id,
                                       is_internal=False, partitions=[],
                                       topic_authorized_operations=NO_OPERATIONS)
        for t in requested], cluster_authorized_operations=NO_OPERATIONS)


def _topic(cluster, topic, error, name, request, acl, topic_id=None):
    if topic is None:
        kwargs = {"topic_id": topic_id} if topic_id is not None else {}
        # with an authorizer Kafka fills the field for every topic it answered by name, found
        # or not (KafkaApis' setTopicAuthorizedOperations)
        operations = acl.operations(ResourceType.TOPIC, name) \
            if acl.enforced and name is not None and request.include_topic_authorized_operations \
            else NO_OPERATIONS
        return RESPONSE.MetadataResponseTopic(error_code=error, name=name, partitions=[],
                                              topic_authorized_operations=operations, **kwargs)
    partitions = []
    for p in topic.partitions:
        offline = [r for r in p.replicas if not cluster.brokers[r].active]
        partitions.append(RESPONSE.MetadataResponsePartition(
            error_code=errors.NONE if p.leader != -1 else errors.LEADER_NOT_AVAILABLE,
            partition_index=p.index, leader_id=p.leader, leader_epoch=p.leader_epoch,
            replica_nodes=list(p.replicas), isr_nodes=list(p.isr), offline_replicas=offline))
    operations = NO_OPERATIONS
    if request.include_topic_authorized_operations:
        operations = acl.operations(ResourceType.TOPIC, topic.name) if acl.enforced \
            else TOPIC_OPERATIONS
    return RESPONSE.MetadataResponseTopic(
        error_code=errors.NONE, name=topic.name, topic_id=topic.topic_id,
        is_internal=topic.internal, partitions=partitions,
        topic_authorized_operations=operations)
