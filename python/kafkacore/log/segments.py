"""Segments of one partition: :class:`LogSegment` (a backend ``Segment`` plus what Kafka's
``LogSegment`` keeps in memory: creation time, roll jitter, the roll rule) and
:class:`LogSegments` (Kafka's ``LogSegments``: segments sorted by base offset, with
floor/higher lookups by binary search).

Deleting segments (Kafka's ``LocalLog.deleteSegmentFiles``): :func:`delete_segment_files`
closes each segment, renames its files to ``<name>.deleted`` and removes them
``file.delete.delay.ms`` later on the scheduler, so that a reader holding a file region
(:class:`~kafkacore.log.log.FetchDataInfo`) can still read it in the meantime.

Two functions work on a segment's files by path, with descriptors of their own, and may
run on any thread without the log's lock: :func:`fsync_segment_files` (the log's flush)
and :func:`read_region` (a fetch's bytes, following the ``.deleted`` rename).

Thread-safety: the classes here have none; :class:`~kafkacore.log.log.Log` serializes every
call with its lock. The two functions above are thread-safe.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from kafkacore.errors import StorageIOError
from kafkacore.log.files import (
    DELETED_FILE_SUFFIX,
    SEGMENT_FILE_SUFFIXES,
    filename_prefix_from_offset,
    transaction_index_file,
)
from kafkacore.log.scheduler import Scheduler
from kafkacore.log.txn_index import TransactionIndex

if TYPE_CHECKING:
    from kafkacore._backend import Backend, SegmentFiles

__all__ = [
    "I32_MAX",
    "LogSegment",
    "LogSegments",
    "delete_segment_files",
    "fsync_segment_files",
    "read_region",
    "segment_file_paths",
]

logger = logging.getLogger("kafkacore.log")

I32_MAX = 2**31 - 1


class LogSegment:
    """One segment: ``files``, the backend ``Segment`` (``.log`` + ``.index`` +
    ``.timeindex``), ``txn_index``, its ``.txnindex`` (the transactions aborted by a
    marker in the segment; Kafka's ``TransactionIndex``), and Kafka's in-memory facts
    about it.

    ``created_ms`` is when it was opened (or emptied by truncation): ``segment.ms`` counts
    from it while the segment holds no timestamped batch. ``roll_jitter_ms`` is drawn once
    per segment from ``segment.jitter.ms``.
    """

    __slots__ = ("base_offset", "created_ms", "directory", "files", "roll_jitter_ms", "txn_index")

    def __init__(
        self, files: SegmentFiles, directory: str, *, created_ms: int, roll_jitter_ms: int = 0
    ) -> None:
        self.files = files
        self.base_offset: int = files.base_offset  # fixed for the segment's life
        self.directory = directory
        self.created_ms = created_ms
        self.roll_jitter_ms = roll_jitter_ms
        self.txn_index = TransactionIndex(
            self.base_offset, transaction_index_file(directory, self.base_offset)
        )

    @classmethod
    def open(
        cls,
        backend: Backend,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_size: int,
        created_ms: int,
        roll_jitter_ms: int = 0,
    ) -> LogSegment:
        """Open (creating missing files) the segment at ``base_offset`` in ``directory``."""
        segment = backend.Segment(
            directory,
            base_offset,
            index_interval_bytes=index_interval_bytes,
            max_index_size=max_index_size,
        )
        return cls(segment, directory, created_ms=created_ms, roll_jitter_ms=roll_jitter_ms)

    @property
    def segment(self) -> SegmentFiles:
        """The former name of :attr:`files` (``segment.segment`` read badly); kept while
        callers move over."""
        return self.files

    # -- facts ---------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self.files.size

    @property
    def next_offset(self) -> int:
        return self.files.next_offset

    @property
    def max_timestamp(self) -> int:
        return self.files.max_timestamp

    @property
    def log_path(self) -> str:
        return self.files.log_path

    def file_paths(self, suffix: str = "") -> list[str]:
        """The segment's ``.log``, ``.index``, ``.timeindex`` and ``.txnindex`` paths
        (with ``suffix`` appended), whether they exist or not."""
        return segment_file_paths(self.directory, self.base_offset, suffix)

    def last_modified_ms(self) -> int:
        """The ``.log`` file's modification time in ms (0 if it is gone)."""
        try:
            return os.stat(self.log_path).st_mtime_ns // 1_000_000
        except FileNotFoundError:
            return 0

    def largest_timestamp(self) -> int:
        """Kafka's ``largestTimestamp``: the largest batch timestamp (from the time index's
        last entry after a reopen), else the file's modification time."""
        max_timestamp = self.files.max_timestamp
        return max_timestamp if max_timestamp >= 0 else self.last_modified_ms()

    # -- the roll rule (Kafka's LogSegment.shouldRoll) -----------------------------------

    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        """How long this segment has waited to roll: by record time when its first batch
        has a timestamp (``message_timestamp`` - that timestamp), else by wall clock since
        it was created."""
        first = self.files.rolling_based_timestamp
        if first >= 0:
            return message_timestamp - first
        return now_ms - self.created_ms

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        """``offset`` fits the 4-byte relative offset of this segment's index."""
        return 0 <= offset - self.base_offset <= I32_MAX

    def should_roll(
        self,
        *,
        max_segment_ms: int,
        max_segment_bytes: int,
        max_timestamp_in_messages: int,
        max_offset_in_messages: int,
        messages_size: int,
        now_ms: int,
    ) -> bool:
        """Kafka's four conditions: the append would overflow ``segment.bytes``; the
        segment is non-empty and older than ``segment.ms`` minus its jitter; an index is
        full; the last offset would not fit the relative offset. (Asked on every append:
        each backend property is read once, the cheap tests first.)"""
        files = self.files
        size = files.size
        if size > max_segment_bytes - messages_size or files.index_is_full:
            return True
        if not 0 <= max_offset_in_messages - self.base_offset <= I32_MAX:
            return True
        if size == 0:
            return False
        first = files.rolling_based_timestamp
        waited = max_timestamp_in_messages - first if first >= 0 else now_ms - self.created_ms
        return waited > max_segment_ms - self.roll_jitter_ms

    def truncate_to(self, offset: int, now_ms: int) -> int:
        """Truncate at the batch holding ``offset`` (the ``.txnindex`` loses the entries
        of markers at or after it); an emptied segment counts as new."""
        truncated = self.files.truncate_to(offset)
        self.txn_index.truncate_to(self.files.next_offset)
        if self.files.size == 0:
            self.created_ms = now_ms
        return truncated

    def __repr__(self) -> str:
        return (
            f"LogSegment(base_offset={self.base_offset}, size={self.size}, "
            f"next_offset={self.next_offset})"
        )


class LogSegments:
    """Segments keyed and sorted by base offset; lookups by binary search (O(log n)).

    Kafka keeps them in a ``ConcurrentSkipListMap``; here a sorted list of base offsets
    plus a dict, mutated only under the log's lock."""

    def __init__(self) -> None:
        self._offsets: list[int] = []
        self._segments: dict[int, LogSegment] = {}

    def __len__(self) -> int:
        return len(self._offsets)

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self.values())

    def __contains__(self, base_offset: object) -> bool:
        return base_offset in self._segments

    def add(self, segment: LogSegment) -> LogSegment | None:
        """Add (or replace) the segment at its base offset; returns the replaced one."""
        base = segment.base_offset
        previous = self._segments.get(base)
        if previous is None:
            bisect.insort(self._offsets, base)
        self._segments[base] = segment
        return previous

    def remove(self, base_offset: int) -> LogSegment | None:
        segment = self._segments.pop(base_offset, None)
        if segment is not None:
            del self._offsets[bisect.bisect_left(self._offsets, base_offset)]
        return segment

    def clear(self) -> None:
        self._offsets.clear()
        self._segments.clear()

    def get(self, base_offset: int) -> LogSegment | None:
        return self._segments.get(base_offset)

    def base_offsets(self) -> list[int]:
        return list(self._offsets)

    def values(
        self, from_offset: int | None = None, to_offset: int | None = None
    ) -> list[LogSegment]:
        """All segments, ascending; with bounds, those that may hold offsets in
        ``[from_offset, to_offset)`` (Kafka's ``values(from, to)``: from the floor segment
        of ``from_offset`` to the last segment whose base is below ``to_offset``)."""
        if from_offset is None and to_offset is None:
            return [self._segments[o] for o in self._offsets]
        lo = 0
        hi = len(self._offsets)
        if from_offset is not None and to_offset is not None:
            if from_offset == to_offset:
                return []
            if to_offset < from_offset:
                raise ValueError(
                    f"Invalid log segment range: requested segments from offset {from_offset} "
                    f"which is greater than limit offset {to_offset}"
                )
        if from_offset is not None:
            lo = max(bisect.bisect_right(self._offsets, from_offset) - 1, 0)
        if to_offset is not None:
            hi = bisect.bisect_left(self._offsets, to_offset)
        return [self._segments[o] for o in self._offsets[lo:hi]]

    def floor_segment(self, offset: int) -> LogSegment | None:
        """The segment with the largest base offset <= ``offset``."""
        i = bisect.bisect_right(self._offsets, offset)
        return self._segments[self._offsets[i - 1]] if i > 0 else None

    def lower_segment(self, offset: int) -> LogSegment | None:
        """The segment with the largest base offset < ``offset``."""
        i = bisect.bisect_left(self._offsets, offset)
        return self._segments[self._offsets[i - 1]] if i > 0 else None

    def higher_segment(self, offset: int) -> LogSegment | None:
        """The segment with the smallest base offset > ``offset``."""
        i = bisect.bisect_right(self._offsets, offset)
        return self._segments[self._offsets[i]] if i < len(self._offsets) else None

    def higher_segments(self, offset: int) -> list[LogSegment]:
        """Every segment with base offset > ``offset``, ascending."""
        i = bisect.bisect_right(self._offsets, offset)
        return [self._segments[o] for o in self._offsets[i:]]

    def first_segment(self) -> LogSegment | None:
        return self._segments[self._offsets[0]] if self._offsets else None

    def last_segment(self) -> LogSegment | None:
        return self._segments[self._offsets[-1]] if self._offsets else None

    @property
    def active_segment(self) -> LogSegment:
        """The last segment, which takes every append."""
        if not self._offsets:
            raise LookupError("the log has no segment")
        return self._segments[self._offsets[-1]]

    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._segments.values())

    def close(self) -> None:
        for segment in self.values():
            segment.files.close()


