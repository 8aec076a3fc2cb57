"""The Python clients, and the franz-go and kafkajs clients of the conformance tests, configured
as production clients are: SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
and OAUTHBEARER, and SSL (the Python clients with and without a client certificate).  Each
produces keyed records with headers, consumes them in a group and commits; a wrong password or a
refused certificate is reported by the client at once.

These run on mockbroker alone: the Kafka target serves a PLAINTEXT listener only.
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
from tests.clients.helpers import (GO_CLIENT, NODE_CLIENT, RDKAFKA_LOG, go_client,
                                   node_client, wait_for)

pytestmark = pytest.mark.mockbroker_only("security")

USERS = {"alice": "secret", "bob": "hunter2"}
SASL = [(protocol, mechanism) for protocol in ("SASL_PLAINTEXT", "SASL_SSL")
        for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")]
RECORDS = [(f"k{i}".encode(), f"v{i}".encode(), [("seq", str(i).encode())]) for i in range(3)]


@pytest.fixture(scope="module")
def cluster():
    with MockCluster(listeners=["SASL_PLAINTEXT", "SASL_SSL", "SSL"], users=USERS) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def mtls_cluster():
    with MockCluster(security_protocol="SSL", ssl_client_auth="required") as cluster:
        yield cluster


def topic_in(cluster: MockCluster, partitions: int = 1) -> str:
    name = f"secure-{uuid.uuid4().hex[:8]}"
    cluster.admin.create_topic(name, partitions)
    return name


def token(principal: str = "alice", lifetime_ms: int = 3_600_000) -> str:
    return unsecured_token(principal, expires_ms=int(time.time() * 1000) + lifetime_ms)


# -- confluent-kafka (librdkafka) -------------------------------------------------------------

def ck_config(cluster: MockCluster, protocol: str, mechanism: str | None = None,
              password: str = "secret") -> dict:
    conf = {"bootstrap.servers": cluster.bootstrap_for(protocol),
            "security.protocol": protocol, "logger": RDKAFKA_LOG}
    if protocol.endswith("SSL"):
        conf["ssl.ca.location"] = cluster.ssl_ca_location
    if mechanism == "OAUTHBEARER":
        conf.update({"sasl.mechanism": mechanism, "enable.sasl.oauthbearer.unsecure.jwt": True,
                     "sasl.oauthbearer.config": "principal=alice"})
    elif mechanism is not None:
        conf.update({"sasl.mechanism": mechanism, "sasl.username": "alice",
                     "sasl.password": password})
    return conf


def ck_round_trip(conf: dict, topic: str) -> tuple[list, int]:
    """Produce RECORDS, consume them in a group and commit: (what was read, committed)."""
    producer = ck.Producer(conf)
    failures = []
    for key, value, headers in RECORDS:
        producer.produce(topic, value, key, headers=headers,
                         on_delivery=lambda err, _: err and failures.append(err))
    assert producer.flush(30) == 0 and not failures, failures
    group = f"g-{uuid.uuid4().hex[:8]}"
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
def test_confluent_kafka_over_sasl(cluster, protocol, mechanism):
    read, committed = ck_round_trip(ck_config(cluster, protocol, mechanism), topic_in(cluster))
    assert read == [(k, v, h) for k, v, h in RECORDS]
    assert committed == 3


def test_confluent_kafka_over_ssl_without_a_client_certificate(cluster):
    read, committed = ck_round_trip(ck_config(cluster, "SSL"), topic_in(cluster))
    assert [v for _, v, _ in read] == [b"v0", b"v1", b"v2"] and committed == 3


def test_confluent_kafka_with_a_client_certificate(mtls_cluster):
    certificate = mtls_cluster.client_certificate("CN=orders-app,OU=payments")
    conf = dict(ck_config(mtls_cluster, "SSL"), **{
        "ssl.certificate.location": certificate.cert_location,
        "ssl.key.location": certificate.key_location})
    read, committed = ck_round_trip(conf, topic_in(mtls_cluster))
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
def test_confluent_kafka_reports_a_wrong_password_at_once(cluster, mechanism, message):
    error = ck_first_error(ck_config(cluster, "SASL_SSL", mechanism, password="wrong"))
    assert error.code() == ck.KafkaError._AUTHENTICATION
    assert message in error.str()


def test_confluent_kafka_reports_an_expired_token_at_once(cluster):
    expired = unsecured_token("alice", expires_ms=int(time.time() * 1000) - 60_000)
    conf = {"bootstrap.servers": cluster.bootstrap_for("SASL_PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "logger": RDKAFKA_LOG,
            # the client believes the token good for an hour: the broker decides
            "oauth_cb": lambda _: (expired, time.time() + 3600)}
    error = ck_first_error(conf)
    assert error.code() == ck.KafkaError._AUTHENTICATION
    assert '{"status":"invalid_token"}' in error.str()


def test_confluent_kafka_reports_a_mechanism_the_broker_does_not_offer():
    with MockCluster(security_protocol="SASL_PLAINTEXT", users=USERS,
                     sasl_mechanisms=["SCRAM-SHA-256"]) as cluster:
        error = ck_first_error(ck_config(cluster, "SASL_PLAINTEXT", "PLAIN"))
    assert error.code() == ck.KafkaError._AUTHENTICATION
    assert "PLAIN" in error.str() and "SCRAM-SHA-256" in error.str()


def test_a_client_without_a_certificate_is_refused_when_one_is_required(mtls_cluster):
    error = ck_first_error(ck_config(mtls_cluster, "SSL"))
    assert error.code() in (ck.KafkaError._TRANSPORT, ck.KafkaError._SSL,
                            ck.KafkaError._ALL_BROKERS_DOWN), error


def test_a_sasl_client_on_a_plaintext_listener_is_told_sasl_is_not_enabled():
    with MockCluster() as cluster:
        conf = {"bootstrap.servers": cluster.bootstrap_servers,
                "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                "sasl.username": "alice", "sasl.password": "secret", "logger": RDKAFKA_LOG}
        error = ck_first_error(conf)
    # the handshake is answered ILLEGAL_SASL_STATE, which librdkafka reports, not retried on
    assert error.code() == ck.KafkaError._AUTHENTICATION, error


# -- kafka-python ---------------------------------------------------------------------------

class KpToken(KpTokenProvider):
    def token(self):
        return token()


def kp_config(cluster: MockCluster, protocol: str, mechanism: str | None = None,
              password: str = "secret") -> dict:
    conf = {"bootstrap_servers": cluster.bootstrap_for(protocol), "security_protocol": protocol}
    if protocol.endswith("SSL"):
        conf["ssl_cafile"] = cluster.ssl_ca_location
    if mechanism == "OAUTHBEARER":
        conf.update(sasl_mechanism=mechanism, sasl_oauth_token_provider=KpToken())
    elif mechanism is not None:
        conf.update(sasl_mechanism=mechanism, sasl_plain_username="alice",
                    sasl_plain_password=password)
    return conf


@pytest.mark.parametrize("protocol, mechanism", SASL)
def test_kafka_python_over_sasl(cluster, protocol, mechanism):
    conf, topic = kp_config(cluster, protocol, mechanism), topic_in(cluster)
    producer = KafkaProducer(**conf)
    try:
        for key, value, headers in RECORDS:
            producer.send(topic, value, key, headers=headers).get(30)
    finally:
        producer.close(5)
    consumer = KafkaConsumer(topic, group_id=f"g-{uuid.uuid4().hex[:8]}",
                             auto_offset_reset="earliest", enable_auto_commit=False, **conf)
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


def test_kafka_python_logs_a_wrong_password_and_gives_up(cluster, caplog):
    caplog.set_level(logging.ERROR, logger="kafka")
    with pytest.raises(KafkaTimeoutError):
        KafkaProducer(bootstrap_timeout_ms=3000,
                      **kp_config(cluster, "SASL_PLAINTEXT", "PLAIN", password="wrong"))
    assert "Authentication failed: Invalid username or password" in caplog.text


# -- aiokafka -------------------------------------------------------------------------------

class AioToken(AbstractTokenProvider):
    async def token(self):
        return token()


def aio_config(cluster: MockCluster, protocol: str, mechanism: str) -> dict:
    conf = {"bootstrap_servers": cluster.bootstrap_for(protocol), "security_protocol": protocol,
            "sasl_mechanism": mechanism}
    if protocol.endswith("SSL"):
        conf["ssl_context"] = create_ssl_context(cafile=cluster.ssl_ca_location)
    if mechanism == "OAUTHBEARER":
        conf["sasl_oauth_token_provider"] = AioToken()
    else:
        conf.update(sasl_plain_username="alice", sasl_plain_password="secret")
    return conf


@pytest.mark.parametrize("protocol, mechanism", SASL)
def test_aiokafka_over_sasl(cluster, protocol, mechanism):
    conf, topic = aio_config(cluster, protocol, mechanism), topic_in(cluster)

    async def run():
        producer = AIOKafkaProducer(**conf)
        await producer.start()
        try:
            for key, value, headers in RECORDS:
                await producer.send_and_wait(topic, value, key=key, headers=headers)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, group_id=f"g-{uuid.uuid4().hex[:8]}",
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    **conf)
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


def test_ssl_context_trusting_only_the_generated_ca_verifies_the_broker(cluster):
    """The CA file is all a client needs: the broker's certificate names 127.0.0.1."""
    host, port = cluster.bootstrap_for("SSL").rsplit(":", 1)
    context = ssl.create_default_context(cafile=cluster.ssl_ca_location)
    import socket
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            assert tls.version() in ("TLSv1.2", "TLSv1.3")


