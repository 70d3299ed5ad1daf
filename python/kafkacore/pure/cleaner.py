"""The compaction cleaner's hot path, in pure Python (twin of ``kafkacore_core::cleaner``):
:class:`KeyMap` (Kafka's ``SkimpyOffsetMap``: MD5 digest of each key -> latest offset) and
:func:`filter_batches` (Kafka's ``MemoryRecords.filterTo`` with the ``LogCleaner``'s filter).

Every rule is in the stub, ``kafkacore/_native.pyi`` (section "Compaction"); in short, per
batch: records superseded by a later offset of their key, keyless records and tombstones
whose delete horizon has passed are removed; a batch that keeps every record and needs no
new delete horizon is copied byte for byte, others are rebuilt with their base offset,
lastOffsetDelta and producer fields; an emptied batch survives as a 61-byte empty header
only when it ends the cleaning round or is an active producer's last batch.

Not thread-safe: a :class:`KeyMap` has one user at a time; :func:`filter_batches` only
reads it.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping

from kafkacore.errors import InvalidRecordError
from kafkacore.pure._types import BatchHeaderTuple, RecordTuple
from kafkacore.pure._util import BUFFER_CONTEXT, I64_MAX, corrupt, fit, wrap_i64
from kafkacore.pure.batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    H_ATTRIBUTES,
    H_BASE_OFFSET,
    H_BASE_SEQUENCE,
    H_BASE_TIMESTAMP,
    H_LAST_OFFSET_DELTA,
    H_LEADER_EPOCH,
    H_MAX_TIMESTAMP,
    H_PRODUCER_EPOCH,
    H_PRODUCER_ID,
    HEADER,
    LOG_OVERHEAD,
    MAGIC_V2,
    MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    U32,
    build_batch,
    decode_batch,
    header_at,
)
from kafkacore.pure.crc import crc32c_of

__all__ = ["FilterResult", "KeyMap", "filter_batches"]

FilterResult = tuple[bytes, int, int, int, int]

# Kafka's FileLogInputStream: a batch needs more than offset + size + epoch/crc + magic.
_HEADER_SIZE_UP_TO_MAGIC = 17
_MAGIC_OFFSET = 16
_RECORD_OVERHEAD_V0 = 14  # the smallest size field of any batch
_NO_TIMESTAMP = -1
_SIZE = struct.Struct(">i")


def _digest(key: bytes) -> bytes:
    if not isinstance(key, bytes):
        raise TypeError(f"a key must be bytes, not {type(key).__name__}")
    return hashlib.md5(key, usedforsecurity=False).digest()


def _next_batch_end(buf: bytes, pos: int) -> int | None:
    """The end of the whole v2 batch at ``pos``, ``None`` at a short or partial tail."""
    remaining = len(buf) - pos
    if remaining <= _HEADER_SIZE_UP_TO_MAGIC:
        return None
    size_field = int(_SIZE.unpack_from(buf, pos + 8)[0])
    if size_field < _RECORD_OVERHEAD_V0:
        raise corrupt(
            BUFFER_CONTEXT,
            pos,
            f"found record size {size_field} smaller than minimum record overhead "
            f"({_RECORD_OVERHEAD_V0})",
        )
    size = size_field + LOG_OVERHEAD
    if size > remaining:
        return None
    magic = int(struct.unpack_from(">b", buf, pos + _MAGIC_OFFSET)[0])
    if magic in (0, 1):
        raise InvalidRecordError(
            f"{BUFFER_CONTEXT}: position {pos}: the cleaner does not compact legacy "
            f"(magic {magic}) messages"
        )
    if magic != MAGIC_V2:
        raise corrupt(BUFFER_CONTEXT, pos, f"unknown magic {magic} (expected 0, 1 or 2)")
    return pos + size


class KeyMap:
    """Kafka's ``SkimpyOffsetMap`` (see the stub): MD5 digest of each key -> latest offset,
    at most ``capacity`` digests, and ``latest_offset``, the last offset covered."""

    __slots__ = ("_capacity", "_latest_offset", "_map")

    def __init__(self, capacity: int) -> None:
        fit("capacity", capacity)
        if capacity < 1:
            raise ValueError(f"key map capacity must be >= 1, not {capacity}")
        self._capacity = capacity
        self._latest_offset = -1
        self._map: dict[bytes, int] = {}

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def latest_offset(self) -> int:
        """The last offset the map covers; -1 when nothing was added."""
        return self._latest_offset

    def __len__(self) -> int:
        return len(self._map)

    def __repr__(self) -> str:
        return (
            f"KeyMap(len={len(self._map)}, capacity={self._capacity}, "
            f"latest_offset={self._latest_offset})"
        )

    def put(self, key: bytes, offset: int) -> None:
        """Map ``key`` to ``offset``; ``latest_offset`` becomes ``offset``."""
        fit("offset", offset)
        digest = _digest(key)
        if len(self._map) >= self._capacity and digest not in self._map:
            raise ValueError(f"the key map is full ({self._capacity} keys)")
        self._map[digest] = offset
        self._latest_offset = offset

    def get(self, key: bytes) -> int:
        """The offset mapped to ``key``, -1 if none."""
        return self._map.get(_digest(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        """Set ``latest_offset``."""
        self._latest_offset = fit("offset", offset)

    def clear(self) -> None:
        """Forget every key; ``latest_offset`` back to -1."""
        self._map.clear()
        self._latest_offset = -1

    def add_batches(self, buf: bytes, start_offset: int, end_offset: int) -> tuple[int, bool]:
        """Put the keys of the batches in ``buf``; returns ``(bytes consumed, full)``."""
        fit("start_offset", start_offset)
        fit("end_offset", end_offset)
        data = bytes(buf)
        mapping = self._map
        capacity = self._capacity
        pos = 0
        while (end := _next_batch_end(data, pos)) is not None:
            header = header_at(data, pos)
            if header[H_BASE_OFFSET] >= end_offset:
                pos = end
                continue
            _, records = decode_batch(data, pos, want_records=True)
            if not header[H_ATTRIBUTES] & CONTROL_FLAG_MASK:
                for offset, _ts, key, _value, _headers in records:
                    if key is not None and start_offset <= offset < end_offset:
                        if len(mapping) >= capacity:
                            return pos, True
                        mapping[hashlib.md5(key, usedforsecurity=False).digest()] = offset
                        self._latest_offset = offset
            last_offset = wrap_i64(header[H_BASE_OFFSET] + header[H_LAST_OFFSET_DELTA])
            if last_offset >= start_offset:
                self._latest_offset = last_offset
            pos = end
        return pos, False


def filter_batches(
    buf: bytes,
    key_map: KeyMap,
    *,
    now_ms: int,
    delete_retention_ms: int,
    round_end_offset: int = -1,
    producer_last_offsets: Mapping[int, int] | None = None,
) -> FilterResult:
    """Filter the batches of ``buf`` against ``key_map`` (every rule: see the stub)."""
    if not isinstance(key_map, KeyMap):
        raise TypeError(f"key_map must be a kafkacore.pure KeyMap, not {type(key_map).__name__}")
    fit("now_ms", now_ms)
    fit("delete_retention_ms", delete_retention_ms)
    fit("round_end_offset", round_end_offset)
    producers = dict(producer_last_offsets or {})
    for producer_id, offset in producers.items():
        fit("producer id", producer_id)
        fit("producer last offset", offset)
    if now_ms < 0 or delete_retention_ms < 0:
        raise ValueError(
            f"now_ms ({now_ms}) and delete_retention_ms ({delete_retention_ms}) must be >= 0"
        )
    data = bytes(buf)
    latest = key_map.latest_offset
    lookup = key_map.get
    parts: list[bytes] = []
    records_read = records_retained = records_invalid = 0
    pos = 0
    while (end := _next_batch_end(data, pos)) is not None:
        header, records = decode_batch(data, pos)
        attributes = header[H_ATTRIBUTES]
        control = attributes & CONTROL_FLAG_MASK
        has_horizon = attributes & DELETE_HORIZON_FLAG_MASK
        retain_deletes = not has_horizon or now_ms < header[H_BASE_TIMESTAMP]

        retained: list[RecordTuple] = []
        tombstones = False
        for record in records:
            offset, _ts, key, value, _headers = record
            if control or offset > latest:
                keep = True
            elif key is not None:
                keep = offset >= lookup(key) and (value is not None or retain_deletes)
            else:
                records_invalid += 1
                keep = False
            if keep:
                retained.append(record)
                tombstones = tombstones or value is None
        records_read += len(records)
        records_retained += len(retained)

        if retained:
            needs_horizon = tombstones and not has_horizon
            if len(retained) == len(records) and not needs_horizon:
                parts.append(data[pos:end])
            else:
                if needs_horizon:
                    horizon = min(now_ms + delete_retention_ms, I64_MAX)
                elif has_horizon:
                    horizon = header[H_BASE_TIMESTAMP]
                else:
                    horizon = _NO_TIMESTAMP
                parts.append(_rebuild(header, retained, horizon))
        elif _retain_empty(header, round_end_offset, producers):
            parts.append(empty_header(header))
        pos = end
    return b"".join(parts), pos, records_read, records_retained, records_invalid


def _retain_empty(
    header: BatchHeaderTuple, round_end_offset: int, producers: dict[int, int]
) -> bool:
    last_offset = wrap_i64(header[H_BASE_OFFSET] + header[H_LAST_OFFSET_DELTA])
    if round_end_offset >= 0 and last_offset < I64_MAX and last_offset + 1 == round_end_offset:
        return True
    producer_id = header[H_PRODUCER_ID]
    return producer_id >= 0 and producers.get(producer_id) == last_offset


def _rebuild(header: BatchHeaderTuple, retained: list[RecordTuple], horizon: int) -> bytes:
    attributes = header[H_ATTRIBUTES]
    return build_batch(
        retained,
        base_offset=header[H_BASE_OFFSET],
        last_offset_delta=header[H_LAST_OFFSET_DELTA],
        compression=attributes & COMPRESSION_CODEC_MASK,
        timestamp_type=1 if attributes & TIMESTAMP_TYPE_MASK else 0,
        partition_leader_epoch=header[H_LEADER_EPOCH],
        producer_id=header[H_PRODUCER_ID],
        producer_epoch=header[H_PRODUCER_EPOCH],
        base_sequence=header[H_BASE_SEQUENCE],
        transactional=bool(attributes & TRANSACTIONAL_FLAG_MASK),
        control=bool(attributes & CONTROL_FLAG_MASK),
        delete_horizon_ms=horizon,
    )


def empty_header(header: BatchHeaderTuple) -> bytes:
    """Kafka's ``DefaultRecordBatch.writeEmptyHeader`` for ``header``'s batch."""
    attributes = header[H_ATTRIBUTES] & (
        TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK
    )
    out = bytearray(RECORD_BATCH_OVERHEAD)
    HEADER.pack_into(
        out,
        0,
        header[H_BASE_OFFSET],
        MIN_BATCH_LENGTH,
        header[H_LEADER_EPOCH],
        MAGIC_V2,
        0,  # crc, below
        attributes,
        header[H_LAST_OFFSET_DELTA],
        _NO_TIMESTAMP,
        header[H_MAX_TIMESTAMP],
        header[H_PRODUCER_ID],
        header[H_PRODUCER_EPOCH],
        header[H_BASE_SEQUENCE],
        0,
    )
    U32.pack_into(out, CRC_OFFSET, crc32c_of(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)
