"""Who a connection is and what it may do: principals, SASL per connection, and the
authorizer's ACLs.

* :class:`Principal` — ``User:alice`` as Kafka writes it; a connection that has not
  authenticated (PLAINTEXT, or SSL without a client certificate) is ``User:ANONYMOUS``.
* :mod:`.sasl` — the server side of SaslHandshake/SaslAuthenticate on a SASL listener, one
  :class:`~.sasl.SaslSession` per connection, and the mechanisms (PLAIN, SCRAM-SHA-256/512,
  OAUTHBEARER).
* :mod:`.acls` — the ACL store and the authorizer, as Kafka's ``StandardAuthorizer`` decides.

:class:`Security` holds the cluster's part of it: the users and their credentials, the
mechanisms enabled, the super users, and whether an authorizer is configured.

It may import the core's machinery, the config values and the request log (a SASL exchange is
answered, and logged, before the front door sees a request); never the coordinators, the data
path or the admin API's views.
"""

from __future__ import annotations

from msgspec import Struct

#: the SASL mechanisms (their exchanges are in :mod:`~mockbroker.core.security.mechanisms`,
#: loaded when a client first authenticates)
PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
OAUTHBEARER = "OAUTHBEARER"
#: every mechanism this broker can serve, in the order a listing shows them
MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER)


class AuthenticationFailed(Exception):
    """A SASL exchange failed; ``str(exc)`` is the message the client is shown."""


class Principal(Struct, frozen=True):
    """A Kafka principal: ``type:name`` (``User:alice``)."""

    type: str
    name: str

    def __str__(self) -> str:
        return f"{self.type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> "Principal":
        """``User:alice`` → Principal("User", "alice"); ValueError without a type."""
        kind, sep, name = text.partition(":")
        if not sep or not kind or not name:
            raise ValueError(f"a principal is TYPE:NAME (User:alice), got {text!r}")
        return cls(kind, name)


#: the principal of a connection that has not authenticated
ANONYMOUS = Principal("User", "ANONYMOUS")
