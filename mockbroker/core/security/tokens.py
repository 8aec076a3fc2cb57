"""Delegation tokens (KIP-48) as Kafka 4 serves them: created, renewed, expired and described
through the four token APIs, and logged in with over SCRAM.

A token is issued to an owner (the requester, or a principal the requester names) and may name
renewers.  Its id is a Kafka Uuid in text; its HMAC is HmacSHA512 over the id, keyed with
``delegation.token.secret.key`` — a cluster without that key has delegation tokens turned off
(DELEGATION_TOKEN_AUTH_DISABLED).  It carries three times: issued, expires (issue time plus
``delegation.token.expiry.time.ms``, moved by renewals) and its maximum (issue time plus
``delegation.token.max.lifetime.ms`` or the shorter lifetime asked for), which no renewal passes.

Kafka's broker and controller share the work of a token request; here :func:`refused_channel`
is the broker's first check (KafkaApis' ``allowTokenRequests``: no token APIs on PLAINTEXT, on
SSL without a client certificate, or on a connection that logged in with a token), the handlers
ask the authorizer what KafkaApis asks, and :class:`DelegationTokens` does what the
controller's DelegationTokenControlManager and the broker's DelegationTokenManager do, in their
order of checks.  A token past its expiry stays until the periodic check
(``delegation.token.expiry.check.interval.ms``) removes it: until then it is described, refused
for renewal (DELEGATION_TOKEN_EXPIRED) and still accepted by SCRAM, for a session that ends at
once, as on Kafka.

A SCRAM client logs in with a token by sending the extension ``tokenauth=true``, the token id as
its user name and the base64 HMAC as its password; the connection is then the token's owner
(``User:<owner name>``) until the token's expiry.  The SCRAM credentials of a token (4096
iterations, either mechanism) are derived at its first login.

The store belongs to the cluster's :class:`~mockbroker.core.security.config.Security`, beside
the SCRAM users; :func:`delegation_tokens` makes it with the first token request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from msgspec import Struct

from mockbroker.core.errors import ApiException
from mockbroker.core.security import ANONYMOUS, Principal
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.clock import Timer, Timers
    from mockbroker.core.observe.events import EventLog
    from mockbroker.core.security.mechanisms import ScramCredential

LONG_MAX = (1 << 63) - 1
#: the only principal type a renewer may have
USER_TYPE = "User"
#: what the broker answers in the timestamps of a token request it refuses itself
#: (DelegationTokenManager.ERROR_TIMESTAMP); the controller's refusals leave them 0
ERROR_TIMESTAMP = -1
#: the iterations of a token's SCRAM credentials (each mechanism's minimum, as Kafka derives
#: them)
TOKEN_SCRAM_ITERATIONS = 4096
#: Kafka Uuids that are never handed out: the zero id and the metadata topic's
_RESERVED_IDS = frozenset({bytes(16), bytes(15) + b"\x01"})


def _plus(now_ms: int, period_ms: int) -> int:
    """``now + period``, held at Long.MAX_VALUE as Kafka's controller holds it."""
    return LONG_MAX if now_ms > LONG_MAX - period_ms else now_ms + period_ms


def new_token_id() -> str:
    """A random Kafka Uuid as Kafka prints it (URL-safe base64, unpadded); like
    ``Uuid.randomUuid`` never a reserved one, nor one that starts with a dash."""
    while True:
        raw = uuid.uuid4().bytes
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if raw not in _RESERVED_IDS and not text.startswith("-"):
            return text


def token_hmac(secret_key: str, token_id: str) -> bytes:
    """HmacSHA512 of the token id, keyed with the secret key (both as UTF-8)."""
    return hmac.digest(secret_key.encode(), token_id.encode(), hashlib.sha512)


def refused_channel(ctx) -> bool:
    """Whether a token request on this connection is refused with
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: on PLAINTEXT, on SSL without a client certificate
    (the connection is User:ANONYMOUS), and on a connection authenticated with a token."""
    session = ctx.session
    if session is not None and getattr(session, "token_authenticated", False):
        return True
    listener = ctx.listener
    return listener == "PLAINTEXT" or (listener == "SSL" and ctx.principal == ANONYMOUS)


class DelegationToken(Struct):
    """One token: Kafka's TokenInformation and the token's HMAC."""

    token_id: str
    owner: Principal
    #: who asked for it (the owner, or a principal allowed to create tokens for the owner)
    requester: Principal
    renewers: tuple[Principal, ...]
    issue_timestamp_ms: int
    expiry_timestamp_ms: int
    max_timestamp_ms: int
    hmac: bytes

    @property
    def password(self) -> str:
        """The HMAC in base64: what a SCRAM client gives as its password."""
        return base64.b64encode(self.hmac).decode()

    def expired(self, now_ms: int) -> bool:
        return self.max_timestamp_ms < now_ms or self.expiry_timestamp_ms < now_ms

    def may_renew(self, principal: Principal) -> bool:
        """Renew and expire are for the owner and the renewers."""
        return principal == self.owner or principal in self.renewers

    def concerns(self, principal: Principal) -> bool:
        """Whether ``principal`` is its owner, requester or a renewer: those may always
        describe it, and a describe naming ``principal`` as an owner finds it."""
        return principal in (self.owner, self.requester) or principal in self.renewers


