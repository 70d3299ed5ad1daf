"""Delayed fetches (Kafka's ``DelayedFetch`` purgatory), on asyncio.

A fetch that has fewer than ``min_bytes`` waits for up to ``max_wait_ms``; an append to
any of its partitions wakes it (:meth:`FetchPurgatory.wake`), and it re-reads. Waiters
are asyncio futures keyed by partition.

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from kafkacore.log import TopicPartition

__all__ = ["FetchPurgatory"]


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
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
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
