"""Exact facts about a partition's log, for the console's Messages and Storage views:
pure functions and small caches over one partition's files, from either source
(:mod:`~kafkacore.console.logview.sources`: the broker's own ``Log`` beside the broker,
or a log directory read read-only).

* :mod:`~kafkacore.console.logview.scan` - budgets (:class:`Budget`,
  :class:`ScanCancelled`) and the worker process the whole-segment scans run in;
* :mod:`~kafkacore.console.logview.sources` - :class:`LogPartition`,
  :class:`DirectoryPartition` (:class:`PartitionSource`);
* :mod:`~kafkacore.console.logview.counts` - exact record counts from the batch headers
  (:func:`partition_counts`), the aborted transactions' records included;
* :mod:`~kafkacore.console.logview.usage` - sizes on disk by kind
  (:func:`partition_disk_usage`) and the segments (:func:`segment_infos`);
* :mod:`~kafkacore.console.logview.records` - reads by offset and timestamp, newest-N,
  filters and rendering;
* :mod:`~kafkacore.console.logview.keyindex` - the complete key search (:class:`KeyIndex`);
* :mod:`~kafkacore.console.logview.reports` - why data is not deleted or compacted yet
  (asking :mod:`kafkacore.log.retention` and the cleaner) and dump-log of one file.

Protecting the broker: every scan takes a :class:`Budget` and runs, a segment chunk at a
time, in a ``nice`` 19 worker process (see :mod:`~kafkacore.console.logview.scan`).

Thread-safety: the functions are safe from any thread (each opens its own descriptors);
:class:`KeyIndex` and the segment summary cache lock themselves.
"""

from __future__ import annotations

from kafkacore.console.logview.counts import PartitionCounts, partition_counts, topic_counts
from kafkacore.console.logview.keyindex import KeyIndex, KeySearchResult
from kafkacore.console.logview.records import (
    DecodeMode,
    ReadResult,
    RecordFilter,
    newest_records,
    offset_for_timestamp,
    read_records,
    render_bytes,
)
from kafkacore.console.logview.reports import (
    CompactionReport,
    RetentionReport,
    SegmentRetention,
    compaction_report,
    dump_segment,
    retention_report,
)
from kafkacore.console.logview.scan import Budget, ScanCancelled, scan_pool, shutdown_scan_pool
from kafkacore.console.logview.sources import (
    DirectoryPartition,
    LogPartition,
    PartitionOffsets,
    PartitionSource,
    SegmentRef,
)
from kafkacore.console.logview.usage import (
    DiskUsage,
    SegmentInfo,
    partition_disk_usage,
    segment_infos,
)

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
