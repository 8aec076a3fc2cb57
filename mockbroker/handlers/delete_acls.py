"""DeleteAcls (key 31): delete the ACLs each filter selects; each filter's result lists the
ACLs it deleted.

As in Kafka 4: with no authorizer every filter fails with SECURITY_DISABLED; the client needs
ALTER on the cluster, or every filter fails with CLUSTER_AUTHORIZATION_FAILED.  A filter whose
codes Kafka does not define fails alone with INVALID_REQUEST (see
:meth:`mockbroker.core.security.acls.AclStore.delete`), but one with an UNKNOWN (0) code does not
parse in Kafka, which closes the connection.
"""

from __future__ import annotations

from mockbroker.core.deferred import Close
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclBindingFilter, AclOperation, acl_api_gate
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 31
RESPONSE = response_class(API_KEY)

#: an error for the whole request is repeated on every filter
ERRORS = (KeyedShape("filters", "resource_name_filter", "filter_results", "error_code"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    filters = request.filters
    authorizer, refusal = acl_api_gate(
        core, ctx, filters, ("resource_type_filter", "pattern_type_filter", "operation",
                             "permission_type"),
        AclOperation.ALTER, "No Authorizer is configured.", "DeleteAcls")
    if refusal is not None:
        return refusal if isinstance(refusal, Close) else _every(filters, *refusal)
    results = authorizer.acls.delete([
        AclBindingFilter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter,
                         f.principal_filter, f.host_filter, f.operation, f.permission_type)
        for f in filters])
    return RESPONSE(throttle_time_ms=0, filter_results=[
        RESPONSE.DeleteAclsFilterResult(
            error_code=r.error_code, error_message=r.error_message, matching_acls=[
                RESPONSE.DeleteAclsMatchingAcl(
                    error_code=errors.NONE, error_message=None,
                    resource_type=acl.resource_type, resource_name=acl.resource_name,
                    pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
                    operation=acl.operation, permission_type=acl.permission_type)
                for acl in r.deleted])
        for r in results])


def _every(filters, code: int, message: str):
    return RESPONSE(throttle_time_ms=0, filter_results=[
        RESPONSE.DeleteAclsFilterResult(error_code=code, error_message=message,
                                        matching_acls=[])
        for _ in filters])
