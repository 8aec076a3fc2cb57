"""The Python clients, and the franz-go and kafkajs clients of the conformance tests, configured
as production clients are: SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
and OAUTHBEARER, and SSL (the Python clients with and without a client certificate).  Each
produces keyed records with headers, consumes them in a group and commits; a wrong password or a
refused certificate is reported by the client at once.  Then ACLs as producers, consumers and
admins meet them, principals named by client certificates, and SCRAM credentials managed
through the Admin API.

Each runs on mockbroker and on a secured Apache Kafka (``secure_target``,
:mod:`tests.clients.secure_targets`), both with an authorizer: a client may use the topics and
groups an ACL grants it, so each test grants its client what it needs on names of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import subprocess
import time
import uuid

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                   NewTopic, ResourcePatternType, ResourceType)
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider
from aiokafka.helpers import create_ssl_context
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaTimeoutError
from kafka.net.sasl.oauth import AbstractTokenProvider as KpTokenProvider

from mockbroker import MockCluster
from mockbroker.core.security.mechanisms import unsecured_token
from tests.clients.helpers import (GO_CLIENT, NODE_CLIENT, RDKAFKA_LOG, LoggedLines, go_client,
                                   node_client, wait_for)
from tests.clients.secure_targets import ADMIN, LISTENERS, USERS, SecureTarget
from tests.secure_kafka import REAUTH_MS, SCRAM_ITERATIONS

SASL = [(protocol, mechanism) for protocol in ("SASL_PLAINTEXT", "SASL_SSL")
        for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")]
RECORDS = [(f"k{i}".encode(), f"v{i}".encode(), [("seq", str(i).encode())]) for i in range(3)]
ALICE = "User:alice"
ANONYMOUS = "User:ANONYMOUS"


def topic_for(target: SecureTarget, principal: str = ALICE,
              partitions: int = 1) -> tuple[str, str]:
    """A topic of the test's own and a group name beside it, ``principal`` allowed
    everything on both."""
    prefix = target.unique("secure")
    target.grant(principal, prefix)
    return target.create_topic(prefix, partitions), f"{prefix}-group"


def token(principal: str = "alice", lifetime_ms: int = 3_600_000) -> str:
    return unsecured_token(principal, expires_ms=int(time.time() * 1000) + lifetime_ms)


# -- confluent-kafka (librdkafka) -------------------------------------------------------------

def ck_config(target: SecureTarget, listener: str, mechanism: str | None = None,
              password: str = USERS["alice"], user: str = "alice") -> dict:
    protocol = LISTENERS[listener]
    conf = {"bootstrap.servers": target.bootstrap_for(listener),
            "security.protocol": protocol, "logger": RDKAFKA_LOG}
    if protocol.endswith("SSL"):
        conf["ssl.ca.location"] = target.ssl_ca_location
    if mechanism == "OAUTHBEARER":
        conf.update({"sasl.mechanism": mechanism, "enable.sasl.oauthbearer.unsecure.jwt": True,
                     "sasl.oauthbearer.config": f"principal={user}"})
    elif mechanism is not None:
        conf.update({"sasl.mechanism": mechanism, "sasl.username": user,
                     "sasl.password": password})
    return conf


def ck_round_trip(conf: dict, topic: str, group: str) -> tuple[list, int]:
    """Produce RECORDS, consume them in a group and commit: (what was read, committed)."""
    producer = ck.Producer(conf)
    failures = []
    for key, value, headers in RECORDS:
        producer.produce(topic, value, key, headers=headers,
                         on_delivery=lambda err, _: err and failures.append(err))
    assert producer.flush(30) == 0 and not failures, failures
    consumer = ck.Consumer(dict(conf, **{"group.id": group, "auto.offset.reset": "earliest",
                                         "enable.auto.commit": False}))
    try:
        consumer.subscribe([topic])
        read = []

        def drained():
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                read.append((msg.key(), msg.value(), msg.headers()))
            return len(read) == len(RECORDS)
        wait_for(drained, "the records")
        consumer.commit(asynchronous=False)
        [committed] = consumer.committed([ck.TopicPartition(topic, 0)], timeout=10)
        return read, committed.offset
    finally:
        consumer.close()


@pytest.mark.parametrize("protocol, mechanism", SASL)
def test_confluent_kafka_over_sasl(secure_target, protocol, mechanism):
    read, committed = ck_round_trip(ck_config(secure_target, protocol, mechanism),
                                    *topic_for(secure_target))
    assert read == [(k, v, h) for k, v, h in RECORDS]
    assert committed == 3


def test_confluent_kafka_over_ssl_without_a_client_certificate(secure_target):
    """Without a certificate the client is User:ANONYMOUS, which ACLs may name too."""
    read, committed = ck_round_trip(ck_config(secure_target, "SSL"),
                                    *topic_for(secure_target, ANONYMOUS))
    assert [v for _, v, _ in read] == [b"v0", b"v1", b"v2"] and committed == 3


def test_confluent_kafka_with_a_client_certificate(secure_target):
    certificate = secure_target.client_certificate("CN=orders-app,OU=payments")
    conf = dict(ck_config(secure_target, "SSL"), **{
        "ssl.certificate.location": certificate.cert_location,
        "ssl.key.location": certificate.key_location})
    read, committed = ck_round_trip(
        conf, *topic_for(secure_target, "User:CN=orders-app,OU=payments"))
    assert [v for _, v, _ in read] == [b"v0", b"v1", b"v2"] and committed == 3


def ck_first_error(conf: dict) -> ck.KafkaError:
    """The error librdkafka reports first for a producer that cannot get in."""
    errors: list[ck.KafkaError] = []
    producer = ck.Producer(dict(conf, error_cb=errors.append))
    producer.produce("anything", b"v")

    def reported():
        producer.poll(0.2)
        return errors
    wait_for(reported, "the client to report why it cannot connect")
    producer.purge()
    return errors[0]


@pytest.mark.parametrize("mechanism, message", [
    ("PLAIN", "Authentication failed: Invalid username or password"),
    ("SCRAM-SHA-512", "Authentication failed during authentication due to invalid credentials "
                      "with SASL mechanism SCRAM-SHA-512"),
])
def test_confluent_kafka_reports_a_wrong_password_at_once(secure_target, mechanism, message):
    error = ck_first_error(ck_config(secure_target, "SASL_SSL", mechanism, password="wrong"))
    assert error.code() == ck.KafkaError._AUTHENTICATION
    assert message in error.str()


def test_confluent_kafka_reports_an_expired_token_at_once(secure_target):
    expired = unsecured_token("alice", expires_ms=int(time.time() * 1000) - 60_000)
    conf = {"bootstrap.servers": secure_target.bootstrap_for("SASL_PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "logger": RDKAFKA_LOG,
            # the client believes the token good for an hour: the broker decides
            "oauth_cb": lambda _: (expired, time.time() + 3600)}
    error = ck_first_error(conf)
    assert error.code() == ck.KafkaError._AUTHENTICATION
    assert '{"status":"invalid_token"}' in error.str()


def test_confluent_kafka_reports_a_mechanism_the_broker_does_not_offer(secure_target):
    error = ck_first_error(ck_config(secure_target, "SCRAM_SHA_256", "PLAIN"))
    assert error.code() == ck.KafkaError._AUTHENTICATION
    assert "PLAIN" in error.str() and "SCRAM-SHA-256" in error.str()


def test_confluent_kafka_logs_in_again_on_its_connection_before_its_session_ends(
        secure_target):
    """On a listener whose sessions last ``REAUTH_MS`` (``connections.max.reauth.ms``), the
    broker tells the client that lifetime as it logs in, and librdkafka logs in again on the
    same connection before it ends (KIP-368), then goes on producing and consuming."""
    seen = LoggedLines()
    conf = ck_config(secure_target, "SCRAM_SHA_256", "SCRAM-SHA-256", user=ADMIN,
                     password=USERS[ADMIN])
    topic = secure_target.unique("reauth")
    admin = AdminClient(conf)
    admin.create_topics([NewTopic(topic, 1, 1)], operation_timeout=30)[topic].result(timeout=30)
    producer = ck.Producer(dict(conf, debug="security,broker", logger=seen.logger))
    producer.produce(topic, b"before", b"k")
    assert producer.flush(30) == 0

    def logged_in_again() -> bool:
        producer.poll(0.1)
        again = [i for i, line in enumerate(seen.lines) if "Received REAUTH op" in line]
        return bool(again) and any(f"Authenticated as {ADMIN} using SCRAM-SHA-256" in line
                                   for line in seen.lines[again[0]:])
    wait_for(logged_in_again, "a re-authentication on the producer's connection")
    assert f"Received session lifetime {REAUTH_MS} ms from broker" in "\n".join(seen.lines)
    producer.produce(topic, b"after", b"k")
    assert producer.flush(30) == 0
    consumer = ck.Consumer(dict(conf, **{"group.id": f"{topic}-group",
                                         "auto.offset.reset": "earliest"}))
    try:
        consumer.subscribe([topic])
        read: list[bytes] = []

        def both() -> bool:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                read.append(msg.value())
            return len(read) == 2
        wait_for(both, "the records produced before and after the re-authentication")
        assert read == [b"before", b"after"]
    finally:
        consumer.close()


def test_a_client_without_a_certificate_is_refused_when_one_is_required(secure_target):
    error = ck_first_error(ck_config(secure_target, "MTLS"))
    assert error.code() in (ck.KafkaError._TRANSPORT, ck.KafkaError._SSL,
                            ck.KafkaError._ALL_BROKERS_DOWN), error


def test_a_sasl_client_on_a_plaintext_listener_is_told_sasl_is_not_enabled(secure_target):
    conf = {"bootstrap.servers": secure_target.bootstrap_for("PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": "alice", "sasl.password": USERS["alice"], "logger": RDKAFKA_LOG}
    error = ck_first_error(conf)
    # the handshake is answered ILLEGAL_SASL_STATE, which librdkafka reports, not retried on
    assert error.code() == ck.KafkaError._AUTHENTICATION, error


# -- kafka-python ---------------------------------------------------------------------------

class KpToken(KpTokenProvider):
    def token(self):
        return token()


def kp_config(target: SecureTarget, protocol: str, mechanism: str | None = None,
              password: str = USERS["alice"]) -> dict:
    conf = {"bootstrap_servers": target.bootstrap_for(protocol), "security_protocol": protocol}
    if protocol.endswith("SSL"):
        conf["ssl_cafile"] = target.ssl_ca_location
    if mechanism == "OAUTHBEARER":
        conf.update(sasl_mechanism=mechanism, sasl_oauth_token_provider=KpToken())
    elif mechanism is not None:
        conf.update(sasl_mechanism=mechanism, sasl_plain_username="alice",
                    sasl_plain_password=password)
    return conf


@pytest.mark.parametrize("protocol, mechanism", SASL)
def test_kafka_python_over_sasl(secure_target, protocol, mechanism):
    conf, (topic, group) = kp_config(secure_target, protocol, mechanism), \
        topic_for(secure_target)
    producer = KafkaProducer(**conf)
    try:
        for key, value, headers in RECORDS:
            producer.send(topic, value, key, headers=headers).get(30)
    finally:
        producer.close(5)
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, **conf)
    try:
        read = []
        wait_for(lambda: read.extend(
            (r.key, r.value, r.headers) for batch in consumer.poll(500).values()
            for r in batch) or len(read) == len(RECORDS), "the records")
        consumer.commit()
        assert read == [(k, v, h) for k, v, h in RECORDS]
        assert consumer.committed(TopicPartition(topic, 0)) == 3
    finally:
        consumer.close()


@pytest.mark.mockbroker_only("beyond-kafka")
def test_kafka_python_logs_a_wrong_password_and_gives_up(caplog):
    """kafka-python 3 drops an answer it reads in the same go as the end of the stream, and
    Kafka writes its SASL_AUTHENTICATION_FAILED answer and closes at once (after its
    ``connection.failed.authentication.delay.ms``): against Kafka the client logs only
    "socket disconnected" most times.  mockbroker lingers after a last answer until the client
    closes (``BrokerListener._linger``), so the client logs why."""
    caplog.set_level(logging.ERROR, logger="kafka")
    with MockCluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster, \
            pytest.raises(KafkaTimeoutError):
        KafkaProducer(bootstrap_servers=cluster.bootstrap_servers,
                      security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                      sasl_plain_username="alice", sasl_plain_password="wrong",
                      bootstrap_timeout_ms=3000)
    assert "Authentication failed: Invalid username or password" in caplog.text


# -- aiokafka -------------------------------------------------------------------------------

class AioToken(AbstractTokenProvider):
    async def token(self):
        return token()


def aio_config(target: SecureTarget, protocol: str, mechanism: str) -> dict:
    conf = {"bootstrap_servers": target.bootstrap_for(protocol), "security_protocol": protocol,
            "sasl_mechanism": mechanism}
    if protocol.endswith("SSL"):
        conf["ssl_context"] = create_ssl_context(cafile=target.ssl_ca_location)
    if mechanism == "OAUTHBEARER":
        conf["sasl_oauth_token_provider"] = AioToken()
    else:
        conf.update(sasl_plain_username="alice", sasl_plain_password=USERS["alice"])
    return conf


@pytest.mark.parametrize("protocol, mechanism", SASL)
def test_aiokafka_over_sasl(secure_target, protocol, mechanism):
    conf, (topic, group) = aio_config(secure_target, protocol, mechanism), \
        topic_for(secure_target)

    async def run():
        producer = AIOKafkaProducer(**conf)
        await producer.start()
        try:
            for key, value, headers in RECORDS:
                await producer.send_and_wait(topic, value, key=key, headers=headers)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                                    enable_auto_commit=False, **conf)
        await consumer.start()
        try:
            read = []
            while len(read) < len(RECORDS):
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 30)
                read += [(r.key, r.value, list(r.headers)) for rs in batches.values()
                         for r in rs]
            await consumer.commit()
            from aiokafka import TopicPartition as AioTopicPartition
            return read, await consumer.committed(AioTopicPartition(topic, 0))
        finally:
            await consumer.stop()

    read, committed = asyncio.run(run())
    assert read == [(k, v, h) for k, v, h in RECORDS]
    assert committed == 3


def test_ssl_context_trusting_only_the_generated_ca_verifies_the_broker(secure_target):
    """The CA file is all a client needs: the broker's certificate names 127.0.0.1."""
    host, port = secure_target.bootstrap_for("SSL").split(",")[0].rsplit(":", 1)
    context = ssl.create_default_context(cafile=secure_target.ssl_ca_location)
    import socket
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            assert tls.version() in ("TLSv1.2", "TLSv1.3")


