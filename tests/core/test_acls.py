"""ACLs as a Kafka 4 cluster keeps and applies them: CreateAcls, DescribeAcls and DeleteAcls
answered by the core (requests and responses through the codec, so what is checked is what a
client reads), and the authorizer's decisions (super users, DENY over ALLOW, implied DESCRIBE,
literal / wildcard / prefixed patterns, the no-ACL default, KIP-430 operation bit fields).
"""

from __future__ import annotations

import types

import pytest

import wire
from mockbroker.core.deferred import Close
from mockbroker.core.security import ANONYMOUS, Principal
from mockbroker.core.security.acls import (
    AclBinding, AclBindingFilter, AclOperation as Op, AclPermissionType as Perm, AclStore,
    Authorizer, PatternType as Pattern, ResourceType as Res, SUPPORTED_OPERATIONS)
from mockbroker.core.security.acls import authorizer_of
from tests.core.harness import make_core, send
from wire import errors

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
VERSIONS = (1, 2, 3)

ADMIN = Principal("User", "admin")
ALICE = Principal("User", "alice")
BOB = Principal("User", "bob")
HOST = "127.0.0.1"  # the harness's client host

TOPIC_OPS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


# -- driving the core -----------------------------------------------------------------------

def secured(authorizer: Authorizer | None = None, **options):
    """A one-broker core with ``authorizer`` (by default one whose only super user is
    User:admin)."""
    core = make_core()
    if authorizer is None:
        authorizer = Authorizer(super_users=[ADMIN], **options)
    security = getattr(core, "security", None)
    if security is None:
        core.security = types.SimpleNamespace(authorizer=authorizer)
    else:
        security.authorizer = authorizer
    return core


def call(core, api_key: int, version: int = 3, principal: Principal = ADMIN, **body):
    """One request through the codec and the core; the response as the client decodes it (or
    the Close the broker answered with)."""
    response = send(core, api_key, version, principal=principal, client_id="admin", **body)
    if isinstance(response, Close):
        return response
    encoded = wire.encode_response(api_key, version, 7, response, size_prefix=False)
    return wire.decode_response(api_key, version, encoded)[1]


def creation(name="orders", resource=Res.TOPIC, pattern=Pattern.LITERAL, principal="User:alice",
             host="*", operation=Op.READ, permission=Perm.ALLOW):
    cls = wire.request_class(CREATE_ACLS).AclCreation
    return cls(resource_type=resource, resource_name=name, resource_pattern_type=pattern,
               principal=principal, host=host, operation=operation, permission_type=permission)


def delete_filter(name=None, resource=Res.ANY, pattern=Pattern.ANY, principal=None, host=None,
                  operation=Op.ANY, permission=Perm.ANY):
    cls = wire.request_class(DELETE_ACLS).DeleteAclsFilter
    return cls(resource_type_filter=resource, resource_name_filter=name,
               pattern_type_filter=pattern, principal_filter=principal, host_filter=host,
               operation=operation, permission_type=permission)


def create(core, *creations, version=3, principal=ADMIN):
    response = call(core, CREATE_ACLS, version, principal, creations=list(creations))
    return [(r.error_code, r.error_message) for r in response.results]


def describe(core, name=None, resource=Res.ANY, pattern=Pattern.ANY, principal=None, host=None,
             operation=Op.ANY, permission=Perm.ANY, *, version=3, sender=ADMIN):
    return call(core, DESCRIBE_ACLS, version, sender, resource_type_filter=resource,
                resource_name_filter=name, pattern_type_filter=pattern,
                principal_filter=principal, host_filter=host, operation=operation,
                permission_type=permission)


def described(response) -> set[tuple]:
    """(resource type, name, pattern type, principal, host, operation, permission) of each ACL
    a DescribeAcls response lists."""
    assert response.error_code == errors.NONE, response.error_message
    return {(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
             a.permission_type) for r in response.resources for a in r.acls}


def delete(core, *filters, version=3, principal=ADMIN):
    return call(core, DELETE_ACLS, version, principal, filters=list(filters)).filter_results


def row(name="orders", resource=Res.TOPIC, pattern=Pattern.LITERAL, principal="User:alice",
        host="*", operation=Op.READ, permission=Perm.ALLOW) -> tuple:
    return (resource, name, pattern, principal, host, operation, permission)


