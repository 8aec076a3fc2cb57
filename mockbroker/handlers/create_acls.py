"""CreateAcls (key 30): add ACLs to the authorizer.

As in Kafka 4: with no authorizer every creation fails with SECURITY_DISABLED; the client needs
ALTER on the cluster, or every creation fails with CLUSTER_AUTHORIZATION_FAILED; otherwise each
creation gets its own result (see :meth:`mockbroker.core.security.acls.AclStore.create` for
what is refused).  A creation with an UNKNOWN (0) code does not parse in Kafka, which closes the
connection.
"""

from __future__ import annotations

from mockbroker.core.deferred import Close
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclBinding, AclOperation, acl_api_gate
from mockbroker.handlers import REGISTRY
from wire import response_class

API_KEY = 30
RESPONSE = response_class(API_KEY)

#: an error for the whole request is repeated on every creation
ERRORS = (KeyedShape("creations", "resource_name", "results", "error_code"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    creations = request.creations
    authorizer, refusal = acl_api_gate(
        core, ctx, creations, ("resource_type", "resource_pattern_type", "operation",
                               "permission_type"),
        AclOperation.ALTER, "No Authorizer is configured.", "CreateAcls")
    if refusal is not None:
        return refusal if isinstance(refusal, Close) else _every(creations, *refusal)
    results = authorizer.acls.create([
        AclBinding(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal,
                   c.host, c.operation, c.permission_type) for c in creations])
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.AclCreationResult(error_code=r.error_code, error_message=r.error_message)
        for r in results])


def _every(creations, code: int, message: str):
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.AclCreationResult(error_code=code, error_message=message)
        for _ in creations])