# -- franz-go and kafkajs ----------------------------------------------------------------------

SECURED = SASL + [("SSL", None)]


def client_security(target: SecureTarget, protocol: str, mechanism: str | None = None,
                    password: str = USERS["alice"]) -> dict[str, str]:
    """The ``KAFKA_*`` settings the franz-go and kafkajs clients connect with."""
    settings = {"KAFKA_SECURITY_PROTOCOL": protocol}
    if protocol.endswith("SSL"):
        settings["KAFKA_SSL_CA_LOCATION"] = target.ssl_ca_location
    if mechanism == "OAUTHBEARER":
        settings.update(KAFKA_SASL_MECHANISM=mechanism, KAFKA_SASL_TOKEN=token())
    elif mechanism is not None:
        settings.update(KAFKA_SASL_MECHANISM=mechanism, KAFKA_SASL_USERNAME="alice",
                        KAFKA_SASL_PASSWORD=password)
    return settings


def committed_by(target: SecureTarget, group: str) -> dict[int, int]:
    listed = target.admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])
    return {tp.partition: tp.offset for tp in listed[group].result(30).topic_partitions}


def refused(command: list[str], security: dict[str, str]) -> str:
    """What a client that must fail printed on stderr."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **security})
    assert done.returncode != 0, done.stdout
    return done.stderr


@pytest.mark.parametrize("protocol, mechanism", SECURED)
def test_franz_go_over_sasl_and_ssl(secure_target, protocol, mechanism):
    """The conformance tests' twelve records, written and read back, then read in a classic
    group that commits them, every connection on the secured listener."""
    from tests.clients.test_conformance import PARTITIONS, RECORDS, _expected, _go_rows
    topic, group = topic_for(secure_target, ALICE if mechanism else ANONYMOUS, PARTITIONS)
    security = client_security(secure_target, protocol, mechanism)
    bootstrap = secure_target.bootstrap_for(protocol)
    go_client("produce", bootstrap, topic, security=security)
    read = _go_rows(go_client("read", bootstrap, topic, str(len(RECORDS)), security=security))
    assert sorted(read, key=lambda r: (r[0], r[1])) == _expected()
    values = go_client("group", bootstrap, topic, group, str(len(RECORDS)), security=security)
    assert sorted(values.split()) == sorted(value.decode() for _, _, value, _ in RECORDS)
    assert committed_by(secure_target, group) == {0: 4, 1: 4, 2: 4}


def test_franz_go_reports_a_wrong_password_at_once(secure_target):
    security = client_security(secure_target, "SASL_PLAINTEXT", "SCRAM-SHA-256",
                               password="wrong")
    err = refused([str(GO_CLIENT), "admin", secure_target.bootstrap_for("SASL_PLAINTEXT"),
                   f"t-{uuid.uuid4().hex[:8]}"], security)
    assert "SASL_AUTHENTICATION_FAILED" in err
    assert "Authentication failed during authentication due to invalid credentials with " \
           "SASL mechanism SCRAM-SHA-256" in err


@pytest.mark.parametrize("protocol, mechanism", SECURED)
def test_kafkajs_over_sasl_and_ssl(secure_target, protocol, mechanism):
    """The conformance tests' twelve records, written, then read in a group that commits each,
    every connection on the secured listener."""
    from tests.clients.test_conformance import PARTITIONS, RECORDS, _expected, _node_rows
    topic, group = topic_for(secure_target, ALICE if mechanism else ANONYMOUS, PARTITIONS)
    security = client_security(secure_target, protocol, mechanism)
    bootstrap = secure_target.bootstrap_for(protocol)
    node_client("produce", bootstrap, topic, security=security)
    read = _node_rows(node_client("group", bootstrap, topic, group, str(len(RECORDS)),
                                  security=security))
    assert sorted(read, key=lambda r: (r[0], r[1])) == _expected()
    assert committed_by(secure_target, group) == {0: 4, 1: 4, 2: 4}


def test_kafkajs_reports_a_wrong_password_at_once(secure_target):
    security = client_security(secure_target, "SASL_SSL", "PLAIN", password="wrong")
    err = refused(["node", str(NODE_CLIENT), "produce", secure_target.bootstrap_for("SASL_SSL"),
                   f"t-{uuid.uuid4().hex[:8]}"], security)
    assert "SASL PLAIN authentication failed: Authentication failed: Invalid username or " \
           "password" in err


# -- SCRAM credentials through the Admin API ----------------------------------------------------

def test_scram_credentials_are_described_altered_and_used_for_the_next_login(secure_target):
    """bob's credentials as the cluster was given them, then users of the test's own:
    one made, one losing a mechanism, each used (or refused) at the next login."""
    from confluent_kafka.admin import (ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialDeletion,
                                       UserScramCredentialUpsertion)
    admin = secure_target.admin

    def described(user):
        return admin.describe_user_scram_credentials([user])[user].result(30)

    assert sorted((i.mechanism, i.iterations) for i in described("bob").scram_credential_infos) \
        == [(ScramMechanism.SCRAM_SHA_256, 4096), (ScramMechanism.SCRAM_SHA_512, 4096)]

    carol, carols_secret = secure_target.unique("carol"), "carols-secret"
    dave, daves_secret = secure_target.new_user("dave")
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion(carol, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256,
                                                                8192),
                                     carols_secret.encode(), b"some-salt"),
        UserScramCredentialDeletion(dave, ScramMechanism.SCRAM_SHA_512)])
    for future in futures.values():
        future.result(30)

    def known(user):
        """``user``'s credentials as (mechanism, iterations), or None while the broker asked
        has not heard of the user: Kafka's brokers learn of a change from the metadata log,
        a moment after the Admin is answered."""
        try:
            return [(i.mechanism, i.iterations) for i in described(user).scram_credential_infos]
        except ck.KafkaException as exc:
            if exc.args[0].code() != ck.KafkaError.RESOURCE_NOT_FOUND:
                raise
            return None

    carols = [(ScramMechanism.SCRAM_SHA_256, 8192)]
    wait_for(lambda: known(carol) == carols, f"{carol}'s credentials to be described")
    daves = [(ScramMechanism.SCRAM_SHA_256, SCRAM_ITERATIONS)]
    wait_for(lambda: known(dave) == daves, f"{dave}'s SCRAM-SHA-512 credential to go")
    assert (known(carol), known(dave)) == (carols, daves)

    conf = ck_config(secure_target, "SASL_PLAINTEXT", "SCRAM-SHA-256", user=carol,
                     password=carols_secret)
    topic, group = topic_for(secure_target, f"User:{carol}")
    # Kafka's broker learns of new credentials from the metadata log, a moment after the
    # Admin is answered: a client retries a refused login no sooner than a reconnect
    wait_for(lambda: _logs_in(conf), f"{carol} to log in")
    read, committed = ck_round_trip(conf, topic, group)
    assert committed == 3
    dave_512 = ck_config(secure_target, "SASL_PLAINTEXT", "SCRAM-SHA-512", user=dave,
                         password=daves_secret)
    wait_for(lambda: not _logs_in(dave_512), f"{dave}'s SCRAM-SHA-512 credential to go")
    assert ck_first_error(dave_512).code() == ck.KafkaError._AUTHENTICATION

    nobody = secure_target.unique("nobody")
    too_few = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        nobody, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 1000), b"pw")])
    with pytest.raises(ck.KafkaException, match="Too few iterations"):
        too_few[nobody].result(30)
    with pytest.raises(ck.KafkaException, match=f"does not exist: {nobody}"):
        described(nobody)


def _logs_in(conf: dict) -> bool:
    """Whether a client with ``conf`` gets the cluster's metadata (so it logged in)."""
    try:
        AdminClient(conf).list_topics(timeout=5)
        return True
    except ck.KafkaException:
        return False


