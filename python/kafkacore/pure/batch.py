"""RecordBatch v2 (magic 2), Kafka's ``DefaultRecordBatch`` / ``DefaultRecord``.

Batch layout (big-endian; byte offsets from the start of the batch)::

    0  baseOffset            i64
    8  batchLength           i32   bytes after this field: total size - 12
    12 partitionLeaderEpoch  i32   outside the CRC: the broker stamps it freely
    16 magic                 i8    = 2
    17 crc                   u32   CRC-32C of bytes 21..end
    21 attributes            i16   bits 0-2 codec, 3 timestamp type (1 = LogAppendTime),
                                   4 transactional, 5 control, 6 has delete horizon
    23 lastOffsetDelta       i32
    27 baseTimestamp         i64   first record's timestamp, or the delete horizon
    35 maxTimestamp          i64
    43 producerId            i64   -1 = none
    51 producerEpoch         i16
    53 baseSequence          i32   -1 = none
    57 recordsCount          i32
    61 records               the records, or one compressed blob of them

Record layout (zig-zag varints, :mod:`kafkacore.pure.varint`)::

    length varint (of what follows) | attributes i8 (unused, 0) | timestampDelta varlong |
    offsetDelta varint | keyLength varint (-1 = null) | key | valueLength varint | value |
    headerCount varint | headers: keyLength varint, key (UTF-8, never null),
                                  valueLength varint (-1 = null), value

offset = baseOffset + offsetDelta; timestamp = baseTimestamp + timestampDelta, or
maxTimestamp for every record of a LogAppendTime batch. Sums wrap as Java's ``long``.

Thread-safe (pure functions).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kafkacore.errors import UnsupportedCompressionError
from kafkacore.pure._types import BatchHeaderTuple, Headers, RecordTuple
from kafkacore.pure._util import (
    BUFFER_CONTEXT,
    I32_MAX,
    I32_MIN,
    I64_MAX,
    I64_MIN,
    check_range,
    corrupt,
    fit,
    wrap_i64,
)
from kafkacore.pure.compression import compress, decompress_at
from kafkacore.pure.crc import crc32c_of
from kafkacore.pure.varint import (
    VarintError,
    read_varint,
    read_varlong,
    write_varint,
    write_varlong,
)

__all__ = [
    "RECORD_BATCH_OVERHEAD",
    "batch_header",
    "batch_records",
    "build_batch",
    "decode_batch",
    "validate_batch",
]

# ------------------------------------------------------------------ layout

BASE_OFFSET_OFFSET = 0
BASE_OFFSET_LENGTH = 8
LENGTH_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH  # 8
LENGTH_LENGTH = 4
PARTITION_LEADER_EPOCH_OFFSET = LENGTH_OFFSET + LENGTH_LENGTH  # 12
PARTITION_LEADER_EPOCH_LENGTH = 4
MAGIC_OFFSET = PARTITION_LEADER_EPOCH_OFFSET + PARTITION_LEADER_EPOCH_LENGTH  # 16
MAGIC_LENGTH = 1
CRC_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH  # 17
CRC_LENGTH = 4
ATTRIBUTES_OFFSET = CRC_OFFSET + CRC_LENGTH  # 21
ATTRIBUTES_LENGTH = 2
LAST_OFFSET_DELTA_OFFSET = ATTRIBUTES_OFFSET + ATTRIBUTES_LENGTH  # 23
LAST_OFFSET_DELTA_LENGTH = 4
BASE_TIMESTAMP_OFFSET = LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA_LENGTH  # 27
BASE_TIMESTAMP_LENGTH = 8
MAX_TIMESTAMP_OFFSET = BASE_TIMESTAMP_OFFSET + BASE_TIMESTAMP_LENGTH  # 35
MAX_TIMESTAMP_LENGTH = 8
PRODUCER_ID_OFFSET = MAX_TIMESTAMP_OFFSET + MAX_TIMESTAMP_LENGTH  # 43
PRODUCER_ID_LENGTH = 8
PRODUCER_EPOCH_OFFSET = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH  # 51
PRODUCER_EPOCH_LENGTH = 2
BASE_SEQUENCE_OFFSET = PRODUCER_EPOCH_OFFSET + PRODUCER_EPOCH_LENGTH  # 53
BASE_SEQUENCE_LENGTH = 4
RECORDS_COUNT_OFFSET = BASE_SEQUENCE_OFFSET + BASE_SEQUENCE_LENGTH  # 57
RECORDS_COUNT_LENGTH = 4
RECORDS_OFFSET = RECORDS_COUNT_OFFSET + RECORDS_COUNT_LENGTH  # 61
RECORD_BATCH_OVERHEAD = RECORDS_OFFSET  # 61

LOG_OVERHEAD = LENGTH_OFFSET + LENGTH_LENGTH  # 12: baseOffset + batchLength
# Every format (v0/v1 too) has its magic byte at 16: enough bytes to tell the format.
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + MAGIC_LENGTH  # 17
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49
MAGIC_V2 = 2

# The 13 header fields, in the order of the layout (and of BatchHeaderTuple). Each is
# returned as stored, with its Java type: attributes is the signed i16 (Kafka only reads
# its low byte), crc the unsigned u32.
HEADER = struct.Struct(">qiibIhiqqqhii")
assert HEADER.size == RECORD_BATCH_OVERHEAD

# Header tuple indexes.
H_BASE_OFFSET, H_BATCH_LENGTH, H_LEADER_EPOCH, H_MAGIC, H_CRC, H_ATTRIBUTES = range(6)
H_LAST_OFFSET_DELTA, H_BASE_TIMESTAMP, H_MAX_TIMESTAMP = range(6, 9)
H_PRODUCER_ID, H_PRODUCER_EPOCH, H_BASE_SEQUENCE, H_RECORDS_COUNT = range(9, 13)

# Attributes
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40
# The bits Kafka's computeAttributes() knows; setMaxTimestamp() rewrites only these.
KNOWN_ATTRIBUTES_MASK = 0x7F
MAX_CODEC = 4

U32 = struct.Struct(">I")
I64 = struct.Struct(">q")
I32 = struct.Struct(">i")
I16 = struct.Struct(">h")


# ------------------------------------------------------------------ build


def _as_bytes(value: object, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes or None, not {type(value).__name__}")


def build_batch(
    records: Sequence[RecordTuple],
    *,
    base_offset: int | None = None,
    last_offset_delta: int | None = None,
    compression: int = 0,
    timestamp_type: int = 0,
    partition_leader_epoch: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    delete_horizon_ms: int = -1,
) -> bytes:
    """Build one RecordBatch v2 exactly as Kafka's ``MemoryRecordsBuilder`` lays it out.

    See the stub ``kafkacore/_native.pyi`` for the rules. Checks, in order: every int
    fits its Java type (record offsets and timestamps, base offset, producer id, delete
    horizon: i64; leader epoch, base sequence: i32; producer epoch: i16; else
    ``OverflowError``); ``last_offset_delta`` fits i32 (``ValueError``); codec 0-4
    (``UnsupportedCompressionError``); ``timestamp_type`` 0/1 and records present
    (``ValueError``); then per record: strictly increasing offsets, offset delta in
    0..2**31-1 (``ValueError``), and finally ``last_offset_delta`` >= the last delta.
    Timestamp deltas wrap as Java's ``long`` does.

    Where the contract is silent: timestamps below -1 are accepted and maxTimestamp is
    the plain maximum of the record timestamps (Kafka's builder refuses them); the
    producer state is not checked (Kafka's builder refuses e.g. transactional without a
    producer id: that is the caller's business); keys, values and header values may be
    any bytes-like object.
    """
    # Argument types first (OverflowError, as the native conversion), then meanings.
    for record in records:
        if len(record) != 5:
            raise ValueError(f"a record is a 5-tuple, not {len(record)} items")
        fit("record offset", record[0])
        fit("record timestamp", record[1])
    if base_offset is not None:
        fit("base_offset", base_offset)
    if last_offset_delta is not None:
        fit("last_offset_delta", last_offset_delta)
    fit("compression", compression)
    fit("timestamp_type", timestamp_type)
    fit("partition_leader_epoch", partition_leader_epoch, 32)
    fit("producer_id", producer_id)
    fit("producer_epoch", producer_epoch, 16)
    fit("base_sequence", base_sequence, 32)
    fit("delete_horizon_ms", delete_horizon_ms)
    if last_offset_delta is not None:
        check_range("last_offset_delta", last_offset_delta, I32_MIN, I32_MAX)
    if not 0 <= compression <= MAX_CODEC:
        raise UnsupportedCompressionError(
            f"unsupported compression codec {compression}: expected 0-4"
        )
    if timestamp_type not in (0, 1):
        raise ValueError(f"timestamp_type={timestamp_type}: expected 0 (CreateTime) or 1")
    if not records:
        raise ValueError("a record batch needs at least one record")

    first_offset, first_timestamp, _, _, _ = records[0]
    base = first_offset if base_offset is None else base_offset
    has_delete_horizon = delete_horizon_ms >= 0
    base_timestamp = delete_horizon_ms if has_delete_horizon else first_timestamp

    body = bytearray()
    out = bytearray()
    previous_offset: int | None = None
    max_timestamp = first_timestamp
    offset_delta = 0
    for record in records:
        offset, timestamp, key, value, headers = record
        if previous_offset is not None and offset <= previous_offset:
            raise ValueError(
                f"record offsets must strictly increase: {offset} after {previous_offset}"
            )
        previous_offset = offset
        offset_delta = offset - base
        if offset_delta < 0:
            raise ValueError(f"record offset {offset} is below base_offset {base}")
        if offset_delta > I32_MAX:
            raise ValueError(f"offset delta {offset_delta} of offset {offset} exceeds i32")
        # Java's long subtraction wraps; reading adds it back with the same wrap.
        timestamp_delta = wrap_i64(timestamp - base_timestamp)
        if timestamp > max_timestamp:
            max_timestamp = timestamp

        body.clear()
        body.append(0)  # record attributes: unused
        write_varlong(body, timestamp_delta)
        write_varint(body, offset_delta)
        if key is None:
            body.append(1)  # varint -1
        else:
            key_bytes = _as_bytes(key, "record key")
            write_varint(body, len(key_bytes))
            body += key_bytes
        if value is None:
            body.append(1)
        else:
            value_bytes = _as_bytes(value, "record value")
            write_varint(body, len(value_bytes))
            body += value_bytes
        write_varint(body, len(headers))
        for header_key, header_value in headers:
            if not isinstance(header_key, str):
                raise TypeError(f"header key must be str, not {type(header_key).__name__}")
            key_utf8 = header_key.encode("utf-8")  # UnicodeEncodeError is a ValueError
            write_varint(body, len(key_utf8))
            body += key_utf8
            if header_value is None:
                body.append(1)
            else:
                header_bytes = _as_bytes(header_value, "header value")
                write_varint(body, len(header_bytes))
                body += header_bytes
        write_varint(out, len(body))
        out += body

    if last_offset_delta is None:
        last_offset_delta = offset_delta
    elif not offset_delta <= last_offset_delta <= I32_MAX:
        raise ValueError(
            f"last_offset_delta={last_offset_delta} must be in [{offset_delta}, {I32_MAX}]"
        )
    section = out if compression == 0 else compress(compression, bytes(out))
    batch_length = MIN_BATCH_LENGTH + len(section)
    check_range("batch length", batch_length, 0, I32_MAX)

    attributes = (
        compression
        | timestamp_type << 3
        | int(bool(transactional)) << 4
        | int(bool(control)) << 5
        | int(has_delete_horizon) << 6
    )
    batch = bytearray(RECORD_BATCH_OVERHEAD)
    HEADER.pack_into(
        batch,
        0,
        base,
        batch_length,
        partition_leader_epoch,
        MAGIC_V2,
        0,  # crc, below
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    batch += section
    U32.pack_into(batch, CRC_OFFSET, crc32c_of(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    return bytes(batch)


# ------------------------------------------------------------------ read


def _check_position(buf: bytes, pos: int) -> int:
    fit("pos", pos)
    if pos < 0:
        raise ValueError(f"pos={pos} must be >= 0")
    return len(buf) - pos if pos <= len(buf) else 0


def header_at(
    buf: bytes, pos: int, context: str = BUFFER_CONTEXT, origin: int = 0
) -> BatchHeaderTuple:
    """:func:`batch_header`, errors naming ``context`` and ``origin + pos``."""
    remaining = _check_position(buf, pos)
    if remaining < RECORD_BATCH_OVERHEAD:
        raise corrupt(
            context,
            origin + pos,
            f"{remaining} bytes left, a v2 batch header needs {RECORD_BATCH_OVERHEAD}",
        )
    header: BatchHeaderTuple = HEADER.unpack_from(buf, pos)
    if header[H_MAGIC] != MAGIC_V2:
        raise corrupt(context, origin + pos, f"magic {header[H_MAGIC]}, expected 2")
    return header


def batch_header(buf: bytes, pos: int = 0, /) -> BatchHeaderTuple:
    """The stored header of the v2 batch at ``pos``. No CRC check.

    ``CorruptRecordError`` when fewer than 61 bytes remain or magic is not 2.
    """
    return header_at(buf, pos)


def decode_batch(
    buf: bytes,
    pos: int,
    *,
    context: str = BUFFER_CONTEXT,
    origin: int = 0,
    want_records: bool = True,
) -> tuple[BatchHeaderTuple, list[RecordTuple]]:
    """Validate the v2 batch at ``pos`` completely; its header and (if ``want_records``)
    its records. Errors name ``context`` and the position ``origin + pos``."""
    at = origin + pos
    remaining = _check_position(buf, pos)
    if remaining < RECORD_BATCH_OVERHEAD:
        raise corrupt(
            context, at, f"{remaining} bytes left, a v2 batch header needs {RECORD_BATCH_OVERHEAD}"
        )
    header: BatchHeaderTuple = HEADER.unpack_from(buf, pos)
    batch_length = header[H_BATCH_LENGTH]
    if batch_length < MIN_BATCH_LENGTH:
        raise corrupt(
            context, at, f"batch length {batch_length} is below the minimum {MIN_BATCH_LENGTH}"
        )
    size = LOG_OVERHEAD + batch_length
    if size > remaining:
        raise corrupt(
            context, at, f"batch of {size} bytes runs past the end ({remaining} bytes left)"
        )
    magic = header[H_MAGIC]
    if magic != MAGIC_V2:
        raise corrupt(context, at, f"magic {magic}, expected 2")
    end = pos + size
    view = memoryview(buf)
    computed = crc32c_of(view[pos + ATTRIBUTES_OFFSET : end])
    if computed != header[H_CRC]:
        raise corrupt(
            context,
            at,
            f"CRC-32C mismatch (stored {header[H_CRC]:#010x}, computed {computed:#010x})",
        )
    attributes = header[H_ATTRIBUTES]
    codec = attributes & COMPRESSION_CODEC_MASK
    if codec > MAX_CODEC:
        # Codecs 5-7: the contract makes every validate failure a CorruptRecordError
        # (compress/decompress raise UnsupportedCompressionError for them).
        raise corrupt(context, at, f"unknown compression codec {codec}")
    count = header[H_RECORDS_COUNT]
    if count < 0:
        raise corrupt(context, at, f"negative records count {count}")

    section = bytes(view[pos + RECORDS_OFFSET : end])
    # A compressed batch with no bytes at all after the header holds no records and is
    # not decompressed (an empty input is not a valid stream for any codec); with bytes,
    # the decompressed stream must hold exactly recordsCount records.
    if codec and section:
        section = decompress_at(codec, section, context, at)
    records = _parse_records(section, header, context, at, want_records)
    return header, records


def _parse_records(
    data: bytes, header: BatchHeaderTuple, context: str, at: int, want: bool
) -> list[RecordTuple]:
    """Walk the (uncompressed) records section, checking every length and delta."""
    count = header[H_RECORDS_COUNT]
    last_offset_delta = header[H_LAST_OFFSET_DELTA]
    base_offset = header[H_BASE_OFFSET]
    base_timestamp = header[H_BASE_TIMESTAMP]
    log_append_time = header[H_ATTRIBUTES] & TIMESTAMP_TYPE_MASK
    max_timestamp = header[H_MAX_TIMESTAMP]
    end = len(data)
    records: list[RecordTuple] = []
    p = 0
    previous_delta: int | None = None
    index = 0
    try:
        for index in range(count):  # noqa: B007 (index is read in the error path)
            if p >= end:
                raise VarintError(f"missing: the batch declares {count} records")
            length, p = read_varint(data, p, end)
            if length < 0 or length > end - p:
                raise VarintError(f"length {length} runs past the records ({end - p} bytes left)")
            body_end = p + length
            if p >= body_end:
                raise VarintError("empty record body")
            p += 1  # attributes: unused
            timestamp_delta, p = read_varlong(data, p, body_end)
            offset_delta, p = read_varint(data, p, body_end)
            # Only the order is checked: the first delta may even be negative (as Kafka,
            # which checks neither).
            if previous_delta is not None and offset_delta <= previous_delta:
                raise VarintError(f"offset delta {offset_delta} after {previous_delta}")
            if offset_delta > last_offset_delta:
                raise VarintError(
                    f"offset delta {offset_delta} > lastOffsetDelta {last_offset_delta}"
                )
            previous_delta = offset_delta

            key_length, p = read_varint(data, p, body_end)
            if key_length < -1 or key_length > body_end - p:
                raise VarintError(f"key length {key_length} runs past the record")
            if key_length >= 0:
                key: bytes | None = data[p : p + key_length] if want else None
                p += key_length
            else:
                key = None
            value_length, p = read_varint(data, p, body_end)
            if value_length < -1 or value_length > body_end - p:
                raise VarintError(f"value length {value_length} runs past the record")
            if value_length >= 0:
                value: bytes | None = data[p : p + value_length] if want else None
                p += value_length
            else:
                value = None
            header_count, p = read_varint(data, p, body_end)
            if header_count < 0:
                raise VarintError(f"negative header count {header_count}")
            headers: Headers = []
            for _ in range(header_count):
                hk_length, p = read_varint(data, p, body_end)
                if hk_length < 0 or hk_length > body_end - p:
                    raise VarintError(f"header key length {hk_length} invalid")
                try:
                    header_key = data[p : p + hk_length].decode("utf-8")
                except UnicodeDecodeError:
                    raise VarintError("header key is not UTF-8") from None
                p += hk_length
                hv_length, p = read_varint(data, p, body_end)
                if hv_length < -1 or hv_length > body_end - p:
                    raise VarintError(f"header value length {hv_length} runs past the record")
                if hv_length >= 0:
                    header_value: bytes | None = data[p : p + hv_length]
                    p += hv_length
                else:
                    header_value = None
                if want:
                    headers.append((header_key, header_value))
            if p != body_end:
                raise VarintError(f"{body_end - p} bytes left in its body")
            if want:
                offset = base_offset + offset_delta
                if not I64_MIN <= offset <= I64_MAX:
                    offset = wrap_i64(offset)
                if log_append_time:
                    timestamp = max_timestamp
                else:
                    timestamp = base_timestamp + timestamp_delta
                    if not I64_MIN <= timestamp <= I64_MAX:
                        timestamp = wrap_i64(timestamp)
                records.append((offset, timestamp, key, value, headers))
    except VarintError as exc:
        raise corrupt(context, at, f"record {index}: {exc}") from None
    if p != end:
        raise corrupt(context, at, f"{end - p} bytes left after the last of {count} records")
    return records


def validate_batch(buf: bytes, pos: int = 0, /) -> BatchHeaderTuple:
    """Validate the v2 batch at ``pos`` completely and return its header.

    Any failure -> ``CorruptRecordError`` (see the stub for the checks and their order).
    """
    return decode_batch(buf, pos, want_records=False)[0]


def batch_records(buf: bytes, pos: int = 0, /) -> list[RecordTuple]:
    """Validate (as :func:`validate_batch`) and decode every record of the v2 batch at
    ``pos``."""
    return decode_batch(buf, pos)[1]
