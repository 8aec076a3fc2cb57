"""ShareGroupDescribe (key 77): KIP-932 share groups as ``Admin.describeShareGroups`` and
``kafka-share-groups.sh --describe --members`` see them: state, group and assignment epochs,
the ``simple`` assignor, and each member's epoch, client, subscription and assignment.  A group
this coordinator does not have, or one of another type, is GROUP_ID_NOT_FOUND with Kafka's
message.

With an authorizer (KafkaApis' checks): each group needs DESCRIBE, else it comes first as
GROUP_AUTHORIZATION_FAILED; the authorized operations asked for are the principal's; and a
group whose members' assignments name a topic the principal may not DESCRIBE is answered
TOPIC_AUTHORIZATION_FAILED with Kafka's message and no members.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.share.assignor import NAME as ASSIGNOR
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import described_groups
from wire import errors, response_class

API_KEY = 77
RESPONSE = response_class(API_KEY)
ERRORS = (KeyedShape("group_ids", None, "groups", "group_id"),)
NO_OPERATIONS = -(1 << 31)


def _describe(core, ctx, group_id: str):
    empty = dict(group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
                 members=[], authorized_operations=NO_OPERATIONS)
    if not group_id:
        return RESPONSE.DescribedGroup(error_code=errors.INVALID_GROUP_ID, group_id=group_id,
                                       error_message=None, **empty)
    try:
        group = core.groups.describe_as("share", ctx.broker_id, group_id)
    except ApiException as exc:
        message = exc.message if exc.error_code == errors.GROUP_ID_NOT_FOUND else None
        return RESPONSE.DescribedGroup(error_code=exc.error_code, group_id=group_id,
                                       error_message=message, **empty)
    by_id = core.cluster.topics_by_id
    return RESPONSE.DescribedGroup(
        error_code=errors.NONE, error_message=None, group_id=group_id,
        group_state=group.state.value, group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch, assignor_name=ASSIGNOR,
        authorized_operations=NO_OPERATIONS, members=[
            RESPONSE.Member(
                member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                assignment=RESPONSE.Assignment(topic_partitions=[
                    RESPONSE.TopicPartitions(topic_id=topic_id, topic_name=by_id[topic_id].name,
                                             partitions=sorted(ps))
                    for topic_id, ps in sorted(m.assigned.items(), key=lambda kv: kv[0].int)
                    if topic_id in by_id and ps]))
            for m in group.members.values()])


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    return RESPONSE(throttle_time_ms=0, groups=described_groups(
        core, ctx, request, _describe, RESPONSE.DescribedGroup,
        lambda g: {tp.topic_name for m in g.members for tp in m.assignment.topic_partitions}))
