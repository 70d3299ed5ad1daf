"""Kafka's primitive wire types, read from and written to byte buffers.

The layouts (Kafka's ``protocol/types/Type.java`` and KIP-482):

* ``int8 int16 int32 int64 uint16 uint32 float64``: big-endian; ``bool``: one byte,
  non-zero is true; ``uuid``: 16 bytes (two big-endian int64s).
* ``varint``/``varlong``: zigzag, then LEB128; ``unsigned varint``: LEB128 (at most 5
  bytes for 32 bits).
* ``string``: int16 length (-1 = null where nullable) + UTF-8; ``compact string``:
  unsigned varint length + 1 (0 = null) + UTF-8.
* ``bytes``: int32 length (-1 = null) + bytes; ``compact bytes``: as compact string.
* ``array``: int32 count (-1 = null); ``compact array``: unsigned varint count + 1.
* ``records``: nullable bytes holding record batches, kept as a ``memoryview`` slice of
  the frame and never decoded here.
* ``tagged fields``: unsigned varint count, then per field ``uvarint tag``,
  ``uvarint size`` and ``size`` bytes, tags ascending.

Readers take ``(buf, pos)`` with ``buf`` a ``memoryview`` (or ``bytes``) and return
``(value, new_pos)``. Every length read from the wire is checked against what remains of
the buffer *before* anything is allocated; a negative length other than -1 (and -1
where null is not allowed) is an error. Short reads of fixed-size values surface as
``struct.error``/``IndexError``, which the codec turns into :class:`MalformedMessage`.

Pure functions over immutable data: thread-safe.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = [
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "Buffer",
    "MalformedMessage",
    "Records",
    "SizedRecords",
    "memory_records",
    "read_uvarint",
    "read_varint",
    "read_varlong",
    "write_uvarint",
    "write_varint",
    "write_varlong",
]

Buffer = bytes | bytearray | memoryview


class SizedRecords(Protocol):
    """Records the codec frames by their length without reading them: the transport
    writes them (the broker's ``FileRegion``, Kafka's ``FileRecords``)."""

    def __len__(self) -> int: ...


Records = Buffer | SizedRecords
"""A ``records`` field (Kafka's ``BaseRecords``): decoded, a ``memoryview`` slice of the
frame (``MemoryRecords``); written, any buffer or a :class:`SizedRecords`."""


def memory_records(records: Records | None) -> Buffer | None:
    """A decoded ``records`` field as the buffer it is (Kafka's ``(MemoryRecords)
    data.records()``): a :class:`SizedRecords` is only ever written, never read."""
    if records is None or isinstance(records, (bytes, bytearray, memoryview)):
        return records
    raise TypeError(f"records of type {type(records).__name__} are not in memory")


INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
FLOAT64 = struct.Struct(">d")
UUID = struct.Struct(">16s")

# struct format characters of the fixed-size types (runs of them are packed at once).
FIXED_FORMATS = {
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "bool": "?",
}
FIXED_SIZES = {name: struct.calcsize(">" + fmt) for name, fmt in FIXED_FORMATS.items()}

ZERO_UUID = uuid.UUID(int=0)
MAX_STRING = 0x7FFF


class MalformedMessage(ValueError):
    """The bytes do not hold a valid message of the expected type and version."""


# --- varints -----------------------------------------------------------------------------


def read_uvarint(buf: Buffer, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint of at most 32 bits (5 bytes)."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 28:
            raise MalformedMessage("unsigned varint is longer than 5 bytes")
    if result > 0xFFFFFFFF:
        raise MalformedMessage("unsigned varint overflows 32 bits")
    return result, pos


def _read_uvarlong(buf: Buffer, pos: int, max_shift: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > max_shift:
            raise MalformedMessage("varint is too long")


def read_varint(buf: Buffer, pos: int) -> tuple[int, int]:
    """A zigzag varint (32 bits)."""
    raw, pos = _read_uvarlong(buf, pos, 28)
    raw &= 0xFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: Buffer, pos: int) -> tuple[int, int]:
    """A zigzag varlong (64 bits)."""
    raw, pos = _read_uvarlong(buf, pos, 63)
    raw &= 0xFFFFFFFFFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


_UVARINT_CACHE = [bytes([i]) for i in range(128)]


def write_uvarint(value: int) -> bytes:
    """The LEB128 encoding of an unsigned 32-bit ``value``."""
    if 0 <= value < 0x80:
        return _UVARINT_CACHE[value]
    value &= 0xFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def write_varint(value: int) -> bytes:
    return write_uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(value: int) -> bytes:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


# --- lengths -------------------------------------------------------------------------------


def _checked(length: int, pos: int, end: int, what: str) -> None:
    if length > end - pos:
        raise MalformedMessage(
            f"{what} of {length} byte(s) declared, only {end - pos} byte(s) remain"
        )


def read_length(buf: Buffer, pos: int, compact: bool, wide: bool) -> tuple[int, int]:
    """A length prefix: -1 is null; compact lengths are ``uvarint(n + 1)``."""
    if compact:
        raw, pos = read_uvarint(buf, pos)
        return raw - 1, pos
    if wide:
        return INT32.unpack_from(buf, pos)[0], pos + 4
    return INT16.unpack_from(buf, pos)[0], pos + 2


def read_array_count(
    buf: Buffer, pos: int, end: int, compact: bool, nullable: bool, name: str
) -> tuple[int, int]:
    """An array count, checked: -1 only when nullable (then returned as -1), never more
    elements than bytes remain (every element takes at least one byte)."""
    n, pos = read_length(buf, pos, compact, True)
    if n < 0:
        if n == -1 and nullable:
            return -1, pos
        raise MalformedMessage(f"invalid array length {n} for {name}")
    _checked(n, pos, end, f"array {name}")
    return n, pos


def read_string(
    buf: Buffer, pos: int, end: int, compact: bool, nullable: bool, name: str
) -> tuple[str | None, int]:
    n, pos = read_length(buf, pos, compact, False)
    if n < 0:
        if n == -1 and nullable:
            return None, pos
        raise MalformedMessage(f"invalid string length {n} for {name}")
    if n > MAX_STRING:
        raise MalformedMessage(f"string {name} had invalid length {n}")
    _checked(n, pos, end, f"string {name}")
    # Java's new String(bytes, UTF_8) replaces malformed input; so do we.
    return str(buf[pos : pos + n], "utf-8", "replace"), pos + n


def read_bytes(
    buf: Buffer, pos: int, end: int, compact: bool, nullable: bool, name: str
) -> tuple[bytes | None, int]:
    n, pos = read_length(buf, pos, compact, True)
    if n < 0:
        if n == -1 and nullable:
            return None, pos
        raise MalformedMessage(f"invalid bytes length {n} for {name}")
    _checked(n, pos, end, f"bytes {name}")
    return bytes(buf[pos : pos + n]), pos + n


def read_records(
    buf: Buffer, pos: int, end: int, compact: bool, nullable: bool, name: str
) -> tuple[memoryview | None, int]:
    """Record batches as a zero-copy ``memoryview`` slice of ``buf``."""
    n, pos = read_length(buf, pos, compact, True)
    if n < 0:
        if n == -1 and nullable:
            return None, pos
        raise MalformedMessage(f"invalid records length {n} for {name}")
    _checked(n, pos, end, f"records {name}")
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    return view[pos : pos + n], pos + n


def read_uuid(buf: Buffer, pos: int) -> tuple[uuid.UUID, int]:
    raw = UUID.unpack_from(buf, pos)[0]
    return uuid.UUID(bytes=raw), pos + 16


def read_tag_header(buf: Buffer, pos: int, end: int) -> tuple[int, int, int]:
    """One tagged field's ``(tag, size, pos of its value)``, the size checked."""
    tag, pos = read_uvarint(buf, pos)
    size, pos = read_uvarint(buf, pos)
    _checked(size, pos, end, f"tagged field {tag}")
    return tag, size, pos


# --- writing -------------------------------------------------------------------------------


def write_length(length: int, compact: bool, wide: bool) -> bytes:
    if compact:
        return write_uvarint(length + 1)
    return INT32.pack(length) if wide else INT16.pack(length)


def write_string(out: list[Any], value: str | None, compact: bool, name: str) -> None:
    if value is None:
        out.append(write_length(-1, compact, False))
        return
    raw = value.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_STRING:
        raise ValueError(f"string field {name} is too long to be serialized")
    out.append(write_length(len(raw), compact, False))
    out.append(raw)


def write_bytes(out: list[Any], value: Buffer | None, compact: bool) -> None:
    """``bytes`` and ``records``: the value is appended as is (no copy of a view)."""
    if value is None:
        out.append(write_length(-1, compact, True))
        return
    out.append(write_length(len(value), compact, True))
    out.append(value)


def write_tagged(out: list[Any], tagged: Sequence[tuple[int, Buffer]]) -> None:
    """A tag buffer of already-encoded ``(tag, value bytes)``, sorted by tag."""
    out.append(write_uvarint(len(tagged)))
    for tag, data in sorted(tagged, key=lambda item: item[0]):
        out.append(write_uvarint(tag))
        out.append(write_uvarint(len(data)))
        out.append(data)


# (format, count, compact) -> the Struct of a whole array: its length then its items
_ARRAY_STRUCTS: dict[tuple[str, int, bool], struct.Struct] = {}
_ARRAY_STRUCTS_MAX = 4096


def write_fixed_array(fmt: str, values: Sequence[Any] | None, compact: bool) -> bytes:
    """An array of fixed-size items (``fmt``: a :data:`FIXED_FORMATS` code), its length
    included, in one ``pack``: the replica lists of a Metadata answer are thousands of
    these."""
    if values is None:
        return write_length(-1, compact, True)
    n = len(values)
    if compact and n + 1 >= 0x80:
        return write_uvarint(n + 1) + struct.pack(f">{n}{fmt}", *values)
    key = (fmt, n, compact)
    packer = _ARRAY_STRUCTS.get(key)
    if packer is None:
        packer = struct.Struct(f">B{n}{fmt}" if compact else f">i{n}{fmt}")
        if len(_ARRAY_STRUCTS) < _ARRAY_STRUCTS_MAX:
            _ARRAY_STRUCTS[key] = packer
    return packer.pack(n + 1 if compact else n, *values)
