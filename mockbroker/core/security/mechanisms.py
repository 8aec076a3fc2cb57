"""The server side of the SASL mechanisms Kafka brokers offer: PLAIN (RFC 4616), SCRAM-SHA-256
and SCRAM-SHA-512 (RFC 5802, RFC 7677) and OAUTHBEARER (RFC 7628) with unsecured JWS tokens as
Kafka's default validator accepts them.

Each mechanism is one exchange: :meth:`Exchange.step` takes the client's next token and gives
the server's answer; :attr:`Exchange.done` says it has completed, and then
:attr:`Exchange.principal_name` and :attr:`Exchange.expires_ms` (when the credential stops being
valid; None when it does not expire) hold.  A SCRAM client that sends the extension
``tokenauth=true`` logs in with a delegation token (:mod:`.tokens`) and becomes its owner
(:attr:`Exchange.token_authenticated`).  A failure raises :class:`AuthenticationFailed` with
the message the client is shown — Kafka's own texts: where Kafka hides the reason (a SCRAM user
that does not exist, a wrong proof) the message is the generic one it sends.

:class:`Credentials` holds the users: their PLAIN passwords and their SCRAM credentials (salt,
iterations, stored and server keys), which the credentials APIs describe and alter.
"""

from __future__ import annotations

import abc
import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from typing import TYPE_CHECKING, Callable

from msgspec import Struct

from mockbroker.core.security import (OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512,
                                      AuthenticationFailed)
from wire.errors import (DUPLICATE_RESOURCE, RESOURCE_NOT_FOUND, UNACCEPTABLE_CREDENTIAL,
                         UNSUPPORTED_SASL_MECHANISM)

if TYPE_CHECKING:
    from mockbroker.core.security.tokens import DelegationTokens

#: SCRAM hash functions by mechanism, with the least iterations Kafka accepts for each
SCRAM_HASHES = {SCRAM_SHA_256: "sha256", SCRAM_SHA_512: "sha512"}
SCRAM_MIN_ITERATIONS = 4096
SCRAM_MAX_ITERATIONS = 16384
#: the iterations credentials made from a ``users`` password get (Kafka's tools' default)
SCRAM_DEFAULT_ITERATIONS = 4096


#: SCRAM mechanisms by the type code the credentials APIs use, and back
SCRAM_NAMES = {1: SCRAM_SHA_256, 2: SCRAM_SHA_512}
SCRAM_TYPES = {name: code for code, name in SCRAM_NAMES.items()}


def _check_scram_user(name: str, kind: int) -> tuple[int, str] | None:
    if not name:
        return UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if kind not in SCRAM_NAMES:
        return UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


# -- credentials --------------------------------------------------------------------------------

class ScramCredential(Struct, frozen=True):
    """What a broker keeps of a SCRAM password (RFC 5802 section 3): never the password."""

    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @classmethod
    def from_salted_password(cls, mechanism: str, salt: bytes, salted_password: bytes,
                             iterations: int) -> "ScramCredential":
        digest = SCRAM_HASHES[mechanism]
        client_key = hmac.digest(salted_password, b"Client Key", digest)
        return cls(salt, iterations, hashlib.new(digest, client_key).digest(),
                   hmac.digest(salted_password, b"Server Key", digest))

    @classmethod
    def from_password(cls, mechanism: str, password: str,
                      iterations: int = SCRAM_DEFAULT_ITERATIONS,
                      salt: bytes | None = None) -> "ScramCredential":
        salt = salt if salt is not None else secrets.token_bytes(32)
        salted = hashlib.pbkdf2_hmac(SCRAM_HASHES[mechanism], password.encode(), salt,
                                     iterations)
        return cls.from_salted_password(mechanism, salt, salted, iterations)


