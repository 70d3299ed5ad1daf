"""kafkacore.pure: RecordBatch v2 built, read and validated as Kafka does."""

from __future__ import annotations

import struct
from typing import Any

import google_crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.errors import CorruptRecordError, UnsupportedCompressionError
from kafkacore.pure import batch_header, batch_records, build_batch, compress, validate_batch

# ---------------------------------------------------------------- layout


def test_tiny_batch_byte_layout_by_hand() -> None:
    data = build_batch([(5, 1000, b"k", b"v", [("h", b"x")])])
    record = bytes.fromhex(
        "18"  # length varint 12
        "00"  # attributes
        "00"  # timestampDelta 0
        "00"  # offsetDelta 0
        "02"
        "6b"  # key length 1, "k"
        "02"
        "76"  # value length 1, "v"
        "02"  # one header
        "02"
        "68"  # header key length 1, "h"
        "02"
        "78"  # header value length 1, "x"
    )
    header_after_crc = bytes.fromhex(
        "0000"  # attributes
        "00000000"  # lastOffsetDelta
        "00000000000003e8"  # baseTimestamp 1000
        "00000000000003e8"  # maxTimestamp 1000
        "ffffffffffffffff"  # producerId -1
        "ffff"  # producerEpoch -1
        "ffffffff"  # baseSequence -1
        "00000001"  # recordsCount
    )
    crc = google_crc32c.value(header_after_crc + record)
    expected = (
        bytes.fromhex("0000000000000005")  # baseOffset
        + bytes.fromhex("0000003e")  # batchLength 62 = 49 + 13
        + bytes.fromhex("ffffffff")  # partitionLeaderEpoch -1
        + b"\x02"  # magic
        + crc.to_bytes(4, "big")
        + header_after_crc
        + record
    )
    assert data == expected
    assert len(data) == 74
    assert batch_header(data) == (5, 62, -1, 2, crc, 0, 0, 1000, 1000, -1, -1, -1, 1)


def test_header_fields_and_attributes() -> None:
    data = build_batch(
        [(100, 2000, None, b"a", []), (103, 1500, b"b", None, [])],
        base_offset=90,
        last_offset_delta=20,
        compression=3,
        timestamp_type=1,
        partition_leader_epoch=7,
        producer_id=12345,
        producer_epoch=3,
        base_sequence=42,
        transactional=True,
    )
    header = validate_batch(data)
    base, length, ple, magic, crc, attrs, lod, base_ts, max_ts, pid, epoch, seq, count = header
    assert (base, ple, magic, lod, base_ts, max_ts) == (90, 7, 2, 20, 2000, 2000)
    assert (pid, epoch, seq, count) == (12345, 3, 42, 2)
    assert attrs == 3 | 1 << 3 | 1 << 4
    assert length == len(data) - 12
    assert crc == google_crc32c.value(data[21:])
    # LogAppendTime: every record reads maxTimestamp
    assert batch_records(data) == [(100, 2000, None, b"a", []), (103, 2000, b"b", None, [])]


def test_control_and_delete_horizon_bits() -> None:
    marker_key = struct.pack(">hh", 0, 1)  # version 0, COMMIT
    marker_value = struct.pack(">hi", 0, 5)  # version 0, coordinatorEpoch 5
    data = build_batch(
        [(10, 3000, marker_key, marker_value, [])],
        control=True,
        transactional=True,
        producer_id=1,
        producer_epoch=0,
        delete_horizon_ms=9000,
    )
    header = batch_header(data)
    assert header[5] == 1 << 4 | 1 << 5 | 1 << 6
    assert header[7] == 9000  # baseTimestamp holds the delete horizon
    assert header[8] == 3000
    # timestampDelta = 3000 - 9000, so the record still reads 3000
    assert batch_records(data) == [(10, 3000, marker_key, marker_value, [])]


def test_delete_horizon_zero_sets_the_bit() -> None:
    data = build_batch([(0, 5, None, None, [])], delete_horizon_ms=0)
    assert batch_header(data)[5] == 1 << 6 and batch_header(data)[7] == 0


# ---------------------------------------------------------------- round trips

headers_st = st.lists(st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=8)), max_size=3)


@st.composite
def records_st(draw: st.DrawFn) -> list[Any]:
    n = draw(st.integers(1, 12))
    offset = draw(st.integers(0, 2**45))
    out = []
    for _ in range(n):
        ts = draw(st.integers(-1, 2**42))
        key = draw(st.none() | st.binary(max_size=20))
        value = draw(st.none() | st.binary(max_size=200))
        out.append((offset, ts, key, value, draw(headers_st)))
        offset += draw(st.integers(1, 50))
    return out


