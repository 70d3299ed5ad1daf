"""``decode_columns`` (native == pure, byte for byte) and ``kafkacore.arrow.decode``
(the rows equal what ``kafkacore.record`` iteration gives, in Spark's Kafka schema).

Hypothesis draws runs of stored batches as a Fetch response or a segment holds them:
v2 batches of every codec and both timestamp types with compaction-like offset gaps,
control batches in between, legacy v0/v1 message sets; then random offset windows, a
truncated trailing batch and corrupted bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from types import ModuleType
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kafkacore.arrow
from kafkacore import errors
from kafkacore.native import load_backend
from kafkacore.record import (
    ControlType,
    batch_header,
    build_control_batch,
    iter_batches,
    records,
)

I64_MAX = 2**63 - 1
BUILDER = load_backend("native")
TS = st.integers(min_value=0, max_value=2**41)
headers_st = st.lists(
    st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=12)), max_size=3
)
record_body = st.tuples(
    TS, st.none() | st.binary(max_size=30), st.none() | st.binary(max_size=200), headers_st
)


class Stream:
    """Concatenated stored batches plus where each one starts."""

    def __init__(self) -> None:
        self.data = b""
        self.positions: list[int] = []
        self.magics: list[int] = []
        self.first = 0
        self.next = 0

    def add(self, batch: bytes, magic: int) -> None:
        self.positions.append(len(self.data))
        self.magics.append(magic)
        self.data += batch

    def __repr__(self) -> str:
        return f"Stream(batches={len(self.positions)}, {self.first}..{self.next}, {self.data!r})"


@st.composite
def streams(draw: st.DrawFn, max_batches: int = 6) -> Stream:
    stream = Stream()
    offset = stream.first = draw(st.integers(min_value=0, max_value=2**40))
    for _ in range(draw(st.integers(min_value=1, max_value=max_batches))):
        kind = draw(st.sampled_from(["v2", "v2", "v2", "control", "legacy"]))
        if kind == "control":
            batch = build_control_batch(
                draw(st.sampled_from(list(ControlType))),
                producer_id=7,
                producer_epoch=0,
                timestamp=draw(TS),
                offset=offset,
            )
            stream.add(batch, 2)
            offset += 1
        elif kind == "v2":
            base = offset
            offset += draw(st.sampled_from([0, 0, 0, 3]))  # base offset below the first record
            recs = []
            for ts, key, value, headers in draw(st.lists(record_body, min_size=1, max_size=8)):
                recs.append((offset, ts, key, value, list(headers)))
                offset += draw(st.sampled_from([1, 1, 1, 2, 7]))  # compaction-like gaps
            last = recs[-1][0] + draw(st.sampled_from([0, 0, 2]))  # removed tail records
            batch = BUILDER.build_batch(
                recs,
                base_offset=base,
                last_offset_delta=last - base,
                compression=draw(st.sampled_from([0, 1, 2, 3, 4])),
                timestamp_type=draw(st.sampled_from([0, 1])),
            )
            stream.add(batch, 2)
            offset = last + 1
        else:
            magic = draw(st.sampled_from([0, 1]))
            codec = draw(st.sampled_from([0, 1, 2, 3]))
            bodies = draw(st.lists(record_body, min_size=1, max_size=5))
            recs = [(offset + i, ts, k, v, []) for i, (ts, k, v, _) in enumerate(bodies)]
            ts_type = draw(st.sampled_from([0, 1]))
            # Uncompressed: one message per record; compressed: one wrapper.
            for group in [recs] if codec else [[r] for r in recs]:
                stream.add(BUILDER.build_legacy(group, magic, codec, ts_type), magic)
            offset += len(recs)
    stream.next = offset
    return stream


@st.composite
def windows(draw: st.DrawFn, stream: Stream) -> tuple[int, int]:
    """A ``[start, end)`` window around the stream's offsets (sometimes open-ended)."""
    point = st.integers(min_value=stream.first - 2, max_value=stream.next + 2)
    start = draw(point | st.just(0))
    end = draw(point | st.just(I64_MAX))
    return start, end


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except (errors.KafkaCoreError, ValueError) as exc:
        return ("raised", type(exc).__name__)


