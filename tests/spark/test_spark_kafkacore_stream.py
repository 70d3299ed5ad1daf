"""Structured Streaming through the ``kafkacore`` data source on the shared SparkSession:
``processAllAvailable()``, ``trigger(availableNow=True)`` with ``maxOffsetsPerTrigger``,
restart from the checkpoint (new partitions included), ``failOnDataLoss`` after
DeleteRecords, and the exactly-once sink replaying a batch whose commit Spark forgot."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from kafkacore.client import Client
from kafkacore.partitioner import partition_for_key
from kafkacore.record import build_batch
from support.brokers import Broker

pytestmark = pytest.mark.timeout(300)


T0 = 1_735_689_600_000


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """No time-based retention: the records carry timestamps of 2025."""
    with Client(bootstrap) as client:
        client.create_topic(topic, partitions, configs={"retention.ms": "-1"}, exist_ok=False)


def produce(bootstrap: str, topic: str, partition: int, first: int, count: int) -> None:
    """Records ``<topic>-<partition>-<i>`` for i in [first, first + count), key ``k<i % 5>``."""
    with Client(bootstrap) as client:
        for start in range(first, first + count, 10):
            records = [
                (i - start, T0 + i, f"k{i % 5}".encode(), f"{topic}-{partition}-{i}".encode(), [])
                for i in range(start, min(start + 10, first + count))
            ]
            client.produce(topic, partition, build_batch(records))


def stream(spark: Any, broker: Broker, topic: str, **options: str) -> Any:
    reader = (
        spark.readStream.format("kafkacore")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def run_available_now(df: Any, sink: Path, checkpoint: Path, fmt: str = "parquet") -> Any:
    query = (
        df.writeStream.format(fmt)
        .option("path", str(sink))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(240)
    assert not query.isActive
    if query.exception() is not None:
        raise query.exception()
    return query


def parquet_keys(spark: Any, path: Path) -> list[tuple[int, int]]:
    """``(partition, offset)`` of every row in the Parquet sink, duplicates kept."""
    rows = spark.read.parquet(str(path)).select("partition", "offset").collect()
    return sorted((r["partition"], r["offset"]) for r in rows)


def test_process_all_available_and_latest_default(spark: Any, broker: Broker) -> None:
    create_topic(broker.bootstrap, "live", 2)
    produce(broker.bootstrap, "live", 0, 0, 25)
    produce(broker.bootstrap, "live", 1, 0, 15)
    everything = (
        stream(spark, broker, "live", startingOffsets="earliest")
        .selectExpr("CAST(value AS STRING) AS v", "partition", "offset")
        .writeStream.format("memory")
        .queryName("live_all")
        .start()
    )
    newest = (
        stream(spark, broker, "live")  # streams start at latest by default
        .selectExpr("CAST(value AS STRING) AS v")
        .writeStream.format("memory")
        .queryName("live_new")
        .start()
    )
    try:
        everything.processAllAvailable()
        newest.processAllAvailable()
        assert spark.table("live_all").count() == 40
        assert spark.table("live_new").count() == 0
        produce(broker.bootstrap, "live", 0, 25, 10)
        produce(broker.bootstrap, "live", 1, 15, 20)
        everything.processAllAvailable()
        newest.processAllAvailable()
        values = [r["v"] for r in spark.table("live_all").collect()]
        expected = [f"live-0-{i}" for i in range(35)] + [f"live-1-{i}" for i in range(35)]
        assert sorted(values) == sorted(expected)  # each exactly once
        new_values = sorted(r["v"] for r in spark.table("live_new").collect())
        assert new_values == sorted(
            [f"live-0-{i}" for i in range(25, 35)] + [f"live-1-{i}" for i in range(15, 35)]
        )
        offsets = json.loads(everything.lastProgress["sources"][0]["endOffset"])
        assert offsets == {"live": {"0": 35, "1": 35}}
    finally:
        everything.stop()
        newest.stop()


def test_available_now_rate_limit_and_restart(spark: Any, broker: Broker, tmp_path: Path) -> None:
    create_topic(broker.bootstrap, "bounded", 3)
    for partition, count in enumerate((60, 40, 20)):
        produce(broker.bootstrap, "bounded", partition, 0, count)
    sink, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    query = run_available_now(
        stream(spark, broker, "bounded", startingOffsets="earliest", maxOffsetsPerTrigger="25"),
        sink,
        checkpoint,
    )
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"] > 0]
    assert sum(sizes) == 120
    assert max(sizes) <= 25 and len(sizes) >= 5
    expected = [(0, o) for o in range(60)] + [(1, o) for o in range(40)]
    expected += [(2, o) for o in range(20)]
    assert parquet_keys(spark, sink) == expected
    # more records, and a new partition: the restarted query reads the new partition from
    # its earliest offset and everything else from the checkpoint, nothing twice
    produce(broker.bootstrap, "bounded", 1, 40, 30)
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_partitions([admin_mod.NewPartitions("bounded", 4)])["bounded"].result(30)
    produce(broker.bootstrap, "bounded", 3, 0, 10)
    run_available_now(stream(spark, broker, "bounded"), sink, checkpoint)
    expected += [(1, o) for o in range(40, 70)] + [(3, o) for o in range(10)]
    assert parquet_keys(spark, sink) == sorted(expected)
    # nothing new: a further run adds nothing
    run_available_now(stream(spark, broker, "bounded"), sink, checkpoint)
    assert parquet_keys(spark, sink) == sorted(expected)


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([ck.TopicPartition(topic, partition, before)])
    for future in futures.values():
        future.result(30)


def test_streaming_fail_on_data_loss(spark: Any, broker: Broker, tmp_path: Path) -> None:
    create_topic(broker.bootstrap, "aged", 1)
    produce(broker.bootstrap, "aged", 0, 0, 20)
    sink, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    run_available_now(stream(spark, broker, "aged", startingOffsets="earliest"), sink, checkpoint)
    produce(broker.bootstrap, "aged", 0, 20, 80)
    delete_records(broker.bootstrap, "aged", 0, 60)  # offsets 20..59 were never read
    with pytest.raises(Exception) as failure:
        run_available_now(stream(spark, broker, "aged"), sink, checkpoint)
    message = str(failure.value)
    assert "Cannot fetch offset 20 (TopicPartition: aged-0)" in message
    assert 'set the source option "failOnDataLoss" to "false"' in message
    assert parquet_keys(spark, sink) == [(0, o) for o in range(20)]
    run_available_now(stream(spark, broker, "aged", failOnDataLoss="false"), sink, checkpoint)
    assert parquet_keys(spark, sink) == [(0, o) for o in (*range(20), *range(60, 100))]


def read_topic(spark: Any, broker: Broker, topic: str) -> list[Any]:
    return (
        spark.read.format("kafkacore")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
        .load()
        .collect()
    )


def test_streaming_write_exactly_once_across_replay(
    spark: Any, broker: Broker, tmp_path: Path
) -> None:
    create_topic(broker.bootstrap, "eos-in", 2)
    create_topic(broker.bootstrap, "eos-out", 3)
    produce(broker.bootstrap, "eos-in", 0, 0, 30)
    produce(broker.bootstrap, "eos-in", 1, 0, 20)
    checkpoint = tmp_path / "checkpoint"

    def run(**options: str) -> Any:
        query = (
            stream(spark, broker, "eos-in", startingOffsets="earliest", **options)
            .selectExpr("key", "value")
            .writeStream.format("kafkacore")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topic", "eos-out")
            .option("kafkacore.sinkId", "eos-test")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(240)
        if query.exception() is not None:
            raise query.exception()
        return query

    def target_values() -> Counter[str]:
        rows = read_topic(spark, broker, "eos-out")
        for row in rows:  # keys where the Java producer puts them
            assert row["partition"] == partition_for_key(row["key"], 3)
        return Counter(row["value"].decode() for row in rows)

    expected = Counter(f"eos-in-0-{i}" for i in range(30)) + Counter(
        f"eos-in-1-{i}" for i in range(20)
    )
    first = run(maxOffsetsPerTrigger="20")
    assert target_values() == expected
    # the tasks staged under "<sink id>/<micro-batch id>/<task>"
    batch_ids = {p["batchId"] for p in first.recentProgress if p["numInputRows"] > 0}
    staged = [r["key"].decode() for r in read_topic(spark, broker, "__kafkacore_sink_staging")]
    assert {int(k.split("/")[1]) for k in staged if k.startswith("eos-test/")} == batch_ids
    # Spark forgets that the last micro-batch was committed: it runs it again on restart
    # and calls commit with the same batch id, which the sink must skip
    commits = checkpoint / "commits"
    last = max((p for p in commits.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    last.unlink()
    (commits / f".{last.name}.crc").unlink(missing_ok=True)
    replay = run()
    assert last.exists()  # the batch ran and was committed again
    assert [p["batchId"] for p in replay.recentProgress if p["numInputRows"] > 0] == [
        int(last.name)
    ]
    assert target_values() == expected
    # new input after the replay is written once
    produce(broker.bootstrap, "eos-in", 1, 20, 5)
    run()
    assert target_values() == expected + Counter(f"eos-in-1-{i}" for i in range(20, 25))


def test_streaming_write_needs_a_sink_id(spark: Any, broker: Broker, tmp_path: Path) -> None:
    create_topic(broker.bootstrap, "sink-id-source", 1)
    produce(broker.bootstrap, "sink-id-source", 0, 0, 3)
    df = stream(spark, broker, "sink-id-source", startingOffsets="earliest").selectExpr("value")
    writer = (
        df.writeStream.format("kafkacore")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", "eos-out")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
    )
    with pytest.raises(Exception, match=re.escape("Option 'kafkacore.sinkId' is required")):
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(120)
        if query.exception() is not None:
            raise query.exception()


def test_subscribing_to_a_missing_topic_fails(spark: Any, broker: Broker) -> None:
    """As Spark's connector (UnknownTopicOrPartitionException from describeTopics): a
    subscribed topic that does not exist fails the query instead of reading nothing."""
    df = spark.read.format("kafkacore").option("kafka.bootstrap.servers", broker.bootstrap)
    df = df.option("subscribe", "no-such-topic").load()
    with pytest.raises(Exception, match="no-such-topic do not exist"):
        df.count()


def test_stream_reader_driver_calls(broker: Broker) -> None:
    """The driver-side calls as pyspark makes them, without Spark: both ``latestOffset``
    forms, admission control, the ``availableNow`` snapshot, empty micro-batches."""
    import pickle

    from kafkacore.spark._compat import ReadAllAvailable, ReadMaxRows
    from kafkacore.spark.options import parse_read_options
    from kafkacore.spark.ranges import OffsetRange
    from kafkacore.spark.reader import KafkaCoreStreamReader

    create_topic(broker.bootstrap, "driver", 2)
    produce(broker.bootstrap, "driver", 0, 0, 30)
    produce(broker.bootstrap, "driver", 1, 0, 10)
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "subscribe": "driver",
        "startingOffsets": '{"driver":{"0":5,"1":-2}}',
        "maxOffsetsPerTrigger": "14",
    }
    reader = KafkaCoreStreamReader(parse_read_options(options, streaming=True))
    try:
        start = reader.initialOffset()
        assert start == {"driver": {"0": 5, "1": 0}}
        assert reader.getDefaultReadLimit() == ReadMaxRows(14)
        # backlogs 25 and 10: 14 rows split 10 + 4
        first = reader.latestOffset(start, ReadMaxRows(14))
        assert first == {"driver": {"0": 15, "1": 4}}
        assert reader.latestOffset(first, ReadAllAvailable()) == {"driver": {"0": 30, "1": 10}}
        # the no-argument form (pyspark < 4.2) continues from its last answer
        fresh = KafkaCoreStreamReader(parse_read_options(options, streaming=True))
        assert fresh.latestOffset() == first
        assert fresh.latestOffset() == {"driver": {"0": 25, "1": 8}}
        fresh.stop()
        assert reader.partitions(first, first) == []
        assert reader.partitions(start, first) == [
            OffsetRange("driver", 0, 5, 15),
            OffsetRange("driver", 1, 0, 4),
        ]
        # availableNow: what arrives after the snapshot is left for later
        reader.prepareForTriggerAvailableNow()
        produce(broker.bootstrap, "driver", 1, 10, 5)
        assert reader.latestOffset(first, ReadAllAvailable()) == {"driver": {"0": 30, "1": 10}}
        # read() runs on executors from a pickled copy: no connection travels
        copy = pickle.loads(pickle.dumps(reader))
        rows = [b.num_rows for b in copy.read(OffsetRange("driver", 1, 8, 15))]
        assert sum(rows) == 7
    finally:
        reader.stop()


def test_stream_from_a_log_directory(spark: Any, tmp_path: Path) -> None:
    """``kafkacore.path`` in a stream: each availableNow run reads what the (stopped)
    broker's log directory holds up to its high watermark, and the next run on the same
    checkpoint only what was added since."""
    data = tmp_path / "data"
    own = Broker(data).start()
    try:
        create_topic(own.bootstrap, "dir-stream", 2)
        produce(own.bootstrap, "dir-stream", 0, 0, 30)
        produce(own.bootstrap, "dir-stream", 1, 0, 12)
    finally:
        own.stop()
    sink, checkpoint = tmp_path / "sink", tmp_path / "checkpoint"

    def run() -> None:
        df = (
            spark.readStream.format("kafkacore")
            .option("kafkacore.path", str(data))
            .option("subscribe", "dir-stream")
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "16")
            .load()
        )
        run_available_now(df, sink, checkpoint)

    run()
    assert parquet_keys(spark, sink) == [(0, o) for o in range(30)] + [(1, o) for o in range(12)]
    own.start()
    try:
        produce(own.bootstrap, "dir-stream", 1, 12, 8)
    finally:
        own.stop()
    run()
    keys = parquet_keys(spark, sink)
    assert keys == [(0, o) for o in range(30)] + [(1, o) for o in range(20)]
