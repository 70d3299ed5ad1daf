"""The native produce path under Python's decisions: per-partition leases and the one
backend call that appends a Produce request's batches under them.

Python decides, the backend carries out. A lease (the backend's ``ProduceLease``) is
the snapshot of what the Python path would decide for a plain client batch on one
partition (:func:`lease_for`): the leader epoch to stamp (the latest of the epoch
cache, so no checkpoint write), the configuration's limits (``max.message.bytes``,
``segment.bytes``, the CreateTime window or LogAppendTime), when the active segment
rolls (``segment.ms`` minus its jitter, its creation time), the last offset before
``flush.messages`` asks for an fsync, and the sequence state of every producer the
partition knows. The partition grants it (leadership and, for ``acks=-1``, an ISR that
needs no follower; :meth:`Partition.grant_produce_lease
<kafkacore.server.partition.Partition.grant_produce_lease>`); the log drops it under
its lock before anything it snapshots changes (:meth:`Log.grant_lease
<kafkacore.log.log.Log.grant_lease>`). The handler asks only after ACLs, quotas and
transaction checks have allowed the request.

:func:`append_leased` then holds each log's lock and makes one backend call,
``produce_append``, with the GIL released (native) - validation, sequence check,
append, indexes - and applies each result to the log's end offset and producer state as
the Python path's :meth:`Log.append <kafkacore.log.log.Log.append>` would. A batch the
lease does not cover (an error, a roll, a flush, an unknown producer, a transaction's
first batch, ...) comes back ``None``, nothing written, for the Python path, which stays
the reference (``tests/test_produce_lease.py`` compares both, file for file).

Thread-safety: :func:`append_leased` takes each log's lock without waiting (a busy log
goes the Python path); :func:`lease_for` is called under the log's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kafkacore._backend import LeaseState
from kafkacore.log.producer_state import NO_PRODUCER_EPOCH

if TYPE_CHECKING:
    from kafkacore.log.log import Log, LogAppendInfo

__all__ = ["append_leased", "lease_for"]

_I64_MAX = 2**63 - 1


def lease_for(log: Log, leader_epoch: int) -> LeaseState | None:
    """The lease of ``log`` at ``leader_epoch`` (``None``: the log is not in a plain
    state - closed, offline, compacted, or its epoch cache does not end at
    ``leader_epoch``). Called under the log's lock."""
    if log._closed or log._storage_error is not None:
        return None
    config = log._config
    if config.compact or leader_epoch < 0 or log._epoch_cache.latest_epoch() != leader_epoch:
        return None
    active = log._segments.active_segment
    producers: dict[int, tuple[int, int, bool]] = {}
    manager = log._producer_state
    if manager is not None:
        for pid, entry in manager.active_producers.items():
            if entry.producer_epoch != NO_PRODUCER_EPOCH:
                in_txn = entry.current_txn_first_offset is not None
                producers[pid] = (entry.producer_epoch, entry.last_seq, in_txn)
    # the Python path flushes once log end - recovery point >= flush.messages
    max_last_offset = min(log._recovery_point + config.flush_messages - 2, _I64_MAX)
    return log._backend.ProduceLease(
        leader_epoch=leader_epoch,
        max_message_bytes=config.max_message_bytes,
        segment_bytes=config.segment_bytes,
        log_append_time=config.message_timestamp_type == "LogAppendTime",
        timestamp_before_max_ms=config.message_timestamp_before_max_ms,
        timestamp_after_max_ms=config.message_timestamp_after_max_ms,
        roll_after_ms=log._max_segment_ms - active.roll_jitter_ms,
        segment_created_ms=active.created_ms,
        max_last_offset=max_last_offset,
        producers=producers,
    )


def append_leased(
    appends: Sequence[tuple[Log, bytes]], required_acks: int
) -> list[LogAppendInfo | None]:
    """Append each ``(log, records)`` under the log's lease in one backend call; per
    entry its :class:`~kafkacore.log.log.LogAppendInfo`, or ``None`` when the Python path
    must append it (no lease covering ``required_acks``, the log busy, or the backend
    declined). The logs must be distinct and share one backend."""
    from kafkacore.log.log import LogAppendInfo

    results: list[LogAppendInfo | None] = [None] * len(appends)
    held: list[int] = []
    calls = []
    try:
        for i, (log, records) in enumerate(appends):
            if not log._lock.acquire(blocking=False):
                continue
            held.append(i)
            lease = log._lease
            if lease is None or (required_acks == -1 and not log._lease_acks_all):
                continue
            calls.append((i, log, lease, records))
        if not calls:
            return results
        first = calls[0][1]
        now_ms = first._time.milliseconds()
        outcomes = first._backend.produce_append(
            [
                (log._segments.active_segment.files, lease, records)
                for _, log, lease, records in calls
            ],
            now_ms,
        )
        for (i, log, lease, _), outcome in zip(calls, outcomes, strict=True):
            if outcome is None:
                continue
            (first_offset, last, max_ts, offset_of_max_ts, written, append_time,
             batch_max_ts, pid, _, last_seq, count, codec) = outcome  # fmt: skip
            log._log_end_offset = last + 1
            manager = log._producer_state
            if manager is not None:
                manager.append_in_sequence(
                    pid, last_seq, first_offset, last, batch_max_ts, log._log_end_offset
                )
            results[i] = LogAppendInfo(
                first_offset,
                last,
                max_ts,
                offset_of_max_ts,
                append_time,
                log._log_start_offset,
                written,
                lease.leader_epoch,
                codec,
                1,
                count,
            )
    finally:
        for i in held:
            appends[i][0]._lock.release()
    return results
