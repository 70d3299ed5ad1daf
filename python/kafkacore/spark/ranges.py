"""Offset ranges: how a read is cut into Spark partitions and how a micro-batch is capped.

* :func:`split_ranges` is Spark's ``KafkaOffsetRangeCalculator.getRanges``: one range per
  topic-partition, empty ranges dropped; ``maxRecordsPerPartition`` cuts every range into
  pieces of at most that many offsets, then ``minPartitions`` (when there are fewer ranges)
  splits the large ranges in proportion to their size, leaving alone the ranges too small
  to deserve more than one piece.
* :func:`rate_limit` is ``KafkaMicroBatchStream.rateLimit``: ``maxOffsetsPerTrigger``
  shared between partitions in proportion to their backlog, never starving a small one.

Sizes are counted in offsets (compaction and transaction markers leave gaps, so a range
may hold fewer records than its size), exactly as Spark counts them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pyspark.sql.datasource import InputPartition

__all__ = ["OffsetRange", "rate_limit", "split_ranges"]

_LONG_MAX = 2**63 - 1
K = TypeVar("K", bound=Hashable)


@dataclass
class OffsetRange(InputPartition):
    """``[start, until)`` of one topic-partition: one Spark task."""

    topic: str
    partition: int
    start: int
    until: int
    segment: Any = None
    """The tiered segment (``RemoteLogSegmentMetadata``) read from the bucket, or ``None``:
    read through the brokers or a log directory (:mod:`kafkacore.spark.tiered`)."""
    aborted: tuple[tuple[int, int], ...] = ()
    """read_committed from the bucket: ``(producer id, first offset)`` of the aborted
    transactions the range overlaps."""

    @property
    def size(self) -> int:
        return self.until - self.start

    def __repr__(self) -> str:
        return f"OffsetRange({self.topic}-{self.partition} [{self.start}, {self.until}))"


def _java_round(x: float) -> int:
    """``Math.round(double)``: half up."""
    return math.floor(x + 0.5)


def _part_count(size: int, total: int, min_parts: int) -> int:
    return max(_java_round(size / total * min_parts), 1)


def _divide(parts: int, r: OffsetRange) -> list[OffsetRange]:
    """``parts`` consecutive pieces; the last one takes the rounding remainder."""
    remaining = r.size
    start = r.start
    pieces = []
    for part in range(parts):
        this = remaining // (parts - part)
        remaining -= this
        end = min(start + this, r.until)
        pieces.append(OffsetRange(r.topic, r.partition, start, end))
        start = end
    return [p for p in pieces if p.size > 0]


def split_ranges(
    ranges: Iterable[OffsetRange],
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[OffsetRange]:
    """Spark's ``KafkaOffsetRangeCalculator.getRanges`` (in the order given)."""
    offset_ranges = [r for r in ranges if r.size > 0]
    if (
        min_partitions is None or len(offset_ranges) >= min_partitions
    ) and max_records_per_partition is None:
        return offset_ranges
    divided = offset_ranges
    if max_records_per_partition is not None:
        divided = [
            piece
            for r in offset_ranges
            for piece in _divide(math.ceil(r.size / max_records_per_partition), r)
        ]
    if min_partitions is None or min_partitions <= len(divided):
        return divided
    total = sum(r.size for r in divided)
    unsplit = [r for r in divided if _part_count(r.size, total, min_partitions) == 1]
    unsplit_total = sum(r.size for r in unsplit)
    split_total = total - unsplit_total
    unsplit_tps = {(r.topic, r.partition) for r in unsplit}
    split_min_partitions = max(min_partitions - len(unsplit), 1)
    result: list[OffsetRange] = []
    for r in divided:
        if (r.topic, r.partition) in unsplit_tps:
            parts = 1
        else:
            parts = _part_count(r.size, split_total, split_min_partitions)
        result.extend(_divide(parts, r))
    return [r for r in result if r.size > 0]


def rate_limit(
    limit: int,
    start: Mapping[K, int],
    until: Mapping[K, int],
    earliest_of_new: Mapping[K, int],
) -> dict[K, int]:
    """The end offsets of a micro-batch reading at most about ``limit`` offsets from
    ``start`` towards ``until`` (partitions only in ``until`` begin at
    ``earliest_of_new``): each partition gets ``limit * backlog / total backlog``, rounded
    down, or up to 1 for a share below one offset."""
    sizes: dict[K, int] = {}
    for tp, end in until.items():
        begin = start.get(tp, earliest_of_new.get(tp))
        if begin is not None and end - begin > 0:
            sizes[tp] = end - begin
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(until)
    result: dict[K, int] = {}
    for tp, end in until.items():
        size = sizes.get(tp)
        if size is None:
            result[tp] = end
            continue
        begin = start[tp] if tp in start else earliest_of_new[tp]
        prorate = limit * (size / total)
        share = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        offset = _LONG_MAX if share > _LONG_MAX - begin else begin + share
        result[tp] = min(end, offset)
    return result