def matching(result) -> set[tuple]:
    return {(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation,
             m.permission_type) for m in result.matching_acls}


# -- no authorizer --------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_without_an_authorizer_every_acl_api_says_security_is_disabled(version):
    core = make_core()
    assert authorizer_of(core) is None
    assert create(core, creation(), creation("audit"), version=version) == \
        [(errors.SECURITY_DISABLED, "No Authorizer is configured.")] * 2
    response = describe(core, version=version)
    assert (response.error_code, response.error_message, response.resources) == \
        (errors.SECURITY_DISABLED, "No Authorizer is configured on the broker", [])
    results = delete(core, delete_filter(), version=version)
    assert [(r.error_code, r.error_message, r.matching_acls) for r in results] == \
        [(errors.SECURITY_DISABLED, "No Authorizer is configured.", [])]


def test_a_core_without_security_has_no_authorizer():
    assert authorizer_of(types.SimpleNamespace()) is None
    assert authorizer_of(types.SimpleNamespace(security=None)) is None


def test_the_acl_apis_are_served_from_version_1_to_3():
    core = make_core()
    served = {key: (lo, hi) for key, lo, hi in core.registry.api_versions()}
    assert [served[key] for key in (DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS)] == [(1, 3)] * 3


# -- create, describe, delete ---------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_created_acls_are_described_grouped_by_resource_pattern(version):
    core = secured()
    assert create(core, creation("orders"),
                  creation("orders", operation=Op.WRITE, principal="User:bob"),
                  creation("pay-", pattern=Pattern.PREFIXED, operation=Op.WRITE),
                  creation("*", principal="User:*", operation=Op.DESCRIBE),
                  creation("app", resource=Res.GROUP),
                  version=version) == [(errors.NONE, None)] * 5
    response = describe(core, version=version)
    assert response.throttle_time_ms == 0
    groups = {(r.resource_type, r.resource_name, r.pattern_type): len(r.acls)
              for r in response.resources}
    assert groups == {(Res.TOPIC, "orders", Pattern.LITERAL): 2,
                      (Res.TOPIC, "pay-", Pattern.PREFIXED): 1,
                      (Res.TOPIC, "*", Pattern.LITERAL): 1,
                      (Res.GROUP, "app", Pattern.LITERAL): 1}
    assert described(response) == {
        row(), row(principal="User:bob", operation=Op.WRITE),
        row("pay-", pattern=Pattern.PREFIXED, operation=Op.WRITE),
        row("*", principal="User:*", operation=Op.DESCRIBE),
        row("app", resource=Res.GROUP)}


def test_creating_an_acl_twice_is_not_an_error():
    core = secured()
    assert create(core, creation(), creation()) == [(errors.NONE, None)] * 2
    assert create(core, creation()) == [(errors.NONE, None)]
    assert len(authorizer_of(core).acls) == 1
    assert described(describe(core)) == {row()}


def test_describe_filters():
    core = secured()
    create(core, creation("orders"), creation("*"), creation("ord", pattern=Pattern.PREFIXED),
           creation("pay", pattern=Pattern.PREFIXED),
           creation("orders", principal="User:bob", host="10.0.0.1", operation=Op.WRITE,
                    permission=Perm.DENY),
           creation("orders", resource=Res.GROUP))
    # MATCH: everything that would apply to a topic named "orders"
    assert described(describe(core, "orders", Res.TOPIC, Pattern.MATCH)) == {
        row(), row("*"), row("ord", pattern=Pattern.PREFIXED),
        row(principal="User:bob", host="10.0.0.1", operation=Op.WRITE, permission=Perm.DENY)}
    # a concrete pattern type compares names exactly
    assert described(describe(core, "orders", Res.TOPIC, Pattern.LITERAL)) == {
        row(), row(principal="User:bob", host="10.0.0.1", operation=Op.WRITE,
                   permission=Perm.DENY)}
    assert described(describe(core, "ord", Res.TOPIC, Pattern.PREFIXED)) == \
        {row("ord", pattern=Pattern.PREFIXED)}
    assert described(describe(core, "orders", Res.TOPIC, Pattern.PREFIXED)) == set()
    # ANY pattern type: the name exactly, whatever the pattern type
    assert described(describe(core, "orders", pattern=Pattern.ANY)) == {
        row(), row(principal="User:bob", host="10.0.0.1", operation=Op.WRITE,
                   permission=Perm.DENY), row("orders", resource=Res.GROUP)}
    assert described(describe(core, pattern=Pattern.PREFIXED)) == {
        row("ord", pattern=Pattern.PREFIXED), row("pay", pattern=Pattern.PREFIXED)}
    # entry fields
    assert described(describe(core, principal="User:bob")) == {
        row(principal="User:bob", host="10.0.0.1", operation=Op.WRITE, permission=Perm.DENY)}
    assert described(describe(core, host="10.0.0.1", permission=Perm.DENY)) == {
        row(principal="User:bob", host="10.0.0.1", operation=Op.WRITE, permission=Perm.DENY)}
    assert described(describe(core, operation=Op.WRITE, permission=Perm.ALLOW)) == set()
    assert len(described(describe(core, resource=Res.TOPIC, operation=Op.READ))) == 4
    # the principal filter is compared as text: User:* finds only the wildcard ACLs
    assert described(describe(core, principal="User:*")) == set()