class DelegationTokens:
    """The cluster's delegation tokens, by id and by HMAC.

    ``settings`` is the cluster's settings dict (read at each call: the secret key, lifetimes
    and check interval); ``timers`` run the periodic expiry check on the broker clock while any
    token is kept; ``events`` hears of every token created, renewed, expired or removed."""

    def __init__(self, settings: dict[str, Any], timers: "Timers",
                 events: "EventLog | None" = None):
        self._settings = settings
        self._timers = timers
        self._events = events
        self._by_id: dict[str, DelegationToken] = {}
        self._by_hmac: dict[bytes, str] = {}
        #: (mechanism, token id) -> the token's SCRAM credential, derived at its first login
        self._scram: dict[tuple[str, str], ScramCredential] = {}
        self._check: Timer | None = None

    # -- reading -----------------------------------------------------------------------------

    @property
    def secret_key(self) -> str | None:
        """``delegation.token.secret.key``; None when unset or empty (tokens are off)."""
        return self._settings.get("delegation_token_secret_key") or None

    @property
    def enabled(self) -> bool:
        return self.secret_key is not None

    def __iter__(self) -> Iterator[DelegationToken]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, token_id: str) -> DelegationToken | None:
        return self._by_id.get(token_id)

    def by_hmac(self, hmac_bytes: bytes) -> DelegationToken | None:
        token_id = self._by_hmac.get(bytes(hmac_bytes))
        return None if token_id is None else self._by_id.get(token_id)

    def _now(self) -> int:
        return self._timers.clock.now_ms()

    # -- the controller's part -----------------------------------------------------------------

    def create(self, requester: Principal, owner: Principal,
               renewers: Iterable[Principal], max_lifetime_ms: int) -> DelegationToken:
        """A new token for ``owner``, asked for by ``requester``; ``max_lifetime_ms`` <= 0
        takes ``delegation.token.max.lifetime.ms``, a larger one is held to it."""
        secret = self.secret_key
        if secret is None:
            raise ApiException(errors.DELEGATION_TOKEN_AUTH_DISABLED)
        renewers = tuple(renewers)
        if any(r.type != USER_TYPE for r in renewers):
            raise ApiException(errors.INVALID_PRINCIPAL_TYPE)
        settings = self._settings
        now = self._now()
        lifetime = settings["delegation_token_max_lifetime_ms"]
        if max_lifetime_ms > 0:
            lifetime = min(lifetime, max_lifetime_ms)
        max_timestamp = _plus(now, lifetime)
        expiry = min(max_timestamp, _plus(now, settings["delegation_token_expiry_time_ms"]))
        token_id = new_token_id()
        while token_id in self._by_id:
            token_id = new_token_id()
        token = DelegationToken(token_id, owner, requester, renewers, now, expiry,
                                max_timestamp, token_hmac(secret, token_id))
        self._by_id[token_id] = token
        self._by_hmac[token.hmac] = token_id
        self._arm()
        self._emit("delegation_token_created", token, requester=str(requester),
                   renewers=[str(r) for r in renewers],
                   max_timestamp_ms=token.max_timestamp_ms)
        return token

    def renew(self, principal: Principal, hmac_bytes: bytes, renew_period_ms: int) -> int:
        """Move a token's expiry to now plus ``renew_period_ms`` (<= 0, or more than
        ``delegation.token.expiry.time.ms``: that setting), never past its maximum; returns
        the new expiry."""
        token = self._known(hmac_bytes)
        now = self._now()
        if token.expired(now):
            raise ApiException(errors.DELEGATION_TOKEN_EXPIRED)
        if not token.may_renew(principal):
            raise ApiException(errors.DELEGATION_TOKEN_OWNER_MISMATCH)
        period = self._settings["delegation_token_expiry_time_ms"]
        if renew_period_ms > 0:
            period = min(period, renew_period_ms)
        token.expiry_timestamp_ms = min(token.max_timestamp_ms, _plus(now, period))
        self._emit("delegation_token_renewed", token)
        return token.expiry_timestamp_ms

    def expire(self, principal: Principal, hmac_bytes: bytes, expiry_time_period_ms: int) -> int:
        """Bring a token's expiry forward to now plus ``expiry_time_period_ms`` (never past its
        maximum), or remove it at once for a negative period; returns the new expiry (now, for
        a removal)."""
        token = self._known(hmac_bytes)
        if not token.may_renew(principal):
            raise ApiException(errors.DELEGATION_TOKEN_OWNER_MISMATCH)
        now = self._now()
        if expiry_time_period_ms < 0:
            self._remove(token, "expired at once by ExpireDelegationToken")
            return now
        if token.expired(now):
            raise ApiException(errors.DELEGATION_TOKEN_EXPIRED)
        token.expiry_timestamp_ms = min(token.max_timestamp_ms,
                                        _plus(now, expiry_time_period_ms))
        self._emit("delegation_token_expired", token)
        return token.expiry_timestamp_ms

    def _known(self, hmac_bytes: bytes) -> DelegationToken:
        if self.secret_key is None:
            raise ApiException(errors.DELEGATION_TOKEN_AUTH_DISABLED)
        token = self.by_hmac(hmac_bytes)
        if token is None:
            raise ApiException(errors.DELEGATION_TOKEN_NOT_FOUND)
        return token

    # -- the broker's part ---------------------------------------------------------------------

    def describe(self, principal: Principal, owners: list[Principal] | None,
                 may_describe: Callable[[DelegationToken], bool]) -> list[DelegationToken]:
        """The tokens ``principal`` is shown, oldest first: of ``owners`` only (a token
        matches an owner that is its owner, requester or a renewer; None: every token), and of
        those the ones that concern ``principal`` or that ``may_describe`` allows (the
        authorizer's DESCRIBE on the token, or DESCRIBE_TOKENS on its owner)."""
        if self.secret_key is None:
            raise ApiException(errors.DELEGATION_TOKEN_AUTH_DISABLED)
        shown = []
        for token in self._by_id.values():
            if owners is not None and not any(token.concerns(o) for o in owners):
                continue
            if token.concerns(principal) or may_describe(token):
                shown.append(token)
        return shown

    def scram_login(self, mechanism: str,
                    token_id: str) -> tuple[ScramCredential, str, int] | None:
        """What a SCRAM login with ``tokenauth=true`` checks: the token's credential for the
        mechanism, its owner's name (who the connection becomes) and its expiry; None for a
        token that is not kept."""
        token = self._by_id.get(token_id)
        if token is None:
            return None
        credential = self._scram.get((mechanism, token_id))
        if credential is None:
            from mockbroker.core.security.mechanisms import ScramCredential

            credential = ScramCredential.from_password(mechanism, token.password,
                                                       TOKEN_SCRAM_ITERATIONS)
            self._scram[(mechanism, token_id)] = credential
        return credential, token.owner.name, token.expiry_timestamp_ms

    # -- the periodic expiry check --------------------------------------------------------------

    def check_expiry(self) -> list[str]:
        """Remove every token past its expiry or maximum; returns their ids."""
        now = self._now()
        gone = [token for token in self._by_id.values() if token.expired(now)]
        for token in gone:
            self._remove(token, "past its expiry at the periodic check")
        return [token.token_id for token in gone]

    def _arm(self) -> None:
        """The check runs every ``delegation.token.expiry.check.interval.ms`` while any token
        is kept (Kafka's controller runs it for as long as it lives)."""
        if self._check is None and self._by_id:
            interval = self._settings["delegation_token_expiry_check_interval_ms"]
            self._check = self._timers.call_later(interval, self._checked)

    def _checked(self) -> None:
        self._check = None
        if self._events is None:
            self.check_expiry()
        else:
            saved = self._events.swap_cause({"timer": "delegation_token_expiry_check"})
            try:
                self.check_expiry()
            finally:
                self._events.swap_cause(saved)
        self._arm()

    def _remove(self, token: DelegationToken, reason: str) -> None:
        del self._by_id[token.token_id]
        self._by_hmac.pop(token.hmac, None)
        for key in [k for k in self._scram if k[1] == token.token_id]:
            del self._scram[key]
        if not self._by_id and self._check is not None:
            self._check.cancel()
            self._check = None
        self._emit("delegation_token_removed", token, reason=reason)

    def _emit(self, kind: str, token: DelegationToken, **fields: Any) -> None:
        if self._events is not None:
            self._events.emit(kind, token_id=token.token_id, owner=str(token.owner),
                              expiry_timestamp_ms=token.expiry_timestamp_ms, **fields)


def delegation_tokens(core) -> DelegationTokens:
    """The cluster's delegation tokens (kept by its :class:`~mockbroker.core.security.config.
    Security`, beside the SCRAM users), made with the first token request."""
    security = core.security
    store = security.delegation_tokens
    if store is None:
        store = security.delegation_tokens = DelegationTokens(core.settings, core.timers,
                                                              core.events)
    return store
