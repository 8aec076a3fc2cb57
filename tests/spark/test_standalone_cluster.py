"""The reference pipeline and a streaming copy on a Spark standalone cluster, against
mockbroker: a driver of its own (``spark_cluster_driver``) on a master and two workers
(``spark_standalone``), its tasks run by one executor JVM per worker, each fetching the Kafka
connector's jars from the driver.  The output is exactly what the ``local[2]`` runs of
tests/spark/test_reference_pipeline.py and tests/spark/test_streaming.py check, and the work
ran on the two executors, never on the driver."""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from tests.clients.targets import MOCK_SETTINGS, Target
from tests.spark.conftest import In, landed, produce
from tests.spark.test_reference_pipeline import (AFTER_RESTART, FIRST_ROUND, FIRST_RUN,
                                                 SECOND_ROUND, assert_each_window_once,
                                                 by_window, output, wait_for_output)


@pytest.fixture
def mock(spark_standalone, stack) -> Target:
    """A mockbroker cluster the executors reach (on loopback, unless the master is elsewhere),
    with the settings of the ``target`` fixture's."""
    cluster = stack.enter_context(MockCluster(host=spark_standalone.host, **MOCK_SETTINGS))
    return Target("mockbroker", cluster.bootstrap_servers, cluster)


@pytest.fixture
def cluster_checkpoint(spark_standalone, tmp_path) -> str:
    return spark_standalone.checkpoint(tmp_path / "checkpoint")


def tasks_on_executors(driver) -> int:
    """Tasks completed so far by the application's executors, checked to be two besides the
    driver, on a ``spark://`` master; the driver itself has run none."""
    info = driver.call("executors")
    assert info["master"].startswith("spark://"), info
    executors = {e["id"]: e for e in info["executors"]}
    assert len(executors) == 3 and executors.pop("driver")["completed_tasks"] == 0, info
    assert len({e["host_port"] for e in executors.values()}) == 2, info
    return sum(e["completed_tasks"] for e in executors.values())


def test_reference_pipeline_on_a_standalone_cluster(spark_cluster_driver, mock,
                                                    cluster_checkpoint):
    driver, before = spark_cluster_driver, tasks_on_executors(spark_cluster_driver)
    t = mock.create_topics({"events": 2, "counts": 1})
    bootstrap, events, counts = mock.bootstrap_servers, t["events"], t["counts"]
    run = {"bootstrap": bootstrap, "source": events, "sink": counts,
           "checkpoint": cluster_checkpoint}
    driver.call("start_pipeline", **run)
    try:  # test_reference_pipeline's rounds, which say why each window closes
        produce(bootstrap, events, FIRST_ROUND)
        wait_for_output(bootstrap, counts, 2, "the first minute's counts")
        assert by_window(output(bootstrap, counts)) == FIRST_RUN[:2]
        produce(bootstrap, events, SECOND_ROUND)
        wait_for_output(bootstrap, counts, 4, "minutes 1 and 2")
    finally:
        driver.call("stop_pipeline")
    assert by_window(output(bootstrap, counts)) == FIRST_RUN

    # restarted from its checkpoint, state files the executors wrote included
    driver.call("start_pipeline", **run)
    try:
        produce(bootstrap, events, AFTER_RESTART)
        wait_for_output(bootstrap, counts, 5, "minute 5")
    finally:
        driver.call("stop_pipeline")
    assert_each_window_once(output(bootstrap, counts))
    assert tasks_on_executors(driver) > before


def test_streaming_copy_on_a_standalone_cluster(spark_cluster_driver, mock,
                                                cluster_checkpoint):
    driver, before = spark_cluster_driver, tasks_on_executors(spark_cluster_driver)
    t = mock.create_topics({"in": 3, "out": 3})
    bootstrap = mock.bootstrap_servers
    records = [In(f"v{i}", key=f"k{i}", partition=i % 3,
                  headers=[("seq", str(i).encode())] if i % 2 else []) for i in range(12)]
    produce(bootstrap, t["in"], records)
    copied = driver.call("copy_to_end", bootstrap=bootstrap, checkpoint=cluster_checkpoint,
                         topics=t)
    # each input partition is one task writing in offset order to the same partition
    assert sorted(landed(mock.mock, t["out"])) == [
        (i % 3, i // 3, f"k{i}", f"v{i}", [("seq", str(i).encode())] if i % 2 else [])
        for i in sorted(range(12), key=lambda i: (i % 3, i))
    ]
    # the checkpoint committed every input partition's end
    assert copied == {"input_rows": 12, "end_offset": {t["in"]: {"0": 4, "1": 4, "2": 4}}}
    assert tasks_on_executors(driver) > before
