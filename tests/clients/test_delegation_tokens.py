"""Delegation tokens with Kafka's own Java clients and tool: the Java Admin's
createDelegationToken, describeDelegationToken, renewDelegationToken and expireDelegationToken
(``java/TokenAdmin.java``), ``kafka-delegation-tokens`` (``org.apache.kafka.tools.
DelegationTokenCommand``), and the stock producer, consumer and Admin logging in with a token
over SCRAM (``tokenauth="true"`` in ``ScramLoginModule``), as the token's owner.

Token requests need an authenticated channel, so these run on the SASL_PLAINTEXT listener of
mockbroker and of a secured Apache Kafka (``secure_target``), as users each test makes for
itself (a user's tokens are seen by every test that asks as that user).  A token's times come
from the broker's clock, so a test checks them against the clock before and after it asked;
what a token does once its time has passed, and when the periodic check removes it, is seen on
mockbroker alone, on a manual clock.  Both targets refuse token requests on PLAINTEXT, as the
tool shows.

Kafka's broker learns of a token the controller made or removed from the metadata log, a
moment after the controller answered: a describe or a login right after waits for it
(``TokenAdmin``'s ``await``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType,
                         ACLResourcePatternType, KafkaAdminClient, ResourcePattern,
                         ResourcePatternFilter, ResourceType)

from mockbroker import MockCluster
from tests.clients.helpers import KAFKA_TOOLS, wait_for
from tests.clients.secure_targets import ADMIN, TOKEN_SECRET, SecureTarget
from tests.clients.secure_targets import USERS as USERS_OF
from tests.clients.targets import MOCK_SETTINGS
from tests.clients.test_security_java import (CLASSPATH, JVM_TIMEOUT_S, SHORT_JVM, SOURCE,
                                              open_names, properties, refused, round_trip,
                                              sasl_config)

TOOL = "org.apache.kafka.tools.DelegationTokenCommand"
TOKEN_ADMIN = Path(__file__).with_name("java") / "TokenAdmin.java"
SECRET = TOKEN_SECRET
USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
DAY_MS = 24 * 3600 * 1000
WEEK_MS = 7 * DAY_MS
HOUR_MS = 3600 * 1000
NOT_ALLOWED = ("org.apache.kafka.common.errors.UnsupportedByAuthenticationException: "
               "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and "
               "on delegation token authenticated channels.")
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    """TokenAdmin and SecureClient, compiled once for the module's JVMs."""
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("javac"), \
        f"the Java clients need a JDK and {missing} (bash ci/dev.sh setup fetches them)"
    out = tmp_path_factory.mktemp("token-admin")
    done = subprocess.run(["javac", *(f"-J{flag}" for flag in SHORT_JVM), "-d", str(out),
                           "-cp", ":".join(map(str, CLASSPATH)), str(TOKEN_ADMIN),
                           str(SOURCE)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"javac: {done.stderr[-3000:]}"
    return out


def secured_cluster(stack, **settings) -> MockCluster:
    """SASL_PLAINTEXT with both SCRAM mechanisms, tokens on, on a manual clock."""
    return stack.enter_context(MockCluster(
        security_protocol="SASL_PLAINTEXT", sasl_mechanisms=["SCRAM-SHA-256", "SCRAM-SHA-512"],
        users=USERS, delegation_token_secret_key=SECRET, clock="manual",
        **{**MOCK_SETTINGS, **settings}))


def user_config(tmp_path: Path, user: str) -> Path:
    return properties(tmp_path / f"{user}.properties", sasl_config(
        "SASL_PLAINTEXT", "SCRAM-SHA-512", user, USERS[user]))


class User:
    """A user a test made for itself on a secure target: its principal and the properties
    file of a client logging in as it (SCRAM-SHA-512)."""

    def __init__(self, target: SecureTarget, tmp_path: Path, base: str):
        name, password = target.new_user(base)
        self.principal = f"User:{name}"
        self.config = properties(tmp_path / f"{name}.properties", sasl_config(
            "SASL_PLAINTEXT", "SCRAM-SHA-512", name, password))

    def __str__(self) -> str:
        return self.principal


def now_ms() -> int:
    return int(time.time() * 1000)


def token_config(token: "Token", mechanism: str = "SCRAM-SHA-256") -> dict[str, str]:
    """What an application logging in with the token sets."""
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'{SCRAM} required username="{token.token_id}" '
                                f'password="{token.hmac}" tokenauth="true";'}


class Token:
    """A token as TokenAdmin prints it: ``ID HMAC owner=P requester=P renewers=[P, ...]
    issue=MS expiry=MS max=MS``."""

    def __init__(self, line: str):
        self.token_id, self.hmac, rest = line.split(" ", 2)
        self.renewers = re.search(r"renewers=\[(.*?)\]", rest)[1]
        values = dict(re.findall(r"(\w+)=(\S+)", re.sub(r"renewers=\[.*?\]", "", rest)))
        self.owner, self.requester = values["owner"], values["requester"]
        self.issue, self.expiry, self.maximum = (int(values[k])
                                                 for k in ("issue", "expiry", "max"))


def token_admin(classes: Path, config: Path, bootstrap: str, *commands: str) -> list[str]:
    """What TokenAdmin prints for ``commands``, run in order on one Admin."""
    done = subprocess.run(["java", *SHORT_JVM, "-cp", ":".join(map(str, [classes, *CLASSPATH])),
                           "TokenAdmin", str(config), bootstrap, *commands],
                          capture_output=True, text=True, timeout=JVM_TIMEOUT_S)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[-1:] == ["done"], \
        f"TokenAdmin exited {done.returncode}: {lines}\n{done.stderr[-4000:]}"
    return lines[:-1]


def created(lines: list[str]) -> list[Token]:
    return [Token(line.split(" ", 1)[1]) for line in lines if line.startswith("created ")]


def described(lines: list[str]) -> list[Token]:
    return [Token(line.split(" ", 1)[1]) for line in lines if line.startswith("token ")]


def expected_hmac(token_id: str) -> str:
    return base64.b64encode(hmac.digest(SECRET.encode(), token_id.encode(),
                                        hashlib.sha512)).decode()


def answers(lines: list[str], word: str) -> list[int]:
    """The times of TokenAdmin's ``renewed`` or ``expired`` lines."""
    return [int(line.split()[1]) for line in lines if line.startswith(f"{word} ")]


def test_the_java_admin_creates_describes_renews_and_expires_tokens(secure_target, tmp_path,
                                                                    classes):
    alice, carol = User(secure_target, tmp_path, "alice"), User(secure_target, tmp_path, "carol")
    bootstrap = secure_target.bootstrap_for("SASL_PLAINTEXT")
    before = now_ms()
    lines = token_admin(classes, alice.config, bootstrap,
                        f"create renewers={carol}", "create max=3600000", "await count=2",
                        "describe", "renew period=60000", f"describe owners={carol}")
    after = now_ms()
    first, second = created(lines)
    assert (first.owner, first.requester, first.renewers) == (str(alice), str(alice),
                                                              str(carol))
    assert before <= first.issue <= second.issue <= after
    assert (first.expiry, first.maximum) == (first.issue + DAY_MS, first.issue + WEEK_MS)
    assert (second.expiry, second.maximum) == (second.issue + HOUR_MS, second.issue + HOUR_MS)
    assert first.hmac == expected_hmac(first.token_id)
    assert "described 2" in lines  # in no particular order on Kafka
    assert sorted(t.token_id for t in described(lines)[:2]) == sorted([first.token_id,
                                                                       second.token_id])
    [renewed] = answers(lines, "renewed")  # the token created last, for a minute from now
    assert second.issue + 60000 <= renewed <= after + 60000
    [of_carol] = described(lines)[2:]
    assert (of_carol.token_id, of_carol.hmac) == (first.token_id, first.hmac)

    # a renewer renews; anyone else is told the owner or renewers must
    before = now_ms()
    lines = token_admin(classes, carol.config, bootstrap,
                        f"renew hmac={first.hmac} period=60000",
                        f"renew hmac={second.hmac}", f"expire hmac={first.hmac} period=-1",
                        f"renew hmac={first.hmac}")
    after = now_ms()
    assert [line.split()[0] for line in lines] == ["renewed", "error", "expired", "error"]
    [renewed], [expired] = answers(lines, "renewed"), answers(lines, "expired")
    assert before + 60000 <= renewed <= after + 60000 and before <= expired <= after
    assert lines[1::2] == [
        "error org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException: "
        "Specified Principal is not valid Owner/Renewer.",
        "error org.apache.kafka.common.errors.DelegationTokenNotFoundException: "
        "Delegation Token is not found on server."]


@pytest.mark.mockbroker_only("clock")
def test_an_expired_token_is_refused_renewal_and_described_until_the_next_check(
        stack, tmp_path, classes):
    """Past its expiry (renewed for a second only), a token is refused renewal, and described
    until the periodic check (hourly) removes it."""
    cluster = secured_cluster(stack)
    now = cluster.now_ms
    alice = user_config(tmp_path, "alice")
    [token] = created(token_admin(classes, alice, cluster.bootstrap_servers,
                                  "create max=3600000", "renew period=1000"))
    cluster.advance_clock(HOUR_MS // 2)
    lines = token_admin(classes, alice, cluster.bootstrap_servers,
                        f"renew hmac={token.hmac}", "describe")
    assert lines[0] == ("error org.apache.kafka.common.errors.DelegationTokenExpiredException: "
                        "Delegation Token is expired.")
    assert lines[1] == "described 1"
    assert described(lines)[0].expiry == now + 1000
    cluster.advance_clock(HOUR_MS // 2)
    assert token_admin(classes, alice, cluster.bootstrap_servers, "describe") == ["described 0"]
    events = [(e["type"], e["token_id"]) for e in cluster.admin.events(
        ["delegation_token_created", "delegation_token_removed"])]
    assert events[-1] == ("delegation_token_removed", token.token_id)


def test_a_token_for_another_owner(secure_target, tmp_path, classes):
    """Who may make a token for someone else: a super user, or a principal CREATE_TOKENS on
    the owner's User resource allows; the requester sees the token as the owner does."""
    alice, bob, carol, dave = (User(secure_target, tmp_path, name)
                               for name in ("alice", "bob", "carol", "dave"))
    allow_tokens_for(secure_target, str(bob), str(alice))
    lines = token_admin(classes, alice.config, secure_target.bootstrap_for("SASL_PLAINTEXT"),
                        f"create owner={bob} renewers={carol}", f"create owner={dave}",
                        "create renewers=Group:ops", f"await count=1 owners={bob}",
                        f"describe owners={bob}")
    [for_bob] = created(lines)
    assert (for_bob.owner, for_bob.requester) == (str(bob), str(alice))
    assert lines[1:3] == [
        "error org.apache.kafka.common.errors.DelegationTokenAuthorizationException: "
        "Delegation Token authorization failed.",
        "error org.apache.kafka.common.errors.InvalidPrincipalTypeException: "
        "Supplied principalType is not supported."]
    assert [t.token_id for t in described(lines)] == [for_bob.token_id]


def allow_tokens_for(target: SecureTarget, owner: str, requester: str) -> None:
    """The ACL that lets ``requester`` make tokens for ``owner``, made by the super user with
    kafka-python's Admin (confluent-kafka's has no USER resources)."""
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap_for("SASL_PLAINTEXT"),
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                             sasl_plain_username=ADMIN, sasl_plain_password=USERS_OF[ADMIN],
                             request_timeout_ms=10000)
    try:
        pattern = ResourcePattern(ResourceType.USER, owner)
        acl = ACL(requester, "*", ACLOperation.CREATE_TOKENS, ACLPermissionType.ALLOW, pattern)
        assert admin.create_acls([acl])["failed"] == []
        # Kafka's broker applies the ACL a moment after the controller answered
        wait_for(lambda: admin.describe_acls(ACLFilter(
            requester, "*", ACLOperation.CREATE_TOKENS, ACLPermissionType.ALLOW,
            ResourcePatternFilter(ResourceType.USER, owner, ACLResourcePatternType.LITERAL)))[0],
            "the ACL in force")
    finally:
        admin.close()


@pytest.mark.mockbroker_only("broker-settings")
def test_tokens_turned_off(stack, tmp_path, classes):
    """Without ``delegation.token.secret.key`` every token request is refused."""
    off = stack.enter_context(MockCluster(security_protocol="SASL_PLAINTEXT", users=USERS,
                                          **MOCK_SETTINGS))
    lines = token_admin(classes, user_config(tmp_path, "alice"), off.bootstrap_servers,
                        "create", "describe")
    disabled = ("error org.apache.kafka.common.errors.DelegationTokenDisabledException: "
                "Delegation Token feature is not enabled.")
    assert lines == [disabled, disabled]


def test_kafka_delegation_tokens_creates_describes_renews_and_expires(secure_target, tmp_path):
    alice, bob = User(secure_target, tmp_path, "alice"), User(secure_target, tmp_path, "bob")
    bootstrap = secure_target.bootstrap_for("SASL_PLAINTEXT")

    def tool(*args: str) -> list[str]:
        out = run_tool(bootstrap, alice.config, *args)
        assert out.returncode == 0, out.stderr[-3000:]
        return [line.rstrip() for line in out.stdout.splitlines() if line.strip()]

    def date(ms: int) -> str:  # how the tool prints a time: local time, to the minute
        return time.strftime("%Y-%m-%dT%H:%M", time.localtime(ms / 1000))

    before = now_ms()
    lines = tool("--create", "--max-life-time-period", "-1", "--renewer-principal", str(bob))
    after = now_ms()
    assert lines[0] == (f"Calling create token operation with renewers :[{bob}] , "
                        "max-life-time-period :-1")
    token_id = lines[1].removeprefix("Created delegation token with tokenId : ")
    row = lines[3].split()
    assert row[:5] == [token_id, expected_hmac(token_id), str(alice), str(alice), f"[{bob}]"]
    for shown, ahead in zip(row[5:], (0, DAY_MS, WEEK_MS)):  # issued, expiring, at most
        assert date(before + ahead) <= shown <= date(after + ahead)
    token_hmac = row[1]

    # without --owner-principal the tool asks for the tokens of an empty list of owners,
    # which Kafka answers with none
    assert tool("--describe") == ["Calling describe token operation for current user.",
                                  "Total number of tokens : 0",
                                  "TOKENID         HMAC                           OWNER"
                                  "           REQUESTER       RENEWERS                  "
                                  "ISSUEDATE       EXPIRYDATE      MAXDATE"]
    def of_bob() -> list[str] | None:
        lines = tool("--describe", "--owner-principal", str(bob))
        return lines if lines[1] == "Total number of tokens : 1" else None
    lines = wait_for(of_bob, "the token, described")
    assert lines[0] == f"Calling describe token operation for owners: [{bob}]"
    assert lines[3].split()[:2] == [token_id, token_hmac]
    assert tool("--describe", "--owner-principal", "User:carol")[1] == \
        "Total number of tokens : 0"

    before = now_ms()
    lines = tool("--renew", "--hmac", token_hmac, "--renew-time-period", "-1")
    after = now_ms()
    renewed = lines[-1].removeprefix("Completed renew operation. New expiry date : ")
    assert date(before + DAY_MS) <= renewed <= date(after + DAY_MS)
    before = now_ms()
    lines = tool("--expire", "--hmac", token_hmac, "--expiry-time-period", "-1")
    after = now_ms()
    expired = lines[-1].removeprefix("Completed expire operation. New expiry date : ")
    assert date(before) <= expired <= date(after)
    wait_for(lambda: tool("--describe", "--owner-principal", str(alice))[1] ==
             "Total number of tokens : 0", "the expired token to be gone")


def test_clients_log_in_with_a_token_as_its_owner(secure_target, tmp_path, classes):
    """The stock producer, consumer and Admin with ``tokenauth="true"``: every request is the
    token owner's, with what ACLs allow the owner; such a connection may not manage tokens;
    once the token is expired (at once, by its owner) its login is refused."""
    alice = User(secure_target, tmp_path, "alice")
    bootstrap = secure_target.bootstrap_for("SASL_PLAINTEXT")
    [token] = created(token_admin(classes, alice.config, bootstrap, "create", "await count=1"))
    config = properties(tmp_path / "token.properties", token_config(token))
    round_trip(classes, config, bootstrap, "SASL_PLAINTEXT", open_names(secure_target,
                                                                        str(alice)))
    if secure_target.mock is not None:  # mockbroker's request log says who sent what
        by_token = [r for r in secure_target.mock.admin.requests()
                    if r.mechanism == "SCRAM-SHA-256" and r.principal == str(alice)
                    and r.api not in ("ApiVersions", "SaslHandshake", "SaslAuthenticate")]
        assert {"Produce", "Fetch", "OffsetCommit", "CreateTopics"} <= {r.api for r in by_token}

    lines = token_admin(classes, config, bootstrap, "create", "describe")
    assert lines == [f"error {NOT_ALLOWED}", f"error {NOT_ALLOWED}"]

    lines = token_admin(classes, alice.config, bootstrap, f"expire hmac={token.hmac}",
                        "await count=0")
    assert [line.split()[0] for line in lines] == ["expired"], lines
    failure = ("org.apache.kafka.common.errors.SaslAuthenticationException: Authentication "
               "failed during authentication due to invalid credentials with SASL mechanism "
               "SCRAM-SHA-256")
    found = refused(classes, token_config(token), tmp_path / "gone.properties", bootstrap)
    assert found == {"partitionsFor": [failure], "send": [failure]}


def run_tool(bootstrap: str, config: Path, *args: str) -> subprocess.CompletedProcess:
    jars = sorted(KAFKA_TOOLS.glob("*.jar"))
    assert jars and shutil.which("java"), \
        f"Kafka's tools need java and the jars in {KAFKA_TOOLS} (bash ci/dev.sh setup)"
    return subprocess.run(["java", *SHORT_JVM, "-cp", ":".join(map(str, jars)), TOOL,
                           "--bootstrap-server", bootstrap, "--command-config", str(config),
                           *args], capture_output=True, text=True, timeout=120)


def test_token_requests_are_refused_on_plaintext(target, tmp_path):
    """Kafka answers every token API with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on a PLAINTEXT
    listener, before it looks at anything else, and the tool reports it."""
    config = properties(tmp_path / "plaintext.properties", {"security.protocol": "PLAINTEXT"})
    for args in (("--create", "--max-life-time-period", "-1"), ("--describe",)):
        out = run_tool(target.bootstrap_servers, config, *args)
        assert out.returncode == 1
        assert NOT_ALLOWED in out.stderr.splitlines(), out.stderr[-3000:]
