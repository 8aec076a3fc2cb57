"""Answers checked side by side with Apache Kafka 4.4: what its broker answered to the same
requests, asserted as the client sees it (the decoded response)."""

from __future__ import annotations

import pytest

import wire
from tests.core.harness import START_MS, make_core, send
from tests.core.test_coordinator import GROUP, Harness
from wire import errors, records

HOUR = 3600 * 1000
PRODUCE = wire.request_class(0)
FETCH = wire.request_class(1)
COMMIT = wire.request_class(8)
OFFSET_FETCH = wire.request_class(9)
LEAVE = wire.request_class(13)


# -- Produce: record timestamps ----------------------------------------------------------------

def produce(core, topic: str, batch: bytes, version: int = 11):
    body = PRODUCE(acks=-1, timeout_ms=1000, topic_data=[PRODUCE.TopicProduceData(
        name=topic, partition_data=[PRODUCE.PartitionProduceData(index=0, records=batch)])])
    return send(core, 0, version, body).responses[0].partition_responses[0]


def record_errors(part) -> list[tuple[int, str]]:
    return [(e.batch_index, e.batch_index_error_message) for e in part.record_errors]


@pytest.fixture
def core():
    core = make_core()
    core.cluster.create_topic("events", 1)
    return core


@pytest.mark.parametrize("compression", [records.NONE, records.GZIP])
def test_a_create_time_two_hours_ahead_is_refused_record_by_record(core, compression):
    now = START_MS
    batch = records.encode_batch([(b"k", b"a", [], now), (b"k", b"b", [], now + 2 * HOUR),
                                  (b"k", b"c", [], now + 3 * HOUR)], compression=compression)
    part = produce(core, "events", batch)
    assert part.error_code == errors.INVALID_TIMESTAMP
    assert part.base_offset == -1
    assert part.error_message == "One or more records have been rejected due to invalid timestamp"
    bounds = f"[{now - (2 ** 63 - 1)}, {now + HOUR}]"
    assert record_errors(part) == [
        (1, f"Timestamp {now + 2 * HOUR} of message with offset 1 is out of range. "
            f"The timestamp should be within {bounds}"),
        (2, f"Timestamp {now + 3 * HOUR} of message with offset 2 is out of range. "
            f"The timestamp should be within {bounds}")]
    assert core.cluster.topics["events"].partitions[0].log.log_end_offset == 0


def test_the_topic_bounds_apply_both_ways_and_a_missing_timestamp_passes(core):
    core.cluster.create_topic("tight", 1, configs={"message.timestamp.before.max.ms": "60000",
                                                   "message.timestamp.after.max.ms": "60000"})
    now = START_MS
    old = produce(core, "tight", records.encode_batch([(b"k", b"a", [], now - 120000)]))
    assert old.error_code == errors.INVALID_TIMESTAMP
    assert record_errors(old) == [(0, f"Timestamp {now - 120000} of message with offset 0 is "
                                      f"out of range. The timestamp should be within "
                                      f"[{now - 60000}, {now + 60000}]")]
    assert produce(core, "tight", records.encode_batch([(b"k", b"a", [], -5)])).error_code == \
        errors.INVALID_TIMESTAMP
    assert produce(core, "tight", records.encode_batch([(b"k", b"a", [], -1)])).error_code == \
        errors.NONE
    # a year old is fine under the default before.max.ms (Long.MAX_VALUE)
    assert produce(core, "events", records.encode_batch(
        [(b"k", b"a", [], now - 365 * 24 * HOUR)])).error_code == errors.NONE


def test_the_broker_default_bounds_apply_to_topics_without_an_override(core):
    core.cluster.broker_configs.dynamic_default["log.message.timestamp.after.max.ms"] = "1000"
    part = produce(core, "events", records.encode_batch([(b"k", b"a", [], START_MS + 5000)]))
    assert part.error_code == errors.INVALID_TIMESTAMP


