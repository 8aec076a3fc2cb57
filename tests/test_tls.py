"""TLS material and contexts of :mod:`mockbroker.io.kafka.tls`: certificates checked by real TLS
handshakes on 127.0.0.1 (Python's ``ssl`` client trusting only our CA), Kafka's
``ssl.client.auth`` modes, and principal names written the way Java writes them."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import queue
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.name import _ASN1Type
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from mockbroker.io.kafka.tls import (ANONYMOUS, STORE_PASSWORD, CertificateAuthority,
                               ClientCertificate, TlsMaterial, parse_subject, principal_name,
                               server_context)

#: a bound on every wait of a test, so that a broken handshake fails the test, never hangs it
TIMEOUT = 10.0


class TlsServer:
    """A TLS server on a thread, on 127.0.0.1: answers each client with the principal name of
    its certificate and a newline, then hangs up.  :meth:`outcome` tells what it made of each
    client, in turn: the principal name, or the error of the handshake."""

    def __init__(self, context: ssl.SSLContext):
        self._context = context
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._outcomes: queue.Queue[str | Exception] = queue.Queue()
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name="tls-server", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with self._listener:
            while True:
                conn, _ = self._listener.accept()
                if self._stopping:
                    conn.close()
                    return
                conn.settimeout(TIMEOUT)
                try:
                    with self._context.wrap_socket(conn, server_side=True) as tls:
                        name = principal_name(tls.getpeercert(binary_form=True))
                        tls.sendall(name.encode() + b"\n")
                    self._outcomes.put(name)
                except OSError as exc:  # ssl.SSLError included
                    self._outcomes.put(exc)
                    conn.close()

    def outcome(self) -> str | Exception:
        return self._outcomes.get(timeout=TIMEOUT)

    def stop(self) -> None:
        self._stopping = True
        socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT).close()
        self._thread.join(TIMEOUT)


@pytest.fixture
def serve() -> Iterator[Callable[[ssl.SSLContext], TlsServer]]:
    servers: list[TlsServer] = []

    def start(context: ssl.SSLContext) -> TlsServer:
        servers.append(TlsServer(context))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def material(tmp_path: Path) -> TlsMaterial:
    return TlsMaterial.generate(tmp_path / "tls", ["broker.test", "10.1.2.3"])


def client_context(ca_location: str, client: ClientCertificate | None = None, *,
                   strict: bool = True) -> ssl.SSLContext:
    """A client's context trusting ``ca_location`` only, checking host names, and presenting
    ``client``'s certificate if given.  Strict X.509 checks, as Python 3.13's defaults have."""
    context = ssl.create_default_context(cafile=ca_location)
    if strict:
        context.verify_flags |= ssl.VERIFY_X509_STRICT
    if client is not None:
        context.load_cert_chain(client.cert_location, client.key_location)
    return context


def ask(server: TlsServer, context: ssl.SSLContext, host: str = "localhost") -> str:
    """Connects to ``server`` as ``host`` and reads its answer (up to the hang-up)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = tls.recv(1024)
                if not chunk:
                    break
                answer += chunk
            return answer.decode()


# ---------------------------------------------------------------------------------------------
# Handshakes


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "broker.test", "BROKER.test"])
def test_the_broker_certificate_verifies_for_its_hosts(material, serve, host):
    server = serve(material.server_context())
    assert ask(server, client_context(material.ca_location), host) == "ANONYMOUS\n"
    assert server.outcome() == ANONYMOUS


def test_another_host_name_fails_verification(material, serve):
    server = serve(material.server_context())
    with pytest.raises(ssl.SSLCertVerificationError) as raised:
        ask(server, client_context(material.ca_location), "elsewhere.test")
    assert "Hostname mismatch" in raised.value.verify_message
    assert isinstance(server.outcome(), ssl.SSLError)


