"""The records of stored batches as ``pyarrow.RecordBatch``es with Spark's Kafka schema.

The selected backend (:mod:`kafkacore.native`) decodes a run of batches - a Fetch
response's records or a slice of a segment file - straight into Arrow buffers
(``decode_columns`` in ``_native.pyi``); this module wraps them with
``pyarrow.Array.from_buffers``: no Python object per record, the buffers are not copied.

Thread-safe (pure functions). Requires ``pyarrow`` (the ``spark`` extra).
"""

from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.compute as pc

from kafkacore.native import backend

__all__ = ["decode", "spark_schema"]

_HEADER_TYPE = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
# Spark's ArrayType as `to_arrow_schema` spells it: the list item is called "element".
_HEADERS_TYPE = pa.list_(pa.field("element", _HEADER_TYPE))
_TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")
_INT32 = struct.Struct("<i")

_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", _TIMESTAMP_TYPE),
    pa.field("timestampType", pa.int32()),
]
_SCHEMA = pa.schema(_FIELDS)
_SCHEMA_WITH_HEADERS = pa.schema([*_FIELDS, pa.field("headers", _HEADERS_TYPE)])


def spark_schema(include_headers: bool) -> pa.Schema:
    """Spark's Kafka source schema in Arrow: ``key binary, value binary, topic string,
    partition int32, offset int64, timestamp timestamp[us, UTC], timestampType int32``
    and, with ``include_headers``, ``headers list<element: struct<key: string, value:
    binary>>``. Every field is nullable, as Spark's are."""
    return _SCHEMA_WITH_HEADERS if include_headers else _SCHEMA


def _buffer(data: bytes | None) -> pa.Buffer | None:
    return None if data is None else pa.py_buffer(data)


def _binary(
    arrow_type: pa.DataType, length: int, column: tuple[bytes | None, bytes, bytes]
) -> pa.Array:
    validity, offsets, data = column
    return pa.Array.from_buffers(
        arrow_type,
        length,
        [_buffer(validity), pa.py_buffer(offsets), pa.py_buffer(data)],
        null_count=-1 if validity is not None else 0,
    )


def _fixed(arrow_type: pa.DataType, length: int, data: bytes) -> pa.Array:
    return pa.Array.from_buffers(arrow_type, length, [None, pa.py_buffer(data)], null_count=0)


def decode(
    data: bytes,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int,
    include_headers: bool,
) -> tuple[pa.RecordBatch, int]:
    """``(batch, next_offset)``: the records of the batches in ``data`` with
    ``start_offset <= offset < end_offset`` as one ``RecordBatch`` of
    :func:`spark_schema` (control batches and offset gaps give no rows), and the offset
    to resume from (see ``decode_columns`` in ``_native.pyi``: ``end_offset`` when a
    record at or past it was met, else past the last complete batch; a trailing partial
    batch is ignored). ``CorruptRecordError`` for a complete batch that fails validation.

    ``topic`` and ``partition`` fill their constant columns.
    """
    (
        count,
        next_offset,
        keys,
        values,
        offsets,
        timestamps,
        timestamp_types,
        headers,
    ) = backend.decode_columns(data, start_offset, end_offset, include_headers)
    columns = [
        _binary(pa.binary(), count, keys),
        _binary(pa.binary(), count, values),
        # Built in C++ (one value repeated), no Python object per row.
        pa.repeat(pa.scalar(topic, pa.string()), count),
        _fixed(pa.int32(), count, _INT32.pack(partition) * count),
        _fixed(pa.int64(), count, offsets),
        _fixed(_TIMESTAMP_TYPE, count, timestamps),
        _fixed(pa.int32(), count, timestamp_types),
    ]
    if include_headers:
        if headers is None:  # pragma: no cover - both backends return them when asked
            raise AssertionError("decode_columns returned no headers column")
        list_offsets, key_offsets, key_data, value_validity, value_offsets, value_data = headers
        n_headers = _INT32.unpack_from(list_offsets, len(list_offsets) - 4)[0]
        header_keys = _binary(pa.string(), n_headers, (None, key_offsets, key_data))
        header_values = _binary(pa.binary(), n_headers, (value_validity, value_offsets, value_data))
        entries = pa.StructArray.from_arrays(
            [header_keys, header_values], fields=list(_HEADER_TYPE)
        )
        offsets_buffer = pa.py_buffer(list_offsets)
        lists = pa.Array.from_buffers(
            _HEADERS_TYPE, count, [None, offsets_buffer], null_count=0, children=[entries]
        )
        # A record without headers reads as null, not [], as in Spark's Kafka source
        # (vectorised: the validity bitmap is the boolean "has headers" column's bits).
        has_headers = pc.greater(pc.list_value_length(lists), 0)
        nulls = count - pc.sum(has_headers).as_py() if count else 0
        if nulls:
            validity = pc.fill_null(has_headers, False).buffers()[1]
            lists = pa.Array.from_buffers(
                _HEADERS_TYPE,
                count,
                [validity, offsets_buffer],
                null_count=nulls,
                children=[entries],
            )
        columns.append(lists)
    schema = spark_schema(include_headers)
    return pa.RecordBatch.from_arrays(columns, schema=schema), next_offset
