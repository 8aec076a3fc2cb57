"""Kafka's Java clients and tools on mockbroker's secured listeners: SASL (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512, OAUTHBEARER) over plaintext and TLS, TLS with and without a client certificate,
credentials refused, ``kafka-acls`` managing ACLs as a super user, and an exactly-once Kafka
Streams app over SASL_SSL.

The clients are ``java/SecureClient.java`` (the stock producer, consumer and Admin of
kafka-clients), compiled once per module so that each case costs one JVM start and no compile.
They read their security settings from a properties file, as an application would.  The ACL
tool is Kafka's own ``kafka-acls`` (``org.apache.kafka.tools.AclCommand`` since Kafka 4.0)
with a ``--command-config`` file.  The Kafka target has a PLAINTEXT listener only, so all of
this runs on mockbroker.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mockbroker import MockCluster
from tests.clients.helpers import KAFKA_TOOLS, kafka_tool
from tests.clients.targets import MOCK_SETTINGS
from wire.definitions import KAFKA_VERSION

pytestmark = pytest.mark.mockbroker_only("security")

JARS = Path(__file__).resolve().parents[2] / ".cache" / "jars"
SOURCE = Path(__file__).with_name("java") / "SecureClient.java"


def _tools_jar(name: str) -> Path:
    found = sorted(KAFKA_TOOLS.glob(f"{name}-[0-9]*.jar"))
    return found[-1] if found else KAFKA_TOOLS / f"{name}.jar"  # reported missing below


#: kafka-clients declares Jackson compile-only: an application whose OAUTHBEARER login makes
#: unsecured tokens brings it along, as we do from the tools' dependencies
CLASSPATH = [JARS / f"kafka-clients-{KAFKA_VERSION}.jar", JARS / "slf4j-api-1.7.36.jar",
             *(_tools_jar(f"jackson-{name}") for name in ("databind", "core", "annotations"))]
JVM_TIMEOUT_S = 90
#: each JVM here lives a few seconds: the C1 compiler alone gets it there sooner, for less CPU
SHORT_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
ACL_TOOL = "org.apache.kafka.tools.AclCommand"
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
#: the Java login module of each mechanism, as ``sasl.jaas.config`` names it
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}
USERS = {"alice": "alice-secret", "admin": "admin-secret"}
#: the password of the PKCS#12 keystores mockbroker writes
STORE_PASSWORD = "mockbroker"
#: records of a round trip
COUNT = 6
#: how long a refused producer may wait for metadata: a refusal comes well before, a client
#: that is never told why it cannot connect times out here instead of hanging a minute
REFUSED_BLOCK_MS = 5000
SASL_FAILED = "org.apache.kafka.common.errors.SaslAuthenticationException"
SSL_FAILED = "org.apache.kafka.common.errors.SslAuthenticationException"


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    """SecureClient, compiled once for the module's JVMs."""
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("javac"), \
        f"the Java client needs a JDK and {missing} (bash ci/dev.sh setup fetches them)"
    out = tmp_path_factory.mktemp("secure-client")
    done = subprocess.run(["javac", *(f"-J{flag}" for flag in SHORT_JVM), "-d", str(out),
                           "-cp", ":".join(map(str, CLASSPATH)), str(SOURCE)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"javac SecureClient.java: {done.stderr[-3000:]}"
    return out


def properties(path: Path, config: dict[str, str]) -> Path:
    """``config`` written as a Java properties file."""
    path.write_text("".join(f"{k}={v.replace(chr(92), chr(92) * 2)}\n"
                            for k, v in config.items()))
    return path


def run_client(classes: Path, config: Path, mode: str, *args: str) -> list[str]:
    """What SecureClient prints for one run; fails unless it ends with "done"."""
    done = subprocess.run(["java", *SHORT_JVM, "-cp", ":".join(map(str, [classes, *CLASSPATH])),
                           "SecureClient", mode, str(config), *args],
                          capture_output=True, text=True, timeout=JVM_TIMEOUT_S)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[-1:] == ["done"], \
        f"SecureClient {mode} exited {done.returncode}: {lines}\n{done.stderr[-4000:]}"
    return lines


def sasl_config(protocol: str, mechanism: str, user: str, password: str) -> dict[str, str]:
    if mechanism == "OAUTHBEARER":
        # the default login callback handler makes an unsecured token with this subject
        options = f'unsecuredLoginStringClaim_sub="{user}"'
    else:
        options = f'username="{user}" password="{password}"'
    return {"security.protocol": protocol, "sasl.mechanism": mechanism,
            "sasl.jaas.config": f"{LOGIN_MODULES[mechanism]} required {options};"}


def tls_config(cluster: MockCluster, certificate=None) -> dict[str, str]:
    """Trust the cluster's CA (a PEM truststore, KIP-651); with ``certificate``, present it
    from its PKCS#12 keystore."""
    config = {"ssl.truststore.type": "PEM", "ssl.truststore.location": cluster.ssl_ca_location}
    if certificate is not None:
        config.update({"ssl.keystore.type": "PKCS12",
                       "ssl.keystore.location": certificate.pkcs12_location,
                       "ssl.keystore.password": STORE_PASSWORD})
    return config


def round_trip(classes: Path, config_file: Path, bootstrap: str, protocol: str) -> None:
    """SecureClient's roundtrip through ``bootstrap``: the cluster described with the addresses
    of that listener, every record read back as written (keys, values, headers), and the
    group's committed offsets, as Admin lists them, at the end of each partition."""
    lines = run_client(classes, config_file, "roundtrip", bootstrap, "orders", "billing",
                       str(COUNT))
    [(_, cluster_id, nodes, controller)] = [line.split() for line in lines
                                            if line.startswith("cluster ")]
    ids, addresses = zip(*(node.split("@", 1) for node in nodes.split(",")))
    assert cluster_id and sorted(addresses) == sorted(bootstrap.split(",")), (nodes, bootstrap)
    assert controller in ids
    sent = [tuple(map(int, line.split()[1:])) for line in lines if line.startswith("sent ")]
    assert len(sent) == COUNT
    written = {where: f"key-{i} value-{i} n={i};via={protocol}" for i, where in enumerate(sent)}
    read = {}
    for line in lines:
        if line.startswith("record "):
            _, partition, offset, rest = line.split(" ", 3)
            read[(int(partition), int(offset))] = rest
    assert read == written
    ends: dict[int, int] = {}
    for partition, offset in sent:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    assert f"committed {','.join(f'{p}={o}' for p, o in sorted(ends.items()))}" in lines


def refused(classes: Path, config: dict[str, str], config_file: Path,
            bootstrap: str) -> dict[str, list[str]]:
    """What a producer's ``partitionsFor`` and ``send().get()`` fail with: per call, the
    exception and its causes as "CLASS: MESSAGE", checked to have come before the producer
    gave up waiting for metadata."""
    config = {**config, "max.block.ms": str(REFUSED_BLOCK_MS)}
    lines = run_client(classes, properties(config_file, config), "refused", bootstrap,
                       "orders")
    found = {}
    for line in lines:
        call, _, rest = line.partition(" ")
        if call in ("partitionsFor", "send"):
            assert rest not in ("succeeded", "not tried"), lines
            millis, _, chain = rest.partition(" ")
            found[call] = chain.split(" | caused by ")
            assert int(millis) < REFUSED_BLOCK_MS, f"not refused, but timed out: {lines}"
    assert set(found) == {"partitionsFor", "send"}, lines
    return found


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_sasl_produce_consume_commit_and_admin(stack, tmp_path, classes, protocol, mechanism):
    """Two brokers with a PLAINTEXT listener and a SASL one: a client of the SASL listener
    authenticates on every connection (both brokers, the coordinator) and is told that
    listener's addresses."""
    cluster = stack.enter_context(MockCluster(
        brokers=2, listeners=["PLAINTEXT", protocol], sasl_mechanisms=[mechanism],
        users=USERS, **MOCK_SETTINGS))
    config = sasl_config(protocol, mechanism, "alice", USERS["alice"])
    if protocol == "SASL_SSL":
        config.update(tls_config(cluster))
    round_trip(classes, properties(tmp_path / "client.properties", config),
               cluster.bootstrap_for(protocol), protocol)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_a_wrong_password_is_refused_at_once(stack, tmp_path, classes, mechanism):
    """Kafka's messages: PLAIN says why; SCRAM says only that the credentials were invalid."""
    cluster = stack.enter_context(MockCluster(security_protocol="SASL_PLAINTEXT", users=USERS,
                                              **MOCK_SETTINGS))
    config = sasl_config("SASL_PLAINTEXT", mechanism, "alice", "not-the-password")
    message = "Authentication failed: Invalid username or password" if mechanism == "PLAIN" \
        else ("Authentication failed during authentication due to invalid credentials with "
              f"SASL mechanism {mechanism}")
    found = refused(classes, config, tmp_path / "client.properties", cluster.bootstrap_servers)
    assert found == {"partitionsFor": [f"{SASL_FAILED}: {message}"],
                     "send": [f"{SASL_FAILED}: {message}"]}


def test_ssl_without_a_client_certificate(stack, tmp_path, classes):
    cluster = stack.enter_context(MockCluster(security_protocol="SSL", **MOCK_SETTINGS))
    config = {"security.protocol": "SSL", **tls_config(cluster)}
    round_trip(classes, properties(tmp_path / "client.properties", config),
               cluster.bootstrap_servers, "SSL")


def test_ssl_with_a_required_client_certificate(stack, tmp_path, classes):
    cluster = stack.enter_context(MockCluster(security_protocol="SSL",
                                              ssl_client_auth="required", **MOCK_SETTINGS))
    certificate = cluster.client_certificate("CN=alice")
    config = {"security.protocol": "SSL", **tls_config(cluster, certificate)}
    round_trip(classes, properties(tmp_path / "client.properties", config),
               cluster.bootstrap_servers, "SSL")


def test_ssl_without_the_required_client_certificate_fails(stack, tmp_path, classes):
    """Kafka's Java server ends the handshake with a fatal alert (certificate_required under
    TLS 1.3), which the client reports as an SslAuthenticationException at once; under TLS 1.3
    the client has finished its side of the handshake already, so it says it failed on
    post-handshake messages."""
    cluster = stack.enter_context(MockCluster(security_protocol="SSL",
                                              ssl_client_auth="required", **MOCK_SETTINGS))
    config = {"security.protocol": "SSL", **tls_config(cluster)}
    found = refused(classes, config, tmp_path / "client.properties", cluster.bootstrap_servers)
    chain = [f"{SSL_FAILED}: Failed to process post-handshake messages",
             "javax.net.ssl.SSLHandshakeException: Received fatal alert: certificate_required"]
    assert found == {"partitionsFor": chain, "send": chain}


def _acls(listing: str) -> dict[str, set[str]]:
    """kafka-acls --list output: resource pattern -> its ACL entries."""
    acls: dict[str, set[str]] = {}
    resource = None
    for line in listing.splitlines():
        match = re.match(r"Current ACLs for resource `ResourcePattern\((.*)\)`:", line)
        if match:
            resource = match[1]
            acls[resource] = set()
        elif line.strip() and resource is not None:
            acls[resource].add(line.strip())
    return acls


def test_kafka_acls_adds_lists_and_removes_as_a_super_user(stack, tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", " ".join(SHORT_JVM))  # the tool's JVMs too
    cluster = stack.enter_context(MockCluster(
        security_protocol="SASL_PLAINTEXT", users=USERS, super_users=["User:admin"],
        authorizer=True, **MOCK_SETTINGS))
    admin = properties(tmp_path / "admin.properties", sasl_config(
        "SASL_PLAINTEXT", "SCRAM-SHA-512", "admin", USERS["admin"]))

    def acls(*args: str) -> str:
        return kafka_tool(ACL_TOOL, cluster.bootstrap_servers, "--command-config", str(admin),
                          *args)

    orders = "resourceType=TOPIC, name=orders, patternType=LITERAL"
    app = "resourceType=TOPIC, name=app-, patternType=PREFIXED"
    read = "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    write = "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"
    acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")
    acls("--add", "--allow-principal", "User:alice", "--operation", "Write",
         "--resource-pattern-type", "prefixed", "--topic", "app-")
    assert _acls(acls("--list")) == {orders: {read}, app: {write}}
    acls("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read",
         "--topic", "orders")
    assert _acls(acls("--list")) == {app: {write}}


def test_an_exactly_once_streams_app_over_sasl_ssl(stack, tmp_path):
    """Kafka Streams' exactly-once word count (``test_streams_eos.py``) with its every
    connection on a SASL_SSL listener, as SCRAM-SHA-512 user alice: its producers' transactions,
    its consumers' group and read_committed fetches, and the admin that makes its internal
    topics.  The test's own producer and reader use the PLAINTEXT listener beside it."""
    from tests.clients.test_streams_eos import count_words_once
    cluster = stack.enter_context(MockCluster(
        listeners=["PLAINTEXT", "SASL_SSL"], sasl_mechanisms=["SCRAM-SHA-512"], users=USERS,
        **MOCK_SETTINGS))
    secured = {**sasl_config("SASL_SSL", "SCRAM-SHA-512", "alice", USERS["alice"]),
               **tls_config(cluster)}
    app_id = count_words_once(stack, cluster.bootstrap_for("PLAINTEXT"), tmp_path,
                              *(f"{key}={value}" for key, value in secured.items()),
                              app_bootstrap=cluster.bootstrap_for("SASL_SSL"))

    mine = [r for r in cluster.admin.requests() if r.client_id and app_id in r.client_id]
    assert {r.listener for r in mine} == {"SASL_SSL"}
    authenticated = [r for r in mine
                     if r.api not in ("ApiVersions", "SaslHandshake", "SaslAuthenticate")]
    assert {(r.mechanism, r.principal) for r in authenticated} == \
        {("SCRAM-SHA-512", "User:alice")}
    assert "EndTxn" in {r.api for r in authenticated}, "no transaction ended in the request log"
