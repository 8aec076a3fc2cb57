"""ACLs enforced on every request as Kafka 4's KafkaApis (and ControllerApis, for what a broker
forwards) enforce them, when an authorizer is configured.

Requests and responses go through the codec, one principal per request: what is asserted is
what a client reads (error codes and where they sit, which topics and groups it is shown).
User:admin is the super user; User:alice gets the ACLs each test gives her.
"""

from __future__ import annotations

import uuid

import pytest

import wire
from mockbroker.core.deferred import Close
from mockbroker.core.security import Principal
from mockbroker.core.security.acls import (
    AclBinding, AclOperation as Op, AclPermissionType as Perm, Authorizer,
    PatternType as Pattern, ResourceType as Res)
from tests.core.harness import make_core, send
from wire import errors, records

ADMIN = Principal("User", "admin")
ALICE = Principal("User", "alice")
ZERO = uuid.UUID(int=0)
NO_OPERATIONS = -(1 << 31)
TOPIC_ALL = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_ALL = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
READ_DESCRIBE = (1 << Op.READ) | (1 << Op.DESCRIBE)

TAF = errors.TOPIC_AUTHORIZATION_FAILED
GAF = errors.GROUP_AUTHORIZATION_FAILED
CAF = errors.CLUSTER_AUTHORIZATION_FAILED
TIAF = errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


# -- a secured cluster ------------------------------------------------------------------------

def acl(resource: Res, name: str, operation: Op, *, pattern: Pattern = Pattern.LITERAL,
        permission: Perm = Perm.ALLOW, principal: str = "User:alice") -> AclBinding:
    return AclBinding(resource, name, pattern, principal, "*", operation, permission)


def topic_acl(name, operation, **kw):
    return acl(Res.TOPIC, name, operation, **kw)


def group_acl(name, operation, **kw):
    return acl(Res.GROUP, name, operation, **kw)


def txn_acl(name, operation, **kw):
    return acl(Res.TRANSACTIONAL_ID, name, operation, **kw)


def cluster_acl(operation, **kw):
    return acl(Res.CLUSTER, "kafka-cluster", operation, **kw)


def secured(*acls: AclBinding, topics=("orders", "audit")):
    """A one-broker core whose authorizer has User:admin as super user and ``acls``, with
    topics of two partitions each."""
    core = make_core()
    core.security.authorizer = Authorizer(super_users=[ADMIN])
    grant(core, *acls)
    for name in topics:
        core.cluster.create_topic(name, 2, 1)
    return core


def grant(core, *acls: AclBinding) -> None:
    assert all(r.ok for r in core.security.authorizer.acls.create(list(acls)))


def call(core, api_key: int, version: int, principal: Principal = ALICE, **body):
    """One request through the codec and the core: the response as the client decodes it (or
    the Close the broker answered with)."""
    response = send(core, api_key, version, principal=principal, **body)
    if isinstance(response, Close):
        return response
    encoded = wire.encode_response(api_key, version, 7, response, size_prefix=False)
    return wire.decode_response(api_key, version, encoded)[1]


def req(api_key: int):
    return wire.request_class(api_key)


# -- Metadata ---------------------------------------------------------------------------------

def metadata(core, names=None, version=12, principal=ALICE, **body):
    cls = req(3)
    topics = None if names is None else [cls.MetadataRequestTopic(name=n) for n in names]
    return call(core, 3, version, principal, topics=topics, **body)


def test_metadata_for_every_topic_shows_only_the_topics_the_principal_may_describe():
    core = secured(topic_acl("orders", Op.READ))
    assert [t.name for t in metadata(core).topics] == ["orders"]
    assert [t.name for t in metadata(core, version=0, names=[]).topics] == ["orders"]
    assert [t.name for t in metadata(core, principal=ADMIN).topics] == ["audit", "orders"]


def test_metadata_refuses_a_named_topic_without_describe_after_the_others():
    core = secured(topic_acl("orders", Op.DESCRIBE))
    got = metadata(core, ["audit", "orders", "ghost"], allow_auto_topic_creation=False)
    assert [(t.name, t.error_code, t.topic_id, t.partitions) for t in got.topics] == [
        ("orders", errors.NONE, core.cluster.topics["orders"].topic_id, got.topics[0].partitions),
        ("audit", TAF, ZERO, []), ("ghost", TAF, ZERO, [])]
    assert len(got.topics[0].partitions) == 2


def test_metadata_by_topic_id_refuses_with_the_id_and_no_name():
    core = secured(topic_acl("orders", Op.DESCRIBE))
    cls = req(3)
    audit, orders = (core.cluster.topics[n].topic_id for n in ("audit", "orders"))
    unknown = uuid.uuid4()
    got = call(core, 3, 12, topics=[cls.MetadataRequestTopic(topic_id=i, name=None)
                                    for i in (audit, orders, unknown)])
    assert [(t.error_code, t.name, t.topic_id) for t in got.topics] == [
        (errors.UNKNOWN_TOPIC_ID, None, unknown), (errors.NONE, "orders", orders),
        (TAF, None, audit)]


def test_metadata_auto_creation_needs_create_on_the_cluster_or_the_topic():
    core = secured(topic_acl("new", Op.DESCRIBE, pattern=Pattern.PREFIXED))
    got = metadata(core, ["__transaction_state", "new-a"])
    # refused creation first, then refused description
    assert [(t.name, t.error_code) for t in got.topics] == [("new-a", TAF),
                                                            ("__transaction_state", TAF)]
    assert "new-a" not in core.cluster.topics
    grant(core, topic_acl("new-a", Op.CREATE))
    assert metadata(core, ["new-a"]).topics[0].error_code == errors.NONE
    assert "new-a" in core.cluster.topics
    # asked without auto-creation, an unknown topic the principal may describe is just unknown
    got = metadata(core, ["new-b"], allow_auto_topic_creation=False)
    assert got.topics[0].error_code == errors.UNKNOWN_TOPIC_OR_PARTITION
    grant(core, cluster_acl(Op.CREATE))
    assert metadata(core, ["new-b"]).topics[0].error_code == errors.NONE