def test_a_client_trusting_another_ca_fails_verification(material, serve, tmp_path):
    other = CertificateAuthority.create(tmp_path / "other", "another CA")
    server = serve(material.server_context())
    with pytest.raises(ssl.SSLCertVerificationError) as raised:
        ask(server, client_context(other.ca_location))
    # (the server sends its CA's certificate along, OpenSSL finding it among the trusted ones)
    assert raised.value.verify_message in {"unable to get local issuer certificate",
                                           "self-signed certificate in certificate chain"}
    assert isinstance(server.outcome(), ssl.SSLError)


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
def test_tls_1_1_is_refused(material, serve):
    server = serve(material.server_context())
    context = client_context(material.ca_location)
    context.set_ciphers("DEFAULT:@SECLEVEL=0")  # a client that offers TLS 1.1 at all
    context.minimum_version = context.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises(ssl.SSLError) as raised:
        ask(server, context)
    assert raised.value.reason == "TLSV1_ALERT_PROTOCOL_VERSION"
    refused = server.outcome()
    assert isinstance(refused, ssl.SSLError)
    assert refused.reason == "UNSUPPORTED_PROTOCOL"


def test_required_client_auth_gives_the_principal_of_the_certificate(material, serve):
    server = serve(material.server_context("required"))
    alice = material.issue_client("CN=alice,OU=eng")
    assert ask(server, client_context(material.ca_location, alice)) == "CN=alice,OU=eng\n"
    assert server.outcome() == "CN=alice,OU=eng"
    assert alice.principal == "CN=alice,OU=eng"


def test_required_client_auth_refuses_a_client_without_certificate(material, serve):
    """TLS 1.3: the client's side of the handshake is over before the server checks the
    client's certificate, so the client learns of the refusal on its first read."""
    server = serve(material.server_context("required"))
    with pytest.raises(ssl.SSLError) as raised:
        ask(server, client_context(material.ca_location))
    assert raised.value.reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED"
    refused = server.outcome()
    assert isinstance(refused, ssl.SSLError)
    assert refused.reason == "PEER_DID_NOT_RETURN_A_CERTIFICATE"


def test_required_client_auth_refuses_a_client_without_certificate_over_tls_1_2(material,
                                                                                serve):
    server = serve(material.server_context("required"))
    context = client_context(material.ca_location)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises(ssl.SSLError) as raised:
        ask(server, context)
    assert raised.value.reason == "SSLV3_ALERT_HANDSHAKE_FAILURE"
    assert isinstance(server.outcome(), ssl.SSLError)


def test_required_client_auth_refuses_a_certificate_of_another_ca(material, serve, tmp_path):
    other = CertificateAuthority.create(tmp_path / "other", "another CA")
    mallory = other.issue_client("CN=mallory")
    server = serve(material.server_context("required"))
    with pytest.raises(ssl.SSLError) as raised:
        ask(server, client_context(material.ca_location, mallory))
    assert raised.value.reason == "TLSV1_ALERT_UNKNOWN_CA"
    refused = server.outcome()
    assert isinstance(refused, ssl.SSLCertVerificationError)


def test_requested_client_auth_without_certificate_is_anonymous(material, serve):
    server = serve(material.server_context("requested"))
    assert ask(server, client_context(material.ca_location)) == "ANONYMOUS\n"
    assert server.outcome() == ANONYMOUS


def test_requested_client_auth_with_certificate_gives_its_principal(material, serve):
    server = serve(material.server_context("requested"))
    bob = material.issue_client("CN=bob,OU=ops,O=acme,C=FR")
    assert ask(server, client_context(material.ca_location, bob)) == "CN=bob,OU=ops,O=acme,C=FR\n"
    assert server.outcome() == "CN=bob,OU=ops,O=acme,C=FR"


def test_no_client_auth_ignores_a_client_certificate(material, serve):
    server = serve(material.server_context("none"))
    alice = material.issue_client("CN=alice")
    assert ask(server, client_context(material.ca_location, alice)) == "ANONYMOUS\n"


def test_asyncio_listener_reads_the_principal_from_the_ssl_object(material):
    """The way the broker's listener does it: ``start_server(ssl=...)`` and the transport's
    ``ssl_object``."""
    alice = material.issue_client("CN=alice,OU=eng")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.write(principal_name(peer).encode() + b"\n")
        await writer.drain()
        writer.close()

    async def main() -> tuple[bytes, bytes]:
        server = await asyncio.start_server(handle, "127.0.0.1", 0,
                                            ssl=material.server_context("required"))
        port = server.sockets[0].getsockname()[1]
        answers = []
        async with server:
            for client in (alice, None):
                try:
                    reader, writer = await asyncio.open_connection(
                        "127.0.0.1", port, server_hostname="localhost",
                        ssl=client_context(material.ca_location, client))
                    answers.append(await asyncio.wait_for(reader.read(), TIMEOUT))
                    writer.close()
                except OSError:  # the refusal, where the loop passes the server's alert on
                    answers.append(b"")
        return answers[0], answers[1]

    with_certificate, without = asyncio.run(main())
    assert with_certificate == b"CN=alice,OU=eng\n"
    # without a certificate the client gets no answer (asyncio's server drops the connection;
    # it does not send the alert a blocking server does)
    assert without == b""


