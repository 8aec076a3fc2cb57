"""Delegation tokens (KIP-48) as a client of Kafka 4.4 sees them: CreateDelegationToken,
RenewDelegationToken, ExpireDelegationToken and DescribeDelegationToken in every version Kafka
serves, with Kafka's order of checks, error codes and the timestamps its refusals carry; the
lifetimes and the periodic expiry check on a manual clock; the owner, requester and renewer
rules and the ACLs; and a SCRAM login with ``tokenauth=true`` that makes the connection the
token's owner.

Requests and responses go through the codec at the version under test.  What Kafka 4.4 answers
was read off a live broker with a SASL_PLAINTEXT listener (StandardAuthorizer for the ACL cases)
and from its sources (KafkaApis, ControllerApis, DelegationTokenControlManager,
DelegationTokenManager, ScramSaslServer).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

import wire
from mockbroker.core.clock import ManualClock
from mockbroker.core.cluster import Broker
from mockbroker.core.config.describe import describe_broker
from mockbroker.core.context import RequestContext
from mockbroker.core.deferred import Close
from mockbroker.core.security import Principal
from mockbroker.core.security.acls import (
    AclBinding, AclOperation as Op, AclPermissionType as Perm, Authorizer,
    PatternType as Pattern, ResourceType as Res)
from mockbroker.core.security.config import check_security
from mockbroker.core.settings import resolve_settings
from mockbroker.handlers import new_core
from tests.core.harness import MADE, START_MS, answer, received
from tests.core.test_sasl import Client, ScramClient
from wire import errors

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41
SECRET = "the-cluster-secret"
DAY_MS = 24 * 3600 * 1000
WEEK_MS = 7 * DAY_MS
HOUR_MS = 3600 * 1000
ALICE, BOB, CAROL = (Principal("User", n) for n in ("alice", "bob", "carol"))
ADMIN = Principal("User", "admin")
USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret",
         "admin": "admin-secret"}


def token_core(*, secret: str | None = SECRET, authorizer: bool = False, **settings):
    """One broker with a PLAINTEXT and a SASL_PLAINTEXT listener, the users above, and
    delegation tokens keyed with ``secret`` (None: tokens off)."""
    if secret is not None:
        settings["delegation_token_secret_key"] = secret
    security = check_security({"listeners": ["PLAINTEXT", "SASL_PLAINTEXT"], "users": USERS,
                               "authorizer": authorizer, "super_users": ["User:admin"]})
    core = new_core([Broker(0, "127.0.0.1", 9092)], settings, ManualClock(START_MS), security)
    MADE.append(core)
    return core


def ask(core, api_key: int, version: int, who: Principal = ALICE, *,
        listener: str = "SASL_PLAINTEXT", **fields):
    """One request from ``who`` on ``listener``, through the codec: the response as the client
    decodes it."""
    body = wire.request_class(api_key)(**fields)
    frame = wire.encode_request(api_key, version, 7, "app", body, size_prefix=False)
    request = wire.decode_request(frame)
    ctx = RequestContext(0, 1, "app", version, core.clock.now_ms(), principal=who,
                         listener=listener)
    return answer(core.handle(request, ctx).map(
        lambda response: received(api_key, version, response)))


def create(core, who: Principal = ALICE, *, version: int = 3, owner: Principal | None = None,
           renewers=(), max_lifetime_ms: int = -1, **kw):
    renewer = wire.request_class(CREATE).CreatableRenewers
    return ask(core, CREATE, version, who,
               owner_principal_type=owner.type if owner else None,
               owner_principal_name=owner.name if owner else None,
               renewers=[renewer(principal_type=r.type, principal_name=r.name)
                         for r in renewers],
               max_lifetime_ms=max_lifetime_ms, **kw)


def renew(core, token_hmac: bytes, who: Principal = ALICE, period: int = -1, version: int = 2,
          **kw):
    return ask(core, RENEW, version, who, hmac=token_hmac, renew_period_ms=period, **kw)


def expire(core, token_hmac: bytes, who: Principal = ALICE, period: int = -1,
           version: int = 2, **kw):
    return ask(core, EXPIRE, version, who, hmac=token_hmac, expiry_time_period_ms=period, **kw)


def describe(core, who: Principal = ALICE, owners=None, version: int = 3, **kw):
    owner = wire.request_class(DESCRIBE).DescribeDelegationTokenOwner
    return ask(core, DESCRIBE, version, who, owners=None if owners is None else [
        owner(principal_type=o.type, principal_name=o.name) for o in owners], **kw)


def ids(response) -> list[str]:
    assert response.error_code == errors.NONE
    return [t.token_id for t in response.tokens]


def advance(core, ms: int) -> None:
    core.clock.advance(ms)


# -- CreateDelegationToken -------------------------------------------------------------------

def test_a_token_has_kafkas_lifetimes_and_its_hmac_is_hmac_sha512_of_its_id():
    core = token_core()
    token = create(core, renewers=[BOB])
    assert token.error_code == errors.NONE
    assert (token.principal_type, token.principal_name) == ("User", "alice")
    assert (token.token_requester_principal_type,
            token.token_requester_principal_name) == ("User", "alice")
    assert (token.issue_timestamp_ms, token.expiry_timestamp_ms, token.max_timestamp_ms) == \
        (START_MS, START_MS + DAY_MS, START_MS + WEEK_MS)
    # a Kafka Uuid as Kafka prints it: 16 bytes in URL-safe base64, unpadded
    assert len(token.token_id) == 22 and not token.token_id.startswith("-")
    assert len(base64.urlsafe_b64decode(token.token_id + "==")) == 16
    assert token.hmac == hmac.digest(SECRET.encode(), token.token_id.encode(), hashlib.sha512)
    assert create(core).token_id != token.token_id


@pytest.mark.parametrize("version", [1, 2])
def test_before_v3_the_answer_names_no_requester(version):
    token = create(token_core(), version=version)
    assert (token.error_code, token.principal_name) == (errors.NONE, "alice")
    assert (token.token_requester_principal_type,
            token.token_requester_principal_name) == ("", "")


@pytest.mark.parametrize("asked, expiry, maximum", [
    (-1, DAY_MS, WEEK_MS),        # the settings' lifetimes
    (0, DAY_MS, WEEK_MS),
    (5000, 5000, 5000),           # a shorter lifetime ends the token before it needs renewing
    (3 * DAY_MS, DAY_MS, 3 * DAY_MS),
    (30 * DAY_MS, DAY_MS, WEEK_MS),  # never more than delegation.token.max.lifetime.ms
])
def test_the_lifetime_asked_for_is_held_to_the_maximum(asked, expiry, maximum):
    token = create(token_core(), max_lifetime_ms=asked)
    assert (token.expiry_timestamp_ms - START_MS, token.max_timestamp_ms - START_MS) == \
        (expiry, maximum)


def test_the_lifetimes_come_from_the_settings():
    core = token_core(delegation_token_max_lifetime_ms=HOUR_MS,
                      delegation_token_expiry_time_ms=10 * 60 * 1000)
    token = create(core)
    assert (token.expiry_timestamp_ms, token.max_timestamp_ms) == \
        (START_MS + 10 * 60 * 1000, START_MS + HOUR_MS)
    longer = token_core(delegation_token_max_lifetime_ms=HOUR_MS,
                        delegation_token_expiry_time_ms=2 * HOUR_MS)
    assert create(longer).expiry_timestamp_ms == START_MS + HOUR_MS


def test_a_v3_request_may_name_another_owner():
    core = token_core()
    token = create(core, owner=BOB)
    assert (token.error_code, token.principal_name, token.token_requester_principal_name) == \
        (errors.NONE, "bob", "alice")
    group_owned = create(core, owner=Principal("Group", "x"))  # Kafka checks no owner type
    assert (group_owned.error_code, group_owned.principal_type) == (errors.NONE, "Group")
    nameless = create(core, owner=Principal("User", ""))
    assert (nameless.error_code, nameless.principal_name) == (errors.NONE, "alice")
    untyped = ask(core, CREATE, 3, owner_principal_type=None, owner_principal_name="bob",
                  renewers=[], max_lifetime_ms=-1)
    assert (untyped.error_code, untyped.principal_name, untyped.token_requester_principal_name,
            untyped.issue_timestamp_ms) == (errors.UNKNOWN_SERVER_ERROR, "ANONYMOUS",
                                            "ANONYMOUS", -1)


def test_a_renewer_that_is_not_a_user_is_refused_with_the_broker_timestamps():
    token = create(token_core(), owner=BOB, renewers=[CAROL, Principal("Group", "ops")])
    assert (token.error_code, token.principal_name, token.token_requester_principal_name) == \
        (errors.INVALID_PRINCIPAL_TYPE, "bob", "alice")
    assert (token.issue_timestamp_ms, token.expiry_timestamp_ms, token.max_timestamp_ms,
            token.token_id, token.hmac) == (-1, -1, -1, "", b"")


@pytest.mark.parametrize("secret", [None, ""])
def test_without_a_secret_key_tokens_are_off(secret):
    core = token_core(secret=secret)
    token = create(core, owner=BOB)
    # the controller's refusal: the principals, and timestamps left at 0
    assert (token.error_code, token.principal_name, token.token_requester_principal_name,
            token.issue_timestamp_ms, token.max_timestamp_ms, token.token_id) == \
        (errors.DELEGATION_TOKEN_AUTH_DISABLED, "bob", "alice", 0, 0, "")
    for answer_ in (renew(core, b"x"), expire(core, b"x")):
        assert (answer_.error_code, answer_.expiry_timestamp_ms) == \
            (errors.DELEGATION_TOKEN_AUTH_DISABLED, 0)
    described = describe(core)
    assert (described.error_code, described.tokens) == (errors.DELEGATION_TOKEN_AUTH_DISABLED,
                                                         [])


# -- where token requests are refused ----------------------------------------------------------

@pytest.mark.parametrize("listener, who", [
    ("PLAINTEXT", Principal("User", "ANONYMOUS")),
    ("SSL", Principal("User", "ANONYMOUS")),  # SSL without a client certificate
])
def test_plaintext_and_one_way_ssl_may_not_manage_tokens(listener, who):
    core = token_core()
    token = create(core)  # on SASL_PLAINTEXT
    refused = create(core, who, listener=listener)
    assert (refused.error_code, refused.principal_name, refused.token_requester_principal_name,
            refused.issue_timestamp_ms, refused.expiry_timestamp_ms, refused.max_timestamp_ms,
            refused.token_id, refused.hmac) == \
        (errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "ANONYMOUS", "ANONYMOUS", -1, -1, -1, "",
         b"")
    for answer_ in (renew(core, token.hmac, who, listener=listener),
                    expire(core, token.hmac, who, listener=listener)):
        assert (answer_.error_code, answer_.expiry_timestamp_ms) == \
            (errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1)
    described = describe(core, who, listener=listener)
    assert (described.error_code, described.tokens) == \
        (errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, [])
    # refused before anything else: even with tokens off
    assert create(token_core(secret=None), who, listener=listener).error_code == \
        errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def test_ssl_with_a_client_certificate_may_manage_tokens():
    who = Principal("User", "CN=alice")
    token = create(token_core(), who, listener="SSL")
    assert (token.error_code, token.principal_name) == (errors.NONE, "CN=alice")


# -- DescribeDelegationToken -------------------------------------------------------------------

def test_describe_shows_the_tokens_with_their_hmac_and_renewers():
    core = token_core()
    first = create(core, renewers=[BOB])
    second = create(core, owner=CAROL)
    described = describe(core)
    assert ids(described) == [first.token_id, second.token_id]
    shown = described.tokens[0]
    assert (shown.principal_name, shown.token_requester_principal_name, shown.issue_timestamp,
            shown.expiry_timestamp, shown.max_timestamp, shown.hmac) == \
        ("alice", "alice", first.issue_timestamp_ms, first.expiry_timestamp_ms,
         first.max_timestamp_ms, first.hmac)
    assert [(r.principal_type, r.principal_name) for r in shown.renewers] == [("User", "bob")]
    old = describe(core, version=1).tokens[1]
    assert (old.principal_name, old.token_requester_principal_name) == ("carol", "")


def test_describe_owners_match_owner_requester_and_renewers():
    core = token_core()
    mine = create(core, renewers=[BOB]).token_id
    for_carol = create(core, owner=CAROL).token_id
    bobs = create(core, BOB).token_id
    assert ids(describe(core, ADMIN, owners=[])) == []
    assert ids(describe(core, ADMIN, owners=[BOB])) == [mine, bobs]
    assert ids(describe(core, ADMIN, owners=[ALICE])) == [mine, for_carol]
    assert ids(describe(core, ADMIN, owners=[CAROL, Principal("User", "nobody")])) == \
        [for_carol]
    assert ids(describe(core, ADMIN)) == [mine, for_carol, bobs]


# -- RenewDelegationToken and ExpireDelegationToken -------------------------------------------

def test_the_owner_and_the_renewers_renew_and_nobody_else():
    core = token_core()
    token = create(core, renewers=[BOB])
    advance(core, HOUR_MS)
    by_bob = renew(core, token.hmac, BOB, period=1000)
    assert (by_bob.error_code, by_bob.expiry_timestamp_ms) == (errors.NONE,
                                                             START_MS + HOUR_MS + 1000)
    by_alice = renew(core, token.hmac, ALICE, version=1)  # -1: the setting's period
    assert by_alice.expiry_timestamp_ms == START_MS + HOUR_MS + DAY_MS
    assert renew(core, token.hmac, ALICE, period=2 * DAY_MS).expiry_timestamp_ms == \
        START_MS + HOUR_MS + DAY_MS  # never more than delegation.token.expiry.time.ms
    by_carol = renew(core, token.hmac, CAROL)
    assert (by_carol.error_code, by_carol.expiry_timestamp_ms) == \
        (errors.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    # the requester of a token made for someone else is neither owner nor renewer
    for_bob = create(core, owner=BOB)
    assert renew(core, for_bob.hmac, ALICE).error_code == errors.DELEGATION_TOKEN_OWNER_MISMATCH
    unknown = renew(core, b"no such token")
    assert (unknown.error_code, unknown.expiry_timestamp_ms) == \
        (errors.DELEGATION_TOKEN_NOT_FOUND, 0)
    assert describe(core).tokens[0].expiry_timestamp == START_MS + HOUR_MS + DAY_MS


def test_a_renewal_never_passes_the_tokens_maximum():
    core = token_core()
    token = create(core, max_lifetime_ms=DAY_MS + HOUR_MS)
    advance(core, 20 * HOUR_MS)
    assert renew(core, token.hmac).expiry_timestamp_ms == START_MS + DAY_MS + HOUR_MS


def test_expire_brings_the_expiry_forward_and_a_negative_period_removes_the_token():
    core = token_core()
    token = create(core, renewers=[BOB])
    other = create(core)
    advance(core, 1000)
    soon = expire(core, token.hmac, BOB, period=500)
    assert (soon.error_code, soon.expiry_timestamp_ms) == (errors.NONE, START_MS + 1500)
    assert expire(core, token.hmac, CAROL).error_code == errors.DELEGATION_TOKEN_OWNER_MISMATCH
    assert expire(core, token.hmac, period=WEEK_MS * 2).expiry_timestamp_ms == \
        START_MS + WEEK_MS  # never past its maximum
    gone = expire(core, other.hmac, version=1)
    assert (gone.error_code, gone.expiry_timestamp_ms) == (errors.NONE, START_MS + 1000)
    assert ids(describe(core)) == [token.token_id]
    assert expire(core, other.hmac).error_code == errors.DELEGATION_TOKEN_NOT_FOUND


def test_a_token_past_its_expiry_is_kept_until_the_periodic_check():
    core = token_core()
    token = create(core, renewers=[BOB])
    assert expire(core, token.hmac, period=0).expiry_timestamp_ms == START_MS
    advance(core, 1)
    # still described, no longer renewed nor expired, but removed on request
    assert describe(core).tokens[0].expiry_timestamp == START_MS
    assert (renew(core, token.hmac).error_code, renew(core, token.hmac).expiry_timestamp_ms) == \
        (errors.DELEGATION_TOKEN_EXPIRED, 0)
    assert expire(core, token.hmac, period=1000).error_code == errors.DELEGATION_TOKEN_EXPIRED
    # who may not renew it is told so before it is told the token has expired
    assert expire(core, token.hmac, CAROL).error_code == errors.DELEGATION_TOKEN_OWNER_MISMATCH
    assert renew(core, token.hmac, CAROL).error_code == errors.DELEGATION_TOKEN_EXPIRED
    assert expire(core, token.hmac, BOB, period=-1).error_code == errors.NONE
    assert ids(describe(core)) == []


def test_the_periodic_check_removes_expired_tokens_on_the_broker_clock():
    core = token_core(delegation_token_expiry_check_interval_ms=10 * 60 * 1000)
    short = create(core, max_lifetime_ms=5 * 60 * 1000)
    lasting = create(core)
    advance(core, 5 * 60 * 1000 + 1)  # past its maximum, before the first check
    assert ids(describe(core)) == [short.token_id, lasting.token_id]
    advance(core, 5 * 60 * 1000)  # the check at 10 minutes
    assert ids(describe(core)) == [lasting.token_id]
    assert renew(core, short.hmac).error_code == errors.DELEGATION_TOKEN_NOT_FOUND
    advance(core, DAY_MS)  # the other expires a day after it was made, and goes too
    assert ids(describe(core)) == []
    events = [(e["type"], e["token_id"]) for e in core.events
              if e["type"].startswith("delegation_token")]
    assert events == [("delegation_token_created", short.token_id),
                      ("delegation_token_created", lasting.token_id),
                      ("delegation_token_removed", short.token_id),
                      ("delegation_token_removed", lasting.token_id)]
    removed = [e for e in core.events if e["type"] == "delegation_token_removed"][0]
    assert (removed["timer"], removed["owner"], removed["time_ms"]) == \
        ("delegation_token_expiry_check", "User:alice", START_MS + 10 * 60 * 1000)


def test_events_say_what_happened_to_a_token():
    core = token_core()
    token = create(core, renewers=[BOB])
    renew(core, token.hmac, BOB, period=1000)
    expire(core, token.hmac, period=500)
    expire(core, token.hmac, period=-1)
    events = [e for e in core.events if e["type"].startswith("delegation_token")]
    assert [e["type"] for e in events] == ["delegation_token_created",
                                           "delegation_token_renewed",
                                           "delegation_token_expired",
                                           "delegation_token_removed"]
    created = events[0]
    assert (created["request"], created["owner"], created["requester"], created["renewers"],
            created["expiry_timestamp_ms"], created["max_timestamp_ms"]) == \
        ("CreateDelegationToken", "User:alice", "User:alice", ["User:bob"],
         START_MS + DAY_MS, START_MS + WEEK_MS)
    assert [e["expiry_timestamp_ms"] for e in events[1:3]] == [START_MS + 1000,
                                                               START_MS + 500]
    assert "secret" not in repr(events) and token.hmac.hex() not in repr(events)


# -- ACLs ---------------------------------------------------------------------------------------

def grant(core, resource: Res, name: str, operation: Op, principal: Principal) -> None:
    binding = AclBinding(resource, name, Pattern.LITERAL, str(principal), "*", operation,
                         Perm.ALLOW)
    assert all(r.ok for r in core.security.authorizer.acls.create([binding]))


def test_a_token_for_another_owner_needs_create_tokens_on_that_user():
    core = token_core(authorizer=True)
    assert isinstance(core.security.authorizer, Authorizer)
    assert create(core).error_code == errors.NONE  # one's own token needs no ACL
    refused = create(core, owner=BOB)
    assert (refused.error_code, refused.principal_name, refused.token_requester_principal_name,
            refused.issue_timestamp_ms) == \
        (errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED, "bob", "alice", -1)
    grant(core, Res.USER, "User:bob", Op.CREATE_TOKENS, ALICE)
    assert create(core, owner=BOB).principal_name == "bob"
    assert create(core, owner=CAROL).error_code == errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED
    assert create(core, ADMIN, owner=CAROL).error_code == errors.NONE  # a super user


def test_describe_shows_others_tokens_only_as_the_acls_allow():
    core = token_core(authorizer=True)
    grant(core, Res.USER, "User:bob", Op.CREATE_TOKENS, ALICE)
    own = create(core).token_id
    renewable = create(core, renewers=[CAROL]).token_id
    for_bob = create(core, owner=BOB).token_id
    assert ids(describe(core, CAROL)) == [renewable]
    assert ids(describe(core, BOB)) == [for_bob]
    assert ids(describe(core)) == [own, renewable, for_bob]  # owner, and requester
    assert ids(describe(core, ADMIN)) == [own, renewable, for_bob]
    grant(core, Res.DELEGATION_TOKEN, own, Op.DESCRIBE, CAROL)
    assert ids(describe(core, CAROL)) == [own, renewable]
    grant(core, Res.USER, "User:bob", Op.DESCRIBE_TOKENS, CAROL)
    assert ids(describe(core, CAROL)) == [own, renewable, for_bob]
    # seeing a token is not renewing it
    assert renew(core, create(core, BOB).hmac, CAROL).error_code == \
        errors.DELEGATION_TOKEN_OWNER_MISMATCH


def test_without_an_authorizer_everyone_is_shown_every_token():
    core = token_core()
    token = create(core, owner=BOB)
    assert ids(describe(core, CAROL)) == [token.token_id]


# -- SCRAM with tokenauth=true -----------------------------------------------------------------

class TokenScramClient(ScramClient):
    """A SCRAM client that logs in with a delegation token: its id as the user name, the base64
    HMAC as the password, and the extension ``tokenauth=true``."""

    def __init__(self, mechanism: str, token_id: str, password: str, extension="true"):
        super().__init__(mechanism, token_id, password)
        self.first_bare += f",tokenauth={extension}"


def login(core, user: str, password: str, mechanism: str = "SCRAM-SHA-256", *,
          token: bool = True, extension: str = "true"):
    """A connection after a SCRAM exchange: (client, the last SaslAuthenticate answer)."""
    client = Client(core)
    client.handshake(mechanism)
    scram = TokenScramClient(mechanism, user, password, extension) if token \
        else ScramClient(mechanism, user, password)
    first = client.authenticate(scram.first())
    if isinstance(first, Close):
        return client, client.last
    final = client.authenticate(scram.final(first.auth_bytes))
    if isinstance(final, Close):
        return client, client.last
    assert scram.verify(final.auth_bytes)
    return client, final


def password(token) -> str:
    return base64.b64encode(token.hmac).decode()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("extension", ["true", "TRUE"])
def test_a_scram_login_with_a_token_is_its_owner_until_the_token_expires(mechanism,
                                                                         extension):
    core = token_core()
    token = create(core, owner=BOB)
    advance(core, HOUR_MS)
    client, done = login(core, token.token_id, password(token), mechanism,
                         extension=extension)
    assert (done.error_code, done.session_lifetime_ms) == (errors.NONE, DAY_MS - HOUR_MS)
    assert client.conn.who == BOB
    assert client.metadata().brokers
    advance(core, DAY_MS - HOUR_MS)  # the session ends with the token's validity
    assert isinstance(client.metadata(), Close)


def test_a_connection_authenticated_with_a_token_may_not_manage_tokens():
    core = token_core()
    token = create(core)
    client, _ = login(core, token.token_id, password(token))
    refused = client.send(CREATE, 3, owner_principal_type=None, owner_principal_name=None,
                          renewers=[], max_lifetime_ms=-1)
    assert (refused.error_code, refused.principal_name, refused.issue_timestamp_ms) == \
        (errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "alice", -1)
    for api_key, version, fields in (
            (RENEW, 2, {"hmac": token.hmac, "renew_period_ms": -1}),
            (EXPIRE, 2, {"hmac": token.hmac, "expiry_time_period_ms": -1})):
        answer_ = client.send(api_key, version, **fields)
        assert (answer_.error_code, answer_.expiry_timestamp_ms) == \
            (errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1)
    assert client.send(DESCRIBE, 3, owners=None).error_code == \
        errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    # the owner's own login may
    owner, _ = login(core, "alice", USERS["alice"], token=False)
    assert [t.token_id for t in owner.send(DESCRIBE, 3, owners=None).tokens] == [token.token_id]


SCRAM_FAILED = ("Authentication failed during authentication due to invalid credentials with "
                "SASL mechanism SCRAM-SHA-256")


@pytest.mark.parametrize("case", ["wrong password", "unknown token", "a user's login as a "
                                  "token", "a token id without tokenauth", "tokenauth=false"])
def test_token_logins_that_fail_get_scrams_generic_message(case):
    core = token_core()
    token = create(core)
    user, secret, as_token, extension = {
        "wrong password": (token.token_id, "AAAA", True, "true"),
        "unknown token": ("no-such-token", password(token), True, "true"),
        "a user's login as a token": ("alice", USERS["alice"], True, "true"),
        "a token id without tokenauth": (token.token_id, password(token), False, "true"),
        "tokenauth=false": (token.token_id, password(token), True, "false"),
    }[case]
    client, last = login(core, user, secret, token=as_token, extension=extension)
    assert client.closed is not None
    assert (last.error_code, last.error_message) == (errors.SASL_AUTHENTICATION_FAILED,
                                                     SCRAM_FAILED)


def test_a_token_past_its_expiry_still_logs_in_for_a_session_that_ends_at_once():
    """Kafka's SCRAM server finds a token until the periodic check removes it: the login
    succeeds with a session lifetime of 0, and the connection's next request closes it."""
    core = token_core()
    token = create(core, max_lifetime_ms=1000)
    advance(core, 2000)
    client, done = login(core, token.token_id, password(token))
    assert (done.error_code, done.session_lifetime_ms) == (errors.NONE, 0)
    assert isinstance(client.metadata(), Close)
    expire(core, token.hmac, period=-1)
    _, refused = login(core, token.token_id, password(token))
    assert refused.error_code == errors.SASL_AUTHENTICATION_FAILED


