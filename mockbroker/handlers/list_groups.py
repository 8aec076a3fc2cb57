"""ListGroups (key 16): the groups this broker coordinates, in every shard it leads.

Filters as Kafka 4 applies them: states (v4+) compared case-insensitively, types (v5+) parsed
case-insensitively, an unknown type matching no group.  A group's type, protocol type and
state are what its type in the coordinator's table of group types says ("classic", or
"consumer" for KIP-848 groups, whose protocol type is "consumer").

With an authorizer (KafkaApis' check): a principal that may DESCRIBE the cluster sees every
group; any other sees only the groups it may DESCRIBE.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 16
RESPONSE = response_class(API_KEY)
#: a state's name in a states filter where it is not just the name in lower case
#: (Kafka's streams NotReady is "not_ready")
FILTER_NAMES = {"NotReady": "not_ready"}


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    acl = access(core, ctx)
    every_group = acl.cluster(Op.DESCRIBE)
    try:
        groups = core.groups.admin.list_groups(ctx.broker_id)
    except ApiException as exc:
        return RESPONSE(error_code=exc.error_code, groups=[])
    states = {s.strip().lower() for s in request.states_filter} if ctx.api_version >= 4 else set()
    types = {t.lower() for t in request.types_filter} if ctx.api_version >= 5 else set()
    listed = []
    for group in groups:
        if states and FILTER_NAMES.get(group.state, group.state.lower()) not in states:
            continue
        if types and group.group_type not in types:
            continue
        if not every_group and not acl.group(Op.DESCRIBE, group.group_id):
            continue
        listed.append(RESPONSE.ListedGroup(group_id=group.group_id,
                                           protocol_type=group.protocol_type,
                                           group_state=group.state,
                                           group_type=group.group_type))
    return RESPONSE(error_code=errors.NONE, groups=listed)
