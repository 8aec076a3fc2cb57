"""The config model without sockets: Kafka's defaults, validation, sources, synonyms and the
incremental operations, on a :class:`Core` built in memory."""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.config.alter import (
    AlterResource, alter, alter_broker, alter_topic, incremental_alter_broker,
    incremental_alter_topic,
)
from mockbroker.core.config.describe import describe, describe_broker, describe_topic
from mockbroker.core.config.topic import TOPIC_CONFIGS, created_topic_configs, new_topic_configs
from mockbroker.core.errors import ApiException
from mockbroker.core.config.values import ConfigSource, ConfigType, OpType, ResourceType
from mockbroker.core.dispatch import Core
from tests.core import harness
from wire import errors

SET, DELETE, APPEND, SUBTRACT = OpType.SET, OpType.DELETE, OpType.APPEND, OpType.SUBTRACT


def make_core(brokers: int = 3, **settings) -> Core:
    core = harness.make_core(brokers, **settings)
    core.cluster.create_topic("orders", 3)
    return core


def described(core, topic="orders", broker_id=0, synonyms=False) -> dict:
    return {e.name: e for e in describe_topic(core.cluster, topic, broker_id, synonyms)}


def broker_described(core, broker_id=0, name=None, synonyms=False) -> dict:
    name = str(broker_id) if name is None else name
    return {e.name: e for e in describe_broker(core.cluster, name, broker_id, synonyms)}


def refused(fn, *args, **kwargs) -> ApiException:
    with pytest.raises(ApiException) as info:
        fn(*args, **kwargs)
    return info.value


# -- defaults ------------------------------------------------------------------------------

def test_a_new_topic_reports_every_kafka_topic_config_at_its_default():
    entries = described(make_core())
    assert set(entries) == set(TOPIC_CONFIGS)
    # Kafka 4.4 lists 37: its 4.4 remote-copy lag and decompressed-size configs are not kept
    assert len(entries) == 34
    expected = {
        "cleanup.policy": ("delete", ConfigType.LIST),
        "compression.type": ("producer", ConfigType.STRING),
        "delete.retention.ms": ("86400000", ConfigType.LONG),
        "file.delete.delay.ms": ("60000", ConfigType.LONG),
        "flush.messages": ("9223372036854775807", ConfigType.LONG),
        "flush.ms": ("9223372036854775807", ConfigType.LONG),
        "index.interval.bytes": ("4096", ConfigType.INT),
        "max.compaction.lag.ms": ("9223372036854775807", ConfigType.LONG),
        "max.message.bytes": ("1048588", ConfigType.INT),
        "message.timestamp.type": ("CreateTime", ConfigType.STRING),
        "message.timestamp.before.max.ms": ("9223372036854775807", ConfigType.LONG),
        "message.timestamp.after.max.ms": ("3600000", ConfigType.LONG),
        "min.cleanable.dirty.ratio": ("0.5", ConfigType.DOUBLE),
        "min.compaction.lag.ms": ("0", ConfigType.LONG),
        "min.insync.replicas": ("1", ConfigType.INT),
        "preallocate": ("false", ConfigType.BOOLEAN),
        "retention.bytes": ("-1", ConfigType.LONG),
        "retention.ms": ("604800000", ConfigType.LONG),
        "segment.bytes": ("1073741824", ConfigType.INT),
        "segment.index.bytes": ("10485760", ConfigType.INT),
        "segment.jitter.ms": ("0", ConfigType.LONG),
        "segment.ms": ("604800000", ConfigType.LONG),
        "unclean.leader.election.enable": ("false", ConfigType.BOOLEAN),
        "compression.gzip.level": ("-1", ConfigType.INT),
        "compression.lz4.level": ("9", ConfigType.INT),
        "compression.zstd.level": ("3", ConfigType.INT),
        "leader.replication.throttled.replicas": ("", ConfigType.LIST),
        "remote.storage.enable": ("false", ConfigType.BOOLEAN),
        "local.retention.ms": ("-2", ConfigType.LONG),
        "errors.deadletterqueue.group.enable": ("false", ConfigType.BOOLEAN),
    }
    for name, (value, type_) in expected.items():
        entry = entries[name]
        # eligible leader replicas on: min.insync.replicas is set cluster-wide, as on Kafka
        source = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG if name == "min.insync.replicas" \
            else ConfigSource.DEFAULT_CONFIG
        assert (entry.value, entry.type, entry.source) == (value, type_, source), name
        assert not entry.read_only and not entry.sensitive
        assert entry.documentation is None and entry.synonyms == []


