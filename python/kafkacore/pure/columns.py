"""Columnar decoding: the records of a run of stored batches as Arrow buffers (the twin
of ``kafkacore_core::columns``; the contract is ``decode_columns`` in ``_native.pyi``).

Column layouts (little-endian, Arrow's)::

    keys, values     binary     validity (LSB-first bitmap, 1 = valid; None without
                                nulls), offsets i32 (rows + 1, from 0), data
    offsets          int64      one per row
    timestamps       int64      microseconds: ms * 1000, wrapping as Java's long
    timestamp_types  int32      0 CreateTime, 1 LogAppendTime (v0: 0)
    headers          list<struct<key: utf8, value: binary>>: list offsets i32 (rows + 1),
                     key offsets + key data, value validity + value offsets + value data

The walk over ``data`` (batches one after the other, as a Fetch response or a segment
file holds them):

1. Fewer than 12 bytes left, or a declared size (length + 12) beyond what is left: the
   walk ends silently. A length field below 14 or a magic other than 0/1/2 is corrupt.
2. A v2 batch whose base offset is >= ``end_offset`` ends the walk (not validated).
3. Every other batch is validated completely (:func:`~kafkacore.pure.batch.decode_batch`,
   :func:`~kafkacore.pure.legacy.records_at`).
4. Control batches give no rows; records below ``start_offset`` are skipped; the first
   record at or beyond ``end_offset`` ends the walk.

Thread-safe (pure functions).
"""

from __future__ import annotations

import struct
from typing import TypeAlias

from kafkacore.pure._types import RecordTuple
from kafkacore.pure._util import BUFFER_CONTEXT, I32_MAX, I64_MAX, corrupt, wrap_i64
from kafkacore.pure.batch import (
    CONTROL_FLAG_MASK,
    H_ATTRIBUTES,
    H_BASE_OFFSET,
    H_LAST_OFFSET_DELTA,
    TIMESTAMP_TYPE_MASK,
    decode_batch,
)
from kafkacore.pure.legacy import RECORD_OVERHEAD_V0, header_at, records_at

__all__ = ["BinaryColumn", "ColumnsTuple", "HeadersColumn", "decode_columns"]

BinaryColumn: TypeAlias = tuple[bytes | None, bytes, bytes]
HeadersColumn: TypeAlias = tuple[bytes, bytes, bytes, bytes | None, bytes, bytes]
ColumnsTuple: TypeAlias = tuple[
    int, int, BinaryColumn, BinaryColumn, bytes, bytes, bytes, HeadersColumn | None
]

LOG_OVERHEAD = 12
SIZE_OFFSET = 8
MAGIC_OFFSET = 16
LEGACY_TIMESTAMP_TYPE_MASK = 0x08
MICROS_PER_MILLI = 1000
_PREFIX = struct.Struct(">qi")  # base offset, length
_MAGIC = struct.Struct(">b")


