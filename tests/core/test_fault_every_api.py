"""Every request can be faulted with an error: for each API mockbroker serves, in each version it
serves, an error rule answers a valid request with the error where Kafka's own error answer to
that API puts it (the request class's ``getErrorResponse``), in a response that encodes.

Where that is, is written out here (:data:`WHERE`), apart from the handlers' declarations, so that
a declaration putting the error elsewhere, or nowhere, fails.  Every response Kafka defines has a
place for an error in each of its versions, so no served version is refused (:data:`NO_PLACE` is
empty); a declaration that left one without a place would be refused with the versions named.
"""

from __future__ import annotations

from typing import Any

import pytest

import wire
from mockbroker.core.clock import ManualClock
from mockbroker.core.cluster import Broker
from mockbroker.core.control import error_responses
from mockbroker.core.control.rules import RuleError
from mockbroker.core.deferred import Close, Deferred
from mockbroker.core.dispatch import Core
from mockbroker.handlers import REGISTRY, SERVED
from mockbroker.handlers.registry import ApiRegistry
from tests.core.harness import START_MS, make_core, send
from wire import errors, records
from wire.definitions import APIS
from wire.schema import ZERO_UUID

#: the one error every rule here answers with
CODE = errors.NOT_COORDINATOR
TOPIC = "orders"
TXN_OFFSET_COMMIT, DESCRIBE_PRODUCERS, INIT_PRODUCER_ID, END_TXN, OFFSET_FETCH = 28, 61, 22, 26, 9

#: (API key, version): every version of every API served
PAIRS = [(key, version) for key, served in sorted(SERVED.items())
         for version in range(served.min_version, served.max_version + 1)]

