"""The mock's settings are a view of the broker config table: one definition per setting, so
the two cannot disagree; plus the checks ``MockCluster``, the CLI and the pytest plugin rely on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mockbroker.cli import build_parser
from mockbroker.core.config.broker import BROKER_CONFIG_KEYS, BROKER_CONFIGS
from mockbroker.core.config.describe import describe_broker
from mockbroker.core.config.values import KAFKA_DEFAULT, ConfigSource
from tests.core.harness import make_core
from mockbroker.core.settings import SETTINGS, coerce, resolve_settings

ROOT = Path(__file__).resolve().parents[2]


def test_every_setting_is_one_entry_of_the_broker_config_table():
    assert list(SETTINGS) == [k.python_name for k in BROKER_CONFIG_KEYS if k.setting]
    assert len({s.name for s in SETTINGS.values()}) == len(SETTINGS)
    for name, setting in SETTINGS.items():
        key = setting.key
        assert name == key.name.replace(".", "_")
        assert key in BROKER_CONFIG_KEYS
        # a Kafka config is described and altered as one; the mock's own settings are not
        assert (key.name in BROKER_CONFIGS) == key.setting.kafka, name
        # the mock's default is Kafka's unless the entry says otherwise
        if key.setting.default is KAFKA_DEFAULT:
            assert setting.default == key.default, name
        # every default passes the setting's own checks
        assert coerce(setting, setting.default) == setting.default, name


def test_the_mocks_own_defaults_and_rules():
    defaults = resolve_settings({})
    assert set(defaults) == set(SETTINGS)
    assert defaults["group_initial_rebalance_delay_ms"] == 0
    assert BROKER_CONFIGS["group.initial.rebalance.delay.ms"].default == 3000
    assert defaults["socket_listen_backlog_size"] == 4096
    assert BROKER_CONFIGS["socket.listen.backlog.size"].default == 50
    assert defaults["cluster_id"] == "mockbroker-cluster-0000"
    assert "cluster.id" not in BROKER_CONFIGS
    assert defaults["broker_rack"] == ""
    assert defaults["message_max_bytes"] == 1048588
    assert defaults["log_message_timestamp_type"] == "CreateTime"
    assert defaults["offsets_retention_check_interval_ms"] == 600000


@pytest.mark.parametrize("values,message", [
    ({"no_such_thing": 1}, "unknown setting 'no_such_thing'"),
    ({"num_partitions": 0}, "num_partitions: must be at least 1, got 0"),
    ({"num_partitions": "many"}, "num_partitions: expected an integer, got 'many'"),
    ({"num_partitions": True}, "num_partitions: expected an integer, got True"),
    ({"auto_create_topics_enable": "maybe"},
     "auto_create_topics_enable: expected true or false, got 'maybe'"),
    ({"delete_topic_enable": 1}, "delete_topic_enable: expected a bool, got 1"),
    ({"broker_rack": 3}, "broker_rack: expected a string, got 3"),
    ({"log_message_timestamp_type": "Now"},
     "log_message_timestamp_type: must be CreateTime or LogAppendTime, got 'Now'"),
    ({"group_initial_rebalance_delay_ms": -1},
     "group_initial_rebalance_delay_ms: must be at least 0, got -1"),
    ({"default_replication_factor": 0}, "default_replication_factor: must be at least 1, got 0"),
    ({"message_max_bytes": -1}, "message_max_bytes: must be at least 0, got -1"),
    ({"group_min_session_timeout_ms": 9, "group_max_session_timeout_ms": 5},
     "group_min_session_timeout_ms is larger than group_max_session_timeout_ms"),
])
def test_a_bad_setting_is_a_value_error_naming_it(values, message):
    with pytest.raises(ValueError) as info:
        resolve_settings(values)
    assert str(info.value) == message


def test_settings_take_dotted_dashed_and_text_values():
    resolved = resolve_settings({"num.partitions": "4", "auto-create-topics-enable": "no",
                                 "log_message_timestamp_type": "LogAppendTime"})
    assert resolved["num_partitions"] == 4
    assert resolved["auto_create_topics_enable"] is False
    assert resolved["log_message_timestamp_type"] == "LogAppendTime"


def test_every_cli_flag_of_the_kafka_group_is_a_setting_and_so_a_broker_config():
    serve = build_parser()._subparsers._group_actions[0].choices["serve"]
    group = next(g for g in serve._action_groups if g.title.startswith("Kafka broker settings"))
    flags = {a.option_strings[0]: a.dest for a in group._group_actions}
    assert len(flags) == len(SETTINGS)
    for flag, dest in flags.items():
        name = flag[2:].replace("-", ".")
        assert dest == name.replace(".", "_")
        assert SETTINGS[dest].name == name
        assert name in BROKER_CONFIGS or not SETTINGS[dest].key.setting.kafka


def test_a_setting_that_differs_from_kafka_is_a_static_broker_config():
    core = make_core(offsets_retention_check_interval_ms=1000, cluster_id="abc")
    entries = {e.name: e for e in describe_broker(core.cluster, "0", 0)}
    checked = entries["offsets.retention.check.interval.ms"]
    assert (checked.value, checked.source) == ("1000", ConfigSource.STATIC_BROKER_CONFIG)
    delay = entries["group.initial.rebalance.delay.ms"]  # the mock's own default: 0
    assert (delay.value, delay.source) == ("0", ConfigSource.STATIC_BROKER_CONFIG)
    assert entries["num.partitions"].source == ConfigSource.DEFAULT_CONFIG
    assert "cluster.id" not in entries  # not a broker config in Kafka
    assert core.cluster.cluster_id == "abc"


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level) for every import in ``path``."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.module, id(node) in top))
        elif isinstance(node, ast.Import):
            out += [(alias.name, id(node) in top) for alias in node.names]
    return out


def test_the_config_package_never_imports_the_cluster_and_the_cluster_imports_it_at_the_top():
    for path in (ROOT / "mockbroker" / "core" / "config").glob("*.py"):
        assert all(not m.startswith("mockbroker.core.cluster") for m, _ in _imports(path)), path
    cluster = _imports(ROOT / "mockbroker" / "core" / "cluster.py")
    assert all(top for m, top in cluster if m.startswith("mockbroker"))
    assert any(m.startswith("mockbroker.core.config") for m, _ in cluster)
