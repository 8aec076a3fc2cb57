"""JoinGroup (key 11): join a classic group; answered when the join phase completes.

With an authorizer the member needs READ on the group (KafkaApis' check), or the answer is
GROUP_AUTHORIZATION_FAILED with nothing else (``JoinGroupRequest.getErrorResponse``)."""

from __future__ import annotations

from mockbroker.core.groups.classic_api import JoinRequest, JoinResult
from mockbroker.core.deferred import Deferred
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 11
RESPONSE = response_class(API_KEY)


def _response(result: JoinResult, version: int):
    ok = result.error_code == errors.NONE
    protocol_name = result.protocol_name if ok else None
    if protocol_name is None and version < 7:
        protocol_name = ""  # not nullable before v7
    return RESPONSE(
        error_code=result.error_code, generation_id=result.generation_id,
        protocol_type=result.protocol_type if ok else None,
        protocol_name=protocol_name, leader=result.leader,
        skip_assignment=result.skip_assignment, member_id=result.member_id,
        members=[RESPONSE.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=md)
                 for m, i, md in result.members])


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if not access(core, ctx).group(Op.READ, request.group_id):
        return RESPONSE(error_code=errors.GROUP_AUTHORIZATION_FAILED, generation_id=-1,
                        protocol_type=None, protocol_name=None if ctx.api_version >= 7 else "",
                        leader="", skip_assignment=False, member_id="", members=[])
    rebalance_timeout = request.rebalance_timeout_ms if ctx.api_version >= 1 \
        else request.session_timeout_ms
    result = core.groups.classic.join_group(ctx.broker_id, JoinRequest(
        group_id=request.group_id, member_id=request.member_id,
        group_instance_id=request.group_instance_id, client_id=ctx.client_id or "",
        client_host=f"/{ctx.client_host}", session_timeout_ms=request.session_timeout_ms,
        rebalance_timeout_ms=rebalance_timeout, protocol_type=request.protocol_type,
        protocols=[(p.name, p.metadata) for p in request.protocols],
        api_version=ctx.api_version))
    if isinstance(result, Deferred):
        return result.map(lambda value: _response(value, ctx.api_version))
    return _response(result, ctx.api_version)