def _validity(valid: list[bool]) -> bytes | None:
    """Arrow's LSB-first bitmap of ``valid``; ``None`` when every slot is valid."""
    if all(valid):
        return None
    bits = bytearray((len(valid) + 7) // 8)
    for i, ok in enumerate(valid):
        if ok:
            bits[i >> 3] |= 1 << (i & 7)
    return bytes(bits)


def _binary(column: str, values: list[bytes | None]) -> BinaryColumn:
    data = bytearray()
    offsets = [0]
    for v in values:
        if v is not None:
            data += v
        offsets.append(len(data))
    if len(data) > I32_MAX:
        raise ValueError(
            f"the {column} column would hold {len(data)} bytes, more than Arrow's 2 GiB "
            "binary limit: decode a smaller offset range"
        )
    return (
        _validity([v is not None for v in values]),
        struct.pack(f"<{len(offsets)}i", *offsets),
        bytes(data),
    )


def _complete_batch_size(data: bytes, pos: int, context: str) -> int | None:
    """Size of the batch at ``pos`` if complete; ``None`` for a partial tail."""
    remaining = len(data) - pos
    if remaining < LOG_OVERHEAD:
        return None
    _, size_field = _PREFIX.unpack_from(data, pos)
    if size_field < RECORD_OVERHEAD_V0:
        raise corrupt(
            context,
            pos,
            f"record size {size_field} is smaller than the minimum record overhead "
            f"({RECORD_OVERHEAD_V0})",
        )
    size: int = size_field + LOG_OVERHEAD
    return size if size <= remaining else None


def decode_columns(
    data: bytes, start_offset: int, end_offset: int, include_headers: bool, /
) -> ColumnsTuple:
    """The records of the batches in ``data`` with ``start_offset <= offset <
    end_offset``, as Arrow column buffers (see the stub for the full contract)."""
    context = BUFFER_CONTEXT
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    offsets: list[int] = []
    timestamps: list[int] = []
    timestamp_types: list[int] = []
    list_offsets = [0]
    header_keys: list[bytes | None] = []
    header_values: list[bytes | None] = []

    reached_end = False
    last_offset: int | None = None
    pos = 0
    while not reached_end:
        size = _complete_batch_size(data, pos, context)
        if size is None:
            break
        (magic,) = _MAGIC.unpack_from(data, pos + MAGIC_OFFSET)
        records: list[RecordTuple]
        if magic == 2:
            base_offset, _ = _PREFIX.unpack_from(data, pos)
            if base_offset >= end_offset:
                reached_end = True
                break
            header, records = decode_batch(data, pos, context=context)
            attributes = header[H_ATTRIBUTES]
            if attributes & CONTROL_FLAG_MASK:
                records = []
            timestamp_type = 1 if attributes & TIMESTAMP_TYPE_MASK else 0
            last_offset = wrap_i64(header[H_BASE_OFFSET] + header[H_LAST_OFFSET_DELTA])
        elif magic in (0, 1):
            records = records_at(data, pos, context)
            attributes = header_at(data, pos, context)[4]
            timestamp_type = 1 if magic == 1 and attributes & LEGACY_TIMESTAMP_TYPE_MASK else 0
            last_offset = records[-1][0]
        else:
            raise corrupt(context, pos, f"unknown magic {magic} (expected 0, 1 or 2)")
        for offset, timestamp, key, value, headers in records:
            if offset >= end_offset:
                reached_end = True
                break
            if offset < start_offset:
                continue
            offsets.append(offset)
            timestamps.append(wrap_i64(timestamp * MICROS_PER_MILLI))
            timestamp_types.append(timestamp_type)
            keys.append(key)
            values.append(value)
            if include_headers:
                for header_key, header_value in headers:
                    header_keys.append(header_key.encode("utf-8"))
                    header_values.append(header_value)
                list_offsets.append(len(header_keys))
        pos += size

    if reached_end:
        next_offset = end_offset
    elif last_offset is None:
        next_offset = start_offset
    else:
        next_offset = max(min(last_offset + 1, I64_MAX), start_offset)

    headers_column: HeadersColumn | None = None
    if include_headers:
        if len(header_keys) > I32_MAX:
            raise ValueError(f"{len(header_keys)} headers are more than an Arrow list holds")
        _, key_offsets, key_data = _binary("header key", header_keys)
        value_validity, value_offsets, value_data = _binary("header value", header_values)
        headers_column = (
            struct.pack(f"<{len(list_offsets)}i", *list_offsets),
            key_offsets,
            key_data,
            value_validity,
            value_offsets,
            value_data,
        )
    count = len(offsets)
    return (
        count,
        next_offset,
        _binary("key", keys),
        _binary("value", values),
        struct.pack(f"<{count}q", *offsets),
        struct.pack(f"<{count}q", *timestamps),
        struct.pack(f"<{count}i", *timestamp_types),
        headers_column,
    )
