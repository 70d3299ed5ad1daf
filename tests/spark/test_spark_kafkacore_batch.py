"""Batch reads and writes through the ``kafkacore`` data source on the shared SparkSession:
a write/read round trip of every column (headers and null keys included, keys placed by
murmur2), the direct path against the broker path, offset ranges from JSON and from
timestamps, ``minPartitions``, and ``failOnDataLoss`` after DeleteRecords."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from kafkacore.client import Client
from kafkacore.partitioner import partition_for_key
from kafkacore.record import Compression, build_batch
from kafkacore.spark import kafka_schema
from support.brokers import Broker

pytestmark = pytest.mark.timeout(300)


T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z
COLUMNS = ["key", "value", "topic", "partition", "offset", "unix_millis(timestamp) AS ts"]
COLUMNS.append("timestampType")


def create_topic(
    bootstrap: str, topic: str, partitions: int, configs: dict[str, str] | None = None
) -> None:
    """No time-based retention: the records carry timestamps of 2025."""
    with Client(bootstrap) as client:
        configs = {"retention.ms": "-1", **(configs or {})}
        client.create_topic(topic, partitions, configs=configs, exist_ok=False)


def produce(
    bootstrap: str,
    topic: str,
    partition: int,
    count: int,
    *,
    first: int = 0,
    per_batch: int = 10,
    compression: Compression = Compression.NONE,
) -> None:
    """``count`` records ``value-<partition>-<i>`` with CreateTime ``T0 + i * 1000``, keys
    ``k<i % 4>`` (None for every 6th) and one header."""
    with Client(bootstrap) as client:
        for start in range(first, first + count, per_batch):
            records = [
                (
                    i - start,
                    T0 + i * 1000,
                    None if i % 6 == 0 else f"k{i % 4}".encode(),
                    f"value-{partition}-{i}".encode(),
                    [("i", str(i).encode())],
                )
                for i in range(start, min(start + per_batch, first + count))
            ]
            client.produce(topic, partition, build_batch(records, compression=compression))


def source(spark: Any, connection: dict[str, str], **options: str) -> Any:
    reader = spark.read.format("kafkacore")
    for key, value in {**connection, **options}.items():
        reader = reader.option(key, value)
    return reader.load()


def bootstrap_of(broker: Broker) -> dict[str, str]:
    return {"kafka.bootstrap.servers": broker.bootstrap}


def offsets(df: Any) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for row in df.select("partition", "offset").orderBy("partition", "offset").collect():
        found.setdefault(row["partition"], []).append(row["offset"])
    return found


def sorted_rows(df: Any) -> list[Any]:
    return [tuple(r) for r in df.orderBy("partition", "offset").collect()]


# -- round trip -----------------------------------------------------------------------------------


def written_rows(n: int) -> list[tuple[Any, ...]]:
    rows = []
    for i in range(n):
        key = None if i % 7 == 0 else f"key-{i % 11}".encode()
        headers = [] if i % 5 == 0 else [("h", f"{i}".encode()), ("n", None)]
        rows.append((key, f"value-{i}".encode(), headers))
    return rows


def test_batch_round_trip_every_column(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "roundtrip", 3)
    rows = written_rows(300)
    df = spark.createDataFrame(
        rows, "key binary, value binary, headers array<struct<key:string,value:binary>>"
    ).repartition(2)
    before_ms = int(time.time() * 1000)
    (
        df.write.format("kafkacore")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", "roundtrip")
        .mode("append")
        .save()
    )
    after_ms = int(time.time() * 1000)
    read = source(spark, bootstrap_of(broker), subscribe="roundtrip", includeHeaders="true")
    assert read.schema == kafka_schema(include_headers=True)
    got = read.selectExpr(*COLUMNS, "headers").collect()
    assert len(got) == len(rows)

    def as_tuple(key: Any, value: Any, headers: Any) -> tuple[Any, ...]:
        return (key, value, tuple((h[0], h[1]) for h in headers or ()))

    assert Counter(as_tuple(r["key"], r["value"], r["headers"]) for r in got) == Counter(
        as_tuple(*row) for row in rows
    )
    for r in got:
        assert (r["topic"], r["timestampType"]) == ("roundtrip", 0)
        assert before_ms <= r["ts"] <= after_ms
        if r["key"] is not None:  # where Kafka's Java producer puts the key
            assert r["partition"] == partition_for_key(r["key"], 3)
    assert {r["partition"] for r in got if r["key"] is None} == {0, 1, 2}
    per_partition = offsets(read)
    assert all(found == list(range(len(found))) for found in per_partition.values())
    # existing Spark Kafka code runs unchanged
    plain = source(spark, bootstrap_of(broker), subscribe="roundtrip")
    assert plain.schema == kafka_schema(include_headers=False)
    values = plain.selectExpr("CAST(value AS STRING) AS v").collect()
    assert sorted(r["v"] for r in values) == sorted(f"value-{i}" for i in range(300))


def test_batch_write_topic_and_partition_columns(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "columns-a", 2)
    create_topic(broker.bootstrap, "columns-b", 4)
    data = [("columns-a" if i % 2 else "columns-b", i % 2, f"k{i}", f"v{i}") for i in range(40)]
    df = spark.createDataFrame(data, "topic string, partition int, key string, value string")
    df.write.format("kafkacore").option("kafka.bootstrap.servers", broker.bootstrap).mode(
        "append"
    ).save()
    read = source(spark, bootstrap_of(broker), subscribePattern="columns-.*")
    got = read.selectExpr("topic", "partition", "CAST(key AS STRING) k", "CAST(value AS STRING) v")
    assert sorted(tuple(r) for r in got.collect()) == sorted((t, p, k, v) for t, p, k, v in data)


def test_batch_write_errors(spark: Any, broker: Broker) -> None:
    df = spark.createDataFrame([("v",)], "value string")
    writer = df.write.format("kafkacore").option("kafka.bootstrap.servers", broker.bootstrap)
    with pytest.raises(Exception, match="topic option required when no 'topic' attribute"):
        writer.mode("append").save()
    with pytest.raises(Exception, match="Save mode Overwrite not allowed for Kafka"):
        writer.option("topic", "roundtrip").mode("overwrite").save()
    no_value = spark.createDataFrame([("k",)], "key string")
    with pytest.raises(Exception, match="Required attribute 'value' not found"):
        no_value.write.format("kafkacore").option(
            "kafka.bootstrap.servers", broker.bootstrap
        ).option("topic", "roundtrip").mode("append").save()


# -- direct path ----------------------------------------------------------------------------------


def test_direct_path_equals_broker_path(
    spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The same queries over the broker and over its log directory once it has stopped:
    several segments (small segment size) with index entries, compressed batches."""
    own = Broker(tmp_path_factory.mktemp("direct") / "data").start()
    try:
        small = {"internal.segment.bytes": "4096", "index.interval.bytes": "512"}
        create_topic(own.bootstrap, "direct", 2, small)  # several segments
        create_topic(own.bootstrap, "directly-other", 1)
        produce(own.bootstrap, "direct", 0, 900, compression=Compression.LZ4)
        produce(own.bootstrap, "direct", 1, 400, per_batch=3)
        produce(own.bootstrap, "directly-other", 0, 50)
        queries: list[dict[str, str]] = [
            {"subscribe": "direct", "includeHeaders": "true"},
            {
                "subscribePattern": "direct.*",
                "startingOffsets": '{"direct":{"0":100,"1":-2},"directly-other":{"0":5}}',
                "endingOffsets": '{"direct":{"0":-1,"1":390},"directly-other":{"0":-1}}',
                "minPartitions": "7",
            },
            {
                "assign": '{"direct":[0,1]}',
                "startingTimestamp": str(T0 + 333_500),
                "endingOffsetsByTimestamp": (
                    f'{{"direct":{{"0":{T0 + 700_000},"1":{T0 + 10**9}}}}}'
                ),
            },
        ]
        through_broker = [sorted_rows(source(spark, bootstrap_of(own), **q)) for q in queries]
    finally:
        own.stop()
    assert len(list((own.data / "direct-0").glob("*.log"))) >= 2  # compressed
    assert len(list((own.data / "direct-1").glob("*.log"))) > 3
    directory = {"kafkacore.path": str(own.data)}
    through_disk = [sorted_rows(source(spark, directory, **q)) for q in queries]
    assert [len(rows) for rows in through_broker] == [1300, 800 + 390 + 45, 366 + 66]
    for broker_rows, disk_rows in zip(through_broker, through_disk, strict=True):
        assert disk_rows == broker_rows
    partitioned = source(spark, directory, **queries[1])
    assert partitioned.rdd.getNumPartitions() == 7