def i32s(b: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(b) // 4}i", b))


# ---------------------------------------------------------------- native == pure


@given(streams(), st.data(), st.booleans())
def test_backends_agree(
    native: ModuleType, pure: ModuleType, stream: Stream, data: st.DataObject, headers: bool
) -> None:
    start, end = data.draw(windows(stream))
    got = native.decode_columns(stream.data, start, end, headers)
    assert got == pure.decode_columns(stream.data, start, end, headers)
    count, next_offset, keys, values, offsets, timestamps, types, hdrs = got
    assert len(offsets) == len(timestamps) == 8 * count and len(types) == 4 * count
    assert len(keys[1]) == len(values[1]) == 4 * (count + 1)
    assert (hdrs is None) == (not headers)
    rows = struct.unpack(f"<{count}q", offsets)
    assert all(start <= o < end for o in rows)
    assert next_offset == end or start <= next_offset <= max(start, stream.next)


@given(streams(), st.data())
def test_truncated_trailing_batch_is_ignored(
    native: ModuleType, pure: ModuleType, stream: Stream, data: st.DataObject
) -> None:
    start, end = data.draw(windows(stream))
    last = stream.positions[-1]
    whole = native.decode_columns(stream.data[:last], start, end, True)
    cut = data.draw(st.integers(min_value=last, max_value=len(stream.data) - 1))
    for backend in (native, pure):
        assert backend.decode_columns(stream.data[:cut], start, end, True) == whole


@given(streams(), st.data())
def test_corrupted_byte_raises_in_both(
    native: ModuleType, pure: ModuleType, stream: Stream, data: st.DataObject
) -> None:
    index = data.draw(st.integers(min_value=0, max_value=len(stream.positions) - 1))
    pos = stream.positions[index]
    end = stream.positions[index + 1] if index + 1 < len(stream.positions) else len(stream.data)
    # The bytes each format's CRC covers, past the magic: v2 attributes.., legacy attributes..
    first = pos + (21 if stream.magics[index] == 2 else 17)
    at = data.draw(st.integers(min_value=first, max_value=end - 1))
    bad = bytearray(stream.data)
    bad[at] ^= data.draw(st.integers(min_value=1, max_value=255))
    for backend in (native, pure):
        with pytest.raises(errors.CorruptRecordError, match=f"position {pos}\\b"):
            backend.decode_columns(bytes(bad), 0, I64_MAX, True)


def test_walk_edges(native: ModuleType, pure: ModuleType) -> None:
    one = BUILDER.build_batch([(5, 1000, b"k", b"v", [])])
    for backend in (native, pure):
        # Empty input, and a tail too short for a length field.
        for data in (b"", one + b"\x00" * 11):
            count, next_offset, keys, *_ = backend.decode_columns(data, 3, 10, False)
            assert count == (1 if data else 0)
            assert next_offset == (6 if data else 3)
            assert i32s(keys[1]) == ([0, 1] if data else [0])
        # A length field below 14 is corrupt, even at the end; a magic 3 too.
        tiny = one + struct.pack(">qi", 6, 13) + b"\x00" * 13
        with pytest.raises(errors.CorruptRecordError, match=f"position {len(one)}\\b"):
            backend.decode_columns(tiny, 0, 100, False)
        magic3 = bytearray(one * 2)
        magic3[len(one) + 16] = 3
        with pytest.raises(errors.CorruptRecordError, match=f"position {len(one)}\\b"):
            backend.decode_columns(bytes(magic3), 0, 100, False)
        # A batch at or past end_offset is not even validated.
        bad_tail = bytearray(one + BUILDER.build_batch([(9, 1000, None, b"x", [])]))
        bad_tail[-1] ^= 1
        assert backend.decode_columns(bytes(bad_tail), 0, 9, False)[:2] == (1, 9)
        with pytest.raises(errors.CorruptRecordError):
            backend.decode_columns(bytes(bad_tail), 0, 10, False)


def test_next_offset_rules(native: ModuleType, pure: ModuleType) -> None:
    gap = BUILDER.build_batch(
        [(10, 1, None, b"a", []), (12, 2, None, b"b", [])], base_offset=8, last_offset_delta=8
    )
    control = build_control_batch(
        ControlType.COMMIT, producer_id=1, producer_epoch=0, timestamp=5, offset=17
    )
    data = gap + control
    for backend in (native, pure):

        def window(start: int, end: int, b: ModuleType = backend) -> tuple[int, int]:
            count, next_offset, *_ = b.decode_columns(data, start, end, False)
            return count, next_offset

        assert window(0, 100) == (2, 18)  # past the control batch
        assert window(0, 11) == (1, 11)  # record 12 reached the end
        assert window(0, 13) == (2, 13)  # the control batch (17) starts past the end
        # Without the control batch no record reaches 13: the gap batch's end.
        assert backend.decode_columns(gap, 0, 13, False)[:2] == (2, 17)
        assert window(11, 12) == (0, 12)
        assert window(17, 100) == (0, 18)  # only a control batch: no row, still moves
        assert window(50, 100) == (0, 50)  # never below start_offset
        assert window(0, 17) == (2, 17)  # the control batch starts at end_offset


def test_timestamps_and_types(native: ModuleType, pure: ModuleType) -> None:
    create = BUILDER.build_batch([(0, 1500, None, b"a", []), (1, -1, None, b"b", [])])
    append = BUILDER.build_batch(
        [(2, 10, None, b"c", []), (3, 20, None, b"d", [])], timestamp_type=1
    )
    v0 = BUILDER.build_legacy([(4, 99, None, b"e", [])], 0)
    v1 = BUILDER.build_legacy([(5, 7, None, b"f", []), (6, 8, None, b"g", [])], 1, 2, 1)
    data = create + append + v0 + v1
    for backend in (native, pure):
        count, _, _, _, _, timestamps, types, _ = backend.decode_columns(data, 0, 100, False)
        assert count == 7
        assert struct.unpack("<7q", timestamps) == (
            1_500_000,
            -1000,
            20_000,
            20_000,
            -1000,
            8000,
            8000,
        )
        assert struct.unpack("<7i", types) == (0, 0, 1, 1, 0, 1, 1)


def test_bitmaps_and_headers_layout(native: ModuleType, pure: ModuleType) -> None:
    recs = [
        (i, 0, None if i % 3 == 0 else bytes([i]), b"v", [("k", None if i % 2 else b"x")] * (i % 3))
        for i in range(10)
    ]
    data = BUILDER.build_batch(recs, compression=3)
    for backend in (native, pure):
        _, _, keys, values, _, _, _, headers = backend.decode_columns(data, 0, 100, True)
        # Rows 0, 3, 6, 9 have null keys: LSB first, padded to two bytes.
        assert keys[0] == bytes([0b1011_0110, 0b01])
        assert values[0] is None
        list_offsets, key_offsets, key_data, value_validity, value_offsets, value_data = headers
        assert i32s(list_offsets) == [0, 0, 1, 3, 3, 4, 6, 6, 7, 9, 9]
        assert key_data == b"k" * 9 and i32s(key_offsets) == list(range(10))
        # Header values: row 1 null, row 2 x x, row 4 x, row 5 null null, row 7 null,
        # row 8 x x (odd rows have null values).
        assert value_validity == bytes([0b1000_1110, 0b1])
        assert value_data == b"x" * 5
        assert i32s(value_offsets) == [0, 0, 1, 2, 3, 3, 3, 3, 4, 5]
        assert backend.decode_columns(data, 0, 100, False)[7] is None


# ---------------------------------------------------------------- kafkacore.arrow


@contextmanager
def arrow_backend(name: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kafkacore.arrow, "backend", load_backend(name))
        yield


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def expected_rows(
    data: bytes, topic: str, partition: int, start: int, end: int, headers: bool
) -> tuple[list[dict[str, Any]], bool]:
    """The rows ``kafkacore.record`` iteration gives, and whether ``end`` was reached."""
    rows: list[dict[str, Any]] = []
    for pos, magic, _size in iter_batches(data):
        if magic == 2:
            header = batch_header(data, pos)
            if header.base_offset >= end:
                return rows, True
            if header.is_control:
                continue
            ts_type = int(header.timestamp_type)
        else:
            attributes = BUILDER.legacy_header(data, pos)[4]
            ts_type = 1 if magic == 1 and attributes & 0x08 else 0
        for r in records(data, pos):
            if r.offset >= end:
                return rows, True
            if r.offset < start:
                continue
            row = {
                "key": r.key,
                "value": r.value,
                "topic": topic,
                "partition": partition,
                "offset": r.offset,
                "timestamp": EPOCH + timedelta(milliseconds=r.timestamp),
                "timestampType": ts_type,
            }
            if headers:  # no headers: null, as Spark's Kafka source reports them
                row["headers"] = [{"key": k, "value": v} for k, v in r.headers] or None
            rows.append(row)
    return rows, False


@pytest.mark.parametrize("backend_name", ["native", "pure"])
@given(stream=streams(), data=st.data(), headers=st.booleans())
def test_arrow_decode_equals_record_iteration(
    backend_name: str, stream: Stream, data: st.DataObject, headers: bool
) -> None:
    start, end = data.draw(windows(stream))
    topic = data.draw(st.text(min_size=1, max_size=20))
    partition = data.draw(st.integers(min_value=0, max_value=2**31 - 1))
    with arrow_backend(backend_name):
        batch, next_offset = kafkacore.arrow.decode(
            stream.data, topic, partition, start, end, headers
        )
    batch.validate(full=True)
    assert batch.schema == kafkacore.arrow.spark_schema(headers)
    rows, reached_end = expected_rows(stream.data, topic, partition, start, end, headers)
    assert batch.to_pylist() == rows
    if reached_end:
        assert next_offset == end


def test_arrow_empty_and_schema() -> None:
    for headers in (False, True):
        batch, next_offset = kafkacore.arrow.decode(b"", "t", 0, 42, 50, headers)
        assert batch.num_rows == 0 and next_offset == 42
        assert batch.schema == kafkacore.arrow.spark_schema(headers)
    schema = kafkacore.arrow.spark_schema(True)
    assert schema.names == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "headers",
    ]
    assert schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert all(f.nullable for f in schema)
    assert kafkacore.arrow.spark_schema(False).names == schema.names[:-1]


def test_spark_schema_is_sparks_kafka_schema() -> None:
    """Equal to what PySpark's own ``to_arrow_schema`` makes of Spark's Kafka schema."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    with_headers = [*fields, StructField("headers", ArrayType(header))]
    assert to_arrow_schema(StructType(fields), timezone="UTC") == kafkacore.arrow.spark_schema(
        False
    )
    assert to_arrow_schema(
        StructType(with_headers), timezone="UTC"
    ) == kafkacore.arrow.spark_schema(True)