# -- settings and configs -----------------------------------------------------------------------

def test_the_settings_take_kafkas_names_and_rules():
    resolved = resolve_settings({"delegation.token.secret.key": "k",
                                 "delegation_token_expiry_time_ms": "60000"})
    assert (resolved["delegation_token_secret_key"], resolved["delegation_token_expiry_time_ms"],
            resolved["delegation_token_max_lifetime_ms"],
            resolved["delegation_token_expiry_check_interval_ms"]) == \
        ("k", 60000, WEEK_MS, HOUR_MS)
    assert resolve_settings({})["delegation_token_secret_key"] == ""  # unset: tokens off
    with pytest.raises(ValueError, match="delegation_token_max_lifetime_ms: must be at least 1"):
        resolve_settings({"delegation_token_max_lifetime_ms": 0})
    with pytest.raises(ValueError, match="Kafka 4 calls it delegation_token_secret_key"):
        resolve_settings({"delegation_token_master_key": "k"})


def test_describe_configs_lists_the_token_configs_and_hides_the_secret_key():
    core = token_core(delegation_token_expiry_time_ms=60000)
    entries = {e.name: e for e in describe_broker(core.cluster, "0", 0, include_synonyms=True)}
    secret = entries["delegation.token.secret.key"]
    assert (secret.value, secret.sensitive, secret.read_only, secret.type.name,
            secret.source.name) == (None, True, True, "PASSWORD", "STATIC_BROKER_CONFIG")
    assert all(value is None for _, value, _ in secret.synonyms)
    assert (entries["delegation.token.expiry.time.ms"].value,
            entries["delegation.token.max.lifetime.ms"].value,
            entries["delegation.token.expiry.check.interval.ms"].value) == \
        ("60000", str(WEEK_MS), str(HOUR_MS))
    unset = {e.name: e for e in describe_broker(token_core(secret=None).cluster, "0", 0)}
    assert (unset["delegation.token.secret.key"].value,
            unset["delegation.token.secret.key"].source.name) == (None, "DEFAULT_CONFIG")