class Credentials:
    """The users a cluster knows: PLAIN passwords, and SCRAM credentials per mechanism."""

    def __init__(self, users: dict[str, str] | None = None):
        self.passwords: dict[str, str] = {}
        #: mechanism -> user -> credential
        self.scram: dict[str, dict[str, ScramCredential]] = {m: {} for m in SCRAM_HASHES}
        for name, password in (users or {}).items():
            self.add_user(name, password)

    def add_user(self, name: str, password: str) -> None:
        """A user who may log in with ``password`` over PLAIN and either SCRAM mechanism."""
        self.passwords[name] = password
        for mechanism in SCRAM_HASHES:
            self.scram[mechanism][name] = ScramCredential.from_password(mechanism, password)

    def check_password(self, name: str, password: str) -> bool:
        expected = self.passwords.get(name)
        return expected is not None and hmac.compare_digest(expected.encode(), password.encode())

    # -- the credentials APIs (DescribeUserScramCredentials, AlterUserScramCredentials) --------

    def describe_scram(self, names: list[str] | None) -> list[tuple[str, int, str | None,
                                                                    list[tuple[int, int]]]]:
        """(user, error code, message, [(mechanism type, iterations)]) for each user asked
        (every user with SCRAM credentials when ``names`` is empty), as Kafka describes them:
        a user named twice is DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND."""
        if not names:
            wanted = {user: False for by_user in self.scram.values() for user in by_user}
        else:
            wanted = {}
            for name in names:
                wanted[name] = name in wanted
        out = []
        for user, twice in wanted.items():
            if twice:
                out.append((user, DUPLICATE_RESOURCE, "Cannot describe SCRAM credentials for "
                            f"the same user twice in a single request: {user}", []))
                continue
            infos = [(SCRAM_TYPES[m], by_user[user].iterations)
                     for m, by_user in self.scram.items() if user in by_user]
            if infos:
                out.append((user, 0, None, infos))
            else:
                out.append((user, RESOURCE_NOT_FOUND, "Attempt to describe a user credential "
                            f"that does not exist: {user}", []))
        return out

    def alter_scram(self, deletions, upsertions) -> list[tuple[str, int, str | None]]:
        """Apply what is valid of a request's ``deletions`` (name, mechanism type) and
        ``upsertions`` (name, mechanism type, iterations, salt, salted password); (user, error
        code, message) per user, with Kafka's rules: one change per user and request."""
        errors: dict[str, tuple[int, str]] = {}
        deleting: dict[str, tuple] = {}
        upserting: dict[str, tuple] = {}
        twice = (DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same "
                                     "request")
        for deletion in deletions:
            name, kind = deletion[0], deletion[1]
            if name in errors:
                continue
            if deleting.pop(name, None) is not None:
                errors[name] = twice
                continue
            error = _check_scram_user(name, kind)
            if error is None and name not in self.scram[SCRAM_NAMES[kind]]:
                error = (RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does "
                                             "not exist")
            if error is None:
                deleting[name] = deletion
            else:
                errors[name] = error
        for upsertion in upsertions:
            name, kind, iterations = upsertion[0], upsertion[1], upsertion[2]
            if name in errors:
                continue
            if deleting.pop(name, None) is not None or upserting.pop(name, None) is not None:
                errors[name] = twice
                continue
            error = _check_scram_user(name, kind)
            if error is None and iterations < SCRAM_MIN_ITERATIONS:
                error = (UNACCEPTABLE_CREDENTIAL, "Too few iterations")
            elif error is None and iterations > SCRAM_MAX_ITERATIONS:
                error = (UNACCEPTABLE_CREDENTIAL, "Too many iterations")
            if error is None:
                upserting[name] = upsertion
            else:
                errors[name] = error
        results = []
        for name, kind in deleting.values():
            del self.scram[SCRAM_NAMES[kind]][name]
            results.append((name, 0, None))
        for name, kind, iterations, salt, salted in upserting.values():
            mechanism = SCRAM_NAMES[kind]
            self.scram[mechanism][name] = ScramCredential.from_salted_password(
                mechanism, bytes(salt), bytes(salted), iterations)
            results.append((name, 0, None))
        results += [(name, code, message) for name, (code, message) in errors.items()]
        return results

    def users(self) -> list[str]:
        names = set(self.passwords)
        for by_user in self.scram.values():
            names.update(by_user)
        return sorted(names)


# -- the exchanges ------------------------------------------------------------------------------

class Exchange(abc.ABC):
    """One authentication in progress."""

    mechanism: str = ""
    done: bool = False
    principal_name: str | None = None
    expires_ms: int | None = None
    #: the client logged in with a delegation token (SCRAM with ``tokenauth=true``)
    token_authenticated: bool = False

    @abc.abstractmethod
    def step(self, token: bytes) -> bytes:
        """The server's answer to the client's next token; :class:`AuthenticationFailed`
        when the exchange fails."""


class PlainExchange(Exchange):
    """RFC 4616: one message, ``[authzid] NUL authcid NUL passwd``."""

    mechanism = PLAIN

    def __init__(self, credentials: Credentials):
        self.credentials = credentials

    def step(self, token: bytes) -> bytes:
        if self.done:
            raise AuthenticationFailed("Authentication failed: the exchange has completed")
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise AuthenticationFailed(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}")
        authzid, username, password = parts
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        if not self.credentials.check_password(username, password):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationFailed("Authentication failed: Client requested an "
                                       "authorization id that is different from username")
        self.principal_name = username
        self.done = True
        return b""