# -- franz-go and kafkajs ----------------------------------------------------------------------

SECURED = SASL + [("SSL", None)]


def client_security(cluster: MockCluster, protocol: str, mechanism: str | None = None,
                    password: str = "secret") -> dict[str, str]:
    """The ``KAFKA_*`` settings the franz-go and kafkajs clients connect with."""
    settings = {"KAFKA_SECURITY_PROTOCOL": protocol}
    if protocol.endswith("SSL"):
        settings["KAFKA_SSL_CA_LOCATION"] = cluster.ssl_ca_location
    if mechanism == "OAUTHBEARER":
        settings.update(KAFKA_SASL_MECHANISM=mechanism, KAFKA_SASL_TOKEN=token())
    elif mechanism is not None:
        settings.update(KAFKA_SASL_MECHANISM=mechanism, KAFKA_SASL_USERNAME="alice",
                        KAFKA_SASL_PASSWORD=password)
    return settings


def committed_by(cluster: MockCluster, group: str) -> dict[int, int]:
    admin = AdminClient(ck_config(cluster, "SASL_PLAINTEXT", "PLAIN"))
    listed = admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])
    return {tp.partition: tp.offset for tp in listed[group].result(30).topic_partitions}


def refused(command: list[str], security: dict[str, str]) -> str:
    """What a client that must fail printed on stderr."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **security})
    assert done.returncode != 0, done.stdout
    return done.stderr


@pytest.mark.parametrize("protocol, mechanism", SECURED)
def test_franz_go_over_sasl_and_ssl(cluster, protocol, mechanism):
    """The conformance tests' twelve records, written and read back, then read in a classic
    group that commits them, every connection on the secured listener."""
    from tests.clients.test_conformance import PARTITIONS, RECORDS, _expected, _go_rows
    topic, group = topic_in(cluster, PARTITIONS), f"g-{uuid.uuid4().hex[:8]}"
    security = client_security(cluster, protocol, mechanism)
    bootstrap = cluster.bootstrap_for(protocol)
    go_client("produce", bootstrap, topic, security=security)
    read = _go_rows(go_client("read", bootstrap, topic, str(len(RECORDS)), security=security))
    assert sorted(read, key=lambda r: (r[0], r[1])) == _expected()
    values = go_client("group", bootstrap, topic, group, str(len(RECORDS)), security=security)
    assert sorted(values.split()) == sorted(value.decode() for _, _, value, _ in RECORDS)
    assert committed_by(cluster, group) == {0: 4, 1: 4, 2: 4}


def test_franz_go_reports_a_wrong_password_at_once(cluster):
    security = client_security(cluster, "SASL_PLAINTEXT", "SCRAM-SHA-256", password="wrong")
    err = refused([str(GO_CLIENT), "admin", cluster.bootstrap_for("SASL_PLAINTEXT"),
                   f"t-{uuid.uuid4().hex[:8]}"], security)
    assert "SASL_AUTHENTICATION_FAILED" in err
    assert "Authentication failed during authentication due to invalid credentials with " \
           "SASL mechanism SCRAM-SHA-256" in err


@pytest.mark.parametrize("protocol, mechanism", SECURED)
def test_kafkajs_over_sasl_and_ssl(cluster, protocol, mechanism):
    """The conformance tests' twelve records, written, then read in a group that commits each,
    every connection on the secured listener."""
    from tests.clients.test_conformance import PARTITIONS, RECORDS, _expected, _node_rows
    topic, group = topic_in(cluster, PARTITIONS), f"g-{uuid.uuid4().hex[:8]}"
    security = client_security(cluster, protocol, mechanism)
    bootstrap = cluster.bootstrap_for(protocol)
    node_client("produce", bootstrap, topic, security=security)
    read = _node_rows(node_client("group", bootstrap, topic, group, str(len(RECORDS)),
                                  security=security))
    assert sorted(read, key=lambda r: (r[0], r[1])) == _expected()
    assert committed_by(cluster, group) == {0: 4, 1: 4, 2: 4}


def test_kafkajs_reports_a_wrong_password_at_once(cluster):
    security = client_security(cluster, "SASL_SSL", "PLAIN", password="wrong")
    err = refused(["node", str(NODE_CLIENT), "produce", cluster.bootstrap_for("SASL_SSL"),
                   f"t-{uuid.uuid4().hex[:8]}"], security)
    assert "SASL PLAIN authentication failed: Authentication failed: Invalid username or " \
           "password" in err


# -- SCRAM credentials through the Admin API ----------------------------------------------------

def test_scram_credentials_are_described_altered_and_used_for_the_next_login(cluster):
    from confluent_kafka.admin import (ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialDeletion,
                                       UserScramCredentialUpsertion)
    admin = AdminClient(ck_config(cluster, "SASL_PLAINTEXT", "PLAIN"))
    def described(user):
        return admin.describe_user_scram_credentials([user])[user].result(30)

    assert sorted((i.mechanism, i.iterations) for i in described("bob").scram_credential_infos) \
        == [(ScramMechanism.SCRAM_SHA_256, 4096), (ScramMechanism.SCRAM_SHA_512, 4096)]

    carol = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192)
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("carol", carol, b"carols-secret", b"some-salt"),
        UserScramCredentialDeletion("bob", ScramMechanism.SCRAM_SHA_512)])
    for future in futures.values():
        future.result(30)
    assert [(i.mechanism, i.iterations) for i in described("carol").scram_credential_infos] \
        == [(ScramMechanism.SCRAM_SHA_256, 8192)]
    assert [i.mechanism for i in described("bob").scram_credential_infos] == \
        [ScramMechanism.SCRAM_SHA_256]

    conf = dict(ck_config(cluster, "SASL_PLAINTEXT", "SCRAM-SHA-256"),
                **{"sasl.username": "carol", "sasl.password": "carols-secret"})
    read, committed = ck_round_trip(conf, topic_in(cluster))
    assert committed == 3
    bob_512 = dict(ck_config(cluster, "SASL_PLAINTEXT", "SCRAM-SHA-512"),
                   **{"sasl.username": "bob", "sasl.password": "hunter2"})
    assert ck_first_error(bob_512).code() == ck.KafkaError._AUTHENTICATION

    too_few = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 1000), b"pw")])
    with pytest.raises(ck.KafkaException, match="Too few iterations"):
        too_few["dave"].result(30)
    with pytest.raises(ck.KafkaException, match="does not exist: nobody"):
        described("nobody")


# -- ACLs, as the clients see them ----------------------------------------------------------------

@pytest.fixture(scope="module")
def guarded():
    with MockCluster(listeners=["SASL_PLAINTEXT", "SSL"], authorizer=True,
                     users={"admin": "admin-secret", **USERS}, super_users=["admin"],
                     ssl_client_auth="required") as cluster:
        admin = AdminClient(as_user(cluster, "admin", "admin-secret"))
        for future in admin.create_topics([NewTopic(t, 1, 1) for t in (
                "orders", "app-events", "payroll")]).values():
            future.result(30)
        acl = AclBinding
        allow = AclPermissionType.ALLOW
        for future in admin.create_acls([
            acl(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
                AclOperation.WRITE, allow),
            acl(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
                AclOperation.READ, allow),
            acl(ResourceType.TOPIC, "app-", ResourcePatternType.PREFIXED, "User:alice", "*",
                AclOperation.WRITE, allow),
            acl(ResourceType.GROUP, "alice-", ResourcePatternType.PREFIXED, "User:alice", "*",
                AclOperation.READ, allow),
            acl(ResourceType.GROUP, "bob-", ResourcePatternType.PREFIXED, "User:bob", "*",
                AclOperation.READ, allow),
            acl(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL,
                "User:CN=orders-app,OU=payments", "*", AclOperation.WRITE, allow),
        ]).values():
            future.result(30)
        yield cluster


def as_user(cluster: MockCluster, user: str, password: str) -> dict:
    return dict(ck_config(cluster, "SASL_PLAINTEXT", "SCRAM-SHA-256"),
                **{"sasl.username": user, "sasl.password": password})


def delivery_errors(conf: dict, topic: str) -> list:
    """What the producer's delivery reports say for one record to ``topic``."""
    outcomes = []
    producer = ck.Producer(dict(conf, **{"message.timeout.ms": 10000}))
    producer.produce(topic, b"v", on_delivery=lambda err, _: outcomes.append(err))
    producer.flush(30)
    return [None if e is None else e.code() for e in outcomes]


