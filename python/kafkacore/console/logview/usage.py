"""A partition's files as they sit on disk: sizes by kind (:func:`partition_disk_usage`:
``.log``, ``.index``, ``.timeindex``, ``.txnindex``, the rest, apparent and allocated
bytes, and the ``.deleted`` files waiting out ``file.delete.delay.ms``) and its segments
(:func:`segment_infos`: base offset, next offset, size, batches, records, first/last
timestamp, the written entries of each index and of the ``.txnindex``).

Thread-safety: safe from any thread (each call opens its own descriptors).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kafkacore.console.logview.counts import segment_counts
from kafkacore.console.logview.scan import Budget
from kafkacore.console.logview.sources import PartitionSource
from kafkacore.log.files import (
    DELETED_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)
from kafkacore.log.reader import SegmentReader, written_entries

__all__ = ["DiskUsage", "SegmentInfo", "partition_disk_usage", "segment_infos"]


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


_TIME_INDEX_ENTRY = 12
_TXN_INDEX_ENTRY = 34


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
        counts = segment_counts(ref, budget)
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
