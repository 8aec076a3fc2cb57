"""ExpireDelegationToken (key 40): bring a token's expiry forward to now plus the period asked
for (never past its maximum), or, with a negative period, remove the token at once
(:mod:`mockbroker.core.security.tokens`).  Only the owner and the renewers may.

Kafka's checks, in its order: the connection may manage tokens
(DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, with expiry -1), tokens are enabled
(DELEGATION_TOKEN_AUTH_DISABLED), the HMAC names a token (DELEGATION_TOKEN_NOT_FOUND), the
caller owns or may renew it (DELEGATION_TOKEN_OWNER_MISMATCH), and, unless the period is
negative, the token is not past its expiry (DELEGATION_TOKEN_EXPIRED); those later refusals
carry expiry 0, as Kafka's controller leaves it.  A removal answers the time it happened.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.tokens import ERROR_TIMESTAMP, delegation_tokens, refused_channel
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 40
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if refused_channel(ctx):
        return RESPONSE(error_code=errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                        expiry_timestamp_ms=ERROR_TIMESTAMP, throttle_time_ms=0)
    try:
        expiry = delegation_tokens(core).expire(ctx.principal, request.hmac,
                                                request.expiry_time_period_ms)
    except ApiException as exc:
        return RESPONSE(error_code=exc.error_code, expiry_timestamp_ms=0, throttle_time_ms=0)
    return RESPONSE(error_code=errors.NONE, expiry_timestamp_ms=expiry, throttle_time_ms=0)
