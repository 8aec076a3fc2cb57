"""TLS for the broker's SSL and SASL_SSL listeners: test certificates, server contexts, and the
principal a client certificate stands for.

* :class:`CertificateAuthority` makes a throwaway CA (EC P-256, with the ``cryptography``
  package) and issues broker certificates (:meth:`~CertificateAuthority.issue_server`) and
  client certificates (:meth:`~CertificateAuthority.issue_client`).  Everything lands as PEM
  files, plus PKCS#12 files for Java clients; private keys are written readable by their owner
  only.  :meth:`TlsMaterial.generate` makes a CA and a broker certificate in one call.
* :func:`server_context` builds the listener's :class:`ssl.SSLContext` from PEM files, ours or
  a user's, with Kafka's ``ssl.client.auth`` choices.
* :func:`principal_name` names a TLS peer the way Kafka's default principal builder does: the
  client certificate's subject as Java's ``X500Principal.getName()`` writes it, or
  ``ANONYMOUS`` without one.

For Java clients: ``ssl.truststore.type=PEM`` with ``ssl.truststore.location`` set to
:attr:`CertificateAuthority.ca_location` works with any Kafka client since 2.7 (KIP-651);
:attr:`CertificateAuthority.truststore_location` is a PKCS#12 truststore as well, and every
issued certificate has a PKCS#12 keystore (``ssl.keystore.type=PKCS12``).  Both are protected by
:data:`STORE_PASSWORD`.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import ssl
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

#: the principal name of a peer without a client certificate (Kafka's ``User:ANONYMOUS``)
ANONYMOUS = "ANONYMOUS"
#: the password of the PKCS#12 keystores and truststore written to disk
STORE_PASSWORD = "mockbroker"
#: Kafka's ``ssl.client.auth`` values and what the server asks of a client for each
CLIENT_AUTH_MODES: dict[str, ssl.VerifyMode] = {
    "required": ssl.CERT_REQUIRED,
    "requested": ssl.CERT_OPTIONAL,
    "none": ssl.CERT_NONE,
}
#: hosts every broker certificate is valid for, besides the ones asked for
DEFAULT_HOSTS = ("localhost", "127.0.0.1")

_VALID_BEFORE_NOW = datetime.timedelta(days=1)
_VALIDITY = datetime.timedelta(days=3650)
_KEY_MODE = 0o600
_CERT_MODE = 0o644

# ---------------------------------------------------------------------------------------------
# Subjects: RFC 4514 strings in, X.509 names out


#: the attribute types a subject string may name, by their (case-insensitive) keyword
SUBJECT_KEYWORDS: dict[str, ObjectIdentifier] = {
    "CN": NameOID.COMMON_NAME,
    "OU": NameOID.ORGANIZATIONAL_UNIT_NAME,
    "O": NameOID.ORGANIZATION_NAME,
    "L": NameOID.LOCALITY_NAME,
    "ST": NameOID.STATE_OR_PROVINCE_NAME,
    "C": NameOID.COUNTRY_NAME,
    "STREET": NameOID.STREET_ADDRESS,
    "DC": NameOID.DOMAIN_COMPONENT,
    "UID": NameOID.USER_ID,
    "EMAILADDRESS": NameOID.EMAIL_ADDRESS,
    "SERIALNUMBER": NameOID.SERIAL_NUMBER,
}
_NUMERIC_OID = re.compile(r"[0-9]+(\.[0-9]+)+")
_HEX_PAIR = re.compile(r"[0-9A-Fa-f]{2}")
#: characters a value must escape with a backslash (RFC 4514, section 2.4)
_MUST_ESCAPE = '"+,;<>\\'


def parse_subject(subject: str) -> x509.Name:
    """The X.509 name an RFC 4514 string such as ``"CN=alice,OU=eng,O=acme"`` stands for.

    Keywords are those of :data:`SUBJECT_KEYWORDS`, in any case, or dotted OIDs; ``+`` joins
    the attributes of a multi-valued RDN; values take backslash escapes (``\\,``, ``\\2C``).
    Spaces around ``,``, ``+`` and ``=`` are allowed, as Java allows them.  As RFC 4514 has
    it, the first RDN written is the last of the name's ASN.1 sequence (the most specific).
    Anything else is a :class:`ValueError` that says what is wrong.
    """
    if not isinstance(subject, str) or not subject.strip():
        raise ValueError(f"empty subject {subject!r}: give one like 'CN=alice,OU=eng,O=acme'")
    rdns: list[list[x509.NameAttribute]] = [[]]
    pos = 0
    while True:
        equals = subject.find("=", pos)
        if equals < 0:
            raise ValueError(f"subject {subject!r}: {subject[pos:].strip()!r} is not TYPE=value")
        keyword = subject[pos:equals].strip()
        oid = _attribute_type(subject, keyword)
        value, pos = _attribute_value(subject, equals + 1)
        try:
            rdns[-1].append(x509.NameAttribute(oid, value))
        except ValueError as exc:
            raise ValueError(f"subject {subject!r}: bad {keyword} value {value!r}: {exc}"
                             ) from None
        if pos == len(subject):
            break
        if subject[pos] == ",":
            rdns.append([])
        pos += 1
    try:
        return x509.Name([x509.RelativeDistinguishedName(rdn) for rdn in reversed(rdns)])
    except ValueError as exc:
        raise ValueError(f"subject {subject!r}: {exc}") from None


def _attribute_type(subject: str, keyword: str) -> ObjectIdentifier:
    if _NUMERIC_OID.fullmatch(keyword):
        return ObjectIdentifier(keyword)
    oid = SUBJECT_KEYWORDS.get(keyword.upper())
    if oid is None:
        known = ", ".join(SUBJECT_KEYWORDS)
        raise ValueError(f"subject {subject!r}: unknown attribute type {keyword!r}; "
                         f"use one of {known} or a dotted OID")
    return oid


def _attribute_value(subject: str, pos: int) -> tuple[str, int]:
    """The value starting at ``pos`` (unescaped) and where it ends: at the end of the string,
    or at the ``,`` or ``+`` after it."""
    while pos < len(subject) and subject[pos] == " ":
        pos += 1
    if subject.startswith("#", pos):
        raise ValueError(f"subject {subject!r}: hex-encoded values (#...) are not supported; "
                         f"escape a leading '#' as '\\#'")
    value = bytearray()
    kept = 0  # the length of the value without unescaped trailing spaces
    while pos < len(subject) and subject[pos] not in ",+":
        char = subject[pos]
        if char == "\\":
            pair = subject[pos + 1:pos + 3]
            if _HEX_PAIR.fullmatch(pair):
                value.append(int(pair, 16))
                pos += 3
            elif pos + 1 < len(subject):
                value += subject[pos + 1].encode()
                pos += 2
            else:
                raise ValueError(f"subject {subject!r} ends in a lone backslash")
            kept = len(value)
            continue
        if char in _MUST_ESCAPE:
            raise ValueError(f"subject {subject!r}: {char!r} at offset {pos} must be escaped "
                             f"with a backslash")
        value += char.encode()
        if char != " ":
            kept = len(value)
        pos += 1
    try:
        return value[:kept].decode(), pos
    except UnicodeDecodeError:
        raise ValueError(f"subject {subject!r}: escaped bytes that are not UTF-8") from None


# ---------------------------------------------------------------------------------------------
# Principals: X.509 names out, the way Java writes them


#: the keywords X500Principal.getName() (RFC 2253) writes; other types come out as dotted OIDs
_RFC2253_KEYWORDS: dict[ObjectIdentifier, str] = {
    NameOID.COMMON_NAME: "CN",
    NameOID.COUNTRY_NAME: "C",
    NameOID.LOCALITY_NAME: "L",
    NameOID.STATE_OR_PROVINCE_NAME: "ST",
    NameOID.ORGANIZATION_NAME: "O",
    NameOID.ORGANIZATIONAL_UNIT_NAME: "OU",
    NameOID.STREET_ADDRESS: "STREET",
    NameOID.DOMAIN_COMPONENT: "DC",
    NameOID.USER_ID: "UID",
}
#: the ASN.1 tags of the values Java writes as strings (PrintableString, T61String, IA5String,
#: GeneralString, UTF8String, BMPString); any other (UniversalString too) comes out as #hex
_STRING_TAGS = frozenset({0x13, 0x14, 0x16, 0x1B, 0x0C, 0x1E})
#: what Java escapes with a backslash anywhere in a value
_JAVA_ESCAPES = ',=+<>#;"\\'


def principal_name(peer_der: bytes | None) -> str:
    """The name Kafka's default principal builder gives a TLS peer (``User:<name>``).

    ``peer_der`` is the peer's certificate in DER, as ``getpeercert(binary_form=True)`` gives
    it, or None without one (then ``ANONYMOUS``).  The name is the certificate's subject as
    Java's ``X500Principal.getName()`` writes it (RFC 2253): the RDNs from the last of the
    ASN.1 sequence to the first, joined by ``,`` with no spaces (``CN=alice,OU=eng,O=acme``);
    the keywords CN, C, L, ST, O, OU, STREET, DC and UID, any other type as its dotted OID with
    the value's DER in hex (``1.2.840.113549.1.9.1=#16...``); and Java's escaping, which
    goes beyond RFC 4514's (``=`` and ``#`` inside a value, every leading and trailing space).
    Checked against JDK 17 (tests/test_tls.py).  Kafka's ``ssl.principal.mapping.rules`` are
    not applied: this is the name under the default rule.
    """
    if not peer_der:
        return ANONYMOUS
    subject = x509.load_der_x509_certificate(peer_der).subject
    return ",".join("+".join(_java_attribute(attribute) for attribute in rdn)
                    for rdn in reversed(subject.rdns))


def _java_attribute(attribute: x509.NameAttribute) -> str:
    keyword = _RFC2253_KEYWORDS.get(attribute.oid)
    der = _value_der(attribute)
    if keyword is None or der[0] not in _STRING_TAGS:
        return f"{keyword or attribute.oid.dotted_string}=#{der.hex()}"
    # Java reads the contents as UTF-8 whatever the string type (so a BMPString comes out
    # garbled, as it does in Kafka)
    header, length = _der_header(der)
    text = der[header:header + length].decode("utf-8", errors="replace")
    return f"{keyword}={_java_escape(text)}"


def _java_escape(value: str) -> str:
    """A value escaped as Java's RFC 2253 writer escapes it: the characters of
    :data:`_JAVA_ESCAPES` anywhere, NUL as ``\\00``, and leading and trailing spaces (and
    carriage returns)."""
    chars = ["\\00" if c == "\0" else "\\" + c if c in _JAVA_ESCAPES else c for c in value]
    lead = 0
    while lead < len(chars) and chars[lead] in " \r":
        lead += 1
    trail = len(chars)
    while trail > lead and chars[trail - 1] in " \r":
        trail -= 1
    return "".join("\\" + c if i < lead or i >= trail else c for i, c in enumerate(chars))


def _value_der(attribute: x509.NameAttribute) -> bytes:
    """The attribute's value as DER (tag, length, contents), as the certificate encodes it."""
    # Name ::= SEQUENCE OF SET OF SEQUENCE { type OBJECT IDENTIFIER, value ANY }
    der = x509.Name([x509.RelativeDistinguishedName([attribute])]).public_bytes()
    for _ in range(3):
        header, length = _der_header(der)
        der = der[header:header + length]
    header, length = _der_header(der)  # the OID, which the value follows
    return der[header + length:]


