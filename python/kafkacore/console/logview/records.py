"""Reading a partition's records for the Messages view: by offset and by timestamp through
the indexes (:func:`read_records`, :func:`offset_for_timestamp`), newest-N
(:func:`newest_records`), with filters (:class:`RecordFilter`; a filter that may read the
whole log runs in the worker process, a task at a time) and rendering
(:func:`render_bytes`: JSON, text, hex).

Thread-safety: safe from any thread.
"""

from __future__ import annotations

import json
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from kafkacore.console.logview.scan import (
    HEADER,
    OFFSET_AND_LENGTH,
    TASK_BYTES,
    Budget,
    ScanCancelled,
    run_task,
    use_process,
)
from kafkacore.console.logview.sources import PartitionSource, SegmentRef, read_files
from kafkacore.native import backend
from kafkacore.record import Record, iter_batches, records
from kafkacore.record.layout import (
    CONTROL_FLAG_MASK,
)

__all__ = [
    "DecodeMode",
    "ReadResult",
    "RecordFilter",
    "last_offset_of",
    "le_array",
    "newest_records",
    "offset_for_timestamp",
    "read_records",
    "record_at",
    "render_bytes",
]


DecodeMode = Literal["auto", "json", "text", "hex"]


@dataclass(frozen=True)
class RecordFilter:
    """Filters on a record's key, value and headers: each set one must hold (``contains``
    or ``equals`` on the bytes, the text given encoded as UTF-8). ``header_key`` alone: the
    record has that header; with ``header_value``: that header has that value (contains or
    equals, by ``header_mode``)."""

    key: str | None = None
    key_mode: Literal["contains", "equals"] = "contains"
    value: str | None = None
    value_mode: Literal["contains", "equals"] = "contains"
    header_key: str | None = None
    header_value: str | None = None
    header_mode: Literal["contains", "equals"] = "contains"

    @property
    def active(self) -> bool:
        return any(x for x in (self.key, self.value, self.header_key, self.header_value))

    def matches(self, r: Record) -> bool:
        if self.key and not _match(r.key, self.key, self.key_mode):
            return False
        if self.value and not _match(r.value, self.value, self.value_mode):
            return False
        if self.header_key or self.header_value:
            return any(
                (not self.header_key or name == self.header_key)
                and (not self.header_value or _match(value, self.header_value, self.header_mode))
                for name, value in r.headers
            )
        return True


def _match(data: bytes | None, text: str, mode: str) -> bool:
    if data is None:
        return False
    needle = text.encode()
    return data == needle if mode == "equals" else needle in data


def _decode(data: bytes, lo: int, hi: int) -> list[Record]:
    """The data records of the whole batches in ``data`` with offsets in ``[lo, hi)``
    (control batches skipped)."""
    found: list[Record] = []
    for pos, magic, _size in iter_batches(data):
        if magic >= 2:
            h = HEADER.unpack_from(data, pos)
            if h[5] & CONTROL_FLAG_MASK or h[0] + h[6] < lo or h[0] >= hi:
                continue
        found.extend(r for r in records(data, pos) if lo <= r.offset < hi)
    return found


def le_array(raw: bytes, code: str) -> array[int]:
    values = array(code)
    values.frombytes(raw)
    if struct.pack("=i", 1) != struct.pack("<i", 1):  # Arrow buffers are little-endian
        values.byteswap()
    return values


def _valid(validity: bytes | None, i: int) -> bool:
    return validity is None or bool(validity[i >> 3] >> (i & 7) & 1)


def record_at(data: bytes, offset: int) -> Record | None:
    """The data record at ``offset`` in the whole batches of ``data``, decoded by the
    native columnar decoder (which walks the batch without building the other records)."""
    count, _next, keys, values, offsets, stamps, _types, headers = backend.decode_columns(
        data, offset, offset + 1, True
    )
    if count != 1:
        return None

    def cell(column: tuple[bytes | None, bytes, bytes]) -> bytes | None:
        validity, bounds, payload = column
        if not _valid(validity, 0):
            return None
        at = le_array(bounds, "i")
        return payload[at[0] : at[1]]

    found: list[tuple[str, bytes | None]] = []
    if headers is not None:
        lists, key_bounds, key_data, value_validity, value_bounds, value_data = headers
        rows, kb, vb = le_array(lists, "i"), le_array(key_bounds, "i"), le_array(value_bounds, "i")
        for j in range(rows[0], rows[1]):
            name = key_data[kb[j] : kb[j + 1]].decode()
            found.append(
                (name, value_data[vb[j] : vb[j + 1]] if _valid(value_validity, j) else None)
            )
    return Record(
        le_array(offsets, "q")[0], le_array(stamps, "q")[0] // 1000, cell(keys), cell(values), found
    )


def last_offset_of(data: bytes) -> int | None:
    last: int | None = None
    for pos, magic, _size in iter_batches(data):
        if magic >= 2:
            h = HEADER.unpack_from(data, pos)
            last = h[0] + h[6]
        else:
            last = OFFSET_AND_LENGTH.unpack_from(data, pos)[0]
    return last


@dataclass(frozen=True)
class ReadResult:
    """Records read from ``start``: ``next_offset`` is where a following page starts;
    ``scanned_bytes`` what was read; ``complete``: the range up to ``end`` was read whole
    (``False`` when the page filled up or the budget ran out first)."""

    records: list[Record]
    start: int
    next_offset: int
    end: int
    scanned_bytes: int
    complete: bool
    stopped: str | None = None


