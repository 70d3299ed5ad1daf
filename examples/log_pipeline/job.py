"""The Spark Structured Streaming job: per-service error counts and latency percentiles.

Reads the ``logs`` topic through the ``kafkacore`` data source (the code is what one would
write for Spark's own Kafka source, with the format name changed), parses the JSON events,
and aggregates them per service and 1-minute event-time window, with a watermark that
bounds how late an event may arrive. A window is written once, when the watermark passes
its end (append mode), to two sinks:

- the kafkacore topic ``log-stats``, one JSON object per window and service, keyed by
  service, through the exactly-once ``kafkacore`` sink;
- Parquet files under ``<output>/stats`` (Spark's file sink, exactly-once through its log).

Each sink is its own streaming query with its own checkpoint::

    python -m examples.log_pipeline.job --bootstrap localhost:9092 --output /tmp/pipeline
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .topics import create_topics

__all__ = [
    "EVENT_SCHEMA_DDL",
    "STATS_COLUMNS",
    "Settings",
    "aggregate",
    "main",
    "parse_events",
    "read_logs",
    "session",
    "sink_id_for",
    "start",
    "stats_records",
]

# The fields of an agent event the job uses (the agent writes more).
EVENT_SCHEMA_DDL = (
    "timestamp TIMESTAMP, service STRING, host STRING, level STRING, method STRING, "
    "path STRING, status INT, latency_ms DOUBLE"
)
STATS_COLUMNS = (
    "window_start",
    "window_end",
    "service",
    "events",
    "errors",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
)
# Timestamps in JSON: read as ISO 8601 (a zone-less time is UTC), written as ISO 8601 in UTC
# with milliseconds, whatever the session's time zone. Written records keep null fields (a
# window without latencies), so every record has every column.
_READ_OPTIONS = {"timeZone": "UTC"}
_WRITE_OPTIONS = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
    "timeZone": "UTC",
    "ignoreNullFields": "false",
}


@dataclass(frozen=True)
class Settings:
    """Where the job reads and writes, and its windowing."""

    bootstrap: str
    output: str  # Parquet under <output>/stats, checkpoints under <output>/checkpoints
    source_topic: str = "logs"
    stats_topic: str = "log-stats"
    sink_id: str = "log-pipeline"  # the exactly-once sink's identity: see sink_id_for
    window: str = "1 minute"
    watermark: str = "15 seconds"  # how late an event may arrive and still be counted
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = None
    percentile_accuracy: int = 10000  # percentile_approx's accuracy (relative error 1/n)

    @property
    def parquet_path(self) -> str:
        return str(Path(self.output) / "stats")

    def checkpoint(self, query: str) -> str:
        return str(Path(self.output) / "checkpoints" / query)


def sink_id_for(output: str) -> str:
    """The ``kafkacore.sinkId`` of the job writing under ``output``.

    The sink skips a micro-batch whose id it has already committed under its sink id, and a
    fresh checkpoint numbers batches from 0 again: so the id is made once per checkpoint
    directory and stored beside it, and a restart on the same checkpoint keeps it.
    """
    path = Path(output) / "checkpoints" / "sink-id"
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    sink_id = f"log-pipeline-{uuid.uuid4().hex[:12]}"
    path.write_text(sink_id + "\n")
    return sink_id


def session(app_name: str = "log-pipeline", master: str = "local[2]") -> Any:
    """A local SparkSession whose Python workers run this interpreter (and so find kafkacore),
    bound to the loopback interface."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )


def read_logs(spark: Any, settings: Settings) -> Any:
    """The ``logs`` topic as a stream with Spark's Kafka schema (key, value, topic, ...)."""
    from kafkacore.spark import KafkaCoreDataSource

    spark.dataSource.register(KafkaCoreDataSource)
    reader = (
        spark.readStream.format("kafkacore")
        .option("kafka.bootstrap.servers", settings.bootstrap)
        .option("subscribe", settings.source_topic)
        .option("startingOffsets", settings.starting_offsets)
    )
    if settings.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(settings.max_offsets_per_trigger))
    return reader.load()


def parse_events(raw: Any) -> Any:
    """Kafka rows (``value`` holds an event's JSON) -> one row per event. Values that are
    not JSON objects, or lack an event time or a service, are dropped."""
    from pyspark.sql import functions as F

    event = F.from_json(F.col("value").cast("string"), EVENT_SCHEMA_DDL, _READ_OPTIONS)
    return (
        raw.select(event.alias("e"))
        .select("e.*")
        .where(F.col("timestamp").isNotNull() & F.col("service").isNotNull())
    )