@given(records_st(), st.sampled_from([0, 1, 2, 3, 4]), st.sampled_from([0, 1]))
def test_round_trip_every_codec_and_timestamp_type(
    records: list[Any], codec: int, timestamp_type: int
) -> None:
    data = build_batch(records, compression=codec, timestamp_type=timestamp_type)
    header = validate_batch(data)
    assert header == batch_header(data)
    assert header[5] & 7 == codec and (header[5] >> 3) & 1 == timestamp_type
    assert header[0] == records[0][0]
    assert header[6] == records[-1][0] - records[0][0]
    assert header[7] == records[0][1]
    assert header[8] == max(r[1] for r in records)
    assert header[12] == len(records)
    got = batch_records(data)
    if timestamp_type == 0:
        assert got == records
    else:
        assert got == [(o, header[8], k, v, h) for o, _, k, v, h in records]


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_compressed_section_is_the_codec_of_the_records(codec: int) -> None:
    records = [(i, 100 + i, b"key", b"value" * 20, []) for i in range(10)]
    plain = build_batch(records)
    packed = build_batch(records, compression=codec)
    assert packed[:8] == plain[:8] and packed[21:61] == bytes([0, codec]) + plain[23:61]
    from kafkacore.pure import decompress

    assert decompress(codec, packed[61:]) == plain[61:]
    assert batch_records(packed) == batch_records(plain) == records


def test_batches_at_positions_in_a_buffer() -> None:
    a = build_batch([(0, 1, b"a", b"1", [])])
    b = build_batch([(1, 2, b"b", b"2", [])], compression=1)
    buf = a + b + b"tail"
    assert batch_records(buf, len(a)) == [(1, 2, b"b", b"2", [])]
    assert validate_batch(buf, 0)[0] == 0
    assert batch_header(bytearray(buf), len(a))[0] == 1


# ---------------------------------------------------------------- build errors


