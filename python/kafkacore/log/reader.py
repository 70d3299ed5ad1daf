"""Kafka's log files read read-only, without a broker or beside a running one: the reader
the Spark source (``kafkacore.path``), the console (its Messages and Storage views, and
``kafkacore console`` over a log directory) and the tools share.

The files are Apache Kafka's (see :mod:`kafkacore.log.files`): ``<topic>-<partition>``
directories of segments named by their 20-digit base offset, each a ``.log`` with a sparse
``.index`` (8-byte entries: relative offset, position) and a ``.timeindex`` (12-byte
entries: timestamp, relative offset), all big-endian. The directory's
``replication-offset-checkpoint`` holds the high watermarks and
``log-start-offset-checkpoint`` the log start offsets moved past a segment's base offset
(retention by DeleteRecords).

* :class:`SegmentReader` - one segment's ``.log`` and ``.index``: batch framing, the
  index lookup (Kafka's ``OffsetIndex.lookup``: :func:`~kafkacore.pure.index.
  largest_lower_bound_slot`, the search the broker's own indexes use) and whole-batch
  reads;
* :class:`LogDirectory` - the partitions of one ``log.dirs`` entry: segments, offsets,
  records as Arrow batches, the last stable offset, aborted transactions, offsets by time;
* :class:`AbortedFilter` - ``read_committed`` on the reader's side (Kafka's consumer
  algorithm), for segment chunks and Fetch answers alike.

Nothing is ever written, created, recovered or truncated here: files are read with
``pread`` (never memory-mapped, so a broker truncating a file cannot fault a reader), the
active segment's preallocated index is read only up to its last written entry, and a torn
batch at the end of a file ends the segment. Reads stop at the high watermark when the
checkpoint names the partition (a running broker rewrites it every few seconds; a cleanly
stopped one on shutdown), otherwise at the end of the log.

Transactions (``read_committed``): the last stable offset is computed as the broker's
producer state has it - the open transactions of the newest ``.snapshot`` file (each
producer's current transaction's first offset), then the batches after it up to the high
watermark (a transactional batch opens its producer's transaction, a marker closes it) -
and capped by the high watermark; the aborted transactions come from the segments'
``.txnindex`` files with Kafka's ``collectAbortedTransactions`` walk, and the records of
aborted transactions are dropped before decoding (:class:`AbortedFilter`).

Thread-safety: none needed; every call opens and closes its own files, and an
:class:`AbortedFilter` is one read's state.
"""

from __future__ import annotations

import heapq
import os
import struct
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from kafkacore import record
from kafkacore.errors import KafkaCoreError, StorageIOError
from kafkacore.log.checkpoints import OffsetCheckpointFile
from kafkacore.log.files import (
    DELETE_DIR_SUFFIX,
    FUTURE_DIR_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    STRAY_DIR_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
    TopicPartition,
    filename_prefix_from_offset,
    log_dir_name,
    parse_topic_partition_name,
)
from kafkacore.log.producer_state import read_snapshot
from kafkacore.log.txn_index import AbortedTxn, TransactionIndex
from kafkacore.pure.index import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    WARM_SECTION_BYTES,
    largest_lower_bound_slot,
)
from kafkacore.record.layout import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "AbortedFilter",
    "LogDirectory",
    "SegmentReader",
    "decode_committed",
    "written_entries",
]

# Batch framing common to every magic: offset (i64), size after these 12 bytes (i32); the
# magic byte sits at 16. RecordBatch v2 keeps lastOffsetDelta (i32) at 23; a legacy
# message's offset field already is its last offset.
_V2_PREFIX = LAST_OFFSET_DELTA_OFFSET + 4
_OFFSET_AND_SIZE = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_NO_PRODUCER_ID = -1

DEFAULT_CHUNK_BYTES = 8 << 20