def test_a_filter_code_kafka_does_not_define_selects_nothing():
    core = secured()
    create(core, creation())
    assert described(describe(core, resource=99)) == set()
    assert described(describe(core, operation=99)) == set()


@pytest.mark.parametrize("field", ["resource_type_filter", "pattern_type_filter", "operation",
                                   "permission_type"])
def test_a_describe_filter_with_an_unknown_code_closes_the_connection(field):
    core = secured()
    body = dict(resource_type_filter=Res.ANY, resource_name_filter=None,
                pattern_type_filter=Pattern.ANY, principal_filter=None, host_filter=None,
                operation=Op.ANY, permission_type=Perm.ANY)
    body[field] = 0
    assert isinstance(call(core, DESCRIBE_ACLS, **body), Close)


@pytest.mark.parametrize("version", VERSIONS)
def test_each_delete_filter_reports_what_it_deleted(version):
    core = secured()
    create(core, creation("orders"), creation("orders", operation=Op.WRITE),
           creation("pay-", pattern=Pattern.PREFIXED), creation("*", principal="User:*"),
           creation("app", resource=Res.GROUP))
    results = delete(core,
                     delete_filter("orders", Res.TOPIC, Pattern.LITERAL, operation=Op.WRITE),
                     delete_filter("pay-now", Res.TOPIC, Pattern.MATCH),
                     delete_filter("nothing", Res.TOPIC, Pattern.LITERAL),
                     version=version)
    assert [(r.error_code, r.error_message) for r in results] == [(errors.NONE, None)] * 3
    assert matching(results[0]) == {row(operation=Op.WRITE)}
    # MATCH on a name: the prefixed ACL that covers it and the wildcard
    assert matching(results[1]) == {row("pay-", pattern=Pattern.PREFIXED),
                                    row("*", principal="User:*")}
    assert matching(results[2]) == set()
    assert all(m.error_code == errors.NONE and m.error_message is None
               for r in results for m in r.matching_acls)
    assert described(describe(core)) == {row(), row("app", resource=Res.GROUP)}
    # ANY everywhere deletes the rest
    results = delete(core, delete_filter(), version=version)
    assert matching(results[0]) == {row(), row("app", resource=Res.GROUP)}
    assert described(describe(core)) == set()


def test_filters_of_one_request_see_the_acls_from_before_it():
    core = secured()
    create(core, creation("orders"), creation("audit"))
    results = delete(core, delete_filter("orders"), delete_filter(resource=Res.TOPIC))
    assert matching(results[0]) == {row()}
    assert matching(results[1]) == {row(), row("audit")}
    assert len(authorizer_of(core).acls) == 0


@pytest.mark.parametrize("body, message", [
    (dict(resource=99), "Unknown patternFilter."),
    (dict(pattern=99), "Unknown patternFilter."),
    (dict(operation=99), "Unknown entryFilter."),
    (dict(permission=99), "Unknown entryFilter."),
])
def test_a_delete_filter_with_an_undefined_code_fails_alone(body, message):
    core = secured()
    create(core, creation())
    results = delete(core, delete_filter(**body), delete_filter("orders"))
    assert [(r.error_code, r.error_message) for r in results] == \
        [(errors.INVALID_REQUEST, message), (errors.NONE, None)]
    assert matching(results[0]) == set()
    assert matching(results[1]) == {row()}


