"""A cluster's security settings, checked once: the listeners' protocols, the SASL mechanisms
enabled, the users, the super users and the authorizer.

``MockCluster(security_protocol=..., sasl_mechanisms=..., users=..., super_users=...,
authorizer=...)`` and the matching flags and variables all come here; a bad value is a
``ValueError`` naming the setting, before anything starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from msgspec import Struct, field

from mockbroker.core.clock import Clock
from mockbroker.core.security import MECHANISMS, Principal

if TYPE_CHECKING:  # the mechanisms load when a cluster has users or a client authenticates
    from mockbroker.core.security.mechanisms import Credentials, TokenValidator
    from mockbroker.core.security.tokens import DelegationTokens

#: Kafka's security protocols, each the name of a listener that uses it
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: Kafka's ``ssl.client.auth`` values
CLIENT_AUTH = ("none", "requested", "required")


def uses_sasl(protocol: str) -> bool:
    return protocol.startswith("SASL_")


def uses_tls(protocol: str) -> bool:
    return protocol.endswith("SSL")


class SecuritySettings(Struct, frozen=True):
    """What a user sets, as given (checked by :func:`check_security`)."""

    listeners: tuple[str, ...] = ("PLAINTEXT",)
    sasl_mechanisms: tuple[str, ...] = MECHANISMS
    users: dict[str, str] = field(default_factory=dict)
    super_users: tuple[str, ...] = ()
    authorizer: bool = False
    allow_everyone_if_no_acl_found: bool = False
    connections_max_reauth_ms: int = 0
    ssl_client_auth: str = "none"
    token_validator: TokenValidator | None = None


#: the names ``MockCluster`` takes for these settings
SECURITY_NAMES = ("security_protocol", "listeners", "sasl_mechanisms", "users", "super_users",
                  "authorizer", "allow_everyone_if_no_acl_found", "connections_max_reauth_ms",
                  "ssl_client_auth", "token_validator")


def _names(value: Any, setting: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.replace(";", ",").split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{setting}: expected a list of names, got {value!r}")
    return tuple(v.strip() for v in value)


def check_security(values: dict[str, Any]) -> SecuritySettings:
    """The security settings among ``values`` (``MockCluster``'s names), checked."""
    protocol = values.get("security_protocol")
    listeners = values.get("listeners")
    if protocol is not None and listeners is not None:
        raise ValueError("give security_protocol (one listener) or listeners (several), "
                         "not both")
    chosen = _names(listeners if listeners is not None else [protocol or "PLAINTEXT"],
                    "listeners" if listeners is not None else "security_protocol")
    if not chosen:
        raise ValueError("listeners: at least one is needed")
    for name in chosen:
        if name.upper() not in PROTOCOLS:
            raise ValueError(f"{'listeners' if listeners is not None else 'security_protocol'}:"
                             f" {name!r} is not one of {', '.join(PROTOCOLS)}")
    chosen = tuple(name.upper() for name in chosen)
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"listeners: each protocol once, got {list(chosen)}")
    mechanisms = _names(values.get("sasl_mechanisms", MECHANISMS), "sasl_mechanisms")
    mechanisms = tuple(m.upper() for m in mechanisms)
    for m in mechanisms:
        if m not in MECHANISMS:
            raise ValueError(f"sasl_mechanisms: {m!r} is not one of {', '.join(MECHANISMS)}")
    if any(uses_sasl(p) for p in chosen) and not mechanisms:
        raise ValueError("sasl_mechanisms: a SASL listener needs at least one mechanism")
    users = values.get("users") or {}
    if isinstance(users, (list, tuple)):
        users = dict(_user_pair(u) for u in users)
    if not isinstance(users, dict) or not all(
            isinstance(k, str) and k and isinstance(v, str) for k, v in users.items()):
        raise ValueError(f"users: expected {{name: password}} or NAME:PASSWORD entries, "
                         f"got {users!r}")
    super_users = _names(values.get("super_users") or (), "super_users")
    super_users = tuple(s if ":" in s else f"User:{s}" for s in super_users)
    for s in super_users:
        Principal.parse(s)
    flags = {}
    for name in ("authorizer", "allow_everyone_if_no_acl_found"):
        flag = values.get(name, False)
        if isinstance(flag, str) and flag.lower() in ("true", "false", "1", "0", "yes", "no"):
            flag = flag.lower() in ("true", "1", "yes")
        if not isinstance(flag, bool):
            raise ValueError(f"{name}: expected true or false, got {flag!r}")
        flags[name] = flag
    reauth = values.get("connections_max_reauth_ms", 0)
    try:
        reauth = int(reauth)
    except (TypeError, ValueError):
        raise ValueError(f"connections_max_reauth_ms: expected an integer, got {reauth!r}") \
            from None
    if reauth < 0 or isinstance(values.get("connections_max_reauth_ms"), bool):
        raise ValueError(f"connections_max_reauth_ms: must be 0 or more, got {reauth!r}")
    client_auth = values.get("ssl_client_auth", "none")
    if client_auth not in CLIENT_AUTH:
        raise ValueError(f"ssl_client_auth: {client_auth!r} is not one of "
                         f"{', '.join(CLIENT_AUTH)}")
    validator = values.get("token_validator")
    if validator is not None and not callable(validator):
        raise ValueError("token_validator: expected a function (token, now_ms) -> Token")
    return SecuritySettings(chosen, mechanisms, dict(users), super_users,
                            flags["authorizer"], flags["allow_everyone_if_no_acl_found"], reauth,
                            client_auth, validator)


