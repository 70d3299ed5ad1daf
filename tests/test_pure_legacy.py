"""kafkacore.pure: legacy message sets v0/v1, plain and compressed wrappers."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.errors import CorruptRecordError, UnsupportedCompressionError
from kafkacore.pure import build_legacy, compress, legacy_header, legacy_records


def _message(
    offset: int,
    magic: int,
    attributes: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
) -> bytes:
    """One log entry written independently of kafkacore.pure.legacy."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, 4 + len(body), crc) + body


def _entries(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        out.append(data[pos : pos + 12 + size])
        pos += 12 + size
    return out


def test_v1_message_byte_layout_by_hand() -> None:
    data = build_legacy([(7, 1000, None, b"abc", [])], 1)
    body = bytes.fromhex("010000000000000003e8ffffffff00000003") + b"abc"
    expected = bytes.fromhex("000000000000000700000019") + zlib.crc32(body).to_bytes(4, "big")
    assert data == expected + body
    assert legacy_header(data) == (7, 25, zlib.crc32(body), 1, 0, 1000)
    assert legacy_records(data) == [(7, 1000, None, b"abc", [])]


def test_v0_message_byte_layout_by_hand() -> None:
    data = build_legacy([(3, 1234, b"k", None, [])], 0)
    assert data == _message(3, 0, 0, -1, b"k", None)
    assert legacy_header(data)[5] == -1  # v0 has no timestamp
    assert legacy_records(data) == [(3, -1, b"k", None, [])]


def test_uncompressed_set_is_one_message_per_record() -> None:
    records = [(10, 100, b"a", b"1", []), (12, 90, None, b"2", []), (13, 110, b"c", None, [])]
    data = build_legacy(records, 1, timestamp_type=1)
    entries = _entries(data)
    assert entries == [_message(o, 1, 0x08, ts, k, v) for o, ts, k, v, _ in records]
    # an uncompressed LogAppendTime message keeps its own timestamp
    assert [legacy_records(e)[0] for e in entries] == records


@pytest.mark.parametrize("codec", [1, 2, 3])
@pytest.mark.parametrize("magic", [0, 1])
def test_compressed_wrapper_layout(codec: int, magic: int) -> None:
    records = [(50 + i, 1000 - i if magic else -1, b"k%d" % i, b"v" * i, []) for i in range(5)]
    data = build_legacy(records, magic, codec)
    offset, size, _, m, attributes, timestamp = legacy_header(data)
    assert (offset, m, attributes & 7) == (54, magic, codec)
    assert size == len(data) - 12
    assert timestamp == (1000 if magic else -1)  # v1 wrapper: the max inner timestamp
    assert legacy_records(data) == records
    # the inner set: v1 relative offsets 0..n-1, v0 absolute offsets
    key_at = 18 if magic == 0 else 26
    assert struct.unpack_from(">i", data, key_at)[0] == -1  # null wrapper key
    from kafkacore.pure import decompress

    inner = decompress(codec, data[key_at + 8 :])
    offsets = [struct.unpack_from(">q", e)[0] for e in _entries(inner)]
    assert offsets == ([0, 1, 2, 3, 4] if magic else [50, 51, 52, 53, 54])


def test_v1_log_append_time_wrapper_stamps_inner_timestamps() -> None:
    inner = b"".join(
        _message(
            i,
            1,
            0,
            100 + i,
            None,
            b"x",
        )
        for i in range(3)
    )
    wrapper = _message(20, 1, 1 | 0x08, 777, None, compress(1, inner))
    assert legacy_records(wrapper) == [
        (18, 777, None, b"x", []),
        (19, 777, None, b"x", []),
        (20, 777, None, b"x", []),
    ]
    create_time = _message(20, 1, 1, 777, None, compress(1, inner))
    assert [r[1] for r in legacy_records(create_time)] == [100, 101, 102]


def test_v1_wrapper_at_offset_zero_keeps_relative_offsets() -> None:
    inner = b"".join(_message(i, 1, 0, 5, None, b"x") for i in range(3))
    assert [r[0] for r in legacy_records(_message(0, 1, 2, 5, None, compress(2, inner)))] == [
        0,
        1,
        2,
    ]


def test_v1_wrapper_offset_below_last_inner_is_corrupt() -> None:
    inner = b"".join(_message(i, 1, 0, 5, None, b"x") for i in range(3))
    with pytest.raises(CorruptRecordError, match="wrapper offset 1"):
        legacy_records(_message(1, 1, 1, 5, None, compress(1, inner)))


def test_v0_inner_messages_in_v1_wrapper_have_no_timestamp() -> None:
    inner = _message(0, 0, 0, -1, b"a", b"b")
    assert legacy_records(_message(9, 1, 1 | 0x08, 50, None, compress(1, inner))) == [
        (9, -1, b"a", b"b", [])
    ]


def test_partial_inner_tail_ends_the_set_like_kafka() -> None:
    inner = _message(0, 1, 0, 5, None, b"x") + _message(1, 1, 0, 5, None, b"y")
    for cut in (len(inner) - 3, len(inner) - 20, len(inner) - 30):  # 67, 50, 40 of 70
        wrapper = _message(8, 1, 1, 5, None, compress(1, inner[:cut]))
        records = legacy_records(wrapper)
        assert records == [(8, 5, None, b"x", [])]


@pytest.mark.parametrize(
    ("inner", "match"),
    [
        (b"", "no inner messages"),
        (_message(0, 1, 1, 5, None, b"nested"), "must not be compressed"),
        (struct.pack(">qi", 0, 5) + bytes(5), "below the minimum 14"),
        (_message(0, 1, 0, 5, None, b"x")[:-1] + b"y", "inner message CRC-32"),
        (_message(0, 3, 0, 5, None, b"x"), "inner message magic 3"),
    ],
)
def test_bad_inner_sets(inner: bytes, match: str) -> None:
    with pytest.raises(CorruptRecordError, match=match):
        legacy_records(_message(0, 1, 1, 5, None, compress(1, inner)))


def test_wrapper_errors() -> None:
    with pytest.raises(CorruptRecordError, match="null value"):
        legacy_records(_message(0, 1, 1, 5, None, None))
    with pytest.raises(CorruptRecordError, match="undecodable gzip"):
        legacy_records(_message(0, 1, 1, 5, None, b"not gzip"))
    with pytest.raises(UnsupportedCompressionError):
        legacy_records(_message(0, 1, 4, 5, None, compress(4, b"")))
    with pytest.raises(CorruptRecordError, match="codec 5"):
        legacy_records(_message(0, 1, 5, 5, None, b""))


def test_kafka_length_rules() -> None:
    # any negative length is null; bytes after the value are ignored (LegacyRecord)
    body = struct.pack(">bbqii", 1, 0, 5, -7, 2) + b"ab" + b"trailing"
    entry = struct.pack(">qiI", 4, 4 + len(body), zlib.crc32(body)) + body
    assert legacy_records(entry) == [(4, 5, None, b"ab", [])]
    body = struct.pack(">bbqii", 1, 0, 5, 3, 1) + b"ab"  # key runs into the value length
    entry = struct.pack(">qiI", 4, 4 + len(body), zlib.crc32(body)) + body
    with pytest.raises(CorruptRecordError, match="runs past"):
        legacy_records(entry)


def test_header_checks() -> None:
    good = build_legacy([(1, 5, b"k", b"v", [])], 1)
    assert legacy_header(good + b"next", 0)[0] == 1
    with pytest.raises(CorruptRecordError, match="does not fit"):
        legacy_header(good[:-1])
    with pytest.raises(CorruptRecordError, match="bytes left"):
        legacy_header(good[:11])
    for magic, size, match in [
        (2, None, "magic 2"),
        (1, 20, "v1 minimum 22"),
        (0, 13, "minimum 14"),
    ]:
        bad = bytearray(good)
        bad[16] = magic
        if size is not None:
            bad[8:12] = struct.pack(">i", size)
        with pytest.raises(CorruptRecordError, match=match):
            legacy_header(bytes(bad))
    with pytest.raises(ValueError):
        legacy_header(good, -1)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [0, 1, 2, 3])
