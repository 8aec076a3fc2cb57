"""SASL on a connection, frame by frame, as a client sees it: the order of requests Kafka's
server authenticator accepts, each mechanism's exchange (PLAIN, SCRAM-SHA-256/512,
OAUTHBEARER), the errors and messages of a failed authentication followed by the close, the
session lifetime and re-authentication (KIP-368), and ILLEGAL_SASL_STATE outside of all that."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

import pytest

import wire
from mockbroker.core.clock import ManualClock
from mockbroker.core.cluster import Broker
from mockbroker.core.deferred import Close
from mockbroker.core.dispatch import Connection
from mockbroker.core.security import Principal
from mockbroker.core.security.config import check_security
from mockbroker.core.security.mechanisms import (ScramCredential, Token, TokenRejected,
                                                 unsecured_jws, unsecured_token)
from mockbroker.handlers import new_core
from tests.core.harness import MADE, START_MS
from wire import errors

HANDSHAKE, AUTHENTICATE, API_VERSIONS, METADATA = 17, 36, 18, 3


def sasl_core(**security):
    security.setdefault("security_protocol", "SASL_PLAINTEXT")
    security.setdefault("users", {"alice": "secret", "bob": "hunter2"})
    core = new_core([Broker(0, "127.0.0.1", 9092)], {}, ManualClock(START_MS),
                    check_security(security))
    MADE.append(core)
    return core


class Client:
    """One connection: frames in, what the broker answered out."""

    def __init__(self, core, listener: str = "SASL_PLAINTEXT"):
        self.core = core
        self.conn = Connection(0, secrets.randbits(30), listener=listener,
                               sasl=core.new_session() if listener.startswith("SASL") else None)
        self.closed: Close | None = None
        self._correlation = 0

    def send(self, api_key: int, version: int, **fields):
        """The decoded answer, or the :class:`Close` (whose last answer, if any, is decoded
        into ``.last``)."""
        assert self.closed is None, "the connection is closed"
        self._correlation += 1
        body = wire.request_class(api_key)(**fields)
        frame = wire.encode_request(api_key, version, self._correlation, "app", body,
                                    size_prefix=False)
        outcome = self.core.receive(frame, self.conn)
        assert outcome.done
        value = outcome.value
        if isinstance(value, Close):
            self.closed = value
            self.last = None if value.answer is None else self._decode(api_key, version,
                                                                       value.answer)
            return value
        return self._decode(api_key, version, value)

    def bare(self, token: bytes):
        """A size-prefixed token without a Kafka header (after a v0 handshake)."""
        outcome = self.core.receive(token, self.conn)
        value = outcome.value
        if isinstance(value, Close):
            self.closed = value
            return value
        assert value[:4] == len(value[4:]).to_bytes(4, "big")
        return value[4:]

    def _decode(self, api_key, version, frame: bytes):
        correlation, body = wire.decode_response(api_key, version, frame[4:])
        assert correlation == self._correlation
        return body

    def handshake(self, mechanism: str, version: int = 1):
        return self.send(HANDSHAKE, version, mechanism=mechanism)

    def authenticate(self, token: bytes, version: int = 2):
        return self.send(AUTHENTICATE, version, auth_bytes=token)

    def metadata(self):
        return self.send(METADATA, 12, topics=None, allow_auto_topic_creation=False,
                         include_topic_authorized_operations=False)


def plain(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


class ScramClient:
    """The client side of RFC 5802, written from the RFC for these tests."""

    def __init__(self, mechanism: str, user: str, password: str):
        self.digest = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
        self.user, self.password = user, password
        self.nonce = secrets.token_hex(12)
        self.first_bare = f"n={user},r={self.nonce}"

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        fields = dict(part.split("=", 1) for part in server_first.decode().split(","))
        assert fields["r"].startswith(self.nonce)
        salted = hashlib.pbkdf2_hmac(self.digest, self.password.encode(),
                                     base64.b64decode(fields["s"]), int(fields["i"]))
        without_proof = f"c=biws,r={fields['r']}"
        self.auth_message = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.digest(salted, b"Client Key", self.digest)
        stored_key = hashlib.new(self.digest, client_key).digest()
        signature = hmac.digest(stored_key, self.auth_message, self.digest)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self.server_key = hmac.digest(salted, b"Server Key", self.digest)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        expected = hmac.digest(self.server_key, self.auth_message, self.digest)
        return server_final == b"v=" + base64.b64encode(expected)


# -- the order of requests ------------------------------------------------------------------------

def test_api_versions_then_handshake_then_plain_authenticates_the_connection():
    client = Client(sasl_core())
    versions = client.send(API_VERSIONS, 3, client_software_name="t",
                           client_software_version="1")
    assert versions.error_code == errors.NONE
    assert {k.api_key for k in versions.api_keys} >= {HANDSHAKE, AUTHENTICATE}
    answer = client.handshake("PLAIN")
    assert answer.error_code == errors.NONE
    assert answer.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
    done = client.authenticate(plain("alice", "secret"))
    assert (done.error_code, done.error_message, done.auth_bytes,
            done.session_lifetime_ms) == (errors.NONE, None, b"", 0)
    assert client.conn.who == Principal("User", "alice")
    assert client.metadata().brokers[0].port == 9092


@pytest.mark.parametrize("api_key", [METADATA, AUTHENTICATE])
def test_a_request_before_the_handshake_closes_the_connection(api_key):
    client = Client(sasl_core())
    if api_key == METADATA:
        outcome = client.metadata()
    else:
        outcome = client.authenticate(plain("alice", "secret"))
    assert isinstance(outcome, Close) and outcome.answer is None
    name = {METADATA: "Metadata", AUTHENTICATE: "SaslAuthenticate"}[api_key]
    assert f"Unexpected Kafka request of type {name} during SASL handshake" in outcome.reason


def test_api_versions_twice_closes_the_connection():
    client = Client(sasl_core())
    client.send(API_VERSIONS, 3, client_software_name="t", client_software_version="1")
    outcome = client.send(API_VERSIONS, 3, client_software_name="t",
                          client_software_version="1")
    assert isinstance(outcome, Close)


def test_an_unsupported_mechanism_is_answered_with_the_enabled_ones_then_closed():
    client = Client(sasl_core(sasl_mechanisms=["SCRAM-SHA-512"]))
    outcome = client.handshake("PLAIN")
    assert isinstance(outcome, Close)
    assert (client.last.error_code, client.last.mechanisms) == (
        errors.UNSUPPORTED_SASL_MECHANISM, ["SCRAM-SHA-512"])


def test_another_request_while_authenticating_is_answered_illegal_sasl_state_then_closed():
    client = Client(sasl_core())
    client.handshake("PLAIN")
    outcome = client.send(API_VERSIONS, 0)
    assert isinstance(outcome, Close)
    assert client.last.error_code == errors.ILLEGAL_SASL_STATE


def test_sasl_requests_on_a_plaintext_listener_answer_illegal_sasl_state_and_keep_it():
    core = sasl_core(security_protocol="PLAINTEXT")
    client = Client(core, listener="PLAINTEXT")
    assert client.handshake("PLAIN").error_code == errors.ILLEGAL_SASL_STATE
    answer = client.authenticate(plain("alice", "secret"))
    assert (answer.error_code, answer.error_message) == (
        errors.ILLEGAL_SASL_STATE,
        "SaslAuthenticate request received after successful authentication")
    assert client.metadata().brokers  # still served
    assert client.conn.who == Principal("User", "ANONYMOUS")


def test_a_second_handshake_after_authentication_is_illegal_for_a_v0_authenticate_client():
    client = Client(sasl_core())
    client.handshake("PLAIN")
    client.authenticate(plain("alice", "secret"), version=0)
    assert client.handshake("PLAIN").error_code == errors.ILLEGAL_SASL_STATE
    assert client.authenticate(plain("alice", "secret")).error_code == \
        errors.ILLEGAL_SASL_STATE


# -- PLAIN ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("token, message", [
    (plain("alice", "wrong"), "Authentication failed: Invalid username or password"),
    (plain("mallory", "secret"), "Authentication failed: Invalid username or password"),
    (plain("", "secret"), "Authentication failed: username not specified"),
    (plain("alice", ""), "Authentication failed: password not specified"),
    (plain("alice", "secret", authzid="bob"), "Authentication failed: Client requested an "
     "authorization id that is different from username"),
    (b"alice\0secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
])
def test_plain_failures_are_answered_with_kafkas_message_then_closed(token, message):
    client = Client(sasl_core())
    client.handshake("PLAIN")
    outcome = client.authenticate(token)
    assert isinstance(outcome, Close)
    assert (client.last.error_code, client.last.error_message) == (
        errors.SASL_AUTHENTICATION_FAILED, message)


def test_plain_after_a_v0_handshake_takes_bare_tokens():
    client = Client(sasl_core())
    assert client.handshake("PLAIN", version=0).error_code == errors.NONE
    assert client.bare(plain("alice", "secret")) == b""
    assert client.conn.who == Principal("User", "alice")
    assert client.metadata().brokers


def test_a_bare_token_that_fails_closes_without_an_answer():
    client = Client(sasl_core())
    client.handshake("PLAIN", version=0)
    outcome = client.bare(plain("alice", "nope"))
    assert isinstance(outcome, Close) and outcome.answer is None


# -- SCRAM ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_authenticates_and_proves_the_server(mechanism):
    client = Client(sasl_core())
    client.handshake(mechanism)
    scram = ScramClient(mechanism, "bob", "hunter2")
    first = client.authenticate(scram.first())
    assert first.error_code == errors.NONE and first.session_lifetime_ms == 0
    assert b",i=4096" in first.auth_bytes
    final = client.authenticate(scram.final(first.auth_bytes))
    assert final.error_code == errors.NONE
    assert scram.verify(final.auth_bytes)
    assert client.conn.who == Principal("User", "bob")


@pytest.mark.parametrize("user, password", [("bob", "wrong"), ("nobody", "hunter2")])
def test_scram_failures_give_kafkas_generic_message(user, password):
    client = Client(sasl_core())
    client.handshake("SCRAM-SHA-256")
    scram = ScramClient("SCRAM-SHA-256", user, password)
    if user == "nobody":
        outcome = client.authenticate(scram.first())
    else:
        first = client.authenticate(scram.first())
        outcome = client.authenticate(scram.final(first.auth_bytes))
    assert isinstance(outcome, Close)
    assert (client.last.error_code, client.last.error_message) == (
        errors.SASL_AUTHENTICATION_FAILED,
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-256")


def test_scram_credentials_follow_rfc_7677s_test_vector():
    # RFC 7677 section 3: user "user", password "pencil", salt and 4096 iterations
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = ScramCredential.from_password("SCRAM-SHA-256", "pencil", 4096, salt)
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", salt, 4096)
    server_key = hmac.digest(salted, b"Server Key", "sha256")
    auth_message = (b"n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxF"
                    b"Ilj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO"
                    b"%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    assert credential.server_key == server_key
    assert base64.b64encode(hmac.digest(credential.server_key, auth_message, "sha256")) == \
        b"6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


# -- OAUTHBEARER ----------------------------------------------------------------------------------

def oauth(token: str, authzid: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01\x01".encode()


def test_oauthbearer_session_lasts_as_long_as_the_token():
    core = sasl_core()
    client = Client(core)
    client.handshake("OAUTHBEARER")
    done = client.authenticate(oauth(unsecured_token("carol", expires_ms=START_MS + 60_000)))
    assert (done.error_code, done.session_lifetime_ms) == (errors.NONE, 60_000)
    assert client.conn.who == Principal("User", "carol")
    core.clock.advance(60_000)
    outcome = client.metadata()
    assert isinstance(outcome, Close) and "expired" in outcome.reason


def test_an_expired_token_gets_a_json_error_then_the_failure():
    client = Client(sasl_core())
    client.handshake("OAUTHBEARER")
    challenge = client.authenticate(oauth(unsecured_token("carol", expires_ms=START_MS - 1)))
    assert (challenge.error_code, challenge.auth_bytes) == (
        errors.NONE, b'{"status":"invalid_token"}')
    outcome = client.authenticate(b"\x01")
    assert isinstance(outcome, Close)
    assert (client.last.error_code, client.last.error_message) == (
        errors.SASL_AUTHENTICATION_FAILED, '{"status":"invalid_token"}')


def test_a_token_validator_of_ones_own_decides():
    def validate(token: str, now_ms: int) -> Token:
        if token != "let-me-in":
            raise TokenRejected("unknown token")
        return Token("dave", now_ms + 5_000)

    client = Client(sasl_core(token_validator=validate))
    client.handshake("OAUTHBEARER")
    done = client.authenticate(oauth("let-me-in"))
    assert (done.error_code, done.session_lifetime_ms) == (errors.NONE, 5_000)
    assert client.conn.who == Principal("User", "dave")


@pytest.mark.parametrize("claims, reason", [
    ({"exp": 10}, "No principal name in JWT claim: sub"),
    ({"sub": "x"}, "No expiration time in JWT"),
])
def test_unsecured_tokens_need_a_subject_and_an_expiry(claims, reason):
    def part(value):
        import json
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    with pytest.raises(TokenRejected, match=reason):
        unsecured_jws(f"{part({'alg': 'none'})}.{part(claims)}.", 0)


# -- session lifetime and re-authentication ---------------------------------------------------------

def test_connections_max_reauth_ms_bounds_the_session_and_reauthentication_renews_it():
    core = sasl_core(connections_max_reauth_ms=10_000)
    client = Client(core)
    client.handshake("PLAIN")
    assert client.authenticate(plain("alice", "secret")).session_lifetime_ms == 10_000
    core.clock.advance(9_000)
    assert client.handshake("PLAIN").error_code == errors.NONE
    assert client.authenticate(plain("alice", "secret")).session_lifetime_ms == 10_000
    core.clock.advance(9_000)
    assert client.metadata().brokers  # 18 s after the first, 9 s after the renewal
    core.clock.advance(1_000)
    assert isinstance(client.metadata(), Close)


def test_reauthentication_may_not_change_the_principal():
    client = Client(sasl_core(connections_max_reauth_ms=10_000))
    client.handshake("PLAIN")
    client.authenticate(plain("alice", "secret"))
    client.handshake("PLAIN")
    outcome = client.authenticate(plain("bob", "hunter2"))
    assert isinstance(outcome, Close)
    assert client.last.error_message == ("Cannot change principals during re-authentication "
                                         "from User.alice: User.bob")


def test_reauthentication_may_not_change_the_mechanism():
    client = Client(sasl_core(connections_max_reauth_ms=10_000))
    client.handshake("PLAIN")
    client.authenticate(plain("alice", "secret"))
    assert client.handshake("SCRAM-SHA-256").error_code == errors.NONE
    outcome = client.authenticate(b"n,,n=alice,r=abc")
    assert isinstance(outcome, Close)
    assert "not supported for re-authentication of mechanism 'PLAIN'" in outcome.reason


# -- settings -----------------------------------------------------------------------------------

@pytest.mark.parametrize("values, message", [
    ({"security_protocol": "SASL_TLS"}, "security_protocol: 'SASL_TLS' is not one of"),
    ({"sasl_mechanisms": ["GSSAPI"]}, "sasl_mechanisms: 'GSSAPI' is not one of"),
    ({"users": ["alice"]}, "users: expected NAME:PASSWORD"),
    ({"super_users": ["User:"]}, "a principal is TYPE:NAME"),
    ({"security_protocol": "SSL", "listeners": ["SSL"]}, "not both"),
    ({"listeners": ["SSL", "ssl"]}, "each protocol once"),
    ({"ssl_client_auth": "always"}, "ssl_client_auth: 'always' is not one of"),
    ({"connections_max_reauth_ms": -1}, "must be 0 or more"),
    ({"authorizer": "maybe"}, "authorizer: expected true or false"),
])
def test_bad_security_settings_are_refused_naming_the_setting(values, message):
    with pytest.raises(ValueError, match=message):
        check_security(values)


def test_users_may_be_given_as_name_password_entries():
    settings = check_security({"users": ["alice:se:cret"], "super_users": "admin;User:ops"})
    assert settings.users == {"alice": "se:cret"}
    assert settings.super_users == ("User:admin", "User:ops")


def test_the_request_log_names_each_requests_principal_listener_and_mechanism():
    core = sasl_core()
    client = Client(core)
    client.handshake("SCRAM-SHA-512")
    scram = ScramClient("SCRAM-SHA-512", "bob", "hunter2")
    first = client.authenticate(scram.first())
    client.authenticate(scram.final(first.auth_bytes))
    client.metadata()
    [entry] = [e for e in core.requests if e.api_key == METADATA]
    assert (entry.principal, entry.listener, entry.mechanism) == (
        "User:bob", "SASL_PLAINTEXT", "SCRAM-SHA-512")


# -- control rules --------------------------------------------------------------------------------

def login(core, user: str = "alice", password: str = "secret") -> Client:
    client = Client(core)
    client.handshake("PLAIN")
    client.authenticate(plain(user, password))
    return client


def test_a_rule_fails_the_next_login_once():
    core = sasl_core()
    rule = core.control.add({"api": "SaslAuthenticate", "error": "SASL_AUTHENTICATION_FAILED"})
    client = Client(core)
    client.handshake("PLAIN")
    outcome = client.authenticate(plain("alice", "secret"))
    assert isinstance(outcome, Close)
    assert (client.last.error_code, client.last.error_message) == (
        errors.SASL_AUTHENTICATION_FAILED,
        f"Authentication failed: rule {rule.id} refuses User:alice")
    again = login(core)
    assert again.conn.who == Principal("User", "alice") and again.metadata().brokers


def test_a_rule_refuses_one_principals_logins_and_lets_the_others_in():
    core = sasl_core()
    core.control.add({"api": "SaslAuthenticate", "principal": "bob",
                      "error": "SASL_AUTHENTICATION_FAILED", "count": None})
    for _ in range(2):
        client = Client(core)
        client.handshake("SCRAM-SHA-256")
        scram = ScramClient("SCRAM-SHA-256", "bob", "hunter2")
        first = client.authenticate(scram.first())
        assert isinstance(client.authenticate(scram.final(first.auth_bytes)), Close)
    assert login(core).conn.who == Principal("User", "alice")


def test_a_rule_denies_one_principal_an_api():
    core = sasl_core()
    core.control.add({"api": "ListGroups", "principal": "bob",
                      "error": "CLUSTER_AUTHORIZATION_FAILED", "count": None})
    bob, alice = login(core, "bob", "hunter2"), login(core)
    for _ in range(2):
        assert bob.send(16, 4, states_filter=[]).error_code == \
            errors.CLUSTER_AUTHORIZATION_FAILED
    assert alice.send(16, 4, states_filter=[]).error_code == errors.NONE


def test_expire_session_ends_the_session_after_answering():
    core = sasl_core()
    client = login(core)
    core.control.add({"api": "Metadata", "action": "expire_session"})
    assert client.metadata().brokers  # answered
    outcome = client.metadata()
    assert isinstance(outcome, Close) and "expired" in outcome.reason
    assert login(core).metadata().brokers  # a new connection logs in again


def test_sasl_requests_go_into_the_request_log_with_their_outcome():
    core = sasl_core()
    login(core)
    failed = Client(core)
    failed.handshake("PLAIN")
    failed.authenticate(plain("alice", "nope"))
    logged = [(e.api_key, e.outcome, e.error_code, e.mechanism) for e in core.requests
              if e.api_key in (HANDSHAKE, AUTHENTICATE)]
    assert logged == [
        (HANDSHAKE, "answered", errors.NONE, "PLAIN"),
        (AUTHENTICATE, "answered", errors.NONE, "PLAIN"),
        (HANDSHAKE, "answered", errors.NONE, "PLAIN"),
        (AUTHENTICATE, "disconnected", errors.SASL_AUTHENTICATION_FAILED, "PLAIN")]


def test_api_versions_in_a_version_not_served_gets_the_fallback_and_may_be_retried():
    client = Client(sasl_core())
    header = (API_VERSIONS.to_bytes(2, "big") + (99).to_bytes(2, "big") +
              (41).to_bytes(4, "big") + (3).to_bytes(2, "big") + b"app")
    outcome = client.core.receive(header + b"\x00", client.conn)
    correlation, body = wire.decode_response(API_VERSIONS, 0, outcome.value[4:])
    assert (correlation, body.error_code) == (41, errors.UNSUPPORTED_VERSION)
    assert [k.api_key for k in body.api_keys] == [API_VERSIONS]  # what to ask again with
    # still the first request as far as SASL goes: ApiVersions again, then the handshake
    assert client.send(API_VERSIONS, 3, client_software_name="t",
                       client_software_version="1").error_code == errors.NONE
    assert client.handshake("PLAIN").error_code == errors.NONE
