"""Spark's own Kafka connector (``spark-sql-kafka-0-10``, format ``kafka``, jars fetched by
``scripts/spark-jars.sh``) against a kafkacore broker, unchanged: batch write and read
back (every column, headers with ``includeHeaders``, explicit partitions, null keys,
offset ranges), a streaming read with ``trigger(availableNow=True)`` into a Parquet sink
resumed from its checkpoint, and a streaming write from a file source.

The ``spark`` and ``broker`` fixtures (tests/spark/conftest.py) are the shared session,
with the connector's jars on its classpath, and the shared kafkacore broker; every topic
here is this module's own (``connector-*``)."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from support.brokers import Broker

# spark_jars fails the tests with the reason when the connector's jars could not be fetched.
pytestmark = [pytest.mark.timeout(600), pytest.mark.usefixtures("spark_jars")]

PARTITIONS = 3


def create_topic(broker: Broker, topic: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, 1)])
    futures[topic].result(30)


def source(spark: Any, broker: Broker, **options: str) -> Any:
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def rows(n: int, start: int = 0) -> list[tuple[Any, ...]]:
    """key (None for every 7th row), value, explicit partition, headers (a null value and
    an empty list among them)."""
    out = []
    for i in range(start, start + n):
        key = None if i % 7 == 0 else f"key-{i % 11}".encode()
        headers = [] if i % 5 == 0 else [("h", f"{i}".encode()), ("n", None)]
        out.append((key, f"value-{i}".encode(), i % PARTITIONS, headers))
    return out


ROW_SCHEMA = (
    "key binary, value binary, partition int, headers array<struct<key:string,value:binary>>"
)


def as_tuple(r: Any) -> tuple[Any, ...]:
    headers = tuple((h["key"], h["value"]) for h in r["headers"] or ())
    return (r["key"], r["value"], r["partition"], headers)


def test_batch_write_then_read_every_column(spark: Any, broker: Broker) -> None:
    topic = "connector-batch"
    create_topic(broker, topic)
    data = rows(300)
    # Spark hands timestamps to Python as naive local datetimes, like datetime.now().
    before = dt.datetime.now() - dt.timedelta(seconds=1)
    df = spark.createDataFrame(data, ROW_SCHEMA).repartition(2)
    df.write.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap).option(
        "topic", topic
    ).save()
    after = dt.datetime.now() + dt.timedelta(seconds=1)

    read = source(spark, broker, subscribe=topic, includeHeaders="true")
    assert read.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "headers",
    ]
    got = read.collect()
    # Every row once, in the partition it was written to, with its key and headers.
    expected = Counter((k, v, p, tuple(h)) for k, v, p, h in data)
    assert Counter(as_tuple(r) for r in got) == expected
    assert {r["topic"] for r in got} == {topic}
    assert {r["timestampType"] for r in got} == {0}
    # A record without headers has a null headers column (not an empty array).
    assert {r["value"] for r in got if r["headers"] is None} == {v for _, v, _, h in data if not h}
    by_partition: dict[int, list[int]] = {}
    for r in got:
        by_partition.setdefault(r["partition"], []).append(r["offset"])
        assert before <= r["timestamp"] <= after, (r["timestamp"], before, after)
    # Dense offsets from 0 in each partition (no control batches in a non-transactional
    # write; the idempotent producer writes plain batches).
    assert {p: sorted(o) for p, o in by_partition.items()} == {
        p: list(range(100)) for p in range(PARTITIONS)
    }

    # Without includeHeaders: no headers column, same rows.
    plain = source(spark, broker, subscribe=topic)
    assert "headers" not in plain.columns
    assert plain.selectExpr("sum(length(value))").first()[0] == sum(len(d[1]) for d in data)

    # The same data through CAST, as existing Spark Kafka code reads it.
    values = {
        r[0] for r in plain.selectExpr("CAST(value AS STRING)").where("partition = 1").collect()
    }
    assert values == {f"value-{i}" for i in range(300) if i % PARTITIONS == 1}


def test_batch_read_offset_ranges_and_assign(spark: Any, broker: Broker) -> None:
    topic = "connector-ranges"
    create_topic(broker, topic)
    data = rows(60)
    spark.createDataFrame(data, ROW_SCHEMA).coalesce(1).write.format("kafka").option(
        "kafka.bootstrap.servers", broker.bootstrap
    ).option("topic", topic).save()

    # Each partition holds 20 records, offsets 0..19, in the order they were written.
    part = source(
        spark,
        broker,
        assign=json.dumps({topic: [0, 2]}),
        startingOffsets=json.dumps({topic: {"0": 5, "2": -2}}),
        endingOffsets=json.dumps({topic: {"0": 15, "2": -1}}),
    )
    got = sorted((r["partition"], r["offset"], r["value"]) for r in part.collect())
    expected_p0 = [(0, o, f"value-{3 * o}".encode()) for o in range(5, 15)]
    expected_p2 = [(2, o, f"value-{3 * o + 2}".encode()) for o in range(20)]
    assert got == expected_p0 + expected_p2

    # subscribePattern and minPartitions: KafkaOffsetRangeCalculator splits each range of
    # 20 records into round(20 / 60 * 7) = 2 Spark partitions.
    pattern = source(spark, broker, subscribePattern="connector-rang.*", minPartitions="7")
    assert pattern.rdd.getNumPartitions() == 6
    assert pattern.count() == 60


def test_streaming_read_available_now_resumes_from_checkpoint(
    spark: Any, broker: Broker, tmp_path: Path
) -> None:
    topic = "connector-stream-read"
    create_topic(broker, topic)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def write(n: int, start: int) -> None:
        spark.createDataFrame(rows(n, start), ROW_SCHEMA).write.format("kafka").option(
            "kafka.bootstrap.servers", broker.bootstrap
        ).option("topic", topic).save()

    def run_once() -> None:
        stream = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "40")
            .option("includeHeaders", "true")
            .load()
        )
        query = (
            stream.selectExpr("CAST(value AS STRING) AS v", "partition", "offset", "headers")
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        assert query.exception() is None
        assert not query.isActive

    write(90, 0)
    run_once()
    first = spark.read.parquet(str(out)).collect()
    assert sorted(r["v"] for r in first) == sorted(f"value-{i}" for i in range(90))

    # More records, then the same query again: only the new ones, each once.
    write(45, 90)
    run_once()
    got = spark.read.parquet(str(out)).collect()
    assert Counter(r["v"] for r in got) == Counter(f"value-{i}" for i in range(135))
    assert Counter((r["partition"], r["offset"]) for r in got) == Counter(
        (p, o) for p in range(PARTITIONS) for o in range(45)
    )
    headers = {r["v"]: r["headers"] and [(h["key"], h["value"]) for h in r["headers"]] for r in got}
    assert headers["value-5"] is None  # no header at all: null, not an empty array
    assert headers["value-6"] == [("h", b"6"), ("n", None)]


def test_streaming_write_from_file_source(spark: Any, broker: Broker, tmp_path: Path) -> None:
    topic = "connector-stream-write"
    create_topic(broker, topic)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for f in range(3):
        lines = [json.dumps({"id": f * 100 + i, "svc": f"svc-{i % 4}"}) for i in range(50)]
        (inbox / f"part-{f}.json").write_text("\n".join(lines) + "\n")

    stream = spark.readStream.schema("id long, svc string").json(str(inbox))
    query = (
        stream.selectExpr(
            "CAST(svc AS BINARY) AS key",
            "to_json(struct(*)) AS value",
            "array(named_struct('key', 'src', 'value', CAST('file' AS BINARY))) AS headers",
        )
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None

    got = source(spark, broker, subscribe=topic, includeHeaders="true").collect()
    ids = Counter(json.loads(r["value"])["id"] for r in got)
    assert ids == Counter(f * 100 + i for f in range(3) for i in range(50))
    assert all(r["key"] == json.loads(r["value"])["svc"].encode() for r in got)
    assert {tuple((h["key"], h["value"]) for h in r["headers"]) for r in got} == {
        (("src", b"file"),)
    }
    # Keyed records: one key always lands in one partition (the producer's murmur2).
    partitions_of_key: dict[bytes, set[int]] = {}
    for r in got:
        partitions_of_key.setdefault(r["key"], set()).add(r["partition"])
    assert all(len(ps) == 1 for ps in partitions_of_key.values())


@pytest.mark.parametrize("include_headers", ["true", "false"])
def test_kafkacore_source_reads_what_sparks_connector_reads(
    spark: Any, broker: Broker, include_headers: str
) -> None:
    """The same topic through Spark's connector (format ``kafka``) and through the
    ``kafkacore`` source: same schema, same rows, every column (null headers included)."""
    topic = f"connector-differential-{include_headers}"
    create_topic(broker, topic)
    spark.createDataFrame(rows(500), ROW_SCHEMA).write.format("kafka").option(
        "kafka.bootstrap.servers", broker.bootstrap
    ).option("topic", topic).save()
    options = {"subscribe": topic, "includeHeaders": include_headers}
    theirs = source(spark, broker, **options)
    reader = spark.read.format("kafkacore").option("kafka.bootstrap.servers", broker.bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    ours = reader.load()
    assert ours.schema == theirs.schema
    expected = sorted(theirs.collect(), key=lambda r: (r["partition"], r["offset"]))
    got = sorted(ours.collect(), key=lambda r: (r["partition"], r["offset"]))
    assert len(expected) == 500
    assert got == expected