def aggregate(events: Any, *, window: str, watermark: str, accuracy: int = 10000) -> Any:
    """Per service and event-time window: events, errors (level ERROR), latency p50, p95,
    p99 (``percentile_approx``) and max. With a watermark, so append mode emits each window
    once, after ``watermark`` past its end."""
    from pyspark.sql import functions as F

    percentiles = F.percentile_approx(
        "latency_ms", F.array(F.lit(0.5), F.lit(0.95), F.lit(0.99)), accuracy
    )
    return (
        events.withWatermark("timestamp", watermark)
        .groupBy(F.window("timestamp", window).alias("window"), "service")
        .agg(
            F.count(F.lit(1)).alias("events"),
            F.count(F.when(F.col("level") == "ERROR", True)).alias("errors"),
            percentiles.alias("p"),
            F.max("latency_ms").alias("max_ms"),
        )
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "service",
            "events",
            "errors",
            F.col("p")[0].alias("p50_ms"),
            F.col("p")[1].alias("p95_ms"),
            F.col("p")[2].alias("p99_ms"),
            "max_ms",
        )
    )


def stats_records(stats: Any) -> Any:
    """Aggregates as Kafka records: key = service, value = the row as JSON."""
    from pyspark.sql import functions as F

    row = F.struct(*[F.col(name) for name in STATS_COLUMNS])
    return stats.select(
        F.col("service").alias("key"), F.to_json(row, _WRITE_OPTIONS).alias("value")
    )


def start(spark: Any, settings: Settings, *, trigger: dict[str, Any] | None = None) -> list[Any]:
    """Start both queries (kafkacore topic, Parquet); the StreamingQuery objects.
    ``trigger`` is passed to ``DataStreamWriter.trigger`` (e.g. ``{"availableNow": True}``)."""
    stats = aggregate(
        parse_events(read_logs(spark, settings)),
        window=settings.window,
        watermark=settings.watermark,
        accuracy=settings.percentile_accuracy,
    )
    to_topic = (
        stats_records(stats)
        .writeStream.format("kafkacore")
        .queryName("log-stats-to-kafkacore")
        .outputMode("append")
        .option("kafka.bootstrap.servers", settings.bootstrap)
        .option("topic", settings.stats_topic)
        .option("kafkacore.sinkId", settings.sink_id)
        .option("checkpointLocation", settings.checkpoint("kafkacore"))
    )
    to_parquet = (
        stats.writeStream.format("parquet")
        .queryName("log-stats-to-parquet")
        .outputMode("append")
        .option("path", settings.parquet_path)
        .option("checkpointLocation", settings.checkpoint("parquet"))
    )
    queries = []
    for writer in (to_topic, to_parquet):
        if trigger:
            writer = writer.trigger(**trigger)
        queries.append(writer.start())
    return queries


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.log_pipeline.job",
        description="Per-service error counts and latency percentiles from the logs topic.",
    )
    parser.add_argument("--bootstrap", "--bootstrap-server", required=True, metavar="HOST:PORT")
    parser.add_argument("--output", required=True, help="Parquet and checkpoint directory")
    parser.add_argument("--source-topic", default="logs")
    parser.add_argument("--stats-topic", default="log-stats")
    parser.add_argument("--sink-id", help="kafkacore.sinkId (default: one per checkpoint)")
    parser.add_argument("--window", default="1 minute")
    parser.add_argument("--watermark", default="15 seconds")
    parser.add_argument("--max-offsets-per-trigger", type=int)
    parser.add_argument("--available-now", action="store_true", help="process what is there, stop")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    settings = Settings(
        bootstrap=args.bootstrap,
        output=args.output,
        source_topic=args.source_topic,
        stats_topic=args.stats_topic,
        sink_id=args.sink_id or sink_id_for(args.output),
        window=args.window,
        watermark=args.watermark,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
    )
    create_topics(args.bootstrap, {settings.stats_topic: 1})  # the sink does not create it
    spark = session(master=args.master)
    trigger = {"availableNow": True} if args.available_now else {"processingTime": "5 seconds"}
    queries = start(spark, settings, trigger=trigger)
    try:
        for query in queries:
            query.awaitTermination()
    except KeyboardInterrupt:
        for query in queries:
            query.stop()
        return 130
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
