"""AlterShareGroupOffsets (key 91): ``Admin.alterShareGroupOffsets`` and
``kafka-share-groups.sh --reset-offsets``: an empty share group's partitions start again at
the offsets given (the share coordinator initializes their state anew; a leader serving one
lets it go).  A group with members is NON_EMPTY_GROUP "The group is not empty."; one of another
type GROUP_ID_NOT_FOUND; an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION.

With an authorizer (KafkaApis' checks): READ on the group (else GROUP_AUTHORIZATION_FAILED for
the request) and READ on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions)."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class
from wire.schema import ZERO_UUID

API_KEY = 91
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, names_partitions=True)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if not acl.group(Op.READ, request.group_id):
        return RESPONSE(throttle_time_ms=0, error_code=errors.GROUP_AUTHORIZATION_FAILED,
                        responses=[])
    if not request.group_id:
        return RESPONSE(throttle_time_ms=0, error_code=errors.INVALID_GROUP_ID, responses=[])
    topics = core.cluster.topics
    refused: dict[str, int] = {}
    offsets = {}
    for t in request.topics:
        topic = topics.get(t.topic_name)
        if not acl.topic(Op.READ, t.topic_name):
            refused[t.topic_name] = errors.TOPIC_AUTHORIZATION_FAILED
        elif topic is None:
            refused[t.topic_name] = errors.UNKNOWN_TOPIC_OR_PARTITION
        else:
            offsets.setdefault(topic.topic_id, {}).update(
                {p.partition_index: p.start_offset for p in t.partitions})
    try:
        failed = core.groups.share.alter_offsets(ctx.broker_id, request.group_id, offsets) \
            if offsets or not refused else {}
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code,
                        error_message=exc.message or None, responses=[])
    answer = []
    for t in request.topics:
        topic = topics.get(t.topic_name)
        code = refused.get(t.topic_name)
        answer.append(RESPONSE.AlterShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=topic.topic_id if topic and code is None
            else ZERO_UUID, partitions=[
                RESPONSE.AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index,
                    error_code=code if code is not None else failed.get(
                        (topic.topic_id, p.partition_index), errors.NONE))
                for p in t.partitions]))
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, responses=answer)
