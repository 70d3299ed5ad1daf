"""Record batches with named types, over the selected backend.

The backends speak plain tuples (cheap to cross the native boundary); this module gives
them names. Python code above the storage core handles batches, never single records,
on the hot path — these helpers are for tools, tests and embedding applications.

The format's vocabulary - the batch layout offsets (``ATTRIBUTES_OFFSET``, ...,
``RECORD_BATCH_OVERHEAD``) and the attribute masks (``COMPRESSION_CODEC_MASK``, ...) -
is re-exported from :mod:`kafkacore.record.layout`: the one place above the backends
that names them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from enum import IntEnum
from typing import NamedTuple

from kafkacore.errors import CorruptRecordError
from kafkacore.native import backend
from kafkacore.record import layout
from kafkacore.record.layout import *  # noqa: F403 - the format vocabulary, re-exported
from kafkacore.record.layout import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_OVERHEAD_V0,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = [
    "BatchHeader",
    "Compression",
    "ControlType",
    "Record",
    "TimestampType",
    "batch_header",
    "build_batch",
    "build_control_batch",
    "iter_batches",
    "parse_control_record",
    "records",
]
__all__ += layout.__all__

_LENGTH = struct.Struct(">i")


class Compression(IntEnum):
    """Kafka's codec ids (attributes bits 0-2)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class ControlType(IntEnum):
    ABORT = 0
    COMMIT = 1


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = []


class BatchHeader(NamedTuple):
    """The stored 61-byte header of a RecordBatch v2."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & COMPRESSION_CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType(bool(self.attributes & TIMESTAMP_TYPE_MASK))

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG_MASK)


def build_batch(
    records: Iterable[
        Record | tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]
    ],
    *,
    compression: Compression | int = Compression.NONE,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    base_offset: int | None = None,
    partition_leader_epoch: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    """One RecordBatch v2 holding ``records`` (see ``_native.build_batch``)."""
    return backend.build_batch(
        [tuple(r) for r in records],  # type: ignore[misc]
        base_offset=base_offset,
        compression=int(compression),
        timestamp_type=int(timestamp_type),
        partition_leader_epoch=partition_leader_epoch,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        transactional=transactional,
    )


_CONTROL_KEY = struct.Struct(">hh")  # version 0, type
_CONTROL_VALUE = struct.Struct(">hi")  # version 0, coordinator epoch


def build_control_batch(
    control_type: ControlType,
    *,
    producer_id: int,
    producer_epoch: int,
    timestamp: int,
    coordinator_epoch: int = 0,
    offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A transaction marker (COMMIT/ABORT) batch: transactional, control, one record."""
    key = _CONTROL_KEY.pack(0, int(control_type))
    value = _CONTROL_VALUE.pack(0, coordinator_epoch)
    return backend.build_batch(
        [(offset, timestamp, key, value, [])],
        partition_leader_epoch=partition_leader_epoch,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
    )


def parse_control_record(key: bytes, value: bytes) -> tuple[ControlType, int]:
    """``(type, coordinator_epoch)`` of a control record."""
    if len(key) < _CONTROL_KEY.size or len(value) < _CONTROL_VALUE.size:
        raise CorruptRecordError("buffer: control record too short at position 0")
    _, kind = _CONTROL_KEY.unpack_from(key)
    _, epoch = _CONTROL_VALUE.unpack_from(value)
    return ControlType(kind), epoch


def batch_header(buf: bytes, pos: int = 0) -> BatchHeader:
    return BatchHeader(*backend.batch_header(buf, pos))


def records(buf: bytes, pos: int = 0) -> list[Record]:
    """The records of the batch at ``pos``, whatever its magic (0, 1 or 2)."""
    if len(buf) < pos + HEADER_SIZE_UP_TO_MAGIC:
        raise CorruptRecordError(f"buffer: truncated batch header at position {pos}")
    decode = backend.batch_records if buf[pos + MAGIC_OFFSET] >= 2 else backend.legacy_records
    return [Record(*r) for r in decode(buf, pos)]


def iter_batches(buf: bytes) -> Iterator[tuple[int, int, int]]:
    """``(position, magic, size)`` of each complete batch in ``buf`` (a partial tail ends it)."""
    pos = 0
    while pos + HEADER_SIZE_UP_TO_MAGIC <= len(buf):
        size = _LENGTH.unpack_from(buf, pos + LENGTH_OFFSET)[0] + LOG_OVERHEAD
        if size < LOG_OVERHEAD + RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"buffer: batch size {size} too small at position {pos}")
        if pos + size > len(buf):
            return
        yield pos, buf[pos + MAGIC_OFFSET], size
        pos += size
