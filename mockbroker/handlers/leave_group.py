"""LeaveGroup (key 13): members leave (one by member id before v3, a batch after).

With an authorizer the request needs READ on the group (KafkaApis' check), or the answer is
GROUP_AUTHORIZATION_FAILED with no members."""

from __future__ import annotations

from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 13
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if not access(core, ctx).group(Op.READ, request.group_id):
        return RESPONSE(error_code=errors.GROUP_AUTHORIZATION_FAILED, members=[])
    if ctx.api_version < 3:
        leaving = [(request.member_id, None)]
    else:
        leaving = [(m.member_id, m.group_instance_id) for m in request.members]
    result = core.groups.classic.leave_group(ctx.broker_id, request.group_id, leaving)
    error, results = result.error_code, result.member_errors
    if ctx.api_version < 3:
        # Old versions carry the single member's outcome as the response's error.
        return RESPONSE(error_code=error if error != errors.NONE else results[0])
    if error != errors.NONE:
        return RESPONSE(error_code=error)
    return RESPONSE(error_code=errors.NONE, members=[
        RESPONSE.MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                error_code=code)
        for m, code in zip(request.members, results)])
