"""Heartbeat (key 12): keep a member's session alive; learn of a rebalance.

With an authorizer the member needs READ on the group (KafkaApis' check), or the answer is
GROUP_AUTHORIZATION_FAILED."""

from __future__ import annotations

from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 12
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if not access(core, ctx).group(Op.READ, request.group_id):
        return RESPONSE(error_code=errors.GROUP_AUTHORIZATION_FAILED)
    result = core.groups.classic.heartbeat(ctx.broker_id, request.group_id, request.member_id,
                                           request.group_instance_id, request.generation_id)
    return RESPONSE(error_code=result.error_code)