def test_metadata_refuses_creating_an_internal_topic_as_internal():
    core = secured(topic_acl("*", Op.DESCRIBE))
    got = metadata(core, ["__consumer_offsets"], version=4)
    assert [(t.name, t.error_code, t.is_internal) for t in got.topics] == \
        [("__consumer_offsets", TAF, True)]


def test_metadata_authorized_operations_are_the_principals():
    core = secured(topic_acl("orders", Op.READ))
    got = metadata(core, ["orders"], version=10, include_cluster_authorized_operations=True,
                   include_topic_authorized_operations=True)
    assert (got.cluster_authorized_operations, got.topics[0].topic_authorized_operations) == \
        (0, READ_DESCRIBE)
    grant(core, cluster_acl(Op.DESCRIBE))
    got = metadata(core, ["orders"], version=10, include_cluster_authorized_operations=True)
    assert (got.cluster_authorized_operations, got.topics[0].topic_authorized_operations) == \
        (1 << Op.DESCRIBE, NO_OPERATIONS)
    got = metadata(core, ["orders"], version=10, principal=ADMIN,
                   include_cluster_authorized_operations=True,
                   include_topic_authorized_operations=True)
    assert (got.cluster_authorized_operations, got.topics[0].topic_authorized_operations) == \
        (CLUSTER_ALL, TOPIC_ALL)


def test_a_deny_overrides_an_allow_and_prefixed_acls_apply():
    core = secured(topic_acl("*", Op.ALL), topic_acl("aud", Op.DESCRIBE,
                                                     pattern=Pattern.PREFIXED,
                                                     permission=Perm.DENY))
    assert [t.name for t in metadata(core).topics] == ["orders"]
    core = secured(topic_acl("ord", Op.DESCRIBE, pattern=Pattern.PREFIXED))
    assert [t.name for t in metadata(core).topics] == ["orders"]


def test_without_an_authorizer_metadata_is_unchanged():
    core = make_core()
    core.cluster.create_topic("orders", 1, 1)
    got = metadata(core, ["orders", "ghost"], version=10, allow_auto_topic_creation=False,
                   include_cluster_authorized_operations=True,
                   include_topic_authorized_operations=True)
    assert got.cluster_authorized_operations == CLUSTER_ALL
    assert [(t.name, t.error_code, t.topic_authorized_operations) for t in got.topics] == \
        [("orders", errors.NONE, TOPIC_ALL), ("ghost", errors.UNKNOWN_TOPIC_OR_PARTITION,
                                              NO_OPERATIONS)]


# -- Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords --------------------------

def batch(core, *, pid=-1, epoch=-1, seq=-1, transactional=False) -> bytes:
    return records.encode_batch([(None, b"v", [], core.clock.now_ms())], producer_id=pid,
                                producer_epoch=epoch, base_sequence=seq,
                                is_transactional=transactional)


def produce(core, *topics, version=11, acks=-1, tid=None, principal=ALICE, data=None):
    cls = req(0)
    got = call(core, 0, version, principal, transactional_id=tid, acks=acks, timeout_ms=1000,
               topic_data=[cls.TopicProduceData(name=t, partition_data=[
                   cls.PartitionProduceData(index=0, records=data or batch(core))])
                   for t in topics])
    if isinstance(got, Close) or got is None:
        return got
    return {t.name: (p.error_code, p.error_message) for t in got.responses
            for p in t.partition_responses}


def test_produce_needs_write_on_each_topic_known_or_not():
    core = secured(topic_acl("orders", Op.WRITE))
    assert produce(core, "orders", "audit", "ghost") == {
        "orders": (errors.NONE, None), "audit": (TAF, None), "ghost": (TAF, None)}
    assert core.cluster.partition("orders", 0).log.log_end_offset == 1
    assert core.cluster.partition("audit", 0).log.log_end_offset == 0
    grant(core, topic_acl("ghost", Op.WRITE))
    assert produce(core, "ghost")["ghost"][0] == errors.UNKNOWN_TOPIC_OR_PARTITION
    assert produce(core, "audit", principal=ADMIN)["audit"][0] == errors.NONE


def test_transactional_records_need_write_on_the_transactional_id():
    core = secured(topic_acl("orders", Op.WRITE))
    init = call(core, 22, 5, ADMIN, transactional_id="tx", transaction_timeout_ms=60_000,
                producer_id=-1, producer_epoch=-1)
    data = batch(core, pid=init.producer_id, epoch=init.producer_epoch, seq=0,
                 transactional=True)
    message = "Transactional Id authorization failed."
    assert produce(core, "orders", "audit", tid="tx", data=data) == {
        "orders": (TIAF, message), "audit": (TIAF, message)}
    assert produce(core, "orders", tid=None, data=data) == {"orders": (TIAF, message)}
    assert isinstance(produce(core, "orders", tid="tx", data=data, acks=0), Close)
    # a transactional id on a request without transactional records is not checked
    assert produce(core, "orders", tid="tx") == {"orders": (errors.NONE, None)}


def test_an_idempotent_producer_needs_write_on_some_topic_only():
    core = secured(topic_acl("ord", Op.WRITE, pattern=Pattern.PREFIXED))
    init = call(core, 22, 5, transactional_id=None, transaction_timeout_ms=60_000,
                producer_id=-1, producer_epoch=-1)
    assert init.error_code == errors.NONE
    data = batch(core, pid=init.producer_id, epoch=init.producer_epoch, seq=0)
    assert produce(core, "orders", data=data) == {"orders": (errors.NONE, None)}