@pytest.mark.parametrize("body", [dict(resource=0), dict(pattern=0), dict(operation=0),
                                  dict(permission=0)])
def test_a_delete_filter_with_an_unknown_code_closes_the_connection(body):
    core = secured()
    create(core, creation())
    assert isinstance(call(core, DELETE_ACLS, filters=[delete_filter(**body)]), Close)
    assert len(authorizer_of(core).acls) == 1


# -- what a creation may not be ---------------------------------------------------------------

@pytest.mark.parametrize("acl, message", [
    (creation("cluster", resource=Res.CLUSTER),
     "The only valid name for the CLUSTER resource is kafka-cluster"),
    (creation("", resource=Res.CLUSTER),
     "The only valid name for the CLUSTER resource is kafka-cluster"),
    (creation(""), "Invalid empty resource name"),
    (creation("", resource=99), "Invalid empty resource name"),
    (creation(resource=99), "Invalid resourceType UNKNOWN"),
    (creation(pattern=99), "Invalid patternType UNKNOWN"),
    (creation(operation=99), "Invalid operation UNKNOWN"),
    (creation(permission=99), "Invalid permissionType UNKNOWN"),
    (creation(principal="alice"),
     "Could not parse principal from `alice` (no colon is present separating the principal "
     "type from the principal name)"),
])
def test_an_invalid_creation_fails_alone(acl, message):
    core = secured()
    assert create(core, acl, creation("audit")) == \
        [(errors.INVALID_REQUEST, message), (errors.NONE, None)]
    assert described(describe(core)) == {row("audit")}


def test_the_cluster_resource_named_kafka_cluster_is_accepted():
    core = secured()
    assert create(core, creation("kafka-cluster", resource=Res.CLUSTER, operation=Op.ALTER),
                  creation("kafka-cluster", resource=Res.CLUSTER, pattern=Pattern.PREFIXED)) \
        == [(errors.NONE, None)] * 2


@pytest.mark.parametrize("acl", [creation(resource=Res.ANY), creation(pattern=Pattern.ANY),
                                 creation(pattern=Pattern.MATCH), creation(operation=Op.ANY),
                                 creation(permission=Perm.ANY)])
def test_a_filter_value_in_a_creation_fails_the_whole_request(acl):
    core = secured()
    assert create(core, creation("audit"), acl) == [(errors.UNKNOWN_SERVER_ERROR, None)] * 2
    assert described(describe(core)) == set()


@pytest.mark.parametrize("body", [dict(resource=0), dict(pattern=0), dict(operation=0),
                                  dict(permission=0)])
def test_a_creation_with_an_unknown_code_closes_the_connection(body):
    core = secured()
    assert isinstance(call(core, CREATE_ACLS, creations=[creation("audit"), creation(**body)]),
                      Close)
    assert len(authorizer_of(core).acls) == 0


