"""AlterUserScramCredentials (key 51): add, replace or delete a user's SCRAM credential (the
client sends the salted password, never the password).  A credential set here is the one the
next SCRAM authentication checks.  Needs ALTER on the cluster when an authorizer is
configured."""

from __future__ import annotations

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 51
RESPONSE = response_class(API_KEY)


def _error_answer(version: int, request, code: int):
    """Kafka's error answer: a result with the error for each user the deletions and upsertions
    name, once each, sorted (``AlterUserScramCredentialsRequest.getErrorResponse``)."""
    users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.AlterUserScramCredentialsResult(user=user, error_code=code, error_message=None)
        for user in users])


@REGISTRY.handler(API_KEY, errors=OwnAnswer(_error_answer))
def handle(core, ctx, request):
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.ALTER):
        users = dict.fromkeys([d.name for d in request.deletions] +
                              [u.name for u in request.upsertions])
        return RESPONSE(throttle_time_ms=0, results=[
            RESPONSE.AlterUserScramCredentialsResult(
                user=user, error_code=errors.CLUSTER_AUTHORIZATION_FAILED, error_message=None)
            for user in users])
    results = core.security.credentials.alter_scram(
        [(d.name, d.mechanism) for d in request.deletions],
        [(u.name, u.mechanism, u.iterations, u.salt, u.salted_password)
         for u in request.upsertions])
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.AlterUserScramCredentialsResult(user=user, error_code=code,
                                                 error_message=message)
        for user, code, message in results])
