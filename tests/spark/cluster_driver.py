"""A Spark driver on a standalone cluster, run by :class:`tests.spark.standalone.ClusterDriver`
as ``python -m tests.spark.cluster_driver --master spark://HOST:PORT ...``.

It starts a SparkSession on the master with the plugin's settings and Kafka connector
(:func:`conftest_plugin.spark.spark_session`; ``spark.jars`` names local files, which the driver
serves to the executors), waits until the executors and their block managers have registered,
answers ``{"result": ...}`` with what :meth:`Driver.executors` says, then runs jobs, the
methods of :class:`Driver`: one JSON object per line on stdin, ``{"job": NAME, ...arguments}``,
each answered by one line on stdout, ``{"result": ...}`` or ``{"error": TRACEBACK}``.  Job
``exit`` stops the session and the process.  Anything else written to stdout (by Spark, by the
JVM) goes to stderr, the driver's log.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

from conftest_plugin.spark import spark_session
from tests.spark import test_reference_pipeline, test_streaming
from tests.spark.conftest import run_to_end


class Driver:
    """The jobs, each run with the arguments of its request; the same queries and steps as
    the ``local[2]`` tests run."""

    def __init__(self, spark):
        self.spark = spark
        self.query = None  # the reference pipeline, while it runs

    def executors(self) -> dict:
        """The master URL and every executor the application has (the driver's entry, id
        ``driver``, among them): id, host:port, and tasks completed there so far."""
        sc = self.spark.sparkContext
        # the application's status store, which Spark keeps whether its UI runs or not
        listed = sc._jsc.sc().statusStore().executorList(True)
        entries = [listed.apply(i) for i in range(listed.size())]
        return {"master": sc.master, "app_id": sc.applicationId,
                "executors": sorted(({"id": e.id(), "host_port": e.hostPort(),
                                      "completed_tasks": e.completedTasks()}
                                     for e in entries), key=lambda e: e["id"])}

    def start_pipeline(self, bootstrap: str, source: str, sink: str, checkpoint: str) -> str:
        """Start the reference pipeline (as tests/spark/test_reference_pipeline.py does)."""
        self.query = test_reference_pipeline.pipeline.start(
            self.spark, bootstrap, source, sink, checkpoint, trigger="200 milliseconds")
        return self.query.id

    def stop_pipeline(self) -> None:
        """Stop the pipeline once its current batch is committed."""
        query, self.query = self.query, None
        test_reference_pipeline.stop_between_batches(query)

    def copy_to_end(self, bootstrap: str, checkpoint: str, topics: dict[str, str]) -> dict:
        """Run the copy query of tests/spark/test_streaming.py to the end: the input rows it
        read and the source offsets its checkpoint committed, per topic and partition."""
        query = run_to_end(test_streaming.copy_query(self.spark, bootstrap, checkpoint, topics))
        assert query.exception() is None
        return {"input_rows": sum(p["numInputRows"] for p in query.recentProgress),
                "end_offset": json.loads(query.lastProgress["sources"][0]["endOffset"])}


def wait_for_executors(driver: Driver, count: int, timeout: float) -> None:
    """Wait until the status store lists ``count`` executors besides the driver, each with its
    block manager's port: an executor is listed by its host alone when it registers and gets
    its ``host:port`` only once its block manager has registered too."""
    deadline = time.monotonic() + timeout
    while True:
        listed = [e for e in driver.executors()["executors"] if e["id"] != "driver"]
        if len(listed) >= count and all(":" in e["host_port"] for e in listed):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {count} executors ready in {timeout} s: {listed}")
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", required=True, help="spark://HOST:PORT")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address the executors reach the driver at")
    parser.add_argument("--work", required=True, help="the session's work directory")
    parser.add_argument("--executors", type=int, default=2, help="executors of one core")
    parser.add_argument("--memory", default="512m", help="of the driver and each executor")
    parser.add_argument("--java-options", default="", help="of the driver and each executor")
    args = parser.parse_args(argv)

    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def reply(**answer) -> None:
        replies.write(json.dumps(answer) + "\n")

    os.environ["SPARK_LOCAL_IP"] = args.host
    spark = spark_session(f"mockbroker-standalone-{os.getpid()}", args.work, **{
        "spark.master": args.master,
        "spark.driver.host": args.host,
        "spark.driver.bindAddress": args.host,
        "spark.driver.memory": args.memory,
        "spark.executor.memory": args.memory,
        "spark.driver.defaultJavaOptions": args.java_options,
        "spark.executor.defaultJavaOptions": args.java_options,
        "spark.executor.cores": "1",
        "spark.cores.max": str(args.executors),
    })
    driver = Driver(spark)
    try:
        wait_for_executors(driver, args.executors, 120)
        reply(result=driver.executors())
        for line in sys.stdin:
            request = json.loads(line)
            job = request.pop("job")
            if job == "exit":
                break
            try:
                reply(result=getattr(driver, job)(**request))
            except Exception:
                reply(error=traceback.format_exc())
    except Exception:
        reply(error=traceback.format_exc())
    finally:
        for query in spark.streams.active:
            query.stop()
        spark.stop()
        reply(result=None)


if __name__ == "__main__":
    main()
