"""DescribeGroups (key 15): state, protocol and members of classic groups.

Kafka 4's answer, group by group: a group this coordinator does not have is reported as state
Dead — with no error before v6, with GROUP_ID_NOT_FOUND and a message from v6 on.  Only a
Stable group shows its protocol and each member's metadata for it; members' assignments are
shown in every state (Kafka 4's ClassicGroupMember.describeNoMetadata keeps them).  A KIP-848
consumer group is answered as Kafka 4 answers it here: Dead, with GROUP_ID_NOT_FOUND "is not a
classic group" from v6 (ConsumerGroupDescribe describes it).

With an authorizer (KafkaApis' check): each group needs DESCRIBE; the groups the principal may
not describe come first, each GROUP_AUTHORIZATION_FAILED with nothing else
(``DescribeGroupsResponse.groupError``), and the authorized operations asked for (v3+) are the
principal's.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic.state import GroupState
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import NO_OPERATIONS
from wire import errors, response_class

API_KEY = 15
RESPONSE = response_class(API_KEY)
#: With no authorizer, everything a group resource has: READ(3), DELETE(6), DESCRIBE(8),
#: DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11) (Kafka's AclEntry.supportedOperations(GROUP)).
GROUP_OPERATIONS = sum(1 << op for op in (3, 6, 8, 10, 11))


def _describe(core, ctx, group_id: str):
    try:
        group = core.groups.describe_as("classic", ctx.broker_id, group_id)
    except ApiException as exc:
        if exc.error_code != errors.GROUP_ID_NOT_FOUND:
            return RESPONSE.DescribedGroup(error_code=exc.error_code, group_id=group_id,
                                           group_state="", protocol_type="", protocol_data="",
                                           members=[])
        # no such group, or one of another type (a KIP-848 group is no classic group): Kafka
        # describes it Dead, and says why from v6
        not_found = ctx.api_version >= 6
        return RESPONSE.DescribedGroup(
            error_code=errors.GROUP_ID_NOT_FOUND if not_found else errors.NONE,
            error_message=exc.message if not_found else None,
            group_id=group_id, group_state=GroupState.DEAD.value, protocol_type="",
            protocol_data="", members=[])
    stable = group.is_(GroupState.STABLE)
    members = [RESPONSE.DescribedGroupMember(
        member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
        client_host=m.client_host,
        member_metadata=m.metadata(group.protocol_name) if stable else b"",
        member_assignment=m.assignment) for m in group.members.values()]
    return RESPONSE.DescribedGroup(
        error_code=errors.NONE, group_id=group_id, group_state=group.state.value,
        protocol_type=group.protocol_type or "",
        protocol_data=group.protocol_name if stable else "", members=members)


ERRORS = (KeyedShape("groups", None, "groups", "group_id"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    asked = ctx.api_version >= 3 and request.include_authorized_operations
    acl = access(core, ctx)
    refused, groups = [], []
    for group_id in request.groups:
        if not acl.group(Op.DESCRIBE, group_id):
            refused.append(RESPONSE.DescribedGroup(
                error_code=errors.GROUP_AUTHORIZATION_FAILED, group_id=group_id,
                group_state="", protocol_type="", protocol_data="", members=[],
                authorized_operations=NO_OPERATIONS))
            continue
        described = _describe(core, ctx, group_id)
        operations = NO_OPERATIONS
        if asked and described.error_code == errors.NONE:
            operations = acl.operations(ResourceType.GROUP, group_id) if acl.enforced \
                else GROUP_OPERATIONS
        described.authorized_operations = operations
        groups.append(described)
    return RESPONSE(groups=refused + groups)