#: Where Kafka's error answer puts the error, by API and the version it starts from: paths into
#: the response, each step but the last through a list, which holds one entry for the one item
#: the request names (one topic, one partition, one group, ...).
WHERE: dict[str, dict[int, tuple[str, ...]]] = {
    "Produce": {0: ("responses.partition_responses.error_code",)},
    "Fetch": {0: ("responses.partitions.error_code",)},
    "ListOffsets": {0: ("topics.partitions.error_code",)},
    # the real answer, with the error on the topic (so the client still learns the brokers)
    "Metadata": {0: ("topics.error_code",)},
    "OffsetCommit": {0: ("topics.partitions.error_code",)},
    # v1 has no top-level error: each partition asked for has it; from v8, each group
    "OffsetFetch": {0: ("topics.partitions.error_code",), 2: ("error_code",),
                    8: ("groups.error_code",)},
    "FindCoordinator": {0: ("error_code",), 4: ("coordinators.error_code",)},
    "JoinGroup": {0: ("error_code",)},
    "Heartbeat": {0: ("error_code",)},
    # at the top alone, v3+ too: Kafka's answer lists no members
    "LeaveGroup": {0: ("error_code",)},
    "SyncGroup": {0: ("error_code",)},
    "DescribeGroups": {0: ("groups.error_code",)},
    "ListGroups": {0: ("error_code",)},
    "SaslHandshake": {0: ("error_code",)},
    "ApiVersions": {0: ("error_code",)},
    "CreateTopics": {0: ("topics.error_code",)},
    "DeleteTopics": {0: ("responses.error_code",)},
    "DeleteRecords": {0: ("topics.partitions.error_code",)},
    "InitProducerId": {0: ("error_code",)},
    "OffsetForLeaderEpoch": {0: ("topics.partitions.error_code",)},
    "AddPartitionsToTxn": {
        0: ("results_by_topic_v3_and_below.results_by_partition.partition_error_code",),
        4: ("error_code",)},
    "AddOffsetsToTxn": {0: ("error_code",)},
    "EndTxn": {0: ("error_code",)},
    "WriteTxnMarkers": {0: ("markers.topics.partitions.error_code",)},
    "TxnOffsetCommit": {0: ("topics.partitions.error_code",)},
    "DescribeAcls": {0: ("error_code",)},
    "CreateAcls": {0: ("results.error_code",)},
    "DeleteAcls": {0: ("filter_results.error_code",)},
    "DescribeConfigs": {0: ("results.error_code",)},
    "AlterConfigs": {0: ("responses.error_code",)},
    # Kafka's answer has the error at the top alone, which v1-2 lack (it would be lost there):
    # the broker's log dir carries it
    # each topic of each directory, every partition with the error
    "AlterReplicaLogDirs": {0: ("results.partitions.error_code",)},
    "DescribeLogDirs": {0: ("results.error_code",), 3: ("error_code",)},
    "SaslAuthenticate": {0: ("error_code",)},
    "CreatePartitions": {0: ("results.error_code",)},
    "CreateDelegationToken": {0: ("error_code",)},
    "RenewDelegationToken": {0: ("error_code",)},
    "ExpireDelegationToken": {0: ("error_code",)},
    "DescribeDelegationToken": {0: ("error_code",)},
    "DeleteGroups": {0: ("results.error_code",)},
    "IncrementalAlterConfigs": {0: ("responses.error_code",)},
    # a refusal of the whole request: at the top from v1, and on each partition asked for
    "ElectLeaders": {0: ("replica_election_results.partition_result.error_code",),
                     1: ("error_code", "replica_election_results.partition_result.error_code")},
    "AlterPartitionReassignments": {0: ("error_code",)},
    "ListPartitionReassignments": {0: ("error_code",)},
    "OffsetDelete": {0: ("error_code",)},
    # the filter's error at the top; each entity of an alteration echoed with it
    "DescribeClientQuotas": {0: ("error_code",)},
    "AlterClientQuotas": {0: ("entries.error_code",)},
    "DescribeUserScramCredentials": {0: ("error_code", "results.error_code")},
    "DescribeQuorum": {0: ("error_code",)},
    "AddRaftVoter": {0: ("error_code",)},
    "RemoveRaftVoter": {0: ("error_code",)},
    "UpdateFeatures": {0: ("error_code",)},
    "UnregisterBroker": {0: ("error_code",)},
    "UnregisterController": {0: ("error_code",)},
    "ListConfigResources": {0: ("error_code",)},
    # each user once, whether deleted or upserted (the request here names "u" in both)
    "AlterUserScramCredentials": {0: ("results.error_code",)},
    "DescribeCluster": {0: ("error_code",)},
    "DescribeProducers": {0: ("topics.partitions.error_code",)},
    "DescribeTransactions": {0: ("transaction_states.error_code",)},
    "ListTransactions": {0: ("error_code",)},
    "ConsumerGroupHeartbeat": {0: ("error_code",)},
    "ConsumerGroupDescribe": {0: ("groups.error_code",)},
    "GetTelemetrySubscriptions": {0: ("error_code",)},
    "PushTelemetry": {0: ("error_code",)},
    "DescribeTopicPartitions": {0: ("topics.error_code",)},
    "ShareGroupHeartbeat": {1: ("error_code",)},
    "ShareGroupDescribe": {1: ("groups.error_code",)},
    # Kafka's error answer of both share requests is the top-level error, with no partitions
    "ShareFetch": {1: ("error_code",)},
    "ShareAcknowledge": {1: ("error_code",)},
    "DescribeShareGroupOffsets": {0: ("groups.error_code",)},
    "AlterShareGroupOffsets": {0: ("error_code",)},
    "DeleteShareGroupOffsets": {0: ("error_code",)},
    "StreamsGroupHeartbeat": {0: ("error_code",)},
    "StreamsGroupDescribe": {0: ("groups.error_code",)},
    "StreamsGroupTopologyDescriptionUpdate": {0: ("error_code",)},
}

#: (API name, version) → why its response has no place for an error, and a rule for the API is
#: refused.  None: every response Kafka defines carries an error somewhere in each version
#: (ApiVersions, SaslHandshake and SaslAuthenticate at the top; DescribeLogDirs v1-2 on the log
#: dir; TxnOffsetCommit, DescribeProducers, WriteTxnMarkers and AddPartitionsToTxn v0-3 on
#: each partition; DescribeTransactions and ConsumerGroupDescribe on each entry).
NO_PLACE: dict[tuple[str, int], str] = {}


# -- valid requests -----------------------------------------------------------------------------

#: strings by field name: a topic the cluster has, a group, a transactional id...
_STRINGS = {"name": TOPIC, "topic": TOPIC, "topic_name": TOPIC, "topic_names": TOPIC,
            "resource_name": TOPIC, "resource_name_filter": TOPIC, "group_id": "g",
            "group_ids": "g", "groups": "g", "groups_names": "g", "key": "g",
            "coordinator_keys": "g", "transactional_id": "tx", "transactional_ids": "tx",
            "v3_and_below_transactional_id": "tx", "member_id": "m", "protocol_type": "consumer",
            "mechanism": "PLAIN", "user": "u"}
