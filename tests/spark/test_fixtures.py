"""The Spark part of the pytest plugin: its fixtures in this suite, and what a user's suite sees
without PySpark or without the connector's jars (pytest in a subprocess, the installed entry
points only)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest_plugin import spark as spark_plugin
from tests.spark.conftest import In, landed, produce

USER_TESTS = '''
def test_reads_kafka_through_spark(spark, spark_kafka_options):
    raise AssertionError("the spark fixture should not have been set up")
'''

NO_PYSPARK = '''
import sys

sys.modules["pyspark"] = None  # as if it were not installed: importing it raises ImportError
'''


def _run_user_suite(tmp_path, conftest: str, **env: str):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest))
    report = tmp_path / "report.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfs", "--tb=short",
         f"--junitxml={report}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, **env})
    case = next(ET.parse(report).iter("testcase"))
    outcome = [child for child in case if child.tag in ("failure", "error", "skipped")]
    return result, outcome[0] if outcome else None


def test_without_pyspark_the_spark_fixture_skips_with_the_reason(tmp_path):
    result, outcome = _run_user_suite(tmp_path, NO_PYSPARK)
    assert outcome is not None and outcome.tag == "skipped", result.stdout[-3000:]
    assert "pyspark is not installed" in outcome.get("message"), outcome.get("message")


def test_without_the_connector_jars_the_spark_fixture_fails_saying_how_to_get_them(tmp_path):
    empty = tmp_path / "no-jars"
    empty.mkdir()
    result, outcome = _run_user_suite(tmp_path, "", MOCKBROKER_SPARK_JARS=str(empty))
    assert outcome is not None and outcome.tag == "error", result.stdout[-3000:]
    text = (outcome.get("message") or "") + (outcome.text or "")
    assert "spark-sql-kafka-0-10_2.13" in text and str(empty) in text, text
    assert "MOCKBROKER_SPARK_JARS" in text, text


def test_in_a_checkout_without_the_jars_the_error_says_to_run_dev_sh(monkeypatch):
    monkeypatch.delenv("MOCKBROKER_SPARK_JARS", raising=False)
    root = Path(__file__).resolve().parents[2]  # this checkout: where ci/dev.sh puts them
    assert spark_plugin.jars_dir() == root / ".cache" / "jars" / "spark"
    with pytest.raises(spark_plugin.ConnectorJarsMissing) as missing:
        spark_plugin.connector_jars("0.0.0-none")
    assert "ci/dev.sh setup" in str(missing.value) and "MOCKBROKER_SPARK_JARS" in str(missing.value)


def test_the_jar_directory_comes_from_the_environment_first(monkeypatch, tmp_path):
    monkeypatch.setenv("MOCKBROKER_SPARK_JARS", str(tmp_path))
    assert spark_plugin.jars_dir() == tmp_path
    assert spark_plugin.jars_dir(tmp_path / "site-packages") == tmp_path


def test_installed_from_a_wheel_the_jars_live_in_the_per_user_cache(monkeypatch, tmp_path):
    # installed, the sources sit in site-packages, which is no checkout (no ci/dev.sh)
    site_packages = tmp_path / "venv" / "lib" / "site-packages"
    (site_packages / "conftest_plugin").mkdir(parents=True)
    monkeypatch.delenv("MOCKBROKER_SPARK_JARS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "xdg" / "mockbroker" / "jars" / "spark"
    assert spark_plugin.jars_dir(site_packages) == expected
    with pytest.raises(spark_plugin.ConnectorJarsMissing) as missing:
        spark_plugin.connector_jars("0.0.0-none", site_packages)
    message = str(missing.value)
    assert f"is not in {expected}:" in message and "per-user folder" in message, message
    assert "MOCKBROKER_SPARK_JARS" in message and "site-packages" not in message, message
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert spark_plugin.jars_dir(site_packages) == \
        tmp_path / "home" / ".cache" / "mockbroker" / "jars" / "spark"


def test_log_levels_name_the_root_and_single_loggers():
    assert spark_plugin._log_levels("warn") == ("WARN", {})
    assert spark_plugin._log_levels("ERROR, org.apache.kafka=debug") == \
        ("ERROR", {"org.apache.kafka": "DEBUG"})
    properties = spark_plugin._log4j2_properties("WARN", {"org.apache.kafka": "DEBUG"})
    assert "rootLogger.level = warn" in properties
    assert "logger.l0.name = org.apache.kafka" in properties
    assert "logger.l0.level = debug" in properties


def test_kafka_spark_options_name_the_bootstrap_servers():
    assert spark_plugin.kafka_spark_options("h:1,h:2") == {"kafka.bootstrap.servers": "h:1,h:2"}
    assert spark_plugin.kafka_spark_options("h:1", **{"kafka.client.id": "c"}) == \
        {"kafka.bootstrap.servers": "h:1", "kafka.client.id": "c"}


@pytest.mark.kafka(topics={"fixture": 2})
def test_spark_kafka_options_reach_the_tests_cluster(spark, spark_kafka_options, kafka_cluster):
    assert spark_kafka_options == {"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers}
    produce(kafka_cluster.bootstrap_servers, "fixture", [In("a", partition=0),
                                                         In("b", partition=1)])
    rows = (spark.read.format("kafka").options(**spark_kafka_options)
            .option("subscribe", "fixture").load()
            .selectExpr("partition", "CAST(value AS STRING)").collect())
    assert sorted(tuple(r) for r in rows) == [(0, "a"), (1, "b")]
    (spark.createDataFrame([("c",)], "value STRING").write.format("kafka")
     .options(**spark_kafka_options).option("topic", "fixture").save())
    assert sorted(r[3] for r in landed(kafka_cluster, "fixture")) == ["a", "b", "c"]


def test_python_workers_run_on_the_tests_own_interpreter(spark):
    # the test's interpreter is the virtual environment's; "python3" on the PATH is another
    # executable, and may be another version, which fails any job with Python in it
    ran_on = spark.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).collect()
    assert ran_on == [sys.executable]


def test_the_session_is_small_and_quiet(spark):
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.master") == "local[2]"
    assert conf.get("spark.sql.shuffle.partitions") == "2"
    assert conf.get("spark.ui.enabled") == "false"
    assert any(j.endswith(f"spark-sql-kafka-0-10_2.13-{spark.version}.jar")
               for j in conf.get("spark.jars").split(","))