@pytest.mark.parametrize(
    ("records", "kwargs", "error"),
    [
        ([], {}, ValueError),
        ([(0, 0, None, None, [])], {"timestamp_type": 2}, ValueError),
        ([(0, 0, None, None, [])], {"compression": 5}, UnsupportedCompressionError),
        ([(1, 0, None, None, []), (1, 0, None, None, [])], {}, ValueError),
        ([(2, 0, None, None, []), (1, 0, None, None, [])], {}, ValueError),
        ([(1, 0, None, None, [])], {"base_offset": 2}, ValueError),
        ([(2**31, 0, None, None, [])], {"base_offset": 0}, ValueError),
        ([(5, 0, None, None, [])], {"last_offset_delta": -1}, ValueError),
        ([(0, 0, None, None, []), (3, 0, None, None, [])], {"last_offset_delta": 2}, ValueError),
        ([(0, 0, None, None, [])], {"last_offset_delta": 2**31}, ValueError),
        # ints that do not fit their Java type: OverflowError, like the native conversion
        ([(0, 0, None, None, [])], {"producer_epoch": 2**15}, OverflowError),
        ([(0, 0, None, None, [])], {"partition_leader_epoch": 2**31}, OverflowError),
        ([(0, 0, None, None, [])], {"base_sequence": -(2**31) - 1}, OverflowError),
        ([(0, 2**63, None, None, [])], {}, OverflowError),
        ([(2**63, 0, None, None, [])], {}, OverflowError),
        # the codec is checked before the other meanings
        ([], {"compression": 9}, UnsupportedCompressionError),
        (
            [(0, 0, None, None, [])],
            {"compression": 9, "timestamp_type": 3},
            UnsupportedCompressionError,
        ),
        ([(0, 0, None, None, [("\udc80", None)])], {}, ValueError),
    ],
)
def test_build_refuses(records: list[Any], kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        build_batch(records, **kwargs)


def test_timestamp_deltas_wrap_like_java() -> None:
    records = [(0, -(2**62), None, b"a", []), (1, 2**62 + 5, None, b"b", [])]
    data = build_batch(records)
    assert batch_records(data) == records


def test_build_extends_last_offset_delta() -> None:
    data = build_batch([(0, 0, None, None, [])], last_offset_delta=9)
    assert batch_header(data)[6] == 9
    assert batch_records(data) == [(0, 0, None, None, [])]


# ---------------------------------------------------------------- corruption


def _sample(codec: int) -> bytes:
    return build_batch(
        [(7, 1000, b"key", b"value" * 4, [("h", b"1")]), (8, 1001, None, b"v2", [])],
        compression=codec,
        partition_leader_epoch=3,
        producer_id=9,
        producer_epoch=1,
        base_sequence=0,
    )


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_flipping_any_covered_byte_is_corrupt(codec: int) -> None:
    good = _sample(codec)
    for pos in range(len(good)):
        bad = bytearray(good)
        bad[pos] ^= 0x41
        if pos < 8 or 12 <= pos < 16:
            # baseOffset and partitionLeaderEpoch lie outside the CRC
            validate_batch(bytes(bad))
            continue
        with pytest.raises(CorruptRecordError, match=r"buffer, position 0\b"):
            validate_batch(bytes(bad))
        with pytest.raises(CorruptRecordError):
            batch_records(bytes(bad))


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_truncated_batch_is_corrupt(codec: int) -> None:
    good = _sample(codec)
    for cut in range(len(good)):
        with pytest.raises(CorruptRecordError):
            validate_batch(good[:cut])


def test_header_only_checks() -> None:
    good = _sample(0)
    with pytest.raises(CorruptRecordError, match="60 bytes left"):
        batch_header(good[:60])
    bad = bytearray(good)
    bad[16] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        batch_header(bytes(bad))
    bad = bytearray(good)
    bad[30] ^= 1  # inside the CRC: batch_header does not look
    assert batch_header(bytes(bad))[0] == 7
    with pytest.raises(ValueError):
        batch_header(good, -1)
    with pytest.raises(CorruptRecordError, match=f"position {len(good) + 5}"):
        batch_header(good, len(good) + 5)


def _reseal(
    section: bytes,
    count: int,
    last_offset_delta: int = 0,
    attributes: int = 0,
    base_offset: int = 0,
    base_timestamp: int = 0,
) -> bytes:
    """A v2 batch around a hand-made records section, with a correct CRC."""
    body = struct.pack(
        ">hiqqqhii", attributes, last_offset_delta, base_timestamp, 0, -1, -1, -1, count
    )
    crc = google_crc32c.value(body + section)
    head = struct.pack(">qiib", base_offset, 49 + len(section), -1, 2) + crc.to_bytes(4, "big")
    return head + body + section


def test_offsets_and_timestamps_wrap_like_java_longs() -> None:
    # timestampDelta 1 (varlong 02), offsetDelta 1 (varint 02)
    record = bytes.fromhex("0c000202010100")
    data = _reseal(record, 1, 1, base_offset=2**63 - 1, base_timestamp=2**63 - 1)
    assert batch_records(data) == [(-(2**63), -(2**63), None, None, [])]


def test_record_structure_checks() -> None:
    ok = bytes.fromhex("0c000000010100")  # null key, null value, 0 headers
    assert batch_records(_reseal(ok, 1)) == [(0, 0, None, None, [])]
    cases = {
        "count too high": _reseal(ok, 2, 1),
        "bytes left": _reseal(ok + b"\x00", 1),
        "negative count": _reseal(ok, -1),
        "length mismatch": _reseal(bytes.fromhex("0e00000001010000"), 1),
        "key below -1": _reseal(bytes.fromhex("0c000000030100"), 1),
        "key past body": _reseal(bytes.fromhex("0c000000040100"), 1),
        "negative headers": _reseal(bytes.fromhex("0c000000010101"), 1),
        "null header key": _reseal(bytes.fromhex("100000000101020101"), 1),
        "header key not utf8": _reseal(bytes.fromhex("1200000001010202ff01"), 1),
        "delta above last": _reseal(bytes.fromhex("0c000002010100"), 1, 0),
        "deltas not increasing": _reseal(ok + ok, 2, 1),
        "varint too long": _reseal(bytes.fromhex("1a0000808080808001010100"), 1),
        "codec 5": _reseal(ok, 1, 0, 5),
        "undecodable gzip": _reseal(b"not gzip", 1, 0, 1),
    }
    for name, data in cases.items():
        with pytest.raises(CorruptRecordError, match="buffer, position 0"):
            validate_batch(data)
            pytest.fail(name)


def test_empty_batch_is_valid() -> None:
    empty = _reseal(b"", 0, 5)
    assert validate_batch(empty)[12] == 0
    assert batch_records(empty) == []
    # with a codec and no bytes at all, nothing is decompressed
    assert batch_records(_reseal(b"", 0, 0, 4)) == []
    assert batch_records(_reseal(compress(4, b""), 0, 0, 4)) == []