def test_flipping_any_covered_byte_is_corrupt(magic: int, codec: int) -> None:
    good = build_legacy([(3, 9, b"k", b"v" * 10, []), (4, 10, None, b"w", [])], magic, codec)
    first = _entries(good)[0]
    for pos in range(8, len(first)):
        bad = bytearray(first)
        bad[pos] ^= 0x10
        with pytest.raises((CorruptRecordError, UnsupportedCompressionError)):
            legacy_records(bytes(bad))


def test_build_refuses() -> None:
    one = [(0, 5, None, b"x", [])]
    cases: list[tuple[Any, ...]] = [
        (one, 2, 0, 0, ValueError),
        ([], 1, 0, 0, ValueError),
        (one, 1, 0, 2, ValueError),
        (one, 1, 4, 0, UnsupportedCompressionError),
        (one, 1, 9, 0, UnsupportedCompressionError),
        ([(0, 5, None, b"x", [("h", None)])], 1, 0, 0, ValueError),
        ([(1, 5, None, b"x", []), (1, 5, None, b"x", [])], 1, 1, 0, ValueError),
        ([], 5, 9, 0, UnsupportedCompressionError),  # the codec is checked first
        ([(0, 2**63, None, b"x", [])], 1, 0, 0, OverflowError),
    ]
    for records, magic, codec, ts_type, error in cases:
        with pytest.raises(error):
            build_legacy(records, magic, codec, ts_type)


@st.composite
def legacy_sets(draw: st.DrawFn) -> tuple[list[Any], int, int]:
    magic = draw(st.sampled_from([0, 1]))
    codec = draw(st.sampled_from([0, 1, 2, 3]))
    n = draw(st.integers(1, 8))
    first = draw(st.integers(1, 2**40))
    step = 1 if codec and magic == 1 else draw(st.integers(1, 9))
    records = [
        (
            first + i * step,
            draw(st.integers(0, 2**41)) if magic else -1,
            draw(st.none() | st.binary(max_size=30)),
            draw(st.none() | st.binary(max_size=100)),
            [],
        )
        for i in range(n)
    ]
    return records, magic, codec


@given(legacy_sets())
def test_round_trip(case: tuple[list[Any], int, int]) -> None:
    records, magic, codec = case
    data = build_legacy(records, magic, codec)
    decoded = []
    pos = 0
    while pos < len(data):
        header = legacy_header(data, pos)
        decoded += legacy_records(data, pos)
        pos += 12 + header[1]
    assert decoded == records
