"""Exact record counts of a partition (:func:`partition_counts`) from the RecordBatch v2
headers only: ``recordsCount`` of each batch (which stays exact after compaction empties or
thins a batch, where ``high watermark - log start offset`` overcounts), the control flag
(the records of transaction markers are counted apart: no consumer ever sees them) and, for
transactional topics, the aborted transactions of the ``.txnindex`` files (the records a
``read_committed`` consumer skips, found with the consumer's own algorithm,
:class:`~kafkacore.log.reader.AbortedFilter`). A batch is decoded only when it straddles
the log start offset or the high watermark. The range counted is what a consumer can
fetch: ``[log start offset, high watermark)``.

A segment's whole-file counts are kept between calls (a closed segment's never change
while its file does not; the active one's grow from where the last walk stopped).

Thread-safety: safe from any thread; the summary cache locks itself.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafkacore.console.logview.scan import (
    HEADER,
    KEY_CHUNK,
    NO_END,
    TASK_BYTES,
    Budget,
    file_identity,
    legacy_records,
    run_task,
    walk_headers,
)
from kafkacore.console.logview.sources import (
    PartitionOffsets,
    PartitionSource,
    SegmentRef,
    read_files,
)
from kafkacore.log.files import (
    TopicPartition,
)
from kafkacore.log.reader import AbortedFilter, SegmentReader
from kafkacore.native import backend
from kafkacore.record import iter_batches
from kafkacore.record.layout import (
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = ["PartitionCounts", "partition_counts", "segment_counts", "topic_counts"]


@dataclass
class _Counts:
    """What a walk over batch headers found."""

    batches: int = 0
    records: int = 0
    control_batches: int = 0
    control_records: int = 0
    transactional_batches: int = 0
    first_offset: int = -1
    next_offset: int = -1
    min_timestamp: int = -1
    max_timestamp: int = -1
    first_batch_max_timestamp: int = -1

    def add(self, other: _Counts) -> None:
        self.batches += other.batches
        self.records += other.records
        self.control_batches += other.control_batches
        self.control_records += other.control_records
        self.transactional_batches += other.transactional_batches
        if other.first_offset >= 0 and self.first_offset < 0:
            self.first_offset = other.first_offset
            self.first_batch_max_timestamp = other.first_batch_max_timestamp
        self.next_offset = max(self.next_offset, other.next_offset)
        if other.min_timestamp >= 0:
            self.min_timestamp = (
                other.min_timestamp
                if self.min_timestamp < 0
                else min(self.min_timestamp, other.min_timestamp)
            )
        self.max_timestamp = max(self.max_timestamp, other.max_timestamp)

    def subtract(self, other: _Counts) -> None:
        self.batches -= other.batches
        self.records -= other.records
        self.control_batches -= other.control_batches
        self.control_records -= other.control_records
        self.transactional_batches -= other.transactional_batches


def _count_batch(
    counts: _Counts, fd: int, position: int, size: int, h: tuple[Any, ...] | None, lo: int, hi: int
) -> None:
    """Add one batch's records with offsets in ``[lo, hi)`` to ``counts`` (a batch wholly
    inside from its header; one straddling a bound is decoded)."""
    if h is None:  # legacy: one message, or a compressed wrapper of several
        inner = [r for r in legacy_records(fd, position, size) if lo <= r[0] < hi]
        if inner:
            counts.batches += 1
            counts.records += len(inner)
            _note_offsets(counts, inner[0][0], inner[-1][0] + 1, inner[-1][1], inner[-1][1])
        return
    base, _length, _epoch, _magic, _crc, attributes, delta = h[:7]
    base_ts, max_ts, _pid, _pepoch, _seq, count = h[7:]
    last = base + delta
    if last < lo or base >= hi:
        return
    if base < lo or last >= hi:
        data = os.pread(fd, size, position)
        count = sum(1 for r in backend.batch_records(data, 0) if lo <= r[0] < hi)
        if count == 0:
            return
    counts.batches += 1
    if attributes & CONTROL_FLAG_MASK:
        counts.control_batches += 1
        counts.control_records += count
    else:
        counts.records += count
    if attributes & TRANSACTIONAL_FLAG_MASK:
        counts.transactional_batches += 1
    first_ts = (
        base_ts
        if not attributes & (TIMESTAMP_TYPE_MASK | DELETE_HORIZON_FLAG_MASK) and base_ts >= 0
        else max_ts
    )
    _note_offsets(counts, base, last + 1, first_ts, max_ts)


def _note_offsets(
    counts: _Counts, first: int, next_offset: int, first_ts: int, max_ts: int
) -> None:
    if counts.first_offset < 0:
        counts.first_offset = first
        counts.first_batch_max_timestamp = max_ts
    counts.next_offset = max(counts.next_offset, next_offset)
    if first_ts >= 0:
        counts.min_timestamp = (
            first_ts if counts.min_timestamp < 0 else min(counts.min_timestamp, first_ts)
        )
    counts.max_timestamp = max(counts.max_timestamp, max_ts)


def _walk_task(
    log_path: str, position: int, max_bytes: int, lo: int, hi: int
) -> tuple[_Counts, int, tuple[int, int]]:
    """Worker task: count the batches of ``log_path`` from ``position`` (at most
    ``max_bytes`` of them), records in ``[lo, hi)``; a batch starting at or above ``hi``
    ends the walk. Returns the counts, the position reached and the file's identity."""
    counts = _Counts()
    fd = os.open(log_path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        stop = position + max_bytes
        for at, size, h in walk_headers(fd, position, stop, st.st_size):
            first = h[0] if h is not None else legacy_records(fd, at, size)[0][0]
            if first >= hi:
                return counts, at, (st.st_dev, st.st_ino)
            _count_batch(counts, fd, at, size, h, lo, hi)
            position = at + size
        return counts, position, (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


@dataclass
class _Summary:
    """A segment's whole-file counts, kept between calls: a closed segment's never change
    while its file does not; the active one's grow from ``position``."""

    identity: tuple[int, int]
    position: int
    counts: _Counts


_summaries: OrderedDict[str, _Summary] = OrderedDict()
_summaries_lock = threading.Lock()
_MAX_SUMMARIES = 100_000


def segment_counts(ref: SegmentRef, budget: Budget) -> _Counts:
    """The counts of every batch of the segment (cached; incremental for the active one)."""
    return _segment_summary(ref, budget)[0]


def _segment_summary(ref: SegmentRef, budget: Budget) -> tuple[_Counts, int]:
    """:func:`segment_counts` and the position up to which they were counted."""
    path = ref.log_path
    found = file_identity(path)
    if found is None:
        return _Counts(), 0
    identity, size = found
    with _summaries_lock:
        summary = _summaries.get(path)
        if summary is not None and (summary.identity != identity or summary.position > size):
            summary = None
        summary = (
            _Summary(identity, 0, _Counts())
            if summary is None
            else _Summary(summary.identity, summary.position, replace(summary.counts))
        )
    while summary.position < size:
        counts, position, seen = run_task(
            budget, _walk_task, path, summary.position, TASK_BYTES, -1, NO_END
        )
        budget.spend(position - summary.position)
        if seen != identity or position == summary.position:
            break  # replaced meanwhile (the next call starts again), or a torn tail
        summary.counts.add(counts)
        summary.position = position
    with _summaries_lock:
        _summaries[path] = summary
        _summaries.move_to_end(path)
        while len(_summaries) > _MAX_SUMMARIES:
            _summaries.popitem(last=False)
    return replace(summary.counts), summary.position


def _range_counts(
    ref: SegmentRef,
    offset: int,
    lo: int,
    hi: int,
    budget: Budget,
    stop_position: int = 2**63 - 1,
) -> _Counts:
    """Counts of the segment's records in ``[lo, hi)``, walking from the batch holding
    ``offset`` (found with the offset index) to ``stop_position`` at most. Not cached."""
    try:
        with SegmentReader(ref.directory, ref.base_offset) as segment:
            position = segment.locate(offset)
    except FileNotFoundError:
        return _Counts()
    total = _Counts()
    while position is not None and position < stop_position:
        step = min(TASK_BYTES, stop_position - position)
        counts, reached, _identity = run_task(
            budget, _walk_task, ref.log_path, position, step, lo, hi
        )
        budget.spend(reached - position)
        total.add(counts)
        if reached == position or reached - position < step:
            break
        position = reached
    return total


@dataclass(frozen=True)
class PartitionCounts:
    """Exact counts of a partition's records in ``[log_start_offset, high_watermark)``.

    ``records``: data records - what a ``read_uncommitted`` consumer reads from the log
    start to the high watermark; ``control_records``: transaction markers (never returned to
    a consumer, and not in ``records``); ``aborted_records``: those of ``records`` in aborted
    transactions (a ``read_committed`` consumer skips them); ``offset_span``: ``high
    watermark - log start offset``, what a console without the files would show."""

    topic_partition: TopicPartition
    offsets: PartitionOffsets
    records: int
    control_records: int
    aborted_records: int
    batches: int
    control_batches: int
    transactional_batches: int

    @property
    def offset_span(self) -> int:
        return self.offsets.high_watermark - self.offsets.log_start_offset

    @property
    def committed_records(self) -> int:
        """``records`` less the aborted ones (those of transactions still open included)."""
        return self.records - self.aborted_records


def partition_counts(source: PartitionSource, budget: Budget | None = None) -> PartitionCounts:
    """Count ``source``'s records from the batch headers (see the module docstring)."""
    budget = budget or Budget()
    offsets = source.offsets()
    start, hw = offsets.log_start_offset, offsets.high_watermark
    total = _Counts()
    if hw > start:
        for ref in source.segments():
            if ref.next_base is not None and ref.next_base <= start:
                continue
            if ref.base_offset >= hw:
                break
            if start > ref.base_offset:
                # the log start offset (DeleteRecords) is inside: count from it
                total.add(_range_counts(ref, start, start, hw, budget))
                continue
            counts, counted_to = _segment_summary(ref, budget)
            if ref.next_base is None or ref.next_base > hw:
                # what is at or above the high watermark, within what was just counted
                counts.subtract(_range_counts(ref, hw, hw, NO_END, budget, counted_to))
            total.add(counts)
    aborted = _aborted_records(source, start, hw, budget) if total.transactional_batches else 0
    return PartitionCounts(
        source.topic_partition,
        offsets,
        total.records,
        total.control_records,
        aborted,
        total.batches,
        total.control_batches,
        total.transactional_batches,
    )


def _data_records(data: bytes, lo: int, hi: int) -> int:
    found = 0
    for pos, magic, _size in iter_batches(data):
        if magic < 2:
            continue
        h = HEADER.unpack_from(data, pos)
        if h[5] & CONTROL_FLAG_MASK or h[0] + h[6] < lo or h[0] >= hi:
            continue
        if h[0] < lo or h[0] + h[6] >= hi:
            found += sum(1 for r in backend.batch_records(data, pos) if lo <= r[0] < hi)
        else:
            found += h[12]
    return found


def _aborted_records(source: PartitionSource, start: int, hw: int, budget: Budget) -> int:
    """Records of aborted transactions in ``[start, hw)``: the batches a ``read_committed``
    consumer's filter drops, from the first aborted transaction on."""
    aborted = source.aborted_transactions(start, hw)
    if not aborted:
        return 0
    keep = AbortedFilter((a.producer_id, a.first_offset) for a in aborted)
    offset = max(start, min(a.first_offset for a in aborted))
    refs = source.segments()
    found = 0
    while offset < hw:
        more, next_offset, keep, scanned = run_task(
            budget, _aborted_task, refs, keep, offset, start, hw, TASK_BYTES
        )
        budget.spend(scanned)
        found += more
        if next_offset <= offset:
            break
        offset = next_offset
    return found


def _aborted_task(
    refs: Sequence[SegmentRef],
    keep: AbortedFilter,
    offset: int,
    start: int,
    hw: int,
    max_bytes: int,
) -> tuple[int, int, AbortedFilter, int]:
    """Worker task: the data records in ``[start, hw)`` that ``keep`` (a
    ``read_committed`` consumer's filter, carried from task to task) drops, in the batches
    from ``offset`` (about ``max_bytes`` of them): ``(count, next offset, filter, bytes)``."""
    found = scanned = 0
    while offset < hw and scanned < max_bytes:
        data = read_files(refs, offset, KEY_CHUNK, hw)
        if not data:
            break
        scanned += len(data)
        kept, next_offset = keep.filter(data)
        found += _data_records(data, start, hw) - _data_records(kept, start, hw)
        if next_offset is None or next_offset <= offset:
            break
        offset = next_offset
    return found, offset, keep, scanned


def topic_counts(
    sources: Iterable[PartitionSource], budget: Budget | None = None
) -> dict[int, PartitionCounts]:
    """:func:`partition_counts` of each partition, by partition number."""
    budget = budget or Budget()
    return {s.topic_partition.partition: partition_counts(s, budget) for s in sources}
