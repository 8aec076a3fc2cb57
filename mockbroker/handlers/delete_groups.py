"""DeleteGroups (key 42): delete groups without members, with their committed offsets.

Each deletion writes tombstones (every offset, then the group metadata) to the group's
``__consumer_offsets`` partition.  A group named twice is answered once, as Kafka does.
v3 adds a per-group error message, which Kafka 4.4 fills only for what we never answer (a
Streams topology plugin's refusal, an unexpected coordinator failure): its errors here leave
the message null, as Kafka's do.

With an authorizer (KafkaApis' check) each group needs DELETE: the groups the principal may not
delete are answered GROUP_AUTHORIZATION_FAILED, after the others, and are left alone.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 42
RESPONSE = response_class(API_KEY)


ERRORS = (KeyedShape("groups_names", None, "results", "group_id"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    group_ids = list(dict.fromkeys(request.groups_names))
    deletable = access(core, ctx).allowed(Op.DELETE, ResourceType.GROUP, group_ids)
    allowed = [group_id for group_id in group_ids if group_id in deletable]
    refused = [group_id for group_id in group_ids if group_id not in deletable]
    results = core.groups.admin.delete_groups(ctx.broker_id, allowed)
    results.update((group_id, errors.GROUP_AUTHORIZATION_FAILED) for group_id in refused)
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.DeletableGroupResult(group_id=group_id, error_code=results[group_id])
        for group_id in allowed + refused])