#: printable characters but the comma (RFC 5802's ``printable``), as a nonce is made of
_NONCE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_EXTENSIONS = r"(?:,[A-Za-z]+=[\x01-\x2b\x2d-\x7f]*)*"
_CLIENT_FIRST = re.compile(
    rf"(?P<gs2>[ny]),(?:a=(?P<authzid>{_SASLNAME}))?,"
    rf"(?P<bare>n=(?P<name>{_SASLNAME}),r=(?P<nonce>{_NONCE})(?P<extensions>{_EXTENSIONS}))")
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<binding>[A-Za-z0-9+/=]+),r=(?P<nonce>{_NONCE}){_EXTENSIONS}),"
    r"p=(?P<proof>[A-Za-z0-9+/=]+)")


def _scram_name(saslname: str) -> str:
    return saslname.replace("=2C", ",").replace("=3D", "=")


def _token_auth(extensions: str) -> bool:
    """Whether the client-first message's extensions say ``tokenauth=true`` (its value read as
    Java's ``Boolean.parseBoolean`` reads it)."""
    for pair in extensions.split(",")[1:]:
        name, _, value = pair.partition("=")
        if name == "tokenauth":
            return value.lower() == "true"
    return False


class ScramExchange(Exchange):
    """RFC 5802: client-first, server-first, client-final, server-final.  With the extension
    ``tokenauth=true`` the user name is a delegation token's id, checked against ``tokens``'
    credentials, and the principal is the token's owner until the token's expiry."""

    def __init__(self, mechanism: str, credentials: Credentials,
                 tokens: DelegationTokens | None = None):
        self.mechanism = mechanism
        self.digest = SCRAM_HASHES[mechanism]
        self.credentials = credentials
        self.tokens = tokens
        self.generic_failure = ("Authentication failed during authentication due to invalid "
                                f"credentials with SASL mechanism {mechanism}")
        self._first_bare: str | None = None
        self._server_first: str | None = None
        self._credential: ScramCredential | None = None
        self._user: str | None = None
        #: a token login's expiry (None: a user's login, which does not expire)
        self._expires_ms: int | None = None

    def step(self, token: bytes) -> bytes:
        if self.done:
            raise AuthenticationFailed(self.generic_failure)
        message = token.decode("utf-8", "replace")
        if self._server_first is None:
            return self._first(message)
        return self._final(message)

    def _first(self, message: str) -> bytes:
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise AuthenticationFailed(self.generic_failure)
        user = _scram_name(match["name"])
        principal_name, expires_ms = user, None
        if _token_auth(match["extensions"]):
            found = self.tokens.scram_login(self.mechanism, user) \
                if self.tokens is not None else None
            if found is None:  # Kafka: "Invalid tokenId", shown as the generic failure
                raise AuthenticationFailed(self.generic_failure)
            credential, principal_name, expires_ms = found
        else:
            credential = self.credentials.scram[self.mechanism].get(user)
        if credential is None:
            raise AuthenticationFailed(self.generic_failure)
        authzid = match["authzid"]
        if authzid and _scram_name(authzid) != user:
            raise AuthenticationFailed("Authentication failed: Client requested an "
                                       "authorization id that is different from username")
        if credential.iterations < SCRAM_MIN_ITERATIONS:
            raise AuthenticationFailed(self.generic_failure)
        nonce = match["nonce"] + secrets.token_urlsafe(24).replace("-", "x")
        self._user, self._credential, self._first_bare = principal_name, credential, \
            match["bare"]
        self._expires_ms = expires_ms
        self._server_first = (f"r={nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        return self._server_first.encode()

    def _final(self, message: str) -> bytes:
        match = _CLIENT_FINAL.fullmatch(message)
        server_nonce = self._server_first.split(",", 1)[0][2:]
        if match is None or match["nonce"] != server_nonce:
            raise AuthenticationFailed(self.generic_failure)
        try:
            proof = base64.b64decode(match["proof"], validate=True)
        except binascii.Error:
            raise AuthenticationFailed(self.generic_failure) from None
        auth_message = ",".join((self._first_bare, self._server_first,
                                 match["without_proof"])).encode()
        credential = self._credential
        signature = hmac.digest(credential.stored_key, auth_message, self.digest)
        if len(proof) != len(signature):
            raise AuthenticationFailed(self.generic_failure)
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(self.digest, client_key).digest(),
                                   credential.stored_key):
            raise AuthenticationFailed(self.generic_failure)
        server_signature = hmac.digest(credential.server_key, auth_message, self.digest)
        self.principal_name = self._user
        if self._expires_ms is not None:
            self.expires_ms = self._expires_ms
            self.token_authenticated = True
        self.done = True
        return b"v=" + base64.b64encode(server_signature)


class Token(Struct, frozen=True):
    """A bearer token a validator accepted: whose it is and until when (epoch ms)."""

    principal_name: str
    expires_ms: int


