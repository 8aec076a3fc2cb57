"""SASL on a connection, as Kafka's server authenticator runs it (KIP-43, KIP-152, KIP-368).

A connection to a SASL listener starts unauthenticated.  Until it has authenticated, only these
requests are served, in this order, and anything else closes the connection:

1. ApiVersions, at most once and only as the first request;
2. SaslHandshake naming a mechanism: an enabled one is accepted (the answer lists the enabled
   ones); any other is answered UNSUPPORTED_SASL_MECHANISM and the connection closes;
3. the mechanism's tokens: in SaslAuthenticate requests after a v1 handshake, or bare
   size-prefixed tokens after a v0 one.  A request of another API here is answered with
   ILLEGAL_SASL_STATE and the connection closes; a failed exchange is answered with
   SASL_AUTHENTICATION_FAILED and the message Kafka gives, and the connection closes.

Once authenticated the connection is served as any other, as ``User:NAME``.  Its session lasts
as long as ``connections.max.reauth.ms`` and the credential allow (an OAUTHBEARER token's
expiry; a delegation token's, for a SCRAM login with ``tokenauth=true``); a client that said it
can re-authenticate (SaslAuthenticate v1 or later) does so by
sending a SaslHandshake again, with the same mechanism and ending as the same principal.  A
request on a session that has expired closes the connection.  SaslHandshake and
SaslAuthenticate outside of all this reach their handlers, which answer ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

import enum
import struct
from typing import TYPE_CHECKING

import wire
from mockbroker.core.deferred import Close, Deferred, later
from mockbroker.core.observe.requests import first_error
from mockbroker.core.security import OAUTHBEARER, PLAIN, AuthenticationFailed, Principal
from wire import errors
from wire.apis import API_NAMES

if TYPE_CHECKING:
    from mockbroker.core.dispatch import Connection, Core
    from mockbroker.core.security.config import Security
    from mockbroker.core.security.mechanisms import Exchange

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
_API_KEY = struct.Struct(">h")
_SIZE = struct.Struct(">i")


class State(enum.Enum):
    FIRST = "first request"            # ApiVersions or SaslHandshake
    HANDSHAKE = "handshake"            # after ApiVersions: SaslHandshake only
    AUTHENTICATE = "authenticate"      # the mechanism's tokens
    BAD_MECHANISM = "bad mechanism"    # a re-authentication asked for another mechanism
    COMPLETE = "complete"
    FAILED = "failed"


class SaslSession:
    """One connection's authentication on a SASL listener."""

    def __init__(self, security: "Security"):
        self.security = security
        self.state = State.FIRST
        self.exchange: Exchange | None = None
        #: tokens travel bare (after a v0 handshake), not in SaslAuthenticate requests
        self.bare_tokens = False
        self.mechanism: str | None = None
        self.principal: Principal | None = None
        #: when the session ends (epoch ms); None: never
        self.expires_ms: int | None = None
        #: the client sent SaslAuthenticate v1 or later, so it re-authenticates (KIP-368)
        self.can_reauthenticate = False
        #: it logged in with a delegation token (which then may not manage tokens)
        self.token_authenticated = False
        #: (mechanism, principal) of the session being re-authenticated
        self._previous: tuple[str, Principal] | None = None
        self._bad_mechanism = ""

    @property
    def authenticated(self) -> bool:
        return self.state is State.COMPLETE

    def expired(self, now_ms: int) -> bool:
        return self.expires_ms is not None and now_ms >= self.expires_ms

    # -- the gate --------------------------------------------------------------------------------

    def takes(self, frame: bytes) -> bool:
        """Whether ``frame`` is this session's to answer rather than the handlers': every
        frame before authentication completes, and a re-authentication's SaslHandshake."""
        if self.state is not State.COMPLETE:
            return True
        if len(frame) >= 2 and _API_KEY.unpack_from(frame)[0] == SASL_HANDSHAKE \
                and self.can_reauthenticate:
            self._previous = (self.mechanism, self.principal)
            self.state = State.HANDSHAKE
            return True
        return False

    def receive(self, frame: bytes, core: "Core", conn: "Connection") -> Deferred:
        """The answer to one frame while authenticating: encoded response bytes, or a
        :class:`Close` (carrying a last answer when Kafka sends one before closing).  ApiVersions
        is answered by the core as usual; SaslHandshake and SaslAuthenticate go into the request
        log, and control rules on SaslAuthenticate apply (see :meth:`_ruled`)."""
        now_ms = core.clock.now_ms()
        if self.state is State.AUTHENTICATE and self.bare_tokens:
            return self._bare_token(frame, now_ms)
        if self.state is State.BAD_MECHANISM:
            return self._fail(self._bad_mechanism)
        try:
            request = wire.decode_request(frame)
        except wire.UnsupportedVersionError as exc:
            if exc.header.api_key == API_VERSIONS and self.state is State.FIRST:
                # answered UNSUPPORTED_VERSION with the versions served (KIP-511), and the
                # client may ask again, as Kafka's authenticator allows
                return core.unsupported(exc.header, conn, str(exc))
            return self._fail(f"invalid request during SASL {self._doing()} ({exc})")
        except (wire.UnknownApiKeyError, wire.DecodeError) as exc:
            return self._fail(f"invalid request during SASL {self._doing()} ({exc})")
        api_key, header = request.api_key, request.header
        if api_key == API_VERSIONS and self.state is State.FIRST:
            self.state = State.HANDSHAKE
            return core.handle(request, core.context(header, conn)).map(
                lambda response: _encode(header, response))
        logged = core.requests.record(now_ms, conn.broker_id, api_key, header.api_version,
                                      header.correlation_id, header.client_id)
        logged.principal, logged.listener = str(conn.who), conn.listener
        outcome = self._answer(request, core, conn, now_ms)
        outcome.add_callback(lambda value: self._logged(logged, api_key, header, value))
        return outcome

    def _answer(self, request: wire.Request, core: "Core", conn: "Connection",
                now_ms: int) -> Deferred:
        api_key = request.api_key
        if self.state in (State.FIRST, State.HANDSHAKE):
            if api_key != SASL_HANDSHAKE:
                return self._fail(f"Unexpected Kafka request of type {_name(api_key)} during "
                                  f"SASL handshake.")
            return self._handshake(request)
        if api_key != SASL_AUTHENTICATE:
            return self._fail(f"Unexpected Kafka request of type {_name(api_key)} during SASL "
                              f"authentication.", _illegal_state(request))
        return self._authenticate(request, now_ms, core, conn)

    def _logged(self, logged, api_key: int, header, value) -> None:
        logged.mechanism = self.mechanism
        if isinstance(value, Close):
            logged.outcome = "disconnected"
            if value.answer is not None:
                try:
                    _, body = wire.decode_response(api_key, header.api_version, value.answer[4:])
                    logged.error_code = first_error(body)
                except wire.DecodeError:
                    pass
            return
        logged.outcome = "answered"
        try:
            _, body = wire.decode_response(api_key, header.api_version, value[4:])
            logged.error_code = first_error(body)
        except wire.DecodeError:
            pass

    # -- steps -----------------------------------------------------------------------------------

    def _handshake(self, request: wire.Request) -> Deferred:
        header = request.header
        enabled = list(self.security.mechanisms)
        mechanism = request.body.mechanism
        response = wire.response_class(SASL_HANDSHAKE)
        if mechanism not in enabled:
            answer = response(error_code=errors.UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled)
            return self._fail(f"Unsupported SASL mechanism {mechanism}", (header, answer))
        self.bare_tokens = header.api_version == 0
        if self._previous is not None and mechanism != self._previous[0]:
            self._bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not "
                                   f"supported for re-authentication of mechanism "
                                   f"'{self._previous[0]}'")
            self.state = State.BAD_MECHANISM
        else:
            self.mechanism = mechanism
            self.exchange = self._exchange(mechanism)
            self.state = State.AUTHENTICATE
        return _answer(header, response(error_code=errors.NONE, mechanisms=enabled))

    def _exchange(self, mechanism: str) -> Exchange:
        # the exchanges (hashlib, hmac, json) load with the first client that authenticates
        from mockbroker.core.security.mechanisms import (SCRAM_HASHES, OAuthBearerExchange,
                                                         PlainExchange, ScramExchange)

        security = self.security
        if mechanism == PLAIN:
            return PlainExchange(security.credentials)
        if mechanism in SCRAM_HASHES:
            return ScramExchange(mechanism, security.credentials, security.delegation_tokens)
        if mechanism == OAUTHBEARER:
            return OAuthBearerExchange(security.token_validator, security.clock.now_ms)
        raise ValueError(f"no exchange for {mechanism}")  # enabled mechanisms are checked

    def _authenticate(self, request: wire.Request, now_ms: int, core: "Core",
                      conn: "Connection") -> Deferred:
        header = request.header
        response = wire.response_class(SASL_AUTHENTICATE)
        if header.api_version > 0:
            self.can_reauthenticate = True
        try:
            token = self._step(bytes(request.body.auth_bytes or b""))
            refused, delay = self._ruled(request, core, conn) if self.exchange.done \
                else (None, 0)
        except AuthenticationFailed as exc:
            answer = response(error_code=errors.SASL_AUTHENTICATION_FAILED,
                              error_message=str(exc), auth_bytes=b"", session_lifetime_ms=0)
            return self._fail(str(exc), (header, answer))
        if refused is None:
            lifetime = self._complete(now_ms) if self.exchange.done else 0
            refused = _answer(header, response(error_code=errors.NONE, error_message=None,
                                               auth_bytes=token, session_lifetime_ms=lifetime))
        return later(core.timers, refused, delay) if delay else refused

    def _ruled(self, request: wire.Request, core: "Core",
               conn: "Connection") -> tuple[Deferred | None, int]:
        """What control rules on SaslAuthenticate make of a login that has just succeeded:
        (the answer instead, or None to let it through; how long the answer waits).  A rule
        refuses it with its error (``error``), cuts it off (``disconnect``) or delays it."""
        if not core.control:
            return None, 0
        who = f"User:{self.exchange.principal_name}"
        delay, rule, _ = core.control.pick(SASL_AUTHENTICATE, conn.broker_id,
                                           request.header.client_id, request.body, who)
        if rule is None:
            return None, delay
        delay += rule.delay_ms
        if rule.action == "disconnect":
            self.state = State.FAILED
            return Deferred.resolved(Close(f"rule {rule.id} disconnects")), delay
        if rule.action == "error":
            message = f"Authentication failed: rule {rule.id} refuses {who}"
            answer = wire.response_class(SASL_AUTHENTICATE)(
                error_code=rule.error, error_message=message, auth_bytes=b"",
                session_lifetime_ms=0)
            return self._fail(message, (request.header, answer)), delay
        return None, delay

    def _bare_token(self, frame: bytes, now_ms: int) -> Deferred:
        try:
            token = self._step(frame)
        except AuthenticationFailed as exc:
            return self._fail(str(exc))
        if self.exchange.done:
            self._complete(now_ms)
        return Deferred.resolved(_SIZE.pack(len(token)) + token)

    def _step(self, token: bytes) -> bytes:
        exchange = self.exchange
        answer = exchange.step(token)
        if exchange.done and self._previous is not None:
            previous = self._previous[1]
            now = Principal("User", exchange.principal_name)
            if now != previous:
                raise AuthenticationFailed(
                    f"Cannot change principals during re-authentication from "
                    f"{previous.type}.{previous.name}: {now.type}.{now.name}")
        return answer

    def _complete(self, now_ms: int) -> int:
        """Mark the session authenticated; returns its lifetime in ms (0: unbounded)."""
        exchange = self.exchange
        self.principal = Principal("User", exchange.principal_name)
        self.token_authenticated = exchange.token_authenticated
        self.state = State.COMPLETE
        self._previous = None
        limit = self.security.connections_max_reauth_ms
        lifetimes = [limit] if limit > 0 else []
        if exchange.expires_ms is not None:
            lifetimes.append(exchange.expires_ms - now_ms)
        if not lifetimes:
            self.expires_ms = None
            return 0
        lifetime = max(0, min(lifetimes))
        self.expires_ms = now_ms + lifetime
        return lifetime

    def _fail(self, reason: str, last: tuple | None = None) -> Deferred:
        self.state = State.FAILED
        answer = _encode(*last) if last is not None else None
        if isinstance(answer, Close):
            return Deferred.resolved(answer)
        return Deferred.resolved(Close(f"SASL {self._doing()} failed: {reason}", answer))

    def _doing(self) -> str:
        return "re-authentication" if self._previous is not None else "authentication"


def _name(api_key: int) -> str:
    return API_NAMES.get(api_key, str(api_key))


def _illegal_state(request: wire.Request) -> tuple | None:
    # seldom needed: loaded with the first such request
    from mockbroker.core.control.error_responses import CannotExpress, error_response

    try:
        return request.header, error_response(request.api_key, request.api_version,
                                              request.body, errors.ILLEGAL_SASL_STATE)
    except CannotExpress:
        return None


def _encode(header, response) -> bytes | Close:
    try:
        return wire.encode_response(header.api_key, header.api_version, header.correlation_id,
                                    response)
    except Exception as exc:  # a bug of ours: the connection closes, the broker goes on
        return Close(f"failed to encode the {_name(header.api_key)} response: {exc!r}")


def _answer(header, response) -> Deferred:
    return Deferred.resolved(_encode(header, response))
