"""Spark Structured Streaming against mockbroker: the ``spark`` fixture and Kafka options.

Registered as a second ``pytest11`` entry point, so installing mockbroker is enough.  PySpark is
imported only inside the fixtures: a project without it never pays for (or breaks on) this
module.

Fixtures:

* ``spark``: one local ``SparkSession`` per test session (per xdist worker), with Spark's Kafka
  connector on its classpath: ``local[2]``, two shuffle partitions, no UI, quiet logs, UTC.  It
  outlives the per-test clusters; every query names its own cluster's bootstrap servers.
* ``spark_kafka_options``: the Kafka options for the test's cluster (``kafka_bootstrap``), to
  splat into ``.options(**...)`` of a Kafka source or sink.

Outside fixtures, :func:`kafka_spark_options` gives the same options for any bootstrap string,
and :func:`spark_session` builds the same session (benchmarks, scripts).

The connector's jars (``spark-sql-kafka-0-10`` at PySpark's version, with the jars it needs
beyond PySpark's own) are read from ``$MOCKBROKER_SPARK_JARS``; else, in a mockbroker source
checkout, from its ``.cache/jars/spark/`` (``bash ci/dev.sh setup`` fetches them there); else,
installed from a wheel, from the per-user cache ``$XDG_CACHE_HOME/mockbroker/jars/spark/``
(``~/.cache/mockbroker/jars/spark/`` without XDG_CACHE_HOME).  Nothing is downloaded when a
session starts.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

JARS_ENV = "MOCKBROKER_SPARK_JARS"
LOG_LEVEL_ENV = "MOCKBROKER_SPARK_LOG_LEVEL"
#: where this package's sources are: a checkout's root, or site-packages once installed
_SOURCE_ROOT = Path(__file__).resolve().parents[1]
CONNECTOR = "spark-sql-kafka-0-10_2.13"

#: Settings of the session the fixture starts; small and quiet, for tests.
SESSION_CONF: dict[str, str] = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    # streaming turns adaptive execution off anyway (with a warning per query)
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    # Producers are cached per set of Kafka options; a test's cluster is gone when it ends, so
    # its producer need not linger (and retry a closed port) for Spark's default ten minutes.
    "spark.kafka.producer.cache.timeout": "30s",
    "spark.kafka.producer.cache.evictorThreadRunInterval": "10s",
}


class SparkUnavailable(Exception):
    """PySpark or Java is not installed; the message says which (the fixture skips)."""


class ConnectorJarsMissing(Exception):
    """PySpark is there but its Kafka connector's jars are not (the fixture fails: a set-up
    step was missed)."""


def kafka_spark_options(bootstrap: str, **options: str) -> dict[str, str]:
    """The options a Kafka source or sink needs to reach ``bootstrap`` (plus ``options``)::

        spark.readStream.format("kafka").options(**kafka_spark_options(bootstrap))
    """
    return {"kafka.bootstrap.servers": bootstrap, **options}


def find_java() -> str | None:
    """The ``java`` Spark will launch: ``$JAVA_HOME/bin/java``, else the one on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("java")


def checkout_root(source_root: Path | None = None) -> Path | None:
    """The mockbroker source checkout this module runs from (the one ``ci/dev.sh`` sets up),
    or None when it is installed (from a wheel, into site-packages)."""
    root = _SOURCE_ROOT if source_root is None else source_root
    return root if (root / "ci" / "dev.sh").is_file() else None