def test_a_producer_writes_where_its_acls_allow_and_is_refused_elsewhere(guarded):
    alice = as_user(guarded, "alice", "secret")
    assert delivery_errors(alice, "orders") == [None]
    assert delivery_errors(alice, "app-events") == [None]  # the prefixed ACL
    assert delivery_errors(alice, "payroll") == [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]
    # a super user needs no ACL
    assert delivery_errors(as_user(guarded, "admin", "admin-secret"), "payroll") == [None]


def test_metadata_shows_a_principal_only_the_topics_it_may_describe(guarded):
    producer = ck.Producer(as_user(guarded, "alice", "secret"))
    topics = set(producer.list_topics(timeout=10).topics)
    assert {"orders", "app-events"} <= topics and "payroll" not in topics
    everything = ck.Producer(as_user(guarded, "admin", "admin-secret"))
    assert "payroll" in everything.list_topics(timeout=10).topics


def test_a_consumer_without_read_on_the_topic_gets_topic_authorization_failed(guarded):
    def first_error(user, password, group):
        consumer = ck.Consumer(dict(as_user(guarded, user, password), **{
            "group.id": group, "auto.offset.reset": "earliest"}))
        consumer.subscribe(["orders"])
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

    assert delivery_errors(as_user(guarded, "alice", "secret"), "orders") == [None]
    assert first_error("alice", "secret", "alice-readers") == "record"
    assert first_error("bob", "hunter2", "bob-readers") == \
        ck.KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kafka_python_reports_topic_authorization_failed(guarded):
    from kafka.errors import TopicAuthorizationFailedError
    producer = KafkaProducer(**dict(kp_config(guarded, "SASL_PLAINTEXT", "PLAIN"),
                                    sasl_plain_username="bob", sasl_plain_password="hunter2"),
                             max_block_ms=10000)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("orders", b"v").get(30)
    finally:
        producer.close(5)


