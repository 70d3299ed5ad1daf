"""The native produce path's pure twin (``ProduceLease``, ``produce_append``; the rules
are in ``_native.pyi`` and ``rust/core/src/produce.rs``): a client's batch appended to a
partition's active segment under a lease, or ``None`` before any side effect when the
Python path must append it.

Not thread-safe: the caller holds each partition's log lock.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kafkacore.errors import KafkaCoreError
from kafkacore.pure import batch as v2
from kafkacore.pure._types import BatchHeaderTuple, LeasedAppendResult
from kafkacore.pure._util import I32_MAX
from kafkacore.pure.segment import Segment

__all__ = ["ProduceLease", "produce_append"]

_LENGTH = struct.Struct(">i")
_COMPRESSION_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_MASK = 0x08
_TRANSACTIONAL_FLAG_MASK = 0x10
_CONTROL_FLAG_MASK = 0x20


class ProduceLease:
    """One partition's lease (see ``_native.pyi``)."""

    __slots__ = (
        "_leader_epoch",
        "log_append_time",
        "max_last_offset",
        "max_message_bytes",
        "producers",
        "roll_after_ms",
        "segment_bytes",
        "segment_created_ms",
        "timestamp_after_max_ms",
        "timestamp_before_max_ms",
    )

    def __init__(
        self,
        *,
        leader_epoch: int,
        max_message_bytes: int,
        segment_bytes: int,
        log_append_time: bool,
        timestamp_before_max_ms: int,
        timestamp_after_max_ms: int,
        roll_after_ms: int,
        segment_created_ms: int,
        max_last_offset: int,
        producers: dict[int, tuple[int, int, bool]],
    ) -> None:
        self._leader_epoch = leader_epoch
        self.max_message_bytes = max_message_bytes
        self.segment_bytes = segment_bytes
        self.log_append_time = log_append_time
        self.timestamp_before_max_ms = timestamp_before_max_ms
        self.timestamp_after_max_ms = timestamp_after_max_ms
        self.roll_after_ms = roll_after_ms
        self.segment_created_ms = segment_created_ms
        self.max_last_offset = max_last_offset
        self.producers = dict(producers)

    @property
    def leader_epoch(self) -> int:
        return self._leader_epoch

    def producer(self, producer_id: int) -> tuple[int, int, bool] | None:
        """``(epoch, last sequence, transaction open)`` of a producer the lease knows."""
        return self.producers.get(producer_id)


def _checked_header(lease: ProduceLease, data: bytes, now_ms: int) -> BatchHeaderTuple | None:
    """The header of ``data`` when it is one magic-2 batch a leader takes as it is."""
    size = len(data)
    if size < v2.RECORD_BATCH_OVERHEAD or data[v2.MAGIC_OFFSET] != 2:
        return None
    if v2.LOG_OVERHEAD + _LENGTH.unpack_from(data, v2.LENGTH_OFFSET)[0] != size:
        return None
    h = v2.batch_header(data, 0)
    (base_offset, _, _, _, _, attributes, delta, base_ts, max_ts, pid, _, base_seq, count) = h
    if not lease.log_append_time and not attributes & _TIMESTAMP_TYPE_MASK:
        earliest = now_ms - lease.timestamp_before_max_ms
        latest = now_ms + lease.timestamp_after_max_ms
        if not (earliest <= base_ts <= latest and earliest <= max_ts <= latest):
            return None
    plain = (
        base_offset == 0
        and size <= lease.max_message_bytes
        and size <= lease.segment_bytes
        and delta >= 0
        and count > 0
        and delta + 1 == count
        and not attributes & _CONTROL_FLAG_MASK
        and (pid < 0 or base_seq >= 0)
    )
    return h if plain else None


def _next_sequence(lease: ProduceLease, h: BatchHeaderTuple) -> int | None:
    known = lease.producers.get(h[9])
    if known is None:
        return None
    epoch, last_sequence, in_transaction = known
    transactional = bool(h[5] & _TRANSACTIONAL_FLAG_MASK)
    if epoch != h[10] or in_transaction != transactional:
        return None
    base_seq = h[11]
    if last_sequence >= I32_MAX or base_seq != last_sequence + 1:
        return None
    last = base_seq + h[6]
    return last if last <= I32_MAX else None


def _must_roll(
    lease: ProduceLease, segment: Segment, size: int, last_offset: int, max_ts: int, now_ms: int
) -> bool:
    current = segment.size
    if current > lease.segment_bytes - size or segment.index_is_full:
        return True
    if not 0 <= last_offset - segment.base_offset <= I32_MAX:
        return True
    if current == 0:
        return False
    first = segment.rolling_based_timestamp
    waited = max_ts - first if first >= 0 else now_ms - lease.segment_created_ms
    return waited > lease.roll_after_ms


def _append_one(
    segment: Segment, lease: ProduceLease, data: bytes, now_ms: int
) -> LeasedAppendResult | None:
    h = _checked_header(lease, data, now_ms)
    if h is None:
        return None
    pid = h[9]
    last_sequence = -1
    if pid >= 0:
        sequence = _next_sequence(lease, h)
        if sequence is None:
            return None
        last_sequence = sequence
    first_offset = segment.next_offset
    last_offset = first_offset + h[6]
    if last_offset > lease.max_last_offset:
        return None
    log_append_time = now_ms if lease.log_append_time else -1
    roll_ts = log_append_time if lease.log_append_time else h[8]
    if _must_roll(lease, segment, len(data), last_offset, roll_ts, now_ms):
        return None
    try:
        first, last, max_ts, offset_of_max_ts, written = segment.append(
            data, partition_leader_epoch=lease.leader_epoch, log_append_time_ms=log_append_time
        )
    except (KafkaCoreError, ValueError, OSError):
        return None  # nothing written: the Python path meets the error and answers it
    if pid >= 0:
        epoch, _, in_transaction = lease.producers[pid]
        lease.producers[pid] = (epoch, last_sequence, in_transaction)
    return (
        first,
        last,
        max_ts,
        offset_of_max_ts,
        written,
        log_append_time,
        h[8],
        pid,
        h[10],
        last_sequence,
        h[12],
        h[5] & _COMPRESSION_CODEC_MASK,
    )


def produce_append(
    appends: Sequence[tuple[Segment, ProduceLease, bytes]], now_ms: int, /
) -> list[LeasedAppendResult | None]:
    """Append each ``records`` as its lease allows (see ``_native.pyi``)."""
    seen: set[int] = set()
    for segment, _, _ in appends:
        if id(segment) in seen:
            raise RuntimeError("Already mutably borrowed: a segment appears twice")
        seen.add(id(segment))
    return [_append_one(segment, lease, data, now_ms) for segment, lease, data in appends]