def fetch(core, *topics, version=12, principal=ALICE):
    cls = req(1)
    by_id = version >= 13
    got = call(core, 1, version, principal, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
               session_id=0, session_epoch=-1, topics=[cls.FetchTopic(
                   topic=t if not by_id else "",
                   topic_id=core.cluster.topics[t].topic_id if by_id and t in core.cluster.topics
                   else (uuid.uuid4() if by_id else ZERO),
                   partitions=[cls.FetchPartition(partition=0, fetch_offset=0,
                                                  partition_max_bytes=1 << 20)])
                   for t in topics])
    assert got.error_code == errors.NONE
    return [(t.topic if not by_id else t.topic_id, t.partitions[0].error_code)
            for t in got.responses]


def test_fetch_needs_read_on_each_topic():
    core = secured(topic_acl("orders", Op.READ))
    assert sorted(fetch(core, "orders", "audit", "ghost")) == [
        ("audit", TAF), ("ghost", TAF), ("orders", errors.NONE)]
    by_id = dict(fetch(core, "orders", "audit", "ghost", version=16))
    ids = {t: core.cluster.topics[t].topic_id for t in ("orders", "audit")}
    assert by_id[ids["orders"]] == errors.NONE and by_id[ids["audit"]] == TAF
    assert sorted(by_id.values()).count(errors.UNKNOWN_TOPIC_ID) == 1
    assert dict(fetch(core, "audit", principal=ADMIN)) == {"audit": errors.NONE}


def test_list_offsets_needs_describe_and_refuses_after_the_others():
    core = secured(topic_acl("orders", Op.DESCRIBE))
    cls = req(2)
    got = call(core, 2, 9, replica_id=-1, topics=[
        cls.ListOffsetsTopic(name=t, partitions=[cls.ListOffsetsPartition(partition_index=0,
                                                                          timestamp=-1)])
        for t in ("audit", "orders")])
    assert [(t.name, t.partitions[0].error_code, t.partitions[0].offset)
            for t in got.topics] == [("orders", errors.NONE, 0), ("audit", TAF, -1)]


def test_offset_for_leader_epoch_needs_describe_or_cluster_action():
    core = secured(topic_acl("orders", Op.DESCRIBE))
    cls = req(23)
    body = dict(replica_id=-1, topics=[cls.OffsetForLeaderTopic(topic=t, partitions=[
        cls.OffsetForLeaderPartition(partition=0, leader_epoch=0)]) for t in ("audit", "orders")])
    got = call(core, 23, 4, **body)
    assert [(t.topic, t.partitions[0].error_code) for t in got.topics] == \
        [("orders", errors.NONE), ("audit", TAF)]
    grant(core, cluster_acl(Op.CLUSTER_ACTION))
    got = call(core, 23, 4, **body)
    assert [(t.topic, t.partitions[0].error_code) for t in got.topics] == \
        [("audit", errors.NONE), ("orders", errors.NONE)]


def test_delete_records_needs_delete_on_the_topic():
    core = secured(topic_acl("orders", Op.DELETE))
    produce(core, "orders", "audit", principal=ADMIN)
    cls = req(21)
    got = call(core, 21, 2, timeout_ms=1000, topics=[cls.DeleteRecordsTopic(name=t, partitions=[
        cls.DeleteRecordsPartition(partition_index=0, offset=-1)]) for t in ("orders", "audit")])
    assert [(t.name, t.partitions[0].error_code, t.partitions[0].low_watermark)
            for t in got.topics] == [("orders", errors.NONE, 1), ("audit", TAF, -1)]
    assert core.cluster.partition("audit", 0).log.log_start_offset == 0


# -- FindCoordinator and the classic group protocol --------------------------------------------

def test_find_coordinator_needs_describe_on_the_group_or_transactional_id():
    core = secured(group_acl("g", Op.DESCRIBE), txn_acl("tx", Op.DESCRIBE))
    got = call(core, 10, 4, key_type=0, coordinator_keys=["g", "h"])
    assert [(c.key, c.error_code, c.node_id) for c in got.coordinators] == \
        [("g", errors.NONE, 0), ("h", GAF, -1)]
    got = call(core, 10, 4, key_type=1, coordinator_keys=["tx", "ty"])
    assert [(c.key, c.error_code) for c in got.coordinators] == [("tx", errors.NONE),
                                                                 ("ty", TIAF)]
    got = call(core, 10, 3, key="h", key_type=0)
    assert (got.error_code, got.error_message, got.node_id, got.host, got.port) == \
        (GAF, "Group authorization failed.", -1, "", -1)
    got = call(core, 10, 3, key="ty", key_type=1)
    assert (got.error_code, got.error_message) == (TIAF, "Transactional Id authorization failed.")


def test_classic_group_requests_need_read_on_the_group():
    core = secured(group_acl("g", Op.READ))
    protocols = [req(11).JoinGroupRequestProtocol(name="range", metadata=b"")]
    join = dict(session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="",
                protocol_type="consumer", protocols=protocols)
    refused = call(core, 11, 9, group_id="h", **join)
    assert (refused.error_code, refused.generation_id, refused.member_id, refused.leader,
            refused.protocol_name, refused.members) == (GAF, -1, "", "", None, [])
    assert call(core, 11, 6, group_id="h", **join).protocol_name == ""
    assert call(core, 11, 9, group_id="g", **join).error_code == errors.MEMBER_ID_REQUIRED
    sync = call(core, 14, 5, group_id="h", generation_id=1, member_id="m",
                protocol_type="consumer", protocol_name="range", assignments=[])
    assert (sync.error_code, sync.assignment) == (GAF, b"")
    # the v5 protocol check comes first
    assert call(core, 14, 5, group_id="h", generation_id=1, member_id="m").error_code == \
        errors.INCONSISTENT_GROUP_PROTOCOL
    assert call(core, 12, 4, group_id="h", generation_id=1, member_id="m").error_code == GAF
    assert call(core, 12, 4, group_id="g", generation_id=1, member_id="m").error_code == \
        errors.UNKNOWN_MEMBER_ID
    leave = call(core, 13, 5, group_id="h", members=[req(13).MemberIdentity(member_id="m")])
    assert (leave.error_code, leave.members) == (GAF, [])
    assert call(core, 13, 0, group_id="h", member_id="m").error_code == GAF