#: numbers by field name where 0 would not do (acks=0 has no answer; a replica id of 0 is a
#: follower's fetch); the ACL and config codes name a topic, literally, for everything allowed
_NUMBERS = {"acks": -1, "replica_id": -1, "replica_epoch": -1, "session_epoch": -1,
            "current_leader_epoch": -1, "last_fetched_epoch": -1, "log_start_offset": -1,
            "leader_epoch": -1, "max_bytes": 1 << 20, "partition_max_bytes": 1 << 20,
            "min_bytes": 1, "timeout_ms": 1000, "iterations": 4096, "mechanism": 1,
            "resource_type": 2, "resource_type_filter": 2, "resource_pattern_type": 3,
            "pattern_type_filter": 3, "operation": 2, "permission_type": 3}
_NAMES = frozenset({"name", "topic", "topic_name"})


def _primitive(f, topic_id) -> Any:
    kind = f.element_type
    if kind == "string":
        return _STRINGS.get(f.name, "x")
    if kind == "bool":
        return False
    if kind == "uuid":
        return topic_id if f.name == "topic_id" else ZERO_UUID
    if kind == "records":
        return records.encode_batch([(b"k", b"v", [], START_MS)])
    if kind == "bytes":
        return b""
    if kind == "float64":
        return 0.0
    return _NUMBERS.get(f.name, 0)


def _struct(cls, fields, version: int, topic_id) -> Any:
    """``cls`` with each field of ``version`` set; every list holds one item."""
    obj = cls()
    for f in fields:
        if not f.present(version):
            continue
        if f.is_struct and not f.is_array and f.is_nullable(version):
            value = None  # an optional struct (a cursor) left out
        elif f.is_struct:
            value = _struct(cls._struct_classes[f.element_type], f.fields, version, topic_id)
        else:
            value = _primitive(f, topic_id)
        setattr(obj, f.name, [value] if f.is_array else value)
    if hasattr(obj, "topic_id") and any(f.name in _NAMES and f.present(version)
                                        for f in fields):
        obj.topic_id = ZERO_UUID  # a topic is named or given by id, never both
    return obj


def request(core, api_key: int, version: int) -> Any:
    """A valid request of ``version`` naming one of everything: topic ``orders`` (by name, or
    by id where the version has no name), its partition 0, group "g", transactional id "tx"."""
    return _struct(wire.request_class(api_key), APIS[api_key].request.fields, version,
                   core.cluster.topics[TOPIC].topic_id)


# -- what the client reads ------------------------------------------------------------------------

def _at(message, path: str) -> list:
    """The values at ``path``, through every item of each list on the way."""
    *lists, last = path.split(".")
    items = [message]
    for step in lists:
        items = [entry for item in items for entry in getattr(item, step)]
    return [getattr(item, last) for item in items]


def _error_paths(message, prefix: str = "") -> dict[str, set[int]]:
    """Every error field of a response, at any depth, by path: the codes found there."""
    found: dict[str, set[int]] = {}
    for f in getattr(type(message), "_fields", ()):
        value = getattr(message, f.name)
        if f.name.endswith("error_code"):
            found.setdefault(prefix + f.name, set()).add(value)
        elif f.is_struct:
            for item in (value or ()) if f.is_array else [value]:
                if item is not None:
                    for path, codes in _error_paths(item, f"{prefix}{f.name}.").items():
                        found.setdefault(path, set()).update(codes)
    return found


def _where(name: str, version: int) -> tuple[str, ...]:
    by_version = WHERE[name]
    return by_version[max(v for v in by_version if v <= version)]


# -- the walk -------------------------------------------------------------------------------------

def test_the_table_names_every_api_served_and_no_other():
    assert set(WHERE) == {APIS[key].name for key in SERVED}


def test_no_served_version_lacks_a_place_for_an_error():
    without = {(registration.name, version) for registration in REGISTRY
               for version in range(registration.min_version, registration.max_version + 1)
               if not error_responses.can_express(registration.api_key, version,
                                                  registration.error_shape)}
    assert without == set(NO_PLACE)
    assert {r.name for r in REGISTRY if error_responses.cannot_express(r) is not None} == \
        {name for name, _ in NO_PLACE}


@pytest.mark.parametrize("api_key, version", PAIRS,
                         ids=[f"{APIS[k].name}-v{v}" for k, v in PAIRS])
