"""The parts of the ``kafkacore`` data source that need no SparkSession: option parsing
with Spark's errors, Spark's range splitting and rate limiting, the read-only log
directory reader (against logs written by kafkacore's own ``Log``), the data-loss rules of
a range read, and the static registration module."""

from __future__ import annotations

import json
import logging
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import Log, OffsetCheckpointFile, TopicPartition
from kafkacore.log.reader import LogDirectory
from kafkacore.record import Compression, ControlType, build_batch, build_control_batch
from kafkacore.spark.access import DataLossError, read_range
from kafkacore.spark.options import (
    OffsetLimit,
    Subscription,
    parse_read_options,
    parse_write_options,
)
from kafkacore.spark.ranges import OffsetRange, rate_limit, split_ranges

BOOT = {"kafka.bootstrap.servers": "localhost:9092"}
T0 = 1_700_000_000_000


# -- options ---------------------------------------------------------------------------------------


def batch_options(**options: str) -> object:
    return parse_read_options({**BOOT, **options}, streaming=False)


def test_exactly_one_subscription_strategy() -> None:
    with pytest.raises(ValueError, match="One of the following options must be specified for "
                       "Kafka source: subscribe, subscribepattern, assign"):  # fmt: skip
        batch_options()
    with pytest.raises(ValueError, match="Only one of the following options can be specified"):
        batch_options(subscribe="a", subscribePattern="a.*")
    with pytest.raises(ValueError, match="No topics to subscribe to"):
        batch_options(subscribe=" , ")
    with pytest.raises(ValueError, match="No topicpartitions to assign"):
        batch_options(assign="a-0")
    with pytest.raises(ValueError, match="Pattern to subscribe is empty"):
        batch_options(subscribePattern="  ")
    with pytest.raises(ValueError, match=r'Expected e.g. \{"topicA":\[0,1\]'):
        batch_options(assign='{"a": 0}')


def test_subscription_kinds_and_case_insensitive_keys() -> None:
    options = parse_read_options(
        {"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubscribePattern": "logs-.*"}, streaming=True
    )
    assert options.subscription == Subscription("subscribePattern", pattern="logs-.*")
    assert options.subscription.matches("logs-app") and not options.subscription.matches("xlogs-")
    assert options.bootstrap_servers == "h:1"
    assigned = batch_options(assign='{"a":[1,0],"b":[2]}')
    assert assigned.subscription.assigned == (  # type: ignore[attr-defined]
        TopicPartition("a", 1),
        TopicPartition("a", 0),
        TopicPartition("b", 2),
    )
    assert batch_options(subscribe="a, b,").subscription.topics == ("a", "b")  # type: ignore[attr-defined]


def test_connection_options() -> None:
    with pytest.raises(ValueError, match=re.escape("'kafka.bootstrap.servers' must be specified")):
        parse_read_options({"subscribe": "a"}, streaming=False)
    with pytest.raises(ValueError, match="mutually exclusive"):
        batch_options(subscribe="a", **{"kafkacore.path": "/x"})
    direct = parse_read_options({"subscribe": "a", "kafkacore.path": "/x"}, streaming=False)
    assert direct.log_path == "/x" and direct.bootstrap_servers is None
    with pytest.raises(ValueError, match=re.escape("auto.offset.reset' is not supported")):
        batch_options(subscribe="a", **{"kafka.auto.offset.reset": "earliest"})
    with pytest.raises(ValueError, match=re.escape("'value.deserializer' is not supported")):
        batch_options(subscribe="a", **{"kafka.value.deserializer": "x"})


