"""Where the console reads a partition from (:class:`PartitionSource`):

* :class:`LogPartition` - the broker's own :class:`~kafkacore.log.Log` (beside the
  broker): records are read through :meth:`Log.read <kafkacore.log.Log.read>` (the offset
  index's lookup) and timestamps found by :meth:`Log.offset_for_timestamp
  <kafkacore.log.Log.offset_for_timestamp>` (the time index's), bounded by the high
  watermark the replica gives;
* :class:`DirectoryPartition` - a log directory read read-only, as the Spark source's
  ``kafkacore.path`` mode reads it (:mod:`kafkacore.log.reader`: ``pread`` only, nothing
  written).

:func:`read_files` reads whole batches straight from the segment files (what the worker
process does, whatever the source).

Thread-safety: safe from any thread (each read opens its own descriptors; a ``Log`` locks
itself).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kafkacore.errors import OffsetOutOfRangeError
from kafkacore.log.files import (
    LOG_FILE_SUFFIX,
    TopicPartition,
    filename_prefix_from_offset,
    log_dir_name,
)
from kafkacore.log.reader import LogDirectory, SegmentReader
from kafkacore.log.txn_index import AbortedTxn

if TYPE_CHECKING:
    from kafkacore.log import Log

__all__ = [
    "DirectoryPartition",
    "LogPartition",
    "PartitionOffsets",
    "PartitionSource",
    "SegmentRef",
    "read_files",
]


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
        return read_files(self.segments(), offset, max_bytes, upper_bound)

    def offset_for_timestamp(self, timestamp: int) -> int | None:
        return self.log_dir.offset_for_timestamp(self._tp, timestamp)

    def aborted_transactions(self, start: int, upper_bound: int) -> list[AbortedTxn]:
        return self.log_dir.aborted_transactions(self._tp, start, upper_bound)


def read_files(refs: Sequence[SegmentRef], offset: int, max_bytes: int, upper_bound: int) -> bytes:
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