def _user_pair(entry: Any) -> tuple[str, str]:
    if not isinstance(entry, str) or ":" not in entry or entry.startswith(":"):
        raise ValueError(f"users: expected NAME:PASSWORD, got {entry!r}")
    name, _, password = entry.partition(":")
    return name, password


class Security:
    """The cluster's security state: credentials, mechanisms, and the authorizer (None when
    none is configured: everything is allowed and the ACL APIs say so)."""

    def __init__(self, settings: SecuritySettings | None = None, clock: Clock | None = None):
        settings = settings or SecuritySettings()
        self.settings = settings
        self.clock = clock or Clock()
        self.mechanisms: tuple[str, ...] = settings.sasl_mechanisms
        self._credentials: Credentials | None = None
        if settings.users:  # their SCRAM credentials are derived now, not at the first login
            self._credentials = self.credentials
        self.super_users = tuple(Principal.parse(s) for s in settings.super_users)
        self.connections_max_reauth_ms = settings.connections_max_reauth_ms
        #: the delegation tokens, made by the first token request
        #: (:func:`~mockbroker.core.security.tokens.delegation_tokens`); SCRAM logins with
        #: ``tokenauth=true`` look them up here
        self.delegation_tokens: DelegationTokens | None = None
        self.authorizer = None
        if settings.authorizer:
            from mockbroker.core.security.acls import Authorizer
            self.authorizer = Authorizer(
                super_users=list(self.super_users),
                allow_everyone_if_no_acl_found=settings.allow_everyone_if_no_acl_found)

    @property
    def credentials(self) -> Credentials:
        """The users' PLAIN passwords and SCRAM credentials."""
        if self._credentials is None:
            from mockbroker.core.security.mechanisms import Credentials

            self._credentials = Credentials(self.settings.users)
        return self._credentials

    @property
    def token_validator(self) -> TokenValidator:
        """What checks an OAUTHBEARER token: the user's, or unsecured JWS as Kafka's default."""
        if self.settings.token_validator is not None:
            return self.settings.token_validator
        from mockbroker.core.security.mechanisms import unsecured_jws

        return unsecured_jws

    def users(self) -> Iterable[str]:
        return self.credentials.users()