def test_a_users_own_certificate_and_encrypted_key(tmp_path, serve):
    """server_context takes any PEM certificate and key: here a self-signed RSA one made
    elsewhere, its key encrypted."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "users-broker")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), False)
        .sign(key, hashes.SHA256()))
    cert_location, key_location = tmp_path / "mine.crt", tmp_path / "mine.key"
    cert_location.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_location.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"s3cret")))
    server = serve(server_context(cert_location, key_location, key_password="s3cret"))
    context = client_context(str(cert_location), strict=False)
    assert ask(server, context) == "ANONYMOUS\n"


# ---------------------------------------------------------------------------------------------
# server_context's arguments


@pytest.mark.parametrize("client_auth", ["need", "want", "REQUIRED", "", None])
def test_an_unknown_client_auth_is_a_value_error(material, client_auth):
    with pytest.raises(ValueError, match="'required', 'requested', 'none'"):
        server_context(material.server.cert_location, material.server.key_location,
                       client_auth=client_auth, ca_location=material.ca_location)


@pytest.mark.parametrize("client_auth", ["required", "requested"])
def test_client_auth_needs_the_ca(material, client_auth):
    with pytest.raises(ValueError, match="needs ca_location"):
        server_context(material.server.cert_location, material.server.key_location,
                       client_auth=client_auth)


def test_the_context_asks_for_tls_1_2_and_the_verify_mode(material):
    modes = {mode: material.server_context(mode).verify_mode
             for mode in ("required", "requested", "none")}
    assert modes == {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL,
                     "none": ssl.CERT_NONE}
    assert material.server_context().minimum_version == ssl.TLSVersion.TLSv1_2


# ---------------------------------------------------------------------------------------------
# The files


def _load(location: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(Path(location).read_bytes())


def test_the_broker_certificate(material):
    certificate = _load(material.server.cert_location)
    alt_names = certificate.extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert alt_names.get_values_for_type(x509.DNSName) == ["broker.test", "localhost"]
    assert alt_names.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("10.1.2.3"), ipaddress.ip_address("127.0.0.1")]
    usage = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert certificate.issuer == _load(material.ca_location).subject
    now = datetime.datetime.now(datetime.timezone.utc)
    before = now - certificate.not_valid_before_utc
    assert datetime.timedelta(hours=23) < before < datetime.timedelta(hours=25)
    lifetime = certificate.not_valid_after_utc - now
    assert datetime.timedelta(days=3649) < lifetime < datetime.timedelta(days=3651)


def test_hosts_are_deduplicated_and_addresses_recognised(tmp_path):
    ca = CertificateAuthority.create(tmp_path)
    server = ca.issue_server(["LocalHost", "[::1]", "127.0.0.1", "b1.test"], name="b1")
    assert server.hosts == ["localhost", "::1", "127.0.0.1", "b1.test"]
    with pytest.raises(ValueError, match="list of host names"):
        ca.issue_server("localhost")


def test_the_client_certificate(material):
    alice = material.issue_client("CN=alice,OU=eng,O=acme")
    certificate = _load(alice.cert_location)
    usage = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    # RFC 4514 writes the last RDN of the ASN.1 sequence first
    assert [rdn.rfc4514_string() for rdn in certificate.subject.rdns] == [
        "O=acme", "OU=eng", "CN=alice"]
    assert Path(alice.cert_location).name == "client-alice.pem"


def test_keys_and_keystores_are_private(material):
    alice = material.issue_client("CN=alice")
    for location in (material.ca.key_location, material.server.key_location,
                     material.server.pkcs12_location, alice.key_location,
                     alice.pkcs12_location):
        assert Path(location).stat().st_mode & 0o777 == 0o600, location
    assert Path(material.ca_location).stat().st_mode & 0o777 == 0o644


def test_the_pkcs12_keystore(material):
    alice = material.issue_client("CN=alice")
    store = pkcs12.load_pkcs12(Path(alice.pkcs12_location).read_bytes(),
                               STORE_PASSWORD.encode())
    assert store.cert is not None and store.cert.certificate == alice.certificate
    assert [ca.certificate for ca in store.additional_certs] == [material.ca.certificate]
    assert isinstance(store.key, ec.EllipticCurvePrivateKey)
    assert pkcs12.load_pkcs12(alice.keystore("other"), b"other").cert is not None
    with pytest.raises(ValueError):
        pkcs12.load_pkcs12(alice.keystore("other"), b"wrong")


def test_the_truststore(material):
    store = pkcs12.load_pkcs12(Path(material.truststore_location).read_bytes(),
                               STORE_PASSWORD.encode())
    assert store.key is None
    assert [entry.certificate for entry in store.additional_certs] == [
        material.ca.certificate]


def jdk_tool(name: str) -> str:
    """A JDK program (java, keytool): the test command needs Java 17 (README), so its absence
    fails the test, saying so."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} not found: the tests need a JDK (Java 17) on PATH")
    return found


