"""ShareGroupHeartbeat (key 76): a member of a KIP-932 share group joins (epoch 0), heartbeats
and leaves (-1) (:mod:`mockbroker.core.groups.share`).  The member makes its own member id; a
refusal carries Kafka's error message.

With an authorizer (KafkaApis' checks): the member needs READ on the group, else
GROUP_AUTHORIZATION_FAILED; a heartbeat naming its subscribed topics needs DESCRIBE on every one
of them, else TOPIC_AUTHORIZATION_FAILED (neither with a message).  A member id longer than 36
characters is INVALID_REQUEST before the coordinator sees it, as KafkaApis checks it."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.share.protocol import Heartbeat
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import heartbeat_assignment, refusal_message
from wire import errors, response_class

API_KEY = 76
RESPONSE = response_class(API_KEY)
#: the longest member id KafkaApis takes (a UUID's text)
MAX_MEMBER_ID = 36


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if not acl.group(Op.READ, request.group_id):
        return _refused(errors.GROUP_AUTHORIZATION_FAILED)
    if len(request.member_id) > MAX_MEMBER_ID:
        return _refused(errors.INVALID_REQUEST, "Invalid member id in the request.")
    if request.subscribed_topic_names:
        names = set(request.subscribed_topic_names)
        if len(acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, names)) < len(names):
            return _refused(errors.TOPIC_AUTHORIZATION_FAILED)
    heartbeat = Heartbeat(request.group_id, request.member_id, request.member_epoch,
                          request.rack_id, request.subscribed_topic_names, ctx.client_id or "",
                          "/" + ctx.client_host)
    try:
        result = core.groups.share.heartbeat(ctx.broker_id, heartbeat)
    except ApiException as exc:
        return _refused(exc.error_code, refusal_message(exc))
    assignment = heartbeat_assignment(RESPONSE, result.assignment)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None,
                    member_id=result.member_id, member_epoch=result.member_epoch,
                    heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment)


def _refused(code: int, message: str | None = None):
    return RESPONSE(throttle_time_ms=0, error_code=code, error_message=message, member_id=None,
                    member_epoch=0, heartbeat_interval_ms=0, assignment=None)
