"""SaslAuthenticate (key 36) outside of authentication: on a listener without SASL, or once a
connection has authenticated.  Kafka answers ILLEGAL_SASL_STATE with the message below and
keeps the connection."""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 36
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    return RESPONSE(error_code=errors.ILLEGAL_SASL_STATE,
                    error_message="SaslAuthenticate request received after successful "
                                  "authentication",
                    auth_bytes=b"", session_lifetime_ms=0)