def test_a_client_certificate_subject_is_the_principal_acls_name(guarded):
    def conf(subject):
        certificate = guarded.client_certificate(subject)
        return dict(ck_config(guarded, "SSL"), **{
            "ssl.certificate.location": certificate.cert_location,
            "ssl.key.location": certificate.key_location})
    assert delivery_errors(conf("CN=orders-app,OU=payments"), "orders") == [None]
    assert delivery_errors(conf("CN=someone-else"), "orders") == \
        [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]


# -- kcat -----------------------------------------------------------------------------------------

def kcat_secured(cluster: MockCluster, mechanism: str) -> list[str]:
    return ["-b", cluster.bootstrap_for("SASL_SSL"), "-X", "security.protocol=SASL_SSL",
            "-X", f"sasl.mechanisms={mechanism}", "-X", "sasl.username=alice",
            "-X", "sasl.password=secret", "-X", f"ssl.ca.location={cluster.ssl_ca_location}"]


def test_kcat_over_sasl_ssl(cluster):
    from tests.clients.test_conformance import _kcat
    topic, secured = topic_in(cluster), kcat_secured(cluster, "PLAIN")
    _kcat("-P", *secured, "-t", topic, "-K:", stdin="k0:v0\nk1:v1\nk2:v2\n")
    out = _kcat("-C", *secured, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k=%s\n")
    assert out.splitlines() == ["k0=v0", "k1=v1", "k2=v2"]
    group = f"g-{uuid.uuid4().hex[:8]}"
    _kcat("-G", group, *secured, "-X", "auto.offset.reset=earliest", "-c", "3", "-e", "-q",
          topic)
    admin = AdminClient(ck_config(cluster, "SASL_PLAINTEXT", "PLAIN"))
    [committed] = admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions(group)])[group].result(30).topic_partitions
    assert committed.offset == 3


def test_kcat_scram_is_refused_as_kafka_4_refuses_librdkafka_before_2_6_1(cluster):
    """librdkafka before 2.6.1 (Debian's kcat links 2.0) repeats its own nonce in the SCRAM
    client-final message; Kafka 4's server compares the nonce exactly, as RFC 5802 says, and
    refuses the login with its generic message.  So does mockbroker."""
    done = subprocess.run(["kcat", "-L", *kcat_secured(cluster, "SCRAM-SHA-512")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Authentication failed during authentication due to invalid credentials with " \
           "SASL mechanism SCRAM-SHA-512" in done.stderr
