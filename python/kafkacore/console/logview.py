"""Exact facts about a partition's log, for the console's Messages and Storage views.

Pure functions and small caches over one partition's files, from either source:

* :class:`LogPartition` - the broker's own :class:`~kafkacore.log.Log` (in the broker):
  records are read through :meth:`Log.read <kafkacore.log.Log.read>` (the offset index's
  lookup) and timestamps found by :meth:`Log.offset_for_timestamp
  <kafkacore.log.Log.offset_for_timestamp>` (the time index's), bounded by the high
  watermark the replica manager gives;
* :class:`DirectoryPartition` - a log directory read read-only, as the Spark source's
  ``kafkacore.path`` mode reads it (:mod:`kafkacore.log.reader`: ``pread`` only, nothing
  written).

What is computed, and how
-------------------------

* **Record counts** (:func:`partition_counts`) come from the RecordBatch v2 headers only:
  ``recordsCount`` of each batch (which stays exact after compaction empties or thins a
  batch, where ``high watermark - log start offset`` overcounts), the control flag (the
  records of transaction markers are counted apart: no consumer ever sees them) and, for
  transactional topics, the aborted transactions of the ``.txnindex`` files (the records a
  ``read_committed`` consumer skips, found with the consumer's own algorithm,
  :class:`~kafkacore.log.reader.AbortedFilter`). A batch is decoded only when it
  straddles the log start offset or the high watermark. The range counted is what a
  consumer can fetch: ``[log start offset, high watermark)``.
* **Sizes on disk** (:func:`partition_disk_usage`): every file of the partition directory
  by kind (``.log``, ``.index``, ``.timeindex``, ``.txnindex``, the rest), apparent and
  allocated bytes, and the ``.deleted`` files waiting out ``file.delete.delay.ms``.
* **Segments** (:func:`segment_infos`): base offset, next offset, size, batches, records,
  first/last timestamp, the written entries of each index and of the ``.txnindex``.
* **Reads** (:func:`read_records`, :func:`newest_records`, :func:`offset_for_timestamp`):
  by offset and by timestamp through the indexes, newest-N, with filters
  (:class:`RecordFilter`) and rendering (:func:`render_bytes`: JSON, text, hex).
* **Key search** (:class:`KeyIndex`): the first search of a partition reads every segment
  once and keeps, per segment, sorted ``array('Q')`` runs of ``crc32(key) << 32 | (offset -
  base offset)`` - 8 bytes per keyed record, all partitions together under
  :attr:`KeyIndex.max_memory_bytes`; a later lookup is a binary search per run plus the
  reads that check each candidate's key (so a hash collision never returns a wrong
  record, and the answer is complete). Closed segments are indexed once (and again if the
  file is replaced - the cleaner's swap gives a new inode - or shrinks), and their runs are
  stored on disk outside the log directories (see :func:`_cache_dir`), so a restarted
  broker's first search scans only the active segment; the active segment is indexed
  incrementally from the position where the last scan stopped.
* **Why not deleted / compacted yet** (:func:`retention_report`,
  :func:`compaction_report`): the predicates of :mod:`kafkacore.log.retention` and the
  offsets of Kafka's ``LogCleanerManager`` (:mod:`kafkacore.log.cleaner`), per segment and
  per partition, explained.
* **dump-log** (:func:`dump_segment`): ``kafkacore.tools.dump_log``'s output of one file.

Protecting the broker
---------------------

Every scan takes a :class:`Budget` (bytes, a deadline and a cancel event, checked between
chunks) and raises :class:`ScanCancelled` when it runs out. The whole-segment scans (header
walks and key indexing) run, one segment chunk at a time, in a worker *process*
(:func:`scan_pool`, ``spawn``ed, ``nice`` 19), so the broker's event loop never waits for
the GIL behind them and the kernel serves the broker first; progress kept between chunks
makes them resumable. ``KAFKACORE_CONSOLE_SCAN_PROCESS=0`` runs them in the calling thread.

Thread-safety: the functions are safe from any thread (each opens its own descriptors);
:class:`KeyIndex` and the segment summary cache lock themselves.
"""

from __future__ import annotations

