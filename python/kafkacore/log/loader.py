"""Loading a partition directory into segments (Kafka's ``LogLoader``), with the
completion of interrupted compaction swaps and the recovery of what was not flushed.

Steps of :meth:`LogLoader.load`, each a method so that a fuller loader can extend it:

1. :meth:`~LogLoader.remove_temp_files` - delete leftover ``*.deleted`` files (a
   deletion the process did not finish); delete every ``.swap`` file whose offset is >=
   the smallest ``.cleaned`` offset (part of a swap that had not finished being renamed
   from ``.cleaned``, KAFKA-6264), then every ``.cleaned`` file. Returns the remaining,
   valid, ``.swap`` files.
2. :meth:`~LogLoader.complete_swap_operations` - a valid ``.swap`` set is a compacted
   segment that was durable before the old segments were deleted. Its range is
   ``[min swap base offset, max swap next offset)``; every non-swap file named after an
   offset in that range (a compacted segment not yet deleted) is deleted, then every
   ``.swap`` file is renamed to its name without the suffix (the log and its indexes).
   A swap whose indexes did not come along is rebuilt by step 3.
3. :meth:`~LogLoader.load_segment_files` - delete orphan index files (no ``.log``), open
   every ``<offset>.log`` in ascending order; a missing index or one failing
   ``sanity_check`` is rebuilt by ``recover()`` (except in the segments step 4 recovers
   anyway). Opening maps existing indexes as they are (trimmed, for every segment that
   was rolled or closed), so the indexes of segments below the recovery point are never
   rewritten and a crash during or after the load leaves them valid.
4. :meth:`~LogLoader.recover_log` - after an unclean shutdown (``recover_from`` given:
   the recovery point from ``recovery-point-offset-checkpoint``), recover every segment
   that may hold offsets >= ``recover_from``, validating each batch (CRC, offsets); at the
   first invalid byte the segment is truncated and every later segment deleted. An
   invalid offset empties the segment. A log whose end is below the log start offset is
   emptied. A log with no segment gets one at the log start offset. A directory being
   deleted (``-delete`` suffix) is not recovered.
5. Offsets: next offset = the last segment's; recovery point = next offset after a clean
   shutdown, else min(``recover_from``, next offset) (it never runs ahead of an fsync);
   log start offset = max(checkpointed value, first segment's base offset). Every
   segment but the last is sealed (indexes trimmed: opening and recovery leave them so,
   an emptied segment's ``truncate_to`` does not). The indexes of the last, active,
   segment are grown to ``segment.index.bytes`` (``resize_indexes``: Kafka's
   ``resizeIndexes`` after ``recoverLog``): reopened or recovered, they are trimmed, and
   the first append would roll a new segment. A directory being deleted is left as is.

Progress of step 4 goes to a callback ``(segments done, segments to recover)``: the
``progress`` argument, else the one installed for the calling thread by
:func:`recovery_progress` (how :class:`~kafkacore.log.manager.LogManager` reaches the
loaders that :class:`~kafkacore.log.log.Log` creates), else log lines
``Recovering segment N/M of <partition> (P%)`` on the ``kafkacore.log`` logger.

Thread-safety: a loader is used by one thread; loaders of different directories may run
in parallel.
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafkacore.errors import CorruptIndexError, InvalidOffsetError
from kafkacore.log.checkpoints import fsync_dir
from kafkacore.log.files import (
    CLEANED_FILE_SUFFIX,
    DELETE_DIR_SUFFIX,
    DELETED_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    is_index_file,
    is_log_file,
    log_file,
    offset_from_file_name,
    offset_index_file,
    replace_suffix,
    time_index_file,
)
from kafkacore.log.scheduler import Scheduler
from kafkacore.log.segments import LogSegment, LogSegments, delete_segment_files
from kafkacore.record.layout import (
    BASE_TIMESTAMP_OFFSET,
    HEADER_SIZE_UP_TO_MAGIC,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_SIZE_BY_MAGIC,
    RECORD_OVERHEAD_V0,
)

__all__ = [
    "LoadedLog",
    "LogLoader",
    "ProgressCallback",
    "SegmentRecovered",
    "read_next_offset",
    "recovery_progress",
]

logger = logging.getLogger("kafkacore.log")

_MAX_OFFSET = 2**63 - 1
_MIN_OFFSET = -(2**63)

#: ``(segments recovered so far, segments to recover)`` during step 4 of a load.
ProgressCallback = Callable[[int, int], None]

#: ``(the segments before it, the recovered segment, the log start offset)``: told after
#: a segment's log and indexes were rebuilt; rebuilds its ``.txnindex`` with the producer
#: state (the :class:`~kafkacore.log.log.Log`'s part of Kafka's ``recoverSegment``).
SegmentRecovered = Callable[[list[LogSegment], LogSegment, int], None]

_thread_progress = threading.local()


@contextlib.contextmanager
def recovery_progress(callback: ProgressCallback | None) -> Iterator[None]:
    """Report the recovery progress of every :class:`LogLoader` created by this thread
    inside the ``with`` block to ``callback`` (``None``: the default log lines)."""
    previous: ProgressCallback | None = getattr(_thread_progress, "callback", None)
    _thread_progress.callback = callback
    try:
        yield
    finally:
        _thread_progress.callback = previous


# Kafka's FileLogInputStream: offset i64, size i32, then 4 bytes and the magic at 16.
_V2_HEADER_UP_TO_LAST_OFFSET_DELTA = BASE_TIMESTAMP_OFFSET  # through lastOffsetDelta


def read_next_offset(log_path: str, base_offset: int, index_path: str | None = None) -> int:
    """The offset after the last whole batch of the segment file ``log_path`` (Kafka's
    ``LogSegment.readNextOffset``), ``base_offset`` if it holds none.

    Batches are walked shallowly (sizes and magic, no CRC) as Kafka's
    ``FileLogInputStream`` does, from the last entry of the offset index ``index_path``
    when that entry points at the batch it names, else from the start. Used on ``.swap``
    files, which the backend's ``Segment`` does not open."""
    with open(log_path, "rb") as f:
        fd = f.fileno()
        end = os.fstat(fd).st_size
        position = 0
        if index_path is not None:
            position = _index_hint(fd, end, base_offset, index_path)
        next_offset = base_offset
        while position + HEADER_SIZE_UP_TO_MAGIC < end:
            header = os.pread(fd, _V2_HEADER_UP_TO_LAST_OFFSET_DELTA, position)
            if len(header) < HEADER_SIZE_UP_TO_MAGIC:
                break
            offset, size = struct.unpack_from(">qi", header)
            magic = header[MAGIC_OFFSET]
            if size < RECORD_OVERHEAD_V0 or position + LOG_OVERHEAD + size > end:
                break
            if magic not in MIN_SIZE_BY_MAGIC or size < MIN_SIZE_BY_MAGIC[magic]:
                break
            if magic == 2:
                if len(header) < _V2_HEADER_UP_TO_LAST_OFFSET_DELTA:
                    break
                (delta,) = struct.unpack_from(">i", header, LAST_OFFSET_DELTA_OFFSET)
                last = offset + delta
            else:
                last = offset  # a legacy wrapper carries its last inner offset
            next_offset = last + 1
            position += LOG_OVERHEAD + size
        return next_offset


