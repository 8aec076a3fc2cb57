"""Apache Kafka with its security on: the Kafka side of the security tests.

:class:`SecureKafka` is a :class:`~tests.real_kafka.RealKafka` node whose clients must say who
they are.  Its listeners, by name (each on a free loopback port):

* ``SASL_PLAINTEXT`` and ``SASL_SSL``: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and unsecured
  OAUTHBEARER (Kafka's default validator: an unsigned JWS whose ``sub`` names the principal).
  PLAIN users live in each listener's JAAS configuration; SCRAM users are written into the
  metadata log when the storage is formatted (``--add-scram``), 4096 iterations, as
  mockbroker derives them.  The broker talks to itself (the controller, transaction markers)
  on ``SASL_PLAINTEXT`` as the first super user, over PLAIN.
* ``SSL``: TLS, a client certificate requested but not required (a client without one is
  ``User:ANONYMOUS``, one with one is named by its subject).
* ``MTLS``: TLS with a client certificate required.
* ``SCRAM_SHA_256``: SASL_PLAINTEXT offering SCRAM-SHA-256 alone.
* ``PLAINTEXT``: no security at all, every client ``User:ANONYMOUS``, which is no super user:
  it may do only what ACLs grant it.

The broker's certificate (EC P-256, valid for 127.0.0.1 and localhost) is signed by a CA made
at start with mockbroker's own :class:`~mockbroker.io.kafka.tls.CertificateAuthority`; Kafka
reads both as PEM (KIP-651), so no keytool is needed.  :meth:`SecureKafka.client_certificate`
issues client certificates from the same CA.  Principals come from the certificate subject
under the default ``ssl.principal.mapping.rules`` (as mockbroker names them), authorization is
the StandardAuthorizer with :attr:`super_users` and no access where no ACL allows it, and
delegation tokens are on (``delegation.token.secret.key``).

With no unauthenticated listener that may do anything, :class:`RealKafka`'s readiness probe
(FindCoordinator as ``User:ANONYMOUS``) would be refused; here it logs in over PLAIN first.
"""

from __future__ import annotations

import socket
from pathlib import Path

import wire
from mockbroker.io.kafka.tls import CertificateAuthority, ClientCertificate
from tests.real_kafka import RealKafka

#: the listeners :meth:`SecureKafka.properties` opens -> their security protocol
LISTENERS = {"SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL", "SSL": "SSL",
             "MTLS": "SSL", "SCRAM_SHA_256": "SASL_PLAINTEXT", "PLAINTEXT": "PLAINTEXT"}
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
#: the server-side login module of each mechanism (OAUTHBEARER's names the broker itself)
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}
SCRAM_ITERATIONS = 4096
#: how long a session on the ``SCRAM_SHA_256`` listener lasts before its client must log in
#: again on the same connection (``connections.max.reauth.ms``, KIP-368)
REAUTH_MS = 3000