def test_too_many_new_acls_in_one_request_create_none():
    core = secured(Authorizer(super_users=[ADMIN], acls=AclStore(max_records_per_op=2)))
    create(core, creation("a"))
    # "a" exists already and the repeated "b" counts once: two new ACLs are allowed
    assert create(core, creation("a"), creation("b"), creation("b"), creation("c")) == \
        [(errors.NONE, None)] * 4
    too_big = (errors.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
    assert create(core, creation("d"), creation(""), creation(principal="bob"), creation("e"),
                  creation("f")) == \
        [too_big, (errors.INVALID_REQUEST, "Invalid empty resource name"), too_big, too_big,
         too_big]
    assert len(authorizer_of(core).acls) == 3


def test_deleting_too_many_acls_in_one_request_deletes_none():
    core = secured(Authorizer(super_users=[ADMIN], acls=AclStore(max_records_per_op=2)))
    create(core, creation("a"), creation("b"))
    create(core, creation("c"))
    results = delete(core, delete_filter("a"), delete_filter(operation=99),
                     delete_filter(resource=Res.TOPIC))
    assert [(r.error_code, r.error_message, r.matching_acls) for r in results] == \
        [(errors.INVALID_REQUEST, "Cannot remove more than 2 acls in a single delete "
          "operation.", [])] * 3
    assert len(authorizer_of(core).acls) == 3
    assert [len(r.matching_acls) for r in delete(core, delete_filter("a"),
                                                 delete_filter("b"))] == [1, 1]


# -- who may manage ACLs ----------------------------------------------------------------------

def test_without_cluster_alter_creating_and_deleting_fail_for_every_entry():
    core = secured()
    create(core, creation())
    results = create(core, creation("audit"), creation("x"), principal=ALICE)
    assert [code for code, _ in results] == [errors.CLUSTER_AUTHORIZATION_FAILED] * 2
    assert all(message.endswith("needs ALTER permission.") and "User:alice" in message
               for _, message in results)
    deleted = delete(core, delete_filter(), delete_filter("orders"), principal=ALICE)
    assert [(r.error_code, r.matching_acls) for r in deleted] == \
        [(errors.CLUSTER_AUTHORIZATION_FAILED, [])] * 2
    assert deleted[0].error_message.endswith("needs ALTER permission.")
    response = describe(core, sender=ANONYMOUS)
    assert (response.error_code, response.resources) == \
        (errors.CLUSTER_AUTHORIZATION_FAILED, [])
    assert response.error_message.endswith("needs DESCRIBE permission.")
    assert described(describe(core)) == {row()}


def test_cluster_acls_let_a_user_manage_acls():
    core = secured()
    assert create(core,
                  creation("kafka-cluster", Res.CLUSTER, principal="User:alice",
                           operation=Op.ALTER),
                  creation("kafka-cluster", Res.CLUSTER, principal="User:bob",
                           operation=Op.DESCRIBE)) == [(errors.NONE, None)] * 2
    # ALTER allows creating and deleting, and implies DESCRIBE
    assert create(core, creation("audit"), principal=ALICE) == [(errors.NONE, None)]
    assert row("audit") in described(describe(core, sender=ALICE))
    assert matching(delete(core, delete_filter("audit"), principal=ALICE)[0]) == {row("audit")}
    # DESCRIBE allows describing only
    assert len(described(describe(core, sender=BOB))) == 2
    assert create(core, creation("audit"), principal=BOB)[0][0] == \
        errors.CLUSTER_AUTHORIZATION_FAILED
    # a DENY for alice wins over her ALLOW
    create(core, creation("kafka-cluster", Res.CLUSTER, principal="User:alice",
                          operation=Op.ALL, permission=Perm.DENY))
    assert describe(core, sender=ALICE).error_code == errors.CLUSTER_AUTHORIZATION_FAILED


def test_allow_everyone_if_no_acl_found_lets_anyone_manage_acls_until_the_cluster_has_one():
    core = secured(allow_everyone_if_no_acl_found=True)
    assert create(core, creation(), principal=ALICE) == [(errors.NONE, None)]
    assert create(core, creation("kafka-cluster", Res.CLUSTER, principal="User:bob",
                                 operation=Op.ALTER), principal=ALICE) == [(errors.NONE, None)]
    assert create(core, creation("audit"), principal=ALICE)[0][0] == \
        errors.CLUSTER_AUTHORIZATION_FAILED


# -- the authorizer's decisions ---------------------------------------------------------------

def authorizer_with(*acls: AclBinding, **options) -> Authorizer:
    authorizer = Authorizer(super_users=[ADMIN, "User:root"], **options)
    assert all(result.ok for result in authorizer.acls.create(list(acls)))
    return authorizer


def acl(name="orders", principal="User:alice", operation=Op.READ, permission=Perm.ALLOW,
        resource=Res.TOPIC, pattern=Pattern.LITERAL, host="*") -> AclBinding:
    return AclBinding(resource, name, pattern, principal, host, operation, permission)


def can(authorizer, operation, name="orders", who=ALICE, host=HOST, resource=Res.TOPIC):
    return authorizer.authorize(who, host, operation, resource, name)


def test_super_users_may_do_anything():
    authorizer = authorizer_with(acl(principal="User:*", operation=Op.ALL,
                                     permission=Perm.DENY))
    assert can(authorizer, Op.WRITE, who=ADMIN)
    assert can(authorizer, Op.ALTER, who="User:root", resource=Res.CLUSTER, name="kafka-cluster")
    assert not can(authorizer, Op.WRITE)
    assert authorizer.is_super_user(Principal("User", "root"))
    assert not authorizer.is_super_user(Principal("Group", "root"))


def test_deny_wins_over_allow():
    authorizer = authorizer_with(acl(operation=Op.ALL),
                                 acl(pattern=Pattern.PREFIXED, name="ord", operation=Op.WRITE,
                                     permission=Perm.DENY))
    assert can(authorizer, Op.READ)
    assert not can(authorizer, Op.WRITE)
    authorizer.acls.create([acl("*", principal="User:*", operation=Op.READ,
                                permission=Perm.DENY)])
    assert not can(authorizer, Op.READ)


def test_read_write_delete_and_alter_imply_describe_but_a_deny_implies_nothing():
    for operation in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE):
        assert can(authorizer_with(acl(operation=operation)), Op.DESCRIBE), operation
    for operation in (Op.CREATE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS):
        assert not can(authorizer_with(acl(operation=operation)), Op.DESCRIBE), operation
    assert can(authorizer_with(acl(operation=Op.ALTER_CONFIGS)), Op.DESCRIBE_CONFIGS)
    assert not can(authorizer_with(acl(operation=Op.ALTER)), Op.DESCRIBE_CONFIGS)
    # an ALLOW of DESCRIBE does not imply READ
    assert not can(authorizer_with(acl(operation=Op.DESCRIBE)), Op.READ)
    # DENY READ does not deny DESCRIBE, which ALLOW ALTER gives
    authorizer = authorizer_with(acl(operation=Op.READ, permission=Perm.DENY),
                                 acl(operation=Op.ALTER))
    assert can(authorizer, Op.DESCRIBE)
    assert not can(authorizer, Op.READ)
    # DENY DESCRIBE does deny it
    authorizer.acls.create([acl(operation=Op.DESCRIBE, permission=Perm.DENY)])
    assert not can(authorizer, Op.DESCRIBE)