def _der_header(der: bytes) -> tuple[int, int]:
    """The size of the header of the DER element at the start of ``der``, and of its
    contents."""
    if der[1] < 0x80:
        return 2, der[1]
    size = der[1] & 0x7F
    return 2 + size, int.from_bytes(der[2:2 + size], "big")


# ---------------------------------------------------------------------------------------------
# Certificates


class IssuedCertificate:
    """A certificate issued by a :class:`CertificateAuthority`, with its key, in files."""

    def __init__(self, certificate: x509.Certificate, key: ec.EllipticCurvePrivateKey,
                 ca_certificate: x509.Certificate, cert_location: str, key_location: str,
                 pkcs12_location: str):
        self.certificate = certificate
        self._key = key
        self._ca_certificate = ca_certificate
        #: the certificate, PEM
        self.cert_location = cert_location
        #: its private key, PEM (unencrypted PKCS#8), readable by the owner only
        self.key_location = key_location
        #: both, and the CA's certificate, as a PKCS#12 keystore with :data:`STORE_PASSWORD`
        self.pkcs12_location = pkcs12_location

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.certificate.subject.rfc4514_string()!r}, "
                f"{self.cert_location!r})")

    def keystore(self, password: str | None = STORE_PASSWORD) -> bytes:
        """The key, the certificate and the CA's certificate as a PKCS#12 keystore (Java's
        ``ssl.keystore.type=PKCS12``), encrypted with ``password`` (None: unencrypted)."""
        encryption: serialization.KeySerializationEncryption = (
            serialization.NoEncryption() if password is None
            else serialization.BestAvailableEncryption(password.encode()))
        return pkcs12.serialize_key_and_certificates(
            name=_friendly_name(self.certificate), key=self._key, cert=self.certificate,
            cas=[self._ca_certificate], encryption_algorithm=encryption)