# -- offsets ----------------------------------------------------------------------------------

def commit(core, group, *topics, version=8, principal=ALICE):
    cls = req(8)
    got = call(core, 8, version, principal, group_id=group, generation_id_or_member_epoch=-1,
               member_id="", topics=[cls.OffsetCommitRequestTopic(name=t, partitions=[
                   cls.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])
                   for t in topics])
    return [(t.name, t.partitions[0].error_code) for t in got.topics]


def test_offset_commit_needs_read_on_the_group_then_on_each_topic():
    core = secured(group_acl("g", Op.READ), topic_acl("orders", Op.READ))
    assert commit(core, "h", "orders", "audit") == [("orders", GAF), ("audit", GAF)]
    assert commit(core, "g", "audit", "ghost") == [("audit", TAF), ("ghost", TAF)]
    assert commit(core, "g", "orders", "audit") == [("audit", TAF), ("orders", errors.NONE)]
    assert offset_fetch(core, "g", None, principal=ADMIN)[1] == [("orders", errors.NONE, 5)]


def offset_fetch(core, group, topics, version=8, principal=ALICE):
    if version >= 8:
        cls = req(9)
        wanted = None if topics is None else [
            cls.OffsetFetchRequestTopics(name=t, partition_indexes=[0]) for t in topics]
        got = call(core, 9, version, principal, groups=[
            cls.OffsetFetchRequestGroup(group_id=group, topics=wanted)])
        (g,) = got.groups
        return g.error_code, [(t.name, t.partitions[0].error_code,
                               t.partitions[0].committed_offset) for t in g.topics]
    cls = req(9)
    wanted = None if topics is None else [
        cls.OffsetFetchRequestTopic(name=t, partition_indexes=[0]) for t in topics]
    got = call(core, 9, version, principal, group_id=group, topics=wanted)
    return (got.error_code if version >= 2 else None), [
        (t.name, t.partitions[0].error_code, t.partitions[0].committed_offset)
        for t in got.topics]


def test_offset_fetch_needs_describe_on_the_group_and_hides_or_refuses_topics():
    core = secured(group_acl("g", Op.DESCRIBE), topic_acl("orders", Op.DESCRIBE))
    assert commit(core, "g", "orders", "audit", principal=ADMIN) == \
        [("orders", errors.NONE), ("audit", errors.NONE)]
    assert offset_fetch(core, "h", ["orders"]) == (GAF, [])
    assert offset_fetch(core, "h", ["orders"], version=5) == (GAF, [])
    assert offset_fetch(core, "h", ["orders"], version=1) == (None, [("orders", GAF, -1)])
    for version in (1, 5, 8):
        assert offset_fetch(core, "g", ["audit", "orders"], version=version)[1] == \
            [("orders", errors.NONE, 5), ("audit", TAF, -1)]
    assert offset_fetch(core, "g", None) == (errors.NONE, [("orders", errors.NONE, 5)])
    assert offset_fetch(core, "g", None, version=5) == (errors.NONE, [("orders", errors.NONE, 5)])
    assert sorted(offset_fetch(core, "g", None, principal=ADMIN)[1]) == \
        [("audit", errors.NONE, 5), ("orders", errors.NONE, 5)]


def test_offset_delete_needs_delete_on_the_group_then_read_on_each_topic():
    core = secured(group_acl("g", Op.DELETE), topic_acl("orders", Op.READ))
    commit(core, "g", "orders", "audit", principal=ADMIN)
    cls = req(47)

    def delete(group, *topics):
        got = call(core, 47, 0, group_id=group, topics=[cls.OffsetDeleteRequestTopic(
            name=t, partitions=[cls.OffsetDeleteRequestPartition(partition_index=0)])
            for t in topics])
        return got.error_code, sorted((t.name, t.partitions[0].error_code) for t in got.topics)

    assert delete("h", "orders") == (GAF, [])
    assert delete("g", "orders", "audit", "ghost") == (errors.NONE, [
        ("audit", TAF), ("ghost", TAF), ("orders", errors.NONE)])
    assert offset_fetch(core, "g", None, principal=ADMIN)[1] == [("audit", errors.NONE, 5)]


# -- describing, listing and deleting groups ---------------------------------------------------

def test_describe_groups_refuses_first_and_reports_the_principals_operations():
    core = secured(group_acl("g", Op.READ))
    commit(core, "g", "orders", principal=ADMIN)
    got = call(core, 15, 5, groups=["g", "h"], include_authorized_operations=True)
    refused, described = got.groups
    assert (refused.group_id, refused.error_code, refused.group_state, refused.members,
            refused.authorized_operations) == ("h", GAF, "", [], NO_OPERATIONS)
    assert (described.group_id, described.error_code, described.group_state,
            described.authorized_operations) == ("g", errors.NONE, "Empty", READ_DESCRIBE)
    got = call(core, 15, 5, ADMIN, groups=["g"], include_authorized_operations=True)
    assert got.groups[0].authorized_operations == sum(1 << op for op in (3, 6, 8, 10, 11))


