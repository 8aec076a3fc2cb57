"""DeleteShareGroupOffsets (key 92): ``Admin.deleteShareGroupOffsets`` and
``kafka-share-groups.sh --delete-offsets``: an empty share group forgets its share state of the
topics named.  A group with members is NON_EMPTY_GROUP, an unknown group or one of another type
GROUP_ID_NOT_FOUND (with Kafka's messages); a topic the group has no state of answers
UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete.".

With an authorizer (KafkaApis' checks): DELETE on the group (else GROUP_AUTHORIZATION_FAILED)
and READ on each topic (else TOPIC_AUTHORIZATION_FAILED on it)."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class
from wire.schema import ZERO_UUID

API_KEY = 92
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, names_topics=True)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if not acl.group(Op.DELETE, request.group_id):
        return RESPONSE(throttle_time_ms=0, error_code=errors.GROUP_AUTHORIZATION_FAILED,
                        responses=[])
    if not request.group_id:
        return RESPONSE(throttle_time_ms=0, error_code=errors.INVALID_GROUP_ID, responses=[])
    names = [t.topic_name for t in request.topics]
    allowed = [n for n in names if acl.topic(Op.READ, n)]
    try:
        done = core.groups.share.delete_offsets(ctx.broker_id, request.group_id, allowed)
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code,
                        error_message=exc.message or None, responses=[])
    topics = core.cluster.topics
    answer = []
    for name in names:
        code, message = done.get(name, (errors.TOPIC_AUTHORIZATION_FAILED,
                                        "Topic authorization failed."))
        topic = topics.get(name)
        answer.append(RESPONSE.DeleteShareGroupOffsetsResponseTopic(
            topic_name=name, topic_id=topic.topic_id if topic is not None else ZERO_UUID,
            error_code=code, error_message=message))
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, responses=answer)
