"""OffsetFetch (key 9): committed offsets of one group (v0-7) or several (v8+); all of a
group's partitions when the topic list is null.

A group-level refusal (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...) is answered as
Kafka's ``OffsetFetchResponse.groupError`` answers it: from v2 the group's error with no topics
(at the top before v8, on the group after); v1 has no top-level error, so every partition asked
for carries it.

With an authorizer (KafkaApis' checks): a group the principal may not DESCRIBE is refused with
GROUP_AUTHORIZATION_FAILED as a group-level error; the topics asked for that it may not DESCRIBE
answer TOPIC_AUTHORIZATION_FAILED on each partition (after the others); asked for every
partition, the group's offsets of such topics are left out."""

from __future__ import annotations

import uuid

from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 9
#: the id Kafka gives a topic it does not know (a committed offset of a deleted topic)
ZERO_UUID = uuid.UUID(int=0)
RESPONSE = response_class(API_KEY)


def _fetch(core, ctx, acl, group_id, topics, by_id, require_stable=False, member_id=None,
           member_epoch=-1):
    """(group error, {topic name: [(partition, entry or None)]}, ids of the request's topics
    the principal may not describe)"""
    if not acl.group(Op.DESCRIBE, group_id):
        return errors.GROUP_AUTHORIZATION_FAILED, {}, set()
    cluster = core.cluster
    wanted = None
    refused = set()
    if topics is not None:
        wanted = []
        for t in topics:
            if by_id:
                topic = cluster.topics_by_id.get(t.topic_id)
                name = topic.name if topic else None
            else:
                name = t.name
            if not (by_id and name is None) and not acl.topic(Op.DESCRIBE, name):
                refused.add(id(t))
                continue
            wanted.extend((name, p) for p in t.partition_indexes)
    try:
        found = core.groups.offsets.fetch(ctx.broker_id, group_id, wanted,
                                          require_stable=require_stable, member_id=member_id,
                                          member_epoch=member_epoch)
    except ApiException as exc:
        return exc.error_code, {}, refused
    by_topic: dict[str, list] = {}
    for (name, partition), entry in found.items():
        if topics is None and not acl.topic(Op.DESCRIBE, name):
            continue  # every partition asked for: what the principal may not see is left out
        by_topic.setdefault(name, []).append((partition, entry))
    return errors.NONE, by_topic, refused


def _partition(cls, partition, entry, error=errors.NONE):
    if isinstance(entry, ApiException):  # an open transaction's offset (require_stable)
        entry, error = None, entry.error_code
    if entry is None:
        return cls(partition_index=partition, committed_offset=-1, committed_leader_epoch=-1,
                   metadata="", error_code=error)
    return cls(partition_index=partition, committed_offset=entry.offset,
               committed_leader_epoch=entry.leader_epoch, metadata=entry.metadata,
               error_code=error)


#: where Kafka's error answer puts the error: v1 has no top-level error, so it goes on every
#: partition asked for; v2-7 have it at the top; from v8 it sits on each group
ERRORS = (KeyedShape("topics", "name", "topics", "name", until=1, inner=KeyedShape(
              "partition_indexes", None, "partitions", "partition_index")),
          KeyedShape("groups", "group_id", "groups", "group_id"))


@REGISTRY.handler(API_KEY, errors=ERRORS, names_topics=True)
def handle(core, ctx, request):
    version = ctx.api_version
    acl = access(core, ctx)
    if version < 8:
        error, by_topic, refused = _fetch(core, ctx, acl, request.group_id, request.topics,
                                          False, version >= 7 and request.require_stable)
        topics = []
        if error != errors.NONE and version >= 2:
            return RESPONSE(topics=[], error_code=error)
        if request.topics is not None:
            if error != errors.NONE:
                refused = set()  # v1: every partition asked for carries the group's error
            for t in _refused_last(request.topics, refused):
                got = dict(by_topic.get(t.name, []))
                code = errors.TOPIC_AUTHORIZATION_FAILED if id(t) in refused else error
                topics.append(RESPONSE.OffsetFetchResponseTopic(name=t.name, partitions=[
                    _partition(RESPONSE.OffsetFetchResponsePartition, p, got.get(p), code)
                    for p in t.partition_indexes]))
        else:
            topics = [RESPONSE.OffsetFetchResponseTopic(name=name, partitions=[
                _partition(RESPONSE.OffsetFetchResponsePartition, p, e) for p, e in parts])
                for name, parts in by_topic.items()]
        return RESPONSE(topics=topics, error_code=error)
    by_id = version >= 10
    groups = []
    for g in request.groups:
        error, by_topic, refused = _fetch(core, ctx, acl, g.group_id, g.topics, by_id,
                                          request.require_stable,
                                          g.member_id if version >= 9 else None,
                                          g.member_epoch if version >= 9 else -1)
        topics = []
        if error != errors.NONE:
            pass  # the group's error, with no topics
        elif g.topics is not None:
            for t in _refused_last(g.topics, refused):
                topic = core.cluster.topics_by_id.get(t.topic_id) if by_id else None
                name = topic.name if topic else t.name
                got = dict(by_topic.get(name, []))
                code = errors.TOPIC_AUTHORIZATION_FAILED if id(t) in refused else errors.NONE
                topics.append(RESPONSE.OffsetFetchResponseTopics(
                    name=t.name, topic_id=t.topic_id, partitions=[
                        _partition(RESPONSE.OffsetFetchResponsePartitions, p, got.get(p), code)
                        for p in t.partition_indexes]))
        else:
            for name, parts in by_topic.items():
                topic = core.cluster.topics.get(name)
                topics.append(RESPONSE.OffsetFetchResponseTopics(
                    name=name, topic_id=(topic.topic_id if topic else ZERO_UUID) if by_id
                    else None,
                    partitions=[_partition(RESPONSE.OffsetFetchResponsePartitions, p, e)
                                for p, e in parts]))
        groups.append(RESPONSE.OffsetFetchResponseGroup(group_id=g.group_id, topics=topics,
                                                        error_code=error))
    return RESPONSE(groups=groups)


def _refused_last(topics, refused: set) -> list:
    """The request's topics in order, those refused (by object id) after the others, where
    Kafka's answer puts them."""
    return [t for t in topics if id(t) not in refused] + [t for t in topics if id(t) in refused]
