"""Why a partition's data is still on disk, and why it is not compacted yet, explained with
the log layer's own rules: :func:`retention_report` runs the ``delete`` policy's
predicates of :mod:`kafkacore.log.retention` in the order ``Log.delete_old_segments``
applies them (Kafka's ``deleteOldSegments``), so the segments it calls deletable are the
ones the next retention check deletes; :func:`compaction_report` asks the cleaner's
``cleanable_offsets``, ``max_compaction_delay`` and ``LogToClean`` (Kafka's
``LogCleanerManager``). :func:`dump_segment` is ``kafkacore dump-log`` of one file.

Thread-safety: safe from any thread (the reports read a ``Log``, which locks itself).
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkacore.log.files import (
    DELETED_FILE_SUFFIX,
    TopicPartition,
)
from kafkacore.log.retention import (
    SegmentPredicate,
    deletable_segments,
    log_start_offset_breached,
    retention_ms_breached,
    retention_size_breached,
)
from kafkacore.log.segments import LogSegment, LogSegments

if TYPE_CHECKING:
    from kafkacore.log import Log
    from kafkacore.log.cleaner import LogCleaner

__all__ = [
    "CompactionReport",
    "RetentionReport",
    "SegmentRetention",
    "compaction_report",
    "dump_segment",
    "retention_deletable",
    "retention_report",
]


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


def retention_deletable(
    log: Log, high_watermark: int, now_ms: int, segments: Sequence[LogSegment]
) -> list[LogSegment]:
    """The segments the next retention check deletes: ``Log.delete_old_segments``' passes
    with the predicates of :mod:`kafkacore.log.retention`, in its order (the log start
    offset, then with the ``delete`` policy ``retention.bytes`` over what is left, then
    ``retention.ms``), each through ``deletable_segments`` - on a copy of the segment list,
    so nothing is deleted."""
    config = log.config
    remaining = LogSegments()
    for segment in segments:
        remaining.add(segment)

    def take(predicate: SegmentPredicate | None) -> list[LogSegment]:
        if predicate is None:
            return []
        gone = deletable_segments(
            remaining, predicate, high_watermark=high_watermark, log_end_offset=log.log_end_offset
        )
        for segment in gone:
            remaining.remove(segment.base_offset)
        return gone

    deleted = take(log_start_offset_breached(log.log_start_offset))
    if config.delete:
        deleted += take(retention_size_breached(config.retention_bytes, remaining.size_in_bytes()))
        deleted += take(retention_ms_breached(config.retention_ms, now_ms))
    return deleted


def _kept_reasons(
    log: Log,
    segment: LogSegment,
    next_segment: LogSegment | None,
    hw: int,
    now: int,
    size_left: int,
) -> list[str]:
    """Why ``segment``, which the next retention check keeps, stays: the high watermark,
    an empty active segment, or which of the ``delete`` policy's predicates does not hold
    for it (``size_left``: the log's size once the deletable segments are gone)."""
    config = log.config
    upper = next_segment.base_offset if next_segment is not None else log.log_end_offset
    reasons: list[str] = []
    if hw < upper:
        reasons.append(f"holds offsets at or above the high watermark {hw}")
    if next_segment is None and segment.size == 0:
        reasons.append("the active segment is empty (a log always keeps one)")
    if log_start_offset_breached(log.log_start_offset)(segment, next_segment):
        return reasons
    by_time = retention_ms_breached(config.retention_ms, now)
    by_size = retention_size_breached(config.retention_bytes, size_left)
    policy = ",".join(p for p, on in (("delete", config.delete), ("compact", config.compact)) if on)
    if not config.delete:
        reasons.append(f"cleanup.policy={policy}: retention by time and size is off")
    elif not (by_time is not None and by_time(segment, next_segment)) and not (
        by_size is not None and by_size(segment, next_segment)
    ):
        largest = segment.largest_timestamp()
        if config.retention_ms < 0:
            why = "retention.ms=-1"
        else:
            why = (
                f"its largest timestamp {largest} is newer than retention.ms "
                f"({config.retention_ms} ms): deletable after {largest + config.retention_ms}"
            )
        if config.retention_bytes >= 0:
            why += (
                f"; the log ({size_left} bytes) is within "
                f"retention.bytes={config.retention_bytes} without it"
            )
        reasons.append(why)
    return reasons


def _active_roll(log: Log, active: LogSegment) -> tuple[int | None, str]:
    """When the active segment rolls (``segment.ms`` from its first batch's timestamp,
    minus its jitter; ``segment.bytes``), and why."""
    config = log.config
    first = active.files.rolling_based_timestamp
    if active.size == 0:
        return None, "the active segment is empty: it rolls with its first batch's needs"
    if first >= 0:
        roll_due = first + config.max_segment_ms() - active.roll_jitter_ms
        return roll_due, (
            f"segment.ms={config.max_segment_ms()}: rolls at the first append after "
            f"{roll_due} (its first batch's timestamp {first} + segment.ms - jitter "
            f"{active.roll_jitter_ms}), or when it reaches segment.bytes={config.segment_bytes} "
            f"(now {active.size})"
        )
    roll_due = active.created_ms + config.max_segment_ms() - active.roll_jitter_ms
    return roll_due, (
        f"no timestamped batch: segment.ms counts from its creation at {active.created_ms}"
    )


def _retention_summary(rows: list[SegmentRetention]) -> str:
    deletable = [r for r in rows if not r.reasons]
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
    return summary


def retention_report(
    log: Log,
    *,
    high_watermark: int | None = None,
    now_ms: int | None = None,
    retention_check_interval_ms: int | None = None,
) -> RetentionReport:
    """Per segment, whether the ``delete`` policy removes it at the next retention check
    and, if not, why: :func:`retention_deletable` asks :mod:`kafkacore.log.retention` (only a
    prefix of the log goes, only below the high watermark, by the log start offset,
    ``retention.bytes`` - oldest first while the rest still holds ``retention.bytes`` - or
    ``retention.ms`` - largest timestamp older than it; an empty active segment stays;
    when every segment goes the log first rolls a new one). Also when the active segment
    rolls (``segment.ms`` from its first batch's timestamp, minus its jitter;
    ``segment.bytes``)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    config = log.config
    segments: list[LogSegment] = log.segments
    end = log.log_end_offset
    hw = end if high_watermark is None else min(high_watermark, end)
    size = sum(s.size for s in segments)
    deleted = {s.base_offset for s in retention_deletable(log, hw, now, segments)}
    size_left = size - sum(s.size for s in segments if s.base_offset in deleted)
    rows: list[SegmentRetention] = []
    for i, seg in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        reasons: list[str] = []
        if seg.base_offset not in deleted:
            reasons = _kept_reasons(log, seg, nxt, hw, now, size_left) or [
                "waits behind an older segment that stays (deletion only takes the oldest)"
                if any(r.reasons for r in rows)
                else "goes at a later retention check (the log start offset, retention.bytes "
                "and retention.ms are applied one after the other)"
            ]
        largest = seg.largest_timestamp()
        rows.append(
            SegmentRetention(
                seg.base_offset,
                nxt.base_offset if nxt is not None else end,
                seg.size,
                largest,
                largest + config.retention_ms if config.retention_ms >= 0 else None,
                largest > now,
                nxt is None,
                reasons,
            )
        )
    roll_due, roll_reason = _active_roll(log, segments[-1])
    policy = ",".join(p for p, on in (("delete", config.delete), ("compact", config.compact)) if on)
    return RetentionReport(
        log.topic_partition,
        now,
        policy,
        config.retention_ms,
        config.retention_bytes,
        config.segment_ms,
        config.segment_bytes,
        log.log_start_offset,
        hw,
        size,
        roll_due,
        roll_reason,
        retention_check_interval_ms,
        config.file_delete_delay_ms,
        sum(1 for name in _listdir(log.dir) if name.endswith(DELETED_FILE_SUFFIX)),
        rows,
        _retention_summary(rows),
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


def dump_segment(
    path: str, *, deep: bool = False, print_data: bool = False, max_bytes: int = 1 << 20
) -> tuple[str, str]:
    """``(stdout, stderr)`` of ``kafkacore dump-log --files PATH`` (Kafka's
    ``DumpLogSegments``) for one segment file, reading at most ``max_bytes`` of batches
    (``--max-bytes``)."""
    from kafkacore.tools import DumpFailure, DumpOptions, dump_files

    out, err = io.StringIO(), io.StringIO()
    options = DumpOptions(
        deep_iteration=deep, print_data_log=print_data, max_bytes=max_bytes, progress=False
    )
    try:
        dump_files([path], options, out=out, err=err)
    except DumpFailure as exc:
        err.write(f"{exc.kind}: {exc.message}\n")
    return out.getvalue(), err.getvalue()