class ServerCertificate(IssuedCertificate):
    """A broker's certificate: ``serverAuth``, valid for its hosts."""

    @property
    def hosts(self) -> list[str]:
        """The host names and addresses of the subjectAltName."""
        names = self.certificate.extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value
        return [str(name.value) for name in names]


class ClientCertificate(IssuedCertificate):
    """A client's certificate: ``clientAuth``, for a subject."""

    @property
    def principal(self) -> str:
        """The principal name the broker gives its holder (:func:`principal_name`)."""
        return principal_name(self.certificate.public_bytes(serialization.Encoding.DER))


_Issued = TypeVar("_Issued", bound=IssuedCertificate)


class CertificateAuthority:
    """A self-signed CA for tests, its key kept in memory (and in ``ca-key.pem``).

    Made by :meth:`create`; the certificates it issues are written to the directory given, or
    its own.
    """

    def __init__(self, certificate: x509.Certificate, key: ec.EllipticCurvePrivateKey,
                 directory: Path):
        self.certificate = certificate
        self._key = key
        self.directory = directory
        #: the CA's certificate, PEM: what clients trust (``ssl.truststore.location`` with
        #: ``ssl.truststore.type=PEM``, ``ssl.ca.location``, ``cafile=``)
        self.ca_location = str(directory / "ca.pem")
        #: the CA's private key, PEM, readable by the owner only
        self.key_location = str(directory / "ca-key.pem")
        #: the CA's certificate as a Java PKCS#12 truststore with :data:`STORE_PASSWORD`
        self.truststore_location = str(directory / "truststore.p12")

    def __repr__(self) -> str:
        return f"CertificateAuthority({self.certificate.subject.rfc4514_string()!r})"

    @classmethod
    def create(cls, directory: Path | str, name: str = "mockbroker test CA"
               ) -> CertificateAuthority:
        """A new CA named ``CN=<name>``, written to ``directory`` (made if missing) as
        ``ca.pem``, ``ca-key.pem`` and ``truststore.p12``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
        builder = (
            _builder(subject, subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(cert_sign=True), critical=True)
            .add_extension(ski, critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                           critical=False))
        ca = cls(builder.sign(key, hashes.SHA256()), key, directory)
        _write(ca.ca_location, _pem(ca.certificate), _CERT_MODE)
        _write(ca.key_location, _key_pem(key), _KEY_MODE)
        _write(ca.truststore_location, ca.truststore(), _CERT_MODE)
        return ca

    def truststore(self, password: str | None = STORE_PASSWORD) -> bytes:
        """The CA's certificate as a PKCS#12 truststore Java reads (a trusted-certificate
        entry), encrypted with ``password``."""
        encryption: serialization.KeySerializationEncryption = (
            serialization.NoEncryption() if password is None
            else serialization.BestAvailableEncryption(password.encode()))
        entry = pkcs12.PKCS12Certificate(self.certificate, _friendly_name(self.certificate))
        return pkcs12.serialize_java_truststore([entry], encryption)

    def issue_server(self, hosts: Iterable[str], directory: Path | str | None = None, *,
                     name: str = "server") -> ServerCertificate:
        """A broker certificate valid for ``hosts`` and for localhost and 127.0.0.1, written
        to ``directory`` (the CA's by default) as ``<name>.pem``, ``<name>-key.pem`` and
        ``<name>.p12``.  IP addresses go into the subjectAltName as such, other hosts as DNS
        names."""
        if isinstance(hosts, str):
            raise ValueError(f"hosts must be a list of host names or addresses, not {hosts!r}")
        hosts = list(hosts)
        if not all(isinstance(h, str) and h.strip("[]") for h in hosts):
            raise ValueError(f"hosts must be a list of host names or addresses, not {hosts!r}")
        alt_names: list[x509.GeneralName] = []
        for host in dict.fromkeys(h.strip("[]").lower() for h in [*hosts, *DEFAULT_HOSTS]):
            try:
                alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                alt_names.append(x509.DNSName(host))
        common_name = hosts[0] if hosts and len(hosts[0]) <= 64 else "mockbroker"
        extensions = [
            (x509.SubjectAlternativeName(alt_names), False),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
        ]
        return self._issue(ServerCertificate, _name(common_name), extensions, directory, name)

    def issue_client(self, subject: str, directory: Path | str | None = None, *,
                     name: str | None = None) -> ClientCertificate:
        """A client certificate for ``subject``, an RFC 4514 string such as
        ``"CN=alice,OU=eng,O=acme"`` (:func:`parse_subject`; a ValueError if it is not one),
        written to ``directory`` (the CA's by default) as ``<name>.pem``, ``<name>-key.pem``
        and ``<name>.p12``; ``name`` defaults to ``client-<CN>``."""
        parsed = parse_subject(subject)
        if name is None:
            common_names = parsed.get_attributes_for_oid(NameOID.COMMON_NAME)
            tail = str(common_names[-1].value) if common_names else "anonymous"
            name = "client-" + re.sub(r"[^A-Za-z0-9._-]", "_", tail)
        extensions = [(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)]
        return self._issue(ClientCertificate, parsed, extensions, directory, name)

    def _issue(self, kind: type[_Issued], subject: x509.Name,
               extensions: list[tuple[x509.ExtensionType, bool]],
               directory: Path | str | None, name: str) -> _Issued:
        directory = Path(self.directory if directory is None else directory)
        directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        ca_ski = self.certificate.extensions.get_extension_for_class(
            x509.SubjectKeyIdentifier).value
        builder = (
            _builder(subject, self.certificate.subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(cert_sign=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(
                ca_ski), critical=False))
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        certificate = builder.sign(self._key, hashes.SHA256())
        issued = kind(certificate, key, self.certificate, str(directory / f"{name}.pem"),
                      str(directory / f"{name}-key.pem"), str(directory / f"{name}.p12"))
        _write(issued.cert_location, _pem(certificate), _CERT_MODE)
        _write(issued.key_location, _key_pem(key), _KEY_MODE)
        _write(issued.pkcs12_location, issued.keystore(), _KEY_MODE)
        return issued


class TlsMaterial:
    """A CA and a broker certificate signed by it: what a cluster's TLS listeners need."""

    def __init__(self, ca: CertificateAuthority, server: ServerCertificate):
        self.ca = ca
        self.server = server

    def __repr__(self) -> str:
        return f"TlsMaterial({self.ca!r}, {self.server!r})"

    @classmethod
    def generate(cls, directory: Path | str, hosts: Iterable[str] = ()) -> TlsMaterial:
        """A new CA and a broker certificate for ``hosts`` (and localhost and 127.0.0.1), all
        written to ``directory``."""
        ca = CertificateAuthority.create(directory)
        return cls(ca, ca.issue_server(hosts))

    @property
    def ca_location(self) -> str:
        """The CA's certificate, PEM: what clients trust."""
        return self.ca.ca_location

    @property
    def truststore_location(self) -> str:
        """The CA's certificate as a PKCS#12 truststore."""
        return self.ca.truststore_location

    def issue_client(self, subject: str, *, name: str | None = None) -> ClientCertificate:
        """A client certificate for ``subject`` (RFC 4514), beside the CA's files."""
        return self.ca.issue_client(subject, name=name)

    def server_context(self, client_auth: str = "none") -> ssl.SSLContext:
        """The listener's context with the broker certificate, trusting the CA for client
        certificates."""
        return server_context(self.server.cert_location, self.server.key_location,
                              client_auth=client_auth, ca_location=self.ca_location)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name,
             public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _VALID_BEFORE_NOW)
            .not_valid_after(now + _VALIDITY))


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign,
        crl_sign=cert_sign, encipher_only=False, decipher_only=False)


