"""Kafka's Java clients and tools on secured listeners: SASL (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512, OAUTHBEARER) over plaintext and TLS, TLS with and without a client certificate,
credentials refused, ``kafka-acls`` managing ACLs as a super user, and an exactly-once Kafka
Streams app over SASL_SSL.

The clients are ``java/SecureClient.java`` (the stock producer, consumer and Admin of
kafka-clients), compiled once per module so that each case costs one JVM start and no compile.
They read their security settings from a properties file, as an application would.  The ACL
tool is Kafka's own ``kafka-acls`` (``org.apache.kafka.tools.AclCommand`` since Kafka 4.0)
with a ``--command-config`` file.  Each runs on mockbroker and on a secured Apache Kafka
(``secure_target``), both with an authorizer, so a test grants its client the topics, groups
and transactional ids it uses, all named for that test.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clients.helpers import KAFKA_TOOLS, kafka_tool
from tests.clients.secure_targets import ADMIN, USERS, SecureTarget
from wire.definitions import KAFKA_VERSION

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


def tls_config(target: SecureTarget, certificate=None) -> dict[str, str]:
    """Trust the target's CA (a PEM truststore, KIP-651); with ``certificate``, present it
    from its PKCS#12 keystore."""
    config = {"ssl.truststore.type": "PEM", "ssl.truststore.location": target.ssl_ca_location}
    if certificate is not None:
        config.update({"ssl.keystore.type": "PKCS12",
                       "ssl.keystore.location": certificate.pkcs12_location,
                       "ssl.keystore.password": STORE_PASSWORD})
    return config


def open_names(target: SecureTarget, principal: str) -> tuple[str, str]:
    """A topic name and a group name of the test's own, ``principal`` allowed everything on
    both (SecureClient's Admin makes the topic)."""
    prefix = target.unique("secure")
    target.grant(principal, prefix)
    return f"{prefix}-orders", f"{prefix}-billing"


def round_trip(classes: Path, config_file: Path, bootstrap: str, protocol: str,
               names: tuple[str, str]) -> None:
    """SecureClient's roundtrip through ``bootstrap`` on the topic and group ``names``: the
    cluster described with the addresses of that listener, every record read back as written
    (keys, values, headers), and the group's committed offsets, as Admin lists them, at the end
    of each partition."""
    lines = run_client(classes, config_file, "roundtrip", bootstrap, *names, str(COUNT))
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
def test_sasl_produce_consume_commit_and_admin(secure_target, tmp_path, classes, protocol,
                                               mechanism):
    """A client of a SASL listener authenticates on every connection (each broker, the
    coordinator) and is told that listener's addresses."""
    config = sasl_config(protocol, mechanism, "alice", USERS["alice"])
    if protocol == "SASL_SSL":
        config.update(tls_config(secure_target))
    round_trip(classes, properties(tmp_path / "client.properties", config),
               secure_target.bootstrap_for(protocol), protocol,
               open_names(secure_target, "User:alice"))


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_a_wrong_password_is_refused_at_once(secure_target, tmp_path, classes, mechanism):
    """Kafka's messages: PLAIN says why; SCRAM says only that the credentials were invalid."""
    config = sasl_config("SASL_PLAINTEXT", mechanism, "alice", "not-the-password")
    message = "Authentication failed: Invalid username or password" if mechanism == "PLAIN" \
        else ("Authentication failed during authentication due to invalid credentials with "
              f"SASL mechanism {mechanism}")
    found = refused(classes, config, tmp_path / "client.properties",
                    secure_target.bootstrap_for("SASL_PLAINTEXT"))
    assert found == {"partitionsFor": [f"{SASL_FAILED}: {message}"],
                     "send": [f"{SASL_FAILED}: {message}"]}


def test_ssl_without_a_client_certificate(secure_target, tmp_path, classes):
    """The client is User:ANONYMOUS, as ACLs name it."""
    config = {"security.protocol": "SSL", **tls_config(secure_target)}
    round_trip(classes, properties(tmp_path / "client.properties", config),
               secure_target.bootstrap_for("SSL"), "SSL",
               open_names(secure_target, "User:ANONYMOUS"))


def test_ssl_with_a_required_client_certificate(secure_target, tmp_path, classes):
    """The client is named by its certificate's subject, as ACLs name it."""
    certificate = secure_target.client_certificate("CN=alice")
    config = {"security.protocol": "SSL", **tls_config(secure_target, certificate)}
    round_trip(classes, properties(tmp_path / "client.properties", config),
               secure_target.bootstrap_for("MTLS"), "SSL",
               open_names(secure_target, "User:CN=alice"))