class TokenRejected(Exception):
    """A validator's refusal; ``str(exc)`` is why (for the broker's log, not the client)."""


#: ``validate(token text, now_ms) -> Token``, raising :class:`TokenRejected`
TokenValidator = Callable[[str, int], Token]


def _b64url_json(part: str) -> dict:
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        value = json.loads(decoded)
    except (binascii.Error, ValueError):
        raise TokenRejected("malformed JSON") from None
    if not isinstance(value, dict):
        raise TokenRejected("malformed JSON")
    return value


def unsecured_jws(token: str, now_ms: int) -> Token:
    """Kafka's default validator: an unsigned JWS (``alg`` none, empty signature) whose
    ``sub`` names the principal and whose ``exp`` (seconds) is still ahead; ``iat``, when
    present, not in the future."""
    if ".." in token:
        raise TokenRejected("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenRejected("Unsecured JWS compact serializations must have 3 dot-separated "
                            "Base64URL-encoded values")
    header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
    if header.get("alg") != "none":
        raise TokenRejected("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise TokenRejected("Unsecured JWS must not contain a digital signature")
    exp = claims.get("exp")
    if exp is None:
        raise TokenRejected("No expiration time in JWT")
    if isinstance(exp, bool) or not isinstance(exp, (int, float)):
        raise TokenRejected("The exp claim had the incorrect type")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub.strip():
        raise TokenRejected("No principal name in JWT claim: sub")
    iat = claims.get("iat")
    if iat is not None and (isinstance(iat, bool) or not isinstance(iat, (int, float))):
        raise TokenRejected("The iat claim had the incorrect type")
    if now_ms >= 1000 * exp:
        raise TokenRejected(f"The indicated time ({now_ms} ms) was on or after the "
                            f"Expiration Time value ({exp} seconds)")
    if iat is not None and iat > exp:
        raise TokenRejected("The Issued At value must not be after the Expiration Time value")
    return Token(sub, int(1000 * exp))


def unsecured_token(principal: str, *, expires_ms: int, issued_ms: int | None = None,
                    scope: list[str] | None = None) -> str:
    """An unsigned JWS for ``principal`` that :func:`unsecured_jws` accepts until
    ``expires_ms`` — what a test hands its client as an OAUTHBEARER token."""
    def part(value: dict) -> str:
        raw = json.dumps(value, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    claims: dict = {"sub": principal, "exp": expires_ms / 1000}
    if issued_ms is not None:
        claims["iat"] = issued_ms / 1000
    if scope is not None:
        claims["scope"] = scope
    return f"{part({'alg': 'none'})}.{part(claims)}."


_KVSEP = "\x01"
_OAUTH_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_KVSEP}(?P<pairs>(?:[A-Za-z]+=[\x21-\x7e \t\r\n]*"
    rf"{_KVSEP})*){_KVSEP}")
_BEARER = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


class OAuthBearerExchange(Exchange):
    """RFC 7628 as Kafka's server runs it: the client's one message carries ``auth=Bearer
    TOKEN``; a token the validator refuses is answered with a JSON error, which the client
    acknowledges with a lone 0x01 before the failure is reported."""

    mechanism = OAUTHBEARER

    def __init__(self, validate: TokenValidator, now_ms: Callable[[], int]):
        self.validate = validate
        self.now_ms = now_ms
        self._error: str | None = None

    def step(self, token: bytes) -> bytes:
        if self.done:
            raise AuthenticationFailed("Authentication failed: the exchange has completed")
        if token == b"\x01" and self._error is not None:
            raise AuthenticationFailed(self._error)
        self._error = None
        match = _OAUTH_FIRST.fullmatch(token.decode("utf-8", "replace"))
        if match is None:
            raise AuthenticationFailed("Authentication failed during authentication due to "
                                       "invalid credentials with SASL mechanism OAUTHBEARER")
        pairs = dict(p.split("=", 1) for p in match["pairs"].split(_KVSEP) if p)
        bearer = _BEARER.fullmatch(pairs.get("auth", ""))
        if bearer is None or bearer["scheme"] != "Bearer":
            raise AuthenticationFailed("Authentication failed during authentication due to "
                                       "invalid credentials with SASL mechanism OAUTHBEARER")
        try:
            accepted = self.validate(bearer["token"], self.now_ms())
        except TokenRejected:
            self._error = '{"status":"invalid_token"}'
            return self._error.encode()
        authzid = match["authzid"]
        if authzid and authzid != accepted.principal_name:
            raise AuthenticationFailed(
                f"Authentication failed: Client requested an authorization id ({authzid}) that "
                f"is different from the token's principal name ({accepted.principal_name})")
        self.principal_name = accepted.principal_name
        self.expires_ms = accepted.expires_ms
        self.done = True
        return b""
