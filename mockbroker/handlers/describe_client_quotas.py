"""DescribeClientQuotas (key 48): the quota entities a filter matches, with their values.  Needs
DESCRIBE_CONFIGS on the cluster when an authorizer is configured."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.quotas.entities import FilterComponent
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 48
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.DESCRIBE_CONFIGS):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        error_message=None, entries=None)
    components = [FilterComponent(c.entity_type, c.match_type, c.match)
                  for c in request.components]
    try:
        found = core.quotas.entities.describe(components, request.strict)
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code, error_message=str(exc),
                        entries=None)
    # Kafka answers a success with an empty message, not a null one
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message="", entries=[
        RESPONSE.EntryData(
            entity=[RESPONSE.EntityData(entity_type=kind, entity_name=name)
                    for kind, name in entity],
            values=[RESPONSE.ValueData(key=key, value=value) for key, value in values.items()])
        for entity, values in found])
