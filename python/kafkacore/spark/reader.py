"""The batch and streaming readers of the ``kafkacore`` data source.

Planning (``partitions``, and every streaming driver call) runs in a Python process on the
driver and talks to the broker (Metadata, ListOffsets) or looks at the log directory;
``read`` runs in a Python worker on an executor, gets a pickled copy of the reader and
decodes the records of one :class:`~kafkacore.spark.ranges.OffsetRange` straight into
Arrow record batches (``kafkacore.arrow.decode``: no Python object per record).

Streaming offsets are Spark's Kafka source offsets, ``{"topic": {"partition": next
offset}}`` with the partition numbers as strings, so a checkpoint reads like Spark's own.
``read`` of a range depends only on the range and the (append-only) log, so a micro-batch
replayed after a failure returns the same rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition

from kafkacore.log.files import TopicPartition
from kafkacore.spark._compat import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from kafkacore.spark.access import (
    PartitionAccess,
    open_access,
    read_range,
    report_data_loss,
    resolve_limit,
    subscribed_partitions,
)
from kafkacore.spark.options import ReadOptions, tp_string
from kafkacore.spark.ranges import OffsetRange, rate_limit, split_ranges

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["KafkaCoreBatchReader", "KafkaCoreStreamReader", "offsets_from_json", "offsets_to_json"]

logger = logging.getLogger("kafkacore.spark")

PartitionOffsets = dict[TopicPartition, int]


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{"topic": {"partition": offset}}``, topics and partitions in order."""
    result: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        result.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return result


def offsets_from_json(offsets: Mapping[str, Any]) -> PartitionOffsets:
    return {
        TopicPartition(topic, int(partition)): int(offset)
        for topic, partitions in offsets.items()
        for partition, offset in partitions.items()
    }


def _read(options: ReadOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    if not isinstance(partition, OffsetRange):
        return  # Spark plans one empty partition when there is nothing to read
    if partition.segment is not None:  # a tiered segment, straight from its bucket
        from kafkacore.spark.tiered import read_tiered_range

        yield from read_tiered_range(options, partition)
        return
    access = open_access(options)
    try:
        yield from read_range(
            access,
            TopicPartition(partition.topic, partition.partition),
            partition.start,
            partition.until,
            include_headers=options.include_headers,
            fail_on_data_loss=options.fail_on_data_loss,
        )
    finally:
        access.close()


class KafkaCoreBatchReader(DataSourceReader):
    """``spark.read.format("kafkacore")``: one task per partition range, from
    ``startingOffsets`` (default earliest) to ``endingOffsets`` (default latest)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        options = self.options
        access = open_access(options)
        try:
            tps = subscribed_partitions(access, options.subscription)
            start = resolve_limit(
                access, options.starting, tps, option="startingOffsets", is_start=True
            )
            end = resolve_limit(access, options.ending, tps, option="endingOffsets", is_start=False)
        finally:
            access.close()
        ranges = []
        for tp in tps:
            if start[tp] > end[tp]:
                raise ValueError(
                    f"Beginning offset {start[tp]} is after the ending offset {end[tp]} for "
                    f"topic {tp.topic} partition {tp.partition}. You either provided an invalid "
                    "fromOffset, or the Kafka topic has been damaged"
                )
            ranges.append(OffsetRange(tp.topic, tp.partition, start[tp], end[tp]))
        tiered: list[OffsetRange] = []
        if options.tiered_store is not None:  # one partition per tiered segment
            from kafkacore.spark.tiered import split_by_tiered_segments

            tiered, ranges = split_by_tiered_segments(ranges, options)
        split = split_ranges(ranges, options.min_partitions, options.max_records_per_partition)
        return [*tiered, *split]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.options, partition)


class KafkaCoreStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("kafkacore")`` (Spark's ``KafkaMicroBatchStream``).

    The driver-side instance lives as long as the query, so it keeps its connection and
    the offsets it last answered (``latestOffset()`` without arguments, pyspark < 4.2,
    continues from there)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self._access: PartitionAccess | None = None
        self._initial: PartitionOffsets | None = None
        self._last_end: PartitionOffsets | None = None
        self._latest: PartitionOffsets | None = None
        self._available_now: PartitionOffsets | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Executors get the options only: a connection does not pickle.
        return {"options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["options"])  # type: ignore[misc]

    @property
    def access(self) -> PartitionAccess:
        if self._access is None:
            self._access = open_access(self.options)
        return self._access

    # -- offsets ---------------------------------------------------------------------------

    def _initial_offsets(self) -> PartitionOffsets:
        if self._initial is None:
            tps = subscribed_partitions(self.access, self.options.subscription)
            self._initial = resolve_limit(
                self.access, self.options.starting, tps, option="startingOffsets", is_start=True
            )
        return self._initial

    def _fetch_latest(self) -> PartitionOffsets:
        tps = subscribed_partitions(self.access, self.options.subscription)
        return self.access.latest(tps)

    def initialOffset(self) -> dict[str, Any]:
        return offsets_to_json(self._initial_offsets())

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._initial_offsets()
        self._available_now = self._fetch_latest()

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, Any]:
        """The end of the next micro-batch from ``start``: the latest offsets (those
        snapshotted for ``availableNow``), capped by a ``ReadMaxRows`` limit split over the
        partitions in proportion to their backlog. Without arguments (pyspark < 4.2) it
        continues from the offsets it returned last and applies ``maxOffsetsPerTrigger``."""
        if start is None:
            begin = self._last_end if self._last_end is not None else self._initial_offsets()
        else:
            begin = offsets_from_json(start)
        if limit is None:
            limit = self.getDefaultReadLimit()
        latest = self._available_now if self._available_now is not None else self._fetch_latest()
        self._latest = latest
        if isinstance(limit, ReadMaxRows):
            new = [tp for tp in latest if tp not in begin]
            earliest_new = self.access.earliest(new) if new else {}
            end = rate_limit(limit.max_rows, begin, latest, earliest_new)
        else:
            end = dict(latest)
        self._last_end = end
        return offsets_to_json(end)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return None if self._latest is None else offsets_to_json(self._latest)

    # -- micro-batches --------------------------------------------------------------------------

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        begin, until = offsets_from_json(start), offsets_from_json(end)
        if begin == until:
            return []
        fail = self.options.fail_on_data_loss
        new = [tp for tp in until if tp not in begin]
        earliest_new = self.access.earliest(new) if new else {}
        for tp in sorted(earliest_new):
            if earliest_new[tp] != 0:
                report_data_loss(
                    fail,
                    f"Added partition {tp_string(tp)} starts from {earliest_new[tp]} instead "
                    "of 0. Some data may have been missed.",
                )
        gone = sorted(tp for tp in begin if tp not in until)
        if gone:
            report_data_loss(
                fail,
                "Set(" + ", ".join(map(tp_string, gone)) + ") are gone. Some data may have "
                "been missed.",
            )
        ranges = []
        for tp in sorted(until):
            first = begin[tp] if tp in begin else earliest_new[tp]
            if until[tp] < first:
                report_data_loss(
                    fail,
                    f"Partition {tp_string(tp)}'s offset was changed from {first} to "
                    f"{until[tp]}, some data may have been missed.",
                )
                continue
            ranges.append(OffsetRange(tp.topic, tp.partition, first, until[tp]))
        return list(
            split_ranges(
                ranges, self.options.min_partitions, self.options.max_records_per_partition
            )
        )

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.options, partition)

    def commit(self, end: dict[str, Any]) -> None:
        pass  # Spark's offset log and commit log are the only state the source needs

    def stop(self) -> None:
        if self._access is not None:
            self._access.close()
            self._access = None
