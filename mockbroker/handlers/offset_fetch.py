"""OffsetFetch (key 9): committed offsets of one group (v0-7) or several (v8+); all of a
group's partitions when the topic list is null.

A group-level refusal (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...) is answered as
Kafka's ``OffsetFetchResponse.groupError`` answers it: from v2 the group's error with no topics
(at the top before v8, on the group after); v1 has no top-level error, so every partition asked
for carries it."""

from __future__ import annotations

import uuid

from mockbroker.core.errors import ApiException
from mockbroker.core.error_responses import KeyedShape
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 9
#: the id Kafka gives a topic it does not know (a committed offset of a deleted topic)
ZERO_UUID = uuid.UUID(int=0)
RESPONSE = response_class(API_KEY)


def _fetch(core, ctx, group_id, topics, by_id, require_stable=False, member_id=None,
           member_epoch=-1):
    """(group error, {topic name: [(partition, entry or None)]})"""
    cluster = core.cluster
    wanted = None
    names = {}
    if topics is not None:
        wanted = []
        for t in topics:
            if by_id:
                topic = cluster.topics_by_id.get(t.topic_id)
                name = topic.name if topic else None
            else:
                name = t.name
            names[(t.name, t.topic_id) if by_id else t.name] = name
            wanted.extend((name, p) for p in t.partition_indexes)
    try:
        found = core.groups.offsets.fetch(ctx.broker_id, group_id, wanted,
                                          require_stable=require_stable, member_id=member_id,
                                          member_epoch=member_epoch)
    except ApiException as exc:
        return exc.error_code, {}
    by_topic: dict[str, list] = {}
    for (name, partition), entry in found.items():
        by_topic.setdefault(name, []).append((partition, entry))
    return errors.NONE, by_topic


def _partition(cls, partition, entry, error=errors.NONE):
    if isinstance(entry, ApiException):  # an open transaction's offset (require_stable)
        entry, error = None, entry.error_code
    if entry is None:
        return cls(partition_index=partition, committed_offset=-1, committed_leader_epoch=-1,
                   metadata="", error_code=error)
    return cls(partition_index=partition, committed_offset=entry.offset,
               committed_leader_epoch=entry.leader_epoch, metadata=entry.metadata,
               error_code=error)


#: from v8 an injected error sits on each group (before, at the top)
ERRORS = (KeyedShape("groups", "group_id", "groups", "group_id"),)


@REGISTRY.handler(API_KEY, 1, 10, errors=ERRORS, names_topics=True)
def handle(core, ctx, request):
    version = ctx.api_version
    if version < 8:
        error, by_topic = _fetch(core, ctx, request.group_id, request.topics, False,
                                 version >= 7 and request.require_stable)
        topics = []
        if error != errors.NONE and version >= 2:
            return RESPONSE(topics=[], error_code=error)
        if request.topics is not None:
            for t in request.topics:
                got = dict(by_topic.get(t.name, []))
                topics.append(RESPONSE.OffsetFetchResponseTopic(name=t.name, partitions=[
                    _partition(RESPONSE.OffsetFetchResponsePartition, p, got.get(p), error)
                    for p in t.partition_indexes]))
        else:
            topics = [RESPONSE.OffsetFetchResponseTopic(name=name, partitions=[
                _partition(RESPONSE.OffsetFetchResponsePartition, p, e) for p, e in parts])
                for name, parts in by_topic.items()]
        return RESPONSE(topics=topics, error_code=error)
    by_id = version >= 10
    groups = []
    for g in request.groups:
        error, by_topic = _fetch(core, ctx, g.group_id, g.topics, by_id,
                                 request.require_stable,
                                 g.member_id if version >= 9 else None,
                                 g.member_epoch if version >= 9 else -1)
        topics = []
        if error != errors.NONE:
            pass  # the group's error, with no topics
        elif g.topics is not None:
            for t in g.topics:
                topic = core.cluster.topics_by_id.get(t.topic_id) if by_id else None
                name = topic.name if topic else t.name
                got = dict(by_topic.get(name, []))
                topics.append(RESPONSE.OffsetFetchResponseTopics(
                    name=t.name, topic_id=t.topic_id, partitions=[
                        _partition(RESPONSE.OffsetFetchResponsePartitions, p, got.get(p))
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
