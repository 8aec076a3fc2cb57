"""DeleteGroups (key 42): delete groups without members, with their committed offsets.

Each deletion writes tombstones (every offset, then the group metadata) to the group's
``__consumer_offsets`` partition.  A group named twice is answered once, as Kafka does.
v3 adds a per-group error message, which Kafka 4.4 fills only for what we never answer (a
Streams topology plugin's refusal, an unexpected coordinator failure): its errors here leave
the message null, as Kafka's do.
"""

from __future__ import annotations

from mockbroker.core.error_responses import KeyedShape
from mockbroker.handlers import REGISTRY
from wire import response_class

API_KEY = 42
RESPONSE = response_class(API_KEY)


ERRORS = (KeyedShape("groups_names", None, "results", "group_id"),)


@REGISTRY.handler(API_KEY, 0, 3, errors=ERRORS)
def handle(core, ctx, request):
    group_ids = list(dict.fromkeys(request.groups_names))
    results = core.groups.admin.delete_groups(ctx.broker_id, group_ids)
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.DeletableGroupResult(group_id=group_id, error_code=results[group_id])
        for group_id in group_ids])