def test_java_reads_the_truststore_and_keystore(material):
    alice = material.issue_client("CN=alice")
    listings = {}
    for kind, location in (("truststore", material.truststore_location),
                           ("keystore", alice.pkcs12_location)):
        listings[kind] = subprocess.run(
            [jdk_tool("keytool"), "-list", "-keystore", location, "-storetype", "PKCS12",
             "-storepass", STORE_PASSWORD], capture_output=True, text=True, check=True,
            timeout=60).stdout
    assert "PrivateKeyEntry" in listings["keystore"]
    assert "trustedCertEntry" in listings["truststore"]


# ---------------------------------------------------------------------------------------------
# Subjects


@pytest.mark.parametrize(("subject", "expected"), [
    ("CN=alice,OU=eng,O=acme", "CN=alice,OU=eng,O=acme"),
    ("cn=alice, ou=eng , o=acme", "CN=alice,OU=eng,O=acme"),
    ("CN=alice,OU=eng,O=acme,L=Paris,ST=IDF,C=FR", "CN=alice,OU=eng,O=acme,L=Paris,ST=IDF,C=FR"),
    ("CN=a\\,b\\+c,O=x=y#z", "CN=a\\,b\\+c,O=x\\=y\\#z"),
    ("CN=\\#hash,O=\\ lead,OU=trail\\ ", "CN=\\#hash,O=\\ lead,OU=trail\\ "),
    ("CN=caf\\C3\\A9,O=\u20ac", "CN=caf\u00e9,O=\u20ac"),
    ("UID=7+CN=x,DC=example,DC=com", "CN=x+UID=7,DC=example,DC=com"),
    ("CN=bob,emailAddress=bob@example.com", "CN=bob,1.2.840.113549.1.9.1=#16"
     "0f626f62406578616d706c652e636f6d"),
    ("2.5.4.3=dotted", "CN=dotted"),
])
def test_subjects_round_trip_to_principals(material, subject, expected):
    """RFC 4514 in; the principal name, as Java writes it, out (RDNs kept in the order written;
    within an RDN, DER's order)."""
    client = material.issue_client(subject, name="c")
    assert client.principal == expected


@pytest.mark.parametrize(("subject", "complaint"), [
    ("", "empty subject"),
    ("   ", "empty subject"),
    ("alice", "is not TYPE=value"),
    ("CN=alice,", "is not TYPE=value"),
    ("FOO=bar", "unknown attribute type 'FOO'"),
    ("CN=alice,C=France", "bad C value"),
    ("CN=", "bad CN value"),
    ("CN=a;b", "must be escaped"),
    ("CN=a\"b", "must be escaped"),
    ("CN=alice\\", "lone backslash"),
    ("CN=#414243", "hex-encoded values"),
    ("CN=\\FF", "not UTF-8"),
    ("CN=a+CN=a", "duplicate"),
])
def test_a_bad_subject_is_a_value_error(material, subject, complaint):
    with pytest.raises(ValueError, match=complaint):
        parse_subject(subject)
    with pytest.raises(ValueError, match=complaint):
        material.issue_client(subject)


