"""CreateDelegationToken (key 38): a new delegation token for the requester, or (v3) for an
owner the request names, with renewers and a maximum lifetime
(:mod:`mockbroker.core.security.tokens`).

Kafka's checks, in its order: the connection may ask for tokens (not PLAINTEXT, not SSL without
a client certificate, not logged in with a token: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); a token
for someone else needs CREATE_TOKENS on that ``User`` resource
(DELEGATION_TOKEN_AUTHORIZATION_FAILED); every renewer is a ``User``
(INVALID_PRINCIPAL_TYPE); tokens are enabled (DELEGATION_TOKEN_AUTH_DISABLED).  The answer
names the owner and (v3) the requester even when it refuses; the broker's own refusals carry -1
timestamps, the controller's 0, as Kafka's do.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.errors import ApiException
from mockbroker.core.security import ANONYMOUS, Principal
from mockbroker.core.security.acls import AclOperation, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.core.security.tokens import (ERROR_TIMESTAMP, USER_TYPE, delegation_tokens,
                                             refused_channel)
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 38
RESPONSE = response_class(API_KEY)


def _refused(owner: Principal, requester: Principal, code: int, timestamp: int):
    return RESPONSE(error_code=code, principal_type=owner.type, principal_name=owner.name,
                    token_requester_principal_type=requester.type,
                    token_requester_principal_name=requester.name,
                    issue_timestamp_ms=timestamp, expiry_timestamp_ms=timestamp,
                    max_timestamp_ms=timestamp, token_id="", hmac=b"", throttle_time_ms=0)


def _error_answer(version: int, request, code: int):
    """Kafka's error answer names nobody: User:ANONYMOUS as owner and requester."""
    return _refused(ANONYMOUS, ANONYMOUS, code, ERROR_TIMESTAMP)


@REGISTRY.handler(API_KEY, errors=OwnAnswer(_error_answer))
def handle(core, ctx, request):
    requester = ctx.principal
    owner_name = request.owner_principal_name if ctx.api_version >= 3 else None
    if owner_name and request.owner_principal_type is None:
        # Kafka cannot make a principal without a type, and fails the request as it fails
        # one it cannot handle
        return _refused(ANONYMOUS, ANONYMOUS, errors.UNKNOWN_SERVER_ERROR, ERROR_TIMESTAMP)
    owner = Principal(request.owner_principal_type, owner_name) if owner_name else requester
    renewers = [Principal(r.principal_type, r.principal_name) for r in request.renewers]
    if refused_channel(ctx):
        return _refused(owner, requester, errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                        ERROR_TIMESTAMP)
    if owner != requester and not access(core, ctx).allows(
            AclOperation.CREATE_TOKENS, ResourceType.USER, str(owner)):
        return _refused(owner, requester, errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                        ERROR_TIMESTAMP)
    if any(r.type != USER_TYPE for r in renewers):
        return _refused(owner, requester, errors.INVALID_PRINCIPAL_TYPE, ERROR_TIMESTAMP)
    try:
        token = delegation_tokens(core).create(requester, owner, renewers,
                                               request.max_lifetime_ms)
    except ApiException as exc:
        return _refused(owner, requester, exc.error_code, 0)
    return RESPONSE(error_code=errors.NONE, principal_type=owner.type,
                    principal_name=owner.name, token_requester_principal_type=requester.type,
                    token_requester_principal_name=requester.name,
                    issue_timestamp_ms=token.issue_timestamp_ms,
                    expiry_timestamp_ms=token.expiry_timestamp_ms,
                    max_timestamp_ms=token.max_timestamp_ms, token_id=token.token_id,
                    hmac=token.hmac, throttle_time_ms=0)