def segment_file_paths(directory: str, base_offset: int, suffix: str = "") -> list[str]:
    """The ``.log``, ``.index``, ``.timeindex`` and ``.txnindex`` paths of the segment at
    ``base_offset`` in ``directory``, with ``suffix`` appended."""
    prefix = os.path.join(directory, filename_prefix_from_offset(base_offset))
    return [prefix + kind + suffix for kind in SEGMENT_FILE_SUFFIXES]


def fsync_segment_files(paths: Sequence[str]) -> None:
    """fsync each existing file of ``paths`` (a segment's :meth:`LogSegment.file_paths`)
    through a descriptor of its own. On Linux an fsync writes back the file's dirty pages
    whichever descriptor or shared mapping dirtied them, so this is the backend
    ``Segment.flush`` without touching the ``Segment`` object (not thread-safe: a native
    one refuses a call while an append runs). A file gone meanwhile is skipped."""
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        except OSError as exc:
            raise StorageIOError(exc.errno or 0, f"cannot fsync: {exc.strerror}", path) from exc
        finally:
            os.close(fd)


def read_region(path: str, position: int, length: int) -> bytes:
    """``length`` bytes of the segment file ``path`` from ``position`` (fewer if the file
    is shorter: the log was truncated since the region was handed out). When the segment
    was deleted since, its ``.deleted`` file (kept ``file.delete.delay.ms``) is read;
    ``StorageIOError`` (ENOENT) when both are gone. Any thread, no lock needed."""
    if length <= 0:
        return b""
    for candidate in (path, path + DELETED_FILE_SUFFIX):
        try:
            fd = os.open(candidate, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            parts: list[bytes] = []
            remaining = length
            while remaining > 0:
                chunk = os.pread(fd, remaining, position)
                if not chunk:
                    break
                parts.append(chunk)
                position += len(chunk)
                remaining -= len(chunk)
            return b"".join(parts)
        finally:
            os.close(fd)
    raise StorageIOError(2, "segment file is gone", path)


def _remove_files(paths: Sequence[str]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def delete_segment_files(
    segments: Sequence[LogSegment],
    *,
    async_delete: bool,
    scheduler: Scheduler | None,
    delay_ms: int,
) -> None:
    """Close each segment and rename its files to ``<name>.deleted``; then remove those
    files, ``delay_ms`` later on ``scheduler`` when ``async_delete``, else now.

    The caller has already removed the segments from its :class:`LogSegments`. A file
    renamed and not yet removed when the process dies is removed by the next load."""
    renamed: list[str] = []
    for log_segment in segments:
        log_segment.files.close()
        for path in log_segment.file_paths():
            target = path + DELETED_FILE_SUFFIX
            try:
                os.replace(path, target)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StorageIOError(
                    exc.errno or 0, f"cannot rename for deletion: {exc.strerror}", path
                ) from exc
            renamed.append(target)
    if not renamed:
        return

    def remove() -> None:
        logger.info("Deleting segment files %s", renamed)
        _remove_files(renamed)

    if async_delete and scheduler is not None:
        scheduler.schedule_once("delete-file", remove, delay_ms)
    else:
        remove()