def test_list_groups_shows_every_group_to_cluster_describe_else_the_describable_ones():
    core = secured(group_acl("g", Op.DESCRIBE))
    for group in ("g", "h"):
        commit(core, group, "orders", principal=ADMIN)

    def listed():
        return sorted(g.group_id for g in call(core, 16, 5, states_filter=[],
                                               types_filter=[]).groups)

    assert listed() == ["g"]
    grant(core, cluster_acl(Op.DESCRIBE))
    assert listed() == ["g", "h"]


def test_delete_groups_needs_delete_on_each_group():
    core = secured(group_acl("g", Op.DELETE))
    for group in ("g", "h"):
        commit(core, group, "orders", principal=ADMIN)
    got = call(core, 42, 2, groups_names=["h", "g"])
    assert [(r.group_id, r.error_code) for r in got.results] == [("g", errors.NONE), ("h", GAF)]
    assert core.groups.find_group("h") is not None


# -- KIP-848 consumer groups -------------------------------------------------------------------

def heartbeat(core, group, topics=("orders",), principal=ALICE):
    return call(core, 68, 1, principal, group_id=group, member_id="m1", member_epoch=0,
                rebalance_timeout_ms=30_000, subscribed_topic_names=list(topics),
                topic_partitions=[])


def test_consumer_group_heartbeat_needs_read_on_the_group_and_describe_on_its_topics():
    core = secured(group_acl("g", Op.READ), topic_acl("orders", Op.DESCRIBE))
    refused = heartbeat(core, "h")
    assert (refused.error_code, refused.error_message, refused.member_id,
            refused.member_epoch) == (GAF, None, None, 0)
    refused = heartbeat(core, "g", ("orders", "audit"))
    assert (refused.error_code, refused.error_message) == (TAF, None)
    assert core.groups.find_group("g") is None
    joined = heartbeat(core, "g")
    assert (joined.error_code, joined.member_epoch) == (errors.NONE, 2)


def test_consumer_group_describe_refuses_groups_and_groups_showing_hidden_topics():
    core = secured(group_acl("g", Op.DESCRIBE))
    assert heartbeat(core, "g", principal=ADMIN).error_code == errors.NONE
    got = call(core, 69, 1, group_ids=["h", "g"], include_authorized_operations=True)
    assert [(g.group_id, g.error_code, g.error_message, g.members) for g in got.groups] == [
        ("h", GAF, None, []),
        ("g", TAF, "The group has described topic(s) that the client is not authorized to "
                   "describe.", [])]
    grant(core, topic_acl("orders", Op.DESCRIBE))
    (g,) = call(core, 69, 1, group_ids=["g"], include_authorized_operations=True).groups
    assert (g.error_code, g.group_state, len(g.members), g.authorized_operations) == \
        (errors.NONE, "Stable", 1, 1 << Op.DESCRIBE)


# -- transactions ------------------------------------------------------------------------------

def init_txn(core, tid="tx", principal=ADMIN):
    got = call(core, 22, 5, principal, transactional_id=tid, transaction_timeout_ms=60_000,
               producer_id=-1, producer_epoch=-1)
    return got


def add_partitions(core, tid, pid, epoch, *topics, principal=ALICE, version=3):
    cls = req(24)
    got = call(core, 24, version, principal, v3_and_below_transactional_id=tid,
               v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
               v3_and_below_topics=[cls.AddPartitionsToTxnTopic(name=t, partitions=[0])
                                    for t in topics])
    return sorted((t.name, r.partition_error_code) for t in got.results_by_topic_v3_and_below
                  for r in t.results_by_partition)


def test_init_producer_id_needs_write_on_the_transactional_id():
    core = secured(txn_acl("tx", Op.WRITE))
    refused = init_txn(core, "ty", principal=ALICE)
    assert (refused.error_code, refused.producer_id, refused.producer_epoch) == (TIAF, -1, -1)
    assert init_txn(core, "tx", principal=ALICE).error_code == errors.NONE


@pytest.mark.parametrize("acls, allowed", [
    ((), False),
    ((cluster_acl(Op.IDEMPOTENT_WRITE),), True),
    ((topic_acl("anything", Op.WRITE),), True),
    ((topic_acl("ord", Op.WRITE, pattern=Pattern.PREFIXED),
      topic_acl("or", Op.WRITE, pattern=Pattern.PREFIXED, permission=Perm.DENY)), False),
    ((topic_acl("orders", Op.WRITE), topic_acl("orders", Op.ALL, permission=Perm.DENY)), False),
    ((topic_acl("orders", Op.READ),), False),
    ((topic_acl("*", Op.WRITE, principal="User:*"),), True),
])
def test_an_idempotent_init_producer_id_needs_idempotent_write_or_write_on_some_topic(
        acls, allowed):
    core = secured(*acls)
    got = call(core, 22, 4, transactional_id=None, transaction_timeout_ms=60_000,
               producer_id=-1, producer_epoch=-1)
    assert got.error_code == (errors.NONE if allowed else CAF)
    # the authorization comes before the request's own checks
    got = call(core, 22, 4, transactional_id=None, transaction_timeout_ms=60_000,
               producer_id=5, producer_epoch=-1)
    assert got.error_code == (errors.INVALID_REQUEST if allowed else CAF)


