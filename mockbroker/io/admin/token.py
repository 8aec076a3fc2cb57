"""The admin API's token: which bind addresses need one, what a token may hold, and the token
an admin server requires (:mod:`mockbroker.io.admin.http` enforces it).

Standard library only, and cheap to import: the CLI checks ``--admin-token`` and ``--token``
(and ``MockCluster`` its ``admin_token``) with it, without loading aiohttp.
"""

from __future__ import annotations

import re
from typing import Any


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine only: 127.0.0.0/8,
    ::1 (or an IPv4-mapped loopback address) and the name localhost.  Every other name or
    address, the wildcards ``0.0.0.0``, ``::`` and ``""`` included, is not."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name in ("localhost", "127.0.0.1", "::1") or name.endswith(".localhost"):
        return True  # the usual answers, without loading ipaddress for them
    import ipaddress  # here: checking a token (the CLI, at every start) needs no address

    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


#: what a Bearer token may hold (RFC 6750's b64token)
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def check_admin_token(token: Any) -> str | None:
    """``token`` if it can be sent as ``Authorization: Bearer TOKEN`` (None stays None);
    ValueError otherwise, without echoing it."""
    if token is None:
        return None
    if not isinstance(token, str):
        raise ValueError(f"admin_token: expected a string, got {type(token).__name__}")
    if not _TOKEN.fullmatch(token):
        raise ValueError("admin_token: a token is letters, digits and -._~+/ (then = "
                         "padding), as a Bearer token is written (RFC 6750); got "
                         + ("an empty one" if not token else f"{len(token)} characters "
                            "with others among them"))
    return token


def admin_token_for(host: str, token: str | None) -> str | None:
    """The token an admin server on ``host`` requires: the one given, else a new one off
    loopback, else none."""
    if token is not None:
        return check_admin_token(token)
    if is_loopback(host):
        return None
    import secrets  # only here: it loads OpenSSL's libcrypto (hmac), which nothing else needs

    return secrets.token_urlsafe(32)
