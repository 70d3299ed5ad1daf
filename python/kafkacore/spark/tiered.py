"""The tiered part of a topic read straight from its bucket (KIP-405), so that a Spark
cluster scans months of history without the brokers in the data path.

With ``kafkacore.tiered.s3.bucket`` (and the other ``kafkacore.tiered.s3.*`` settings of
the bucket, the same as the brokers' ``rsm.config.s3.*``) beside
``kafka.bootstrap.servers``, a batch read is planned as:

* one Spark partition per committed tiered segment (``__remote_log_metadata``, read once on
  the driver through the brokers: a few KiB), each reading the segment's ``.log`` object
  by ranged GETs (:class:`~kafkacore.log.remote.reader.TieredSegmentReader`), every batch's
  CRC checked;
* the rest of the range (the local tail) through the brokers, as without tiering.

The rows are the same as a consumer's: same schema, same offsets; under
``read_committed`` the aborted transactions of a tiered range come from the segments'
``.txnindex`` objects (found on the driver; a range whose transactions may end in the
local tail is read through the brokers instead, which know).

Thread-safety: planning runs on the driver, reads in the executors; nothing is shared.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from kafkacore.log.files import TopicPartition
from kafkacore.spark.options import ReadOptions
from kafkacore.spark.ranges import OffsetRange

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["read_tiered_range", "split_by_tiered_segments"]


def split_by_tiered_segments(
    ranges: Sequence[OffsetRange], options: ReadOptions
) -> tuple[list[OffsetRange], list[OffsetRange]]:
    """``(ranges read from the bucket, one per tiered segment piece; the rest, read
    through the brokers)``."""
    from kafkacore.client.tiered import committed_segments
    from kafkacore.log.remote.reader import TieredSegmentReader

    assert options.bootstrap_servers is not None and options.tiered_store is not None
    reader = TieredSegmentReader(dict(options.tiered_store))
    tiered: list[OffsetRange] = []
    rest: list[OffsetRange] = []
    for r in ranges:
        segments = committed_segments(
            options.bootstrap_servers,
            r.topic,
            r.partition,
            metadata_partitions=options.tiered_metadata_partitions,
        )
        offset = r.start
        for i, m in enumerate(segments):
            start, until = max(offset, m.start_offset), min(r.until, m.end_offset + 1)
            if start >= until or start != offset:
                continue  # before the range, or a gap (read through the brokers)
            aborted: tuple[tuple[int, int], ...] = ()
            if options.read_committed:
                found, complete = reader.aborted_transactions(segments[i:], start, until)
                if not complete:
                    break  # a transaction may end in the local tail: the brokers know
                aborted = tuple((a.producer_id, a.first_offset) for a in found)
            tiered.append(
                OffsetRange(r.topic, r.partition, start, until, segment=m, aborted=aborted)
            )
            offset = until
        if offset < r.until:
            rest.append(OffsetRange(r.topic, r.partition, offset, r.until))
    return tiered, rest


def read_tiered_range(options: ReadOptions, r: OffsetRange) -> Iterator[pa.RecordBatch]:
    """The rows of a tiered range, from the bucket."""
    from kafkacore.arrow import decode
    from kafkacore.log.reader import AbortedFilter
    from kafkacore.log.remote.reader import TieredSegmentReader

    assert options.tiered_store is not None and r.segment is not None
    reader = TieredSegmentReader(dict(options.tiered_store))
    tp = TopicPartition(r.topic, r.partition)
    offset = r.start
    committed = AbortedFilter(r.aborted) if options.read_committed else None
    for chunk in reader.batches(r.segment, r.start, r.until, chunk_bytes=options.fetch_max_bytes):
        data = chunk
        scanned = None
        if committed is not None:
            data, scanned = committed.filter(chunk)
        batch, next_offset = decode(
            data, tp.topic, tp.partition, offset, r.until, options.include_headers
        )
        if scanned is not None:
            next_offset = max(next_offset, min(scanned, r.until))
        offset = max(offset, next_offset)
        if batch.num_rows:
            yield batch
        if offset >= r.until:
            return