def read_records(
    source: PartitionSource,
    start: int,
    *,
    max_records: int = 100,
    end: int | None = None,
    record_filter: RecordFilter | None = None,
    budget: Budget | None = None,
    chunk_bytes: int = 1 << 20,
) -> ReadResult:
    """Up to ``max_records`` records (matching ``record_filter``) from offset ``start``
    (raised to the log start offset) to ``end`` (default and cap: the high watermark)."""
    budget = budget or Budget.of(seconds=10)
    offsets = source.offsets()
    stop = offsets.high_watermark if end is None else min(end, offsets.high_watermark)
    offset = max(start, offsets.log_start_offset)
    first = offset
    found: list[Record] = []
    scanned = 0
    stopped: str | None = None
    refs = source.segments() if record_filter is not None and use_process() else None
    while offset < stop and len(found) < max_records:
        try:
            budget.spend()
            if refs is not None:
                # a filter may read the whole log: in the scan process, a task at a time
                got, offset, nbytes = run_task(
                    budget,
                    _scan_task,
                    refs,
                    offset,
                    stop,
                    record_filter,
                    max_records - len(found),
                    TASK_BYTES,
                )
                found += got
                scanned += nbytes
                budget.spend(nbytes)
                if not nbytes:
                    break
                continue
        except ScanCancelled as exc:
            stopped = str(exc)
            break
        data = source.read_chunk(offset, chunk_bytes, stop)
        if not data:
            break
        scanned += len(data)
        budget.spent += len(data)
        got, offset = _filter_chunk(data, offset, stop, record_filter, max_records - len(found))
        found += got
    return ReadResult(found, first, min(offset, stop), stop, scanned, offset >= stop, stopped)


def _filter_chunk(
    data: bytes, offset: int, stop: int, record_filter: RecordFilter | None, limit: int
) -> tuple[list[Record], int]:
    """The records of ``data`` in ``[offset, stop)`` matching ``record_filter``, at most
    ``limit``, and the offset to read next."""
    found: list[Record] = []
    for r in _decode(data, offset, stop):
        if record_filter is None or record_filter.matches(r):
            found.append(r)
            if len(found) == limit:
                return found, r.offset + 1
    last = last_offset_of(data)
    return found, stop if last is None else max(offset + 1, last + 1)


def _scan_task(
    refs: Sequence[SegmentRef],
    offset: int,
    stop: int,
    record_filter: RecordFilter | None,
    limit: int,
    max_bytes: int,
) -> tuple[list[Record], int, int]:
    """Worker task: :func:`_filter_chunk` over the segment files from ``offset`` until
    ``limit`` matches, ``stop`` or about ``max_bytes`` read: ``(matches, next offset, bytes
    read)``."""
    found: list[Record] = []
    scanned = 0
    while offset < stop and len(found) < limit and scanned < max_bytes:
        data = read_files(refs, offset, 1 << 20, stop)
        if not data:
            break
        scanned += len(data)
        got, offset = _filter_chunk(data, offset, stop, record_filter, limit - len(found))
        found += got
    return found, offset, scanned


def newest_records(source: PartitionSource, n: int, budget: Budget | None = None) -> ReadResult:
    """The last ``n`` records below the high watermark (gaps of compaction and markers
    make the search widen its start until ``n`` are found or the log start is reached)."""
    budget = budget or Budget.of(seconds=10)
    offsets = source.offsets()
    hw, log_start = offsets.high_watermark, offsets.log_start_offset
    want = n
    while True:
        start = max(log_start, hw - want)
        result = read_records(source, start, max_records=1 << 30, end=hw, budget=budget)
        if len(result.records) >= n or start <= log_start or result.stopped:
            return replace(result, records=result.records[-n:] if n else [])
        want *= 4


def offset_for_timestamp(source: PartitionSource, timestamp: int) -> int | None:
    """The first offset whose record timestamp is >= ``timestamp`` (ms), found through the
    time index (ListOffsets' answer), or ``None``."""
    found = source.offset_for_timestamp(timestamp)
    if found is None or found >= source.offsets().high_watermark:
        return None
    return found


def render_bytes(
    data: bytes | None, mode: DecodeMode = "auto", limit: int = 4096
) -> tuple[str, str]:
    """``(text, mode used)``: JSON pretty-printed, UTF-8 text or hex; ``auto`` tries them in
    that order. Longer than ``limit`` characters: cut, with a note (a console must not ship a
    huge value to the browser)."""
    if data is None:
        return "null", "null"
    used: str = mode
    if mode in ("auto", "json"):
        try:
            text = json.dumps(json.loads(data), indent=2, ensure_ascii=False)
            used = "json"
        except (ValueError, UnicodeDecodeError):
            used = "text" if mode == "auto" else "hex"
    if used == "text":
        try:
            text = data.decode()
        except UnicodeDecodeError:
            used = "hex" if mode == "auto" else "text"
            if used == "text":
                text = data.decode(errors="replace")
    if used == "hex":
        text = data.hex(" ")
    if len(text) > limit:
        text = text[:limit] + f"… ({len(data)} bytes)"
    return text, used
