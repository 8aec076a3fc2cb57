"""Delegation tokens with Kafka's own Java clients and tool: the Java Admin's
createDelegationToken, describeDelegationToken, renewDelegationToken and expireDelegationToken
(``java/TokenAdmin.java``), ``kafka-delegation-tokens`` (``org.apache.kafka.tools.
DelegationTokenCommand``), and the stock producer, consumer and Admin logging in with a token
over SCRAM (``tokenauth="true"`` in ``ScramLoginModule``), as the token's owner.

Token requests need an authenticated channel, so these run on mockbroker's SASL_PLAINTEXT
listener (the Kafka target has a PLAINTEXT listener only), on a manual clock so that every
timestamp is known.  Both targets refuse token requests on PLAINTEXT, as the tool shows.
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

from mockbroker import MockCluster
from tests.clients.helpers import KAFKA_TOOLS
from tests.clients.targets import MOCK_SETTINGS
from tests.clients.test_security_java import (CLASSPATH, JVM_TIMEOUT_S, SHORT_JVM, SOURCE,
                                              properties, refused, round_trip, sasl_config)

TOOL = "org.apache.kafka.tools.DelegationTokenCommand"
TOKEN_ADMIN = Path(__file__).with_name("java") / "TokenAdmin.java"
SECRET = "cluster-token-secret"
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


@pytest.mark.mockbroker_only("security")
def test_the_java_admin_creates_describes_renews_and_expires_tokens(stack, tmp_path, classes):
    cluster = secured_cluster(stack)
    now = cluster.now_ms
    alice, carol = user_config(tmp_path, "alice"), user_config(tmp_path, "carol")
    lines = token_admin(classes, alice, cluster.bootstrap_servers,
                        "create renewers=User:carol", "create max=3600000", "describe",
                        "renew period=1000", "describe owners=User:carol")
    first, second = created(lines)
    assert (first.owner, first.requester, first.renewers) == ("User:alice", "User:alice",
                                                              "User:carol")
    assert (first.issue, first.expiry, first.maximum) == (now, now + DAY_MS, now + WEEK_MS)
    assert (second.expiry, second.maximum) == (now + HOUR_MS, now + HOUR_MS)
    assert first.hmac == expected_hmac(first.token_id)
    assert lines[2] == "described 2"
    assert [t.token_id for t in described(lines)[:2]] == [first.token_id, second.token_id]
    assert f"renewed {now + 1000}" in lines  # the token created last
    [of_carol] = described(lines)[2:]
    assert (of_carol.token_id, of_carol.hmac) == (first.token_id, first.hmac)

    # a renewer renews; anyone else is told the owner or renewers must
    lines = token_admin(classes, carol, cluster.bootstrap_servers,
                        f"renew hmac={first.hmac} period=60000",
                        f"renew hmac={second.hmac}", f"expire hmac={first.hmac} period=-1",
                        f"renew hmac={first.hmac}")
    assert lines == [
        f"renewed {now + 60000}",
        "error org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException: "
        "Specified Principal is not valid Owner/Renewer.",
        f"expired {now}",
        "error org.apache.kafka.common.errors.DelegationTokenNotFoundException: "
        "Delegation Token is not found on server."]

    # past its expiry (renewed for a second only), the token is refused renewal, and
    # described until the periodic check (hourly) removes it
    cluster.advance_clock(HOUR_MS // 2)
    lines = token_admin(classes, alice, cluster.bootstrap_servers,
                        f"renew hmac={second.hmac}", "describe")
    assert lines[0] == ("error org.apache.kafka.common.errors.DelegationTokenExpiredException: "
                        "Delegation Token is expired.")
    assert lines[1] == "described 1"
    assert described(lines)[0].expiry == now + 1000
    cluster.advance_clock(HOUR_MS // 2)
    assert token_admin(classes, alice, cluster.bootstrap_servers, "describe") == ["described 0"]
    events = [(e["type"], e["token_id"]) for e in cluster.admin.events(
        ["delegation_token_created", "delegation_token_removed"])]
    assert events[-1] == ("delegation_token_removed", second.token_id)


@pytest.mark.mockbroker_only("security")
def test_a_token_for_another_owner_and_tokens_turned_off(stack, tmp_path, classes):
    cluster = secured_cluster(stack)
    alice = user_config(tmp_path, "alice")
    lines = token_admin(classes, alice, cluster.bootstrap_servers,
                        "create owner=User:bob renewers=User:carol",
                        "create renewers=Group:ops", "describe owners=User:bob")
    [for_bob] = created(lines)
    assert (for_bob.owner, for_bob.requester) == ("User:bob", "User:alice")
    assert lines[1] == ("error org.apache.kafka.common.errors.InvalidPrincipalTypeException: "
                        "Supplied principalType is not supported.")
    assert [t.token_id for t in described(lines)] == [for_bob.token_id]

    off = stack.enter_context(MockCluster(security_protocol="SASL_PLAINTEXT", users=USERS,
                                          **MOCK_SETTINGS))
    lines = token_admin(classes, alice, off.bootstrap_servers, "create", "describe")
    disabled = ("error org.apache.kafka.common.errors.DelegationTokenDisabledException: "
                "Delegation Token feature is not enabled.")
    assert lines == [disabled, disabled]


@pytest.mark.mockbroker_only("security")
def test_kafka_delegation_tokens_creates_describes_renews_and_expires(stack, tmp_path):
    cluster = secured_cluster(stack)
    now = cluster.now_ms
    config = user_config(tmp_path, "alice")

    def tool(*args: str) -> list[str]:
        out = run_tool(cluster.bootstrap_servers, config, *args)
        assert out.returncode == 0, out.stderr[-3000:]
        return [line.rstrip() for line in out.stdout.splitlines() if line.strip()]

    def date(ms: int) -> str:  # how the tool prints a time: local time, to the minute
        return time.strftime("%Y-%m-%dT%H:%M", time.localtime(ms / 1000))

    lines = tool("--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob")
    assert lines[0] == ("Calling create token operation with renewers :[User:bob] , "
                        "max-life-time-period :-1")
    token_id = lines[1].removeprefix("Created delegation token with tokenId : ")
    row = lines[3].split()
    assert row == [token_id, expected_hmac(token_id), "User:alice", "User:alice", "[User:bob]",
                   date(now), date(now + DAY_MS), date(now + WEEK_MS)]
    token_hmac = row[1]

    # without --owner-principal the tool asks for the tokens of an empty list of owners,
    # which Kafka answers with none
    assert tool("--describe") == ["Calling describe token operation for current user.",
                                  "Total number of tokens : 0",
                                  "TOKENID         HMAC                           OWNER"
                                  "           REQUESTER       RENEWERS                  "
                                  "ISSUEDATE       EXPIRYDATE      MAXDATE"]
    lines = tool("--describe", "--owner-principal", "User:bob")
    assert lines[:2] == ["Calling describe token operation for owners: [User:bob]",
                         "Total number of tokens : 1"]
    assert lines[3].split()[:2] == [token_id, token_hmac]
    assert tool("--describe", "--owner-principal", "User:carol")[1] == \
        "Total number of tokens : 0"

    cluster.advance_clock(2 * HOUR_MS)
    lines = tool("--renew", "--hmac", token_hmac, "--renew-time-period", "-1")
    assert lines[-1] == ("Completed renew operation. New expiry date : "
                         f"{date(now + 2 * HOUR_MS + DAY_MS)}")
    lines = tool("--expire", "--hmac", token_hmac, "--expiry-time-period", "-1")
    assert lines[-1] == \
        f"Completed expire operation. New expiry date : {date(now + 2 * HOUR_MS)}"
    assert tool("--describe", "--owner-principal", "User:alice")[1] == \
        "Total number of tokens : 0"


@pytest.mark.mockbroker_only("security")
def test_clients_log_in_with_a_token_as_its_owner(stack, tmp_path, classes):
    """The stock producer, consumer and Admin with ``tokenauth="true"``: every request is the
    token owner's; such a connection may not manage tokens; once the token is gone (expired
    and removed by the periodic check) its login is refused."""
    cluster = secured_cluster(stack, delegation_token_expiry_check_interval_ms=60000)
    [token] = created(token_admin(classes, user_config(tmp_path, "alice"),
                                  cluster.bootstrap_servers, "create"))
    config = properties(tmp_path / "token.properties", token_config(token))
    round_trip(classes, config, cluster.bootstrap_servers, "SASL_PLAINTEXT")
    by_token = [r for r in cluster.admin.requests() if r.mechanism == "SCRAM-SHA-256"
                and r.api not in ("ApiVersions", "SaslHandshake", "SaslAuthenticate")]
    assert {"Produce", "Fetch", "OffsetCommit", "CreateTopics"} <= {r.api for r in by_token}
    assert {r.principal for r in by_token} == {"User:alice"}

    lines = token_admin(classes, config, cluster.bootstrap_servers, "create", "describe")
    assert lines == [f"error {NOT_ALLOWED}", f"error {NOT_ALLOWED}"]

    cluster.advance_clock(DAY_MS + 60000)  # expired, then removed at the next check
    failure = ("org.apache.kafka.common.errors.SaslAuthenticationException: Authentication "
               "failed during authentication due to invalid credentials with SASL mechanism "
               "SCRAM-SHA-256")
    found = refused(classes, token_config(token), tmp_path / "gone.properties",
                    cluster.bootstrap_servers)
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