# ---------------------------------------------------------------------------------------------
# Principal names, checked against what JDK 17's X500Principal.getName() gives


def _der(subject: x509.Name) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "issuer")])
    certificate = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
        .public_key(key.public_key()).serial_number(1).not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return certificate.public_bytes(serialization.Encoding.DER)


def _rdns(*rdns: list[tuple[ObjectIdentifier, str | bytes, _ASN1Type | None]]) -> x509.Name:
    """A name from its RDNs in ASN.1 order (the most general first)."""
    def attribute(oid, value, kind):
        return x509.NameAttribute(oid, value) if kind is None else x509.NameAttribute(
            oid, value, kind)
    return x509.Name([x509.RelativeDistinguishedName([attribute(*a) for a in rdn])
                      for rdn in rdns])


CN, O, OU = NameOID.COMMON_NAME, NameOID.ORGANIZATION_NAME, NameOID.ORGANIZATIONAL_UNIT_NAME
#: subjects in ASN.1 order, and what Java 17 names them
JAVA_NAMES = [
    (_rdns([(O, "acme", None)], [(OU, "eng", None)], [(CN, "alice", None)]),
     "CN=alice,OU=eng,O=acme"),
    (_rdns([(O, "nul\0byte", None)], [(CN, "cr\r", None)]), "CN=cr\\\r,O=nul\\00byte"),
    (_rdns([(O, "  two", None)], [(CN, "a,b+c;d<e>f\"g\\h=i#j", None)]),
     "CN=a\\,b\\+c\\;d\\<e\\>f\\\"g\\\\h\\=i\\#j,O=\\ \\ two"),
    (_rdns([(CN, "visible", _ASN1Type.VisibleString)]), "CN=#1a0776697369626c65"),
    (_rdns([(O, "ia5", _ASN1Type.IA5String)], [(CN, "t61", _ASN1Type.T61String)]),
     "CN=t61,O=ia5"),
    # Java reads a BMPString's bytes as UTF-8, and writes a UniversalString in hex
    (_rdns([(CN, "bmp\u00e9", _ASN1Type.BMPString)], [(O, "u", _ASN1Type.UniversalString)]),
     "O=#1c0400000075,CN=\\00b\\00m\\00p\\00\ufffd"),
    (_rdns([(NameOID.X500_UNIQUE_IDENTIFIER, b"\x01\x02", _ASN1Type.BitString)],
           [(CN, "u", None)]), "CN=u,2.5.4.45=#03020102"),
    (_rdns([(ObjectIdentifier("1.2.3.4"), "y" * 130, None)]),
     "1.2.3.4=#0c8182" + "79" * 130),
    (x509.Name([]), ""),
]


@pytest.mark.parametrize(("subject", "expected"), JAVA_NAMES)
def test_principal_names_as_java_writes_them(subject, expected):
    assert principal_name(_der(subject)) == expected


@pytest.mark.parametrize("peer", [None, b""])
def test_no_certificate_is_anonymous(peer):
    assert principal_name(peer) == "ANONYMOUS"


_JAVA_NAMES_PROGRAM = """
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

public class Names {
    public static void main(String[] args) throws Exception {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        for (String path : args) {
            try (FileInputStream in = new FileInputStream(path)) {
                X509Certificate c = (X509Certificate) factory.generateCertificate(in);
                out.print(c.getSubjectX500Principal().getName() + "\\u0000");
            }
        }
    }
}
"""


def test_principal_names_agree_with_the_installed_java(tmp_path):
    program = tmp_path / "Names.java"
    program.write_text(_JAVA_NAMES_PROGRAM)
    paths, ours = [], []
    for i, (subject, _) in enumerate(JAVA_NAMES):
        der = _der(subject)
        paths.append(tmp_path / f"{i}.der")
        paths[-1].write_bytes(der)
        ours.append(principal_name(der))
    java = subprocess.run([jdk_tool("java"), str(program), *map(str, paths)],
                          capture_output=True, check=True, timeout=120).stdout.decode("utf-8")
    assert java.split("\0")[:-1] == ours