def test_log_append_time_topics_take_any_timestamp_but_no_log_append_time_batch(core):
    core.cluster.create_topic("stamped", 1, configs={"message.timestamp.type": "LogAppendTime"})
    ahead = produce(core, "stamped", records.encode_batch([(b"k", b"a", [], START_MS + 2 * HOUR)]))
    assert (ahead.error_code, ahead.log_append_time_ms) == (errors.NONE, START_MS)
    claimed = produce(core, "stamped", records.encode_batch([(b"k", b"a", [], START_MS)],
                                                            timestamp_type=records.LOG_APPEND_TIME))
    assert claimed.error_code == errors.INVALID_TIMESTAMP
    assert record_errors(claimed) == [(0, (
        f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={START_MS}, "
        "key=1 bytes, value=1 bytes). Producer should not set timestamp type to "
        "LogAppendTime."))]


def test_an_idempotent_batch_out_of_range_is_refused_before_its_sequence_is_taken(core):
    ahead = records.encode_batch([(b"k", b"a", [], START_MS + 2 * HOUR)], producer_id=7,
                                 producer_epoch=0, base_sequence=0)
    assert produce(core, "events", ahead).error_code == errors.INVALID_TIMESTAMP
    fine = records.encode_batch([(b"k", b"a", [], START_MS)], producer_id=7, producer_epoch=0,
                                base_sequence=0)
    assert produce(core, "events", fine).error_code == errors.NONE


# -- Produce: the topic's compression.type ---------------------------------------------------

def fetched(core, topic: str):
    body = FETCH(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                 session_id=0, session_epoch=-1, topics=[FETCH.FetchTopic(
                     topic=topic, partitions=[FETCH.FetchPartition(
                         partition=0, current_leader_epoch=-1, fetch_offset=0,
                         log_start_offset=-1, partition_max_bytes=1 << 20)])],
                 forgotten_topics_data=[], rack_id="")
    data = send(core, 1, 12, body).responses[0].partitions[0].records
    return [(header, records.decode_records(bytes(memoryview(data)[start:end])))
            for header, start, end in records.iter_batches(data)]


RECORDS = [records.Record(0, START_MS, b"k1", b"v1" * 20, [("h", b"x")]),
           records.Record(1, START_MS + 5, None, b"v2" * 20, []),
           records.Record(2, START_MS - 3, b"k3", None, [("a", None)])]


@pytest.mark.parametrize("topic_codec, sent, stored", [
    ("gzip", records.NONE, records.GZIP),
    ("gzip", records.LZ4, records.GZIP),
    ("gzip", records.GZIP, records.GZIP),
    ("uncompressed", records.GZIP, records.NONE),
    ("producer", records.LZ4, records.LZ4),
    ("producer", records.NONE, records.NONE),
    ("zstd", records.SNAPPY, records.ZSTD),
    ("snappy", records.NONE, records.SNAPPY),
    ("lz4", records.ZSTD, records.LZ4),
])
def test_a_batch_is_stored_with_the_topics_codec(core, topic_codec, sent, stored):
    core.cluster.create_topic("t", 1, configs={"compression.type": topic_codec})
    produce(core, "t", records.encode_batch(RECORDS[:1]))  # so the next one starts at 1
    batch = records.encode_batch(RECORDS, compression=sent, producer_id=77, producer_epoch=1,
                                 base_sequence=0)
    assert produce(core, "t", batch).base_offset == 1
    header, got = fetched(core, "t")[-1]
    assert header.compression == stored
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (1, 2, 3)
    assert (header.base_timestamp, header.max_timestamp) == (START_MS, START_MS + 5)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (77, 1, 0)
    assert header.timestamp_type == records.CREATE_TIME and not header.is_transactional
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] == \
        [(r.offset + 1, r.timestamp, r.key, r.value, r.headers) for r in RECORDS]
    # written anew or not, the stored batch's CRC holds (stock consumers check it)
    assert records.crc_ok(_stored(core, "t"))


def _stored(core, topic: str) -> bytes:
    return core.cluster.topics[topic].partitions[0].log.batches[-1].data


def test_a_recompressed_batch_on_a_log_append_time_topic_is_stamped(core):
    core.cluster.create_topic("t", 1, configs={"compression.type": "gzip",
                                               "message.timestamp.type": "LogAppendTime"})
    part = produce(core, "t", records.encode_batch(RECORDS))
    assert part.log_append_time_ms == START_MS
    header, got = fetched(core, "t")[0]
    assert header.compression == records.GZIP and header.timestamp_type == records.LOG_APPEND_TIME
    assert [r.timestamp for r in got] == [START_MS] * 3


