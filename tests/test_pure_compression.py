"""kafkacore.pure: the codecs as Kafka's Java clients write and read them."""

from __future__ import annotations

import gzip
import struct

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.errors import CorruptRecordError, UnsupportedCompressionError
from kafkacore.pure import compress, decompress
from kafkacore.pure.compression import decompress_legacy, xxh32

SAMPLES = [b"", b"x", b"hello kafka " * 1000, bytes(range(256)) * 600]


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("data", SAMPLES, ids=["empty", "one", "text", "binary"])
def test_round_trip(codec: int, data: bytes) -> None:
    packed = compress(codec, data)
    assert decompress(codec, packed) == data
    if codec == 0:
        assert packed == data


@given(st.sampled_from([1, 2, 3, 4]), st.binary(max_size=70_000))
def test_round_trip_any(codec: int, data: bytes) -> None:
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", [5, 6, 7, -1, 100])
def test_unknown_codec(codec: int) -> None:
    with pytest.raises(UnsupportedCompressionError):
        compress(codec, b"abc")
    with pytest.raises(UnsupportedCompressionError):
        decompress(codec, b"abc")


def test_gzip_is_a_gzip_member_level_6() -> None:
    data = b"abc" * 10_000
    packed = compress(1, data)
    assert packed[:3] == b"\x1f\x8b\x08"
    assert gzip.decompress(packed) == data
    assert packed[8] == 0  # XFL 0: the default level (6), not 9 or 1


def test_gzip_reads_concatenated_members_and_ignores_trailing_garbage() -> None:
    two = gzip.compress(b"one,") + gzip.compress(b"two")
    assert decompress(1, two) == b"one,two"
    assert decompress(1, gzip.compress(b"one") + b"\x00junk") == b"one"


def test_snappy_xerial_framing_layout() -> None:
    data = bytes(range(256)) * 300  # 76800 bytes: 32 KiB + 32 KiB + 11264
    packed = compress(2, data)
    assert packed[:8] == b"\x82SNAPPY\x00"
    assert struct.unpack(">ii", packed[8:16]) == (1, 1)
    pos, blocks = 16, []
    while pos < len(packed):
        (length,) = struct.unpack_from(">i", packed, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(packed[pos + 4 : pos + 4 + length])))
        pos += 4 + length
    assert pos == len(packed)
    assert [len(b) for b in blocks] == [32768, 32768, 11264]
    assert b"".join(blocks) == data


def test_snappy_accepts_raw_blocks_and_concatenated_streams() -> None:
    raw = bytes(cramjam.snappy.compress_raw(b"raw snappy block" * 10))
    assert decompress(2, raw) == b"raw snappy block" * 10
    assert decompress(2, compress(2, b"a" * 5) + compress(2, b"b" * 5)) == b"aaaaabbbbb"
    assert decompress(2, compress(2, b"")) == b""


@pytest.mark.parametrize(
    "bad",
    [
        b"\x82SNAPPY\x00\x00\x00",  # truncated header
        b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"\x00\x00",  # truncated chunk length
        b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, 100) + b"abc",  # chunk runs past the end
        b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, -5),  # negative chunk length
        b"\xff\xff\xff\xff\xff",  # raw garbage
    ],
)
def test_snappy_corrupt(bad: bytes) -> None:
    with pytest.raises(CorruptRecordError, match="buffer, position 0"):
        decompress(2, bad)


def test_lz4_frame_as_kafka_writes_it() -> None:
    packed = compress(3, b"q" * 200_000)
    # magic, FLG 0x60 (v1, independent blocks, no checksums, no size), BD 0x40 (64 KiB)
    assert packed[:6] == b"\x04\x22\x4d\x18\x60\x40"
    assert packed[6] == (xxh32(packed[4:6]) >> 8) & 0xFF
    assert packed[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum
    info = lz4.frame.get_frame_info(packed)
    assert info["block_size"] == 65536 and not info["block_linked"]
    assert not info["content_checksum"] and info["content_size"] == 0


def test_lz4_ignores_bytes_after_the_frame() -> None:
    assert decompress(3, compress(3, b"frame") + b"trailing") == b"frame"


def test_xxh32_vectors() -> None:
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


def test_legacy_v0_lz4_with_kafka_08_broken_header_checksum() -> None:
    good = bytearray(compress(3, b"old client" * 20))
    good[6] ^= 0xFF  # the old clients' wrong HC byte
    broken = bytes(good)
    with pytest.raises(CorruptRecordError):
        decompress(3, broken)
    assert decompress_legacy(3, broken, 0, "buffer", 0) == b"old client" * 20
    with pytest.raises(CorruptRecordError):
        decompress_legacy(3, broken, 1, "buffer", 0)  # magic 1 checks it


def test_zstd_frame_without_content_size_and_concatenated_frames() -> None:
    packed = compress(4, b"z" * 10_000)
    assert zstandard.get_frame_parameters(packed).content_size == zstandard.CONTENTSIZE_UNKNOWN
    streamed = zstandard.ZstdCompressor(level=3).compress(b"sized")
    assert decompress(4, packed + streamed) == b"z" * 10_000 + b"sized"


@pytest.mark.parametrize("codec", [1, 3, 4])
def test_truncated_or_garbage_is_corrupt(codec: int) -> None:
    packed = compress(codec, bytes(range(256)) * 100)
    for bad in (packed[: len(packed) // 2], packed[:-1], b"definitely not compressed"):
        with pytest.raises(CorruptRecordError, match="position 0"):
            decompress(codec, bad)


def test_zstd_trailing_garbage_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decompress(4, compress(4, b"abc") + b"junk")