def test_offset_limits_batch_and_stream() -> None:
    options = batch_options(subscribe="a")
    assert options.starting == OffsetLimit("earliest")  # type: ignore[attr-defined]
    assert options.ending == OffsetLimit("latest")  # type: ignore[attr-defined]
    stream = parse_read_options({**BOOT, "subscribe": "a"}, streaming=True)
    assert stream.starting == OffsetLimit("latest")
    spec = batch_options(
        subscribe="a",
        startingOffsets=' {"a":{"0":23,"1":-2}} ',
        endingOffsets='{"a":{"0":-1,"1":40}}',
    )
    assert spec.starting.per_partition == {  # type: ignore[attr-defined]
        TopicPartition("a", 0): 23,
        TopicPartition("a", 1): -2,
    }
    assert spec.ending.per_partition[TopicPartition("a", 0)] == -1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="starting offset can't be latest for batch queries"):
        batch_options(subscribe="a", startingOffsets="LATEST")
    with pytest.raises(ValueError, match="startingOffsets for a-0 can't be latest for batch"):
        batch_options(subscribe="a", startingOffsets='{"a":{"0":-1}}')
    with pytest.raises(ValueError, match="ending offset can't be earliest for batch queries"):
        batch_options(subscribe="a", endingOffsets="earliest")
    with pytest.raises(ValueError, match="ending offset for a-1 can't be earliest"):
        batch_options(subscribe="a", endingOffsets='{"a":{"1":-2}}')
    with pytest.raises(ValueError, match=r'Expected e.g. \{"topicA":\{"0":23,"1":-1\}'):
        batch_options(subscribe="a", startingOffsets='{"a":{"x":1}}')
    with pytest.raises(ValueError, match="ending offset not valid in streaming queries"):
        parse_read_options({**BOOT, "subscribe": "a", "endingOffsets": "latest"}, streaming=True)
    with pytest.raises(ValueError, match="ending timestamp not valid in streaming queries"):
        parse_read_options(
            {**BOOT, "subscribe": "a", "endingOffsetsByTimestamp": "{}"}, streaming=True
        )


def test_timestamp_limits_take_precedence() -> None:
    options = batch_options(
        subscribe="a",
        startingTimestamp="1000",
        startingOffsetsByTimestamp='{"a":{"0":5}}',
        startingOffsets="earliest",
        endingOffsetsByTimestamp='{"a":{"0":9000}}',
        startingOffsetsByTimestampStrategy="LATEST",
    )
    assert options.starting == OffsetLimit("timestamp", timestamp=1000, strategy="latest")  # type: ignore[attr-defined]
    assert options.ending.kind == "timestamps"  # type: ignore[attr-defined]
    assert options.ending.per_partition == {TopicPartition("a", 0): 9000}  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Expected a single long value, got 12x"):
        batch_options(subscribe="a", startingTimestamp="12x")
    with pytest.raises(ValueError, match="startingOffsetsByTimestampStrategy"):
        batch_options(subscribe="a", startingOffsetsByTimestampStrategy="maybe")


def test_numeric_and_boolean_options() -> None:
    options = batch_options(
        subscribe="a", minPartitions="4", failOnDataLoss="FALSE", includeHeaders="true"
    )
    assert (options.min_partitions, options.fail_on_data_loss, options.include_headers) == (  # type: ignore[attr-defined]
        4,
        False,
        True,
    )
    with pytest.raises(ValueError, match="minPartitions must be positive"):
        batch_options(subscribe="a", minPartitions="0")
    with pytest.raises(ValueError, match='For input string: "yes"'):
        batch_options(subscribe="a", failOnDataLoss="yes")
    with pytest.raises(ValueError, match="maxOffsetsPerTrigger"):
        batch_options(subscribe="a", maxOffsetsPerTrigger="many")


def test_write_options() -> None:
    options = parse_write_options(
        {**BOOT, "topic": "t", "kafkacore.sinkId": "s", "kafka.compression.type": "lz4"}
    )
    assert (options.topic, options.sink_id, options.compression) == ("t", "s", 3)
    with pytest.raises(ValueError, match="only be used to read"):
        parse_write_options({"kafkacore.path": "/x"})
    with pytest.raises(ValueError, match=re.escape("'key.serializer' is not supported")):
        parse_write_options({**BOOT, "kafka.key.serializer": "x"})
    with pytest.raises(ValueError, match=re.escape("compression.type")):
        parse_write_options({**BOOT, "kafka.compression.type": "brotli"})


# -- ranges ---------------------------------------------------------------------------------------


def r(topic: str, partition: int, start: int, until: int) -> OffsetRange:
    return OffsetRange(topic, partition, start, until)