def test_a_recompressed_batch_over_max_message_bytes_is_refused(core):
    core.cluster.create_topic("t", 1, configs={"compression.type": "uncompressed",
                                               "max.message.bytes": "300"})
    batch = records.encode_batch([(b"k", b"x" * 1000, [], START_MS)], compression=records.GZIP)
    assert len(batch) < 300
    assert produce(core, "t", batch).error_code == errors.MESSAGE_TOO_LARGE


# -- LeaveGroup ------------------------------------------------------------------------------

def test_leaving_a_group_the_coordinator_does_not_know():
    h = Harness()
    broker = h.coordinator()
    members = [LEAVE.MemberIdentity(member_id="m1", group_instance_id=None),
               LEAVE.MemberIdentity(member_id="", group_instance_id="i1")]
    for version in (3, 5):
        out = send(h.core, 13, version, LEAVE(group_id=GROUP, members=members), broker=broker)
        assert out.error_code == errors.NONE
        assert [(m.member_id, m.group_instance_id, m.error_code) for m in out.members] == [
            ("m1", None, errors.UNKNOWN_MEMBER_ID), ("", "i1", errors.UNKNOWN_MEMBER_ID)]
        empty = send(h.core, 13, version, LEAVE(group_id=GROUP, members=[]), broker=broker)
        assert (empty.error_code, empty.members) == (errors.NONE, [])
    for version in (0, 2):
        out = send(h.core, 13, version, LEAVE(group_id=GROUP, member_id="m1"), broker=broker)
        assert out.error_code == errors.UNKNOWN_MEMBER_ID


# -- OffsetCommit ----------------------------------------------------------------------------

def commit(h, topics, *, generation=-1, member="", instance=None, version=8, group=GROUP):
    body = COMMIT(group_id=group, generation_id_or_member_epoch=generation, member_id=member,
                  group_instance_id=instance, retention_time_ms=-1, topics=[
                      COMMIT.OffsetCommitRequestTopic(name=name, partitions=[
                          COMMIT.OffsetCommitRequestPartition(
                              partition_index=p, committed_offset=5, committed_leader_epoch=-1,
                              committed_metadata=md) for p, md in parts])
                      for name, parts in topics])
    out = send(h.core, 8, version, body, broker=h.coordinator(group))
    return [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in out.topics]


@pytest.fixture
def h():
    h = Harness()
    h.core.cluster.create_topic("t1", 2)
    return h