def _read_checkpoint(path: str) -> dict[TopicPartition, int]:
    """Entries of an offset checkpoint, read-only (the file is never created); ``{}`` when
    it is missing or unreadable (it is replaced by rename while a broker runs)."""
    try:
        return OffsetCheckpointFile(path, create=False).read()
    except StorageIOError:  # CorruptCheckpointError included
        return {}


def written_entries(fd: int, entry_size: int) -> int:
    """The written entries of an index file open as ``fd``: an active segment's index is
    preallocated with zeros, and a written entry is never all zeros (an ``.index``
    entry's position is never 0 - a segment's first batch is never indexed - and a
    ``.timeindex`` entry past the first has a timestamp), so the first all-zero entry
    ends them (binary search)."""
    empty = bytes(entry_size)
    lo, hi = 0, os.fstat(fd).st_size // entry_size
    while lo < hi:
        mid = (lo + hi) // 2
        if os.pread(fd, entry_size, mid * entry_size) == empty:
            hi = mid
        else:
            lo = mid + 1
    return lo


class SegmentReader:
    """One segment's ``.log`` and ``.index``, opened read-only for one read (a context
    manager: the descriptors close at its end). Not thread-safe; cheap to open."""

    def __init__(self, directory: str, base_offset: int) -> None:
        self.base_offset = base_offset
        prefix = os.path.join(directory, filename_prefix_from_offset(base_offset))
        self._time_index_path = prefix + TIME_INDEX_FILE_SUFFIX
        self.fd = os.open(prefix + LOG_FILE_SUFFIX, os.O_RDONLY)
        try:
            self.index_fd: int | None = os.open(prefix + INDEX_FILE_SUFFIX, os.O_RDONLY)
        except FileNotFoundError:
            self.index_fd = None
        self.index_entries = (
            0 if self.index_fd is None else written_entries(self.index_fd, OFFSET_ENTRY.size)
        )

    def close(self) -> None:
        os.close(self.fd)
        if self.index_fd is not None:
            os.close(self.index_fd)

    def __enter__(self) -> SegmentReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _index_entry(self, slot: int) -> tuple[int, int]:
        assert self.index_fd is not None
        raw = os.pread(self.index_fd, OFFSET_ENTRY.size, slot * OFFSET_ENTRY.size)
        if len(raw) < OFFSET_ENTRY.size:
            return 0, 0
        relative, position = OFFSET_ENTRY.unpack(raw)
        return relative, position

    def index_position(self, offset: int) -> int:
        """Position of the largest index entry with an offset <= ``offset`` (0 if none):
        Kafka's ``OffsetIndex.lookup``, searched as the broker's indexes are."""
        slot = largest_lower_bound_slot(
            self.index_entries,
            WARM_SECTION_BYTES // OFFSET_ENTRY.size,
            lambda n: self._index_entry(n)[0],
            offset - self.base_offset,
        )
        return 0 if slot < 0 else self._index_entry(slot)[1]

    def batch_at(self, position: int) -> tuple[int, int] | None:
        """``(last offset, size)`` of the batch at ``position``; None at the end of the
        file or at a torn (partial) last batch."""
        head = os.pread(self.fd, _V2_PREFIX, position)
        if len(head) <= MAGIC_OFFSET:
            return None
        offset, length = _OFFSET_AND_SIZE.unpack_from(head)
        size = length + LOG_OVERHEAD
        if head[MAGIC_OFFSET] >= 2:
            if len(head) < _V2_PREFIX:
                return None
            offset += _I32.unpack_from(head, LAST_OFFSET_DELTA_OFFSET)[0]
        if length <= 0 or position + size > os.fstat(self.fd).st_size:
            return None
        return offset, size

    def batch_bytes(self, position: int, size: int) -> bytes:
        return os.pread(self.fd, size, position)

    def locate(self, offset: int, not_before: int = 0) -> int | None:
        """Position of the first batch whose last offset is >= ``offset``, walking from
        the index entry (or ``not_before``, whichever is later); None if there is none."""
        position = max(self.index_position(offset), not_before)
        while True:
            batch = self.batch_at(position)
            if batch is None:
                return None
            last_offset, size = batch
            if last_offset >= offset:
                return position
            position += size

    def whole_batches(self, position: int, max_bytes: int, upper_bound: int) -> bytes:
        """The batches from ``position`` that fit in ``max_bytes`` (the first one whole,
        however large) and start below ``upper_bound``, as stored."""
        end = position
        while True:
            batch = self.batch_at(end)
            if batch is None:
                break
            head = self.batch_bytes(end, 8)
            if _I64.unpack_from(head + bytes(8 - len(head)))[0] >= upper_bound:
                break
            if end > position and end + batch[1] - position > max_bytes:
                break
            end += batch[1]
        return self.batch_bytes(position, end - position) if end > position else b""

    def time_entries(self) -> list[tuple[int, int]]:
        """Written ``.timeindex`` entries as ``(timestamp, absolute offset)``."""
        try:
            with open(self._time_index_path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return []
        entries = []
        for at in range(0, len(raw) - len(raw) % TIME_ENTRY.size, TIME_ENTRY.size):
            timestamp, relative = TIME_ENTRY.unpack_from(raw, at)
            if timestamp == 0 and relative == 0:
                break
            entries.append((timestamp, self.base_offset + relative))
        return entries


def decode_committed(
    data: bytes,
    aborted: AbortedFilter | None,
    tp: TopicPartition,
    start: int,
    end: int,
    include_headers: bool,
) -> tuple[pa.RecordBatch, int]:
    """:func:`kafkacore.arrow.decode` of the records in ``[start, end)`` of ``data`` that a
    reader sees (``aborted``: a ``read_committed`` filter, or None for all of them); the
    next offset is past the last complete batch of ``data`` (at most ``end``), whether the
    filter kept that batch or not."""
    from kafkacore.arrow import decode

    scanned = None
    if aborted is not None:
        data, scanned = aborted.filter(data)
    records, next_offset = decode(data, tp.topic, tp.partition, start, end, include_headers)
    if scanned is not None:
        next_offset = max(next_offset, min(scanned, end))
    return records, next_offset


class LogDirectory:
    """The partitions of one log directory (a ``log.dirs`` entry), read-only."""

    def __init__(self, path: str) -> None:
        if not os.path.isdir(path):
            raise FileNotFoundError(f"kafkacore.path: {path} is not a directory")
        self.path = path

    # -- layout ---------------------------------------------------------------------------

    def topics(self) -> dict[str, list[int]]:
        """Every topic with its partitions, from the ``<topic>-<partition>`` directories
        (those being deleted, moved or stray are left out)."""
        found: dict[str, list[int]] = {}
        for name in os.listdir(self.path):
            if name.endswith((DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)):
                continue
            if not os.path.isdir(os.path.join(self.path, name)):
                continue
            try:
                tp = parse_topic_partition_name(name)
            except ValueError:
                continue
            found.setdefault(tp.topic, []).append(tp.partition)
        return {topic: sorted(partitions) for topic, partitions in found.items()}

    def _dir(self, tp: TopicPartition) -> str:
        return os.path.join(self.path, log_dir_name(tp))

    def segments(self, tp: TopicPartition) -> list[int]:
        """Base offsets of the partition's segments, in order."""
        try:
            names = os.listdir(self._dir(tp))
        except FileNotFoundError:
            raise FileNotFoundError(
                f"topic-partition {tp} is not in log directory {self.path}"
            ) from None
        bases = []
        for name in names:
            stem = name[: -len(LOG_FILE_SUFFIX)]
            if name.endswith(LOG_FILE_SUFFIX) and stem.isdigit():
                bases.append(int(stem))
        return sorted(bases)

    # -- offsets ----------------------------------------------------------------------------

    def log_end_offset(self, tp: TopicPartition) -> int:
        """The offset after the last complete batch of the last segment."""
        bases = self.segments(tp)
        if not bases:
            return 0
        with SegmentReader(self._dir(tp), bases[-1]) as segment:
            position = segment.index_position(2**63 - 1)
            end = bases[-1]
            while (batch := segment.batch_at(position)) is not None:
                last_offset, size = batch
                end = max(end, last_offset + 1)
                position += size
            return end

    def offsets(self, tp: TopicPartition) -> tuple[int, int]:
        """``(log start offset, high watermark)``: the start is the larger of the first
        segment's base offset and the checkpointed log start offset; the end is the
        checkpointed high watermark (never beyond the log end), else the log end."""
        bases = self.segments(tp)
        first = bases[0] if bases else 0
        start = max(
            first,
            _read_checkpoint(os.path.join(self.path, LOG_START_OFFSET_CHECKPOINT_FILE)).get(
                tp, first
            ),
        )
        log_end = self.log_end_offset(tp)
        high_watermarks = _read_checkpoint(
            os.path.join(self.path, REPLICATION_OFFSET_CHECKPOINT_FILE)
        )
        end = min(high_watermarks.get(tp, log_end), log_end)
        return start, max(start, end)

    # -- records ---------------------------------------------------------------------------

    def read(
        self,
        tp: TopicPartition,
        start: int,
        end: int,
        include_headers: bool,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        *,
        read_committed: bool = False,
    ) -> Iterator[tuple[pa.RecordBatch, int]]:
        """``(record batch, next offset)`` for the records in ``[start, end)``, decoded
        from up to ``chunk_bytes`` of a segment at a time. Ends early (the last next offset
        below ``end``) when the segments run out or a segment disappears.
        ``read_committed``: without the records of the aborted transactions (the caller
        keeps ``end`` at or below :meth:`last_stable_offset`)."""
        aborted: AbortedFilter | None = None
        if read_committed:
            aborted = AbortedFilter(
                (a.producer_id, a.first_offset) for a in self.aborted_transactions(tp, start, end)
            )
        offset = start
        bases = self.segments(tp)
        directory = self._dir(tp)
        first = max((i for i, base in enumerate(bases) if base <= offset), default=0)
        for i in range(first, len(bases)):
            if offset >= end:
                return
            offset = max(offset, bases[i])
            try:
                segment = SegmentReader(directory, bases[i])
            except FileNotFoundError:
                return  # deleted by retention meanwhile: the caller re-checks the log start
            with segment:
                position = segment.locate(offset)
                while position is not None and offset < end:
                    batch = segment.batch_at(position)
                    if batch is None:
                        break
                    data = os.pread(segment.fd, max(chunk_bytes, batch[1]), position)
                    records, next_offset = decode_committed(
                        data, aborted, tp, offset, end, include_headers
                    )
                    next_offset = max(next_offset, min(batch[0] + 1, end))
                    offset = next_offset
                    yield records, offset
                    position = segment.locate(offset, position + batch[1])

    # -- transactions -----------------------------------------------------------------------

    def aborted_transactions(
        self, tp: TopicPartition, start: int, upper_bound: int
    ) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[start, upper_bound)`` (Kafka's
        ``LocalLog.collectAbortedTransactions``): the ``.txnindex`` of the segment holding
        ``start`` (the first one when none does), then of each later segment until an
        entry's last stable offset reaches ``upper_bound``."""
        bases = self.segments(tp)
        first = max((i for i, base in enumerate(bases) if base <= start), default=0)
        found: list[AbortedTxn] = []
        directory = self._dir(tp)
        for base in bases[first:]:
            path = os.path.join(directory, filename_prefix_from_offset(base)) + (
                TXN_INDEX_FILE_SUFFIX
            )
            result = TransactionIndex(base, path).collect(start, upper_bound)
            found.extend(result.aborted)
            if result.complete:
                break
        return found

    def last_stable_offset(self, tp: TopicPartition) -> int:
        """The partition's last stable offset: the first offset of its earliest
        transaction still open at the high watermark (a marker at or past the high
        watermark does not close it, as the broker's LSO only moves with the high
        watermark), else the high watermark."""
        _, high_watermark = self.offsets(tp)
        bases = self.segments(tp)
        directory = self._dir(tp)
        open_txns: dict[int, int] = {}  # producer id -> first offset
        scan_from = bases[0] if bases else 0
        snapshot = self._latest_snapshot(tp, high_watermark)
        if snapshot is not None:
            scan_from, entries = snapshot
            open_txns = {
                e.producer_id: e.current_txn_first_offset
                for e in entries
                if e.current_txn_first_offset is not None
            }
        first = max((i for i, base in enumerate(bases) if base <= scan_from), default=0)
        for i in range(first, len(bases)):
            if bases[i] >= high_watermark:
                break
            try:
                segment = SegmentReader(directory, bases[i])
            except FileNotFoundError:
                continue
            with segment:
                position = segment.locate(scan_from)
                while position is not None:
                    batch = segment.batch_at(position)
                    if batch is None:
                        break
                    _last, size = batch
                    head = segment.batch_bytes(position, RECORD_BATCH_OVERHEAD)
                    base_offset = _I64.unpack_from(head, 0)[0]
                    if base_offset >= high_watermark:
                        break
                    position += size
                    if len(head) < RECORD_BATCH_OVERHEAD or head[MAGIC_OFFSET] < 2:
                        continue
                    attributes = _I16.unpack_from(head, ATTRIBUTES_OFFSET)[0]
                    producer_id = _I64.unpack_from(head, PRODUCER_ID_OFFSET)[0]
                    if not attributes & TRANSACTIONAL_FLAG_MASK:
                        continue
                    if attributes & CONTROL_FLAG_MASK:
                        open_txns.pop(producer_id, None)  # COMMIT or ABORT: decided
                    else:
                        open_txns.setdefault(producer_id, base_offset)
        if not open_txns:
            return high_watermark
        return min(high_watermark, min(open_txns.values()))

    def _latest_snapshot(self, tp: TopicPartition, at_most: int) -> tuple[int, list[Any]] | None:
        """``(offset, entries)`` of the newest readable producer snapshot at or below
        ``at_most`` (the state of the offsets before it); None when there is none."""
        directory = self._dir(tp)
        offsets = []
        for name in os.listdir(directory):
            stem = name[: -len(PRODUCER_SNAPSHOT_FILE_SUFFIX)]
            if name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX) and stem.isdigit():
                offsets.append(int(stem))
        for offset in sorted((o for o in offsets if o <= at_most), reverse=True):
            path = os.path.join(directory, filename_prefix_from_offset(offset))
            try:
                return offset, read_snapshot(path + PRODUCER_SNAPSHOT_FILE_SUFFIX)
            except (KafkaCoreError, OSError):
                continue  # being replaced or corrupt: an older one, or the whole log
        return None

    def offset_for_timestamp(self, tp: TopicPartition, timestamp: int) -> int | None:
        """The first offset below the high watermark whose record timestamp is at or after
        ``timestamp`` (ms), or None (ListOffsets by timestamp)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        log_start, high_watermark = self.offsets(tp)
        bases = self.segments(tp)
        directory = self._dir(tp)
        target_us = pa.scalar(timestamp * 1000, pa.timestamp("us", tz="UTC"))
        for i, base in enumerate(bases):
            next_base = bases[i + 1] if i + 1 < len(bases) else None
            if next_base is not None and next_base <= log_start:
                continue
            if base >= high_watermark:
                break
            try:
                with SegmentReader(directory, base) as segment:
                    entries = segment.time_entries()
            except FileNotFoundError:
                continue
            sealed = next_base is not None
            if sealed and (not entries or entries[-1][0] < timestamp):
                continue  # a sealed segment's last entry holds its largest timestamp
            begin = max(log_start, base)
            for entry_timestamp, entry_offset in entries:
                if entry_timestamp < timestamp:
                    begin = max(begin, entry_offset)
            stop = min(high_watermark, next_base if next_base is not None else high_watermark)
            for records, _ in self.read(tp, begin, stop, False):
                if records.num_rows == 0:
                    continue
                hits = pc.greater_equal(records.column("timestamp"), target_us)
                index = pc.index(hits, True).as_py()
                if index >= 0:
                    return int(records.column("offset")[index].as_py())
        return None


class AbortedFilter:
    """The batches of ``data`` (stored batches one after the other, as a Fetch answer or
    a segment chunk holds them) a ``read_committed`` consumer may see, for the aborted
    transactions ``aborted`` (``(producer id, first offset)``) that overlap them, with the
    algorithm of Kafka's consumer (``CompletedFetch.nextFetchedRecord``):

    1. the aborted transactions wait in a min-heap by first offset;
    2. before each batch that has a producer id, every entry whose first offset is at or
       below the batch's last offset moves into the set of aborted producers;
    3. an ABORT marker of a producer takes it out of the set (its aborted transaction
       ends there: a later transaction of the producer may commit);
    4. a transactional data batch of a producer in the set is skipped;
    5. control batches (the markers) are never returned.

    Records past the last stable offset never reach the filter: the broker does not send
    them under ``read_committed``, and the ranges a reader asks for end at the LSO. One
    read's state (one fetch answer, the chunks of one range), carried from chunk to chunk.
    """

    def __init__(self, aborted: Iterable[tuple[int, int]]) -> None:
        self._heap = [(first_offset, producer_id) for producer_id, first_offset in aborted]
        heapq.heapify(self._heap)
        self._aborted_producers: set[int] = set()

    def _consume_up_to(self, offset: int) -> None:
        """Kafka's ``consumeAbortedTransactionsUpTo``."""
        while self._heap and self._heap[0][0] <= offset:
            self._aborted_producers.add(heapq.heappop(self._heap)[1])

    def filter(self, data: bytes) -> tuple[bytes, int | None]:
        """``(kept, next offset)``: the complete data batches of ``data`` that are not part
        of an aborted transaction, concatenated, and the offset after the last complete
        batch of ``data`` (``None`` when it holds none): a reader resumes there even when
        the last batches were dropped. A trailing partial batch is left out, as the
        decoders do; legacy (magic 0/1) message sets carry no transactions and are kept."""
        kept: list[bytes] = []
        next_offset: int | None = None
        view = memoryview(data)
        for pos, magic, size in record.iter_batches(data):
            base = _I64.unpack_from(data, pos)[0]
            if magic < 2:
                kept.append(view[pos : pos + size].tobytes())
                next_offset = base + 1 if next_offset is None else max(next_offset, base + 1)
                continue
            if size < RECORD_BATCH_OVERHEAD:
                raise KafkaCoreError(f"record batch of {size} bytes at position {pos}")
            last = base + _I32.unpack_from(data, pos + LAST_OFFSET_DELTA_OFFSET)[0]
            next_offset = last + 1
            attributes = _I16.unpack_from(data, pos + ATTRIBUTES_OFFSET)[0]
            control = bool(attributes & CONTROL_FLAG_MASK)
            producer_id = _I64.unpack_from(data, pos + PRODUCER_ID_OFFSET)[0]
            if producer_id != _NO_PRODUCER_ID:
                self._consume_up_to(last)
                if control and _is_abort_marker(view[pos : pos + size].tobytes()):
                    self._aborted_producers.discard(producer_id)
                elif (
                    attributes & TRANSACTIONAL_FLAG_MASK and producer_id in self._aborted_producers
                ):
                    continue
            if not control:
                kept.append(view[pos : pos + size].tobytes())
        return b"".join(kept), next_offset


def _is_abort_marker(batch: bytes) -> bool:
    """Kafka's ``containsAbortMarker``: the control batch's first record is an ABORT."""
    for r in record.records(batch, 0):
        if r.key is None or r.value is None:
            return False
        try:
            kind, _ = record.parse_control_record(r.key, r.value)
        except (ValueError, KafkaCoreError):
            return False
        return kind == record.ControlType.ABORT
    return False