def test_add_partitions_to_txn_needs_write_on_the_transactional_id_and_each_topic():
    core = secured(txn_acl("tx", Op.WRITE), topic_acl("orders", Op.WRITE))
    init = init_txn(core)
    pid, epoch = init.producer_id, init.producer_epoch
    assert add_partitions(core, "ty", pid, epoch, "orders") == [("orders", TIAF)]
    assert add_partitions(core, "tx", pid, epoch, "orders", "audit", "ghost") == [
        ("audit", TAF), ("ghost", TAF), ("orders", errors.OPERATION_NOT_ATTEMPTED)]
    assert core.transactions.find("tx").partitions == set()
    # a client may never add an internal topic, a super user neither
    assert add_partitions(core, "tx", pid, epoch, "orders", "__consumer_offsets",
                          principal=ADMIN) == [("__consumer_offsets", TAF),
                                               ("orders", errors.OPERATION_NOT_ATTEMPTED)]
    assert add_partitions(core, "tx", pid, epoch, "orders") == [("orders", errors.NONE)]
    # the brokers' batched form needs CLUSTER_ACTION
    cls = req(24)
    got = call(core, 24, 4, transactions=[cls.AddPartitionsToTxnTransaction(
        transactional_id="tx", producer_id=pid, producer_epoch=epoch, verify_only=True,
        topics=[cls.AddPartitionsToTxnTopic(name="orders", partitions=[0])])])
    assert (got.error_code, got.results_by_transaction) == (CAF, [])


def test_add_offsets_end_txn_and_txn_offset_commit_need_their_acls():
    core = secured(txn_acl("tx", Op.WRITE), group_acl("g", Op.READ),
                   topic_acl("orders", Op.READ))
    init = init_txn(core)
    ids = dict(producer_id=init.producer_id, producer_epoch=init.producer_epoch)
    assert call(core, 25, 3, transactional_id="ty", group_id="g", **ids).error_code == TIAF
    assert call(core, 25, 3, transactional_id="tx", group_id="h", **ids).error_code == GAF
    assert call(core, 25, 3, transactional_id="tx", group_id="g", **ids).error_code == \
        errors.NONE
    cls = req(28)

    def txn_commit(tid, group, *topics):
        got = call(core, 28, 3, transactional_id=tid, group_id=group, member_id="",
                   generation_id_or_member_epoch=-1, **ids, topics=[
                       cls.TxnOffsetCommitRequestTopic(name=t, partitions=[
                           cls.TxnOffsetCommitRequestPartition(partition_index=0,
                                                               committed_offset=3)])
                       for t in topics])
        return [(t.name, t.partitions[0].error_code) for t in got.topics]

    assert txn_commit("ty", "g", "orders", "audit") == [("orders", TIAF), ("audit", TIAF)]
    assert txn_commit("tx", "h", "orders", "audit") == [("orders", GAF), ("audit", GAF)]
    assert sorted(txn_commit("tx", "g", "orders", "audit", "ghost")) == [
        ("audit", TAF), ("ghost", TAF), ("orders", errors.NONE)]
    refused = call(core, 26, 4, transactional_id="ty", committed=True, **ids)
    assert (refused.error_code, refused.producer_id, refused.producer_epoch) == (TIAF, -1, -1)
    assert call(core, 26, 4, transactional_id="tx", committed=True, **ids).error_code == \
        errors.NONE


def test_describe_and_list_transactions_show_only_what_the_principal_may_describe():
    core = secured(txn_acl("tx", Op.DESCRIBE))
    for tid in ("tx", "ty"):
        init = init_txn(core, tid)
        assert add_partitions(core, tid, init.producer_id, init.producer_epoch, "orders",
                              "audit", principal=ADMIN) == \
            [("audit", errors.NONE), ("orders", errors.NONE)]
    got = call(core, 65, 0, transactional_ids=["ty", "tx"])
    refused, shown = got.transaction_states
    assert (refused.transactional_id, refused.error_code, refused.transaction_state,
            refused.topics) == ("ty", TIAF, "", [])
    assert (shown.error_code, shown.transaction_state, shown.topics) == \
        (errors.NONE, "Ongoing", [])
    grant(core, topic_acl("orders", Op.DESCRIBE))
    (shown,) = call(core, 65, 0, transactional_ids=["tx"]).transaction_states
    assert [(t.topic, t.partitions) for t in shown.topics] == [("orders", [0])]
    got = call(core, 66, 1, state_filters=[], producer_id_filters=[])
    assert [s.transactional_id for s in got.transaction_states] == ["tx"]
    got = call(core, 66, 1, ADMIN, state_filters=[], producer_id_filters=[])
    assert sorted(s.transactional_id for s in got.transaction_states) == ["tx", "ty"]


def test_describe_producers_needs_read_on_the_topic():
    core = secured(topic_acl("orders", Op.READ))
    cls = req(61)
    got = call(core, 61, 0, topics=[cls.TopicRequest(name=t, partition_indexes=[0])
                                    for t in ("orders", "audit", "ghost")])
    assert [(t.name, t.partitions[0].error_code, t.partitions[0].error_message)
            for t in got.topics] == [("orders", errors.NONE, None),
                                     ("audit", TAF, "Topic authorization failed."),
                                     ("ghost", TAF, "Topic authorization failed.")]


def test_write_txn_markers_needs_alter_or_cluster_action_on_the_cluster():
    core = secured()
    cls = req(27)
    body = dict(markers=[cls.WritableTxnMarker(producer_id=9, producer_epoch=0,
                                               transaction_result=False, coordinator_epoch=0,
                                               topics=[cls.WritableTxnMarkerTopic(
                                                   name="orders", partition_indexes=[0, 1])])])
    got = call(core, 27, 1, **body)
    assert [p.error_code for m in got.markers for t in m.topics for p in t.partitions] == \
        [CAF, CAF]
    grant(core, cluster_acl(Op.CLUSTER_ACTION))
    got = call(core, 27, 1, **body)
    assert CAF not in [p.error_code for m in got.markers for t in m.topics for p in t.partitions]


# -- topics and configs ------------------------------------------------------------------------

def create_topics(core, *names, principal=ALICE):
    cls = req(19)
    got = call(core, 19, 7, principal, topics=[cls.CreatableTopic(
        name=n, num_partitions=1, replication_factor=1) for n in names])
    return {t.name: t for t in got.topics}