# -- ACLs, as the clients see them ----------------------------------------------------------------

def guarded(target: SecureTarget) -> dict[str, str]:
    """Three topics of the test's own (orders, app-events, payroll; base name -> name) and
    ACLs on them: alice may write and read orders, write every topic whose name starts as
    app-events' does, and read in her groups; bob may read in his groups and nothing more;
    the holder of the certificate CN=orders-app,OU=payments may write orders.  The super user
    needs no ACL."""
    names = target.create_topics({"orders": 1, "app-events": 1, "payroll": 1})
    tag = names["orders"].removesuffix("-orders")
    names.update(alice_groups=f"{tag}-alice-", bob_groups=f"{tag}-bob-")
    acl = AclBinding
    allow = AclPermissionType.ALLOW
    target.create_acls([
        acl(ResourceType.TOPIC, names["orders"], ResourcePatternType.LITERAL, "User:alice",
            "*", AclOperation.WRITE, allow),
        acl(ResourceType.TOPIC, names["orders"], ResourcePatternType.LITERAL, "User:alice",
            "*", AclOperation.READ, allow),
        acl(ResourceType.TOPIC, f"{tag}-app-", ResourcePatternType.PREFIXED, "User:alice", "*",
            AclOperation.WRITE, allow),
        acl(ResourceType.GROUP, names["alice_groups"], ResourcePatternType.PREFIXED,
            "User:alice", "*", AclOperation.READ, allow),
        acl(ResourceType.GROUP, names["bob_groups"], ResourcePatternType.PREFIXED, "User:bob",
            "*", AclOperation.READ, allow),
        acl(ResourceType.TOPIC, names["orders"], ResourcePatternType.LITERAL,
            "User:CN=orders-app,OU=payments", "*", AclOperation.WRITE, allow),
    ])
    return names