# -- offset ranges --------------------------------------------------------------------------------


def test_offsets_from_json_and_timestamps(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "ranges", 2)
    for p in (0, 1):
        produce(broker.bootstrap, "ranges", p, 50)
    conn = bootstrap_of(broker)
    df = source(
        spark,
        conn,
        subscribe="ranges",
        startingOffsets='{"ranges":{"0":10,"1":-2}}',
        endingOffsets='{"ranges":{"0":20,"1":-1}}',
    )
    assert offsets(df) == {0: list(range(10, 20)), 1: list(range(50))}
    df = source(
        spark,
        conn,
        subscribe="ranges",
        startingTimestamp=str(T0 + 25_500),
        endingOffsetsByTimestamp=f'{{"ranges":{{"0":{T0 + 30_000},"1":{T0 + 10**9}}}}}',
    )
    assert offsets(df) == {0: list(range(26, 30)), 1: list(range(26, 50))}
    by_timestamp = f'{{"ranges":{{"0":{T0 + 10**9},"1":{T0}}}}}'
    with pytest.raises(Exception, match=re.escape(
        f"No offset matched from request of topic-partition ranges-0 and timestamp {T0 + 10**9}"
    )):  # fmt: skip
        source(spark, conn, subscribe="ranges", startingOffsetsByTimestamp=by_timestamp).collect()
    df = source(
        spark,
        conn,
        subscribe="ranges",
        startingOffsetsByTimestamp=by_timestamp,
        startingOffsetsByTimestampStrategy="latest",
    )
    assert offsets(df) == {1: list(range(50))}
    with pytest.raises(Exception, match="you must specify all TopicPartitions"):
        source(spark, conn, subscribe="ranges", startingOffsets='{"ranges":{"0":1}}').collect()
    with pytest.raises(Exception, match="Beginning offset 30 is after the ending offset 20"):
        source(
            spark,
            conn,
            assign='{"ranges":[0]}',
            startingOffsets='{"ranges":{"0":30}}',
            endingOffsets='{"ranges":{"0":20}}',
        ).collect()
    with pytest.raises(Exception, match="starting offset can't be latest for batch queries"):
        source(spark, conn, subscribe="ranges", startingOffsets="latest").collect()
    with pytest.raises(Exception, match="Only one of the following options can be specified"):
        source(spark, conn, subscribe="ranges", assign='{"ranges":[0]}').collect()