def test_create_topics_needs_create_on_the_cluster_or_the_topic():
    core = secured(topic_acl("new", Op.CREATE, pattern=Pattern.PREFIXED))
    got = create_topics(core, "new-a", "other", "other", "__cluster_metadata")
    assert {n: (t.error_code, t.error_message) for n, t in got.items()} == {
        "new-a": (errors.NONE, None), "other": (errors.INVALID_REQUEST, "Duplicate topic name."),
        "__cluster_metadata": (errors.INVALID_REQUEST,
                               "Creation of internal topic __cluster_metadata is prohibited.")}
    got = create_topics(core, "other")
    assert (got["other"].error_code, got["other"].error_message) == \
        (TAF, "Authorization failed.")
    assert "other" not in core.cluster.topics
    # created without DESCRIBE_CONFIGS: no configs are shown
    new = create_topics(core, "new-b")["new-b"]
    assert (new.error_code, new.topic_config_error_code, new.num_partitions,
            new.replication_factor, new.configs) == (errors.NONE, TAF, -1, -1, [])
    assert new.topic_id == core.cluster.topics["new-b"].topic_id
    grant(core, cluster_acl(Op.CREATE), topic_acl("*", Op.DESCRIBE_CONFIGS))
    other = create_topics(core, "other")["other"]
    assert (other.error_code, other.topic_config_error_code, other.num_partitions) == \
        (errors.NONE, errors.NONE, 1)
    assert other.configs


def test_delete_topics_needs_describe_then_delete():
    core = secured(topic_acl("orders", Op.DELETE), topic_acl("ghost", Op.DESCRIBE),
                   topics=("orders", "audit", "seen"))
    grant(core, topic_acl("seen", Op.DESCRIBE))
    got = call(core, 20, 5, timeout_ms=1000, topic_names=["orders", "audit", "ghost", "never",
                                                          "seen"])
    assert sorted((r.name, r.error_code, r.error_message) for r in got.responses) == [
        ("audit", TAF, "Topic authorization failed."),
        ("ghost", errors.UNKNOWN_TOPIC_OR_PARTITION, None),
        ("never", TAF, "Topic authorization failed."),
        ("orders", errors.NONE, None),
        ("seen", TAF, "Topic authorization failed.")]
    assert sorted(core.cluster.topics) == ["audit", "seen"]
    ids = {n: core.cluster.topics[n].topic_id for n in ("audit", "seen")}
    cls = req(20)
    got = call(core, 20, 6, timeout_ms=1000, topics=[
        cls.DeleteTopicState(name=None, topic_id=i) for i in ids.values()])
    assert sorted((r.name or "", r.error_code) for r in got.responses) == \
        [("", TAF), ("seen", TAF)]
    got = call(core, 20, 6, ADMIN, timeout_ms=1000, topics=[
        cls.DeleteTopicState(name=None, topic_id=i) for i in ids.values()])
    assert [r.error_code for r in got.responses] == [errors.NONE] * 2


def test_create_partitions_needs_alter_on_the_topic():
    core = secured(topic_acl("orders", Op.ALTER))
    cls = req(37)
    got = call(core, 37, 3, timeout_ms=1000, topics=[
        cls.CreatePartitionsTopic(name=t, count=3, assignments=None)
        for t in ("orders", "audit", "ghost")])
    assert [(r.name, r.error_code, r.error_message) for r in got.results] == [
        ("orders", errors.NONE, None), ("audit", TAF, None), ("ghost", TAF, None)]
    assert len(core.cluster.topics["audit"].partitions) == 2


def test_describe_configs_needs_describe_configs_and_refuses_after_the_others():
    core = secured(topic_acl("orders", Op.ALTER_CONFIGS))
    cls = req(32)
    got = call(core, 32, 4, resources=[
        cls.DescribeConfigsResource(resource_type=kind, resource_name=name,
                                    configuration_keys=None)
        for kind, name in ((2, "audit"), (4, "0"), (2, "orders"))])
    assert [(r.resource_name, r.error_code, r.error_message, bool(r.configs))
            for r in got.results] == [
        ("orders", errors.NONE, None, True),
        ("audit", TAF, "Topic authorization failed.", False),
        ("0", CAF, "Cluster authorization failed.", False)]


@pytest.mark.parametrize("api_key, version", [(33, 2), (44, 1)])
def test_alter_configs_need_alter_configs_after_the_brokers_own_checks(api_key, version):
    core = secured(topic_acl("orders", Op.ALTER_CONFIGS))
    cls = req(api_key)

    def config(name, value):
        if api_key == 44:
            return cls.AlterableConfig(name=name, config_operation=0, value=value)
        return cls.AlterableConfig(name=name, value=value)

    got = call(core, api_key, version, resources=[
        cls.AlterConfigsResource(resource_type=t, resource_name=n, configs=configs)
        for t, n, configs in (
            (2, "orders", [config("retention.ms", "1000")]),
            (2, "audit", [config("retention.ms", "1000")]),
            (2, "ghost", [config("retention.ms", "1")]),
            (4, "0", [config("log.cleaner.threads", "2")]),
            (2, "twice", [config("retention.ms", "1"), config("retention.ms", "2")]),
            (4, "7", [config("log.cleaner.threads", "2")]),
            (32, "g", [config("consumer.session.timeout.ms", "45000")]))])
    answers = [(r.resource_name, r.error_code, r.error_message) for r in got.responses]
    assert answers[:5] == [
        ("orders", errors.NONE, None),
        ("audit", TAF, "Topic authorization failed."),
        ("ghost", TAF, "Topic authorization failed."),
        ("0", CAF, "Cluster authorization failed."),
        ("twice", errors.INVALID_REQUEST, "Error due to duplicate config keys")]
    # another broker's id is refused by the broker before any authorization
    assert answers[5][:2] == ("7", errors.INVALID_REQUEST)
    assert answers[6] == ("g", GAF, "Group authorization failed.")
    assert core.cluster.topics["orders"].configs.get("retention.ms") == "1000"
    assert "retention.ms" not in core.cluster.topics["audit"].configs