def test_split_ranges_as_spark() -> None:
    ranges = [r("t1", 1, 1, 2), r("t2", 1, 1, 3), r("t3", 0, 5, 5)]
    assert split_ranges(ranges) == ranges[:2]  # one per partition, empty ones dropped
    assert split_ranges(ranges, 2) == ranges[:2]
    assert split_ranges([r("t", 1, 1, 5)], 4) == [
        r("t", 1, 1, 2),
        r("t", 1, 2, 3),
        r("t", 1, 3, 4),
        r("t", 1, 4, 5),
    ]
    # skewed: t1 (4 offsets) is too small to split, t2 (20) takes the 2 remaining parts
    assert split_ranges([r("t1", 1, 1, 5), r("t2", 1, 1, 21)], 3) == [
        r("t1", 1, 1, 5),
        r("t2", 1, 1, 11),
        r("t2", 1, 11, 21),
    ]
    # the last piece takes the rounding remainder
    assert split_ranges([r("t", 0, 0, 10)], 3) == [
        r("t", 0, 0, 3),
        r("t", 0, 3, 6),
        r("t", 0, 6, 10),
    ]
    assert split_ranges([r("t", 0, 0, 10)], max_records_per_partition=4) == [
        r("t", 0, 0, 3),
        r("t", 0, 3, 6),
        r("t", 0, 6, 10),
    ]


def test_rate_limit_proportional_to_backlog() -> None:
    a, b, c = ("t", 0), ("t", 1), ("t", 2)
    # backlogs 300 and 100: a limit of 100 gives 75 and 25
    assert rate_limit(100, {a: 0, b: 0}, {a: 300, b: 100}, {}) == {a: 75, b: 25}
    # a new partition starts at its earliest offset; a tiny share still gets one offset
    assert rate_limit(10, {a: 0}, {a: 1000, c: 51}, {c: 50}) == {a: 9, c: 51}
    # nothing to read: the latest offsets as they are
    assert rate_limit(10, {a: 5}, {a: 5}, {}) == {a: 5}
    # never past the latest offset
    assert rate_limit(1000, {a: 0, b: 0}, {a: 3, b: 4}, {}) == {a: 3, b: 4}


# -- the log directory reader ---------------------------------------------------------------------


def small_log(directory: Path) -> Log:
    config = LogConfig({"internal.segment.bytes": "2000", "index.interval.bytes": "150"})
    return Log(directory, config)


def value(i: int) -> bytes:
    return f"value-{i:04d}-".encode() + b"x" * (i % 13)


def fill(log: Log) -> list[tuple[int, int, bytes | None, bytes]]:
    """Batches of 1-4 records, some compressed, a transaction marker, an offset gap (as
    compaction leaves); returns (offset, timestamp, key, value) of every data record."""
    expected = []
    offset = 0
    for n in range(60):
        if n == 30:  # a control batch: no row, but it takes an offset
            log.append_as_follower(
                build_control_batch(
                    ControlType.COMMIT,
                    producer_id=7,
                    producer_epoch=0,
                    timestamp=T0,
                    offset=offset,
                )
            )
            offset += 1
        if n == 40:
            offset += 5  # compaction gap
        count = 1 + n % 4
        records = []
        for k in range(count):
            key = None if (offset + k) % 5 == 0 else f"k{(offset + k) % 3}".encode()
            records.append((offset + k, T0 + (offset + k) * 10, key, value(offset + k), []))
        codec = Compression.LZ4 if n % 3 == 0 else Compression.NONE
        log.append_as_follower(build_batch(records, compression=codec))
        expected += [(o, ts, key, v) for o, ts, key, v, _ in records]
        offset += count
    return expected


