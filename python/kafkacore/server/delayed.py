"""Delayed fetches (Kafka's ``DelayedFetch`` and its purgatory, and ``DelayedRemoteFetch``
for a partition read from the remote tier) and delayed ``acks=-1`` produces
(``DelayedProduce``), on asyncio.

A fetch that has fewer than ``min_bytes`` waits for up to ``max_wait_ms``
(:class:`DelayedFetch`); an append to any of its partitions, a high watermark move or a
leadership change wakes it (:meth:`FetchPurgatory.wake`), and it re-reads - without
updating a follower's fetch state again, as Kafka's purgatory reads. Waiters are asyncio
futures keyed by partition.

A fetch with a partition below a tiered log's local start waits for its remote read
(:class:`DelayedRemoteFetch`) up to ``remote.fetch.max.wait.ms``, or until a partition of
the fetch is no longer hosted here.

Thread-safety: :class:`FetchPurgatory`, :class:`DelayedFetch` and
:class:`DelayedRemoteFetch`: event loop thread only (the remote read runs on the remote
log manager's reader pool and completes a future); :meth:`ProducePurgatory.wake` from any thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from kafkacore.log import TopicPartition
from kafkacore.net.timeouts import within

__all__ = ["DelayedFetch", "DelayedRemoteFetch", "FetchPurgatory", "ProducePurgatory"]

_R = TypeVar("_R")


class FetchPurgatory:
    def __init__(self) -> None:
        self._waiters: dict[TopicPartition, set[asyncio.Future[None]]] = {}

    def watched(self) -> int:
        """How many partitions have waiters (for tests and metrics)."""
        return len(self._waiters)

    async def wait(self, partitions: Iterable[TopicPartition], timeout_s: float) -> bool:
        """Wait until one of ``partitions`` gets an append or ``timeout_s`` passes; whether
        it was woken."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        keys = list(dict.fromkeys(partitions))
        for tp in keys:
            self._waiters.setdefault(tp, set()).add(future)
        try:
            await within(asyncio.shield(future), timeout_s)
            return True
        except TimeoutError:
            return False
        finally:
            for tp in keys:
                waiters = self._waiters.get(tp)
                if waiters is not None:
                    waiters.discard(future)
                    if not waiters:
                        del self._waiters[tp]

    def wake(self, tp: TopicPartition) -> None:
        for future in self._waiters.pop(tp, ()):
            if not future.done():
                future.set_result(None)

    def wake_all(self) -> None:
        for tp in list(self._waiters):
            self.wake(tp)


class DelayedFetch(Generic[_R]):
    """A Fetch waiting for data (Kafka's ``DelayedFetch``): watched on its ``partitions``
    in the purgatory until ``complete_now(result)`` holds or ``max_wait_ms`` passed since
    it was made; each wake re-reads with ``reread`` (the replica manager's read with
    ``update_fetch_state=False``). Completes once: the last read is the answer."""

    def __init__(
        self,
        purgatory: FetchPurgatory,
        partitions: Sequence[TopicPartition],
        max_wait_ms: int,
        reread: Callable[[], _R],
        complete_now: Callable[[_R], bool],
    ) -> None:
        self._purgatory = purgatory
        self._partitions = partitions
        self._deadline = time.monotonic() + max_wait_ms / 1000
        self._reread = reread
        self._complete_now = complete_now

    async def complete(self, first: _R) -> _R:
        """The answer, from ``first`` (the read that found too little) on."""
        result = first
        while not self._complete_now(result):
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                break
            woken = await self._purgatory.wait(self._partitions, remaining)
            result = self._reread()
            if not woken:
                break  # timed out: the last read is the answer
        return result


class DelayedRemoteFetch(Generic[_R]):
    """A Fetch waiting for one partition's read from the remote tier (Kafka's
    ``DelayedRemoteFetch``): complete when the read is done, when a partition of the fetch
    is no longer hosted here (``still_hosted()`` false after a wake on its partitions:
    Kafka's cases A-C), or once ``max_wait_ms`` (``remote.fetch.max.wait.ms``) passed, the
    read then cancelled. :meth:`complete` gives the read's result, ``None`` when it did
    not finish in time."""

    def __init__(
        self,
        purgatory: FetchPurgatory,
        partitions: Sequence[TopicPartition],
        max_wait_ms: int,
        remote_read: concurrent.futures.Future[_R],
        still_hosted: Callable[[], bool],
    ) -> None:
        self._purgatory = purgatory
        self._partitions = partitions
        self._deadline = time.monotonic() + max_wait_ms / 1000
        self._remote_read = remote_read
        self._still_hosted = still_hosted

    async def complete(self) -> _R | None:
        read = asyncio.wrap_future(self._remote_read)
        try:
            while not read.done():
                remaining = self._deadline - time.monotonic()
                if remaining <= 0:
                    break
                woken = asyncio.ensure_future(self._purgatory.wait(self._partitions, remaining))
                try:
                    await asyncio.wait((read, woken), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    woken.cancel()
                if not read.done() and not self._still_hosted():
                    break
            if read.done() and not read.cancelled():
                return read.result()
            return None
        finally:
            if not read.done():
                read.cancel()  # cancels the reader pool's task if it has not started


class ProducePurgatory:
    """Delayed ``acks=-1`` produces (Kafka's ``DelayedProduce``), keyed by the partitions
    whose high watermark completes them. :meth:`wake` may be called from any thread (a
    high watermark moves on the I/O thread that appended or on the loop that handled a
    follower fetch); the waiters are woken on their event loop."""

    def __init__(self) -> None:
        self._waiters: dict[TopicPartition, set[asyncio.Future[None]]] = {}
        self._lock = threading.Lock()

    def watched(self) -> int:
        return len(self._waiters)

    async def wait(
        self,
        partitions: Iterable[TopicPartition],
        timeout_s: float,
        ready: Callable[[], bool] | None = None,
    ) -> bool:
        """Wait until one of ``partitions``' high watermark or leadership changes, or
        ``timeout_s`` passes; whether it was woken. The caller re-checks its
        completion after each wake (an operation completes once). ``ready``, asked once
        the waiter is registered (so a move on an I/O thread between the caller's check
        and the registration is not missed, Kafka's ``tryCompleteElseWatch``): when it
        says the operation can complete, no wait."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        keys = list(dict.fromkeys(partitions))
        with self._lock:
            for tp in keys:
                self._waiters.setdefault(tp, set()).add(future)
        try:
            if ready is not None and ready():
                return True
            await within(asyncio.shield(future), max(0.0, timeout_s))
            return True
        except TimeoutError:
            return False
        finally:
            with self._lock:
                for tp in keys:
                    waiters = self._waiters.get(tp)
                    if waiters is not None:
                        waiters.discard(future)
                        if not waiters:
                            del self._waiters[tp]

    def wake(self, tp: TopicPartition) -> None:
        with self._lock:
            futures = self._waiters.pop(tp, None)
        if not futures:
            return
        for future in futures:
            floop = future.get_loop()
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is floop:
                if not future.done():
                    future.set_result(None)
            elif not floop.is_closed():
                floop.call_soon_threadsafe(_set_done, future)

    def wake_all(self) -> None:
        with self._lock:
            keys = list(self._waiters)
        for tp in keys:
            self.wake(tp)


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
