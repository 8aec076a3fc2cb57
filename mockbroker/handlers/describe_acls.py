"""DescribeAcls (key 29): the ACLs one filter selects, grouped by resource pattern.

As in Kafka 4: with no authorizer the answer is SECURITY_DISABLED; the client needs DESCRIBE on
the cluster (which an ALLOW of ALTER also gives), or the answer is CLUSTER_AUTHORIZATION_FAILED.
Both are errors of the whole response.  A filter with an UNKNOWN (0) code does not parse in
Kafka, which closes the connection; a code Kafka does not define reads as UNKNOWN after parsing
and simply selects nothing.
"""

from __future__ import annotations

from mockbroker.core.deferred import Close
from mockbroker.core.security.acls import AclBindingFilter, AclOperation, acl_api_gate
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 29
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    authorizer, refusal = acl_api_gate(
        core, ctx, [request], ("resource_type_filter", "pattern_type_filter", "operation",
                               "permission_type"),
        AclOperation.DESCRIBE, "No Authorizer is configured on the broker", "DescribeAcls")
    if refusal is not None:
        return refusal if isinstance(refusal, Close) else _error(*refusal)
    selected = authorizer.acls.describe(AclBindingFilter(
        request.resource_type_filter, request.resource_name_filter,
        request.pattern_type_filter, request.principal_filter, request.host_filter,
        request.operation, request.permission_type))
    resources: dict = {}
    for acl in selected:
        key = (acl.resource_type, acl.resource_name, acl.pattern_type)
        if key not in resources:
            resources[key] = RESPONSE.DescribeAclsResource(
                resource_type=acl.resource_type, resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, acls=[])
        resources[key].acls.append(RESPONSE.AclDescription(
            principal=acl.principal, host=acl.host, operation=acl.operation,
            permission_type=acl.permission_type))
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None,
                    resources=list(resources.values()))


def _error(code: int, message: str):
    return RESPONSE(throttle_time_ms=0, error_code=code, error_message=message, resources=[])