class SecureKafka(RealKafka):
    PORTS = len(LISTENERS) + 1  # and the controller's

    def __init__(self, settings: dict[str, str] | None = None, *, users: dict[str, str],
                 super_users: list[str], token_secret: str, heap: str = "320m", **kwargs):
        """``users``: name -> password, for PLAIN and both SCRAM mechanisms; ``super_users``:
        principals (``User:admin``), the first of which the broker logs in as."""
        super().__init__(settings, heap=heap, **kwargs)
        self.users = dict(users)
        self.super_users = list(super_users)
        self.token_secret = token_secret
        self.ports: dict[str, int] = {}
        self.ca: CertificateAuthority | None = None

    @property
    def broker_user(self) -> str:
        return self.super_users[0].split(":", 1)[1]

    def bootstrap_for(self, listener: str) -> str:
        """The address of one listener (a name of :data:`LISTENERS`)."""
        return f"127.0.0.1:{self.ports[listener]}"

    @property
    def ssl_ca_location(self) -> str:
        """The CA's certificate, PEM: what a client trusts."""
        return self.ca.ca_location

    def client_certificate(self, subject: str) -> ClientCertificate:
        """A client certificate for ``subject`` (RFC 4514) signed by the broker's CA, as PEM
        files and a PKCS#12 keystore (password ``mockbroker``)."""
        return self.ca.issue_client(subject)

    # -- RealKafka's hooks ---------------------------------------------------------------------

    def properties(self, ports: list[int]) -> dict[str, str]:
        *listener_ports, controller = ports
        self.ports = dict(zip(LISTENERS, listener_ports))
        self.port = self.ports["SASL_PLAINTEXT"]  # where the readiness probes ask
        tls = self.dir / "tls"
        self.ca = CertificateAuthority.create(tls, name="secure-kafka test CA")
        server = self.ca.issue_server(["127.0.0.1"], name="broker")
        keystore = tls / "broker-keystore.pem"  # the key, then the chain up to the CA
        keystore.write_text(Path(server.key_location).read_text() +
                            Path(server.cert_location).read_text() +
                            Path(self.ca.ca_location).read_text())
        keystore.chmod(0o600)
        admin, password = self.broker_user, self.users[self.broker_user]
        plain_users = " ".join(f'user_{name}="{secret}"' for name, secret in self.users.items())
        props = {
            "process.roles": "broker,controller", "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller}",
            "listeners": ",".join([*(f"{name}://127.0.0.1:{port}"
                                     for name, port in self.ports.items()),
                                   f"CONTROLLER://127.0.0.1:{controller}"]),
            "advertised.listeners": ",".join(f"{name}://127.0.0.1:{port}"
                                             for name, port in self.ports.items()),
            "listener.security.protocol.map": ",".join(
                [*(f"{name}:{protocol}" for name, protocol in LISTENERS.items()),
                 "CONTROLLER:SASL_PLAINTEXT"]),
            "inter.broker.listener.name": "SASL_PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.scram_sha_256.sasl.enabled.mechanisms": "SCRAM-SHA-256",
            "listener.name.scram_sha_256.scram-sha-256.connections.max.reauth.ms": str(REAUTH_MS),
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": self.ca.ca_location,
            "listener.name.ssl.ssl.client.auth": "requested",
            "listener.name.mtls.ssl.client.auth": "required",
            "ssl.principal.mapping.rules": "DEFAULT",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": ";".join(self.super_users),
            "allow.everyone.if.no.acl.found": "false",
            "delegation.token.secret.key": self.token_secret,
            "log.dirs": str(self.dir / "data"), **self.settings}
        for listener, mechanisms in (("controller", ["PLAIN"]),
                                     ("sasl_plaintext", MECHANISMS), ("sasl_ssl", MECHANISMS),
                                     ("scram_sha_256", ["SCRAM-SHA-256"])):
            for mechanism in mechanisms:
                if mechanism == "PLAIN":
                    options = f'username="{admin}" password="{password}" {plain_users}'
                elif mechanism == "OAUTHBEARER":
                    options = f'unsecuredLoginStringClaim_sub="{admin}"'
                else:
                    options = ""
                props[f"listener.name.{listener}.{mechanism.lower()}.sasl.jaas.config"] = \
                    f"{_LOGIN_MODULES[mechanism]} required {options};".replace("  ", " ")
        return props

    def format_arguments(self) -> list[str]:
        """Both SCRAM credentials of every user."""
        return [argument for name, password in self.users.items()
                for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512")
                for argument in ("--add-scram", f"{mechanism}=[name={name},password={password},"
                                                f"iterations={SCRAM_ITERATIONS}]")]

    def _coordinator_ready(self, key_type: int, key: str) -> bool:
        """RealKafka's probe, asked on ``SASL_PLAINTEXT`` after logging in over PLAIN as the
        broker's own super user (no unauthenticated client may find a coordinator here)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as conn, \
                    conn.makefile("rb") as answers:
                def ask(api_key: int, version: int, body) -> object:
                    conn.sendall(wire.encode_request(api_key, version, 1, "secure-kafka-probe",
                                                     body))
                    size = int.from_bytes(answers.read(4), "big")
                    frame = answers.read(size)
                    if len(frame) < size:
                        raise ConnectionError("closed mid-answer")
                    return wire.decode_response(api_key, version, frame)[1]

                user = self.broker_user
                if ask(17, 1, wire.request_class(17)(mechanism="PLAIN")).error_code:
                    return False
                login = f"\0{user}\0{self.users[user]}".encode()
                if ask(36, 2, wire.request_class(36)(auth_bytes=login)).error_code:
                    return False
                found = ask(10, 4, wire.request_class(10)(key_type=key_type,
                                                          coordinator_keys=[key]))
        except OSError:
            return False
        return found.coordinators[0].error_code == 0
