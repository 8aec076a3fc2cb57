"""OffsetDelete (key 47): delete a group's committed offsets for some partitions.

As Kafka answers it: partitions of topics or partitions the cluster does not have get
UNKNOWN_TOPIC_OR_PARTITION before the coordinator is asked; a group-level refusal
(INVALID_GROUP_ID, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, a coordinator error) is the whole
answer, with no topics; otherwise each partition the group still consumes gets
GROUP_SUBSCRIBED_TO_TOPIC and the others lose their offsets.

With an authorizer (KafkaApis' checks): without DELETE on the group the whole answer is
GROUP_AUTHORIZATION_FAILED; then each topic needs READ, or its partitions answer
TOPIC_AUTHORIZATION_FAILED whether it exists or not.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 47
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, names_partitions=True)
def handle(core, ctx, request):
    cluster = core.cluster
    acl = access(core, ctx)
    if not acl.group(Op.DELETE, request.group_id):
        return RESPONSE(error_code=errors.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0,
                        topics=[])
    answers: dict[str, list[tuple[int, int]]] = {}
    wanted: list[tuple[str, int]] = []
    for t in request.topics:
        topic = cluster.topics.get(t.name)
        readable = acl.topic(Op.READ, t.name)
        for p in t.partitions:
            if not readable:
                answers.setdefault(t.name, []).append(
                    (p.partition_index, errors.TOPIC_AUTHORIZATION_FAILED))
            elif topic is None or not 0 <= p.partition_index < len(topic.partitions):
                answers.setdefault(t.name, []).append(
                    (p.partition_index, errors.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                wanted.append((t.name, p.partition_index))
    if not request.group_id:
        return RESPONSE(error_code=errors.INVALID_GROUP_ID, throttle_time_ms=0, topics=[])
    try:
        results = core.groups.admin.delete_offsets(ctx.broker_id, request.group_id, wanted)
    except ApiException as exc:
        return RESPONSE(error_code=exc.error_code, throttle_time_ms=0, topics=[])
    for (name, index) in wanted:
        answers.setdefault(name, []).append((index, results[(name, index)]))
    return RESPONSE(error_code=errors.NONE, throttle_time_ms=0, topics=[
        RESPONSE.OffsetDeleteResponseTopic(name=name, partitions=[
            RESPONSE.OffsetDeleteResponsePartition(partition_index=index, error_code=code)
            for index, code in parts]) for name, parts in answers.items()])
