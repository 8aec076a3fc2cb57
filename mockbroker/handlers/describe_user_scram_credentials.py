"""DescribeUserScramCredentials (key 50): which SCRAM mechanisms each user has credentials for,
and with how many iterations (never salts or keys).  Needs DESCRIBE on the cluster when an
authorizer is configured."""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 50
RESPONSE = response_class(API_KEY)
#: Kafka's error answer has the error at the top and on a result for each user asked about
#: (which it leaves unnamed, as here: the items share no field with the results)
ERRORS = (KeyedShape("users", "name", "results", "user"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.DESCRIBE):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        error_message=None, results=[])
    names = [u.name for u in request.users or ()]
    results = [RESPONSE.DescribeUserScramCredentialsResult(
        user=user, error_code=code, error_message=message,
        credential_infos=[RESPONSE.CredentialInfo(mechanism=m, iterations=i) for m, i in infos])
        for user, code, message, infos in core.security.credentials.describe_scram(names)]
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None,
                    results=results)
