"""Delayed fetches (Kafka's ``DelayedFetch`` purgatory) and delayed ``acks=-1``
produces (``DelayedProduce``), on asyncio.

A fetch that has fewer than ``min_bytes`` waits for up to ``max_wait_ms``; an append to
any of its partitions wakes it (:meth:`FetchPurgatory.wake`), and it re-reads. Waiters
are asyncio futures keyed by partition.

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable

from kafkacore.log import TopicPartition
from kafkacore.net.timeouts import within

__all__ = ["FetchPurgatory", "ProducePurgatory"]


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
