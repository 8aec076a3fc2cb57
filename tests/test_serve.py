"""``mockbroker serve`` as a user runs it: ready line, ApiVersions, signals, bad flags."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import confluent_kafka as ck
import pytest

import wire
from mockbroker import AdminClient
from mockbroker.handlers import REGISTRY
from tests.clients.helpers import RDKAFKA_LOG, wait_for

MOCKBROKER = [sys.executable, "-m", "mockbroker.cli"]
#: the environment without any MOCKBROKER_* variable of the caller's
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("MOCKBROKER_")}


def _ready(proc: subprocess.Popen) -> tuple[list[tuple[str, int]], str]:
    return parse_ready_line(proc.stdout.readline())


def parse_ready_line(line: str) -> tuple[list[tuple[str, int]], str]:
    """``mockbroker ready bootstrap=... admin=...`` as ([(host, port), ...], admin URL)."""
    assert line.startswith("mockbroker ready bootstrap="), line
    parts = dict(item.split("=", 1) for item in line.split()[2:])
    brokers = [(h, int(p)) for h, p in (hp.rsplit(":", 1) for hp in parts["bootstrap"].split(","))]
    return brokers, parts["admin"]


@pytest.fixture
def served(request):
    # ephemeral ports unless a test names its own (the default is Kafka's fixed 9092)
    args = ["--port", "0", *getattr(request, "param", [])]
    proc = subprocess.Popen([*MOCKBROKER, "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=CLEAN_ENV)
    try:
        yield proc, *_ready(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def _round_trip(sock: socket.socket, frame: bytes) -> bytes:
    sock.sendall(frame)
    (size,) = struct.unpack(">i", _read(sock, 4))
    return _read(sock, size)


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _api_versions_request(version: int, correlation_id: int) -> bytes:
    body = wire.request_class(18)(client_software_name="tests", client_software_version="1")
    return wire.encode_request(18, version, correlation_id, "tests", body)


@pytest.mark.parametrize("served", [["--brokers", "3"]], indirect=True)
def test_ready_line_health_and_api_versions_on_every_broker(served):
    proc, brokers, admin = served
    assert len(brokers) == 3 and len({port for _, port in brokers}) == 3
    with urllib.request.urlopen(f"{admin}/health", timeout=5) as response:
        assert json.load(response) == {"status": "ok"}
    for host, port in brokers:
        with socket.create_connection((host, port), timeout=5) as sock:
            for version in range(6):
                data = _round_trip(sock, _api_versions_request(version, 100 + version))
                correlation_id, body = wire.decode_response(18, version, data)
                assert correlation_id == 100 + version
                assert body.error_code == 0
                served = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
                assert served == {key: (lo, hi) for key, lo, hi in REGISTRY.api_versions()}
                # Kafka 4 reports Produce from 0 (for older librdkafka) but serves 3 and up
                assert served[0] == (0, 13) and served[18] == (0, 5) and served[3] == (0, 13)


def test_unsupported_api_versions_version_gets_v0_error_and_range(served):
    _, brokers, _ = served
    with socket.create_connection(brokers[0], timeout=5) as sock:
        frame = struct.pack(">hhih", 18, 99, 7, 5) + b"tests" + b"\x00"
        data = _round_trip(sock, struct.pack(">i", len(frame)) + frame)
        correlation_id, body = wire.decode_response(18, 0, data)
        assert correlation_id == 7
        assert body.error_code == wire.errors.UNSUPPORTED_VERSION
        assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 5)]
        # the connection stays usable: the client retries with a version we serve
        _, body = wire.decode_response(18, 3, _round_trip(sock, _api_versions_request(3, 8)))
        assert body.error_code == 0


@pytest.mark.parametrize("garbage", [
    # Produce v2: advertised (as Kafka 4 does) but not served, so the connection is closed
    struct.pack(">i", 12) + struct.pack(">hhih", 0, 2, 1, 0) + b"\x00\x01",
    struct.pack(">i", -1),
    struct.pack(">i", 200 * 1024 * 1024),
    struct.pack(">i", 8) + struct.pack(">hhi", 999, 0, 1),
    struct.pack(">i", 3) + b"\x00\x12\x00",  # shorter than any header
])
def test_bad_frames_close_only_their_connection(served, garbage):
    _, brokers, _ = served
    with socket.create_connection(brokers[0], timeout=5) as good, \
            socket.create_connection(brokers[0], timeout=5) as bad:
        bad.sendall(garbage)
        assert bad.recv(1) == b""  # closed by the broker
        _, body = wire.decode_response(18, 3, _round_trip(good, _api_versions_request(3, 1)))
        assert body.error_code == 0


def test_responses_come_back_in_request_order(served):
    _, brokers, _ = served
    with socket.create_connection(brokers[0], timeout=5) as sock:
        sock.sendall(b"".join(_api_versions_request(v % 6, 1000 + v) for v in range(20)))
        for v in range(20):
            (size,) = struct.unpack(">i", _read(sock, 4))
            correlation_id, _ = wire.decode_response(18, v % 6, _read(sock, size))
            assert correlation_id == 1000 + v


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_with_exit_code_zero(served, sig):
    proc, brokers, _ = served
    proc.send_signal(sig)
    assert proc.wait(10) == 0
    with pytest.raises(OSError):
        socket.create_connection(brokers[0], timeout=2)


def test_environment_configures_like_flags():
    env = dict(CLEAN_ENV, MOCKBROKER_BROKERS="2", MOCKBROKER_ADVERTISED_HOST="localhost",
               MOCKBROKER_PORT="0")
    proc = subprocess.Popen([*MOCKBROKER, "serve"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        brokers, admin = _ready(proc)
        assert [host for host, _ in brokers] == ["localhost", "localhost"]
        assert admin.startswith("http://localhost:")
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


@pytest.mark.parametrize("args,message", [
    (["serve", "--brokers", "0"], "--brokers"),
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--no-such-flag"], "--no-such-flag"),
    (["serve", "--num-partitions", "many"], "num_partitions"),
    (["serve", "--group-min-session-timeout-ms", "9", "--group-max-session-timeout-ms", "5"],
     "group_min_session_timeout_ms"),
    (["serve", "--topic", "orders"], "NAME:PARTITIONS"),
    ([], "command"),
    (["serve", "--user", "alice"], "argument --user: expected NAME:PASSWORD, got 'alice'"),
    (["serve", "--security-protocol", "SASL_SSH"], "argument --security-protocol: 'SASL_SSH'"),
    (["serve", "--listener", "PLAINTEXT", "--listener", "plaintext"],
     "--listener: each protocol once"),
    (["serve", "--security-protocol", "SSL", "--listener", "PLAINTEXT"],
     "give --security-protocol (one listener) or --listener (several), not both"),
    (["serve", "--sasl-mechanism", "GSSAPI"], "argument --sasl-mechanism: 'GSSAPI'"),
    (["serve", "--ssl-client-auth", "maybe"], "argument --ssl-client-auth"),
    (["serve", "--ssl-certificate-location", "/no/such.pem"], "no such file"),
    (["serve", "--admin-token", "two words"], "argument --admin-token"),
])
def test_bad_flags_are_one_line_errors_with_exit_code_two(args, message):
    result = subprocess.run([*MOCKBROKER, *args], capture_output=True, text=True, timeout=30,
                            env=CLEAN_ENV)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "mockbroker"
    assert script.exists()
    result = subprocess.run([str(script), "serve", "--brokers", "x"], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 2


@pytest.mark.parametrize("served", [["--topic", "orders:4", "--topic", "audit:1",
                                     "--auto-create-topics-enable", "false"]], indirect=True)
def test_topics_and_kafka_settings_from_flags(served):
    _, brokers, _ = served
    cls = wire.request_class(3)
    body = cls(topics=[cls.MetadataRequestTopic(name=n) for n in ("orders", "audit", "nope")],
               allow_auto_topic_creation=True)
    with socket.create_connection(brokers[0], timeout=5) as sock:
        _, meta = wire.decode_response(3, 12, _round_trip(sock, wire.encode_request(3, 12, 1, "t", body)))
    got = {t.name: (t.error_code, len(t.partitions)) for t in meta.topics}
    assert got == {"orders": (0, 4), "audit": (0, 1),
                   "nope": (wire.errors.UNKNOWN_TOPIC_OR_PARTITION, 0)}


@pytest.mark.parametrize("served", [["--host", "0.0.0.0"]], indirect=True)
def test_wildcard_host_advertises_a_loopback_address_not_the_wildcard(served):
    proc, brokers, admin = served
    assert brokers[0][0] == "127.0.0.1" and admin.startswith("http://127.0.0.1:")
    with socket.create_connection(brokers[0], timeout=5) as sock:
        _, body = wire.decode_response(18, 3, _round_trip(sock, _api_versions_request(3, 1)))
        assert body.error_code == 0
    proc.terminate()
    assert proc.wait(10) == 0
    note = proc.stderr.read()
    assert "advertising 127.0.0.1" in note and "--advertised-host" in note


@pytest.mark.parametrize("served", [["--host", "0.0.0.0", "--advertised-host", "localhost"]],
                         indirect=True)
def test_wildcard_host_with_advertised_host_advertises_it(served):
    proc, brokers, admin = served
    assert brokers[0][0] == "localhost" and admin.startswith("http://localhost:")
    proc.terminate()
    assert proc.wait(10) == 0
    assert proc.stderr.read() == ""


def test_a_port_in_use_is_a_one_line_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([*MOCKBROKER, "serve", "--port", str(port)], capture_output=True,
                                text=True, timeout=30)
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "address already in use" in lines[0] and str(port) in lines[0]


def test_topic_lists_from_the_environment_add_to_flags():
    env = dict(CLEAN_ENV, MOCKBROKER_TOPIC="orders:4, audit:1")
    proc = subprocess.Popen([*MOCKBROKER, "serve", "--port", "0", "--topic", "extra:2"],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        brokers, _ = _ready(proc)
        cls = wire.request_class(3)
        body = cls(topics=None, allow_auto_topic_creation=False)
        with socket.create_connection(brokers[0], timeout=5) as sock:
            _, meta = wire.decode_response(3, 12, _round_trip(sock, wire.encode_request(3, 12, 1, "t", body)))
        got = {t.name: len(t.partitions) for t in meta.topics if not t.name.startswith("__")}
        assert got == {"orders": 4, "audit": 1, "extra": 2}
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_in_process_cluster_on_every_interface_advertises_loopback_and_ipv6_in_brackets():
    from mockbroker import AdminClient, MockCluster

    with MockCluster(host="0.0.0.0") as wildcard:
        assert wildcard.bootstrap_servers.startswith("127.0.0.1:")
        assert AdminClient(wildcard.admin_url).health()  # over HTTP, not in-process
    with MockCluster(host="::1") as ipv6:
        assert ipv6.bootstrap_servers.startswith("[::1]:")
        assert ipv6.admin_url.startswith("http://[::1]:") and AdminClient(ipv6.admin_url).health()


#: what Kubernetes puts in every pod of a namespace with a Service named mockbroker
SERVICE_LINKS = {
    "MOCKBROKER_PORT": "tcp://10.96.0.12:9092",
    "MOCKBROKER_SERVICE_HOST": "10.96.0.12",
    "MOCKBROKER_SERVICE_PORT": "9092",
    "MOCKBROKER_SERVICE_PORT_KAFKA": "9092",
    "MOCKBROKER_PORT_9092_TCP": "tcp://10.96.0.12:9092",
    "MOCKBROKER_PORT_9092_TCP_PROTO": "tcp",
    "MOCKBROKER_PORT_9092_TCP_PORT": "9092",
    "MOCKBROKER_PORT_9092_TCP_ADDR": "10.96.0.12",
}


def _serve_on_kafkas_port(args: list[str], env: dict[str, str]):
    """Run ``mockbroker serve`` that should take port 9092; if another process on this machine
    holds it, wait until it is free and try again.  Returns (process, brokers, admin)."""
    deadline = time.monotonic() + 120
    while True:
        proc = subprocess.Popen([*MOCKBROKER, "serve", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        line = proc.stdout.readline()
        if line:
            return proc, *parse_ready_line(line)
        proc.wait(10)
        stderr = proc.stderr.read()
        assert "address already in use" in stderr and time.monotonic() < deadline, stderr
        while time.monotonic() < deadline:  # until the port is free
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", 9092)) != 0:
                    break
            time.sleep(0.2)


def _stop_and_read_stderr(proc: subprocess.Popen) -> str:
    proc.terminate()
    assert proc.wait(10) == 0
    return proc.stderr.read()


def test_bare_serve_listens_on_kafkas_port_on_loopback():
    proc, brokers, admin = _serve_on_kafkas_port([], CLEAN_ENV)
    try:
        assert brokers == [("127.0.0.1", 9092)]
        assert admin.startswith("http://127.0.0.1:")
        with socket.create_connection(("127.0.0.1", 9092), timeout=5) as sock:
            _, body = wire.decode_response(18, 3, _round_trip(sock, _api_versions_request(3, 1)))
            assert body.error_code == 0
    finally:
        assert _stop_and_read_stderr(proc) == ""


def test_kubernetes_service_links_are_ignored_with_a_note():
    # the container's own variables, overridden by the Service's links as a pod sees them
    env = {**CLEAN_ENV, "MOCKBROKER_HOST": "127.0.0.1", "MOCKBROKER_BROKERS": "2",
           **SERVICE_LINKS}
    proc, brokers, _ = _serve_on_kafkas_port([], env)
    try:
        assert brokers == [("127.0.0.1", 9092), ("127.0.0.1", 9093)]
    finally:
        stderr = _stop_and_read_stderr(proc)
    [note] = stderr.splitlines()
    assert note.startswith("mockbroker: note: ignoring ") and "service link" in note, note
    assert all(name in note for name in SERVICE_LINKS), note


def test_variables_that_name_no_setting_do_not_stop_serve():
    env = {**CLEAN_ENV, "MOCKBROKER_SPARK_JARS": "/opt/jars", "MOCKBROKER_SPARK_LOG_LEVEL": "WARN",
           "MOCKBROKER_BROKER": "3"}
    proc = subprocess.Popen([*MOCKBROKER, "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        brokers, _ = _ready(proc)
        assert len(brokers) == 1
    finally:
        stderr = _stop_and_read_stderr(proc)
    # the Spark fixture's own variables pass silently; a misspelt setting is pointed out
    [note] = stderr.splitlines()
    assert "MOCKBROKER_BROKER:" in note and "no such setting" in note and "SPARK" not in note


@pytest.mark.parametrize("name,value,message", [
    ("MOCKBROKER_PORT", "abc", "expected a port number, got 'abc'"),
    ("MOCKBROKER_HTTP_PORT", "70000", "not a port number: 70000"),
    ("MOCKBROKER_BROKERS", "0", "must be at least 1"),
    ("MOCKBROKER_NUM_PARTITIONS", "many", "num_partitions"),
    ("MOCKBROKER_AUTO_CREATE_TOPICS_ENABLE", "maybe", "auto_create_topics_enable"),
    ("MOCKBROKER_TOPIC", "orders", "NAME:PARTITIONS"),
    ("MOCKBROKER_USER", "alice:secret,bob", "expected NAME:PASSWORD, got 'bob'"),
    ("MOCKBROKER_LISTENER", "PLAINTEXT,SASL_SSH", "'SASL_SSH' is not one of"),
    ("MOCKBROKER_AUTHORIZER", "maybe", "expected true or false"),
    ("MOCKBROKER_CONNECTIONS_MAX_REAUTH_MS", "soon", "expected an integer"),
])
def test_a_bad_value_in_a_setting_variable_is_a_one_line_error_naming_it(name, value, message):
    result = subprocess.run([*MOCKBROKER, "serve", "--port", "0"], capture_output=True,
                            text=True, timeout=30, env={**CLEAN_ENV, name: value})
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mockbroker: error: {name} "), result.stderr
    assert message in lines[0], lines[0]


def test_flags_on_the_command_line_win_over_the_environment():
    env = {**CLEAN_ENV, "MOCKBROKER_PORT": "1", "MOCKBROKER_ADVERTISED_HOST": "localhost"}
    proc = subprocess.Popen([*MOCKBROKER, "serve", "--port", "0", "--advertised-host",
                             "127.0.0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        brokers, _ = _ready(proc)
        assert brokers[0][0] == "127.0.0.1" and brokers[0][1] != 1
    finally:
        assert _stop_and_read_stderr(proc) == ""


@pytest.mark.parametrize("command", [
    [str(Path(sys.executable).parent / "mockbroker")],
    [sys.executable, "-m", "mockbroker"],
], ids=["console-script", "python-m"])
def test_version_and_python_m_run_the_same_command(command):
    from mockbroker import __version__

    result = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout) == (0, f"mockbroker {__version__}\n")
    result = subprocess.run([*command, "serve", "--brokers", "x"], capture_output=True,
                            text=True, timeout=30, env=CLEAN_ENV)
    assert result.returncode == 2
    assert result.stderr == "mockbroker: error: argument --brokers: expected a number, got 'x'\n"


# -- security: listeners, SASL users, TLS and the admin token ----------------------------------

def ready_fields(line: str) -> dict[str, str]:
    """The ready line's ``key=value`` fields (bootstrap, admin, and listeners, ca and token
    when they apply)."""
    assert line.startswith("mockbroker ready bootstrap="), line
    return dict(item.split("=", 1) for item in line.split()[2:])


@contextlib.contextmanager
def serving(*args: str, env: dict[str, str] | None = None):
    """``mockbroker serve --port 0 ARGS``: (process, ready-line fields); stopped at the end."""
    proc = subprocess.Popen([*MOCKBROKER, "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or CLEAN_ENV)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.wait(10) is not None else "no ready line"
        yield proc, ready_fields(line)
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


def _sasl(bootstrap: str, password: str, **more) -> dict:
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice",
            "sasl.password": password, "logger": RDKAFKA_LOG, **more}


def test_a_sasl_listener_with_a_user_authenticates_a_producer():
    with serving("--security-protocol", "SASL_PLAINTEXT", "--user", "alice:secret",
                 "--topic", "secure:1") as (proc, ready):
        assert set(ready) == {"bootstrap", "admin"}  # no TLS, admin API on loopback
        delivered = []
        producer = ck.Producer(_sasl(ready["bootstrap"], "secret"))
        producer.produce("secure", b"authenticated",
                         on_delivery=lambda err, msg: delivered.append(err))
        assert producer.flush(15) == 0 and delivered == [None]

        errors = []
        intruder = ck.Producer(_sasl(ready["bootstrap"], "guess",
                                     error_cb=lambda err: errors.append(err)))
        intruder.produce("secure", b"refused")
        wait_for(lambda: intruder.poll(0.1) is not None and any(
            e.code() == ck.KafkaError._AUTHENTICATION for e in errors), "the refusal")
        intruder.purge()

        users = AdminClient(ready["admin"]).users()
        assert [(u.name, u.mechanisms) for u in users] == \
            [("alice", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])]
        proc.terminate()
        assert proc.wait(10) == 0


def _tls_handshake(address: tuple[str, int], ca: str) -> str:
    """The TLS version negotiated with a listener whose certificate ``ca`` must vouch for."""
    context = ssl.create_default_context(cafile=ca)
    with socket.create_connection(address, timeout=5) as raw, \
            context.wrap_socket(raw, server_hostname=address[0]) as tls:
        return tls.version()


def test_several_listeners_are_all_in_the_ready_line_with_the_ca():
    with serving("--listener", "PLAINTEXT", "--listener", "SASL_SSL", "--brokers", "2",
                 "--user", "alice:secret") as (proc, ready):
        listeners = [item.split("://", 1) for item in ready["listeners"].split(",")]
        assert [name for name, _ in listeners] == ["PLAINTEXT"] * 2 + ["SASL_SSL"] * 2
        addresses = {name: [(h, int(p)) for h, p in (a.rsplit(":", 1) for a in
                                                      [a for n, a in listeners if n == name])]
                     for name in ("PLAINTEXT", "SASL_SSL")}
        assert ready["bootstrap"] == ",".join(a for n, a in listeners if n == "PLAINTEXT")
        assert len({port for pairs in addresses.values() for _, port in pairs}) == 4
        ca = ready["ca"]
        assert Path(ca).read_text().startswith("-----BEGIN CERTIFICATE-----")
        assert "token" not in ready
        with socket.create_connection(addresses["PLAINTEXT"][1], timeout=5) as sock:
            _, body = wire.decode_response(18, 3, _round_trip(sock, _api_versions_request(3, 1)))
            assert body.error_code == 0
        for address in addresses["SASL_SSL"]:  # TLS with a certificate the CA signed
            assert _tls_handshake(address, ca) in ("TLSv1.2", "TLSv1.3")
        proc.terminate()
        assert proc.wait(10) == 0
    assert not Path(ca).exists()  # the generated CA goes with the server


def _get(url: str, token: str | None = None, ca: str | None = None):
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    context = ssl.create_default_context(cafile=ca) if ca else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, json.load(response), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc), exc.headers


def test_off_loopback_the_ready_line_shows_the_admin_token_the_api_requires():
    with serving("--host", "0.0.0.0") as (proc, ready):
        token = ready["token"]
        assert len(token) >= 32 and "ca" not in ready
        assert _get(ready["admin"] + "/health")[:2] == (200, {"status": "ok"})
        status, body, headers = _get(ready["admin"] + "/brokers")
        assert status == 401 and "requires a token" in body["error"]
        assert headers["WWW-Authenticate"].startswith("Bearer")
        status, body, _ = _get(ready["admin"] + "/brokers", token)
        assert status == 200 and [b["id"] for b in body] == [0]
    with serving("--host", "0.0.0.0") as (_, again):
        assert again["token"] != token  # a new one each start


def test_admin_token_and_tls_from_the_environment():
    env = {**CLEAN_ENV, "MOCKBROKER_ADMIN_TOKEN": "s3cret-token", "MOCKBROKER_ADMIN_TLS": "true"}
    with serving(env=env) as (proc, ready):
        assert ready["admin"].startswith("https://127.0.0.1:")
        assert ready["token"] == "s3cret-token"
        ca = ready["ca"]
        admin = AdminClient(ready["admin"], token="s3cret-token", ca_location=ca)
        assert admin.health() and [b.id for b in admin.brokers()] == [0]
        status, body, _ = _get(ready["admin"] + "/topics", "wrong", ca)
        assert status == 401 and "wrong token" in body["error"]
        with pytest.raises(urllib.error.URLError):  # the CA is not the system's
            urllib.request.urlopen(ready["admin"] + "/health", timeout=10)
        proc.terminate()
        assert proc.wait(10) == 0


def test_your_own_certificate_from_flags_and_variables(tmp_path):
    from mockbroker.io.kafka.tls import TlsMaterial

    mine = TlsMaterial.generate(tmp_path, ["127.0.0.1"])
    env = {**CLEAN_ENV, "MOCKBROKER_SSL_CERTIFICATE_LOCATION": mine.server.cert_location,
           "MOCKBROKER_SSL_KEY_LOCATION": mine.server.key_location}
    with serving("--security-protocol", "SSL", "--ssl-ca-location", mine.ca_location,
                 env=env) as (proc, ready):
        assert ready["ca"] == mine.ca_location
        host, port = ready["bootstrap"].rsplit(":", 1)
        assert _tls_handshake((host, int(port)), mine.ca_location) in ("TLSv1.2", "TLSv1.3")
    assert Path(mine.ca_location).exists()  # the user's files stay
    result = subprocess.run([*MOCKBROKER, "serve", "--port", "0", "--security-protocol", "SSL",
                             "--ssl-client-auth", "required"], capture_output=True, text=True,
                            timeout=30, env=env)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "--ssl-client-auth required" in line and "--ssl-ca-location" in line


def test_serve_keeps_freed_memory_unless_the_environment_tunes_malloc():
    # in a fresh interpreter: the tuning is for serve's own process, not for this one
    code = ("import json; from mockbroker.cli.serve import keep_freed_memory; "
            "print(json.dumps([keep_freed_memory({}), "
            "keep_freed_memory({'MALLOC_TRIM_THRESHOLD_': '0'}), "
            "keep_freed_memory({'GLIBC_TUNABLES': 'glibc.malloc.hugetlb=1'})]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    # this platform's C library is glibc (the container's too): its malloc takes the settings
    assert json.loads(done.stdout) == [True, False, False]


def test_a_schema_registry_beside_the_brokers_from_flags_and_variables():
    with serving("--schema-registry") as (proc, ready):
        assert set(ready) == {"bootstrap", "admin", "schema_registry"}
        url = ready["schema_registry"]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/schemas/types", timeout=10) as answer:
            assert answer.headers["Content-Type"] == "application/vnd.schemaregistry.v1+json"
            assert json.loads(answer.read()) == ["JSON", "PROTOBUF", "AVRO"]
    env = {**CLEAN_ENV, "MOCKBROKER_SCHEMA_REGISTRY": "true",
           "MOCKBROKER_SCHEMA_REGISTRY_PORT": "0"}
    with serving(env=env) as (proc, ready):
        with urllib.request.urlopen(ready["schema_registry"] + "/subjects", timeout=10) as got:
            assert json.loads(got.read()) == []
    with serving() as (proc, ready):
        assert "schema_registry" not in ready  # off unless asked for