def _friendly_name(certificate: x509.Certificate) -> bytes:
    common_names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(common_names[-1].value if common_names else "mockbroker").encode()


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(location: str, data: bytes, mode: int) -> None:
    """Writes ``data`` to a file that has ``mode`` from its creation on (and after, if it was
    there already)."""
    fd = os.open(location, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as file:
        os.fchmod(file.fileno(), mode)
        file.write(data)


# ---------------------------------------------------------------------------------------------
# The listener's context


def server_context(cert_location: str | os.PathLike[str], key_location: str | os.PathLike[str],
                   *, client_auth: str = "none",
                   ca_location: str | os.PathLike[str] | None = None,
                   key_password: str | None = None) -> ssl.SSLContext:
    """The :class:`ssl.SSLContext` of a TLS listener (TLS 1.2 at least) that presents the PEM
    certificate (chain) at ``cert_location`` with the PEM key at ``key_location`` (decrypted
    with ``key_password`` if it is encrypted): ours or a user's.

    ``client_auth`` is Kafka's ``ssl.client.auth``: ``"required"`` (a client without a
    certificate the CAs at ``ca_location`` vouch for fails the handshake), ``"requested"`` (a
    client may go without one, but not with one they do not vouch for) or ``"none"``; the
    first two need ``ca_location``.
    """
    verify_mode = CLIENT_AUTH_MODES.get(client_auth)
    if verify_mode is None:
        allowed = ", ".join(repr(mode) for mode in CLIENT_AUTH_MODES)
        raise ValueError(f"client_auth must be one of {allowed}, not {client_auth!r}")
    if verify_mode != ssl.CERT_NONE and ca_location is None:
        raise ValueError(f"client_auth={client_auth!r} needs ca_location, the CA(s) that "
                         f"client certificates are checked against")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.fspath(cert_location), os.fspath(key_location),
                            password=key_password)
    if ca_location is not None:
        context.load_verify_locations(cafile=os.fspath(ca_location))
    context.verify_mode = verify_mode
    return context