def test_ssl_without_the_required_client_certificate_fails(secure_target, tmp_path, classes):
    """The server ends the handshake with a fatal alert, which the client reports as an
    SslAuthenticationException at once; under TLS 1.3 the client has finished its side of the
    handshake already, so it says it failed on post-handshake messages.

    The alert is the TLS library's choice: Kafka's (the JDK's) sends bad_certificate for an
    empty certificate chain, mockbroker's (OpenSSL, through Python's ssl module, which lets no
    caller choose an alert) TLS 1.3's certificate_required."""
    config = {"security.protocol": "SSL", **tls_config(secure_target)}
    found = refused(classes, config, tmp_path / "client.properties",
                    secure_target.bootstrap_for("MTLS"))
    alert = "bad_certificate" if secure_target.mock is None else "certificate_required"
    chain = [f"{SSL_FAILED}: Failed to process post-handshake messages",
             f"javax.net.ssl.SSLHandshakeException: Received fatal alert: {alert}"]
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


def test_kafka_acls_adds_lists_and_removes_as_a_super_user(secure_target, tmp_path,
                                                           monkeypatch):
    """On topic names of the test's own: the listing of every ACL holds other tests' too."""
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", " ".join(SHORT_JVM))  # the tool's JVMs too
    admin = properties(tmp_path / "admin.properties", sasl_config(
        "SASL_PLAINTEXT", "SCRAM-SHA-512", ADMIN, USERS[ADMIN]))

    def acls(*args: str) -> str:
        return kafka_tool(ACL_TOOL, secure_target.bootstrap_for("SASL_PLAINTEXT"),
                          "--command-config", str(admin), *args)

    def mine(listing: str) -> dict[str, set[str]]:
        return {resource: entries for resource, entries in _acls(listing).items()
                if tag in resource}

    tag = secure_target.unique("acls")
    orders = f"resourceType=TOPIC, name={tag}-orders, patternType=LITERAL"
    app = f"resourceType=TOPIC, name={tag}-app-, patternType=PREFIXED"
    read = "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    write = "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"
    acls("--add", "--allow-principal", "User:alice", "--operation", "Read",
         "--topic", f"{tag}-orders")
    acls("--add", "--allow-principal", "User:alice", "--operation", "Write",
         "--resource-pattern-type", "prefixed", "--topic", f"{tag}-app-")
    assert mine(acls("--list")) == {orders: {read}, app: {write}}
    acls("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read",
         "--topic", f"{tag}-orders")
    assert mine(acls("--list")) == {app: {write}}


def test_an_exactly_once_streams_app_over_sasl_ssl(secure_target, stack, tmp_path):
    """Kafka Streams' exactly-once word count (``test_streams_eos.py``) with its every
    connection on a SASL_SSL listener, as SCRAM-SHA-512 user alice: its producers' transactions,
    its consumers' group and read_committed fetches, and the admin that makes its internal
    topics.  The test's own producer and reader use the PLAINTEXT listener beside it, as
    User:ANONYMOUS.

    The word count names its topics, app and reader groups ``lines-``, ``counts-``,
    ``wordcount-`` and ``reader-`` and a random suffix; this is the only test on the secured
    targets that uses those prefixes, so the ACLs granted on them serve it alone."""
    from tests.clients.test_streams_eos import count_words_once
    for prefix in ("lines-", "counts-", "wordcount-"):
        secure_target.grant("User:alice", prefix)
    for prefix in ("lines-", "counts-", "reader-"):
        secure_target.grant("User:ANONYMOUS", prefix)
    secured = {**sasl_config("SASL_SSL", "SCRAM-SHA-512", "alice", USERS["alice"]),
               **tls_config(secure_target)}
    app_id = count_words_once(stack, secure_target.bootstrap_for("PLAINTEXT"), tmp_path,
                              *(f"{key}={value}" for key, value in secured.items()),
                              app_bootstrap=secure_target.bootstrap_for("SASL_SSL"))
    if secure_target.mock is None:
        return
    # mockbroker's request log shows who sent what, and how
    mine = [r for r in secure_target.mock.admin.requests()
            if r.client_id and app_id in r.client_id]
    assert {r.listener for r in mine} == {"SASL_SSL"}
    authenticated = [r for r in mine
                     if r.api not in ("ApiVersions", "SaslHandshake", "SaslAuthenticate")]
    assert {(r.mechanism, r.principal) for r in authenticated} == \
        {("SCRAM-SHA-512", "User:alice")}
    assert "EndTxn" in {r.api for r in authenticated}, "no transaction ended in the request log"