def as_user(target: SecureTarget, user: str) -> dict:
    return ck_config(target, "SASL_PLAINTEXT", "SCRAM-SHA-256", user=user,
                     password=USERS[user])


def delivery_errors(conf: dict, topic: str) -> list:
    """What the producer's delivery reports say for one record to ``topic``."""
    outcomes = []
    producer = ck.Producer(dict(conf, **{"message.timeout.ms": 10000}))
    producer.produce(topic, b"v", on_delivery=lambda err, _: outcomes.append(err))
    producer.flush(30)
    return [None if e is None else e.code() for e in outcomes]


def test_a_producer_writes_where_its_acls_allow_and_is_refused_elsewhere(secure_target):
    topics = guarded(secure_target)
    alice = as_user(secure_target, "alice")
    assert delivery_errors(alice, topics["orders"]) == [None]
    assert delivery_errors(alice, topics["app-events"]) == [None]  # the prefixed ACL
    assert delivery_errors(alice, topics["payroll"]) == \
        [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]
    # a super user needs no ACL
    assert delivery_errors(as_user(secure_target, "admin"), topics["payroll"]) == [None]


def test_metadata_shows_a_principal_only_the_topics_it_may_describe(secure_target):
    names = guarded(secure_target)
    producer = ck.Producer(as_user(secure_target, "alice"))
    topics = set(producer.list_topics(timeout=10).topics)
    assert {names["orders"], names["app-events"]} <= topics and names["payroll"] not in topics
    everything = ck.Producer(as_user(secure_target, "admin"))
    assert names["payroll"] in everything.list_topics(timeout=10).topics


