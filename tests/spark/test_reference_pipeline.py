"""The reference pipeline (examples/spark_windowed_counts.py), on mockbroker and on Apache
Kafka (``target``): for a known input its output is exactly the counts of the windows the
watermark closed, each once, across a restart from its checkpoint."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from tests.clients.helpers import wait_for
from tests.spark.conftest import QUERY_TIMEOUT_S, In, consumed, produce

_PATH = Path(__file__).resolve().parents[2] / "examples" / "spark_windowed_counts.py"
_spec = importlib.util.spec_from_file_location("spark_windowed_counts", _PATH)
pipeline = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pipeline)


def event(user: str, action: str, minute: int, second: int) -> In:
    return In(json.dumps({"user": user, "action": action,
                          "ts": f"2024-01-01T00:{minute:02d}:{second:02d}Z"}), key=user)


def window(start_minute: int, action: str, count: int) -> tuple[str, dict]:
    return action, {"window_start": f"2024-01-01T00:{start_minute:02d}:00Z",
                    "window_end": f"2024-01-01T00:{start_minute + 1:02d}:00Z",
                    "action": action, "count": count}


def output(bootstrap: str, topic: str) -> list[tuple[str, dict]]:
    """The pipeline's output records as (key, parsed value), in offset order (``topic`` has
    one partition)."""
    return [(key, json.loads(value)) for _, _, key, value in consumed(bootstrap, topic)]


def wait_for_output(bootstrap: str, topic: str, n: int, what: str) -> None:
    wait_for(lambda: len(output(bootstrap, topic)) >= n, what, QUERY_TIMEOUT_S)


def by_window(records: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    return sorted(records, key=lambda r: (r[1]["window_start"], r[0]))


def stop_between_batches(query) -> None:
    """Stop ``query`` once its current batch is committed.  Kafka's sink writes at least once:
    a batch stopped after its records are sent but before its commit runs again on restart."""
    try:
        wait_for(lambda: not query.status["isTriggerActive"], "the batch to commit",
                 QUERY_TIMEOUT_S)
        assert query.exception() is None
    finally:
        query.stop()



#: the pipeline's input, in three rounds, and why each record counts or not
FIRST_ROUND = [
    event("alice", "click", 0, 5),
    event("bob", "click", 0, 20),
    event("alice", "view", 0, 50),
    event("carol", "click", 1, 10),
    # out of order, but within the 30 s the watermark allows: counted
    event("bob", "click", 0, 55),
    # neither is an event: dropped
    In("not json", key="mallory"),
    In(json.dumps({"user": "dave", "ts": "2024-01-01T00:00:30Z"}), key="dave"),
    # the watermark moves to 00:01:10, closing the first minute
    event("alice", "click", 1, 40),
]
SECOND_ROUND = [
    # older than the watermark now: dropped, and its window is already written
    event("erin", "click", 0, 30),
    event("bob", "view", 2, 10),
    # the watermark moves to 00:04:30, closing minutes 1 and 2; minute 5 stays open
    event("frank", "click", 5, 0),
]
#: after a restart from the checkpoint: frank's open window is still there to add to
AFTER_RESTART = [
    event("grace", "click", 5, 30),
    # the watermark moves to 00:06:30, closing minute 5
    event("heidi", "view", 7, 0),
]
#: the windows the first two rounds close
FIRST_RUN = [window(0, "click", 3), window(0, "view", 1),
             window(1, "click", 2), window(2, "view", 1)]


def assert_each_window_once(out: list[tuple[str, dict]]) -> None:
    """Every window of the three rounds exactly once, in the order the watermark closed
    them."""
    assert by_window(out[:2]) == FIRST_RUN[:2]
    assert by_window(out[2:4]) == FIRST_RUN[2:]
    assert out[4:] == [window(5, "click", 2)]

def test_reference_pipeline_counts_closed_windows_exactly(spark, target, checkpoint):
    t = target.create_topics({"events": 2, "counts": 1})
    bootstrap, events, counts = target.bootstrap_servers, t["events"], t["counts"]
    query = pipeline.start(spark, bootstrap, events, counts, checkpoint,
                           trigger="200 milliseconds")
    try:
        produce(bootstrap, events, FIRST_ROUND)
        wait_for_output(bootstrap, counts, 2, "the first minute's counts")
        assert by_window(output(bootstrap, counts)) == FIRST_RUN[:2]
        produce(bootstrap, events, SECOND_ROUND)
        wait_for_output(bootstrap, counts, 4, "minutes 1 and 2")
    finally:
        stop_between_batches(query)
    assert by_window(output(bootstrap, counts)) == FIRST_RUN

    query = pipeline.start(spark, bootstrap, events, counts, checkpoint,
                           trigger="200 milliseconds")
    try:
        produce(bootstrap, events, AFTER_RESTART)
        wait_for_output(bootstrap, counts, 5, "minute 5")
    finally:
        stop_between_batches(query)
    assert_each_window_once(output(bootstrap, counts))