def user_cache_dir() -> Path:
    """mockbroker's per-user cache: ``$XDG_CACHE_HOME/mockbroker``, else
    ``~/.cache/mockbroker``."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not Path(base).is_absolute():  # the XDG spec ignores a relative path
        base = str(Path.home() / ".cache")
    return Path(base) / "mockbroker"


def jars_dir(source_root: Path | None = None) -> Path:
    """Where the connector's jars are: ``$MOCKBROKER_SPARK_JARS``, else a checkout's
    ``.cache/jars/spark``, else (installed) ``jars/spark`` in :func:`user_cache_dir`."""
    configured = os.environ.get(JARS_ENV)
    if configured:
        return Path(configured)
    checkout = checkout_root(source_root)
    if checkout is not None:
        return checkout / ".cache" / "jars" / "spark"
    return user_cache_dir() / "jars" / "spark"


def connector_jars(spark_version: str, source_root: Path | None = None) -> list[str]:
    """Every jar in :func:`jars_dir`, checked to hold the connector for ``spark_version``."""
    directory = jars_dir(source_root)
    jars = sorted(str(p) for p in directory.glob("*.jar")) if directory.is_dir() else []
    wanted = f"{CONNECTOR}-{spark_version}.jar"
    if not any(Path(j).name == wanted for j in jars):
        artifact = f"org.apache.spark:{CONNECTOR}:{spark_version}"
        if os.environ.get(JARS_ENV):
            how = f"put {artifact} and its runtime dependencies there ({JARS_ENV} names it)"
        elif checkout_root(source_root) is not None:
            how = (f"run `bash ci/dev.sh setup` in this checkout to fetch them, or point "
                   f"{JARS_ENV} at a directory holding {artifact} and its runtime "
                   f"dependencies")
        else:
            how = (f"put {artifact} and its runtime dependencies (those PySpark lacks) in that "
                   f"per-user folder, or point {JARS_ENV} at a directory holding them "
                   f"(`bash ci/dev.sh setup` fetches them in a mockbroker checkout)")
        raise ConnectorJarsMissing(f"Spark's Kafka connector {wanted} is not in {directory}: "
                                   f"{how}")
    return jars


def check_spark() -> str:
    """PySpark's version, once PySpark and Java are both found (else :class:`SparkUnavailable`
    saying which is missing)."""
    try:
        import pyspark
    except ImportError:
        raise SparkUnavailable("pyspark is not installed (pip install pyspark)") from None
    if find_java() is None:
        raise SparkUnavailable("Spark needs Java 17 or newer: set JAVA_HOME or put java on PATH")
    return pyspark.__version__


def spark_session(app_name: str = "mockbroker", work_dir: str | None = None,
                  **conf: str):
    """A local SparkSession with the Kafka connector and :data:`SESSION_CONF` (``conf``
    overrides it, with dots as underscores or as given: ``spark_sql_shuffle_partitions="4"``).

    ``work_dir`` holds the session's warehouse and log configuration (a new temporary
    directory if None).  Logs go to stderr at ``$MOCKBROKER_SPARK_LOG_LEVEL`` (default ERROR;
    ``"WARN,org.apache.kafka=DEBUG"`` also sets named loggers).
    """
    version = check_spark()
    jars = connector_jars(version)
    from pyspark.sql import SparkSession

    work = Path(work_dir or tempfile.mkdtemp(prefix="mockbroker-spark-"))
    work.mkdir(parents=True, exist_ok=True)
    level, loggers = _log_levels(os.environ.get(LOG_LEVEL_ENV, "ERROR"))
    log_config = work / "log4j2.properties"
    log_config.write_text(_log4j2_properties(level, loggers))
    settings = {
        **SESSION_CONF,
        "spark.app.name": app_name,
        "spark.jars": ",".join(jars),
        "spark.sql.warehouse.dir": str(work / "warehouse"),
        "spark.pyspark.python": sys.executable,
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log_config.as_uri()}",
    }
    settings.update({k if "." in k else k.replace("_", "."): v for k, v in conf.items()})
    # Spark binds to the host name's address, and warns when that is a loopback one; the
    # session is local and so are the clusters, so it binds to loopback from the start.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # PySpark starts its Python workers (a Python UDF, a foreachBatch, an RDD's map) with
    # $PYSPARK_PYTHON, else whatever "python3" is on the PATH, whatever spark.pyspark.python
    # says; a worker of another minor version than the test's interpreter fails the job.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(level)
    return session


def _log_levels(text: str) -> tuple[str, dict[str, str]]:
    """``"WARN"`` or ``"ERROR,org.apache.kafka=DEBUG,..."``: the root level, then levels of
    named loggers."""
    root, loggers = "ERROR", {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.rpartition("=")
        if sep:
            loggers[name.strip()] = value.strip().upper()
        else:
            root = part.upper()
    return root, loggers


def _log4j2_properties(level: str, loggers: dict[str, str]) -> str:
    # Spark's own default logs INFO to the console at start-up; tests only want problems.
    lines = [
        f"rootLogger.level = {level.lower()}",
        "rootLogger.appenderRef.stderr.ref = console",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex",
    ]
    for i, (name, value) in enumerate(loggers.items()):
        lines += [f"logger.l{i}.name = {name}", f"logger.l{i}.level = {value.lower()}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local SparkSession with the Kafka connector for the whole run (per xdist worker)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    try:
        session = spark_session(f"mockbroker-tests-{worker}", str(tmp_path_factory.mktemp("spark")))
    except SparkUnavailable as exc:
        pytest.skip(str(exc))
    except ConnectorJarsMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield session
    finally:
        for query in session.streams.active:
            query.stop()
        session.stop()


@pytest.fixture
def spark_kafka_options(request: pytest.FixtureRequest) -> dict[str, str]:
    """Kafka source/sink options for the test's cluster (``kafka_bootstrap``)."""
    return kafka_spark_options(request.getfixturevalue("kafka_bootstrap"))
