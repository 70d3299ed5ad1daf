"""Decompression bounds, both backends: regression tests of the fuzzers' findings.

* cargo-fuzz ``decompress``: a raw snappy block of 7 bytes declaring ~1 GiB made the
  native decoder allocate the declared size (and the pure one, through cramjam, 4 GiB of
  address space for a declared 2**32 - 1) before decoding anything. Both now refuse a
  declared length the block's bytes cannot produce (22 output bytes per input byte).
* differential: the pure backend had no cap at all for gzip, lz4 and zstd (the native
  one stops at 1 GiB); it now stops decoding past ``MAX_DECOMPRESSED_SIZE`` too.
"""

from __future__ import annotations

import resource
from types import ModuleType

import pytest

from kafkacore.errors import CorruptRecordError
from kafkacore.pure import compression as pure_compression

# (block, what the refusal says): below the 1 GiB cap only the new check refuses it.
TINY_SNAPPY_BOMBS = [
    (bytes([0xF8, 0xFF, 0xFF, 0xFF, 0x03, 0x00, ord("x")]), "declares"),  # 1 GiB - 8
    (bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00, ord("x")]), "exceeds 1 GiB"),  # 4 GiB - 1
]


def _xerial(block: bytes) -> bytes:
    return pure_compression.SNAPPY_HEADER + len(block).to_bytes(4, "big") + block


@pytest.mark.parametrize(
    ("bomb", "says"), TINY_SNAPPY_BOMBS + [(_xerial(b), m) for b, m in TINY_SNAPPY_BOMBS]
)
def test_snappy_declared_length_refused_before_allocating(
    native: ModuleType, pure: ModuleType, bomb: bytes, says: str
) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for backend in (native, pure):
        with pytest.raises(CorruptRecordError, match=says):
            backend.decompress(2, bomb)
    # ru_maxrss is in KiB: touching the declared size would show here.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 64 * 1024


def test_densest_snappy_still_decodes(native: ModuleType, pure: ModuleType) -> None:
    data = b"\x07" * 200_000
    for writer in (native, pure):
        for reader in (native, pure):
            assert reader.decompress(2, writer.compress(2, data)) == data


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_pure_backend_caps_output(
    pure: ModuleType, monkeypatch: pytest.MonkeyPatch, codec: int
) -> None:
    cap = 4096
    monkeypatch.setattr(pure_compression, "MAX_DECOMPRESSED_SIZE", cap)
    assert pure.decompress(codec, pure.compress(codec, b"z" * cap)) == b"z" * cap
    with pytest.raises(CorruptRecordError, match="exceeds 1 GiB"):
        pure.decompress(codec, pure.compress(codec, b"z" * (cap + 1)))
    # Concatenated gzip members, xerial streams and zstd frames count together.
    if codec != 3:  # lz4: only the first frame is read, as Kafka reads it
        two = pure.compress(codec, b"z" * (cap // 2 + 1)) * 2
        with pytest.raises(CorruptRecordError, match="exceeds 1 GiB"):
            pure.decompress(codec, two)


# Differential finding: a magic-0 LZ4 wrapper whose block holds a match of offset 0 (the
# LZ4 block format calls it invalid). The native decoder refused it, the pure one
# (liblz4) copied the output onto itself there and returned records.
ZERO_OFFSET_LEGACY = bytes.fromhex(
    "0000000000000002000000c737740daa0003ffffffff000000b904224d18604082aa0000001600010051"
    "33304f2b520f00f11b026b300000002304bcb23dbe9f5238d80b5855f3f80cf726eb8b220262cd3ae2e7"
    "4b0db5f63fcfcc8c462f00b0000001000000215ea617b30d00f10a00026b33000000115e5323f263efe0"
    "7c4b319d738fb55cc43d0000b00000020000003d1f2de93f0d00f02600026b310000002dca450dbb402c"
    "12a481149c421ec7ddfab77f59f4a7f4aaef3cabd7f82e2891ef00613633939726816e845195e900000000"
)


def test_lz4_zero_offset_is_corrupt_on_both_backends(native: ModuleType, pure: ModuleType) -> None:
    for backend in (native, pure):
        with pytest.raises(CorruptRecordError):
            backend.legacy_records(ZERO_OFFSET_LEGACY)
        with pytest.raises(CorruptRecordError):
            backend.decode_columns(ZERO_OFFSET_LEGACY, 0, 2**62, True)
    frame = pure_compression.fix_lz4_header_checksum(ZERO_OFFSET_LEGACY[26:])
    with pytest.raises(CorruptRecordError, match="offset zero"):
        pure.decompress(3, frame)
    # Real frames (matches at every distance) still decode.
    data = bytes(range(256)) * 300 + b"a" * 5000
    assert pure.decompress(3, native.compress(3, data)) == data
