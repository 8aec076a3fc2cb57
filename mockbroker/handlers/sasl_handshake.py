"""SaslHandshake (key 17) outside of authentication.

On a SASL listener the connection's session answers the handshake (see
:mod:`mockbroker.core.security.sasl`); one that reaches the handlers came on a listener without
SASL, or after authentication from a client that does not re-authenticate.  Kafka answers it
ILLEGAL_SASL_STATE, listing no mechanisms, and keeps the connection.
"""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 17
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    return RESPONSE(error_code=errors.ILLEGAL_SASL_STATE, mechanisms=[])
