"""``read_committed`` on the client side: the batches of aborted transactions are dropped
before decoding, with the algorithm of Kafka's consumer (``CompletedFetch.nextFetchedRecord``):

1. the aborted transactions that come with the records - ``(producer id, first offset)``,
   from a Fetch response or from the ``.txnindex`` files - wait in a min-heap by first
   offset;
2. before each batch that has a producer id, every entry whose first offset is at or
   below the batch's last offset moves into the set of aborted producers;
3. an ABORT marker of a producer takes it out of the set (its aborted transaction ends
   there: a later transaction of the producer may commit);
4. a transactional data batch of a producer in the set is skipped;
5. control batches (the markers) are never returned.

Records past the last stable offset never reach this filter: the broker does not send
them under ``read_committed``, and the ranges a reader asks for end at the LSO.

Thread-safety: an :class:`AbortedFilter` is one read's state (one fetch answer, one
chunk of a segment); nothing is shared.
"""

from __future__ import annotations

import heapq
import struct
from collections.abc import Iterable

from kafkacore import record
from kafkacore.errors import KafkaCoreError
from kafkacore.record.layout import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    LAST_OFFSET_DELTA_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)

__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "AbortedFilter"]

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
"""Kafka's ``IsolationLevel`` ids, as Fetch and ListOffsets carry them."""

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_NO_PRODUCER_ID = -1


class AbortedFilter:
    """The batches of ``data`` (stored batches one after the other, as a Fetch answer or
    a segment chunk holds them) a ``read_committed`` consumer may see, for the aborted
    transactions ``aborted`` (``(producer id, first offset)``) that overlap them."""

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