def _index_hint(fd: int, end: int, base_offset: int, index_path: str) -> int:
    """The position of the last offset-index entry if the batch there ends at the offset
    the entry names (entries are ``(batch last offset, batch position)``), else 0."""
    try:
        with open(index_path, "rb") as index:
            data = index.read()
    except OSError:
        return 0
    for i in range(len(data) // 8 - 1, -1, -1):
        relative, position = struct.unpack_from(">II", data, i * 8)
        if relative == 0 and position == 0:
            continue  # preallocated, never written
        if position + _V2_HEADER_UP_TO_LAST_OFFSET_DELTA > end:
            return 0
        header = os.pread(fd, _V2_HEADER_UP_TO_LAST_OFFSET_DELTA, position)
        offset, _size = struct.unpack_from(">qi", header)
        if header[MAGIC_OFFSET] == 2:
            (delta,) = struct.unpack_from(">i", header, LAST_OFFSET_DELTA_OFFSET)
            offset += delta
        return position if offset == base_offset + relative else 0
    return 0


@dataclass
class LoadedLog:
    """What loading found: the segments and the offsets the log starts with."""

    segments: LogSegments
    log_start_offset: int
    recovery_point: int
    next_offset: int


class LogLoader:
    """Loads one partition directory (see the module docstring).

    ``open_segment(base_offset)`` opens (creating if needed) a segment with the log's
    settings; ``delete_delay_ms``/``scheduler`` are used for segments dropped during
    recovery; ``progress`` receives the progress of the recovery (see the module)."""

    def __init__(
        self,
        directory: str,
        *,
        open_segment: Callable[[int], LogSegment],
        log_start_offset: int = 0,
        recover_from: int | None = None,
        scheduler: Scheduler | None = None,
        delete_delay_ms: int = 0,
        progress: ProgressCallback | None = None,
        segment_recovered: SegmentRecovered | None = None,
    ) -> None:
        self.directory = directory
        self.segment_recovered = segment_recovered
        self.open_segment = open_segment
        self.log_start_offset_checkpoint = log_start_offset
        self.recover_from = recover_from
        self.scheduler = scheduler
        self.delete_delay_ms = delete_delay_ms
        self.progress: ProgressCallback | None = (
            progress if progress is not None else getattr(_thread_progress, "callback", None)
        )
        self.segments = LogSegments()

    @property
    def had_clean_shutdown(self) -> bool:
        return self.recover_from is None

    @property
    def is_delete_dir(self) -> bool:
        """A partition directory renamed for deletion (``<tp>.<id>-delete``)."""
        return os.path.basename(os.path.normpath(self.directory)).endswith(DELETE_DIR_SUFFIX)

    def load(self) -> LoadedLog:
        os.makedirs(self.directory, exist_ok=True)
        swap_files = self.remove_temp_files()
        self.complete_swap_operations(swap_files)
        self.load_segment_files()
        if self.is_delete_dir:
            # Kafka does not recover a log that is only waiting to be deleted
            if not self.segments:
                self.segments.add(self.open_segment(self.log_start_offset_checkpoint))
            next_offset = self.segments.active_segment.next_offset
            recovery_point = next_offset
        else:
            next_offset = self.recover_log()
            if self.had_clean_shutdown:
                recovery_point = next_offset
            else:
                assert self.recover_from is not None
                recovery_point = min(self.recover_from, next_offset)
        first = self.segments.first_segment()
        assert first is not None
        log_start_offset = max(self.log_start_offset_checkpoint, first.base_offset)
        for segment in self.segments.values()[:-1]:
            segment.files.seal()
        if not self.is_delete_dir:
            # room for the entries of the appends to come (Kafka's resizeIndexes)
            self.segments.active_segment.files.resize_indexes()
        return LoadedLog(self.segments, log_start_offset, recovery_point, next_offset)

    def _files(self) -> list[str]:
        return sorted(
            name
            for name in os.listdir(self.directory)
            if os.path.isfile(os.path.join(self.directory, name))
        )

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self._path(name))

    # -- steps 1 and 2: temporary files and interrupted swaps ----------------------------

    def remove_temp_files(self) -> list[str]:
        """Delete ``*.deleted`` files, ``.swap`` files of an unfinished swap and every
        ``.cleaned`` file (Kafka's ``removeTempFilesAndCollectSwapFiles``); returns the
        paths of the valid ``.swap`` files, in name order."""
        swap_files: list[str] = []
        cleaned_files: list[str] = []
        min_cleaned_offset = _MAX_OFFSET
        for name in self._files():
            if name.endswith(DELETED_FILE_SUFFIX):
                logger.debug("Deleting stray temporary file %s", self._path(name))
                self._delete(name)
            elif name.endswith(CLEANED_FILE_SUFFIX):
                with contextlib.suppress(ValueError):
                    min_cleaned_offset = min(min_cleaned_offset, offset_from_file_name(name))
                cleaned_files.append(name)
            elif name.endswith(SWAP_FILE_SUFFIX):
                swap_files.append(name)

        valid: list[str] = []
        for name in swap_files:
            try:
                offset = offset_from_file_name(name)
            except ValueError:
                offset = _MAX_OFFSET
            if offset >= min_cleaned_offset:
                logger.debug(
                    "Deleting invalid swap file %s minCleanedFileOffset: %d",
                    self._path(name),
                    min_cleaned_offset,
                )
                self._delete(name)
            else:
                valid.append(self._path(name))
        for name in cleaned_files:
            logger.debug("Deleting stray .clean file %s", self._path(name))
            self._delete(name)
        return valid

    def complete_swap_operations(self, swap_files: list[str]) -> None:
        """Finish the swaps whose ``.swap`` files are all there: delete the segments they
        replace, then rename every ``.swap`` file (see the module docstring, step 2)."""
        if not swap_files:
            return
        min_swap_offset = _MAX_OFFSET
        max_swap_offset = _MIN_OFFSET
        for path in swap_files:
            if not is_log_file(replace_suffix(path, SWAP_FILE_SUFFIX, "")):
                continue
            base_offset = offset_from_file_name(path)
            index_swap = offset_index_file(self.directory, base_offset, SWAP_FILE_SUFFIX)
            next_offset = read_next_offset(
                path, base_offset, index_swap if os.path.exists(index_swap) else None
            )
            logger.info(
                "Found log file %s from interrupted swap operation, which is recoverable "
                "from %s files by renaming.",
                path,
                SWAP_FILE_SUFFIX,
            )
            min_swap_offset = min(min_swap_offset, base_offset)
            max_swap_offset = max(max_swap_offset, next_offset)

        for name in self._files():
            if name.endswith(SWAP_FILE_SUFFIX):
                continue
            try:
                offset = offset_from_file_name(name)
            except ValueError:
                continue
            if min_swap_offset <= offset < max_swap_offset:
                logger.info(
                    "Deleting segment files %s that is compacted but has not been deleted yet.",
                    name,
                )
                self._delete(name)

        for name in self._files():
            if name.endswith(SWAP_FILE_SUFFIX):
                logger.info("Recovering file %s by renaming from %s files.", name, SWAP_FILE_SUFFIX)
                os.replace(self._path(name), replace_suffix(self._path(name), SWAP_FILE_SUFFIX, ""))
        fsync_dir(self.directory)

    # -- step 3: segments ----------------------------------------------------------------

    def load_segment_files(self) -> None:
        """Open the segments in ascending order, rebuilding missing or corrupt indexes."""
        bases: list[int] = []
        for name in self._files():
            path = self._path(name)
            try:
                offset = offset_from_file_name(name)
            except ValueError:
                continue
            if is_index_file(name):
                if not os.path.exists(log_file(self.directory, offset)):
                    logger.warning(
                        "Found an orphaned index file %s, with no corresponding log file.", path
                    )
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(path)
            elif name.endswith(LOG_FILE_SUFFIX) and name == os.path.basename(
                log_file(self.directory, offset)
            ):
                bases.append(offset)
        bases.sort()
        # Segments that step 4 recovers anyway are not checked here: the active segment's
        # preallocated index (zeros after its entries) fails the backend's (strict) sanity
        # check after every crash, and would be rebuilt twice.
        first_unflushed = _MAX_OFFSET
        if bases and not self.had_clean_shutdown and not self.is_delete_dir:
            assert self.recover_from is not None
            flushed = [b for b in bases if b <= self.recover_from]
            first_unflushed = flushed[-1] if flushed else bases[0]
        for base in bases:
            indexes_missing = not (
                os.path.exists(offset_index_file(self.directory, base))
                and os.path.exists(time_index_file(self.directory, base))
            )
            segment = self.open_segment(base)
            needs_recovery = indexes_missing
            if base >= first_unflushed:
                needs_recovery = False
            elif indexes_missing:
                logger.error(
                    "Could not find offset index file corresponding to log file %s, "
                    "recovering segment and rebuilding index files...",
                    segment.log_path,
                )
            else:
                try:
                    segment.files.sanity_check()
                    segment.txn_index.sanity_check()
                except CorruptIndexError as exc:
                    logger.warning(
                        "Found a corrupted index file corresponding to log file %s due to %s, "
                        "recovering segment and rebuilding index files...",
                        segment.log_path,
                        exc,
                    )
                    needs_recovery = True
            if needs_recovery:
                self.recover_segment(segment)
            self.segments.add(segment)

    def recover_segment(self, segment: LogSegment) -> int:
        """Rebuild the segment's indexes from its log, truncating at the first invalid
        byte, then its ``.txnindex`` (``segment_recovered``; without it the entries past
        the segment's new end are cut); returns the bytes truncated."""
        truncated = segment.files.recover()
        if self.segment_recovered is not None:
            previous = self.segments.values(None, segment.base_offset)
            self.segment_recovered(previous, segment, self.log_start_offset_checkpoint)
        else:
            segment.txn_index.truncate_to(segment.next_offset)
        return truncated

    # -- step 4: recovery ----------------------------------------------------------------

    def _report(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)
            return
        name = os.path.basename(os.path.normpath(self.directory))
        if done < total:
            logger.info(
                "Recovering segment %d/%d of %s (%d%%)", done + 1, total, name, done * 100 // total
            )
        else:
            logger.info("Recovered %d segments of %s (100%%)", total, name)

    def recover_log(self) -> int:
        """Recover unflushed segments (unclean shutdown only); returns the next offset."""
        if not self.had_clean_shutdown:
            assert self.recover_from is not None
            unflushed = self.segments.values(self.recover_from, _MAX_OFFSET)
            total = len(unflushed)
            for i, segment in enumerate(unflushed):
                self._report(i, total)
                logger.debug(
                    "Recovering unflushed segment %d. %d/%d recovered for %s.",
                    segment.base_offset,
                    i,
                    total,
                    self.directory,
                )
                try:
                    truncated = self.recover_segment(segment)
                except InvalidOffsetError:
                    logger.warning(
                        "Found invalid offset during recovery. Deleting the corrupt segment "
                        "and creating an empty one with starting offset %d",
                        segment.base_offset,
                    )
                    truncated = segment.files.truncate_to(segment.base_offset)
                    segment.txn_index.reset()
                if truncated > 0:
                    logger.warning(
                        "Corruption found in segment %d, truncating to offset %d",
                        segment.base_offset,
                        segment.next_offset,
                    )
                    self._remove_and_delete(unflushed[i + 1 :])
                    break
            if total:
                self._report(total, total)

        last = self.segments.last_segment()
        if last is not None and last.next_offset < self.log_start_offset_checkpoint:
            logger.warning(
                "Deleting all segments because logEndOffset (%d) is smaller than "
                "logStartOffset %d. This could happen if segment files were deleted from "
                "the file system.",
                last.next_offset,
                self.log_start_offset_checkpoint,
            )
            self._remove_and_delete(self.segments.values())
        if not self.segments:
            self.segments.add(self.open_segment(self.log_start_offset_checkpoint))
        return self.segments.active_segment.next_offset

    def _remove_and_delete(self, segments: list[LogSegment]) -> None:
        if not segments:
            return
        logger.info(
            "Deleting segments as part of log recovery: %s",
            ", ".join(repr(s) for s in segments),
        )
        for segment in segments:
            self.segments.remove(segment.base_offset)
        delete_segment_files(
            segments,
            async_delete=True,
            scheduler=self.scheduler,
            delay_ms=self.delete_delay_ms,
        )