def test_literal_wildcard_and_prefixed_patterns():
    authorizer = authorizer_with(acl("orders"), acl("pay", pattern=Pattern.PREFIXED,
                                                    operation=Op.WRITE),
                                 acl("*", resource=Res.GROUP))
    assert can(authorizer, Op.READ, "orders")
    assert not can(authorizer, Op.READ, "orders-eu")  # literal means exactly
    assert not can(authorizer, Op.READ, "order")
    assert can(authorizer, Op.WRITE, "payments")
    assert can(authorizer, Op.WRITE, "pay")
    assert not can(authorizer, Op.WRITE, "pa")
    assert not can(authorizer, Op.WRITE, "repay")
    assert can(authorizer, Op.READ, "any-group", resource=Res.GROUP)
    assert can(authorizer, Op.READ, "orders", resource=Res.GROUP)  # the group wildcard
    assert not can(authorizer, Op.READ, "any-topic")


def test_wildcard_principal_and_hosts():
    authorizer = authorizer_with(acl(principal="User:*"),
                                 acl(principal="User:bob", operation=Op.WRITE,
                                     host="10.0.0.7"))
    assert can(authorizer, Op.READ, who=ALICE)
    assert can(authorizer, Op.READ, who=ANONYMOUS)
    assert can(authorizer, Op.READ, who="User:carol")
    # User:* stands for every principal, of any type; no other ACL principal is a wildcard
    assert can(authorizer, Op.READ, who=Principal("Group", "ops"))
    assert not can(authorizer_with(acl(principal="Group:*")), Op.READ,
                   who=Principal("Group", "ops"))
    assert can(authorizer, Op.WRITE, who=BOB, host="10.0.0.7")
    assert not can(authorizer, Op.WRITE, who=BOB, host="10.0.0.8")
    assert not can(authorizer, Op.WRITE, who=ALICE, host="10.0.0.7")


