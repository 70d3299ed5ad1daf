"""Log compaction (Kafka's ``LogCleaner``, ``LogCleanerManager`` and ``Cleaner``): for logs
whose ``cleanup.policy`` contains ``compact``, keep the latest record of each key.

**Which log, which offsets** (Kafka's ``LogCleanerManager``). Per log: the *first dirty
offset* is its entry in ``cleaner-offset-checkpoint`` (reset to the log start offset when
missing, below the log start or above the log end, and the checkpoint rewritten); the
*first uncleanable offset* is the smallest of the active segment's base offset, the upper
bound given for the partition (high watermark / last stable offset), the log's first
unstable offset (an open transaction's first offset) and, with
``min.compaction.lag.ms`` > 0, the base offset of the first dirty segment whose largest
timestamp is newer than ``now - min.compaction.lag.ms``; it is then lowered to the base
offset of the segment holding it. Clean bytes = the segments below the first dirty offset;
cleanable bytes = the segments from the first dirty offset's to the first uncleanable one.
A log is cleaned when its *cleanable ratio* (cleanable / (clean + cleanable)) is above
``min.cleanable.dirty.ratio`` (strictly, as Kafka), or when ``max.compaction.lag.ms`` has
passed for its oldest dirty non-active segment (first batch timestamp) and it has
cleanable bytes; the dirtiest log first.

**A cleaning round** (Kafka's ``Cleaner.doClean``), for one log at time ``now``:

1. The key map (:class:`~kafkacore._native.KeyMap`, native: key MD5 -> latest offset,
   capacity from ``log.cleaner.dedupe.buffer.size``) is built over the dirty segments
   ``[first dirty, first uncleanable)``, each read from its offset-index position of the
   first dirty offset; when it fills up, the round stops there. The round's *end offset*
   is ``map.latest_offset + 1``.
2. The segments from the start of the log up to the end offset are grouped (Kafka's
   ``groupSegmentsBySize``: total ``.log`` size <= ``segment.bytes``, each index total <=
   ``segment.index.bytes``, offsets within 2**31-1 of the group's base).
3. Each group is filtered (:func:`~kafkacore._native.filter_batches`: the latest record of
   each key, tombstones until their delete horizon, see the stub) into one new segment at
   the group's base offset - written as ``<base>.log.cleaned`` / ``.index.cleaned`` /
   ``.timeindex.cleaned`` (built in a scratch directory ``.cleaner-tmp`` of the partition
   directory with the backend's ``Segment``, fsynced, moved in), its ``.log`` given the
   modification time of the group's last segment - and swapped in by
   :meth:`Log.replace_segments <kafkacore.log.log.Log.replace_segments>`: ``.cleaned`` ->
   ``.swap``, old segments -> ``.deleted``, ``.swap`` -> final names, each step durable,
   so that the loader finishes or discards an interrupted swap.
4. The checkpoint becomes the end offset.

Each pass of a cleaner thread also applies ``delete_old_segments`` to the compacted logs
(segments below the log start offset; retention too with ``compact,delete``), bounded by
the upper bound, as Kafka's cleaner thread does.

**Pausing**: :meth:`LogCleaner.abort_and_pause_cleaning`, :meth:`~LogCleaner.abort_cleaning`
and :meth:`~LogCleaner.resume_cleaning` (the :class:`~kafkacore.log.manager.CleanerHooks`
of :class:`~kafkacore.log.manager.LogManager`) have Kafka's semantics: a cleaning in
progress is aborted at its next check (every chunk read) and its ``.cleaned`` files
removed; a paused partition is skipped until resumed as many times as it was paused.

**Transactions** (Kafka's ``CleanedTransactionMetadata`` and the cleaner's
``RecordFilter``). The first uncleanable offset is also never above the log's first
unstable offset (the first offset of its earliest transaction still open, or whose
marker the high watermark has not passed), so the cleaner only sees decided
transactions. The aborted transactions come from the segments' ``.txnindex`` files
(:meth:`Log.collect_aborted_transactions` over the dirty range for the key map, over
each source segment's range while cleaning), in a min-heap by first offset;
walking the batches in offset order, an aborted transaction becomes *ongoing* once a
batch at or above its first offset is read, and ends at its producer's ABORT marker.

* A transactional data batch of an ongoing aborted transaction is *discarded*: its keys
  never enter the key map (so an aborted write cannot shadow a committed one) and it is
  removed from the cleaned segment. Any other transactional batch marks its producer's
  transaction as having committed data in the cleaned range.
* An ABORT marker is kept while a batch of its transaction was seen in this round; its
  ``AbortedTxn`` is then re-appended to the cleaned segment's ``.txnindex`` (built with
  the segment and renamed with its ``.cleaned``/``.swap`` files). A COMMIT marker is kept
  while a batch of its transaction was read in this round. A marker without records
  (already emptied) is discardable; one of another control type is kept.
* A discardable marker is not removed at once (KIP-534, as tombstones): the first round
  that finds it discardable rewrites its batch with the delete-horizon attribute (0x40)
  and ``baseTimestamp = now + delete.retention.ms``; a later round removes it once that
  horizon is ``<= now`` (and it is still discardable).
* As for data batches, a discarded batch survives as an empty 61-byte header when it
  is the last batch of the round (``nextOffset == first uncleanable offset``) or holds
  an active producer's last state: its last data offset, or - when the producer has no
  data batch left in its state (an epoch bump by a marker) - a control batch of its
  current epoch (Kafka's ``lastRecordsOfActiveProducers``: the epoch must survive for
  fencing).

The backend's ``KeyMap.add_batches`` / ``filter_batches`` do the per-record work; the
transactional decisions are taken here on the batch headers (and the one control record
of a marker), and the runs of batches between two decided batches go to the backend
unchanged, so a log without transactions is filtered in one backend call per chunk.

The last batch of each active producer (its last data offset, from the log's
:class:`~kafkacore.log.producer_state.ProducerStateManager` when it has one, or from the
``active_producers`` hook) survives as an empty batch when all its records go, so that
its sequence and epoch survive a rebuild of the producer state (Kafka's rule).

Not done (yet): legacy (magic 0/1) segments are refused (the log is marked uncleanable);
an index that fills up while writing a cleaned segment aborts the round.

Example::

    from kafkacore.log import Log
    from kafkacore.log.cleaner import CleanerConfig, LogCleaner

    logs = [Log("/data/users-0", LogConfig({"cleanup.policy": "compact"}))]
    cleaner = LogCleaner(lambda: logs, CleanerConfig())
    cleaner.clean(logs[0])          # one round now, if the log is dirty enough
    cleaner.start()                 # or: background threads, every log.cleaner.backoff.ms
    ...
    cleaner.shutdown()

Thread-safety: every public method of :class:`LogCleaner` may be called from any thread;
a log is cleaned by one thread at a time; cleaning runs without the log's lock except for
the swap.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import logging
import math
import os
import shutil
import struct
import threading
import time as _time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from kafkacore.errors import (
    CorruptCheckpointError,
    CorruptRecordError,
    InvalidRecordError,
    StorageIOError,
)
from kafkacore.log.checkpoints import OffsetCheckpointFile, fsync_dir
from kafkacore.log.clock import SYSTEM_TIME, Time
from kafkacore.log.files import (
    CLEANED_FILE_SUFFIX,
    CLEANER_OFFSET_CHECKPOINT_FILE,
    TopicPartition,
    transaction_index_file,
)
from kafkacore.log.log import Log
from kafkacore.log.segments import I32_MAX, LogSegment, segment_file_paths
from kafkacore.log.txn_index import AbortedTxn, TransactionIndex

if TYPE_CHECKING:
    from kafkacore._backend import Backend
    from kafkacore._backend import KeyMapFiles as KeyMap
    from kafkacore._backend import SegmentFiles as Segment
    from kafkacore._native import RecordTuple
    from kafkacore.config import BrokerConfig

__all__ = [
    "CLEANER_TMP_DIR",
    "CleanedTransactionMetadata",
    "CleanerCheckpoints",
    "CleanerConfig",
    "CleanerOffsetCheckpoints",
    "CleanerStats",
    "LastRecord",
    "LogCleaner",
    "LogToClean",
    "OffsetsToClean",
    "calculate_cleanable_bytes",
    "cleanable_offsets",
    "group_segments_by_size",
    "max_compaction_delay",
]

logger = logging.getLogger("kafkacore.log.cleaner")

#: The scratch directory, inside a partition directory, where a cleaned segment is built
#: before it is moved in as ``.cleaned`` files. The loader ignores directories; a leftover
#: one (a crash while writing) is removed by the next cleaning of that log.
CLEANER_TMP_DIR = ".cleaner-tmp"

_SIZE_FIELD = struct.Struct(">i")
_LOG_OVERHEAD = 12
_MIN_HEADER = 17  # offset + size + epoch/crc + magic
_MAX_OFFSET = 2**63 - 1


# -- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanerConfig:
    """Kafka's ``CleanerConfig`` (the broker's ``log.cleaner.*`` settings)."""

    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_message_size: int = 1024 * 1024 + 12
    max_io_bytes_per_second: float = math.inf
    backoff_ms: int = 15_000
    enable_cleaner: bool = True

    def __post_init__(self) -> None:
        if self.num_threads < 1:
            raise ValueError(f"num_threads must be at least 1, not {self.num_threads}")
        if self.key_map_capacity() < 1:
            raise ValueError(
                "offset map is too small to fit in even a single message, so log cleaning "
                "will never make progress. You can increase log.cleaner.dedupe.buffer.size "
                "or decrease log.cleaner.threads"
            )

    @classmethod
    def from_broker(cls, broker: BrokerConfig) -> CleanerConfig:
        """The cleaner settings of a broker configuration."""
        return cls(
            num_threads=broker.log_cleaner_threads,
            dedupe_buffer_size=broker.log_cleaner_dedupe_buffer_size,
            dedupe_buffer_load_factor=broker.log_cleaner_io_buffer_load_factor,
            io_buffer_size=broker.log_cleaner_io_buffer_size,
            max_message_size=broker.message_max_bytes,
            max_io_bytes_per_second=broker.log_cleaner_io_max_bytes_per_second,
            backoff_ms=broker.log_cleaner_backoff_ms,
            enable_cleaner=broker.log_cleaner_enable,
        )

    def key_map_capacity(self) -> int:
        """Keys one cleaner thread's map may hold: Kafka's ``SkimpyOffsetMap`` slots
        (the thread's share of the dedupe buffer, at most 2**31-1 bytes, / 24 bytes per
        entry) times the load factor."""
        memory = min(self.dedupe_buffer_size // self.num_threads, I32_MAX)
        return int(memory // 24 * self.dedupe_buffer_load_factor)

    def read_buffer_size(self) -> int:
        """The first read of a segment chunk (Kafka: half the thread's I/O buffer)."""
        return max(self.io_buffer_size // self.num_threads // 2, 4096)


# -- checkpoints --------------------------------------------------------------------------


class CleanerCheckpoints(Protocol):
    """Where the cleaner keeps its progress: ``cleaner-offset-checkpoint`` of each log dir.
    :class:`~kafkacore.log.manager.LogManager` is one (its writes are serialized with its
    truncations and deletions, through its :class:`CleanerOffsetCheckpoints`), and so is a
    :class:`CleanerOffsetCheckpoints` on its own."""

    def read_cleaner_checkpoints(self) -> dict[TopicPartition, int]: ...

    def update_cleaner_checkpoint(
        self,
        log_dir: str,
        update: tuple[TopicPartition, int] | None = None,
        *,
        remove: TopicPartition | None = None,
    ) -> None: ...


def read_checkpoint_or_empty(checkpoint: OffsetCheckpointFile) -> dict[TopicPartition, int]:
    """The entries of an offset checkpoint file; none (and a warning) when it cannot be read
    or is corrupt, as Kafka's log manager treats an unreadable checkpoint."""
    try:
        return checkpoint.read()
    except (CorruptCheckpointError, StorageIOError) as exc:
        logger.warning(
            "Error occurred while reading %s, resetting it to no entries: %s", checkpoint.path, exc
        )
        return {}


class CleanerOffsetCheckpoints:
    """The one implementation of :class:`CleanerCheckpoints`: the
    ``<log dir>/cleaner-offset-checkpoint`` files of the directories ``log_dirs()`` names.
    ``live()`` gives the partitions that still have a log: an update drops the entries of
    the others (Kafka's ``updateCheckpoints``). An unreadable file reads as empty (logged).
    Thread-safe; ``lock`` lets an owner serialize these writes with its own (the
    :class:`~kafkacore.log.manager.LogManager` passes its checkpoint lock).

    :class:`~kafkacore.log.manager.LogManager` keeps one for its log dirs; a
    :class:`LogCleaner` used without a manager builds one over its logs' parent dirs."""

    def __init__(
        self,
        log_dirs: Callable[[], Iterable[str]],
        live: Callable[[], Container[TopicPartition]],
        *,
        lock: threading.RLock | None = None,
    ) -> None:
        self._log_dirs = log_dirs
        self._live = live
        self._files: dict[str, OffsetCheckpointFile] = {}
        self._lock = lock if lock is not None else threading.RLock()

    @classmethod
    def of_logs(cls, logs: Callable[[], Iterable[Log]]) -> CleanerOffsetCheckpoints:
        """The checkpoints in the parent directories of the logs ``logs()`` returns."""
        return cls(
            lambda: sorted({os.path.dirname(log.dir) for log in logs()}),
            lambda: {log.topic_partition for log in logs()},
        )

    def file(self, log_dir: str | os.PathLike[str]) -> OffsetCheckpointFile:
        """The ``cleaner-offset-checkpoint`` of ``log_dir``; writers go through
        :meth:`update_cleaner_checkpoint` / :meth:`truncate`, which serialize them."""
        key = os.path.abspath(os.fspath(log_dir))
        with self._lock:
            checkpoint = self._files.get(key)
            if checkpoint is None:
                path = os.path.join(key, CLEANER_OFFSET_CHECKPOINT_FILE)
                checkpoint = self._files[key] = OffsetCheckpointFile(path)
            return checkpoint

    _read = staticmethod(read_checkpoint_or_empty)

    def read_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        """Every log dir's entries."""
        found: dict[TopicPartition, int] = {}
        with self._lock:
            for log_dir in self._log_dirs():
                found.update(self._read(self.file(log_dir)))
        return found

    def update_cleaner_checkpoint(
        self,
        log_dir: str | os.PathLike[str],
        update: tuple[TopicPartition, int] | None = None,
        *,
        remove: TopicPartition | None = None,
    ) -> None:
        """Rewrite ``log_dir``'s file: entries of partitions without a log dropped,
        ``remove`` too; ``update`` ``(tp, offset)`` set."""
        live = self._live()
        with self._lock:
            checkpoint = self.file(log_dir)
            kept = {
                tp: o for tp, o in self._read(checkpoint).items() if tp in live and tp != remove
            }
            if update is not None:
                kept[TopicPartition(*update[0])] = update[1]
            checkpoint.write(kept)

    def truncate(self, log_dir: str | os.PathLike[str], tp: TopicPartition, offset: int) -> None:
        """Lower ``tp``'s entry to ``offset`` if it is above (Kafka's
        ``maybeTruncateCheckpoint``)."""
        with self._lock:
            checkpoint = self.file(log_dir)
            current = self._read(checkpoint)
            if current.get(tp, 0) > offset:
                current[tp] = offset
                checkpoint.write(current)


# -- which offsets to clean (LogCleanerManager) -------------------------------------------


class OffsetsToClean(NamedTuple):
    """Kafka's ``OffsetsToClean``: ``[first_dirty_offset, first_uncleanable_dirty_offset)``
    and whether the checkpoint must be rewritten (it was invalid)."""

    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


def _in_range(segments: Sequence[LogSegment], from_offset: int, to_offset: int) -> list[LogSegment]:
    """Kafka's ``logSegments(from, to)`` over a sorted snapshot: from the segment holding
    ``from_offset`` (or the first) to the last one whose base offset is below ``to_offset``."""
    if from_offset >= to_offset:
        return []
    bases = [s.base_offset for s in segments]
    lo = max(bisect.bisect_right(bases, from_offset) - 1, 0)
    hi = bisect.bisect_left(bases, to_offset)
    return list(segments[lo:hi])


def _non_active_from(segments: Sequence[LogSegment], offset: int) -> list[LogSegment]:
    """Kafka's ``nonActiveLogSegmentsFrom``."""
    active = segments[-1]
    if offset > active.base_offset:
        return []
    return _in_range(segments, offset, active.base_offset)


def cleanable_offsets(
    log: Log,
    last_clean_offset: int | None,
    now_ms: int,
    *,
    upper_bound: int | None = None,
    segments: Sequence[LogSegment] | None = None,
) -> OffsetsToClean:
    """Kafka's ``cleanableOffsets`` (see the module docstring). ``upper_bound``: the high
    watermark or last stable offset, if known (the log end offset otherwise)."""
    segs = list(segments) if segments is not None else log.segments
    log_start = log.log_start_offset
    checkpoint = log_start if last_clean_offset is None else last_clean_offset
    force = False
    if checkpoint < log_start:
        if not (log.config.compact and log.config.delete):
            logger.warning(
                "Resetting first dirty offset of %s to log start offset %d since the "
                "checkpointed offset %d is invalid.",
                log.topic_partition,
                log_start,
                checkpoint,
            )
        first_dirty, force = log_start, True
    elif checkpoint > log.log_end_offset:
        logger.warning(
            "The last checkpoint dirty offset for partition %s is %d, which is larger than "
            "the log end offset %d. Resetting to the log start offset %d.",
            log.topic_partition,
            checkpoint,
            log.log_end_offset,
            log_start,
        )
        first_dirty, force = log_start, True
    else:
        first_dirty = checkpoint
    candidates = [segs[-1].base_offset]
    if upper_bound is not None:
        candidates.append(upper_bound)
    first_unstable = log.first_unstable_offset
    if first_unstable is not None:
        candidates.append(first_unstable)
    min_lag = max(log.config.min_compaction_lag_ms, 0)
    if min_lag > 0:
        for segment in _non_active_from(segs, first_dirty):
            if segment.largest_timestamp() > now_ms - min_lag:
                candidates.append(segment.base_offset)
                break
    return OffsetsToClean(first_dirty, max(first_dirty, min(candidates)), force)


def calculate_cleanable_bytes(
    segments: Sequence[LogSegment], first_dirty_offset: int, uncleanable_offset: int
) -> tuple[int, int]:
    """Kafka's ``calculateCleanableBytes``: ``(first uncleanable offset, cleanable bytes)``;
    the first uncleanable offset is the base offset of the segment holding
    ``uncleanable_offset`` (the active segment's if none before it does)."""
    following = _non_active_from(segments, uncleanable_offset)
    first_uncleanable = (following[0] if following else segments[-1]).base_offset
    cleanable = _in_range(segments, min(first_dirty_offset, first_uncleanable), first_uncleanable)
    return first_uncleanable, sum(s.size for s in cleanable)


def max_compaction_delay(
    log: Log, first_dirty_offset: int, now_ms: int, segments: Sequence[LogSegment] | None = None
) -> int:
    """Kafka's ``maxCompactionDelay``: how long past ``max.compaction.lag.ms`` the oldest
    dirty non-active segment (by its first batch's max timestamp) is, 0 if not."""
    segs = list(segments) if segments is not None else log.segments
    stamps = [
        s.segment.rolling_based_timestamp
        for s in _non_active_from(segs, first_dirty_offset)
        if s.segment.rolling_based_timestamp > 0
    ]
    earliest = min(stamps, default=_MAX_OFFSET)
    clean_until = now_ms - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


@dataclass(frozen=True)
class LogToClean:
    """Kafka's ``LogToClean``: a log with its dirty range and byte counts."""

    log: Log
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool = False

    @classmethod
    def of(
        cls,
        log: Log,
        offsets: OffsetsToClean,
        *,
        need_compaction_now: bool = False,
        segments: Sequence[LogSegment] | None = None,
    ) -> LogToClean:
        segs = list(segments) if segments is not None else log.segments
        clean_bytes = sum(s.size for s in _in_range(segs, -1, offsets.first_dirty_offset))
        first_uncleanable, cleanable_bytes = calculate_cleanable_bytes(
            segs, offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset
        )
        return cls(
            log,
            offsets.first_dirty_offset,
            first_uncleanable,
            clean_bytes,
            cleanable_bytes,
            need_compaction_now,
        )

    @property
    def topic_partition(self) -> TopicPartition:
        return self.log.topic_partition

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    @property
    def is_cleanable(self) -> bool:
        """Due for cleaning: forced by ``max.compaction.lag.ms`` with cleanable bytes, or a
        cleanable ratio above ``min.cleanable.dirty.ratio``."""
        return (
            self.need_compaction_now and self.cleanable_bytes > 0
        ) or self.cleanable_ratio > self.log.config.min_cleanable_dirty_ratio


def group_segments_by_size(
    segments: Sequence[LogSegment],
    max_size: int,
    max_index_size: int,
    first_uncleanable_offset: int,
) -> list[list[LogSegment]]:
    """Kafka's ``groupSegmentsBySize``: consecutive segments whose ``.log`` sizes total at
    most ``max_size`` and whose offset (and time) index file sizes each total at most
    ``max_index_size``, and whose offsets stay within 2**31-1 of the group's base offset
    (the last offset of a segment is taken as the next segment's base - 1, or
    ``first_uncleanable_offset`` - 1 for the last one; an empty segment always joins)."""
    groups: list[list[LogSegment]] = []
    rest = list(segments)
    i = 0
    while i < len(rest):
        group = [rest[i]]
        log_size = rest[i].size
        index_size, time_index_size = _index_sizes(rest[i])
        i += 1
        while i < len(rest):
            candidate = rest[i]
            c_index, c_time_index = _index_sizes(candidate)
            last_offset = (
                rest[i + 1].base_offset - 1 if i + 1 < len(rest) else first_uncleanable_offset - 1
            )
            if not (
                log_size + candidate.size <= max_size
                and index_size + c_index <= max_index_size
                and time_index_size + c_time_index <= max_index_size
                and (candidate.size == 0 or last_offset - group[0].base_offset <= I32_MAX)
            ):
                break
            group.append(candidate)
            log_size += candidate.size
            index_size += c_index
            time_index_size += c_time_index
            i += 1
        groups.append(group)
    return groups


def _index_sizes(segment: LogSegment) -> tuple[int, int]:
    sizes = []
    for path in (segment.segment.index_path, segment.segment.time_index_path):
        try:
            sizes.append(os.stat(path).st_size)
        except FileNotFoundError:
            sizes.append(0)
    return sizes[0], sizes[1]


# -- statistics ---------------------------------------------------------------------------


@dataclass
class CleanerStats:
    """What one cleaning round did (Kafka's ``CleanerStats``)."""

    topic_partition: TopicPartition
    first_dirty_offset: int
    end_offset: int = -1
    map_bytes_read: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_written: int = 0
    invalid_records: int = 0
    map_size: int = 0
    map_capacity: int = 0
    groups: list[list[int]] = field(default_factory=list)
    start_ns: int = field(default_factory=_time.monotonic_ns)
    map_done_ns: int = 0
    end_ns: int = 0

    @property
    def buffer_utilization(self) -> float:
        return self.map_size / self.map_capacity if self.map_capacity else 0.0

    @property
    def elapsed_s(self) -> float:
        return max(self.end_ns - self.start_ns, 0) / 1e9

    def summary(self) -> str:
        elapsed = max(self.elapsed_s, 1e-9)
        mb = 1024.0 * 1024.0
        return (
            f"Log cleaner stats for {self.topic_partition}: {self.bytes_read / mb:.1f} MB of "
            f"log processed in {elapsed:.3f} s ({self.bytes_read / mb / elapsed:.1f} MB/s); "
            f"{self.records_read} records read, {self.records_written} written "
            f"({self.invalid_records} without key); {self.bytes_read - self.bytes_written} "
            f"bytes removed; map {self.map_size}/{self.map_capacity} keys "
            f"({100 * self.buffer_utilization:.1f}%), end offset {self.end_offset}"
        )


# -- the cleaning of one log (Kafka's Cleaner) --------------------------------------------


class _CleaningAborted(Exception):
    """Kafka's ``LogCleaningAbortedException``: the partition was paused, the cleaner shut
    down, or the log changed under the cleaner."""


class _Throttler:
    """Kafka's ``Throttler`` for ``log.cleaner.io.max.bytes.per.second``, shared by the
    cleaner threads: after each 300 ms of I/O, sleep as long as the observed rate needs."""

    _CHECK_INTERVAL_NS = 300_000_000

    def __init__(self, bytes_per_second: float, stop: threading.Event) -> None:
        self._rate = bytes_per_second
        self._stop = stop
        self._lock = threading.Lock()
        self._period_start = _time.monotonic_ns()
        self._observed = 0

    def maybe_throttle(self, observed: int) -> None:
        if math.isinf(self._rate) or self._rate <= 0:
            return
        with self._lock:
            self._observed += observed
            now = _time.monotonic_ns()
            elapsed = now - self._period_start
            if elapsed <= self._CHECK_INTERVAL_NS or self._observed <= 0:
                return
            sleep_s = self._observed / self._rate - elapsed / 1e9
            self._period_start, self._observed = now, 0
        if sleep_s > 0:
            self._stop.wait(sleep_s)
            with self._lock:
                self._period_start = _time.monotonic_ns()


# -- transactions (Kafka's CleanedTransactionMetadata) ------------------------------------

_V2_HEADER = struct.Struct(">qiibIhiqqqhii")  # Kafka's DefaultRecordBatch header, 61 bytes
_H_BASE_OFFSET, _H_ATTRIBUTES, _H_LAST_DELTA, _H_BASE_TS = 0, 5, 6, 7
_H_PRODUCER_ID, _H_EPOCH, _H_COUNT = 9, 10, 12
_TRANSACTIONAL = 0x10
_CONTROL = 0x20
_DELETE_HORIZON = 0x40
_TXN_OR_CONTROL = _TRANSACTIONAL | _CONTROL
_EMPTY_KEEP_ATTRIBUTES = 0x08 | _TRANSACTIONAL | _CONTROL  # timestamp type, txn, control
_ABORT, _COMMIT = 0, 1  # ControlRecordType
_PASS = None  # a batch the backend handles as it is

BatchHeader = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]


class LastRecord(NamedTuple):
    """Kafka's ``LastRecord`` of an active producer: the offset of its last data batch
    (-1 when its state holds none, e.g. after an epoch bump by a marker) and its epoch
    (-1 when unknown)."""

    last_data_offset: int
    producer_epoch: int = -1


def _whole_v2_header(buf: bytes, pos: int) -> tuple[BatchHeader, int] | None:
    """The header and end of the whole v2 batch at ``pos``; ``None`` at a partial tail or
    anything else (legacy, corrupt): the backend then decides on the rest."""
    if len(buf) - pos < _V2_HEADER.size:
        return None
    header: BatchHeader = _V2_HEADER.unpack_from(buf, pos)
    end = pos + header[1] + _LOG_OVERHEAD
    if header[3] != 2 or header[1] + _LOG_OVERHEAD < _V2_HEADER.size or end > len(buf):
        return None
    return header, end


def _last_offset(header: BatchHeader) -> int:
    return header[_H_BASE_OFFSET] + header[_H_LAST_DELTA]


def _control_type(records: Sequence[RecordTuple]) -> int | None:
    """The type of a control batch of ``records`` (Kafka's ``ControlRecordType.parse`` of
    its first record's key: int16 version, int16 type); ``None`` for an empty batch."""
    if not records:
        return None
    key = records[0][2]
    if key is None or len(key) < 4:
        raise InvalidRecordError(
            f"Invalid value size found for end control record key. Must have at least 4 "
            f"bytes, but found only {0 if key is None else len(key)}"
        )
    return int(struct.unpack_from(">h", key, 2)[0])


def _retains_producer_state(header: BatchHeader, last_records: Mapping[int, LastRecord]) -> bool:
    """Kafka's ``isBatchLastRecordOfProducer`` (for a batch with a producer id)."""
    producer_id = header[_H_PRODUCER_ID]
    last = last_records.get(producer_id) if producer_id >= 0 else None
    if last is None:
        return False
    if last.last_data_offset >= 0:
        return _last_offset(header) == last.last_data_offset
    return bool(header[_H_ATTRIBUTES] & _CONTROL) and header[_H_EPOCH] == last.producer_epoch


def _empty_header(backend: Backend, header: BatchHeader) -> bytes:
    """Kafka's ``DefaultRecordBatch.writeEmptyHeader`` for ``header``'s batch (as the
    backends' ``filter_batches`` writes it)."""
    out = bytearray(
        _V2_HEADER.pack(
            header[0],
            _V2_HEADER.size - _LOG_OVERHEAD,
            header[2],
            2,
            0,
            header[_H_ATTRIBUTES] & _EMPTY_KEEP_ATTRIBUTES,
            header[_H_LAST_DELTA],
            -1,
            header[8],
            header[_H_PRODUCER_ID],
            header[_H_EPOCH],
            header[11],
            0,
        )
    )
    struct.pack_into(">I", out, 17, backend.crc32c(bytes(out[21:])))
    return bytes(out)


class _AbortedState:
    __slots__ = ("seen", "txn")

    def __init__(self, txn: AbortedTxn) -> None:
        self.txn = txn
        self.seen = False


class CleanedTransactionMetadata:
    """Kafka's ``CleanedTransactionMetadata``: the transactions met while walking a log
    in offset order (one instance per key-map build, one per cleaning round). Decides
    which data batches belong to aborted transactions and which markers may go, and
    re-appends the retained aborted transactions to ``cleaned_index``. Not thread-safe."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, AbortedTxn]] = []
        self._counter = 0
        self._committed: set[int] = set()
        self._aborted: dict[int, _AbortedState] = {}
        self.cleaned_index: TransactionIndex | None = None

    def add_aborted_transactions(self, txns: Iterable[AbortedTxn]) -> None:
        for txn in txns:
            self._counter += 1
            heapq.heappush(self._heap, (txn.first_offset, self._counter, txn))

    def _consume_up_to(self, offset: int) -> None:
        heap = self._heap
        while heap and heap[0][0] <= offset:
            txn = heapq.heappop(heap)[2]
            if txn.producer_id not in self._aborted:
                self._aborted[txn.producer_id] = _AbortedState(txn)

    def on_batch_read(self, producer_id: int, last_offset: int, transactional: bool) -> bool:
        """A data batch was read; ``True`` when it belongs to an aborted transaction
        (Kafka's ``onBatchRead``). Non-transactional batches need not be reported:
        they change nothing but how far the heap is consumed, which the next reported
        batch catches up on."""
        self._consume_up_to(last_offset)
        if not transactional:
            return False
        state = self._aborted.get(producer_id)
        if state is not None:
            state.seen = True
            return True
        self._committed.add(producer_id)
        return False

    def on_control_batch_read(
        self, producer_id: int, last_offset: int, control_type: int | None
    ) -> bool:
        """A control batch was read; ``True`` when it may be discarded (Kafka's
        ``onControlBatchRead``)."""
        self._consume_up_to(last_offset)
        if control_type is None:
            return True  # emptied by an earlier round
        if control_type == _ABORT:
            state = self._aborted.pop(producer_id, None)
            if state is not None and state.seen:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(state.txn)
                return False
            return True
        if control_type == _COMMIT:
            if producer_id in self._committed:
                self._committed.discard(producer_id)
                return False
            return True
        return False


def _needed_batch_size(chunk: bytes) -> int | None:
    """The size of the batch a chunk starts with, if its header is there."""
    if len(chunk) <= _MIN_HEADER:
        return None
    return int(_SIZE_FIELD.unpack_from(chunk, 8)[0]) + _LOG_OVERHEAD


class _Cleaner:
    """One cleaner thread's worker: its key maps (one per backend) and read size."""

    def __init__(
        self,
        config: CleanerConfig,
        throttler: _Throttler,
        active_producers: Callable[[Log], Mapping[int, int | LastRecord]] | None,
    ) -> None:
        self._config = config
        self._throttler = throttler
        self._active_producers = active_producers
        self._key_maps: dict[Backend, KeyMap] = {}

    def _key_map(self, backend: Backend) -> KeyMap:
        key_map = self._key_maps.get(backend)
        if key_map is None:
            key_map = backend.KeyMap(self._config.key_map_capacity())
            self._key_maps[backend] = key_map
        key_map.clear()
        return key_map

    def clean(self, ltc: LogToClean, now_ms: int, check_done: Callable[[], None]) -> CleanerStats:
        log = ltc.log
        config = log.config
        stats = CleanerStats(ltc.topic_partition, ltc.first_dirty_offset)
        segments = log.segments
        _remove_scratch(log.dir)
        key_map = self._key_map(log.backend)
        # Covers nothing yet; with no dirty segment (a forced round) the round re-cleans
        # the clean section up to the first dirty offset.
        key_map.update_latest_offset(ltc.first_dirty_offset - 1)
        self._build_offset_map(
            log,
            segments,
            ltc.first_dirty_offset,
            ltc.first_uncleanable_offset,
            key_map,
            stats,
            check_done,
        )
        end_offset = key_map.latest_offset + 1
        stats.map_done_ns = _time.monotonic_ns()
        stats.map_size, stats.map_capacity = len(key_map), key_map.capacity

        producers = self._producers(log)
        txn = CleanedTransactionMetadata()
        groups = group_segments_by_size(
            _in_range(segments, 0, end_offset),
            config.segment_bytes,
            config.segment_index_bytes,
            ltc.first_uncleanable_offset,
        )
        for group in groups:
            self._clean_segments(
                log,
                group,
                key_map,
                now_ms,
                stats,
                round_end_offset=ltc.first_uncleanable_offset,
                producers=producers,
                txn=txn,
                check_done=check_done,
            )
            stats.groups.append([s.base_offset for s in group])
        stats.end_offset = end_offset
        stats.end_ns = _time.monotonic_ns()
        return stats

    def _producers(self, log: Log) -> dict[int, LastRecord]:
        """Kafka's ``lastRecordsOfActiveProducers``: producer id -> its last data offset
        (-1: none) and epoch; from the ``active_producers`` hook when given (a bare offset:
        epoch unknown)."""
        if self._active_producers is not None:
            return {
                pid: last if isinstance(last, LastRecord) else LastRecord(last)
                for pid, last in self._active_producers(log).items()
            }
        state = log.producer_state
        if state is None:
            return {}
        entries = dict(state.active_producers)  # one C-level copy: appends may go on
        return {
            pid: LastRecord(entry.last_data_offset, entry.producer_epoch)
            for pid, entry in entries.items()
        }

    # -- the key map ----------------------------------------------------------------------

    def _build_offset_map(
        self,
        log: Log,
        segments: Sequence[LogSegment],
        start: int,
        end: int,
        key_map: KeyMap,
        stats: CleanerStats,
        check_done: Callable[[], None],
    ) -> None:
        dirty = _in_range(segments, start, end)
        txn = CleanedTransactionMetadata()
        txn.add_aborted_transactions(log.collect_aborted_transactions(start, end))
        for i, segment in enumerate(dirty):
            next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
            if self._map_segment(
                log.backend, segment, key_map, start, end, next_start, txn, stats, check_done
            ):
                logger.debug(
                    "Offset map is full, %d segments fully mapped, segment with base offset "
                    "%d is partially mapped",
                    i,
                    segment.base_offset,
                )
                return

    def _map_segment(
        self,
        backend: Backend,
        segment: LogSegment,
        key_map: KeyMap,
        start: int,
        end: int,
        next_segment_start: int,
        txn: CleanedTransactionMetadata,
        stats: CleanerStats,
        check_done: Callable[[], None],
    ) -> bool:
        position = segment.segment.lookup_index(start)[1]
        size = segment.size
        read_size = self._config.read_buffer_size()
        while position < size:
            check_done()
            chunk = segment.segment.read_bytes(position, min(read_size, size - position))
            consumed, full = _map_chunk(backend, chunk, key_map, start, end, txn)
            self._throttler.maybe_throttle(len(chunk))
            position += consumed
            stats.map_bytes_read += consumed
            if full:
                return True
            if consumed == 0:
                read_size = _grown(segment, position, chunk, read_size, size)
        key_map.update_latest_offset(next_segment_start - 1)
        return False

    # -- one group into one segment -------------------------------------------------------

    def _clean_segments(
        self,
        log: Log,
        group: list[LogSegment],
        key_map: KeyMap,
        now_ms: int,
        stats: CleanerStats,
        *,
        round_end_offset: int,
        producers: dict[int, LastRecord],
        txn: CleanedTransactionMetadata,
        check_done: Callable[[], None],
    ) -> None:
        config = log.config
        base = group[0].base_offset
        scratch = os.path.join(log.dir, CLEANER_TMP_DIR)
        cleaned = segment_file_paths(log.dir, base, CLEANED_FILE_SUFFIX)
        try:
            os.mkdir(scratch)
            dest = log.backend.Segment(
                scratch,
                base,
                index_interval_bytes=config.index_interval_bytes,
                max_index_size=config.segment_index_bytes,
            )
            txn.cleaned_index = TransactionIndex(base, transaction_index_file(scratch, base))
            try:
                for i, segment in enumerate(group):
                    # Kafka collects over the whole source segment: the cleaned segment's
                    # .txnindex is rebuilt from the markers it keeps.
                    upper = group[i + 1].base_offset if i + 1 < len(group) else segment.next_offset
                    txn.add_aborted_transactions(
                        log.collect_aborted_transactions(segment.base_offset, upper)
                    )
                    self._clean_into(
                        log, segment, dest, key_map, now_ms, stats,
                        round_end_offset, producers, txn, check_done,
                    )  # fmt: skip
            finally:
                dest.close()  # seal, fsync, close
                txn.cleaned_index.flush()
                txn.cleaned_index = None
            built = segment_file_paths(scratch, base)
            for source, target in zip(built, cleaned, strict=True):
                if os.path.exists(source):
                    os.replace(source, target)
            # Kafka keeps the last modified time of the original files.
            modified_ns = os.stat(group[-1].log_path).st_mtime_ns
            os.utime(cleaned[0], ns=(modified_ns, modified_ns))
            fsync_dir(log.dir)
            os.rmdir(scratch)
            check_done()
        except Exception:
            _remove_scratch(log.dir)
            for path in cleaned:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
            raise
        if log.replace_segments(base, group) is None:
            raise _CleaningAborted(f"the segments of {log.topic_partition} changed")

    def _clean_into(
        self,
        log: Log,
        source: LogSegment,
        dest: Segment,
        key_map: KeyMap,
        now_ms: int,
        stats: CleanerStats,
        round_end_offset: int,
        producers: dict[int, LastRecord],
        txn: CleanedTransactionMetadata,
        check_done: Callable[[], None],
    ) -> None:
        position = 0
        size = source.size
        read_size = self._config.read_buffer_size()
        chunk_filter = _ChunkFilter(
            log.backend,
            key_map,
            now_ms=now_ms,
            delete_retention_ms=log.config.delete_retention_ms,
            round_end_offset=round_end_offset,
            producers=producers,
            txn=txn,
        )
        while position < size:
            check_done()
            chunk = source.segment.read_bytes(position, min(read_size, size - position))
            data, consumed, read, retained, invalid = chunk_filter.filter(chunk)
            self._throttler.maybe_throttle(len(chunk))
            stats.bytes_read += consumed
            stats.records_read += read
            stats.records_written += retained
            stats.invalid_records += invalid
            if data:
                dest.append(data, assign_offsets=False)
                stats.bytes_written += len(data)
                self._throttler.maybe_throttle(len(data))
            position += consumed
            if consumed == 0:
                read_size = _grown(source, position, chunk, read_size, size)


def _map_chunk(
    backend: Backend,
    chunk: bytes,
    key_map: KeyMap,
    start: int,
    end: int,
    txn: CleanedTransactionMetadata,
) -> tuple[int, bool]:
    """``key_map.add_batches`` over ``chunk`` without the batches of aborted transactions
    (their keys stay out of the map; the map's latest offset still covers them, as
    Kafka's ``buildOffsetMapForSegment``); markers update ``txn``. Returns ``(consumed,
    full)`` as ``add_batches``."""
    run_start = pos = 0
    while (found := _whole_v2_header(chunk, pos)) is not None:
        header, batch_end = found
        attributes = header[_H_ATTRIBUTES]
        if header[_H_BASE_OFFSET] >= end or not attributes & _TXN_OR_CONTROL:
            pos = batch_end
            continue
        last_offset = _last_offset(header)
        producer_id = header[_H_PRODUCER_ID]
        if attributes & _CONTROL:
            control_type = _control_type(backend.batch_records(chunk, pos))
            txn.on_control_batch_read(producer_id, last_offset, control_type)
            pos = batch_end
            continue
        if not txn.on_batch_read(producer_id, last_offset, True):
            pos = batch_end
            continue
        # aborted: skipped unread, as Kafka counts it without iterating its records
        if pos > run_start:
            consumed, full = key_map.add_batches(chunk[run_start:pos], start, end)
            if full:
                return run_start + consumed, True
        if last_offset >= start:
            key_map.update_latest_offset(last_offset)
        pos = run_start = batch_end
    if run_start == 0:
        return key_map.add_batches(chunk, start, end)
    consumed, full = key_map.add_batches(chunk[run_start:], start, end)
    return run_start + consumed, full


class _ChunkFilter:
    """The backend's ``filter_batches`` with Kafka's transactional batch retention (see
    the module docstring): the batches whose fate depends on transactions are decided
    here, the runs between them filtered by the backend."""

    def __init__(
        self,
        backend: Backend,
        key_map: KeyMap,
        *,
        now_ms: int,
        delete_retention_ms: int,
        round_end_offset: int,
        producers: Mapping[int, LastRecord],
        txn: CleanedTransactionMetadata,
    ) -> None:
        self._backend = backend
        self._key_map = key_map
        self._now_ms = now_ms
        self._retention_ms = delete_retention_ms
        self._round_end = round_end_offset
        self._producers = producers
        self._data_producers = {
            pid: last.last_data_offset
            for pid, last in producers.items()
            if last.last_data_offset >= 0
        }
        self._txn = txn

    def _backend_filter(self, buf: bytes) -> tuple[bytes, int, int, int, int]:
        return self._backend.filter_batches(
            buf,
            self._key_map,
            now_ms=self._now_ms,
            delete_retention_ms=self._retention_ms,
            round_end_offset=self._round_end,
            producer_last_offsets=self._data_producers,
        )

    def filter(self, chunk: bytes) -> tuple[bytes, int, int, int, int]:
        """``filter_batches``' result for ``chunk``."""
        parts: list[bytes] = []
        read = retained = invalid = 0
        run_start = pos = 0
        while (found := _whole_v2_header(chunk, pos)) is not None:
            header, batch_end = found
            if not header[_H_ATTRIBUTES] & _TXN_OR_CONTROL:
                pos = batch_end
                continue
            decided = self._decide(chunk, pos, header)
            if decided is _PASS:
                pos = batch_end
                continue
            out, batch_read, batch_retained = decided
            if pos > run_start:
                data, _, r, k, i = self._backend_filter(chunk[run_start:pos])
                parts.append(data)
                read, retained, invalid = read + r, retained + k, invalid + i
            parts.append(out)
            read, retained = read + batch_read, retained + batch_retained
            pos = run_start = batch_end
        if run_start == 0:
            return self._backend_filter(chunk)
        data, consumed, r, k, i = self._backend_filter(chunk[run_start:])
        parts.append(data)
        return (
            b"".join(parts),
            run_start + consumed,
            read + r,
            retained + k,
            invalid + i,
        )

    def _retain_empty(self, header: BatchHeader) -> bool:
        return (
            _retains_producer_state(header, self._producers)
            or _last_offset(header) + 1 == self._round_end
        )

    def _decide(self, chunk: bytes, pos: int, header: BatchHeader) -> tuple[bytes, int, int] | None:
        """``(output, records read, records retained)`` for a batch decided here, or
        ``_PASS`` for one the backend filters as any other."""
        backend = self._backend
        attributes = header[_H_ATTRIBUTES]
        producer_id = header[_H_PRODUCER_ID]
        last_offset = _last_offset(header)
        if not attributes & _CONTROL:
            if not self._txn.on_batch_read(producer_id, last_offset, True):
                return _PASS
            if not self._retain_empty(header):
                return b"", header[_H_COUNT], 0  # deleted unread, as Kafka does
            backend.validate_batch(chunk, pos)  # Kafka iterates a batch it keeps empty
            return _empty_header(backend, header), header[_H_COUNT], 0
        records = backend.batch_records(chunk, pos)
        discardable = self._txn.on_control_batch_read(
            producer_id, last_offset, _control_type(records)
        )
        has_horizon = bool(attributes & _DELETE_HORIZON)
        if not records or (discardable and has_horizon and header[_H_BASE_TS] <= self._now_ms):
            out = _empty_header(backend, header) if self._retain_empty(header) else b""
            return out, len(records), 0
        if not discardable or has_horizon:
            return _PASS  # kept as it is
        # Discardable for the first time: stamp the delete horizon (KIP-534).
        horizon = min(self._now_ms + self._retention_ms, _MAX_OFFSET)
        rebuilt = backend.build_batch(
            records,
            base_offset=header[_H_BASE_OFFSET],
            last_offset_delta=header[_H_LAST_DELTA],
            compression=attributes & 0x07,
            timestamp_type=1 if attributes & 0x08 else 0,
            partition_leader_epoch=header[2],
            producer_id=producer_id,
            producer_epoch=header[_H_EPOCH],
            base_sequence=header[11],
            transactional=bool(attributes & _TRANSACTIONAL),
            control=True,
            delete_horizon_ms=horizon,
        )
        return rebuilt, len(records), len(records)


def _grown(segment: LogSegment, position: int, chunk: bytes, read_size: int, size: int) -> int:
    """The read size holding the whole batch at ``position`` (no whole batch fit in
    ``chunk``); ``CorruptRecordError`` when the segment ends inside it."""
    needed = _needed_batch_size(chunk)
    if needed is None or needed <= len(chunk) or position + needed > size:
        raise CorruptRecordError(
            f"{segment.log_path}, position {position}: log segment may be corrupt, a batch "
            f"of {needed} bytes does not fit the {size - position} bytes left"
        )
    return max(needed, read_size * 2)


def _remove_scratch(partition_dir: str) -> None:
    shutil.rmtree(os.path.join(partition_dir, CLEANER_TMP_DIR), ignore_errors=True)


# -- the cleaner (LogCleaner + LogCleanerManager) -----------------------------------------


class _Paused:
    __slots__ = ("count",)

    def __init__(self, count: int) -> None:
        self.count = count


_IN_PROGRESS = "in-progress"
_ABORTED = "aborted"
_State = str | _Paused


class LogCleaner:
    """Compacts the logs ``logs()`` returns whose policy contains ``compact`` (see the
    module docstring).

    ``config``: the ``log.cleaner.*`` settings (:meth:`CleanerConfig.from_broker`);
    ``time``: the clock of ``now`` (tombstone horizons, compaction lags);
    ``checkpoints``: where progress is kept (default: ``cleaner-offset-checkpoint`` in each
    log's parent directory, :meth:`CleanerOffsetCheckpoints.of_logs`; a
    :class:`~kafkacore.log.manager.LogManager` is one too); ``upper_bound(tp)``: the high
    watermark or last stable offset of a partition, which cleaning and retention never
    pass (``None``: the log end offset); ``active_producers(log)``: producer id -> offset of
    its last data record (or a :class:`LastRecord`: that offset, -1 if none, and the
    producer's epoch), for the producers whose last batch (or, without a data offset,
    last marker of their epoch) must survive as an empty batch (default: the log's
    producer state, if it has one).

    Driven explicitly with :meth:`clean` / :meth:`maybe_clean_logs`, or by
    ``config.num_threads`` background threads between :meth:`start` and :meth:`shutdown`.
    """

    def __init__(
        self,
        logs: Callable[[], Iterable[Log]],
        config: CleanerConfig | None = None,
        time: Time | None = None,
        *,
        checkpoints: CleanerCheckpoints | None = None,
        upper_bound: Callable[[TopicPartition], int | None] | None = None,
        active_producers: Callable[[Log], Mapping[int, int | LastRecord]] | None = None,
    ) -> None:
        self._logs = logs
        self._config = config or CleanerConfig()
        self._time = time or SYSTEM_TIME
        self._checkpoints: CleanerCheckpoints = (
            checkpoints if checkpoints is not None else CleanerOffsetCheckpoints.of_logs(logs)
        )
        self._upper_bound = upper_bound
        self._active_producers = active_producers
        self._cond = threading.Condition()
        self._states: dict[TopicPartition, _State] = {}
        self._uncleanable: dict[TopicPartition, Log] = {}
        self._stop = threading.Event()
        self._throttler = _Throttler(self._config.max_io_bytes_per_second, self._stop)
        self._threads: list[threading.Thread] = []

    @property
    def config(self) -> CleanerConfig:
        return self._config

    @property
    def checkpoints(self) -> CleanerCheckpoints:
        return self._checkpoints

    # -- choosing ------------------------------------------------------------------------

    def _bound(self, tp: TopicPartition) -> int | None:
        return self._upper_bound(tp) if self._upper_bound is not None else None

    def _to_clean(
        self, log: Log, checkpoints: Mapping[TopicPartition, int], now_ms: int, bound: int | None
    ) -> LogToClean:
        segments = log.segments
        offsets = cleanable_offsets(
            log,
            checkpoints.get(log.topic_partition),
            now_ms,
            upper_bound=bound,
            segments=segments,
        )
        if offsets.force_update_checkpoint:
            self._checkpoints.update_cleaner_checkpoint(
                os.path.dirname(log.dir), (log.topic_partition, offsets.first_dirty_offset)
            )
        delay = max_compaction_delay(log, offsets.first_dirty_offset, now_ms, segments)
        return LogToClean.of(log, offsets, need_compaction_now=delay > 0, segments=segments)

    def dirtiness(self, now_ms: int | None = None) -> list[LogToClean]:
        """Every compacted, non-empty log with its dirty range and ratio (not paused or
        being cleaned), dirtiest first."""
        now = self._time.milliseconds() if now_ms is None else now_ms
        return self._candidates(now)

    def _candidates(self, now_ms: int, skip: Iterable[TopicPartition] = ()) -> list[LogToClean]:
        # Never call out (logs, checkpoints, upper bounds) holding the condition's lock: a
        # LogManager calls the pause hooks holding its own locks.
        logs = list(self._logs())
        checkpoints = self._checkpoints.read_cleaner_checkpoints()
        with self._cond:
            busy = set(self._states) | set(skip)
            uncleanable = dict(self._uncleanable)
        found: list[LogToClean] = []
        for log in logs:
            tp = log.topic_partition
            if log.closed or not log.config.compact or tp in busy or uncleanable.get(tp) is log:
                continue
            ltc = self._to_clean(log, checkpoints, now_ms, self._bound(tp))
            if ltc.total_bytes > 0:
                found.append(ltc)
        found.sort(key=lambda ltc: ltc.cleanable_ratio, reverse=True)
        return found

    def _grab_filthiest(
        self, now_ms: int, skip: Iterable[TopicPartition] = ()
    ) -> LogToClean | None:
        candidates = self._candidates(now_ms, skip)
        with self._cond:
            for ltc in candidates:
                if ltc.is_cleanable and ltc.topic_partition not in self._states:
                    self._states[ltc.topic_partition] = _IN_PROGRESS
                    return ltc
            return None

    # -- cleaning ------------------------------------------------------------------------

    def _check_done(self, tp: TopicPartition) -> None:
        if self._stop.is_set():
            raise _CleaningAborted("the cleaner is shutting down")
        with self._cond:
            if self._states.get(tp) == _ABORTED:
                raise _CleaningAborted(f"cleaning of {tp} was aborted")

    def _done_cleaning(self, log: Log, end_offset: int | None) -> None:
        tp = log.topic_partition
        with self._cond:
            state = self._states.get(tp)
            if state == _IN_PROGRESS:
                if end_offset is not None:
                    self._checkpoints.update_cleaner_checkpoint(
                        os.path.dirname(log.dir), (tp, end_offset)
                    )
                del self._states[tp]
            elif state == _ABORTED:
                self._states[tp] = _Paused(1)
            self._cond.notify_all()

    def _run_clean(self, cleaner: _Cleaner, ltc: LogToClean, now_ms: int) -> CleanerStats | None:
        """Clean a log marked in progress; ``None`` if aborted. Other errors propagate."""
        tp = ltc.topic_partition
        end_offset: int | None = None
        try:
            stats = cleaner.clean(ltc, now_ms, lambda: self._check_done(tp))
            end_offset = stats.end_offset
        except _CleaningAborted as exc:
            logger.info("Cleaning of %s aborted: %s", tp, exc)
            return None
        finally:
            self._done_cleaning(ltc.log, end_offset)
        logger.info("%s", stats.summary())
        return stats

    def _new_cleaner(self) -> _Cleaner:
        return _Cleaner(self._config, self._throttler, self._active_producers)

    def clean(
        self,
        log: Log,
        now_ms: int | None = None,
        *,
        upper_bound: int | None = None,
        force: bool = False,
    ) -> CleanerStats | None:
        """One cleaning round of ``log`` now (in this thread), if it is due (see
        :attr:`LogToClean.is_cleanable`) or ``force``; returns its stats, ``None`` when not
        due, paused, being cleaned by another thread, or aborted. A forced round with no
        dirty data re-cleans the clean section (drops tombstones whose horizon passed).
        ``upper_bound`` defaults to the cleaner's ``upper_bound(tp)``. Errors propagate
        (``CorruptRecordError``, ``InvalidRecordError`` for legacy data, I/O errors)."""
        tp = log.topic_partition
        now = self._time.milliseconds() if now_ms is None else now_ms
        bound = upper_bound if upper_bound is not None else self._bound(tp)
        with self._cond:
            if tp in self._states:
                return None
            self._states[tp] = _IN_PROGRESS
        try:
            checkpoints = self._checkpoints.read_cleaner_checkpoints()
            ltc = self._to_clean(log, checkpoints, now, bound)
            due = not log.closed and ltc.total_bytes > 0 and (force or ltc.is_cleanable)
        except BaseException:
            self._done_cleaning(log, None)
            raise
        if not due:
            self._done_cleaning(log, None)
            return None
        return self._run_clean(self._new_cleaner(), ltc, now)

    def maybe_clean_logs(self, now_ms: int | None = None) -> dict[TopicPartition, CleanerStats]:
        """One pass of what the cleaner threads do, in this thread: clean every log that
        is due, dirtiest first (each once), then apply ``delete_old_segments`` to the
        compacted logs. Returns the stats of the logs cleaned. A log whose cleaning fails
        is logged, marked uncleanable (skipped while it is the same log object) and
        passed over."""
        now = self._time.milliseconds() if now_ms is None else now_ms
        cleaner = self._new_cleaner()
        done: dict[TopicPartition, CleanerStats] = {}
        tried: set[TopicPartition] = set()
        while not self._stop.is_set():
            ltc = self._grab_filthiest(now, tried)
            if ltc is None:
                break
            tried.add(ltc.topic_partition)
            stats = self._clean_or_mark(cleaner, ltc, now)
            if stats is not None:
                done[ltc.topic_partition] = stats
        self.delete_old_segments()
        return done

    def _clean_or_mark(
        self, cleaner: _Cleaner, ltc: LogToClean, now_ms: int
    ) -> CleanerStats | None:
        try:
            return self._run_clean(cleaner, ltc, now_ms)
        except Exception:
            logger.exception(
                "Unexpected exception thrown when cleaning log %s. Marking its partition (%s) "
                "as uncleanable",
                ltc.log.dir,
                ltc.topic_partition,
            )
            with self._cond:
                self._uncleanable[ltc.topic_partition] = ltc.log
            return None

    def delete_old_segments(self) -> int:
        """Kafka's cleaner-thread retention pass: ``delete_old_segments`` (bounded by the
        upper bound) on every compacted log not being cleaned; returns segments deleted."""
        candidates = list(self._logs())
        with self._cond:
            logs = [
                log
                for log in candidates
                if log.config.compact
                and not log.closed
                and log.topic_partition not in self._states
                and self._uncleanable.get(log.topic_partition) is not log
            ]
            for log in logs:
                self._states[log.topic_partition] = _IN_PROGRESS
        deleted = 0
        try:
            for log in logs:
                try:
                    deleted += log.delete_old_segments(self._bound(log.topic_partition))
                except ValueError:
                    continue  # closed meanwhile
                except Exception:
                    logger.exception("Error deleting old segments of %s", log.topic_partition)
        finally:
            with self._cond:
                for log in logs:
                    tp = log.topic_partition
                    state = self._states.get(tp)
                    if state == _IN_PROGRESS:
                        del self._states[tp]
                    elif state == _ABORTED:
                        self._states[tp] = _Paused(1)
                self._cond.notify_all()
        return deleted

    # -- pausing (LogManager's CleanerHooks) ---------------------------------------------

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
        """Abort a cleaning of ``tp`` in progress (at its next check) and pause ``tp``
        until :meth:`resume_cleaning`; pausing a paused partition counts once more.
        Blocks until the partition is paused."""
        tp = TopicPartition(*tp)
        with self._cond:
            state = self._states.get(tp)
            if state is None:
                self._states[tp] = _Paused(1)
            elif state == _IN_PROGRESS:
                self._states[tp] = _ABORTED
            elif isinstance(state, _Paused):
                state.count += 1
            else:
                raise RuntimeError(
                    f"Compaction for partition {tp} cannot be aborted and paused since it is "
                    f"in {state} state."
                )
            # Until the cleaning thread has seen the abort (then it is paused; a resume
            # racing with this wait may already have lifted the pause).
            while self._states.get(tp) == _ABORTED:
                self._cond.wait(0.1)

    def abort_cleaning(self, tp: TopicPartition) -> None:
        """Abort a cleaning of ``tp`` in progress (blocking until it stopped); not paused
        afterwards."""
        with self._cond:
            self.abort_and_pause_cleaning(tp)
            self.resume_cleaning([tp])

    def resume_cleaning(self, tps: Iterable[TopicPartition]) -> None:
        """Undo one pause of each partition. ``RuntimeError`` if one is not paused."""
        with self._cond:
            for raw in tps:
                tp = TopicPartition(*raw)
                state = self._states.get(tp)
                if not isinstance(state, _Paused):
                    raise RuntimeError(
                        f"Compaction for partition {tp} cannot be resumed since it is "
                        + ("not paused." if state is None else f"in {state} state.")
                    )
                if state.count <= 1:
                    del self._states[tp]
                else:
                    state.count -= 1
            self._cond.notify_all()

    def is_paused(self, tp: TopicPartition) -> bool:
        with self._cond:
            return isinstance(self._states.get(TopicPartition(*tp)), _Paused)

    # -- threads -------------------------------------------------------------------------

    def start(self) -> None:
        """Start ``num_threads`` daemon threads (``kafka-log-cleaner-thread-N``): each cleans
        the dirtiest due log, then applies retention to the compacted logs, and waits
        ``log.cleaner.backoff.ms`` when there was nothing to clean. Does nothing when
        ``enable_cleaner`` is false or already started."""
        if not self._config.enable_cleaner or self._threads:
            return
        self._stop.clear()
        for i in range(self._config.num_threads):
            thread = threading.Thread(
                target=self._thread_loop, name=f"kafka-log-cleaner-thread-{i}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _thread_loop(self) -> None:
        cleaner = self._new_cleaner()
        while not self._stop.is_set():
            cleaned = False
            try:
                now = self._time.milliseconds()
                ltc = self._grab_filthiest(now)
                if ltc is not None:
                    cleaned = self._clean_or_mark(cleaner, ltc, now) is not None
                self.delete_old_segments()
            except Exception:
                logger.exception("Error in the log cleaner thread")
            if not cleaned:
                self._stop.wait(self._config.backoff_ms / 1000)

    def shutdown(self, timeout_s: float | None = 60.0) -> None:
        """Stop the threads: a cleaning in progress is aborted at its next check (its
        ``.cleaned`` files removed, the log unchanged). Idempotent."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout_s)
        self._threads.clear()

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def __enter__(self) -> LogCleaner:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()
