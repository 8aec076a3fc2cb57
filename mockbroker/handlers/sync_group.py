"""SyncGroup (key 14): the leader hands in the assignment; everyone gets their share.

With an authorizer the member needs READ on the group (KafkaApis' check, after the v5
protocol check), or the answer is GROUP_AUTHORIZATION_FAILED with an empty assignment."""

from __future__ import annotations

from mockbroker.core.groups.classic_api import SyncResult
from mockbroker.core.deferred import Deferred
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 14
RESPONSE = response_class(API_KEY)
#: from v5 (KIP-559) a SyncGroup must name its protocol type and name; Kafka refuses one that
#: does not with INCONSISTENT_GROUP_PROTOCOL before asking the coordinator
PROTOCOL_REQUIRED_VERSION = 5


def _response(result: SyncResult):
    return RESPONSE(error_code=result.error_code, protocol_type=result.protocol_type,
                    protocol_name=result.protocol_name, assignment=result.assignment)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if ctx.api_version >= PROTOCOL_REQUIRED_VERSION and \
            (request.protocol_type is None or request.protocol_name is None):
        return RESPONSE(error_code=errors.INCONSISTENT_GROUP_PROTOCOL, assignment=b"")
    if not access(core, ctx).group(Op.READ, request.group_id):
        return RESPONSE(error_code=errors.GROUP_AUTHORIZATION_FAILED, assignment=b"")
    result = core.groups.classic.sync_group(
        ctx.broker_id, request.group_id, request.member_id, request.group_instance_id,
        request.generation_id, request.protocol_type, request.protocol_name,
        {a.member_id: a.assignment for a in request.assignments})
    if isinstance(result, Deferred):
        return result.map(_response)
    return _response(result)
