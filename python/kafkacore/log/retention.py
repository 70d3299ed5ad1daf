"""Which segments the ``delete`` cleanup policy removes (Kafka's
``UnifiedLog.deleteOldSegments`` and its three predicates).

A predicate looks at a segment and the one after it (``None`` for the last). Deletion
walks the segments from the oldest and stops at the first that is not deletable, so only
a prefix of the log is ever deleted. A segment is deletable only if

* every offset in it is below the high watermark (its upper bound - the next segment's
  base offset, or the log end offset for the last segment - is <= the high watermark),
  so that the log start offset never passes the high watermark;
* it is not the last segment while empty; and
* the predicate holds:

  - :func:`retention_ms_breached`: ``now - largest timestamp > retention.ms``, the largest
    timestamp being the segment's max batch timestamp (the time index's last entry after a
    reopen), else the ``.log`` file's modification time;
  - :func:`retention_size_breached`: while the log is larger than ``retention.bytes``,
    oldest segments go as long as removing each still leaves at least
    ``retention.bytes``;
  - :func:`log_start_offset_breached`: the next segment starts at or below the log start
    offset (``delete_records_before`` moved it past this whole segment).

When every segment is deletable the log first rolls a new empty active segment (a log
always has one), then deletes the others; see :meth:`kafkacore.log.Log.delete_old_segments`.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkacore.log.segments import LogSegment, LogSegments

__all__ = [
    "SegmentPredicate",
    "deletable_segments",
    "log_start_offset_breached",
    "retention_ms_breached",
    "retention_size_breached",
    "tiered_only",
]

SegmentPredicate = Callable[[LogSegment, "LogSegment | None"], bool]


def retention_ms_breached(retention_ms: int, now_ms: int) -> SegmentPredicate | None:
    """Segments older than ``retention.ms``; ``None`` when retention by time is off (< 0)."""
    if retention_ms < 0:
        return None

    def should_delete(segment: LogSegment, _next: LogSegment | None) -> bool:
        return now_ms - segment.largest_timestamp() > retention_ms

    return should_delete


def retention_size_breached(retention_bytes: int, log_size: int) -> SegmentPredicate | None:
    """Oldest segments beyond ``retention.bytes``; ``None`` when off (< 0) or not breached."""
    if retention_bytes < 0 or log_size < retention_bytes:
        return None
    diff = log_size - retention_bytes

    def should_delete(segment: LogSegment, _next: LogSegment | None) -> bool:
        nonlocal diff
        size = segment.size
        if diff - size >= 0:
            diff -= size
            return True
        return False

    return should_delete


def log_start_offset_breached(log_start_offset: int) -> SegmentPredicate:
    """Segments wholly below the log start offset."""

    def should_delete(_segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return next_segment is not None and next_segment.base_offset <= log_start_offset

    return should_delete


def tiered_only(predicate: SegmentPredicate, highest_tiered_offset: int) -> SegmentPredicate:
    """``predicate``, for a log with tiered storage, restricted to segments already copied
    to remote storage (their next segment starts at most one past the highest tiered
    offset: Kafka's ``isSegmentTieredToRemoteStorage``)."""

    def should_delete(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return (
            next_segment is not None
            and next_segment.base_offset - 1 <= highest_tiered_offset
            and predicate(segment, next_segment)
        )

    return should_delete


def deletable_segments(
    segments: LogSegments,
    predicate: SegmentPredicate,
    *,
    high_watermark: int,
    log_end_offset: int,
) -> list[LogSegment]:
    """The oldest segments, in order, for which ``predicate`` holds (see the module rules)."""
    values = segments.values()
    deletable: list[LogSegment] = []
    for i, segment in enumerate(values):
        next_segment = values[i + 1] if i + 1 < len(values) else None
        is_last_and_empty = next_segment is None and segment.size == 0
        upper_bound = next_segment.base_offset if next_segment is not None else log_end_offset
        if (
            high_watermark >= upper_bound
            and predicate(segment, next_segment)
            and not is_last_and_empty
        ):
            deletable.append(segment)
        else:
            break
    return deletable