@pytest.mark.parametrize("allow_everyone", [False, True])
def test_a_resource_no_acl_covers_follows_allow_everyone_if_no_acl_found(allow_everyone):
    authorizer = authorizer_with(acl("orders", principal="User:bob"),
                                 allow_everyone_if_no_acl_found=allow_everyone)
    assert can(authorizer, Op.WRITE, "audit") is allow_everyone
    assert can(authorizer, Op.READ, "kafka-cluster", resource=Res.CLUSTER) is allow_everyone
    # once an ACL covers the resource, only what it allows is allowed, whoever it names
    assert can(authorizer, Op.READ, "orders") is False
    assert can(authorizer, Op.READ, "orders", who=BOB) is True
    assert can(authorizer, Op.WRITE, "orders", who=BOB) is False


def test_the_default_is_to_deny():
    assert Authorizer().authorize(ALICE, HOST, Op.READ, Res.TOPIC, "orders") is False


def test_authorized_operations_bit_fields():
    authorizer = authorizer_with(
        acl(operation=Op.READ), acl("app", resource=Res.GROUP, operation=Op.ALL),
        acl("kafka-cluster", resource=Res.CLUSTER, operation=Op.IDEMPOTENT_WRITE),
        acl("kafka-cluster", resource=Res.CLUSTER, operation=Op.ALTER_CONFIGS),
        acl("tx", resource=Res.TRANSACTIONAL_ID, operation=Op.WRITE))
    ops = authorizer.authorized_operations
    assert ops(ALICE, HOST, Res.TOPIC, "orders") == (1 << Op.READ) | (1 << Op.DESCRIBE)
    assert ops(ALICE, HOST, Res.TOPIC, "audit") == 0
    assert ops(ADMIN, HOST, Res.TOPIC, "audit") == TOPIC_OPS
    assert ops(ADMIN, HOST, Res.CLUSTER, "kafka-cluster") == CLUSTER_OPS
    assert ops(ALICE, HOST, Res.GROUP, "app") == sum(1 << op for op in (3, 6, 8, 10, 11))
    assert ops(ALICE, HOST, Res.CLUSTER, "kafka-cluster") == \
        (1 << Op.IDEMPOTENT_WRITE) | (1 << Op.ALTER_CONFIGS) | (1 << Op.DESCRIBE_CONFIGS)
    assert ops(ALICE, HOST, Res.TRANSACTIONAL_ID, "tx") == (1 << Op.WRITE) | (1 << Op.DESCRIBE)
    everyone = Authorizer(allow_everyone_if_no_acl_found=True)
    assert everyone.authorized_operations(ALICE, HOST, Res.USER, "bob") == \
        (1 << Op.CREATE_TOKENS) | (1 << Op.DESCRIBE_TOKENS)
    assert everyone.authorized_operations(ALICE, HOST, Res.DELEGATION_TOKEN, "t") == \
        1 << Op.DESCRIBE
    with pytest.raises(ValueError):
        ops(ALICE, HOST, Res.ANY, "orders")


def test_supported_operations_cover_every_concrete_resource_type():
    assert set(SUPPORTED_OPERATIONS) == {Res.TOPIC, Res.GROUP, Res.CLUSTER,
                                         Res.TRANSACTIONAL_ID, Res.DELEGATION_TOKEN, Res.USER}
    assert sum(1 << op for op in SUPPORTED_OPERATIONS[Res.TOPIC]) == TOPIC_OPS
    assert sum(1 << op for op in SUPPORTED_OPERATIONS[Res.CLUSTER]) == CLUSTER_OPS


def test_filters_match_like_kafka():
    prefixed = acl("ord", pattern=Pattern.PREFIXED)
    wildcard = acl("*")
    literal = acl("orders")
    match = AclBindingFilter(Res.TOPIC, "orders", Pattern.MATCH)
    assert [match.matches(a) for a in (prefixed, wildcard, literal, acl("orders-eu"))] == \
        [True, True, True, False]
    assert AclBindingFilter(Res.TOPIC, None, Pattern.MATCH).matches(prefixed)
    assert not AclBindingFilter(Res.TOPIC, "orders", Pattern.LITERAL).matches(wildcard)
    assert AclBindingFilter(Res.TOPIC, "*", Pattern.LITERAL).matches(wildcard)
    assert AclBindingFilter(pattern_type=99).invalid() == "Unknown patternFilter."
    assert AclBindingFilter().invalid() is None
