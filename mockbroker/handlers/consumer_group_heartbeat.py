"""ConsumerGroupHeartbeat (key 68): a member of a KIP-848 consumer group joins, heartbeats and
leaves (:mod:`mockbroker.core.groups.consumer`).  A refusal carries Kafka's error message;
from version 1 the client makes its member id and may subscribe by regular expression.

With an authorizer (KafkaApis' checks): the member needs READ on the group, else
GROUP_AUTHORIZATION_FAILED; a heartbeat naming its subscribed topics needs DESCRIBE on every one
of them, else TOPIC_AUTHORIZATION_FAILED (neither with a message)."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.consumer.protocol import Heartbeat
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import heartbeat_assignment, refusal_message
from wire import errors, response_class

API_KEY = 68
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if not acl.group(Op.READ, request.group_id):
        return _refused(errors.GROUP_AUTHORIZATION_FAILED)
    if request.subscribed_topic_names:
        names = set(request.subscribed_topic_names)
        if len(acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, names)) < len(names):
            return _refused(errors.TOPIC_AUTHORIZATION_FAILED)
    owned = None
    if request.topic_partitions is not None:
        owned = {}
        for tp in request.topic_partitions:
            owned.setdefault(tp.topic_id, set()).update(tp.partitions)
    heartbeat = Heartbeat(
        request.group_id, request.member_id, request.member_epoch, request.instance_id,
        request.rack_id, request.rebalance_timeout_ms, request.subscribed_topic_names,
        request.subscribed_topic_regex if ctx.api_version >= 1 else None,
        request.server_assignor, owned, ctx.client_id or "", "/" + ctx.client_host,
        ctx.api_version)
    try:
        result = core.groups.consumer.heartbeat(ctx.broker_id, heartbeat)
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code,
                        error_message=refusal_message(exc), member_id=None, member_epoch=0,
                        heartbeat_interval_ms=0, assignment=None)
    assignment = heartbeat_assignment(RESPONSE, result.assignment)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None,
                    member_id=result.member_id, member_epoch=result.member_epoch,
                    heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment)


def _refused(code: int):
    """An authorization refusal: the error code alone (``getErrorResponse``)."""
    return RESPONSE(throttle_time_ms=0, error_code=code, error_message=None, member_id=None,
                    member_epoch=0, heartbeat_interval_ms=0, assignment=None)
