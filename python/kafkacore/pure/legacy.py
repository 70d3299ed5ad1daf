"""Legacy message sets, magic 0 and 1 (Kafka's ``LegacyRecord`` /
``AbstractLegacyRecordBatch``): read and validated, written only for tests.

Log entry layout (big-endian; byte offsets from the start of the entry)::

    0  offset      i64   v1 inner messages of a compressed wrapper: relative
    8  size        i32   bytes of the message that follows (total size - 12)
    -- the message --
    12 crc         u32   CRC-32 (IEEE) of bytes 16..end
    16 magic       i8    0 or 1
    17 attributes  i8    bits 0-2 codec; bit 3 timestamp type (v1: 1 = LogAppendTime)
    18 timestamp   i64   v1 only
    18 / 26 keyLength i32 (v0 / v1; negative = null), key,
            valueLength i32 (negative = null), value

Minimum message size (``size``): v0 14, v1 22. A compressed message (codec != 0) is a
*wrapper*: its key is null and its value is the compressed inner message set. In v1 the
inner offsets are relative and the wrapper carries the absolute offset of the last
inner message (KIP-31); in v0 inner offsets are absolute.

Reading follows Kafka (``LegacyRecord`` accessors, ``DataLogInputStream``): a negative
length means null; bytes after the value are ignored; in a decompressed inner set, a
tail too short for a 12-byte entry header or for the message its size announces ends the
set silently. A v1 wrapper at offset 0 (some librdkafka versions) keeps the relative
inner offsets. zstd is not allowed with magic 0/1 (``UnsupportedCompressionError``).

Thread-safe (pure functions).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kafkacore.errors import UnsupportedCompressionError
from kafkacore.pure._types import LegacyHeaderTuple, RecordTuple
from kafkacore.pure._util import BUFFER_CONTEXT, corrupt, fit
from kafkacore.pure.compression import ZSTD, compress, decompress_legacy
from kafkacore.pure.crc import crc32_of

__all__ = ["build_legacy", "legacy_header", "legacy_records", "message_overhead"]

# ------------------------------------------------------------------ layout

OFFSET_OFFSET = 0
OFFSET_LENGTH = 8
SIZE_OFFSET = OFFSET_OFFSET + OFFSET_LENGTH  # 8
SIZE_LENGTH = 4
LOG_OVERHEAD = SIZE_OFFSET + SIZE_LENGTH  # 12
CRC_OFFSET = LOG_OVERHEAD  # 12
CRC_LENGTH = 4
MAGIC_OFFSET = CRC_OFFSET + CRC_LENGTH  # 16
MAGIC_LENGTH = 1
ATTRIBUTES_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH  # 17
ATTRIBUTES_LENGTH = 1
TIMESTAMP_OFFSET = ATTRIBUTES_OFFSET + ATTRIBUTES_LENGTH  # 18 (v1)
TIMESTAMP_LENGTH = 8
KEY_SIZE_OFFSET_V0 = ATTRIBUTES_OFFSET + ATTRIBUTES_LENGTH  # 18
KEY_SIZE_OFFSET_V1 = TIMESTAMP_OFFSET + TIMESTAMP_LENGTH  # 26
KEY_SIZE_LENGTH = 4
VALUE_SIZE_LENGTH = 4

HEADER_SIZE_V0 = CRC_LENGTH + MAGIC_LENGTH + ATTRIBUTES_LENGTH  # 6
HEADER_SIZE_V1 = HEADER_SIZE_V0 + TIMESTAMP_LENGTH  # 14
RECORD_OVERHEAD_V0 = HEADER_SIZE_V0 + KEY_SIZE_LENGTH + VALUE_SIZE_LENGTH  # 14
RECORD_OVERHEAD_V1 = HEADER_SIZE_V1 + KEY_SIZE_LENGTH + VALUE_SIZE_LENGTH  # 22

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
NO_TIMESTAMP = -1

ENTRY_HEAD = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
ENTRY_PREFIX = struct.Struct(">qi")  # offset, size
I64 = struct.Struct(">q")
I32 = struct.Struct(">i")


def message_overhead(magic: int) -> int:
    """Minimum message size of ``magic`` (0 or 1)."""
    return RECORD_OVERHEAD_V0 if magic == 0 else RECORD_OVERHEAD_V1


# ------------------------------------------------------------------ read


def header_at(
    buf: bytes, pos: int, context: str = BUFFER_CONTEXT, origin: int = 0
) -> LegacyHeaderTuple:
    """:func:`legacy_header`, errors naming ``context`` and ``origin + pos``."""
    fit("pos", pos)
    if pos < 0:
        raise ValueError(f"pos={pos} must be >= 0")
    at = origin + pos
    remaining = len(buf) - pos
    if remaining < LOG_OVERHEAD:
        raise corrupt(
            context, at, f"{max(remaining, 0)} bytes left, a message needs {LOG_OVERHEAD}+"
        )
    offset, size = ENTRY_PREFIX.unpack_from(buf, pos)
    if size < RECORD_OVERHEAD_V0:
        raise corrupt(context, at, f"message size {size} is below the minimum {RECORD_OVERHEAD_V0}")
    if LOG_OVERHEAD + size > remaining:
        raise corrupt(
            context, at, f"message of {LOG_OVERHEAD + size} bytes does not fit ({remaining} left)"
        )
    _, _, crc, magic, attributes = ENTRY_HEAD.unpack_from(buf, pos)
    if magic not in (0, 1):
        raise corrupt(context, at, f"magic {magic}, expected 0 or 1")
    if size < message_overhead(magic):
        raise corrupt(
            context,
            at,
            f"message size {size} is below the v{magic} minimum {message_overhead(magic)}",
        )
    timestamp = I64.unpack_from(buf, pos + TIMESTAMP_OFFSET)[0] if magic == 1 else NO_TIMESTAMP
    return offset, size, crc, magic, attributes, timestamp


def legacy_header(buf: bytes, pos: int = 0, /) -> LegacyHeaderTuple:
    """Shallow header ``(offset, size, crc, magic, attributes, timestamp)`` of the legacy
    message at ``pos``; timestamp is -1 for magic 0. No CRC check. ``attributes`` is the
    signed byte, as Java reads it."""
    return header_at(buf, pos)


def _key_value(
    buf: bytes, pos: int, end: int, magic: int
) -> tuple[bytes | None, bytes | None] | None:
    """Key and value of the message whose entry starts at ``pos``; ``None`` if a length
    runs past ``end``."""
    p = pos + (KEY_SIZE_OFFSET_V0 if magic == 0 else KEY_SIZE_OFFSET_V1)
    (key_size,) = I32.unpack_from(buf, p)
    p += KEY_SIZE_LENGTH
    key = None
    if key_size >= 0:
        if key_size > end - p - VALUE_SIZE_LENGTH:
            return None
        key = bytes(buf[p : p + key_size])
        p += key_size
    (value_size,) = I32.unpack_from(buf, p)
    p += VALUE_SIZE_LENGTH
    value = None
    if value_size >= 0:
        if value_size > end - p:
            return None
        value = bytes(buf[p : p + value_size])
    return key, value


def records_at(
    buf: bytes, pos: int, context: str = BUFFER_CONTEXT, origin: int = 0
) -> list[RecordTuple]:
    """:func:`legacy_records`, errors naming ``context`` and ``origin + pos``."""
    at = origin + pos
    offset, size, crc, magic, attributes, timestamp = header_at(buf, pos, context, origin)
    end = pos + LOG_OVERHEAD + size
    view = memoryview(buf)
    computed = crc32_of(view[pos + MAGIC_OFFSET : end])
    if computed != crc:
        raise corrupt(
            context, at, f"CRC-32 mismatch (stored {crc:#010x}, computed {computed:#010x})"
        )
    key_value = _key_value(buf, pos, end, magic)
    if key_value is None:
        raise corrupt(context, at, "key or value length runs past the message")
    key, value = key_value
    codec = attributes & COMPRESSION_CODEC_MASK
    if codec == 0:
        return [(offset, timestamp, key, value, [])]
    if codec == ZSTD:
        raise UnsupportedCompressionError(
            f"{context}, position {at}: zstd is not supported with magic {magic}"
        )
    if codec > ZSTD:
        raise corrupt(context, at, f"unknown compression codec {codec}")
    if value is None:
        raise corrupt(context, at, "compressed wrapper message with a null value")

    inner = decompress_legacy(codec, value, magic, context, at)
    entries = _inner_messages(inner, context, at)
    if not entries:
        raise corrupt(context, at, "compressed wrapper message with no inner messages")

    if magic == 1:
        if offset == 0:
            absolute_base = 0  # librdkafka wrote 0: keep the relative offsets (Kafka)
        else:
            last_inner = entries[-1][0]
            if offset < last_inner:
                raise corrupt(
                    context,
                    at,
                    f"wrapper offset {offset} is below its last inner offset {last_inner}",
                )
            absolute_base = offset - last_inner
    else:
        absolute_base = 0
    wrapper_log_append_time = magic == 1 and attributes & TIMESTAMP_TYPE_MASK
    records: list[RecordTuple] = []
    for inner_offset, inner_magic, inner_timestamp, inner_key, inner_value in entries:
        if inner_magic == 1 and wrapper_log_append_time:
            inner_timestamp = timestamp
        records.append((absolute_base + inner_offset, inner_timestamp, inner_key, inner_value, []))
    return records


def _inner_messages(
    data: bytes, context: str, at: int
) -> list[tuple[int, int, int, bytes | None, bytes | None]]:
    """``(offset, magic, timestamp, key, value)`` of each message of a decompressed set."""
    out = []
    n = len(data)
    p = 0
    while n - p >= LOG_OVERHEAD:
        offset, size = ENTRY_PREFIX.unpack_from(data, p)
        if size < RECORD_OVERHEAD_V0:
            raise corrupt(context, at, f"inner message size {size} is below the minimum 14")
        if size > n - p - LOG_OVERHEAD:
            break  # a partial inner message ends the set, as in Kafka's DataLogInputStream
        end = p + LOG_OVERHEAD + size
        _, _, crc, magic, attributes = ENTRY_HEAD.unpack_from(data, p)
        if magic not in (0, 1):
            raise corrupt(context, at, f"inner message magic {magic}, expected 0 or 1")
        if size < message_overhead(magic):
            raise corrupt(context, at, f"inner message size {size} is below the v{magic} minimum")
        computed = crc32_of(data[p + MAGIC_OFFSET : end])
        if computed != crc:
            raise corrupt(
                context,
                at,
                f"inner message CRC-32 mismatch (stored {crc:#010x}, computed {computed:#010x})",
            )
        if attributes & COMPRESSION_CODEC_MASK:
            raise corrupt(context, at, "inner messages must not be compressed")
        key_value = _key_value(data, p, end, magic)
        if key_value is None:
            raise corrupt(context, at, "inner message key or value length runs past the message")
        timestamp = I64.unpack_from(data, p + TIMESTAMP_OFFSET)[0] if magic == 1 else NO_TIMESTAMP
        out.append((offset, magic, timestamp, key_value[0], key_value[1]))
        p = end
    return out


def legacy_records(buf: bytes, pos: int = 0, /) -> list[RecordTuple]:
    """Deep records of the legacy message at ``pos`` (CRC-32 checked, wrapper and inner).

    Offsets are absolute; a LogAppendTime v1 wrapper gives its timestamp to its v1 inner
    messages. Headers are always ``[]``."""
    return records_at(buf, pos)


# ------------------------------------------------------------------ build


def _message(
    out: bytearray,
    offset: int,
    magic: int,
    attributes: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
) -> None:
    body = bytearray()
    body.append(magic)
    body.append(attributes)
    if magic == 1:
        body += I64.pack(timestamp)
    for field in (key, value):
        if field is None:
            body += I32.pack(-1)
        else:
            body += I32.pack(len(field))
            body += field
    out += ENTRY_PREFIX.pack(offset, CRC_LENGTH + len(body))
    out += crc32_of(bytes(body)).to_bytes(4, "big")
    out += body


def _bytes_or_none(value: object, what: str) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes or None, not {type(value).__name__}")


def build_legacy(
    records: Sequence[RecordTuple], magic: int, compression: int = 0, timestamp_type: int = 0
) -> bytes:
    """Build a legacy message set (tests). Codec 0: one message per record. Otherwise one
    wrapper whose value is the compressed inner set (v1: inner offsets relative 0..n-1,
    wrapper offset = last record's offset, wrapper timestamp = max inner timestamp).

    Checks, in order: record offsets/timestamps and the int arguments fit i64
    (``OverflowError``); codec 0-4 (``UnsupportedCompressionError``); magic 0/1, records
    present, ``timestamp_type`` 0/1 (``ValueError``); zstd refused with magic 0/1
    (``UnsupportedCompressionError``); offsets strictly increasing, no headers
    (``ValueError``). The timestamp type is ignored for magic 0 (no timestamps there);
    timestamps below -1 are written as given and the wrapper timestamp is their plain
    maximum. v1 inner offsets are 0..n-1 as the contract says (Kafka writes
    ``offset - first offset``: the same for consecutive offsets).
    """
    # Argument types first (OverflowError, as the native conversion), then meanings.
    for record in records:
        if len(record) != 5:
            raise ValueError(f"a record is a 5-tuple, not {len(record)} items")
        fit("record offset", record[0])
        fit("record timestamp", record[1])
    fit("magic", magic)
    fit("compression", compression)
    fit("timestamp_type", timestamp_type)
    if not 0 <= compression <= ZSTD:
        raise UnsupportedCompressionError(
            f"unsupported compression codec {compression}: expected 0-4"
        )
    if magic not in (0, 1):
        raise ValueError(f"magic={magic}: legacy message sets are magic 0 or 1")
    if not records:
        raise ValueError("a message set needs at least one record")
    if timestamp_type not in (0, 1):
        raise ValueError(f"timestamp_type={timestamp_type}: expected 0 (CreateTime) or 1")
    if compression == ZSTD:
        raise UnsupportedCompressionError(f"zstd is not supported with magic {magic}")

    timestamp_bit = TIMESTAMP_TYPE_MASK if magic == 1 and timestamp_type == 1 else 0
    previous: int | None = None
    for offset, _timestamp, _key, _value, headers in records:
        if previous is not None and offset <= previous:
            raise ValueError(f"record offsets must strictly increase: {offset} after {previous}")
        previous = offset
        if headers:
            raise ValueError(f"magic {magic} messages cannot carry headers")

    out = bytearray()
    if compression == 0:
        for offset, timestamp, key, value, _ in records:
            _message(
                out,
                offset,
                magic,
                timestamp_bit,
                timestamp,
                _bytes_or_none(key, "record key"),
                _bytes_or_none(value, "record value"),
            )
        return bytes(out)

    inner = bytearray()
    for index, (offset, timestamp, key, value, _) in enumerate(records):
        _message(
            inner,
            index if magic == 1 else offset,
            magic,
            timestamp_bit,
            timestamp,
            _bytes_or_none(key, "record key"),
            _bytes_or_none(value, "record value"),
        )
    wrapper_timestamp = max(record[1] for record in records) if magic == 1 else NO_TIMESTAMP
    _message(
        out,
        records[-1][0],
        magic,
        compression | timestamp_bit,
        wrapper_timestamp,
        None,
        compress(compression, bytes(inner)),
    )
    return bytes(out)
