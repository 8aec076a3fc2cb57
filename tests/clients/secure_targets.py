"""The two targets of the security tests: mockbroker and Apache Kafka, both secured alike.

``secure_target`` runs a test once on each (its id starts ``[mockbroker-...]`` or
``[kafka-...]``, as ``target``'s do).  Either side serves the same listeners, by name:

==================  ==========================================================================
``SASL_PLAINTEXT``  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and unsecured OAUTHBEARER
``SASL_SSL``        the same over TLS
``SSL``             TLS, a client certificate requested (without one: ``User:ANONYMOUS``)
``MTLS``            TLS, a client certificate required
``SCRAM_SHA_256``   SASL_PLAINTEXT offering SCRAM-SHA-256 alone, sessions of ``REAUTH_MS``
``PLAINTEXT``       no security: ``User:ANONYMOUS``
==================  ==========================================================================

with the users of :data:`USERS` (a PLAIN password and both SCRAM credentials each), the
StandardAuthorizer with :data:`SUPER_USERS` and no access where no ACL allows it, the
certificate subject as the principal of a TLS client (the default mapping rules), and
delegation tokens signed with :data:`TOKEN_SECRET`.

Kafka is one :class:`~tests.secure_kafka.SecureKafka` node per test worker, started on first
use.  mockbroker cannot give one cluster two TLS listeners that ask different things of a
client, nor one listener fewer mechanisms than another, so its side is a cluster with the
``SASL_PLAINTEXT``, ``SASL_SSL``, ``SSL`` and ``PLAINTEXT`` listeners (:attr:`SecureTarget.mock`)
and, started when a test first asks for their address, a cluster for ``MTLS`` and one for
``SCRAM_SHA_256``.  ACLs made through :meth:`SecureTarget.create_acls` reach every one of them;
topics and users are made on the first (a client on ``MTLS`` makes its own topics).  All of
mockbroker's clusters present one broker certificate, signed by one CA made for the worker.

One target serves every test of a worker, so a test keeps to names of its own: topics from
:meth:`~tests.clients.targets.Target.create_topic`, ACLs on those names or on a prefix from
:meth:`SecureTarget.unique`, users from :meth:`SecureTarget.new_user`.  Only the super user
(:data:`ADMIN`) may do anything without an ACL; :meth:`SecureTarget.grant` gives a principal
everything on the topics, groups and transactional ids under a prefix.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
                                   AdminClient, ResourcePatternType, ResourceType,
                                   ScramCredentialInfo, ScramMechanism,
                                   UserScramCredentialUpsertion)

from mockbroker import MockCluster
from mockbroker.io.kafka.tls import CertificateAuthority, ClientCertificate
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.targets import MOCK_SETTINGS, SETTINGS, TARGETS, Target
from tests.secure_kafka import LISTENERS, REAUTH_MS, SCRAM_ITERATIONS, SecureKafka

#: name -> password: each has a PLAIN password and SCRAM-SHA-256/512 credentials
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret",
         "carol": "carol-secret"}
#: the super user: the tests' administrator (and Kafka's own login to itself)
ADMIN = "admin"
SUPER_USERS = [f"User:{ADMIN}"]
TOKEN_SECRET = "cluster-token-secret"
#: mockbroker's listeners on its first cluster (the others each get one of their own)
_MOCK_LISTENERS = ("SASL_PLAINTEXT", "SASL_SSL", "SSL", "PLAINTEXT")
_MOCK_SECURITY = {"users": USERS, "super_users": SUPER_USERS, "authorizer": True,
                  "delegation_token_secret_key": TOKEN_SECRET, **MOCK_SETTINGS}


def super_user_config(bootstrap: str) -> dict:
    """A confluent-kafka client of the super user on a SASL_PLAINTEXT listener."""
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": ADMIN, "sasl.password": USERS[ADMIN],
            "socket.timeout.ms": 5000, "logger": RDKAFKA_LOG}


class _MockSide:
    """mockbroker's clusters for one worker: the first, and the MTLS and SCRAM_SHA_256 ones
    once asked for; each with a super-user Admin on a SASL_PLAINTEXT listener."""

    def __init__(self, stack: contextlib.ExitStack):
        self._stack = stack
        directory = tempfile.mkdtemp(prefix="secure-mock-tls-")
        stack.callback(shutil.rmtree, directory, ignore_errors=True)
        self.ca = CertificateAuthority.create(directory, name="secure-mockbroker test CA")
        server = self.ca.issue_server(["127.0.0.1"], name="broker")
        self._tls = {"ssl_certificate_location": server.cert_location,
                     "ssl_key_location": server.key_location,
                     "ssl_ca_location": self.ca.ca_location}
        self.main = self._start(listeners=list(_MOCK_LISTENERS), ssl_client_auth="requested")
        self._extra: dict[str, MockCluster] = {}
        self._admins = [AdminClient(super_user_config(self.main.bootstrap_for(
            "SASL_PLAINTEXT")))]
        self.acls: list[AclBinding] = []  # every ACL made, for clusters started later

    def _start(self, **settings) -> MockCluster:
        return self._stack.enter_context(MockCluster(**self._tls, **_MOCK_SECURITY,
                                                     **settings))

    def bootstrap_for(self, listener: str) -> str:
        if listener in _MOCK_LISTENERS:
            return self.main.bootstrap_for(listener)
        if listener not in self._extra:
            if listener == "MTLS":  # with a SASL_PLAINTEXT listener for the Admin
                cluster = self._start(listeners=["SSL", "SASL_PLAINTEXT"],
                                      ssl_client_auth="required")
                admin = AdminClient(super_user_config(cluster.bootstrap_for("SASL_PLAINTEXT")))
                if self.acls:
                    _created(admin.create_acls(self.acls))
                self._admins.append(admin)
            elif listener == "SCRAM_SHA_256":
                cluster = self._start(security_protocol="SASL_PLAINTEXT",
                                      sasl_mechanisms=["SCRAM-SHA-256"],
                                      connections_max_reauth_ms=REAUTH_MS)
            else:
                raise KeyError(f"no listener {listener!r}: one of {', '.join(LISTENERS)}")
            self._extra[listener] = cluster
        return self._extra[listener].bootstrap_for(LISTENERS[listener])

    def create_acls(self, bindings: list[AclBinding]) -> None:
        self.acls += bindings
        for admin in self._admins:
            _created(admin.create_acls(bindings))


def _created(futures: dict) -> None:
    for future in futures.values():
        future.result(TIMEOUT_S)


class SecureTarget(Target):
    """What a security test may rely on of either target (see the module's docstring);
    ``mock`` is mockbroker's first cluster, or None on Kafka."""

    def __init__(self, name: str, *, kafka: SecureKafka | None = None,
                 mock_side: _MockSide | None = None):
        # not Target.__init__: its Admin has no credentials
        self._kafka, self._mock_side = kafka, mock_side
        self.name = name
        self.bootstrap_servers = self.bootstrap_for("SASL_PLAINTEXT")
        self.mock = mock_side.main if mock_side else None
        self._admin = AdminClient(super_user_config(self.bootstrap_servers))
        self.users = dict(USERS)

    def bootstrap_for(self, listener: str) -> str:
        """The address of a listener, by name (``SASL_SSL``, ``MTLS``, ...)."""
        side = self._kafka or self._mock_side
        return side.bootstrap_for(listener)

    @property
    def ssl_ca_location(self) -> str:
        """The CA every TLS listener's certificate is signed by, PEM."""
        return (self._kafka or self._mock_side).ca.ca_location

    def client_certificate(self, subject: str) -> ClientCertificate:
        """A client certificate for ``subject`` (RFC 4514) that the TLS listeners trust: its
        ``cert_location``, ``key_location`` (PEM) and ``pkcs12_location`` (PKCS#12, password
        ``mockbroker``).  Its holder is ``User:`` and the subject as Java writes it."""
        return (self._kafka or self._mock_side).ca.issue_client(subject)

    def super_user_config(self, listener: str = "SASL_PLAINTEXT") -> dict:
        """A confluent-kafka client configuration of the super user (PLAIN over
        SASL_PLAINTEXT)."""
        return super_user_config(self.bootstrap_for(listener))

    def create_acls(self, bindings: list[AclBinding]) -> None:
        """Make ACLs as the super user, on every cluster of the target."""
        if self._mock_side is not None:
            self._mock_side.create_acls(bindings)
            return
        _created(self._admin.create_acls(bindings))

        def in_force() -> bool:
            # Kafka's controller answers once the ACLs are in the metadata log; the broker's
            # authorizer (which DescribeAcls asks) has them a moment later
            return all(self._admin.describe_acls(AclBindingFilter(
                b.restype, b.name, b.resource_pattern_type, b.principal, b.host,
                b.operation, b.permission_type)).result(TIMEOUT_S) for b in bindings)
        wait_for(in_force, "the broker to apply the new ACLs")

    def grant(self, principal: str, prefix: str) -> None:
        """Allow ``principal`` every operation on the topics, groups and transactional ids
        whose names start with ``prefix``."""
        self.create_acls([AclBinding(kind, prefix, ResourcePatternType.PREFIXED, principal,
                                     "*", AclOperation.ALL, AclPermissionType.ALLOW)
                          for kind in (ResourceType.TOPIC, ResourceType.GROUP,
                                       ResourceType.TRANSACTIONAL_ID)])

    def new_user(self, base: str = "user") -> tuple[str, str]:
        """A user of the test's own (SCRAM-SHA-256 and SCRAM-SHA-512, made through the Admin
        API), once its login works: its name and password."""
        name = self.unique(base)
        password = f"{name}-secret"
        for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
            # one request each: Kafka refuses a user altered twice in one (DUPLICATE_RESOURCE)
            _created(self._admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
                name, ScramCredentialInfo(mechanism, SCRAM_ITERATIONS), password.encode())]))

        def logs_in() -> bool:  # Kafka's broker learns of credentials from the metadata log
            client = AdminClient({**self.super_user_config(), "sasl.mechanism": "SCRAM-SHA-512",
                                  "sasl.username": name, "sasl.password": password})
            try:
                client.list_topics(timeout=5)
                return True
            except ck.KafkaException:
                return False
        wait_for(logs_in, f"user {name} to log in")
        return name, password


@pytest.fixture(scope="session")
def secure_kafka():
    """One secured Apache Kafka node for the worker's whole run, started on first use."""
    kafka = SecureKafka(SETTINGS, users=USERS, super_users=SUPER_USERS,
                        token_secret=TOKEN_SECRET).start()
    yield kafka
    kafka.stop()


@pytest.fixture(scope="session")
def secure_mock():
    """mockbroker's secured clusters for the worker's whole run, started on first use."""
    with contextlib.ExitStack() as stack:
        yield _MockSide(stack)


@pytest.fixture(params=TARGETS)
def secure_target(request) -> SecureTarget:
    """Each security test runs once on mockbroker and once on a secured Apache Kafka."""
    request.node.user_properties.append(("target", request.param))
    if request.param == "kafka":
        return SecureTarget("kafka", kafka=request.getfixturevalue("secure_kafka"))
    return SecureTarget("mockbroker", mock_side=request.getfixturevalue("secure_mock"))
