"""kafkacore.pure: CRC-32C / CRC-32 vectors and the zig-zag varints of the v2 record."""

from __future__ import annotations

import zlib

import google_crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.pure import crc32, crc32c
from kafkacore.pure.varint import (
    VarintError,
    read_varint,
    read_varlong,
    size_of_varint,
    size_of_varlong,
    write_varint,
    write_varlong,
)

# ---------------------------------------------------------------- CRC


def test_crc32c_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # RFC 3720 (iSCSI) B.4 test vectors
        (bytes(32), 0x8A9136AA),
        (b"\xff" * 32, 0x62A8AB43),
        (bytes(range(32)), 0x46DD794E),
        (bytes(range(31, -1, -1)), 0x113FDB5C),
        (b"", 0),
        (b"a", 0xC1D04330),
    ],
)
def test_crc32c_vectors(data: bytes, expected: int) -> None:
    assert crc32c(data) == expected


@given(st.binary(max_size=40_000))
def test_crc32c_matches_google(data: bytes) -> None:
    assert crc32c(data) == google_crc32c.value(data)


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 15, 16, 17, 4096 * 8 - 1, 4096 * 8, 4096 * 8 + 9])
def test_crc32c_word_boundaries(size: int) -> None:
    data = bytes((i * 37 + 11) % 256 for i in range(size))
    assert crc32c(data) == google_crc32c.value(data)


def test_crc32c_accepts_buffers() -> None:
    data = b"0123456789abcdef" * 3
    assert crc32c(bytearray(data)) == crc32c(memoryview(data)) == google_crc32c.value(data)


def test_crc32_vectors() -> None:
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32(b"") == 0
    assert crc32(b"\xff" * 100) == zlib.crc32(b"\xff" * 100)


# ---------------------------------------------------------------- varints

VARINT_CASES = [
    (0, b"\x00"),
    (-1, b"\x01"),
    (1, b"\x02"),
    (-2, b"\x03"),
    (63, b"\x7e"),
    (-64, b"\x7f"),
    (64, b"\x80\x01"),
    (-65, b"\x81\x01"),
    (300, b"\xd8\x04"),
    (2**31 - 1, b"\xfe\xff\xff\xff\x0f"),
    (-(2**31), b"\xff\xff\xff\xff\x0f"),
]


@pytest.mark.parametrize(("value", "encoded"), VARINT_CASES)
def test_varint_known_encodings(value: int, encoded: bytes) -> None:
    out = bytearray()
    write_varint(out, value)
    assert bytes(out) == encoded
    assert size_of_varint(value) == len(encoded)
    assert read_varint(encoded, 0, len(encoded)) == (value, len(encoded))


def test_varlong_extremes() -> None:
    for value, size in [(2**63 - 1, 10), (-(2**63), 10), (2**31, 5), (-(2**35), 6)]:
        out = bytearray()
        write_varlong(out, value)
        assert len(out) == size == size_of_varlong(value)
        assert read_varlong(bytes(out), 0, len(out)) == (value, size)


@given(st.integers(-(2**31), 2**31 - 1), st.binary(max_size=3))
def test_varint_round_trip(value: int, tail: bytes) -> None:
    out = bytearray(b"\x55")
    write_varint(out, value)
    buf = bytes(out) + tail
    assert read_varint(buf, 1, len(out)) == (value, len(out))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    out = bytearray()
    write_varlong(out, value)
    assert read_varlong(bytes(out), 0, len(out)) == (value, len(out))


def test_varint_too_long_is_malformed() -> None:
    with pytest.raises(VarintError, match="longer than 5"):
        read_varint(b"\x80\x80\x80\x80\x80\x00", 0, 6)
    with pytest.raises(VarintError, match="longer than 10"):
        read_varlong(b"\x80" * 10 + b"\x00", 0, 11)


def test_varint_truncated_is_malformed() -> None:
    with pytest.raises(VarintError):
        read_varint(b"\x80\x80", 0, 2)
    with pytest.raises(VarintError):
        read_varint(b"", 0, 0)
    # the field end bounds the read even when the buffer goes on
    with pytest.raises(VarintError):
        read_varlong(b"\x80\x01", 0, 1)


def test_varint_drops_bits_beyond_32_like_java() -> None:
    # 5th byte 0x7f: Java's `b << 28` keeps only its low 4 bits.
    assert read_varint(b"\xff\xff\xff\xff\x7f", 0, 5) == (-(2**31), 5)
    assert read_varint(b"\x80\x80\x80\x80\x70", 0, 5) == (0, 5)
    # 10th byte of a varlong: only its lowest bit survives `b << 63`.
    assert read_varlong(b"\x80" * 9 + b"\x7e", 0, 10) == (0, 10)
    assert read_varlong(b"\x80" * 9 + b"\x01", 0, 10) == (2**62, 10)
