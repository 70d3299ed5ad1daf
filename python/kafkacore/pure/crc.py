"""Checksums of Kafka's record formats.

* CRC-32C (Castagnoli, reflected polynomial ``0x82F63B78``, init and final xor
  ``0xFFFFFFFF``) protects a RecordBatch v2: it covers bytes 21..end (attributes onwards),
  see :mod:`kafkacore.pure.batch`. Kafka's ``Crc32C``; check value
  ``crc32c(b"123456789") == 0xE3069283``.
* CRC-32 (IEEE 802.3, the zlib/``java.util.zip.CRC32`` one) protects a legacy v0/v1
  message: it covers magic..end, see :mod:`kafkacore.pure.legacy`.

CRC-32C is table driven, *slicing-by-8*: eight 256-entry tables let one step consume an
8-byte little-endian word with eight lookups instead of eight dependent byte steps.
Thread-safe (pure functions over immutable tables).
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["crc32", "crc32_of", "crc32c", "crc32c_of"]

CRC32C_POLYNOMIAL = 0x82F63B78  # reflected form of 0x1EDC6F41


def _make_tables() -> tuple[tuple[int, ...], ...]:
    base = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ CRC32C_POLYNOMIAL if c & 1 else c >> 1
        base.append(c)
    tables = [base]
    # tables[k][n]: the CRC of byte n followed by k zero bytes.
    for _ in range(7):
        prev = tables[-1]
        tables.append([(prev[n] >> 8) ^ base[prev[n] & 0xFF] for n in range(256)])
    return tuple(tuple(t) for t in tables)


_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _make_tables()
_WORDS = 4096  # 8-byte words unpacked per struct call (bounds the temporary tuple)
_WORD_CHUNK = struct.Struct(f"<{_WORDS}Q")


def _update(crc: int, data: memoryview) -> int:
    """Feed ``data`` to a running (pre-inverted) CRC-32C register."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    n = len(data)
    pos = 0
    words_end = n - (n % 8)
    while pos < words_end:
        count = min(_WORDS, (words_end - pos) // 8)
        fmt = _WORD_CHUNK if count == _WORDS else struct.Struct(f"<{count}Q")
        for word in fmt.unpack_from(data, pos):
            v = word ^ crc
            crc = (
                t7[v & 0xFF]
                ^ t6[(v >> 8) & 0xFF]
                ^ t5[(v >> 16) & 0xFF]
                ^ t4[(v >> 24) & 0xFF]
                ^ t3[(v >> 32) & 0xFF]
                ^ t2[(v >> 40) & 0xFF]
                ^ t1[(v >> 48) & 0xFF]
                ^ t0[v >> 56]
            )
        pos += count * 8
    for b in data[words_end:]:
        crc = (crc >> 8) ^ t0[(crc ^ b) & 0xFF]
    return crc


def crc32c_of(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C of any contiguous buffer (a slice view avoids a copy)."""
    return _update(0xFFFFFFFF, memoryview(data).cast("B")) ^ 0xFFFFFFFF


def crc32_of(data: bytes | bytearray | memoryview) -> int:
    """CRC-32 (IEEE) of any contiguous buffer."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data: bytes, /) -> int:
    """CRC-32C (Castagnoli) of ``data``, as stored in RecordBatch v2."""
    return crc32c_of(data)


def crc32(data: bytes, /) -> int:
    """CRC-32 (IEEE) of ``data``, as stored in legacy v0/v1 messages."""
    return crc32_of(data)
