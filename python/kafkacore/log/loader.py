"""Loading a partition directory into segments (the part of Kafka's ``LogLoader`` this
layer owns), with recovery of what was not flushed.

Steps of :meth:`LogLoader.load`, each a method so that a fuller loader can extend it:

1. :meth:`~LogLoader.remove_temp_files` - delete leftover ``*.deleted`` files.
   (Completing or discarding interrupted compaction swaps, ``.cleaned``/``.swap``, is the
   cleaner's loader and is not done here: such files are left untouched.)
2. :meth:`~LogLoader.load_segment_files` - delete orphan index files (no ``.log``), open
   every ``<offset>.log`` in ascending order; a missing index or one failing
   ``sanity_check`` is rebuilt by ``recover()``.
3. :meth:`~LogLoader.recover_log` - after an unclean shutdown (``recover_from`` given:
   the recovery point from ``recovery-point-offset-checkpoint``), recover every segment
   that may hold offsets >= ``recover_from``, validating each batch; at the first
   invalid byte the segment is truncated and every later segment deleted. A log whose
   end is below the log start offset is emptied. A log with no segment gets one at the
   log start offset.
4. Offsets: next offset = the last segment's; recovery point = next offset after a clean
   shutdown, else min(``recover_from``, next offset) (it never runs ahead of an fsync);
   log start offset = max(checkpointed value, first segment's base offset). Every
   segment but the last is sealed (indexes trimmed).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from kafkacore.errors import CorruptIndexError, InvalidOffsetError
from kafkacore.log.files import (
    DELETED_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    is_index_file,
    log_file,
    offset_from_file_name,
    offset_index_file,
    time_index_file,
)
from kafkacore.log.scheduler import Scheduler
from kafkacore.log.segments import LogSegment, LogSegments, delete_segment_files

__all__ = ["LoadedLog", "LogLoader"]

logger = logging.getLogger("kafkacore.log")

_MAX_OFFSET = 2**63 - 1


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
    recovery."""

    def __init__(
        self,
        directory: str,
        *,
        open_segment: Callable[[int], LogSegment],
        log_start_offset: int = 0,
        recover_from: int | None = None,
        scheduler: Scheduler | None = None,
        delete_delay_ms: int = 0,
    ) -> None:
        self.directory = directory
        self.open_segment = open_segment
        self.log_start_offset_checkpoint = log_start_offset
        self.recover_from = recover_from
        self.scheduler = scheduler
        self.delete_delay_ms = delete_delay_ms
        self.segments = LogSegments()

    @property
    def had_clean_shutdown(self) -> bool:
        return self.recover_from is None

    def load(self) -> LoadedLog:
        os.makedirs(self.directory, exist_ok=True)
        self.remove_temp_files()
        self.load_segment_files()
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
            segment.segment.seal()
        return LoadedLog(self.segments, log_start_offset, recovery_point, next_offset)

    def _files(self) -> list[str]:
        return sorted(
            name
            for name in os.listdir(self.directory)
            if os.path.isfile(os.path.join(self.directory, name))
        )

    def remove_temp_files(self) -> None:
        """Delete ``*.deleted`` files left by a deletion the process did not finish."""
        for name in self._files():
            if name.endswith(DELETED_FILE_SUFFIX):
                logger.debug("Deleting stray temporary file %s", name)
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(self.directory, name))

    def load_segment_files(self) -> None:
        """Open the segments in ascending order, rebuilding missing or corrupt indexes."""
        bases: list[int] = []
        for name in self._files():
            path = os.path.join(self.directory, name)
            try:
                offset = offset_from_file_name(name)
            except ValueError:
                continue
            if is_index_file(name):
                if not os.path.exists(log_file(self.directory, offset)):
                    logger.warning("Found an orphaned index file %s, with no log file.", path)
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(path)
            elif name.endswith(LOG_FILE_SUFFIX) and name == os.path.basename(
                log_file(self.directory, offset)
            ):
                bases.append(offset)
        for base in sorted(bases):
            indexes_missing = not (
                os.path.exists(offset_index_file(self.directory, base))
                and os.path.exists(time_index_file(self.directory, base))
            )
            segment = self.open_segment(base)
            needs_recovery = indexes_missing
            if not needs_recovery:
                try:
                    segment.segment.sanity_check()
                except CorruptIndexError as exc:
                    logger.warning(
                        "Found a corrupted index file for %s (%s), rebuilding index files...",
                        segment.log_path,
                        exc,
                    )
                    needs_recovery = True
            if needs_recovery:
                self.recover_segment(segment)
            self.segments.add(segment)

    def recover_segment(self, segment: LogSegment) -> int:
        """Rebuild the segment's indexes from its log, truncating at the first invalid
        byte; returns the bytes truncated."""
        return segment.segment.recover()

    def recover_log(self) -> int:
        """Recover unflushed segments (unclean shutdown only); returns the next offset."""
        if not self.had_clean_shutdown:
            assert self.recover_from is not None
            unflushed = self.segments.values(self.recover_from, _MAX_OFFSET)
            for i, segment in enumerate(unflushed):
                logger.info("Recovering unflushed segment %d", segment.base_offset)
                try:
                    truncated = self.recover_segment(segment)
                except InvalidOffsetError:
                    logger.warning(
                        "Found invalid offset during recovery. Deleting the corrupt segment "
                        "and creating an empty one with starting offset %d",
                        segment.base_offset,
                    )
                    truncated = segment.segment.truncate_to(segment.base_offset)
                if truncated > 0:
                    logger.warning(
                        "Corruption found in segment %d, truncating to offset %d",
                        segment.base_offset,
                        segment.next_offset,
                    )
                    self._remove_and_delete(unflushed[i + 1 :])
                    break

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
        for segment in segments:
            self.segments.remove(segment.base_offset)
        delete_segment_files(
            segments,
            async_delete=True,
            scheduler=self.scheduler,
            delay_ms=self.delete_delay_ms,
        )