def test_offset_commit_checks_topics_before_the_group(h):
    # an unknown group with a generation: Kafka's coordinator refuses the group, but the
    # topics that do not exist are answered first, a topic named twice once
    asked = [("t1", [(0, None), (99, None)]), ("nope", [(0, None)]), ("t1", [(1, None)])]
    assert commit(h, asked, generation=5, member="m") == [
        ("t1", [(99, errors.UNKNOWN_TOPIC_OR_PARTITION), (0, errors.ILLEGAL_GENERATION),
                (1, errors.ILLEGAL_GENERATION)]),
        ("nope", [(0, errors.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert commit(h, asked[:2], generation=5, member="m", version=9) == [
        ("t1", [(99, errors.UNKNOWN_TOPIC_OR_PARTITION), (0, errors.GROUP_ID_NOT_FOUND)]),
        ("nope", [(0, errors.UNKNOWN_TOPIC_OR_PARTITION)])]
    # the group error also wins over the metadata size
    assert commit(h, [("t1", [(0, "x" * 5000)])], generation=5, member="m", version=9) == [
        ("t1", [(0, errors.GROUP_ID_NOT_FOUND)])]


def test_a_fenced_static_member_committing_to_an_unknown_topic(h):
    h.stable(1, instances=["i-a"])
    generation = h.group().generation_id
    assert commit(h, [("nope", [(0, None)])], generation=generation, member="someone-else",
                  instance="i-a") == [("nope", [(0, errors.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert commit(h, [("t1", [(0, None)])], generation=generation, member="someone-else",
                  instance="i-a") == [("t1", [(0, errors.FENCED_INSTANCE_ID)])]


def fetch_metadata(h, group=GROUP) -> dict[int, str]:
    body = OFFSET_FETCH(groups=[OFFSET_FETCH.OffsetFetchRequestGroup(
        group_id=group, member_id=None, member_epoch=-1, topics=[
            OFFSET_FETCH.OffsetFetchRequestTopics(name="t1", partition_indexes=[0, 1])])],
        require_stable=False)
    out = send(h.core, 9, 8, body, broker=h.coordinator(group))
    return {p.partition_index: p.metadata for p in out.groups[0].topics[0].partitions}


def test_commit_metadata_is_measured_in_java_chars(h):
    # 4096 two-byte chars fit (Kafka counts UTF-16 units), 2049 emoji (4098 units) do not
    assert commit(h, [("t1", [(0, "x" * 5000), (1, "é" * 4096)])]) == [
        ("t1", [(0, errors.OFFSET_METADATA_TOO_LARGE), (1, errors.NONE)])]
    assert commit(h, [("t1", [(0, "😀" * 2049), (1, "😀" * 2048)])]) == [
        ("t1", [(0, errors.OFFSET_METADATA_TOO_LARGE), (1, errors.NONE)])]


def test_commit_metadata_that_is_not_utf8_is_stored_with_replacement_chars(h):
    # the codec keeps invalid UTF-8 as surrogate escapes; Kafka's decoder replaces it
    assert commit(h, [("t1", [(0, "a\udcffb\udcc3"), (1, "ok")])]) == [
        ("t1", [(0, errors.NONE), (1, errors.NONE)])]
    assert fetch_metadata(h) == {0: "a\ufffdb\ufffd", 1: "ok"}


# -- DescribeLogDirs -------------------------------------------------------------------------

def test_log_dirs_report_the_size_and_free_space_of_a_real_disk(core):
    import shutil
    import tempfile
    out = send(core, 35, 4, wire.request_class(35)(topics=None))
    (result,) = out.results
    disk = shutil.disk_usage(tempfile.gettempdir())
    assert result.total_bytes == disk.total > 0
    assert 0 <= result.usable_bytes <= result.total_bytes


# -- group configs ---------------------------------------------------------------------------

DESCRIBE = wire.request_class(32)
INCREMENTAL = wire.request_class(44)
ALTER = wire.request_class(33)
GROUP_RESOURCE = 32
DEFAULT, GROUP_CONFIG = 5, 8
INT, STRING, BOOLEAN, LIST = 3, 2, 1, 7

#: Kafka 4.4's answer for a group it has never heard of, in its order: (name, value, type,
#: synonym)
KAFKA_GROUP_CONFIGS = [
    ("consumer.session.timeout.ms", "45000", INT, "group.consumer.session.timeout.ms"),
    ("streams.assignor.name", "sticky", STRING, "group.streams.assignors"),
    ("consumer.assignment.interval.ms", "1000", INT, "group.consumer.assignment.interval.ms"),
    ("errors.deadletterqueue.copy.record.enable", "false", BOOLEAN,
     "errors.deadletterqueue.copy.record.enable"),
    ("share.auto.offset.reset", "latest", STRING, "share.auto.offset.reset"),
    ("streams.rack.aware.assignment.tags", "", LIST, "group.streams.rack.aware.assignment.tags"),
    ("share.renew.acknowledge.enable", "true", BOOLEAN, "share.renew.acknowledge.enable"),
    ("streams.initial.rebalance.delay.ms", "3000", INT,
     "group.streams.initial.rebalance.delay.ms"),
    ("share.session.timeout.ms", "45000", INT, "group.share.session.timeout.ms"),
    ("streams.assignment.interval.ms", "1000", INT, "group.streams.assignment.interval.ms"),
    ("share.heartbeat.interval.ms", "5000", INT, "group.share.heartbeat.interval.ms"),
    ("streams.heartbeat.interval.ms", "5000", INT, "group.streams.heartbeat.interval.ms"),
    ("share.delivery.count.limit", "5", INT, "group.share.delivery.count.limit"),
    ("errors.deadletterqueue.topic.name", "", STRING, "errors.deadletterqueue.topic.name"),
    ("consumer.heartbeat.interval.ms", "5000", INT, "group.consumer.heartbeat.interval.ms"),
    ("share.record.lock.duration.ms", "30000", INT, "group.share.record.lock.duration.ms"),
    ("share.assignment.interval.ms", "1000", INT, "group.share.assignment.interval.ms"),
    ("share.isolation.level", "read_uncommitted", STRING, "share.isolation.level"),
    ("streams.session.timeout.ms", "45000", INT, "group.streams.session.timeout.ms"),
    ("share.partition.max.record.locks", "2000", INT, "group.share.partition.max.record.locks"),
    ("streams.num.standby.replicas", "0", INT, "group.streams.num.standby.replicas"),
]


def describe_group(core, name: str, keys=None):
    body = DESCRIBE(resources=[DESCRIBE.DescribeConfigsResource(
        resource_type=GROUP_RESOURCE, resource_name=name, configuration_keys=keys)],
        include_synonyms=True, include_documentation=True)
    (result,) = send(core, 32, 4, body).results
    return result


def alter_group(core, name: str, ops, *, validate_only=False):
    body = INCREMENTAL(resources=[INCREMENTAL.AlterConfigsResource(
        resource_type=GROUP_RESOURCE, resource_name=name, configs=[
            INCREMENTAL.AlterableConfig(name=n, config_operation=op, value=v)
            for n, op, v in ops])], validate_only=validate_only)
    (result,) = send(core, 44, 1, body).responses
    return result.error_code, result.error_message


def test_an_unknown_group_is_described_with_kafkas_group_configs(core):
    result = describe_group(core, "never-seen")
    assert (result.error_code, result.resource_type) == (errors.NONE, GROUP_RESOURCE)
    assert [(e.name, e.value, e.config_type, [(s.name, s.value, s.source) for s in e.synonyms])
            for e in result.configs] == [
        (name, value, kind, [(synonym, value, DEFAULT)])
        for name, value, kind, synonym in KAFKA_GROUP_CONFIGS]
    assert all(e.config_source == DEFAULT and not e.read_only and not e.is_sensitive
               and e.documentation for e in result.configs)
    empty = describe_group(core, "")
    assert (empty.error_code, empty.error_message) == (errors.INVALID_REQUEST,
                                                       "Group name must not be empty")


def test_group_configs_are_set_per_group_and_deleted(core):
    assert alter_group(core, "g1", [("consumer.session.timeout.ms", 0, "50000"),
                                    ("share.auto.offset.reset", 0, "by_duration:PT1H")]) == \
        (errors.NONE, None)
    got = describe_group(core, "g1", ["consumer.session.timeout.ms", "share.auto.offset.reset"])
    assert [(e.name, e.value, e.config_source, [(s.name, s.value, s.source) for s in e.synonyms])
            for e in got.configs] == [
        ("consumer.session.timeout.ms", "50000", GROUP_CONFIG,
         [("consumer.session.timeout.ms", "50000", GROUP_CONFIG),
          ("group.consumer.session.timeout.ms", "45000", DEFAULT)]),
        ("share.auto.offset.reset", "by_duration:PT1H", GROUP_CONFIG,
         [("share.auto.offset.reset", "by_duration:PT1H", GROUP_CONFIG),
          ("share.auto.offset.reset", "latest", DEFAULT)])]
    assert describe_group(core, "g2", ["consumer.session.timeout.ms"]).configs[0].value == \
        "45000"
    assert alter_group(core, "g1", [("consumer.session.timeout.ms", 1, None)]) == \
        (errors.NONE, None)
    values = {e.name: e.value for e in describe_group(core, "g1").configs}
    assert values["consumer.session.timeout.ms"] == "45000"
    assert values["share.auto.offset.reset"] == "by_duration:PT1H"
    assert alter_group(core, "g3", [("share.isolation.level", 0, "read_committed")],
                       validate_only=True) == (errors.NONE, None)
    assert describe_group(core, "g3", ["share.isolation.level"]).configs[0].config_source == \
        DEFAULT


@pytest.mark.parametrize("ops, message", [
    ([("consumer.session.timeout.ms", 0, "5000")],
     "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
    ([("consumer.session.timeout.ms", 0, "0")],
     "Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1"),
    ([("consumer.session.timeout.ms", 0, "abc")], "Invalid value abc for configuration "
     "consumer.session.timeout.ms: Not a number of type INT"),
    ([("consumer.heartbeat.interval.ms", 0, "60000")],
     "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."),
    ([("consumer.session.timeout.ms", 0, "5"), ("consumer.heartbeat.interval.ms", 0, "1")],
     "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."),
    ([("share.heartbeat.interval.ms", 0, "5"), ("streams.session.timeout.ms", 0, "1")],
     "share.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."),
    ([("share.record.lock.duration.ms", 0, "99999999")],
     "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."),
    ([("share.delivery.count.limit", 0, "100")],
     "share.delivery.count.limit must be in the range 2 to 10 inclusive."),
    ([("share.partition.max.record.locks", 0, "10")], "Invalid value 10 for configuration "
     "share.partition.max.record.locks: Value must be at least 100"),
    ([("consumer.assignment.interval.ms", 0, "99999999")],
     "consumer.assignment.interval.ms must be in the range 0 to 15000 inclusive."),
    ([("streams.num.standby.replicas", 0, "5")],
     "streams.num.standby.replicas must be less than or equal to 2"),
    ([("streams.assignor.name", 0, "bogus")], "streams.assignor.name 'bogus' is not a "
     "registered task assignor. Registered assignors are: [sticky]."),
    ([("share.auto.offset.reset", 0, "LATEST")], "Invalid value LATEST for configuration "
     "share.auto.offset.reset: Invalid value `LATEST` for configuration "
     "share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
     "'by_duration:<PnDTnHnMn.nS>'."),
    ([("share.isolation.level", 0, "bogus")], "Invalid value bogus for configuration "
     "share.isolation.level: String must be one of: read_committed, read_uncommitted"),
    ([("no.such.config", 0, "1")], "Unknown group config name: no.such.config"),
    ([("streams.rack.aware.assignment.tags", 2, "a")], "Can't APPEND to key "
     "streams.rack.aware.assignment.tags because its type is not LIST."),
])
def test_group_config_values_are_checked_as_kafka_checks_them(core, ops, message):
    assert alter_group(core, "g", ops) == (errors.INVALID_CONFIG, message)
    assert all(e.config_source == DEFAULT for e in describe_group(core, "g").configs)


def test_group_config_requests_kafka_refuses_outright(core):
    assert alter_group(core, "", [("share.auto.offset.reset", 0, "earliest")]) == \
        (errors.INVALID_REQUEST, "Default group resources are not allowed.")
    assert alter_group(core, "g", [("consumer.session.timeout.ms", 0, "50000"),
                                   ("consumer.session.timeout.ms", 0, "50001")]) == \
        (errors.INVALID_REQUEST, "Error due to duplicate config keys")


def test_the_legacy_alter_configs_replaces_a_groups_configs(core):
    assert alter_group(core, "g", [("share.isolation.level", 0, "read_committed")])[0] == \
        errors.NONE
    body = ALTER(resources=[ALTER.AlterConfigsResource(
        resource_type=GROUP_RESOURCE, resource_name="g", configs=[
            ALTER.AlterableConfig(name="consumer.session.timeout.ms", value="50000")])],
        validate_only=False)
    assert send(core, 33, 2, body).responses[0].error_code == errors.NONE
    overridden = [(e.name, e.value) for e in describe_group(core, "g").configs
                  if e.config_source == GROUP_CONFIG]
    assert overridden == [("consumer.session.timeout.ms", "50000")]


def test_group_configs_outlive_the_group():
    h = Harness()
    h.stable(1)
    assert alter_group(h.core, GROUP, [("consumer.heartbeat.interval.ms", 0, "6000")])[0] == \
        errors.NONE
    leave = send(h.core, 13, 5, LEAVE(group_id=GROUP, members=[
        LEAVE.MemberIdentity(member_id=m, group_instance_id=None)
        for m in list(h.group().members)]), broker=h.coordinator())
    assert leave.error_code == errors.NONE and h.state() == "Empty"
    values = {e.name: e.value for e in describe_group(h.core, GROUP).configs}
    assert values["consumer.heartbeat.interval.ms"] == "6000"