def test_a_consumer_without_read_on_the_topic_gets_topic_authorization_failed(secure_target):
    names = guarded(secure_target)

    def first_error(user, group):
        consumer = ck.Consumer(dict(as_user(secure_target, user), **{
            "group.id": group, "auto.offset.reset": "earliest"}))
        consumer.subscribe([names["orders"]])
        try:
            found = []

            def polled():
                msg = consumer.poll(0.5)
                if msg is not None:
                    found.append(msg.error().code() if msg.error() else "record")
                return found
            wait_for(polled, f"{user}'s consumer to get a record or an error")
            return found[0]
        finally:
            consumer.close()

    assert delivery_errors(as_user(secure_target, "alice"), names["orders"]) == [None]
    assert first_error("alice", names["alice_groups"] + "readers") == "record"
    assert first_error("bob", names["bob_groups"] + "readers") == \
        ck.KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kafka_python_reports_topic_authorization_failed(secure_target):
    from kafka.errors import TopicAuthorizationFailedError
    names = guarded(secure_target)
    producer = KafkaProducer(**dict(kp_config(secure_target, "SASL_PLAINTEXT", "PLAIN"),
                                    sasl_plain_username="bob",
                                    sasl_plain_password=USERS["bob"]),
                             max_block_ms=10000)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(names["orders"], b"v").get(30)
    finally:
        producer.close(5)


