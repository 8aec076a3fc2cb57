"""Heartbeat (key 12): keep a member's session alive; learn of a rebalance."""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import response_class

API_KEY = 12
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 0, 4)
def handle(core, ctx, request):
    result = core.groups.classic.heartbeat(ctx.broker_id, request.group_id, request.member_id,
                                           request.group_instance_id, request.generation_id)
    return RESPONSE(error_code=result.error_code)