def rows_of(batches: Iterator[tuple[object, int]]) -> list[tuple[int, int, bytes | None, bytes]]:
    out = []
    for batch, _ in batches:
        d = batch.to_pydict()  # type: ignore[attr-defined]
        for o, ts, key, v in zip(d["offset"], d["timestamp"], d["key"], d["value"], strict=True):
            out.append((o, int(ts.timestamp() * 1000), key, v))
    return out


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def test_log_directory_reads_segments_read_only(tmp_path: Path) -> None:
    tp = TopicPartition("logs", 0)
    log = small_log(tmp_path / "logs-0")
    expected = fill(log)
    end = log.log_end_offset
    assert log.number_of_segments > 3
    directory = LogDirectory(str(tmp_path))
    before = snapshot(tmp_path)
    # open log: the active segment's index is preallocated (zeros past its entries)
    assert directory.topics() == {"logs": [0]}
    assert directory.offsets(tp) == (0, end)  # no checkpoint: up to the log end
    assert rows_of(directory.read(tp, 0, end, False)) == expected
    middle = [e for e in expected if 57 <= e[0] < 150]
    assert rows_of(directory.read(tp, 57, 150, False, chunk_bytes=100)) == middle
    assert snapshot(tmp_path) == before
    log.close()
    # the high watermark and log start checkpoints bound the offsets
    OffsetCheckpointFile(str(tmp_path / "replication-offset-checkpoint")).write({tp: 120})
    OffsetCheckpointFile(str(tmp_path / "log-start-offset-checkpoint")).write({tp: 33})
    before = snapshot(tmp_path)
    assert rows_of(directory.read(tp, 0, end, False)) == expected
    assert directory.offsets(tp) == (33, 120)
    # timestamps: the first record at or after the time, below the high watermark
    assert directory.offset_for_timestamp(tp, T0 + 995) == 100
    assert directory.offset_for_timestamp(tp, T0 + 1000) == 100
    assert directory.offset_for_timestamp(tp, T0 + 1201) is None
    assert directory.offset_for_timestamp(tp, 0) == 33
    # offsets 73 (a transaction marker) and 101..105 (a compaction gap) hold no record
    assert [o for o, *_ in rows_of(directory.read(tp, 70, 108, False))] == [
        70, 71, 72, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92,
        93, 94, 95, 96, 97, 98, 99, 100, 106, 107,
    ]  # fmt: skip
    assert rows_of(directory.read(tp, 101, 106, False)) == []
    assert snapshot(tmp_path) == before


def test_read_range_data_loss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from kafkacore.spark.access import DirectAccess

    tp = TopicPartition("t", 0)
    log = small_log(tmp_path / "t-0")
    expected = fill(log)
    end = log.log_end_offset
    log.close()
    OffsetCheckpointFile(str(tmp_path / "log-start-offset-checkpoint")).write({tp: 60})
    access = DirectAccess(str(tmp_path), 1 << 20)
    with pytest.raises(DataLossError) as failure:
        list(read_range(access, tp, 10, end, include_headers=False, fail_on_data_loss=True))
    message = str(failure.value)
    assert "Cannot fetch offset 10" in message and "t-0" in message
    assert "[60, " in message and 'set the source option "failOnDataLoss" to "false"' in message
    with caplog.at_level(logging.WARNING, logger="kafkacore.spark"):
        batches = list(
            read_range(access, tp, 10, end, include_headers=False, fail_on_data_loss=False)
        )
    offsets = [o for b in batches for o in b.column("offset").to_pylist()]
    assert offsets == [o for o, *_ in expected if o >= 60]
    assert "records in [10, 60) are not available" in caplog.text
    # a range entirely gone is skipped whole
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafkacore.spark"):
        gone = list(read_range(access, tp, 0, 50, include_headers=False, fail_on_data_loss=False))
    assert gone == [] and "records in [0, 50)" in caplog.text


# -- registration ---------------------------------------------------------------------------------


def test_static_registration_module() -> None:
    """What Spark's ``lookup_data_sources`` worker does: every ``pyspark_*`` module with a
    ``DefaultSource`` data source is registered under its name."""
    from pyspark.sql.datasource import DataSource

    assert "pyspark_kafkacore" in {m.name for m in pkgutil.iter_modules()}
    import pyspark_kafkacore

    assert issubclass(pyspark_kafkacore.DefaultSource, DataSource)
    assert pyspark_kafkacore.DefaultSource.name() == "kafkacore"


def test_offsets_json_round_trip() -> None:
    from kafkacore.spark.reader import offsets_from_json, offsets_to_json

    offsets = {TopicPartition("b", 10): 3, TopicPartition("b", 2): 7, TopicPartition("a", 0): 0}
    as_json = offsets_to_json(offsets)
    assert json.dumps(as_json) == '{"a": {"0": 0}, "b": {"2": 7, "10": 3}}'
    assert offsets_from_json(json.loads(json.dumps(as_json))) == offsets
