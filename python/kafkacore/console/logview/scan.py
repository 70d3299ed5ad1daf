"""Scans of a partition's files under a budget, in the console's worker process.

Every scan takes a :class:`Budget` (bytes, a deadline and a cancel event, checked between
chunks) and raises :class:`ScanCancelled` when it runs out. The whole-segment scans
(header walks, key indexing, filtered reads) run one segment chunk (:data:`TASK_BYTES`) at
a time in a worker *process* (:func:`scan_pool`, ``spawn``ed, ``nice`` 19; :func:`run_task`),
so the broker's event loop never waits for the GIL behind them and the kernel serves the
broker first; progress kept between chunks makes them resumable.
``KAFKACORE_CONSOLE_SCAN_PROCESS=0`` runs them in the calling thread.

Also the header walk the worker tasks share (:func:`walk_headers`: RecordBatch v2 headers
read without the records).

Thread-safety: :class:`Budget` is shared by the threads of one request (its counter is not
locked: a few bytes over); the pool is created and shut down under a lock.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kafkacore.errors import KafkaCoreError
from kafkacore.native import backend
from kafkacore.record.layout import (
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
)

__all__ = [
    "HEADER",
    "KEY_CHUNK",
    "NO_END",
    "OFFSET_AND_LENGTH",
    "TASK_BYTES",
    "Budget",
    "ScanCancelled",
    "file_identity",
    "legacy_records",
    "run_task",
    "scan_pool",
    "shutdown_scan_pool",
    "use_process",
    "walk_headers",
]


# RecordBatch v2's stored header (Kafka's DefaultRecordBatch): baseOffset, batchLength,
# partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, baseTimestamp,
# maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount.
HEADER = struct.Struct(">qiibIhiqqqhii")
assert HEADER.size == RECORD_BATCH_OVERHEAD
OFFSET_AND_LENGTH = struct.Struct(">qi")
MIN_BATCH_LENGTH = 14  # the smallest legacy message after the 12-byte log overhead
WALK_CHUNK = 1 << 20
KEY_CHUNK = 8 << 20
TASK_BYTES = 64 << 20  # one worker task: at most this much of a segment
NO_END = 2**63 - 1


class ScanCancelled(KafkaCoreError):
    """A scan ran out of its budget (bytes, time) or was cancelled (the client left)."""


@dataclass
class Budget:
    """What a scan may spend: ``max_bytes`` read, until ``deadline`` (``time.monotonic``),
    unless ``cancel`` is set. :meth:`spend` raises :class:`ScanCancelled` past any of them.
    Shared by the threads of one request (the counter is not locked: a few bytes over)."""

    max_bytes: int = 1 << 40
    deadline: float = float("inf")
    cancel: threading.Event = field(default_factory=threading.Event)
    spent: int = 0

    @classmethod
    def of(cls, *, seconds: float, max_bytes: int = 1 << 40) -> Budget:
        return cls(max_bytes=max_bytes, deadline=time.monotonic() + seconds)

    def spend(self, nbytes: int = 0) -> None:
        self.spent += nbytes
        if self.cancel.is_set():
            raise ScanCancelled("the scan was cancelled")
        if self.spent > self.max_bytes:
            raise ScanCancelled(f"the scan read its budget of {self.max_bytes} bytes")
        if time.monotonic() > self.deadline:
            raise ScanCancelled("the scan ran out of time")


_pool_lock = threading.Lock()
_pool: concurrent.futures.ProcessPoolExecutor | None = None
_T = TypeVar("_T")


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(19)


def use_process() -> bool:
    return os.environ.get("KAFKACORE_CONSOLE_SCAN_PROCESS", "1") != "0"


def scan_pool() -> concurrent.futures.ProcessPoolExecutor:
    """The one worker process of the console's scans (started on first use; ``spawn``, so
    nothing of the broker's threads or locks is inherited; ``nice`` 19)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority,
            )
        return _pool


def shutdown_scan_pool() -> None:
    """Stop the worker process (the console's shutdown; a later scan starts another)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def run_task(budget: Budget, fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` in the worker process (or here), waiting while the budget allows."""
    budget.spend()
    if not use_process():
        return fn(*args)
    try:
        future = scan_pool().submit(fn, *args)
    except (RuntimeError, concurrent.futures.BrokenExecutor):
        shutdown_scan_pool()
        future = scan_pool().submit(fn, *args)
    while True:
        try:
            return future.result(timeout=0.05)
        except concurrent.futures.TimeoutError:
            try:
                budget.spend()
            except ScanCancelled:
                future.cancel()  # a task is bounded (TASK_BYTES): a running one just ends
                raise
        except concurrent.futures.BrokenExecutor:
            shutdown_scan_pool()  # the next scan starts a new process
            raise ScanCancelled("the scan process ended unexpectedly") from None


def walk_headers(
    fd: int, position: int, stop_position: int, file_size: int
) -> Iterator[tuple[int, int, tuple[Any, ...] | None]]:
    """``(position, size, v2 header or None for a legacy message)`` of each complete batch
    from ``position``, reading headers only (a batch larger than the read-ahead is skipped
    by seeking past it). Ends at ``stop_position`` or at a torn or implausible batch."""
    chunk = b""
    chunk_at = position
    while position + LOG_OVERHEAD + 5 <= file_size and position < stop_position:
        rel = position - chunk_at
        if rel < 0 or rel + RECORD_BATCH_OVERHEAD > len(chunk):
            chunk = os.pread(fd, WALK_CHUNK, position)
            chunk_at, rel = position, 0
        if rel + MAGIC_OFFSET + 1 > len(chunk):
            return
        _offset, length = OFFSET_AND_LENGTH.unpack_from(chunk, rel)
        size = length + LOG_OVERHEAD
        if length < MIN_BATCH_LENGTH or position + size > file_size:
            return
        if chunk[rel + MAGIC_OFFSET] >= 2:
            if rel + RECORD_BATCH_OVERHEAD > len(chunk):
                return
            yield position, size, HEADER.unpack_from(chunk, rel)
        else:
            yield position, size, None
        position += size


def legacy_records(fd: int, position: int, size: int) -> list[tuple[Any, ...]]:
    return list(backend.legacy_records(os.pread(fd, size, position), 0))


def file_identity(path: str) -> tuple[tuple[int, int], int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino), st.st_size