def test_an_error_rule_answers_each_api_and_version_where_kafka_puts_the_error(api_key,
                                                                               version):
    name = APIS[api_key].name
    core = make_core(1)
    core.cluster.create_topic(TOPIC, 1, 1)
    body = request(core, api_key, version)
    rule = core.control.add({"api": name, "error": "NOT_COORDINATOR"})
    # read as the client reads it: encoded with the codec at the version, and decoded again
    answer = send(core, api_key, version, body)
    assert answer is not None and not isinstance(answer, (Close, Deferred)), answer
    assert rule.fired == 1
    where = _where(name, version)
    for path in where:
        assert _at(answer, path) == [CODE], (path, answer)
    # there and nowhere else
    assert {path for path, codes in _error_paths(answer).items() if codes - {errors.NONE}} == \
        set(where), answer
    if name not in ("SaslHandshake", "SaslAuthenticate"):  # answered before the request log
        # and GET /requests names the error, wherever the answer carries it
        assert [r.error_code for r in core.requests][-1] == CODE


# -- refusals -------------------------------------------------------------------------------------

def test_a_rule_for_an_api_whose_versions_have_no_place_is_refused_naming_them():
    """Without its declared shape TxnOffsetCommit, whose responses have no top-level error, could
    carry the error nowhere: a rule for it is refused, and the refusal names each version."""
    registry = ApiRegistry()
    registry.register(TXN_OFFSET_COMMIT, 0, 6, REGISTRY.get(TXN_OFFSET_COMMIT).handler)
    core = Core([Broker(0, "127.0.0.1", 9092)], None, ManualClock(START_MS), registry=registry)
    with pytest.raises(RuleError, match="^TxnOffsetCommit v0, v1, v2, v3, v4, v5, v6 responses "
                                        "have no place for an error$"):
        core.control.add({"api": "TxnOffsetCommit", "error": "NOT_COORDINATOR"})
    assert list(core.control) == []


# -- partitioned APIs: only the partitions a rule picks fail --------------------------------------

def test_a_rule_on_one_partition_of_describe_producers_fails_only_that_one():
    core = make_core(1)
    core.cluster.create_topic(TOPIC, 2, 1)
    core.control.add({"api": "DescribeProducers", "error": "NOT_COORDINATOR", "topic": TOPIC,
                      "partition": 1})
    cls = wire.request_class(DESCRIBE_PRODUCERS)
    answer = send(core, DESCRIBE_PRODUCERS, 0,
                  topics=[cls.TopicRequest(name=TOPIC, partition_indexes=[0, 1])])
    assert [(t.name, p.partition_index, p.error_code) for t in answer.topics
            for p in t.partitions] == [(TOPIC, 0, errors.NONE), (TOPIC, 1, CODE)]


def test_a_rule_on_one_partition_of_a_txn_offset_commit_fails_it_and_commits_the_other():
    core = make_core(1)
    core.cluster.create_topic(TOPIC, 2, 1)
    started = send(core, INIT_PRODUCER_ID, 5, transactional_id="tx",
                   transaction_timeout_ms=60_000, producer_id=-1, producer_epoch=-1)
    assert started.error_code == errors.NONE
    pid, epoch = started.producer_id, started.producer_epoch
    core.control.add({"api": "TxnOffsetCommit", "error": "NOT_COORDINATOR", "topic": TOPIC,
                      "partition": 1})
    cls = wire.request_class(TXN_OFFSET_COMMIT)
    answer = send(core, TXN_OFFSET_COMMIT, 5, transactional_id="tx", group_id="g",
                  producer_id=pid, producer_epoch=epoch, generation_id_or_member_epoch=-1,
                  member_id="", group_instance_id=None, topics=[
                      cls.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=[
                          cls.TxnOffsetCommitRequestPartition(
                              partition_index=index, committed_offset=7,
                              committed_leader_epoch=-1, committed_metadata="")
                          for index in (0, 1)])])
    assert [(p.partition_index, p.error_code) for t in answer.topics for p in t.partitions] == \
        [(0, errors.NONE), (1, CODE)]
    ended = send(core, END_TXN, 5, transactional_id="tx", producer_id=pid,
                 producer_epoch=epoch, committed=True)
    assert ended.error_code == errors.NONE
    cls = wire.request_class(OFFSET_FETCH)
    fetched = send(core, OFFSET_FETCH, 8, require_stable=True, groups=[
        cls.OffsetFetchRequestGroup(group_id="g", topics=[
            cls.OffsetFetchRequestTopics(name=TOPIC, partition_indexes=[0, 1])])])
    assert [(p.partition_index, p.committed_offset)
            for p in fetched.groups[0].topics[0].partitions] == [(0, 7), (1, -1)]