def test_a_client_certificate_subject_is_the_principal_acls_name(secure_target):
    names = guarded(secure_target)

    def conf(subject):
        certificate = secure_target.client_certificate(subject)
        return dict(ck_config(secure_target, "SSL"), **{
            "ssl.certificate.location": certificate.cert_location,
            "ssl.key.location": certificate.key_location})
    assert delivery_errors(conf("CN=orders-app,OU=payments"), names["orders"]) == [None]
    assert delivery_errors(conf("CN=someone-else"), names["orders"]) == \
        [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]


# -- kcat -----------------------------------------------------------------------------------------

def kcat_secured(target: SecureTarget, mechanism: str) -> list[str]:
    return ["-b", target.bootstrap_for("SASL_SSL"), "-X", "security.protocol=SASL_SSL",
            "-X", f"sasl.mechanisms={mechanism}", "-X", "sasl.username=alice",
            "-X", f"sasl.password={USERS['alice']}",
            "-X", f"ssl.ca.location={target.ssl_ca_location}"]


def test_kcat_over_sasl_ssl(secure_target):
    from tests.clients.test_conformance import _kcat
    (topic, group), secured = topic_for(secure_target), kcat_secured(secure_target, "PLAIN")
    _kcat("-P", *secured, "-t", topic, "-K:", stdin="k0:v0\nk1:v1\nk2:v2\n")
    out = _kcat("-C", *secured, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k=%s\n")
    assert out.splitlines() == ["k0=v0", "k1=v1", "k2=v2"]
    _kcat("-G", group, *secured, "-X", "auto.offset.reset=earliest", "-c", "3", "-e", "-q",
          topic)
    [committed] = secure_target.admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions(group)])[group].result(30).topic_partitions
    assert committed.offset == 3


def test_kcat_scram_is_refused_as_kafka_4_refuses_librdkafka_before_2_6_1(secure_target):
    """librdkafka before 2.6.1 (Debian's kcat links 2.0) repeats its own nonce in the SCRAM
    client-final message; Kafka 4's server compares the nonce exactly, as RFC 5802 says, and
    refuses the login with its generic message.  So does mockbroker."""
    done = subprocess.run(["kcat", "-L", *kcat_secured(secure_target, "SCRAM-SHA-512")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Authentication failed during authentication due to invalid credentials with " \
           "SASL mechanism SCRAM-SHA-512" in done.stderr
