"""ConsumerGroupDescribe (key 69): KIP-848 consumer groups as ``Admin.describeConsumerGroups``
and ``kafka-consumer-groups.sh --describe`` see them: state, group and assignment epochs, the
assignor, and each member's epoch, subscription, current and target assignment, and whether it
uses the classic protocol.  A group this
coordinator does not have, or one of another type, is GROUP_ID_NOT_FOUND with Kafka's message.

With an authorizer (KafkaApis' checks): each group needs DESCRIBE, else it comes first as
GROUP_AUTHORIZATION_FAILED; the authorized operations asked for are the principal's; and a
group whose members' assignments or target assignments name a topic the principal may not
DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED with Kafka's message and no members.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import described_groups
from wire import errors, response_class

API_KEY = 69
RESPONSE = response_class(API_KEY)
#: the error on each group asked about, as Kafka answers one
ERRORS = (KeyedShape("group_ids", None, "groups", "group_id"),)
#: the member type v1 reports (KIP-1099): 0 for a classic member (JoinGroup and SyncGroup) of
#: a consumer group, 1 for a member of the consumer protocol
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1
NO_OPERATIONS = -(1 << 31)


def _assignment(core, parts) -> object:
    by_id = core.cluster.topics_by_id
    return RESPONSE.Assignment(topic_partitions=[
        RESPONSE.TopicPartitions(topic_id=topic_id, topic_name=by_id[topic_id].name,
                                 partitions=sorted(ps))
        for topic_id, ps in sorted(parts.items(), key=lambda kv: kv[0].int)
        if topic_id in by_id])


def _describe(core, ctx, group_id: str):
    empty = dict(group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
                 members=[], authorized_operations=NO_OPERATIONS)
    if not group_id:
        return RESPONSE.DescribedGroup(error_code=errors.INVALID_GROUP_ID, group_id=group_id,
                                       error_message=None, **empty)
    try:
        group = core.groups.describe_as("consumer", ctx.broker_id, group_id)
    except ApiException as exc:
        # the coordinator's errors carry no message here; a group missing, or of another type,
        # is GROUP_ID_NOT_FOUND with Kafka's
        message = exc.message if exc.error_code == errors.GROUP_ID_NOT_FOUND else None
        return RESPONSE.DescribedGroup(error_code=exc.error_code, group_id=group_id,
                                       error_message=message, **empty)
    consumer = core.groups.consumer
    return RESPONSE.DescribedGroup(
        error_code=errors.NONE, error_message=None, group_id=group_id,
        group_state=group.state.value, group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.preferred_assignor(consumer.assignors()[0]),
        authorized_operations=NO_OPERATIONS, members=[
            RESPONSE.Member(
                member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                # what it still holds counts: its partitions pending revocation too
                assignment=_assignment(core, m.owned()),
                target_assignment=_assignment(core, group.target.get(m.member_id, {})),
                member_type=CLASSIC_MEMBER if m.uses_classic else CONSUMER_MEMBER)
            for m in group.members.values()])


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    return RESPONSE(throttle_time_ms=0, groups=described_groups(
        core, ctx, request, _describe, RESPONSE.DescribedGroup,
        lambda g: {tp.topic_name for m in g.members
                   for a in (m.assignment, m.target_assignment) for tp in a.topic_partitions}))
