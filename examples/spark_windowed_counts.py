"""A reference Structured Streaming job: JSON events from one Kafka topic, counted per action
in event-time windows, written as JSON to another topic.

Input, one JSON object per record (anything else is dropped)::

    {"user": "alice", "action": "click", "ts": "2024-01-01T00:00:05Z"}

Output, one record per closed window and action, keyed by the action::

    key   = "click"
    value = {"window_start": "2024-01-01T00:00:00Z", "window_end": "2024-01-01T00:01:00Z",
             "action": "click", "count": 3}

A window is written once, when the watermark (the latest event time seen, minus the allowed
lateness) passes its end; events older than the watermark are dropped.  The checkpoint keeps the
source offsets and the open windows, so a restarted query resumes where it stopped.

Run it against any Kafka (the Spark session comes with the Kafka connector from the mockbroker
checkout's jar cache)::

    python examples/spark_windowed_counts.py --bootstrap 127.0.0.1:9092 \\
        --source events --sink counts --checkpoint /tmp/counts-checkpoint
"""

from __future__ import annotations

import argparse

#: what an input record holds; a field that is absent or of the wrong type is null
EVENT_SCHEMA = "user STRING, action STRING, ts TIMESTAMP"
#: timestamps are read and written as ISO 8601 in UTC, whatever the session's time zone
JSON_OPTIONS = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ssXXX", "timeZone": "UTC"}


def windowed_counts(records, window: str = "1 minute", lateness: str = "30 seconds"):
    """Kafka records (a ``value`` column) → (key, value) rows of per-window action counts."""
    from pyspark.sql import functions as F

    events = (records
              .select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA, JSON_OPTIONS)
                      .alias("event"))
              .select("event.*")
              .where(F.col("action").isNotNull() & F.col("ts").isNotNull()))
    counts = (events
              .withWatermark("ts", lateness)
              .groupBy(F.window("ts", window).alias("window"), "action")
              .count())
    return counts.select(
        F.col("action").alias("key"),
        F.to_json(F.struct(F.col("window.start").alias("window_start"),
                           F.col("window.end").alias("window_end"),
                           "action", "count"), JSON_OPTIONS).alias("value"))


def start(spark, bootstrap: str, source: str, sink: str, checkpoint: str, *,
          window: str = "1 minute", lateness: str = "30 seconds",
          trigger: str = "1 second", starting_offsets: str = "earliest",
          source_options: dict[str, str] | None = None):
    """Start the job; returns the running ``StreamingQuery``.  ``source_options`` go to the
    Kafka source as they are (``{"kafka.isolation.level": "read_committed"}`` counts only the
    records of committed transactions)."""
    reader = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", source)
              .option("startingOffsets", starting_offsets))
    for name, value in (source_options or {}).items():
        reader = reader.option(name, value)
    records = reader.load()
    return (windowed_counts(records, window, lateness)
            .writeStream.format("kafka")
            .outputMode("append")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime=trigger)
            .queryName(f"windowed-counts-{source}-to-{sink}")
            .start())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", required=True, help="Kafka bootstrap servers")
    parser.add_argument("--source", default="events", help="input topic")
    parser.add_argument("--sink", default="counts", help="output topic")
    parser.add_argument("--checkpoint", required=True, help="checkpoint directory")
    parser.add_argument("--window", default="1 minute")
    parser.add_argument("--lateness", default="30 seconds", help="watermark delay")
    parser.add_argument("--read-committed", action="store_true",
                        help="read only the records of committed transactions")
    args = parser.parse_args(argv)

    from conftest_plugin.spark import spark_session

    spark = spark_session("windowed-counts")
    query = start(spark, args.bootstrap, args.source, args.sink, args.checkpoint,
                  window=args.window, lateness=args.lateness,
                  source_options={"kafka.isolation.level": "read_committed"}
                  if args.read_committed else None)
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