def test_min_partitions_splits_large_ranges(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "minparts", 2)
    produce(broker.bootstrap, "minparts", 0, 30)
    produce(broker.bootstrap, "minparts", 1, 10)
    conn = bootstrap_of(broker)
    whole = source(spark, conn, subscribe="minparts")
    split = source(spark, conn, subscribe="minparts", minPartitions="4")
    assert whole.rdd.getNumPartitions() == 2
    assert split.rdd.getNumPartitions() == 4
    assert sorted_rows(split) == sorted_rows(whole)
    from pyspark.sql import functions as F

    tasks = (
        split.selectExpr("spark_partition_id() AS task", "partition", "offset")
        .groupBy("task", "partition")
        .agg(F.min("offset").alias("first"), F.count("*").alias("n"))
    )
    assert sorted((r["partition"], r["first"], r["n"]) for r in tasks.collect()) == [
        (0, 0, 10),
        (0, 10, 10),
        (0, 20, 10),
        (1, 0, 10),
    ]


# -- data loss ------------------------------------------------------------------------------------


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([ck.TopicPartition(topic, partition, before)])
    for future in futures.values():
        future.result(30)


def test_batch_fail_on_data_loss(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "retention", 1)
    produce(broker.bootstrap, "retention", 0, 100)
    delete_records(broker.bootstrap, "retention", 0, 60)
    conn = bootstrap_of(broker)
    start = '{"retention":{"0":10}}'
    with pytest.raises(Exception) as failure:
        source(spark, conn, subscribe="retention", startingOffsets=start).collect()
    message = str(failure.value)
    assert "Cannot fetch offset 10 (TopicPartition: retention-0)" in message
    assert 'set the source option "failOnDataLoss" to "false"' in message
    lenient = source(
        spark, conn, subscribe="retention", startingOffsets=start, failOnDataLoss="false"
    )
    assert offsets(lenient) == {0: list(range(60, 100))}
    # earliest is the log start offset: no data loss
    assert offsets(source(spark, conn, subscribe="retention")) == {0: list(range(60, 100))}


def test_direct_path_requires_a_directory(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="is not a directory"):
        source(spark, {"kafkacore.path": str(tmp_path / "missing")}, subscribe="x").collect()


def test_empty_reads(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "empty", 2)
    conn = bootstrap_of(broker)
    assert source(spark, conn, subscribe="empty").count() == 0
    assert source(spark, conn, subscribe="empty", minPartitions="3").count() == 0
    assert source(spark, conn, subscribePattern="no-topic-like-this.*").count() == 0