def test_describe_cluster_reports_the_principals_operations():
    core = secured()
    got = call(core, 60, 1, include_cluster_authorized_operations=True)
    assert (got.error_code, got.cluster_authorized_operations) == (errors.NONE, 0)
    grant(core, cluster_acl(Op.ALTER))
    got = call(core, 60, 1, include_cluster_authorized_operations=True)
    assert got.cluster_authorized_operations == (1 << Op.ALTER) | (1 << Op.DESCRIBE)
    got = call(core, 60, 1, ADMIN, include_cluster_authorized_operations=True)
    assert got.cluster_authorized_operations == CLUSTER_ALL
    got = call(core, 60, 1, include_cluster_authorized_operations=False)
    assert got.cluster_authorized_operations == NO_OPERATIONS


def test_describe_topic_partitions_hides_or_refuses_topics_without_describe():
    core = secured(topic_acl("orders", Op.READ))
    cls = req(75)
    got = call(core, 75, 0, topics=[], response_partition_limit=2000)
    assert [(t.name, t.error_code, t.topic_authorized_operations) for t in got.topics] == \
        [("orders", errors.NONE, READ_DESCRIBE)]
    got = call(core, 75, 0, topics=[cls.TopicRequest(name=n) for n in ("audit", "orders")],
               response_partition_limit=1)
    assert [(t.name, t.error_code, t.topic_id, len(t.partitions),
             t.topic_authorized_operations) for t in got.topics] == [
        ("orders", errors.NONE, core.cluster.topics["orders"].topic_id, 1, READ_DESCRIBE),
        ("audit", TAF, ZERO, 0, NO_OPERATIONS)]
    assert (got.next_cursor.topic_name, got.next_cursor.partition_index) == ("orders", 1)


def test_describe_log_dirs_needs_describe_on_the_cluster():
    core = secured()
    got = call(core, 35, 4, topics=None)
    assert (got.error_code, got.results) == (CAF, [])
    grant(core, cluster_acl(Op.DESCRIBE))
    got = call(core, 35, 4, topics=None)
    assert got.error_code == errors.NONE
    assert sorted(t.name for r in got.results for t in r.topics) == ["audit", "orders"]


# -- without an authorizer ---------------------------------------------------------------------

def test_without_an_authorizer_everything_is_allowed_as_before():
    core = make_core()
    core.cluster.create_topic("orders", 1, 1)
    assert produce(core, "orders") == {"orders": (errors.NONE, None)}
    assert fetch(core, "orders") == [("orders", errors.NONE)]
    assert commit(core, "g", "orders") == [("orders", errors.NONE)]
    got = call(core, 15, 5, groups=["g"], include_authorized_operations=True)
    assert got.groups[0].authorized_operations == sum(1 << op for op in (3, 6, 8, 10, 11))
    got = call(core, 60, 1, include_cluster_authorized_operations=True)
    assert got.cluster_authorized_operations == CLUSTER_ALL
    init = call(core, 22, 4, transactional_id=None, transaction_timeout_ms=60_000,
                producer_id=-1, producer_epoch=-1)
    assert init.error_code == errors.NONE
    assert call(core, 35, 4, topics=None).error_code == errors.NONE
    assert [g.group_id for g in call(core, 16, 5, states_filter=[], types_filter=[]).groups] \
        == ["g"]


# -- share groups --------------------------------------------------------------------------------

def test_share_requests_need_read_on_the_group_and_on_each_topic():
    core = secured()
    orders = core.cluster.topics["orders"].topic_id
    member = "0f2f6ad1-2c55-4d6e-9a3c-9e6c8d1a7b10"
    beat = call(core, 76, 1, group_id="sg", member_id=member, member_epoch=0,
                subscribed_topic_names=["orders"])
    assert (beat.error_code, beat.error_message) == (errors.GROUP_AUTHORIZATION_FAILED, None)
    grant(core, group_acl("sg", Op.READ))
    beat = call(core, 76, 1, group_id="sg", member_id=member, member_epoch=0,
                subscribed_topic_names=["orders"])
    assert beat.error_code == errors.TOPIC_AUTHORIZATION_FAILED  # DESCRIBE on the topic
    grant(core, topic_acl("orders", Op.DESCRIBE))
    assert call(core, 76, 1, group_id="sg", member_id=member, member_epoch=0,
                subscribed_topic_names=["orders"]).error_code == errors.NONE
    cls = req(78)
    fetch = dict(group_id="sg", member_id=member, share_session_epoch=0, max_wait_ms=0,
                 min_bytes=1, max_bytes=1 << 20, max_records=10, batch_size=10,
                 topics=[cls.FetchTopic(topic_id=orders, partitions=[
                     cls.FetchPartition(partition_index=0)])])
    # READ on the topic is needed to fetch from it (DESCRIBE is not enough)
    refused = call(core, 78, 1, **fetch)
    assert refused.error_code == errors.NONE
    assert refused.responses[0].partitions[0].error_code == errors.TOPIC_AUTHORIZATION_FAILED
    assert call(core, 78, 1, **{**fetch, "group_id": "other"}).error_code == \
        errors.GROUP_AUTHORIZATION_FAILED
    # READ on the group lets her describe it (READ implies DESCRIBE); not another group
    described = call(core, 77, 1, group_ids=["other", "sg"], include_authorized_operations=False)
    assert [(g.group_id, g.error_code) for g in described.groups] == [
        ("other", errors.GROUP_AUTHORIZATION_FAILED), ("sg", errors.NONE)]
