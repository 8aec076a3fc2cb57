"""DescribeDelegationToken (key 41): the delegation tokens the caller may see, with their HMACs
(:mod:`mockbroker.core.security.tokens`).

``owners`` null asks for every token, an empty list for none, a list for the tokens each
principal owns, requested or may renew.  Of those the caller is shown the ones it owns,
requested or may renew, and the others the authorizer lets it DESCRIBE (that
``DelegationToken`` resource, by token id) or DESCRIBE_TOKENS of (the owner's ``User``
resource); with no authorizer, every one.  A token past its expiry is shown until the periodic
check removes it.  Refused on a connection that may not manage tokens
(DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), and when tokens are off
(DELEGATION_TOKEN_AUTH_DISABLED).  v3 adds each token's requester.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security import Principal
from mockbroker.core.security.acls import AclOperation, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.core.security.tokens import delegation_tokens, refused_channel
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 41
RESPONSE = response_class(API_KEY)


def _described(token):
    return RESPONSE.DescribedDelegationToken(
        principal_type=token.owner.type, principal_name=token.owner.name,
        token_requester_principal_type=token.requester.type,
        token_requester_principal_name=token.requester.name,
        issue_timestamp=token.issue_timestamp_ms, expiry_timestamp=token.expiry_timestamp_ms,
        max_timestamp=token.max_timestamp_ms, token_id=token.token_id, hmac=token.hmac,
        renewers=[RESPONSE.DescribedDelegationTokenRenewer(principal_type=r.type,
                                                           principal_name=r.name)
                  for r in token.renewers])


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if refused_channel(ctx):
        return RESPONSE(error_code=errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, tokens=[],
                        throttle_time_ms=0)
    store = delegation_tokens(core)
    if not store.enabled:
        return RESPONSE(error_code=errors.DELEGATION_TOKEN_AUTH_DISABLED, tokens=[],
                        throttle_time_ms=0)
    owners = None if request.owners is None else [
        Principal(o.principal_type, o.principal_name) for o in request.owners]
    if owners == []:
        return RESPONSE(error_code=errors.NONE, tokens=[], throttle_time_ms=0)
    allowed = access(core, ctx)

    def may_describe(token) -> bool:
        return allowed.allows(AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN,
                              token.token_id) or \
            allowed.allows(AclOperation.DESCRIBE_TOKENS, ResourceType.USER, str(token.owner))

    try:
        tokens = store.describe(ctx.principal, owners, may_describe)
    except ApiException as exc:
        return RESPONSE(error_code=exc.error_code, tokens=[], throttle_time_ms=0)
    return RESPONSE(error_code=errors.NONE, tokens=[_described(t) for t in tokens],
                    throttle_time_ms=0)
