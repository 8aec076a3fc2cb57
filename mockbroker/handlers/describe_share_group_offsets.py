"""DescribeShareGroupOffsets (key 90): each share partition's start offset, leader epoch and
(v1) lag, as ``Admin.listShareGroupOffsets`` and ``kafka-share-groups.sh --describe`` show
them, from the share coordinator's state.  A group's topics left out (null) mean every
partition it has a share state for; a partition without a start yet answers -1.

With an authorizer (KafkaApis' checks): each group needs DESCRIBE (else
GROUP_AUTHORIZATION_FAILED on it); a topic named without DESCRIBE answers
TOPIC_AUTHORIZATION_FAILED on its partitions, and one not named is left out."""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class
from wire.schema import ZERO_UUID

API_KEY = 90
RESPONSE = response_class(API_KEY)
ERRORS = (KeyedShape("groups", "group_id", "groups", "group_id"),)
TOPIC_DENIED = "Topic authorization failed."


def _group(core, ctx, acl, asked):
    group_id = asked.group_id
    if not acl.group(Op.DESCRIBE, group_id):
        return RESPONSE.DescribeShareGroupOffsetsResponseGroup(
            group_id=group_id, topics=[], error_code=errors.GROUP_AUTHORIZATION_FAILED)
    named = None if asked.topics is None else [(t.topic_name, list(t.partitions))
                                              for t in asked.topics]
    allowed = acl.allowed(Op.DESCRIBE, ResourceType.TOPIC,
                          {name for name, _ in named or ()}) if named is not None else None
    try:
        found = core.groups.share.offsets(
            ctx.broker_id, group_id,
            None if named is None else [(n, ps) for n, ps in named if n in allowed])
    except ApiException as exc:
        return RESPONSE.DescribeShareGroupOffsetsResponseGroup(
            group_id=group_id, topics=[], error_code=exc.error_code)
    if named is None and acl.enforced:
        seen = acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, {o.topic for o in found})
        found = [o for o in found if o.topic in seen]
    topics: dict = {}
    for o in found:
        topic = topics.setdefault(o.topic, RESPONSE.DescribeShareGroupOffsetsResponseTopic(
            topic_name=o.topic, topic_id=o.topic_id or ZERO_UUID, partitions=[]))
        topic.partitions.append(RESPONSE.DescribeShareGroupOffsetsResponsePartition(
            partition_index=o.partition, start_offset=o.start_offset,
            leader_epoch=o.leader_epoch if o.start_offset >= 0 else 0, lag=o.lag,
            error_code=errors.NONE))
    for name, partitions in named or ():
        if name not in allowed:
            topics[name] = RESPONSE.DescribeShareGroupOffsetsResponseTopic(
                topic_name=name, topic_id=ZERO_UUID, partitions=[
                    RESPONSE.DescribeShareGroupOffsetsResponsePartition(
                        partition_index=p, start_offset=-1, leader_epoch=0, lag=-1,
                        error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                        error_message=TOPIC_DENIED) for p in partitions])
    return RESPONSE.DescribeShareGroupOffsetsResponseGroup(
        group_id=group_id, topics=list(topics.values()), error_code=errors.NONE)


@REGISTRY.handler(API_KEY, errors=ERRORS, names_partitions=True)
def handle(core, ctx, request):
    acl = access(core, ctx)
    return RESPONSE(throttle_time_ms=0,
                    groups=[_group(core, ctx, acl, g) for g in request.groups])
