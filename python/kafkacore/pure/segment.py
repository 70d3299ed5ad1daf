"""One log segment (Kafka's ``LogSegment`` over ``FileRecords``, ``OffsetIndex`` and
``TimeIndex``): ``<dir>/<20-digit base offset>.log`` with its ``.index`` and
``.timeindex``.

The ``.log`` is a sequence of record batches (:mod:`kafkacore.pure.batch`, magic 2) or
legacy messages (:mod:`kafkacore.pure.legacy`, magic 0/1), back to back. Every entry
starts with the same 17 bytes::

    0  baseOffset (legacy: offset)   i64
    8  size (batchLength)            i32   bytes after this field
    12 partitionLeaderEpoch / crc    4 bytes
    16 magic                         i8

Walking the log (Kafka's ``FileLogInputStream.nextBatch``): at position ``p`` of a log of
``end`` bytes, ``p >= end - 17`` ends the walk (Kafka's exact test: 17 bytes left end it
too); a size below 14 (the smallest legacy message) is corrupt; a batch running past
``end`` is a partial tail and ends the walk; then the magic must be 0, 1 or 2 and the
size at least that magic's header (v2: 49, v0: 14, v1: 22), else corrupt (Kafka would
read a too-short v2 header from the following bytes).

Shallow batch facts: v2 last offset = base offset + lastOffsetDelta, max timestamp and
leader epoch from the header; legacy last offset = base offset = the offset field, max
timestamp = the v1 timestamp (v0: -1), leader epoch -1. Lookups raise
``CorruptRecordError`` at a corrupt entry; opening and ``recover`` stop there.

Not thread-safe: one writer, and no reader concurrent with a writer.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from kafkacore.errors import (
    CorruptIndexError,
    CorruptRecordError,
    IndexFullError,
    InvalidOffsetError,
    InvalidRecordError,
    StorageIOError,
)
from kafkacore.pure import batch as v2
from kafkacore.pure import legacy
from kafkacore.pure._types import AppendResult, BatchHeaderTuple, RecordTuple
from kafkacore.pure._util import BUFFER_CONTEXT, I32_MAX, I32_MIN, I64_MAX, check_range, fit
from kafkacore.pure.crc import crc32_of, crc32c_of
from kafkacore.pure.files import (
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    segment_file,
)
from kafkacore.pure.index import TIME_ENTRY_SIZE, OffsetIndex, TimeIndex

__all__ = ["Segment"]

LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17  # offset + size + 4 bytes + magic
MIN_ENTRY_SIZE = legacy.RECORD_OVERHEAD_V0  # 14: the smallest legacy message
MAX_SEGMENT_BYTES = I32_MAX  # positions are Java ints
NO_TIMESTAMP = -1
READ_WINDOW = 64 * 1024

_PREFIX = struct.Struct(">qi")  # offset, size
_V2_FIELDS = struct.Struct(">i b I h i q q")  # PLE, magic, crc, attributes, lod, base ts, max ts
_LEGACY_CRC = struct.Struct(">I")
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_U32 = struct.Struct(">I")


class _Entry(NamedTuple):
    """Shallow facts of one batch (or legacy message) of the log."""

    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    leader_epoch: int
    crc: int


class _Planned(NamedTuple):
    """One batch of an append, after the offset checks."""

    position: int  # in the appended buffer
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    header: BatchHeaderTuple


class _Reader:
    """``pread`` through a read-ahead window (one walk; discarded after it)."""

    def __init__(self, fd: int, path: str) -> None:
        self._fd = fd
        self._path = path
        self._start = 0
        self._window = b""

    def read(self, position: int, length: int) -> bytes:
        offset = position - self._start
        if offset >= 0 and offset + length <= len(self._window):
            return self._window[offset : offset + length]
        try:
            self._window = os.pread(self._fd, max(length, READ_WINDOW), position)
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"cannot read: {exc.strerror}", self._path
            ) from exc
        self._start = position
        return self._window[:length]


class Segment:
    """One log segment: ``<dir>/<20-digit base offset>.log`` with its ``.index`` and
    ``.timeindex`` (see ``kafkacore/_native.pyi`` for the whole contract).

    Where the contract is silent: ``base_offset`` must be in 0..2**63-1,
    ``index_interval_bytes`` in 0..2**31-1 and ``max_index_size`` in 12..2**31-1
    (``ValueError``); OS errors become ``StorageIOError`` naming the file; every method
    but ``close``/``delete`` raises ``ValueError`` once closed (properties still answer).

    Not thread-safe: one writer, and no reader concurrent with a writer.
    """

    def __init__(
        self,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int = 4096,
        max_index_size: int = 10485760,
    ) -> None:
        fit("base_offset", base_offset)
        fit("index_interval_bytes", index_interval_bytes)
        fit("max_index_size", max_index_size)
        check_range("base_offset", base_offset, 0, I64_MAX)
        check_range("index_interval_bytes", index_interval_bytes, 0, I32_MAX)
        check_range("max_index_size", max_index_size, TIME_ENTRY_SIZE, I32_MAX)
        directory = os.fspath(directory)
        self._base_offset = base_offset
        self._index_interval_bytes = index_interval_bytes
        self._log_path = segment_file(directory, base_offset, LOG_FILE_SUFFIX)
        self._index_path = segment_file(directory, base_offset, INDEX_FILE_SUFFIX)
        self._time_index_path = segment_file(directory, base_offset, TIME_INDEX_FILE_SUFFIX)
        self._closed = True
        try:
            self._fd = os.open(self._log_path, os.O_RDWR | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"cannot open log: {exc.strerror}", self._log_path
            ) from exc
        try:
            self._offset_index = OffsetIndex(self._index_path, base_offset, max_index_size)
            try:
                self._time_index = TimeIndex(self._time_index_path, base_offset, max_index_size)
            except BaseException:
                self._offset_index.close()
                raise
        except BaseException:
            os.close(self._fd)
            raise
        self._closed = False
        self._bytes_since_last_entry = 0
        if self._time_index.entries:
            self._max_timestamp, self._offset_of_max_timestamp = self._time_index.last_entry()
        else:
            self._max_timestamp, self._offset_of_max_timestamp = NO_TIMESTAMP, -1
        self._rolling_based_timestamp = self._first_batch_max_timestamp()
        self._next_offset = self._scan_next_offset()

    # -------------------------------------------------------------- properties

    @property
    def base_offset(self) -> int:
        return self._base_offset

    @property
    def log_path(self) -> str:
        return self._log_path

    @property
    def index_path(self) -> str:
        return self._index_path

    @property
    def time_index_path(self) -> str:
        return self._time_index_path

    @property
    def size(self) -> int:
        """Bytes in the ``.log`` file."""
        return self._size

    @property
    def next_offset(self) -> int:
        """The offset after the last batch (``base_offset`` when empty)."""
        return self._next_offset

    @property
    def max_timestamp(self) -> int:
        """Largest batch max timestamp so far (-1 if none)."""
        return self._max_timestamp

    @property
    def offset_of_max_timestamp(self) -> int:
        """Last offset of the batch holding ``max_timestamp`` (-1 if none)."""
        return self._offset_of_max_timestamp

    @property
    def rolling_based_timestamp(self) -> int:
        """Max timestamp of the first batch (-1 when empty): what ``segment.ms`` uses."""
        return self._rolling_based_timestamp

    @property
    def index_is_full(self) -> bool:
        """True when the offset or the time index is full (the log must roll), by the
        size it is mapped at now."""
        return self._offset_index.is_full or self._time_index.is_full

    @property
    def closed(self) -> bool:
        return self._closed

    # -------------------------------------------------------------- walking the log

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"segment {self._log_path} is closed")

    def _corrupt(self, position: int, detail: str) -> CorruptRecordError:
        return CorruptRecordError(f"{self._log_path}, position {position}: {detail}")

    def _walk(self, start: int, reader: _Reader | None = None) -> Iterator[_Entry]:
        """The entries from ``start`` (see the module docstring): stops at the end or a
        partial tail, raises ``CorruptRecordError`` at a corrupt entry."""
        if reader is None:
            reader = _Reader(self._fd, self._log_path)
        end = self._size
        position = max(start, 0)
        while position < end - HEADER_SIZE_UP_TO_MAGIC:
            head = reader.read(position, v2.RECORD_BATCH_OVERHEAD)
            offset, size = _PREFIX.unpack_from(head)
            if size < MIN_ENTRY_SIZE:
                raise self._corrupt(position, f"size {size} is below the minimum {MIN_ENTRY_SIZE}")
            if position > end - LOG_OVERHEAD - size:
                return  # partial tail
            magic = struct.unpack_from(">b", head, v2.MAGIC_OFFSET)[0]
            if magic == v2.MAGIC_V2:
                if size < v2.MIN_BATCH_LENGTH:
                    raise self._corrupt(
                        position, f"batch length {size} is below the minimum {v2.MIN_BATCH_LENGTH}"
                    )
                epoch, _, crc, _, last_delta, _, max_timestamp = _V2_FIELDS.unpack_from(
                    head, v2.PARTITION_LEADER_EPOCH_OFFSET
                )
                entry = _Entry(
                    position,
                    LOG_OVERHEAD + size,
                    magic,
                    offset,
                    offset + last_delta,
                    max_timestamp,
                    epoch,
                    crc,
                )
            elif magic in (0, 1):
                if size < legacy.message_overhead(magic):
                    raise self._corrupt(
                        position, f"v{magic} message size {size} is below its minimum"
                    )
                timestamp = (
                    _I64.unpack_from(head, legacy.TIMESTAMP_OFFSET)[0]
                    if magic == 1
                    else NO_TIMESTAMP
                )
                crc = _LEGACY_CRC.unpack_from(head, legacy.CRC_OFFSET)[0]
                entry = _Entry(
                    position, LOG_OVERHEAD + size, magic, offset, offset, timestamp, -1, crc
                )
            else:
                raise self._corrupt(position, f"unknown magic {magic}")
            yield entry
            position += entry.size

    def _first_batch_max_timestamp(self) -> int:
        with contextlib.suppress(CorruptRecordError):
            for entry in self._walk(0):
                return entry.max_timestamp
        return NO_TIMESTAMP

    def _scan_next_offset(self) -> int:
        """Kafka's ``readNextOffset``: from the last offset-index entry, the last batch
        at or after the first one whose last offset reaches that entry's offset."""
        indexed_offset, position = self._offset_index.last_entry()
        last: int | None = None
        with contextlib.suppress(CorruptRecordError):
            for entry in self._walk(position):
                if last is None and entry.last_offset < indexed_offset:
                    continue
                last = entry.last_offset
        return self._base_offset if last is None else last + 1

    def _translate(self, offset: int, starting_position: int) -> _Entry | None:
        position = max(self._offset_index.lookup(offset)[1], starting_position)
        for entry in self._walk(position):
            if entry.last_offset >= offset:
                return entry
        return None

    def _records(self, entry: _Entry, reader: _Reader) -> list[RecordTuple]:
        data = reader.read(entry.position, entry.size)
        if entry.magic == v2.MAGIC_V2:
            return v2.decode_batch(data, 0, context=self._log_path, origin=entry.position)[1]
        return legacy.records_at(data, 0, context=self._log_path, origin=entry.position)

    # -------------------------------------------------------------- index rule

    def _index_batch(
        self, counter: int, last_offset: int, position: int, max_timestamp: int, size: int
    ) -> int:
        """The per-batch index rule (Kafka's ``LogSegment.recover``), shared by append and
        recover; returns the new bytes-since-last-entry counter."""
        if max_timestamp > self._max_timestamp:
            self._max_timestamp = max_timestamp
            self._offset_of_max_timestamp = last_offset
        if counter > self._index_interval_bytes:
            self._offset_index.append(last_offset, position)
            self._time_index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp)
            counter = 0
        return counter + size

    def _check_index_room(self, plan: list[_Planned]) -> None:
        """``IndexFullError`` if the entries ``plan`` needs do not fit (a dry run of
        :meth:`_index_batch`)."""
        offset_entries = self._offset_index.entries
        offset_max = self._offset_index.max_entries
        time_entries = self._time_index.entries
        time_max = self._time_index.max_entries
        time_last = self._time_index.last_entry()[0]
        counter = self._bytes_since_last_entry
        max_timestamp = self._max_timestamp
        for batch in plan:
            max_timestamp = max(max_timestamp, batch.max_timestamp)
            if counter > self._index_interval_bytes:
                if offset_entries >= offset_max:
                    raise IndexFullError(
                        f"{self._index_path}: offset index full ({offset_entries} entries)"
                    )
                if time_entries >= time_max - 1:
                    raise IndexFullError(
                        f"{self._time_index_path}: time index full ({time_entries} entries)"
                    )
                offset_entries += 1
                if max_timestamp > time_last:
                    time_entries += 1
                    time_last = max_timestamp
                counter = 0
            counter += batch.size

    # -------------------------------------------------------------- append

    def append(
        self,
        data: bytes,
        *,
        partition_leader_epoch: int = -1,
        log_append_time_ms: int = -1,
        assign_offsets: bool = True,
    ) -> AppendResult:
        """Validate, stamp and append one or more concatenated v2 batches.

        Checks in order, nothing written on failure: every batch completely
        (``CorruptRecordError``, naming ``buffer`` and the position in ``data``); then
        batch by batch the record count (``InvalidRecordError``) and offsets
        (``InvalidOffsetError``); the segment size limit of 2**31-1 bytes
        (``ValueError``); the index room (``IndexFullError``). Empty ``data`` appends
        nothing and returns ``(-1, -1, -1, -1, 0)``.
        """
        fit("partition_leader_epoch", partition_leader_epoch)
        fit("log_append_time_ms", log_append_time_ms)
        check_range("partition_leader_epoch", partition_leader_epoch, I32_MIN, I32_MAX)
        self._check_open()
        total = memoryview(data).nbytes

        headers: list[tuple[int, BatchHeaderTuple]] = []
        position = 0
        while position < total:
            header = v2.decode_batch(data, position, want_records=False)[0]
            headers.append((position, header))
            position += v2.LOG_OVERHEAD + header[v2.H_BATCH_LENGTH]
        if not headers:
            return -1, -1, -1, -1, 0

        stamp_time = assign_offsets and log_append_time_ms >= 0
        plan: list[_Planned] = []
        expected = self._next_offset
        for position, header in headers:
            where = f"{BUFFER_CONTEXT}, position {position}"
            if assign_offsets:
                if header[v2.H_RECORDS_COUNT] == 0:
                    raise InvalidRecordError(f"{where}: a produced batch needs at least one record")
                base = expected
            else:
                base = header[v2.H_BASE_OFFSET]
                if base < expected:
                    raise InvalidOffsetError(
                        f"{where}: base offset {base} is below the next offset {expected}"
                    )
            delta = header[v2.H_LAST_OFFSET_DELTA]
            last = base + delta
            if delta < 0 or last - self._base_offset > I32_MAX or last >= I64_MAX:
                raise InvalidOffsetError(
                    f"{where}: last offset {last} (base {base}) does not fit segment "
                    f"{self._base_offset} (0 <= last - base, last - segment base <= 2**31-1)"
                )
            max_timestamp = log_append_time_ms if stamp_time else header[v2.H_MAX_TIMESTAMP]
            size = v2.LOG_OVERHEAD + header[v2.H_BATCH_LENGTH]
            plan.append(_Planned(position, size, base, last, max_timestamp, header))
            expected = last + 1

        if self._size + total > MAX_SEGMENT_BYTES:
            raise ValueError(
                f"{self._log_path}: appending {total} bytes at {self._size} exceeds "
                f"{MAX_SEGMENT_BYTES} bytes"
            )
        self._check_index_room(plan)

        payload: bytes | bytearray = data
        if assign_offsets:
            out = bytearray(data)
            for batch in plan:
                at = batch.position
                _I64.pack_into(out, at + v2.BASE_OFFSET_OFFSET, batch.base_offset)
                _I32.pack_into(out, at + v2.PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
                if stamp_time:
                    _stamp_log_append_time(out, at, batch.size, batch.header, log_append_time_ms)
            payload = out
        self._write(payload)

        start = self._size
        if start == 0:
            self._rolling_based_timestamp = plan[0].max_timestamp
        append_max, append_offset = NO_TIMESTAMP, -1
        counter = self._bytes_since_last_entry
        # a failed index write (ENOSPC) undoes the whole append: entries, state and bytes
        saved = (
            self._max_timestamp,
            self._offset_of_max_timestamp,
            self._offset_index.entries,
            self._time_index.entries,
        )
        try:
            for batch in plan:
                if batch.max_timestamp > append_max:
                    append_max, append_offset = batch.max_timestamp, batch.last_offset
                counter = self._index_batch(
                    counter,
                    batch.last_offset,
                    start + batch.position,
                    batch.max_timestamp,
                    batch.size,
                )
        except StorageIOError:
            self._max_timestamp, self._offset_of_max_timestamp = saved[0], saved[1]
            self._offset_index.truncate_to_entries(saved[2])
            self._time_index.truncate_to_entries(saved[3])
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)
            raise
        self._bytes_since_last_entry = counter
        self._size = start + total
        self._next_offset = plan[-1].last_offset + 1
        return plan[0].base_offset, plan[-1].last_offset, append_max, append_offset, total

    def _write(self, payload: bytes | bytearray) -> None:
        view = memoryview(payload)
        written = 0
        try:
            while written < len(view):
                written += os.pwrite(self._fd, view[written:], self._size + written)
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"cannot write: {exc.strerror}", self._log_path
            ) from exc

    # -------------------------------------------------------------- reads

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_position: int = -1,
        min_one_batch: bool = True,
    ) -> tuple[int, int] | None:
        """Locate whole batches to serve a fetch from ``start_offset``: ``None`` if no
        batch has ``last_offset >= start_offset``, else ``(position, length)``. A
        negative ``max_position`` means the end of the file."""
        fit("start_offset", start_offset)
        fit("max_bytes", max_bytes)
        fit("max_position", max_position)
        self._check_open()
        if max_bytes < 0:
            raise ValueError(f"max_bytes={max_bytes} must be >= 0")
        first = self._translate(start_offset, 0)
        if first is None:
            return None
        limit = self._size if max_position < 0 else min(max_position, self._size)
        if first.position + first.size > limit:
            return first.position, 0
        if first.size > max_bytes:
            return (first.position, first.size) if min_one_batch else (first.position, 0)
        length = first.size
        for entry in self._walk(first.position + first.size):
            if length + entry.size > max_bytes or entry.position + entry.size > limit:
                break
            length += entry.size
        return first.position, length

    def read_bytes(self, position: int, length: int) -> bytes:
        """``length`` bytes of the ``.log`` from ``position`` (short at the end of file)."""
        fit("position", position)
        fit("length", length)
        self._check_open()
        if position < 0 or length < 0:
            raise ValueError(f"position={position} and length={length} must be >= 0")
        parts = []
        while length > 0:
            try:
                chunk = os.pread(self._fd, length, position)
            except OSError as exc:
                raise StorageIOError(
                    exc.errno or 0, f"cannot read: {exc.strerror}", self._log_path
                ) from exc
            if not chunk:
                break
            parts.append(chunk)
            position += len(chunk)
            length -= len(chunk)
        return b"".join(parts)

    def translate_offset(
        self, offset: int, starting_position: int = 0
    ) -> tuple[int, int, int] | None:
        """``(batch_last_offset, position, size)`` of the first batch, at or after
        max(index lookup, ``starting_position``), whose last offset >= ``offset``."""
        fit("offset", offset)
        fit("starting_position", starting_position)
        self._check_open()
        entry = self._translate(offset, starting_position)
        if entry is None:
            return None
        return entry.last_offset, entry.position, entry.size

    def lookup_index(self, offset: int) -> tuple[int, int]:
        """Largest offset-index entry with offset <= ``offset``, as ``(offset, position)``;
        ``(base_offset, 0)`` if none."""
        fit("offset", offset)
        self._check_open()
        return self._offset_index.lookup(offset)

    def lookup_time_index(self, timestamp: int) -> tuple[int, int]:
        """Largest time-index entry with timestamp <= ``timestamp``, as
        ``(timestamp, offset)``; ``(-1, base_offset)`` if none."""
        fit("timestamp", timestamp)
        self._check_open()
        return self._time_index.lookup(timestamp)

    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int = -1
    ) -> tuple[int, int, int] | None:
        """Kafka's ``findOffsetByTimestamp``: ``(timestamp, offset, leader_epoch)`` of the
        first record with timestamp >= ``timestamp`` and offset >= ``starting_offset``.
        Records are decoded with full validation (``CorruptRecordError``)."""
        fit("timestamp", timestamp)
        fit("starting_offset", starting_offset)
        self._check_open()
        indexed_offset = self._time_index.lookup(timestamp)[1]
        position = self._offset_index.lookup(max(indexed_offset, starting_offset))[1]
        reader = _Reader(self._fd, self._log_path)
        for entry in self._walk(position, reader):
            if entry.max_timestamp < timestamp:
                continue
            for offset, record_timestamp, _key, _value, _headers in self._records(entry, reader):
                if record_timestamp >= timestamp and offset >= starting_offset:
                    return record_timestamp, offset, entry.leader_epoch
        return None

    def offset_index(self) -> list[tuple[int, int]]:
        """All offset-index entries as ``(absolute offset, position)``."""
        self._check_open()
        return self._offset_index.all_entries()

    def time_index(self) -> list[tuple[int, int]]:
        """All time-index entries as ``(timestamp, absolute offset)``."""
        self._check_open()
        return self._time_index.all_entries()

    # -------------------------------------------------------------- recovery

    def _shallow_valid(self, entry: _Entry, data: bytes) -> bool:
        """Kafka's ``ensureValid`` of a file batch: the CRC (sizes were checked by the
        walk)."""
        if entry.magic == v2.MAGIC_V2:
            return crc32c_of(memoryview(data)[v2.ATTRIBUTES_OFFSET :]) == entry.crc
        return crc32_of(memoryview(data)[legacy.MAGIC_OFFSET :]) == entry.crc

    def recover(self) -> int:
        """Rebuild both indexes from the log and truncate at the first invalid byte;
        returns the number of bytes truncated (see the stub for the rules).

        The indexes are preallocated for the rebuild and trimmed to their entries at the
        end, whatever their size before (Kafka's ``trimToValidSize``; the log grows the
        active segment's again with :meth:`resize_indexes`). The bytes-since-last-entry
        counter of appends is left as it was, as in Kafka. An index that cannot hold the
        rebuilt entries raises ``IndexFullError``."""
        self._check_open()
        self._offset_index.reset()
        self._time_index.reset()
        self._max_timestamp, self._offset_of_max_timestamp = NO_TIMESTAMP, -1
        valid = 0
        counter = 0
        first_max_timestamp = NO_TIMESTAMP
        previous_last: int | None = None
        reader = _Reader(self._fd, self._log_path)
        with contextlib.suppress(CorruptRecordError):
            for entry in self._walk(0, reader):
                if not self._shallow_valid(entry, reader.read(entry.position, entry.size)):
                    break
                if (
                    entry.base_offset < self._base_offset
                    or (previous_last is not None and entry.base_offset <= previous_last)
                    or entry.last_offset < entry.base_offset
                    or entry.last_offset - self._base_offset > I32_MAX
                ):
                    break
                if previous_last is None:
                    first_max_timestamp = entry.max_timestamp
                counter = self._index_batch(
                    counter, entry.last_offset, valid, entry.max_timestamp, entry.size
                )
                valid += entry.size
                previous_last = entry.last_offset

        truncated = self._size - valid
        if truncated > 0:
            self._truncate_log(valid)
        self._rolling_based_timestamp = first_max_timestamp
        self._next_offset = self._base_offset if previous_last is None else previous_last + 1
        if self._max_timestamp > self._time_index.last_entry()[0]:
            self._time_index.maybe_append(
                self._max_timestamp, self._offset_of_max_timestamp, skip_full_check=True
            )
        self._offset_index.trim()
        self._time_index.trim()
        return truncated

    def _truncate_log(self, size: int) -> None:
        try:
            os.ftruncate(self._fd, size)
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"cannot truncate: {exc.strerror}", self._log_path
            ) from exc
        self._size = size

    def sanity_check(self) -> None:
        """``CorruptIndexError`` (naming the file) if an index file is malformed.

        The length checked is the one found at open (a resize or trim changes the file
        later) until ``recover``/``truncate_to`` rewrite the index. Offset-index positions
        must strictly increase and be <= the log size."""
        self._check_open()
        for index in (self._offset_index, self._time_index):
            if index.misaligned_length is not None:
                raise CorruptIndexError(
                    f"{index.path}: length {index.misaligned_length} is not a multiple of "
                    f"{index.ENTRY_SIZE}"
                )
        previous: tuple[int, int] | None = None
        for slot, (offset, position) in enumerate(self._offset_index.all_entries()):
            problem = None
            if offset < self._base_offset:
                problem = f"offset {offset} is below the base offset {self._base_offset}"
            elif previous is not None and offset <= previous[0]:
                problem = f"offset {offset} does not increase (previous {previous[0]})"
            elif previous is not None and position <= previous[1]:
                problem = f"position {position} does not increase (previous {previous[1]})"
            elif position > self._size:
                problem = f"position {position} is beyond the log size {self._size}"
            if problem:
                raise CorruptIndexError(f"{self._index_path}: entry {slot}: {problem}")
            previous = (offset, position)
        previous = None
        for slot, (timestamp, offset) in enumerate(self._time_index.all_entries()):
            problem = None
            if offset < self._base_offset:
                problem = f"offset {offset} is below the base offset {self._base_offset}"
            elif previous is not None and timestamp <= previous[0]:
                problem = f"timestamp {timestamp} does not increase (previous {previous[0]})"
            elif previous is not None and offset < previous[1]:
                problem = f"offset {offset} decreases (previous {previous[1]})"
            if problem:
                raise CorruptIndexError(f"{self._time_index_path}: entry {slot}: {problem}")
            previous = (timestamp, offset)

    def truncate_to(self, offset: int) -> int:
        """Remove every batch from the one containing ``offset`` onward and the index
        entries with offset >= ``offset``; returns bytes removed.

        As Kafka's ``truncateTo``: both indexes are preallocated again; the max timestamp
        (when >= 0) comes back from the time index's last entry or a larger batch max
        timestamp found after it (Kafka's ``readLargestTimestamp``); ``next_offset`` is
        rescanned as on open."""
        fit("offset", offset)
        self._check_open()
        mapping = self._translate(offset, 0)
        self._offset_index.truncate_to(offset)
        self._time_index.truncate_to(offset)
        self._offset_index.resize(self._offset_index.max_index_size)
        self._time_index.resize(self._time_index.max_index_size)
        truncated = 0
        if mapping is not None:
            truncated = self._size - mapping.position
            self._truncate_log(mapping.position)
        if self._size == 0:
            self._rolling_based_timestamp = NO_TIMESTAMP
        self._bytes_since_last_entry = 0
        if self._max_timestamp >= 0:
            self._max_timestamp, self._offset_of_max_timestamp = self._read_largest_timestamp()
        self._next_offset = self._scan_next_offset()
        return truncated

    def _read_largest_timestamp(self) -> tuple[int, int]:
        if self._time_index.entries:
            last_timestamp, last_offset = self._time_index.last_entry()
        else:
            last_timestamp, last_offset = NO_TIMESTAMP, -1
        position = self._offset_index.lookup(max(last_offset, self._base_offset))[1]
        best_timestamp, best_offset = NO_TIMESTAMP, -1
        for entry in self._walk(position):
            if entry.max_timestamp > best_timestamp:
                best_timestamp, best_offset = entry.max_timestamp, entry.last_offset
        if best_timestamp > last_timestamp:
            return best_timestamp, best_offset
        return last_timestamp, last_offset

    # -------------------------------------------------------------- lifecycle

    def resize_indexes(self, max_index_size: int | None = None) -> None:
        """Kafka's ``resizeIndexes``: both index files to ``max_index_size`` (default:
        the segment's) rounded down to the entry size, never below their entries
        (``ValueError`` outside 0..2**31-1)."""
        if max_index_size is None:
            max_index_size = self._offset_index.max_index_size
        fit("max_index_size", max_index_size)
        check_range("max_index_size", max_index_size, 0, I32_MAX)
        self._check_open()
        self._offset_index.resize(max_index_size)
        self._time_index.resize(max_index_size)

    def seal(self) -> None:
        """The segment stops being active (log roll): add the final time-index entry if
        greater than the last, and trim both index files to their entries."""
        self._check_open()
        if self._max_timestamp > self._time_index.last_entry()[0]:
            self._time_index.maybe_append(
                self._max_timestamp, self._offset_of_max_timestamp, skip_full_check=True
            )
        self._offset_index.trim()
        self._time_index.trim()

    def flush(self) -> None:
        """fsync the ``.log`` and both indexes."""
        self._check_open()
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise StorageIOError(
                exc.errno or 0, f"cannot fsync: {exc.strerror}", self._log_path
            ) from exc
        self._offset_index.flush()
        self._time_index.flush()

    def close(self) -> None:
        """``seal()``, flush and close every file. Idempotent."""
        if self._closed:
            return
        try:
            self.seal()
            self.flush()
        finally:
            self._closed = True
            try:
                self._offset_index.close()
                self._time_index.close()
            finally:
                os.close(self._fd)

    def delete(self) -> None:
        """Close and remove the three files."""
        self.close()
        for path in (self._log_path, self._index_path, self._time_index_path):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StorageIOError(
                    exc.errno or 0, f"cannot delete: {exc.strerror}", path
                ) from exc

    def __del__(self) -> None:
        # Dropped without close(): release the descriptors only. Nothing is sealed or
        # trimmed, so the files stay as a crash would leave them (recover() handles it).
        if not getattr(self, "_closed", True):
            self._closed = True
            for release in (self._offset_index.release, self._time_index.release):
                with contextlib.suppress(Exception):
                    release()
            with contextlib.suppress(OSError):
                os.close(self._fd)

    def __repr__(self) -> str:
        return (
            f"Segment({self._log_path!r}, size={self._size}, next_offset={self._next_offset}"
            f"{', closed' if self._closed else ''})"
        )


def _stamp_log_append_time(
    out: bytearray, at: int, size: int, header: BatchHeaderTuple, log_append_time_ms: int
) -> None:
    """Kafka's ``DefaultRecordBatch.setMaxTimestamp(LOG_APPEND_TIME, t)``: unless the
    batch already says so, rewrite the attributes from the known bits with the
    timestamp-type bit set (bits 7-15 are dropped, as ``computeAttributes`` does), set
    maxTimestamp and recompute the CRC."""
    attributes = header[v2.H_ATTRIBUTES]
    if attributes & v2.TIMESTAMP_TYPE_MASK and header[v2.H_MAX_TIMESTAMP] == log_append_time_ms:
        return
    attributes = (attributes & v2.KNOWN_ATTRIBUTES_MASK) | v2.TIMESTAMP_TYPE_MASK
    _I16.pack_into(out, at + v2.ATTRIBUTES_OFFSET, attributes)
    _I64.pack_into(out, at + v2.MAX_TIMESTAMP_OFFSET, log_append_time_ms)
    crc = crc32c_of(memoryview(out)[at + v2.ATTRIBUTES_OFFSET : at + size])
    _U32.pack_into(out, at + v2.CRC_OFFSET, crc)
