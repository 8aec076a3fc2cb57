"""The pytest plugin as a user meets it: a test file of theirs, run by pytest in a subprocess
with only the installed package (its ``pytest11`` entry point) and their own ini file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from mockbroker import MockCluster

USER_TESTS = '''
import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer
from mockbroker import AdminClient, AdminError, MockCluster
from conftest_plugin import cluster_fixture

shared = cluster_fixture(scope="module", topics={"shared": 2})


def roundtrip(bootstrap, topic, value):
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, value, key=b"key", headers=[("h", b"1")])
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "user",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        for _ in range(100):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                return message.key(), message.value(), message.headers()
    finally:
        consumer.close()
    raise AssertionError("nothing consumed")


@pytest.mark.kafka(topics={"orders": 3})
def test_marker_topics_and_roundtrip(kafka_bootstrap):
    assert roundtrip(kafka_bootstrap, "orders", b"hello") == (b"key", b"hello", [("h", b"1")])


@pytest.mark.kafka(brokers=3, topics={"orders": 6})
def test_marker_brokers_and_admin(kafka_cluster, kafka_admin):
    assert isinstance(kafka_admin, AdminClient)
    assert len(kafka_cluster.bootstrap_servers.split(",")) == 3
    assert [b.id for b in kafka_admin.brokers()] == [0, 1, 2]
    assert len(kafka_admin.topic("orders").partitions) == 6


def test_each_test_gets_a_fresh_cluster(kafka_admin):
    assert kafka_admin.topics() == []
    kafka_admin.create_topic("scratch", 1)


def test_ini_settings_apply(kafka_cluster, kafka_bootstrap):
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send("auto-created", b"x").get(timeout=10)
    producer.close()
    partitions = kafka_cluster.admin.topic("auto-created").partitions
    assert len(partitions) == 4  # num_partitions=4 from the ini file


def test_fault_over_the_admin_client(kafka_bootstrap, kafka_admin):
    kafka_admin.add_fault("Produce", error="TOPIC_AUTHORIZATION_FAILED", count=None)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    with pytest.raises(Exception) as failed:
        producer.send("locked", b"x").get(timeout=10)
    producer.close()
    assert "TopicAuthorizationFailed" in type(failed.value).__name__


def test_factory_for_extra_clusters(kafka_cluster_factory):
    one = kafka_cluster_factory(topics={"a": 1})
    two = kafka_cluster_factory(brokers=2)
    assert one.bootstrap_servers != two.bootstrap_servers
    assert [t.name for t in one.admin.topics()] == ["a"]


def test_module_scoped_cluster_one(shared):
    shared.admin.create_topic("made-by-one", 1)


def test_module_scoped_cluster_two(shared):
    assert {t.name for t in shared.admin.topics()} == {"shared", "made-by-one"}


@pytest.mark.kafka(group_min_session_timeout_ms=100, topics={"orders": 2})
def test_marker_broker_settings(kafka_bootstrap):
    # a 200 ms session is refused (INVALID_SESSION_TIMEOUT) unless the marker lowered the minimum
    consumer = KafkaConsumer("orders", bootstrap_servers=kafka_bootstrap, group_id="fast",
                             session_timeout_ms=200, heartbeat_interval_ms=50,
                             auto_offset_reset="earliest")
    consumer.partitions_for_topic("orders")  # kafka-python must know them before it joins
    try:
        for _ in range(100):
            consumer.poll(timeout_ms=200)
            if consumer.assignment():
                break
        assert sorted(tp.partition for tp in consumer.assignment()) == [0, 1]
    finally:
        consumer.close()


@pytest.mark.kafka(security_protocol="SASL_PLAINTEXT", users={"alice": "secret"},
                   sasl_mechanisms=["SCRAM-SHA-256"], authorizer=True, super_users=["alice"],
                   topics={"secure": 1})
def test_marker_security_settings(kafka_cluster, kafka_bootstrap, kafka_admin):
    assert kafka_cluster.listeners == {"SASL_PLAINTEXT": kafka_bootstrap}
    producer = Producer({"bootstrap.servers": kafka_bootstrap,
                         "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice",
                         "sasl.password": "secret"})
    delivered = []
    producer.produce("secure", b"signed", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(10) == 0 and delivered == [None]
    assert [(u.name, u.mechanisms) for u in kafka_admin.users()] == \
        [("alice", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])]
    acls = kafka_admin.acls()
    assert acls.authorizer and acls.super_users == ["User:alice"] and acls.acls == []


@pytest.mark.kafka(host="0.0.0.0", admin_token="marker-token")
def test_marker_wildcard_host_and_token(kafka_cluster, kafka_admin):
    assert kafka_cluster.admin_token == "marker-token"
    assert [b.id for b in kafka_admin.brokers()] == [0]  # the fixture's client sends it
    with pytest.raises(AdminError) as refused:
        AdminClient(kafka_cluster.admin_url).brokers()
    assert refused.value.status == 401


def test_schema_registry_url_gives_the_test_cluster_a_registry(schema_registry_url,
                                                               kafka_cluster):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    assert schema_registry_url == kafka_cluster.schema_registry_url
    client = SchemaRegistryClient({"url": schema_registry_url})
    assert client.register_schema("user-value", Schema('"string"', "AVRO")) == 1
'''

INI = '''
[pytest]
kafka_brokers = 1
kafka_settings =
    num.partitions=4
'''


def _run(tmp_path, *args: str):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    (tmp_path / "pytest.ini").write_text(textwrap.dedent(INI))
    report = tmp_path / "report.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfs", "--tb=short",
         f"--junitxml={report}", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    outcomes = {}
    for case in (ET.parse(report).iter("testcase") if report.exists() else ()):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name")] = kinds[0] if kinds else "passed"
    return result, outcomes


# Under xdist the user's module-scoped cluster is shared by the tests of one module only where
# they run on one worker: ``--dist loadscope``, as a user with such fixtures runs them.
@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadscope"]],
                         ids=["serial", "xdist"])
def test_a_user_suite_passes_with_the_installed_plugin(tmp_path, workers):
    result, outcomes = _run(tmp_path, *workers)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert set(outcomes.values()) == {"passed"} and len(outcomes) == 12, outcomes


def test_against_an_existing_cluster_admin_tests_skip_with_the_reason(tmp_path):
    with MockCluster() as existing:  # stands in for a real Kafka reached by address
        result, outcomes = _run(tmp_path, f"--kafka-bootstrap={existing.bootstrap_servers}",
                                "-k", "roundtrip or admin or fresh or factory or module")
        created = {t.name for t in existing.admin.topics()}
    assert result.returncode == 0, result.stdout[-4000:]
    assert outcomes["test_marker_topics_and_roundtrip"] == "passed"
    skipped = {name for name, kind in outcomes.items() if kind == "skipped"}
    assert skipped == {"test_marker_brokers_and_admin", "test_each_test_gets_a_fresh_cluster",
                       "test_factory_for_extra_clusters", "test_module_scoped_cluster_one",
                       "test_module_scoped_cluster_two", "test_fault_over_the_admin_client"}
    assert re.search(r"kafka_cluster needs a mockbroker cluster; this run targets the "
                     r"existing Kafka at 127\.0\.0\.1:\d+ \(--kafka-bootstrap\)", result.stdout)
    assert "kafka: existing cluster at" in result.stdout  # the report header says so
    assert "orders" in created  # the marker's topics were made on the existing cluster


def test_setting_lines_take_security_settings_as_mock_cluster_does():
    from conftest_plugin.plugin import _check, _parse_settings

    settings = _parse_settings(["users=alice:secret, bob:p:w", "listeners=PLAINTEXT,SASL_SSL",
                                "authorizer=true", "super.users=alice"], "test")
    assert settings == {"users": ["alice:secret", "bob:p:w"],
                        "listeners": "PLAINTEXT,SASL_SSL", "authorizer": True,
                        "super_users": "alice"}
    _check(settings)  # MockCluster takes them as they are


def test_bad_security_settings_are_a_usage_error(tmp_path):
    result, _ = _run(tmp_path, "--kafka-setting", "security_protocol=SASL_SSH", "--co")
    assert result.returncode == 4
    assert "security_protocol" in result.stderr and "SASL_SSH" in result.stderr


def test_bad_settings_are_a_usage_error(tmp_path):
    result, _ = _run(tmp_path, "--kafka-setting", "num_partitions=zero", "--co")
    assert result.returncode == 4
    assert "num_partitions" in result.stderr


#: modules a project that never uses Kafka must not pay for at pytest's start
HEAVY = ("aiohttp", "mockbroker.io", "mockbroker.core", "mockbroker.mock_cluster", "pyspark")


def _heavy_loaded(modules) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_importing_the_plugin_modules_imports_no_broker_aiohttp_or_pyspark():
    code = ("import json, sys\n"
            "import conftest_plugin, conftest_plugin.plugin, conftest_plugin.spark\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert _heavy_loaded(json.loads(result.stdout)) == []


NO_KAFKA_TESTS = '''
import sys

HEAVY = {heavy!r}


def test_a_project_without_kafka_does_not_load_the_broker(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("mockbroker")
    assert pytestconfig.pluginmanager.has_plugin("mockbroker_spark")
    assert sorted(m for m in sys.modules
                  if any(m == h or m.startswith(h + ".") for h in HEAVY)) == []
'''


def test_a_run_that_uses_no_kafka_fixture_never_imports_the_broker(tmp_path):
    (tmp_path / "test_plain.py").write_text(NO_KAFKA_TESTS.format(heavy=HEAVY))
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