def test_kafka_4_has_no_message_downconversion_config():
    core = make_core()
    assert "message.downconversion.enable" not in described(core)
    error = refused(incremental_alter_topic, core.cluster, "orders",
                    [("message.downconversion.enable", SET, "true")], validate_only=False)
    assert error.error_code == errors.INVALID_CONFIG
    assert str(error) == "Unknown topic config name: message.downconversion.enable"


def test_synonyms_name_the_broker_config_a_default_comes_from():
    entries = described(make_core(), synonyms=True)
    assert entries["max.message.bytes"].synonyms == [
        ("message.max.bytes", "1048588", ConfigSource.DEFAULT_CONFIG)]
    assert entries["cleanup.policy"].synonyms == [
        ("log.cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG)]
    # log.retention.ms has no default of its own (log.retention.hours supplies it), and Kafka
    # lists no synonym that comes before the config's own broker name
    assert entries["retention.ms"].synonyms == []
    assert entries["retention.ms"].source == ConfigSource.DEFAULT_CONFIG
    assert entries["leader.replication.throttled.replicas"].synonyms == []


def test_documentation_only_when_asked():
    core = make_core()
    entries = describe_topic(core.cluster, "orders", 0, include_documentation=True)
    assert all(e.documentation for e in entries)


def test_static_settings_are_static_broker_config_for_topics_and_brokers():
    core = make_core(message_max_bytes=2_000_000, log_message_timestamp_type="LogAppendTime")
    entries = described(core, synonyms=True)
    assert entries["max.message.bytes"].value == "2000000"
    assert entries["max.message.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert entries["max.message.bytes"].synonyms == [
        ("message.max.bytes", "2000000", ConfigSource.STATIC_BROKER_CONFIG),
        ("message.max.bytes", "1048588", ConfigSource.DEFAULT_CONFIG)]
    assert entries["message.timestamp.type"].value == "LogAppendTime"
    broker = broker_described(core)
    assert broker["message.max.bytes"].value == "2000000"
    assert broker["message.max.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert not broker["message.max.bytes"].read_only


def test_broker_configs_identity_read_only_flags_and_the_mocks_own_defaults():
    core = make_core(brokers=3)
    broker = broker_described(core, broker_id=2)
    assert broker["broker.id"].value == "2" and broker["node.id"].value == "2"
    assert broker["broker.id"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert broker["broker.id"].read_only and broker["broker.id"].type == ConfigType.INT
    assert broker["process.roles"].value == "broker,controller"
    assert broker["listeners"].value == "PLAINTEXT://127.0.0.1:9094"
    assert broker["num.partitions"].value == "1"
    assert broker["num.partitions"].source == ConfigSource.DEFAULT_CONFIG
    assert broker["num.partitions"].read_only
    # the mock starts groups without Kafka's 3 s delay: as if server.properties said so
    assert broker["group.initial.rebalance.delay.ms"].value == "0"
    assert broker["group.initial.rebalance.delay.ms"].source == ConfigSource.STATIC_BROKER_CONFIG
    # and with a listen backlog as long as the usual somaxconn, not Kafka's 50
    assert broker["socket.listen.backlog.size"].value == "4096"
    assert broker["socket.listen.backlog.size"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert broker["socket.listen.backlog.size"].read_only
    # the default replication factor the mock uses is min(3, brokers)
    assert broker["default.replication.factor"].value == "3"
    assert broker["log.retention.hours"].value == "168"
    assert broker["log.retention.ms"].value is None
    assert broker["log.retention.ms"].source == ConfigSource.DEFAULT_CONFIG
    assert not broker["log.retention.ms"].read_only and broker["log.retention.hours"].read_only
    assert not broker["log.cleanup.policy"].read_only
    assert broker["log.cleanup.policy"].type == ConfigType.LIST
    assert broker["log.dir"].value == "/tmp/kafka-logs"


def test_describe_broker_must_name_the_broker_it_is_sent_to():
    core = make_core()
    error = refused(describe_broker, core.cluster, "1", 0)
    assert error.error_code == errors.INVALID_REQUEST
    assert "expected 0 or empty string, but received 1" in str(error)
    error = refused(describe_broker, core.cluster, "x", 0)
    assert error.error_code == errors.INVALID_REQUEST


def test_describe_unknown_and_invalid_topics():
    core = make_core()
    assert refused(describe_topic, core.cluster, "nope", 0).error_code == \
        errors.UNKNOWN_TOPIC_OR_PARTITION
    error = refused(describe_topic, core.cluster, "bad name", 0)
    assert error.error_code == errors.INVALID_TOPIC_EXCEPTION
    assert str(error).startswith("Topic name is invalid: ")


def test_describe_filters_by_configuration_keys():
    core = make_core()
    entries = describe(core.cluster, ResourceType.TOPIC, "orders", 0,
                        ["retention.ms", "no.such.config"], False, False)
    assert [e.name for e in entries] == ["retention.ms"]
    error = refused(describe, core.cluster, ResourceType.UNKNOWN, "g", 0, None, False, False)
    assert error.error_code == errors.INVALID_REQUEST


# -- validation ----------------------------------------------------------------------------

@pytest.mark.parametrize("name,value,message", [
    ("retention.ms", "abc",
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ("retention.ms", "-5",
     "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
    ("segment.bytes", "1000",
     "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"),
    ("max.message.bytes", "4294967296",
     "Invalid value 4294967296 for configuration max.message.bytes: Not a number of type INT"),
    ("min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for configuration "
     "min.cleanable.dirty.ratio: Value must be no more than 1"),
    ("cleanup.policy", "compact,forever", "Invalid value forever for configuration "
     "cleanup.policy: String must be one of: compact, delete"),
    ("compression.type", "brotli", "Invalid value brotli for configuration compression.type: "
     "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("message.timestamp.type", "createtime", "Invalid value createtime for configuration "
     "message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
    ("preallocate", "yes", "Invalid value yes for configuration preallocate: Expected value "
     "to be either true or false"),
    ("compression.gzip.level", "0", "Invalid value 0 for configuration compression.gzip.level: "
     "Value must be between 1 and 9 or equal to -1"),
    ("no.such.config", "1", "Unknown topic config name: no.such.config"),
    ("remote.storage.enable", "true", "Tiered Storage functionality is disabled in the "
     "broker. Topic cannot be configured with remote log storage."),
])
def test_bad_values_are_invalid_config_with_kafkas_message(name, value, message):
    core = make_core()
    error = refused(new_topic_configs, core.cluster, [(name, value)])
    assert error.error_code == errors.INVALID_CONFIG
    assert str(error) == message


def test_cross_config_rules_use_the_effective_values():
    core = make_core()
    error = refused(new_topic_configs, core.cluster,
                    [("min.compaction.lag.ms", "10"), ("max.compaction.lag.ms", "5")])
    assert error.error_code == errors.INVALID_CONFIG
    assert "min.compaction.lag.ms (10) > max.compaction.lag.ms (5)" in str(error)
    assert new_topic_configs(core.cluster, [("min.compaction.lag.ms", "10")]) == \
        {"min.compaction.lag.ms": "10"}


def test_values_are_normalised_as_kafka_prints_them():
    core = make_core()
    assert new_topic_configs(core.cluster, [
        ("retention.ms", " 1000 "), ("cleanup.policy", "compact , delete"),
        ("preallocate", "TRUE"), ("min.cleanable.dirty.ratio", "0.25"),
        ("message.timestamp.type", "LogAppendTime "), ("retention.bytes", "+7"),
    ]) == {"retention.ms": "1000", "cleanup.policy": "compact,delete", "preallocate": "true",
           "min.cleanable.dirty.ratio": "0.25", "message.timestamp.type": "LogAppendTime",
           "retention.bytes": "7"}


def test_null_values_are_named():
    core = make_core()
    error = refused(new_topic_configs, core.cluster,
                    [("retention.ms", None), ("segment.ms", None)])
    assert error.error_code == errors.INVALID_CONFIG
    assert str(error) == "Null value not supported for topic configs: retention.ms,segment.ms"


@pytest.mark.parametrize("value,text", [
    (0.5, "0.5"), (1.0, "1.0"), (0.001, "0.001"), (1e-4, "1.0E-4"), (12345678.0, "1.2345678E7"),
    (1234567.5, "1234567.5"), (-0.0, "-0.0"), (0.1, "0.1"), (1e21, "1.0E21"),
])
def test_doubles_print_like_java(value, text):
    assert TOPIC_CONFIGS["min.cleanable.dirty.ratio"].to_string(value) == text


# -- incremental and legacy alters --------------------------------------------------------

def test_incremental_set_delete_append_subtract():
    core = make_core()
    topic = core.cluster.topics["orders"]
    alter = incremental_alter_topic
    alter(core.cluster, "orders", [("retention.ms", SET, "1000"),
                                   ("cleanup.policy", APPEND, "compact")], validate_only=False)
    assert topic.configs == {"retention.ms": "1000", "cleanup.policy": "delete,compact"}
    alter(core.cluster, "orders", [("cleanup.policy", SUBTRACT, "delete")], validate_only=False)
    assert topic.configs["cleanup.policy"] == "compact"
    alter(core.cluster, "orders", [("cleanup.policy", APPEND, "compact,delete")],
          validate_only=False)
    assert topic.configs["cleanup.policy"] == "compact,delete"
    alter(core.cluster, "orders", [("retention.ms", DELETE, None),
                                   ("never.set", DELETE, None)], validate_only=False)
    assert topic.configs == {"cleanup.policy": "compact,delete"}
    entries = described(core, synonyms=True)
    assert entries["retention.ms"].source == ConfigSource.DEFAULT_CONFIG
    assert entries["cleanup.policy"].source == ConfigSource.TOPIC_CONFIG
    assert entries["cleanup.policy"].synonyms == [
        ("cleanup.policy", "compact,delete", ConfigSource.TOPIC_CONFIG),
        ("log.cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG)]



def test_an_operation_code_kafka_does_not_know_fails_the_resource_without_a_message():
    """Kafka 4.4's broker answers a topic whose IncrementalAlterConfigs names an unknown
    operation (7, -1) with UNKNOWN_SERVER_ERROR and no message; nothing changes."""
    core = make_core()
    cls = wire.request_class(44)
    for op in (7, -1):
        resource = cls.AlterConfigsResource(resource_type=2, resource_name="orders", configs=[
            cls.AlterableConfig(name="retention.ms", config_operation=op, value="1000")])
        answer = harness.send(core, 44, 1, cls(validate_only=False, resources=[resource]))
        assert [(r.error_code, r.error_message) for r in answer.responses] == \
            [(errors.UNKNOWN_SERVER_ERROR, None)]
    assert core.cluster.topics["orders"].configs == {}

def test_subtract_everything_leaves_an_empty_list():
    core = make_core()
    incremental_alter_topic(core.cluster, "orders", [("cleanup.policy", SUBTRACT,
                                                       "delete")], validate_only=False)
    assert described(core)["cleanup.policy"].value == ""


def test_append_to_a_config_that_is_not_a_list_is_refused():
    core = make_core()
    error = refused(incremental_alter_topic, core.cluster, "orders",
                    [("retention.ms", APPEND, "5")], validate_only=False)
    assert error.error_code == errors.INVALID_CONFIG
    assert str(error) == "Can't APPEND to key retention.ms because its type is not LIST."


def test_a_bad_change_leaves_every_config_as_it_was():
    core = make_core()
    topic = core.cluster.topics["orders"]
    incremental_alter_topic(core.cluster, "orders", [("retention.ms", SET, "1000")],
                             validate_only=False)
    refused(incremental_alter_topic, core.cluster, "orders",
            [("segment.ms", SET, "1"), ("retention.bytes", SET, "lots")], validate_only=False)
    assert topic.configs == {"retention.ms": "1000"}


def test_validate_only_checks_without_changing():
    core = make_core()
    incremental_alter_topic(core.cluster, "orders", [("retention.ms", SET, "1000")],
                             validate_only=True)
    assert core.cluster.topics["orders"].configs == {}


def test_legacy_alter_replaces_every_override():
    core = make_core()
    topic = core.cluster.topics["orders"]
    incremental_alter_topic(core.cluster, "orders", [("retention.ms", SET, "1000"),
                                                      ("segment.ms", SET, "2000")],
                             validate_only=False)
    alter_topic(core.cluster, "orders", {"max.message.bytes": "5000"},
                 validate_only=False)
    assert topic.configs == {"max.message.bytes": "5000"}


def test_alter_errors_in_the_controllers_order():
    core = make_core()
    # a bad config is reported before the topic is looked up
    assert refused(incremental_alter_topic, core.cluster, "nope",
                   [("retention.ms", SET, "x")], validate_only=False).error_code == \
        errors.INVALID_CONFIG
    error = refused(incremental_alter_topic, core.cluster, "nope",
                    [("retention.ms", SET, "1")], validate_only=False)
    assert error.error_code == errors.UNKNOWN_TOPIC_OR_PARTITION
    assert str(error) == "The topic 'nope' does not exist."
    assert refused(alter_topic, core.cluster, "", {}, validate_only=False
                   ).error_code == errors.INVALID_REQUEST


def test_resource_level_request_checks():
    core = make_core()
    topic = AlterResource(ResourceType.TOPIC, "orders", [("retention.ms", SET, "1")])
    duplicate_keys = AlterResource(ResourceType.TOPIC, "orders", [
        ("retention.ms", SET, "1"), ("retention.ms", SET, "2")])
    null_set = AlterResource(ResourceType.TOPIC, "orders", [("retention.ms", SET, None)])
    unknown_type = AlterResource(99, "x", [])
    results = alter(core.cluster, [topic, topic], 0, incremental=True,
                     validate_only=False)
    assert [code for code, _ in results] == [errors.INVALID_REQUEST] * 2
    results = alter(core.cluster, [duplicate_keys], 0, incremental=True,
                     validate_only=False)
    assert results == [(errors.INVALID_REQUEST, "Error due to duplicate config keys")]
    results = alter(core.cluster, [null_set], 0, incremental=True, validate_only=False)
    assert results == [(errors.INVALID_REQUEST, "Null value not supported for : retention.ms")]
    results = alter(core.cluster, [unknown_type], 0, incremental=True,
                     validate_only=False)
    assert results[0][0] == errors.INVALID_REQUEST
    results = alter(core.cluster, [topic], 0, incremental=True, validate_only=False)
    assert results == [(errors.NONE, None)]
    assert core.cluster.topics["orders"].configs == {"retention.ms": "1"}


# -- dynamic broker configs ----------------------------------------------------------------

def test_a_dynamic_cluster_default_reaches_topics_and_the_data_path():
    core = make_core()
    cluster = core.cluster
    incremental_alter_broker(cluster, "", 0, [("message.max.bytes", SET, "2048")],
                              validate_only=False)
    assert cluster.settings["message_max_bytes"] == 2048
    entries = described(core, broker_id=1, synonyms=True)
    assert entries["max.message.bytes"].value == "2048"
    assert entries["max.message.bytes"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert entries["max.message.bytes"].synonyms[0] == (
        "message.max.bytes", "2048", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    default = {e.name: e for e in describe_broker(cluster, "", 0)}
    assert list(default) == ["message.max.bytes", "min.insync.replicas"]
    assert default["message.max.bytes"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    incremental_alter_broker(cluster, "", 0, [("message.max.bytes", DELETE, None)],
                              validate_only=False)
    assert cluster.settings["message_max_bytes"] == 1048588
    assert described(core)["max.message.bytes"].source == ConfigSource.DEFAULT_CONFIG


def test_per_broker_values_win_over_cluster_defaults():
    core = make_core()
    cluster = core.cluster
    incremental_alter_broker(cluster, "", 0, [("log.retention.ms", SET, "1000")],
                              validate_only=False)
    incremental_alter_broker(cluster, "1", 1, [("log.retention.ms", SET, "2000")],
                              validate_only=False)
    assert described(core, broker_id=0)["retention.ms"].value == "1000"
    on_one = described(core, broker_id=1, synonyms=True)["retention.ms"]
    assert on_one.value == "2000" and on_one.source == ConfigSource.DYNAMIC_BROKER_CONFIG
    assert on_one.synonyms[:2] == [
        ("log.retention.ms", "2000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ("log.retention.ms", "1000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    assert broker_described(core, 1)["log.retention.ms"].source == \
        ConfigSource.DYNAMIC_BROKER_CONFIG


def test_topic_defaults_convert_broker_hours_and_minutes():
    core = make_core()
    cluster = core.cluster
    state = cluster.broker_configs
    state.dynamic_default["log.retention.minutes"] = "5"   # as a broker would read it from KRaft
    assert described(core)["retention.ms"].value == "300000"
    state.dynamic_default["log.retention.ms"] = "7"
    assert described(core)["retention.ms"].value == "7"


@pytest.mark.parametrize("name,ops,code,text", [
    ("0", [("broker.id", SET, "5")], errors.INVALID_REQUEST,
     "Cannot update these configs dynamically: Set(broker.id)"),
    ("0", [("log.retention.hours", SET, "5")], errors.INVALID_REQUEST,
     "Cannot update these configs dynamically: Set(log.retention.hours)"),
    ("", [("listeners", SET, "PLAINTEXT://:1")], errors.INVALID_REQUEST,
     "broker id must be specified: Set(listeners)"),
    ("0", [("message.max.bytes", SET, "big")], errors.INVALID_REQUEST,
     "Invalid value big for configuration message.max.bytes: Not a number of type INT"),
    ("1", [("message.max.bytes", SET, "5")], errors.INVALID_REQUEST,
     "Unexpected broker id, expected 0, but received 1"),
    ("0", [("message.max.bytes", APPEND, "5")], errors.INVALID_CONFIG,
     "Config value append is not allowed for config key: message.max.bytes"),
])
def test_broker_changes_kafka_refuses(name, ops, code, text):
    core = make_core()
    error = refused(incremental_alter_broker, core.cluster, name, 0, ops,
                    validate_only=False)
    assert error.error_code == code
    assert text in str(error)
    assert core.cluster.broker_configs.dynamic_default == {"min.insync.replicas": "1"}


def test_custom_broker_configs_are_kept_but_hidden():
    core = make_core()
    alter_broker(core.cluster, "0", 0, {"my.custom.thing": "secret"}, validate_only=False)
    entry = broker_described(core)["my.custom.thing"]
    assert entry.value is None and entry.sensitive and entry.type == ConfigType.UNKNOWN
    assert entry.source == ConfigSource.DYNAMIC_BROKER_CONFIG


def test_created_topic_configs_report_where_each_value_comes_from():
    core = make_core(message_max_bytes=5000)
    incremental_alter_broker(core.cluster, "", 0, [("log.segment.bytes", SET,
                                                      "2097152")], validate_only=False)
    entries = {e.name: e for e in created_topic_configs(core.cluster,
                                                         {"retention.ms": "10"})}
    assert [e for e in entries] == sorted(entries)
    assert (entries["retention.ms"].value, entries["retention.ms"].source) == \
        ("10", ConfigSource.TOPIC_CONFIG)
    assert (entries["segment.bytes"].value, entries["segment.bytes"].source) == \
        ("2097152", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert (entries["max.message.bytes"].value, entries["max.message.bytes"].source) == \
        ("5000", ConfigSource.STATIC_BROKER_CONFIG)
    assert (entries["segment.ms"].value, entries["segment.ms"].source) == \
        ("604800000", ConfigSource.DEFAULT_CONFIG)


def test_reset_forgets_dynamic_broker_configs():
    core = make_core()
    incremental_alter_broker(core.cluster, "", 0, [("message.max.bytes", SET, "100")],
                              validate_only=False)
    core.cluster.broker_configs.reset()
    assert core.cluster.settings["message_max_bytes"] == 1048588
    assert describe_broker(core.cluster, "", 0) == []


# -- topic operations the config model backs -----------------------------------------------

def test_create_topic_checks_come_in_the_controllers_order():
    cluster = make_core(brokers=3).cluster
    create = cluster.create_topic
    assert refused(create, "orders", 1, 5).error_code == errors.TOPIC_ALREADY_EXISTS
    assert refused(create, "bad/name").error_code == errors.INVALID_TOPIC_EXCEPTION
    # a bad config is reported before a bad replication factor
    assert refused(create, "t", 1, 5, configs=[("retention.ms", "x")]).error_code == \
        errors.INVALID_CONFIG
    error = refused(create, "t", 1, 5)
    assert error.error_code == errors.INVALID_REPLICATION_FACTOR
    assert "only 3 broker(s) are registered" in str(error)
    assert refused(create, "t", 0, 1).error_code == errors.INVALID_PARTITIONS
    assert refused(create, "t", 1, 0).error_code == errors.INVALID_REPLICATION_FACTOR
    cluster.create_topic("a_b", 1)
    error = refused(create, "a.b")
    assert error.error_code == errors.INVALID_TOPIC_EXCEPTION and "collides" in str(error)
    topic = create("t", -1, -1, configs=[("retention.ms", "7 ")])
    partitions, rf, overrides = len(topic.partitions), len(topic.partitions[0].replicas), \
        topic.configs
    assert (partitions, rf, overrides) == (1, 3, {"retention.ms": "7"})
    assert cluster.topics["t"].configs == {"retention.ms": "7"}


def test_manual_assignments_are_checked_like_the_controller_does():
    cluster = make_core(brokers=3).cluster
    def create(name, num_partitions, replication_factor, assignments):
        return cluster.create_topic(name, num_partitions, replication_factor,
                                    assignments=assignments)
    assert refused(create, "t", 2, -1, [(0, [0, 1])]).error_code == errors.INVALID_REQUEST
    assert refused(create, "t", -1, -1, [(0, [0, 7])]).error_code == \
        errors.INVALID_REPLICA_ASSIGNMENT
    assert refused(create, "t", -1, -1, [(0, [1, 1])]).error_code == \
        errors.INVALID_REPLICA_ASSIGNMENT
    assert refused(create, "t", -1, -1, [(0, [0, 1]), (1, [2])]).error_code == \
        errors.INVALID_REPLICA_ASSIGNMENT
    assert refused(create, "t", -1, -1, [(1, [0])]).error_code == \
        errors.INVALID_REPLICA_ASSIGNMENT
    topic = create("t", -1, -1, [(1, [2, 0]), (0, [1, 2])])
    partitions, rf = len(topic.partitions), len(topic.partitions[0].replicas)
    assert (partitions, rf) == (2, 2)
    assert [p.replicas for p in cluster.topics["t"].partitions] == [[1, 2], [2, 0]]
    assert [p.leader for p in cluster.topics["t"].partitions] == [1, 2]


def test_create_partitions_checks_and_manual_assignment():
    cluster = make_core(brokers=3).cluster
    grow = cluster.admin_create_partitions
    error = refused(grow, "orders", 3)
    assert error.error_code == errors.INVALID_PARTITIONS
    assert str(error) == "Topic already has 3 partition(s)."
    assert refused(grow, "orders", 2).error_code == errors.INVALID_PARTITIONS
    assert refused(grow, "nope", 5).error_code == errors.UNKNOWN_TOPIC_OR_PARTITION
    assert refused(grow, "orders", 5, [[0, 1, 2]]).error_code == \
        errors.INVALID_REPLICA_ASSIGNMENT
    assert refused(grow, "orders", 4, [[0, 1]]).error_code == errors.INVALID_REPLICA_ASSIGNMENT
    grow("orders", 4, [[2, 1, 0]], validate_only=True)
    assert len(cluster.topics["orders"].partitions) == 3
    grow("orders", 4, [[2, 1, 0]])
    assert cluster.topics["orders"].partitions[3].replicas == [2, 1, 0]
    assert cluster.topics["orders"].partitions[3].leader == 2


def test_one_creation_path_with_kafkas_checks_for_every_caller():
    core = make_core(brokers=3)
    cluster = core.cluster
    error = refused(cluster.create_topic, "bad name", 1)
    assert error.error_code == errors.INVALID_TOPIC_EXCEPTION
    assert str(error) == ("Topic name is invalid: 'bad name' contains one or more characters "
                          "other than ASCII alphanumerics, '.', '_' and '-'")
    error = refused(cluster.create_topic, "orders", 1)
    assert (error.error_code, str(error)) == (errors.TOPIC_ALREADY_EXISTS,
                                              "Topic 'orders' already exists.")
    # configs are checked and normalised whoever creates the topic
    assert refused(cluster.create_topic, "t", 1, configs={"retention.ms": "x"}).error_code == \
        errors.INVALID_CONFIG
    assert cluster.create_topic("t", 1, configs={"retention.ms": " 5"}).configs == \
        {"retention.ms": "5"}
    # validate_only: the topic as it would be, not added
    checked = cluster.create_topic("v", 2, 2, validate_only=True)
    assert [len(p.replicas) for p in checked.partitions] == [2, 2] and "v" not in cluster.topics
    # Metadata's auto-creation refuses what CreateTopics refuses
    cluster.create_topic("a_b", 1)
    assert cluster.lookup_or_create("a.b", True) == (None, errors.INVALID_TOPIC_EXCEPTION)
    # the group coordinator's internal topic comes through the same path
    assert core.groups.placement.topic().configs == {"cleanup.policy": "compact"}


def test_one_topic_name_check_with_kafkas_words():
    from mockbroker.core import cluster, names

    assert cluster.topic_name_error is names.topic_name_error
    check = names.topic_name_error
    assert check("orders.v1_x-2") is None
    assert check(None) == "Topic name is invalid: null"
    assert check("") == "Topic name is invalid: the empty string is not allowed"
    assert check("..") == "Topic name is invalid: '..' is not allowed"
    assert check("x" * 250) == (f"Topic name is invalid: the length of '{'x' * 250}' is longer "
                                "than the max allowed length 249")
    assert check("x" * 249) is None
