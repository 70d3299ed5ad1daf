"""Zig-zag variable-length integers of the v2 record format (Kafka's ``ByteUtils``).

A *varint* is a signed 32-bit value, zig-zag mapped to unsigned
(``(n << 1) ^ (n >> 31)``) and written little-endian in 7-bit groups, the high bit of
each byte meaning "more bytes follow": at most 5 bytes. A *varlong* is the same for
64-bit values: at most 10 bytes.

Decoding follows Java exactly (``ByteUtils.readVarint`` / ``readVarlong``): a varint
whose 5th byte still has the continuation bit (a varlong's 10th) is malformed; bits that
fall beyond 32 (64) are dropped, as Java's shifts drop them, before the zig-zag decode.

Thread-safe (pure functions).
"""

from __future__ import annotations

__all__ = [
    "MAX_VARINT_BYTES",
    "MAX_VARLONG_BYTES",
    "VarintError",
    "read_varint",
    "read_varlong",
    "size_of_varint",
    "size_of_varlong",
    "write_varint",
    "write_varlong",
]

MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF


class VarintError(ValueError):
    """A malformed or truncated varint; callers turn it into ``CorruptRecordError``."""


def _read_unsigned(buf: bytes, pos: int, end: int, max_bytes: int) -> tuple[int, int]:
    value = 0
    shift = 0
    limit = pos + max_bytes
    while True:
        if pos >= end:
            raise VarintError("varint runs past the end of its field")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if pos >= limit:
            raise VarintError(f"varint longer than {max_bytes} bytes")


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Decode the varint at ``buf[pos:end]``: ``(value, position after it)``."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:  # fast path: one byte, -64..63
            return (b >> 1) ^ -(b & 1), pos + 1
    raw, pos = _read_unsigned(buf, pos, end, MAX_VARINT_BYTES)
    raw &= _U32
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Decode the varlong at ``buf[pos:end]``: ``(value, position after it)``."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
    raw, pos = _read_unsigned(buf, pos, end, MAX_VARLONG_BYTES)
    raw &= _U64
    return (raw >> 1) ^ -(raw & 1), pos


def _write_unsigned(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    """Append the varint of ``value`` (which must fit in i32) to ``out``."""
    if 0 <= value < 64:
        out.append(value << 1)
    else:
        _write_unsigned(out, ((value << 1) ^ (value >> 31)) & _U32)


def write_varlong(out: bytearray, value: int) -> None:
    """Append the varlong of ``value`` (which must fit in i64) to ``out``."""
    if 0 <= value < 64:
        out.append(value << 1)
    else:
        _write_unsigned(out, ((value << 1) ^ (value >> 63)) & _U64)


def _size_of_unsigned(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def size_of_varint(value: int) -> int:
    """Bytes the varint of ``value`` takes."""
    return _size_of_unsigned(((value << 1) ^ (value >> 31)) & _U32)


def size_of_varlong(value: int) -> int:
    """Bytes the varlong of ``value`` takes."""
    return _size_of_unsigned(((value << 1) ^ (value >> 63)) & _U64)