import bisect
import concurrent.futures
import contextlib
import io
import json
import multiprocessing
import os
import struct
import threading
import time
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from kafkacore.errors import KafkaCoreError, OffsetOutOfRangeError
from kafkacore.log.files import (
    DELETED_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
    TopicPartition,
    filename_prefix_from_offset,
    log_dir_name,
)
from kafkacore.log.reader import AbortedFilter, LogDirectory, SegmentReader, written_entries
from kafkacore.log.txn_index import AbortedTxn
from kafkacore.native import backend
from kafkacore.record import Record, iter_batches, records
from kafkacore.record.layout import (
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

if TYPE_CHECKING:
    from kafkacore.log import Log, LogSegment
    from kafkacore.log.cleaner import LogCleaner

__all__ = [
    "Budget",
    "CompactionReport",
    "DecodeMode",
    "DirectoryPartition",
    "DiskUsage",
    "KeyIndex",
    "KeySearchResult",
    "LogPartition",
    "PartitionCounts",
    "PartitionOffsets",
    "PartitionSource",
    "ReadResult",
    "RecordFilter",
    "RetentionReport",
    "ScanCancelled",
    "SegmentInfo",
    "SegmentRef",
    "SegmentRetention",
    "compaction_report",
    "dump_segment",
    "newest_records",
    "offset_for_timestamp",
    "partition_counts",
    "partition_disk_usage",
    "read_records",
    "render_bytes",
    "retention_report",
    "scan_pool",
    "segment_infos",
    "shutdown_scan_pool",
    "topic_counts",
]

# RecordBatch v2's stored header (Kafka's DefaultRecordBatch): baseOffset, batchLength,
# partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, baseTimestamp,
# maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount.
_HEADER = struct.Struct(">qiibIhiqqqhii")
assert _HEADER.size == RECORD_BATCH_OVERHEAD
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_MIN_BATCH_LENGTH = 14  # the smallest legacy message after the 12-byte log overhead
_TIME_INDEX_ENTRY = 12
_TXN_INDEX_ENTRY = 34
_WALK_CHUNK = 1 << 20
_KEY_CHUNK = 8 << 20
_TASK_BYTES = 64 << 20  # one worker task: at most this much of a segment
_NO_END = 2**63 - 1

DecodeMode = Literal["auto", "json", "text", "hex"]


# -- budgets ----------------------------------------------------------------------------


class ScanCancelled(KafkaCoreError):
    """A scan ran out of its budget (bytes, time) or was cancelled (the client left)."""


@dataclass
class Budget:
    """What a scan may spend: ``max_bytes`` read, until ``deadline`` (``time.monotonic``),
    unless ``cancel`` is set. :meth:`spend` raises :class:`ScanCancelled` past any of them.
    Shared by the threads of one request (the counter is not locked: a few bytes over)."""

    max_bytes: int = 1 << 40
    deadline: float = float("inf")
    cancel: threading.Event = field(default_factory=threading.Event)
    spent: int = 0

    @classmethod
    def of(cls, *, seconds: float, max_bytes: int = 1 << 40) -> Budget:
        return cls(max_bytes=max_bytes, deadline=time.monotonic() + seconds)

    def spend(self, nbytes: int = 0) -> None:
        self.spent += nbytes
        if self.cancel.is_set():
            raise ScanCancelled("the scan was cancelled")
        if self.spent > self.max_bytes:
            raise ScanCancelled(f"the scan read its budget of {self.max_bytes} bytes")
        if time.monotonic() > self.deadline:
            raise ScanCancelled("the scan ran out of time")


# -- the worker process -------------------------------------------------------------------

_pool_lock = threading.Lock()
_pool: concurrent.futures.ProcessPoolExecutor | None = None
_T = TypeVar("_T")


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(19)


def _use_process() -> bool:
    return os.environ.get("KAFKACORE_CONSOLE_SCAN_PROCESS", "1") != "0"


def scan_pool() -> concurrent.futures.ProcessPoolExecutor:
    """The one worker process of the console's scans (started on first use; ``spawn``, so
    nothing of the broker's threads or locks is inherited; ``nice`` 19)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority,
            )
        return _pool


def shutdown_scan_pool() -> None:
    """Stop the worker process (the console's shutdown; a later scan starts another)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def _run_task(budget: Budget, fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` in the worker process (or here), waiting while the budget allows."""
    budget.spend()
    if not _use_process():
        return fn(*args)
    try:
        future = scan_pool().submit(fn, *args)
    except (RuntimeError, concurrent.futures.BrokenExecutor):
        shutdown_scan_pool()
        future = scan_pool().submit(fn, *args)
    while True:
        try:
            return future.result(timeout=0.05)
        except concurrent.futures.TimeoutError:
            try:
                budget.spend()
            except ScanCancelled:
                future.cancel()  # a task is bounded (_TASK_BYTES): a running one just ends
                raise
        except concurrent.futures.BrokenExecutor:
            shutdown_scan_pool()  # the next scan starts a new process
            raise ScanCancelled("the scan process ended unexpectedly") from None


# -- segments and sources -----------------------------------------------------------------


@dataclass(frozen=True)
class SegmentRef:
    """One segment's files: ``directory`` (the partition's), its base offset, and the next
    segment's base offset (``None`` for the last, active, segment)."""

    directory: str
    base_offset: int
    next_base: int | None

    def path(self, suffix: str) -> str:
        return os.path.join(self.directory, filename_prefix_from_offset(self.base_offset) + suffix)

    @property
    def log_path(self) -> str:
        return self.path(LOG_FILE_SUFFIX)

    @property
    def active(self) -> bool:
        return self.next_base is None


@dataclass(frozen=True)
class PartitionOffsets:
    """A partition's offsets: ``[log_start_offset, high_watermark)`` is what consumers can
    fetch, ``last_stable_offset`` what ``read_committed`` ones can."""

    log_start_offset: int
    high_watermark: int
    last_stable_offset: int
    log_end_offset: int


class PartitionSource(Protocol):
    """What the console reads of one partition (:class:`LogPartition` in the broker,
    :class:`DirectoryPartition` over a log directory)."""

    @property
    def topic_partition(self) -> TopicPartition: ...

    @property
    def directory(self) -> str: ...

    def segments(self) -> list[SegmentRef]: ...

    def offsets(self) -> PartitionOffsets: ...

    def read_chunk(self, offset: int, max_bytes: int, upper_bound: int) -> bytes:
        """Whole batches from the one holding ``offset`` (at least one when any), none at
        or above ``upper_bound``; ``b""`` when there are none."""
        ...

    def offset_for_timestamp(self, timestamp: int) -> int | None: ...

    def aborted_transactions(self, start: int, upper_bound: int) -> list[AbortedTxn]: ...


def _refs(directory: str, bases: Sequence[int]) -> list[SegmentRef]:
    return [
        SegmentRef(directory, base, bases[i + 1] if i + 1 < len(bases) else None)
        for i, base in enumerate(bases)
    ]


class LogPartition:
    """A partition of the broker: its :class:`~kafkacore.log.Log` and, from the replica
    manager, its high watermark and last stable offset - values, or functions giving the
    current ones (a live tail follows them) - ``None``: the log end offset, as for a log
    without replication."""

    def __init__(
        self,
        log: Log,
        high_watermark: int | Callable[[], int] | None = None,
        last_stable_offset: int | Callable[[], int] | None = None,
    ) -> None:
        self.log = log
        self._high_watermark = high_watermark
        self._last_stable_offset = last_stable_offset

    @property
    def topic_partition(self) -> TopicPartition:
        return self.log.topic_partition

    @property
    def directory(self) -> str:
        return self.log.dir

    def segments(self) -> list[SegmentRef]:
        return _refs(self.log.dir, [s.base_offset for s in self.log.segments])

    def offsets(self) -> PartitionOffsets:
        log = self.log
        end = log.log_end_offset
        given = _current(self._high_watermark)
        hw = end if given is None else min(given, end)
        lso = _current(self._last_stable_offset)
        if lso is None:
            lso = log.last_stable_offset(hw)
        return PartitionOffsets(log.log_start_offset, hw, min(lso, hw), end)

    def read_chunk(self, offset: int, max_bytes: int, upper_bound: int) -> bytes:
        try:
            return self.log.read(offset, max_bytes, upper_bound).read_bytes()
        except OffsetOutOfRangeError:
            return b""

    def offset_for_timestamp(self, timestamp: int) -> int | None:
        found = self.log.offset_for_timestamp(timestamp)
        return None if found is None else found.offset

    def aborted_transactions(self, start: int, upper_bound: int) -> list[AbortedTxn]:
        return self.log.collect_aborted_transactions(start, upper_bound)


def _current(value: int | Callable[[], int] | None) -> int | None:
    return value() if callable(value) else value


class DirectoryPartition:
    """A partition of a log directory read read-only (no broker needed, or a broker's
    directory read beside it), through :class:`~kafkacore.log.reader.LogDirectory`."""

    def __init__(self, log_dir: LogDirectory | str, tp: TopicPartition) -> None:
        self.log_dir = log_dir if isinstance(log_dir, LogDirectory) else LogDirectory(log_dir)
        self._tp = TopicPartition(*tp)

    @property
    def topic_partition(self) -> TopicPartition:
        return self._tp

    @property
    def directory(self) -> str:
        return os.path.join(self.log_dir.path, log_dir_name(self._tp))

    def segments(self) -> list[SegmentRef]:
        return _refs(self.directory, self.log_dir.segments(self._tp))

    def offsets(self) -> PartitionOffsets:
        start, hw = self.log_dir.offsets(self._tp)
        lso = self.log_dir.last_stable_offset(self._tp)
        return PartitionOffsets(start, hw, min(lso, hw), self.log_dir.log_end_offset(self._tp))

    def read_chunk(self, offset: int, max_bytes: int, upper_bound: int) -> bytes:
        return _read_files(self.segments(), offset, max_bytes, upper_bound)

    def offset_for_timestamp(self, timestamp: int) -> int | None:
        return self.log_dir.offset_for_timestamp(self._tp, timestamp)

    def aborted_transactions(self, start: int, upper_bound: int) -> list[AbortedTxn]:
        return self.log_dir.aborted_transactions(self._tp, start, upper_bound)


def _read_files(refs: Sequence[SegmentRef], offset: int, max_bytes: int, upper_bound: int) -> bytes:
    """Whole batches from the one holding ``offset``, read from the segment files (their
    offset indexes, ``pread``): at least one when any, none at or above ``upper_bound``.
    A segment deleted meanwhile is skipped."""
    for ref in refs:
        if ref.next_base is not None and ref.next_base <= offset:
            continue
        if ref.base_offset >= upper_bound:
            return b""
        try:
            segment = SegmentReader(ref.directory, ref.base_offset)
        except FileNotFoundError:
            continue
        with segment:
            position = segment.locate(offset)
            if position is None:
                continue
            return segment.whole_batches(position, max_bytes, upper_bound)
    return b""


# -- header walks -------------------------------------------------------------------------


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


def _walk(
    fd: int, position: int, stop_position: int, file_size: int
) -> Iterator[tuple[int, int, tuple[Any, ...] | None]]:
    """``(position, size, v2 header or None for a legacy message)`` of each complete batch
    from ``position``, reading headers only (a batch larger than the read-ahead is skipped
    by seeking past it). Ends at ``stop_position`` or at a torn or implausible batch."""
    chunk = b""
    chunk_at = position
    while position + LOG_OVERHEAD + 5 <= file_size and position < stop_position:
        rel = position - chunk_at
        if rel < 0 or rel + RECORD_BATCH_OVERHEAD > len(chunk):
            chunk = os.pread(fd, _WALK_CHUNK, position)
            chunk_at, rel = position, 0
        if rel + MAGIC_OFFSET + 1 > len(chunk):
            return
        _offset, length = _OFFSET_AND_LENGTH.unpack_from(chunk, rel)
        size = length + LOG_OVERHEAD
        if length < _MIN_BATCH_LENGTH or position + size > file_size:
            return
        if chunk[rel + MAGIC_OFFSET] >= 2:
            if rel + RECORD_BATCH_OVERHEAD > len(chunk):
                return
            yield position, size, _HEADER.unpack_from(chunk, rel)
        else:
            yield position, size, None
        position += size


def _legacy_records(fd: int, position: int, size: int) -> list[tuple[Any, ...]]:
    return list(backend.legacy_records(os.pread(fd, size, position), 0))


def _count_batch(
    counts: _Counts, fd: int, position: int, size: int, h: tuple[Any, ...] | None, lo: int, hi: int
) -> None:
    """Add one batch's records with offsets in ``[lo, hi)`` to ``counts`` (a batch wholly
    inside from its header; one straddling a bound is decoded)."""
    if h is None:  # legacy: one message, or a compressed wrapper of several
        inner = [r for r in _legacy_records(fd, position, size) if lo <= r[0] < hi]
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
        for at, size, h in _walk(fd, position, stop, st.st_size):
            first = h[0] if h is not None else _legacy_records(fd, at, size)[0][0]
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


def _file_identity(path: str) -> tuple[tuple[int, int], int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino), st.st_size


def _segment_counts(ref: SegmentRef, budget: Budget) -> _Counts:
    """The counts of every batch of the segment (cached; incremental for the active one)."""
    return _segment_summary(ref, budget)[0]


def _segment_summary(ref: SegmentRef, budget: Budget) -> tuple[_Counts, int]:
    """:func:`_segment_counts` and the position up to which they were counted."""
    path = ref.log_path
    found = _file_identity(path)
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
        counts, position, seen = _run_task(
            budget, _walk_task, path, summary.position, _TASK_BYTES, -1, _NO_END
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
        step = min(_TASK_BYTES, stop_position - position)
        counts, reached, _identity = _run_task(
            budget, _walk_task, ref.log_path, position, step, lo, hi
        )
        budget.spend(reached - position)
        total.add(counts)
        if reached == position or reached - position < step:
            break
        position = reached
    return total


# -- counts -------------------------------------------------------------------------------


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
                counts.subtract(_range_counts(ref, hw, hw, _NO_END, budget, counted_to))
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
        h = _HEADER.unpack_from(data, pos)
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
        more, next_offset, keep, scanned = _run_task(
            budget, _aborted_task, refs, keep, offset, start, hw, _TASK_BYTES
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
        data = _read_files(refs, offset, _KEY_CHUNK, hw)
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


# -- sizes and segments ---------------------------------------------------------------------


@dataclass(frozen=True)
class DiskUsage:
    """The bytes of a partition directory's files by kind (apparent sizes, as ``ls``), and
    ``allocated_bytes`` (blocks, as ``du``; an active segment's preallocated indexes are
    sparse). ``log_bytes`` is what Kafka's ``DescribeLogDirs`` reports as the size."""

    log_bytes: int = 0
    offset_index_bytes: int = 0
    time_index_bytes: int = 0
    txn_index_bytes: int = 0
    other_bytes: int = 0
    deleted_bytes: int = 0
    allocated_bytes: int = 0
    files: int = 0

    @property
    def total_bytes(self) -> int:
        """Every file's apparent size (those awaiting deletion included)."""
        return (
            self.log_bytes
            + self.offset_index_bytes
            + self.time_index_bytes
            + self.txn_index_bytes
            + self.other_bytes
            + self.deleted_bytes
        )


def partition_disk_usage(directory: str) -> DiskUsage:
    """Every file of the partition directory ``directory`` (see :class:`DiskUsage`)."""
    sizes = {"log": 0, "index": 0, "time": 0, "txn": 0, "other": 0, "deleted": 0}
    allocated = files = 0
    kinds = {
        LOG_FILE_SUFFIX: "log",
        INDEX_FILE_SUFFIX: "index",
        TIME_INDEX_FILE_SUFFIX: "time",
        TXN_INDEX_FILE_SUFFIX: "txn",
    }
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return DiskUsage()
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not entry.is_file(follow_symlinks=False):
            continue
        files += 1
        allocated += st.st_blocks * 512
        if entry.name.endswith(DELETED_FILE_SUFFIX):
            sizes["deleted"] += st.st_size
            continue
        kind = kinds.get(os.path.splitext(entry.name)[1], "other")
        sizes[kind] += st.st_size
    return DiskUsage(
        sizes["log"],
        sizes["index"],
        sizes["time"],
        sizes["txn"],
        sizes["other"],
        sizes["deleted"],
        allocated,
        files,
    )


@dataclass(frozen=True)
class SegmentInfo:
    """One segment: offsets ``[base_offset, next_offset)``, bytes, batches and records
    (``records`` are data records, ``control_records`` markers), the first record's and the
    largest timestamp (-1: none), and the written entries of its ``.index``, ``.timeindex``
    and ``.txnindex`` (an active segment's indexes are preallocated: entries, not bytes)."""

    base_offset: int
    next_offset: int
    log_bytes: int
    batches: int
    records: int
    control_records: int
    first_timestamp: int
    max_timestamp: int
    offset_index_entries: int
    offset_index_bytes: int
    time_index_entries: int
    time_index_bytes: int
    txn_index_entries: int
    active: bool
    last_modified_ms: int


def _written_time_entries(path: str) -> tuple[int, int]:
    """``(written entries, file bytes)`` of a ``.timeindex`` (a preallocated one ends in
    zeros)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return 0, 0
    try:
        return written_entries(fd, _TIME_INDEX_ENTRY), os.fstat(fd).st_size
    finally:
        os.close(fd)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def segment_infos(source: PartitionSource, budget: Budget | None = None) -> list[SegmentInfo]:
    """Every segment of ``source``, oldest first (see :class:`SegmentInfo`)."""
    budget = budget or Budget()
    infos: list[SegmentInfo] = []
    for ref in source.segments():
        counts = _segment_counts(ref, budget)
        try:
            with SegmentReader(ref.directory, ref.base_offset) as reader:
                index_entries = reader.index_entries
        except FileNotFoundError:
            continue  # deleted meanwhile
        time_entries, time_bytes = _written_time_entries(ref.path(TIME_INDEX_FILE_SUFFIX))
        try:
            st = os.stat(ref.log_path)
        except FileNotFoundError:
            continue
        infos.append(
            SegmentInfo(
                base_offset=ref.base_offset,
                next_offset=counts.next_offset if counts.next_offset >= 0 else ref.base_offset,
                log_bytes=st.st_size,
                batches=counts.batches,
                records=counts.records,
                control_records=counts.control_records,
                first_timestamp=counts.min_timestamp,
                max_timestamp=counts.max_timestamp,
                offset_index_entries=index_entries,
                offset_index_bytes=_size(ref.path(INDEX_FILE_SUFFIX)),
                time_index_entries=time_entries,
                time_index_bytes=time_bytes,
                txn_index_entries=_size(ref.path(TXN_INDEX_FILE_SUFFIX)) // _TXN_INDEX_ENTRY,
                active=ref.active,
                last_modified_ms=st.st_mtime_ns // 1_000_000,
            )
        )
    return infos


# -- reading records -------------------------------------------------------------------------


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
            h = _HEADER.unpack_from(data, pos)
            if h[5] & CONTROL_FLAG_MASK or h[0] + h[6] < lo or h[0] >= hi:
                continue
        found.extend(r for r in records(data, pos) if lo <= r.offset < hi)
    return found


def _le(raw: bytes, code: str) -> array[int]:
    values = array(code)
    values.frombytes(raw)
    if struct.pack("=i", 1) != struct.pack("<i", 1):  # Arrow buffers are little-endian
        values.byteswap()
    return values


def _valid(validity: bytes | None, i: int) -> bool:
    return validity is None or bool(validity[i >> 3] >> (i & 7) & 1)


def _record_at(data: bytes, offset: int) -> Record | None:
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
        at = _le(bounds, "i")
        return payload[at[0] : at[1]]

    found: list[tuple[str, bytes | None]] = []
    if headers is not None:
        lists, key_bounds, key_data, value_validity, value_bounds, value_data = headers
        rows, kb, vb = _le(lists, "i"), _le(key_bounds, "i"), _le(value_bounds, "i")
        for j in range(rows[0], rows[1]):
            name = key_data[kb[j] : kb[j + 1]].decode()
            found.append(
                (name, value_data[vb[j] : vb[j + 1]] if _valid(value_validity, j) else None)
            )
    return Record(
        _le(offsets, "q")[0], _le(stamps, "q")[0] // 1000, cell(keys), cell(values), found
    )


def _last_offset_of(data: bytes) -> int | None:
    last: int | None = None
    for pos, magic, _size in iter_batches(data):
        if magic >= 2:
            h = _HEADER.unpack_from(data, pos)
            last = h[0] + h[6]
        else:
            last = _OFFSET_AND_LENGTH.unpack_from(data, pos)[0]
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
    refs = source.segments() if record_filter is not None and _use_process() else None
    while offset < stop and len(found) < max_records:
        try:
            budget.spend()
            if refs is not None:
                # a filter may read the whole log: in the scan process, a task at a time
                got, offset, nbytes = _run_task(
                    budget,
                    _scan_task,
                    refs,
                    offset,
                    stop,
                    record_filter,
                    max_records - len(found),
                    _TASK_BYTES,
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
    last = _last_offset_of(data)
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
        data = _read_files(refs, offset, 1 << 20, stop)
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


# -- key index ------------------------------------------------------------------------------


def _key_hash(key: bytes | memoryview) -> int:
    return zlib.crc32(key)


def _key_task(
    log_path: str, position: int, max_bytes: int, base_offset: int
) -> tuple[bytes, int, tuple[int, int]]:
    """Worker task: ``crc32(key) << 32 | (offset - base_offset)`` of every keyed data record
    of the whole batches of ``log_path`` from ``position`` (about ``max_bytes`` of them), as
    the bytes of an ``array('Q')``; the position reached; the file's identity."""
    out = array("Q")
    fd = os.open(log_path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        stop = min(st.st_size, position + max_bytes)
        while position < stop:
            data = os.pread(fd, min(_KEY_CHUNK, st.st_size - position), position)
            end = 0
            for pos, _magic, size in iter_batches(data):
                end = pos + size
            if end == 0:  # one batch larger than the chunk, or a torn tail
                first = next(_walk(fd, position, position + 1, st.st_size), None)
                if first is None:
                    break
                data = os.pread(fd, first[1], position)
                end = first[1]
            count, _next, keys, _values, offsets, _ts, _types, _headers = backend.decode_columns(
                data[:end], 0, _NO_END, False
            )
            validity, key_offsets_raw, key_data = keys
            key_offsets = _le(key_offsets_raw, "i")
            record_offsets = _le(offsets, "q")
            view = memoryview(key_data)
            crc32 = zlib.crc32
            for i in range(count):
                if validity is not None and not validity[i >> 3] >> (i & 7) & 1:
                    continue
                out.append(
                    crc32(view[key_offsets[i] : key_offsets[i + 1]]) << 32
                    | (record_offsets[i] - base_offset)
                )
            position += end
        return array("Q", sorted(out)).tobytes(), position, (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


_SMALL_RUN = 4096  # merged in the broker process: only the active segment's small increments


# The key runs of closed segments are also kept on disk, outside the log directories (Kafka
# refuses to start on a log directory holding a directory that is not a partition's), so a
# restarted broker's first search reads them instead of the segments. A file is named by the
# segment file's path, device, inode and size and the run's start position: a segment that
# changes (the cleaner's swap, a truncation) gets new names, and old files are pruned after
# a week. KAFKACORE_CONSOLE_KEY_CACHE names the directory ("" turns it off).
_RUN_HEADER = struct.Struct("<q")
_CACHE_MAX_AGE_S = 7 * 24 * 3600


def _cache_dir() -> str | None:
    path = os.environ.get("KAFKACORE_CONSOLE_KEY_CACHE")
    if path == "":
        return None
    if path is None:
        import tempfile

        path = os.path.join(tempfile.gettempdir(), f"kafkacore-console-keys-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # not ours alone: never trust what is in it
    return path


def _run_path(ref: SegmentRef, identity: tuple[int, int], size: int, position: int) -> str | None:
    directory = _cache_dir()
    if directory is None:
        return None
    import hashlib

    name = hashlib.sha1(os.path.abspath(ref.log_path).encode()).hexdigest()[:20]
    return os.path.join(directory, f"{name}-{identity[0]}-{identity[1]}-{size}-{position}.keys")


def _load_run(
    ref: SegmentRef, identity: tuple[int, int], size: int, position: int
) -> tuple[bytes, int] | None:
    """``(run bytes, end position)`` stored for this segment file from ``position``."""
    path = _run_path(ref, identity, size, position)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < _RUN_HEADER.size or (len(data) - _RUN_HEADER.size) % 8:
        return None
    (end,) = _RUN_HEADER.unpack_from(data)
    if not position < end <= size:
        return None
    return data[_RUN_HEADER.size :], end


def _store_run(
    ref: SegmentRef, identity: tuple[int, int], size: int, position: int, end: int, raw: bytes
) -> None:
    path = _run_path(ref, identity, size, position)
    if path is None:
        return
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temp, "wb") as f:
            f.write(_RUN_HEADER.pack(end))
            f.write(raw)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(temp)
        return
    if position == 0:
        _prune(os.path.dirname(path))


def _prune(directory: str) -> None:
    """Remove the stored runs not read or written for a week."""
    cutoff = time.time() - _CACHE_MAX_AGE_S
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat().st_atime < cutoff and entry.stat().st_mtime < cutoff:
                    os.remove(entry.path)


class _SegmentKeys:
    """One segment's key hashes: sorted runs of ``crc32(key) << 32 | relative offset``,
    one per worker task (sorted there, so the broker process only copies them); small runs
    (the active segment's increments) are merged as they come, two of similar size at a
    time, so a segment keeps a few runs and each entry is merged O(log n) times."""

    __slots__ = ("identity", "position", "runs")

    def __init__(self, identity: tuple[int, int]) -> None:
        self.identity = identity
        self.position = 0
        self.runs: list[array[int]] = []

    def add(self, raw: bytes) -> None:
        run = array("Q")
        run.frombytes(raw)
        if not run:
            return
        runs = self.runs
        runs.append(run)
        while len(runs) > 1 and len(runs[-1]) < _SMALL_RUN and 2 * len(runs[-1]) >= len(runs[-2]):
            newer = runs.pop()
            older = runs.pop()
            runs.append(array("Q", sorted(older + newer)))

    def relative_offsets(self, h: int) -> list[int]:
        found: list[int] = []
        for run in self.runs:
            lo = bisect.bisect_left(run, h << 32)
            hi = bisect.bisect_left(run, (h + 1) << 32, lo)
            found.extend(p & 0xFFFFFFFF for p in run[lo:hi])
        return found

    @property
    def entries(self) -> int:
        return sum(len(run) for run in self.runs)

    @property
    def memory_bytes(self) -> int:
        return 8 * self.entries


@dataclass(frozen=True)
class KeySearchResult:
    """A key search: every record with that key in ``[log start offset, high watermark)``
    when ``complete`` (up to ``limit`` of them in ``records``, oldest first, ``total`` all
    of them), else what the indexed part held (``indexed_bytes`` of ``total_bytes``)."""

    records: list[Record]
    total: int
    complete: bool
    indexed_bytes: int
    total_bytes: int
    candidates: int
    elapsed_ms: float
    stopped: str | None = None


class KeyIndex:
    """The key index of one partition directory (see the module docstring). Build or bring
    up to date with :meth:`update` (bounded, cancellable, resumable: what was indexed
    stays), look up with :meth:`search`. Thread-safe: one update at a time per partition."""

    _registry: OrderedDict[str, KeyIndex] = OrderedDict()
    _registry_lock = threading.Lock()
    max_memory_bytes = int(os.environ.get("KAFKACORE_CONSOLE_KEY_INDEX_BYTES", 512 << 20))
    """All partitions' indexes together stay under this (the least recently searched
    partitions' indexes are dropped first; a later search rebuilds them)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._segments: dict[int, _SegmentKeys] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, source: PartitionSource) -> KeyIndex:
        """The index of ``source``'s directory (one per directory per process)."""
        with cls._registry_lock:
            index = cls._registry.get(source.directory)
            if index is None:
                index = cls._registry[source.directory] = cls(source.directory)
            cls._registry.move_to_end(source.directory)
            return index

    @classmethod
    def _evict(cls, keep: KeyIndex) -> None:
        """Drop the least recently used indexes (never ``keep``) while all of them hold
        more than :attr:`max_memory_bytes`."""
        with cls._registry_lock:
            total = sum(index.memory_bytes for index in cls._registry.values())
            for directory, index in list(cls._registry.items()):
                if total <= cls.max_memory_bytes:
                    break
                if index is not keep:
                    total -= index.memory_bytes
                    del cls._registry[directory]

    @classmethod
    def forget(cls, directory: str | None = None) -> None:
        """Drop the index of ``directory`` (every index when ``None``)."""
        with cls._registry_lock:
            if directory is None:
                cls._registry.clear()
            else:
                cls._registry.pop(directory, None)

    @property
    def entries(self) -> int:
        return sum(s.entries for s in list(self._segments.values()))

    @property
    def memory_bytes(self) -> int:
        """Bytes held by the sorted runs: 8 per keyed record."""
        return sum(s.memory_bytes for s in list(self._segments.values()))

    def update(
        self,
        refs: Sequence[SegmentRef],
        budget: Budget,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[int, int]:
        """Index what is not yet indexed of ``refs`` (a partition's segments), oldest
        first, each from where it stopped. ``(indexed bytes, total bytes)``; raises
        :class:`ScanCancelled` when the budget runs out (what was done stays)."""
        with self._lock:
            live = {ref.base_offset for ref in refs}
            for base in list(self._segments):
                if base not in live:
                    del self._segments[base]
            files = [(ref, _file_identity(ref.log_path)) for ref in refs]
            total = sum(found[1] for _ref, found in files if found is not None)
            indexed = sum(
                min(self._segments[ref.base_offset].position, found[1])
                for ref, found in files
                if found is not None
                and ref.base_offset in self._segments
                and self._segments[ref.base_offset].identity == found[0]
            )
            for ref, found in files:
                if found is None:
                    continue
                identity, size = found
                keys = self._segments.get(ref.base_offset)
                if keys is None or keys.identity != identity or keys.position > size:
                    if keys is not None:
                        indexed -= min(keys.position, size) if keys.identity == identity else 0
                    keys = self._segments[ref.base_offset] = _SegmentKeys(identity)
                while keys.position < size:
                    stored = None if ref.active else _load_run(ref, identity, size, keys.position)
                    if stored is not None:
                        raw, position = stored
                        seen = identity
                    else:
                        raw, position, seen = _run_task(
                            budget,
                            _key_task,
                            ref.log_path,
                            keys.position,
                            _TASK_BYTES,
                            ref.base_offset,
                        )
                        if not ref.active and seen == identity and position > keys.position:
                            _store_run(ref, identity, size, keys.position, position, raw)
                    if seen != identity or position == keys.position:
                        break
                    budget.spend(position - keys.position)
                    keys.add(raw)
                    indexed += position - keys.position
                    keys.position = position
                    if progress is not None:
                        progress(indexed, total)
            return indexed, total

    def candidates(self, key: bytes) -> list[int]:
        """Offsets whose key hashes as ``key`` does, ascending (a superset of the
        offsets with that key, within what is indexed)."""
        h = _key_hash(key)
        found: list[int] = []
        for base, keys in sorted(self._segments.items()):
            found.extend(base + rel for rel in keys.relative_offsets(h))
        found.sort()
        return found

    def search(
        self,
        source: PartitionSource,
        key: bytes,
        *,
        limit: int = 500,
        budget: Budget | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> KeySearchResult:
        """Every record of ``source`` whose key is ``key`` (see :class:`KeySearchResult`):
        the index brought up to date first, then each candidate read and checked."""
        began = time.monotonic()
        budget = budget or Budget.of(seconds=60)
        stopped: str | None = None
        try:
            indexed, total = self.update(source.segments(), budget, progress)
            KeyIndex._evict(self)
        except ScanCancelled as exc:
            stopped = str(exc)
            indexed, total = (
                self.indexed_bytes(source.segments()),
                sum(
                    found[1]
                    for found in (_file_identity(r.log_path) for r in source.segments())
                    if found is not None
                ),
            )
        offsets = source.offsets()
        candidates = [
            o
            for o in self.candidates(key)
            if offsets.log_start_offset <= o < offsets.high_watermark
        ]
        found: list[Record] = []
        total_found = 0
        data = b""
        batch_end = -1
        for offset in candidates:
            if offset > batch_end or not data:
                data = source.read_chunk(offset, 1, offsets.high_watermark)
                if not data:
                    continue
                last = _last_offset_of(data)
                batch_end = offset if last is None else last
            r = _record_at(data, offset)
            if r is not None and r.key == key:
                total_found += 1
                if len(found) < limit:
                    found.append(r)
        return KeySearchResult(
            found,
            total_found,
            stopped is None and indexed >= total,
            indexed,
            total,
            len(candidates),
            (time.monotonic() - began) * 1000,
            stopped,
        )

    def indexed_bytes(self, refs: Sequence[SegmentRef]) -> int:
        done = 0
        for ref in refs:
            keys = self._segments.get(ref.base_offset)
            if keys is not None:
                done += keys.position
        return done


# -- why not deleted / compacted yet ---------------------------------------------------------


@dataclass(frozen=True)
class SegmentRetention:
    """One segment against the ``delete`` policy: its largest timestamp (Kafka's
    ``largestTimestamp``: the max batch timestamp, else the file time), when
    ``retention.ms`` makes it deletable (``None``: never by time), and why it is still
    here (``reasons``; empty: it goes at the next retention check)."""

    base_offset: int
    next_offset: int
    size: int
    largest_timestamp: int
    deletable_at_ms: int | None
    future_timestamp: bool
    active: bool
    reasons: list[str]


@dataclass(frozen=True)
class RetentionReport:
    """Why a partition's data is still on disk under ``cleanup.policy``'s ``delete``."""

    topic_partition: TopicPartition
    now_ms: int
    policy: str
    retention_ms: int
    retention_bytes: int
    segment_ms: int
    segment_bytes: int
    log_start_offset: int
    high_watermark: int
    log_size: int
    active_roll_due_ms: int | None
    active_roll_reason: str
    retention_check_interval_ms: int | None
    file_delete_delay_ms: int
    deleted_files_pending: int
    segments: list[SegmentRetention]
    summary: str


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def retention_report(
    log: Log,
    *,
    high_watermark: int | None = None,
    now_ms: int | None = None,
    retention_check_interval_ms: int | None = None,
) -> RetentionReport:
    """Per segment, whether the ``delete`` policy removes it and, if not, why (Kafka's
    ``deleteOldSegments`` rules, :mod:`kafkacore.log.retention`): deletion takes only a
    prefix of the log, only below the high watermark, by ``retention.bytes`` (oldest first
    while the rest still holds ``retention.bytes``) or ``retention.ms`` (largest timestamp
    older than it); an empty active segment stays; when every segment goes the log first
    rolls a new one. Also when the active segment rolls (``segment.ms`` from its first
    batch's timestamp, minus its jitter; ``segment.bytes``)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    config = log.config
    segments: list[LogSegment] = log.segments
    end = log.log_end_offset
    hw = end if high_watermark is None else min(high_watermark, end)
    start = log.log_start_offset
    size = sum(s.size for s in segments)
    policy = ",".join(p for p, on in (("delete", config.delete), ("compact", config.compact)) if on)
    excess = size - config.retention_bytes if config.retention_bytes >= 0 else -1
    rows: list[SegmentRetention] = []
    blocked = False
    for i, seg in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        upper = nxt.base_offset if nxt is not None else end
        largest = seg.largest_timestamp()
        by_time = config.retention_ms >= 0 and now - largest > config.retention_ms
        by_size = excess >= 0 and excess - seg.size >= 0
        by_start = nxt is not None and nxt.base_offset <= start
        reasons: list[str] = []
        if hw < upper:
            reasons.append(f"holds offsets at or above the high watermark {hw}")
        if nxt is None and seg.size == 0:
            reasons.append("the active segment is empty (a log always keeps one)")
        if not by_start:
            if not config.delete:
                reasons.append(f"cleanup.policy={policy}: retention by time and size is off")
            elif not by_time and not by_size:
                if config.retention_ms < 0:
                    why = "retention.ms=-1"
                else:
                    why = (
                        f"its largest timestamp {largest} is newer than retention.ms "
                        f"({config.retention_ms} ms): deletable after "
                        f"{largest + config.retention_ms}"
                    )
                if config.retention_bytes >= 0:
                    why += (
                        f"; the log ({size} bytes) is within "
                        f"retention.bytes={config.retention_bytes} without it"
                    )
                reasons.append(why)
        if by_size and not reasons:
            excess -= seg.size
        if blocked and not reasons:
            reasons.append(
                "waits behind an older segment that stays (deletion only takes the oldest)"
            )
        if reasons:
            blocked = True
        rows.append(
            SegmentRetention(
                seg.base_offset,
                upper,
                seg.size,
                largest,
                largest + config.retention_ms if config.retention_ms >= 0 else None,
                largest > now,
                nxt is None,
                reasons,
            )
        )
    active = segments[-1]
    first = active.files.rolling_based_timestamp
    if active.size == 0:
        roll_due, roll_reason = (
            None,
            "the active segment is empty: it rolls with its first batch's needs",
        )
    elif first >= 0:
        roll_due = first + config.max_segment_ms() - active.roll_jitter_ms
        roll_reason = (
            f"segment.ms={config.max_segment_ms()}: rolls at the first append after "
            f"{roll_due} (its first batch's timestamp {first} + segment.ms - jitter "
            f"{active.roll_jitter_ms}), or when it reaches segment.bytes={config.segment_bytes} "
            f"(now {active.size})"
        )
    else:
        roll_due = active.created_ms + config.max_segment_ms() - active.roll_jitter_ms
        roll_reason = (
            f"no timestamped batch: segment.ms counts from its creation at {active.created_ms}"
        )
    deletable = [r for r in rows if not r.reasons]
    deleted_pending = sum(1 for name in _listdir(log.dir) if name.endswith(DELETED_FILE_SUFFIX))
    future = [r for r in rows if r.future_timestamp]
    if deletable:
        summary = (
            f"{_plural(len(deletable), 'segment')} will be deleted at the next retention check"
        )
    elif len(rows) == 1:
        summary = "the log is one (active) segment, which stays until retention covers all of it"
    else:
        summary = (
            f"nothing to delete: {rows[0].reasons[0]}" if rows[0].reasons else "nothing to delete"
        )
    if future:
        summary += (
            f"; {_plural(len(future), 'segment')} with a timestamp in the future, which "
            "holds retention by time back"
        )
    return RetentionReport(
        log.topic_partition,
        now,
        policy,
        config.retention_ms,
        config.retention_bytes,
        config.segment_ms,
        config.segment_bytes,
        start,
        hw,
        size,
        roll_due,
        roll_reason,
        retention_check_interval_ms,
        config.file_delete_delay_ms,
        deleted_pending,
        rows,
        summary,
    )


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except FileNotFoundError:
        return []


@dataclass(frozen=True)
class CompactionReport:
    """A compacted partition as Kafka's ``LogCleanerManager`` sees it: the first dirty
    offset (the ``cleaner-offset-checkpoint`` entry, or the log start), the first
    uncleanable offset and what set it, clean and cleanable bytes, the dirty ratio against
    ``min.cleanable.dirty.ratio``, whether ``max.compaction.lag.ms`` forces a round, and
    the verdict."""

    topic_partition: TopicPartition
    compacted: bool
    checkpoint: int | None
    first_dirty_offset: int
    first_uncleanable_offset: int
    uncleanable_because: list[str]
    clean_bytes: int
    cleanable_bytes: int
    dirty_ratio: float
    min_cleanable_dirty_ratio: float
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    compaction_delay_ms: int
    paused: bool
    is_cleanable: bool
    summary: str


def compaction_report(
    log: Log,
    *,
    checkpoint: int | None,
    high_watermark: int | None = None,
    now_ms: int | None = None,
    cleaner: LogCleaner | None = None,
) -> CompactionReport:
    """Whether, and why not, the cleaner compacts ``log`` now (see
    :class:`CompactionReport`); ``checkpoint``: its ``cleaner-offset-checkpoint`` entry.
    Computed with the cleaner's own functions, without its side effects (an invalid
    checkpoint is reported, not rewritten)."""
    from kafkacore.log.cleaner import LogToClean, cleanable_offsets, max_compaction_delay

    now = int(time.time() * 1000) if now_ms is None else now_ms
    config = log.config
    segments = log.segments
    offsets = cleanable_offsets(log, checkpoint, now, upper_bound=high_watermark, segments=segments)
    delay = max_compaction_delay(log, offsets.first_dirty_offset, now, segments)
    ltc = LogToClean.of(log, offsets, need_compaction_now=delay > 0, segments=segments)
    because: list[str] = []
    active_base = segments[-1].base_offset
    bound = ltc.first_uncleanable_offset
    if bound >= active_base:
        because.append(f"the active segment (base offset {active_base}) is never cleaned")
    if high_watermark is not None and high_watermark <= offsets.first_uncleanable_dirty_offset:
        because.append(f"the high watermark {high_watermark}")
    unstable = log.first_unstable_offset
    if unstable is not None and unstable <= offsets.first_uncleanable_dirty_offset:
        because.append(f"an open transaction from offset {unstable}")
    if config.min_compaction_lag_ms > 0:
        for seg in segments:
            if (
                seg.base_offset == offsets.first_uncleanable_dirty_offset
                and seg.base_offset < active_base
            ):
                because.append(
                    f"min.compaction.lag.ms={config.min_compaction_lag_ms}: "
                    f"segment {seg.base_offset} "
                    f"holds records newer than {now - config.min_compaction_lag_ms}"
                )
    paused = cleaner.is_paused(log.topic_partition) if cleaner is not None else False
    ratio = ltc.cleanable_ratio
    if not config.compact:
        summary = "cleanup.policy has no compact: the cleaner leaves this log alone"
    elif paused:
        summary = "cleaning is paused for this partition (a truncation, deletion or reassignment)"
    elif ltc.is_cleanable:
        summary = "due for cleaning: " + (
            f"max.compaction.lag.ms passed {delay} ms ago"
            if delay > 0 and ltc.cleanable_bytes > 0
            else f"dirty ratio {ratio:.3f} > min.cleanable.dirty.ratio "
            f"{config.min_cleanable_dirty_ratio}"
        )
    elif ltc.cleanable_bytes == 0:
        summary = "nothing cleanable: " + ("; ".join(because) or "no dirty closed segment")
    else:
        summary = (
            f"dirty ratio {ratio:.3f} is not above min.cleanable.dirty.ratio "
            f"{config.min_cleanable_dirty_ratio} ({ltc.cleanable_bytes} cleanable of "
            f"{ltc.total_bytes} bytes)"
        )
    return CompactionReport(
        log.topic_partition,
        config.compact,
        checkpoint,
        offsets.first_dirty_offset,
        ltc.first_uncleanable_offset,
        because,
        ltc.clean_bytes,
        ltc.cleanable_bytes,
        ratio,
        config.min_cleanable_dirty_ratio,
        config.min_compaction_lag_ms,
        config.max_compaction_lag_ms,
        delay,
        paused,
        config.compact and not paused and ltc.is_cleanable,
        summary,
    )


# -- dump-log ---------------------------------------------------------------------------------


def dump_segment(
    path: str, *, deep: bool = False, print_data: bool = False, max_bytes: int = 1 << 20
) -> tuple[str, str]:
    """``(stdout, stderr)`` of ``kafkacore dump-log --files PATH`` (Kafka's
    ``DumpLogSegments``) for one segment file, reading at most ``max_bytes`` of batches
    (``--max-bytes``)."""
    from kafkacore.tools.dump_log import DumpFailure, DumpOptions, dump_files

    out, err = io.StringIO(), io.StringIO()
    options = DumpOptions(
        deep_iteration=deep, print_data_log=print_data, max_bytes=max_bytes, progress=False
    )
    try:
        dump_files([path], options, out=out, err=err)
    except DumpFailure as exc:
        err.write(f"{exc.kind}: {exc.message}\n")
    return out.getvalue(), err.getvalue()
