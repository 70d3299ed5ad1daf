"""A Fetch waiting for its remote read (:class:`kafkacore.server.delayed.DelayedRemoteFetch`,
Kafka's ``DelayedRemoteFetch``): it completes with the read once a reader thread finishes
it, gives up after ``remote.fetch.max.wait.ms`` (the read cancelled if it has not
started), and completes early when a partition of the fetch leaves this broker - never
blocking the event loop meanwhile."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from kafkacore.log import TopicPartition
from kafkacore.server.delayed import DelayedRemoteFetch, FetchPurgatory

TP = TopicPartition("t", 0)


def test_completes_with_the_read_a_reader_thread_finishes() -> None:
    async def run() -> tuple[str | None, int]:
        release = threading.Event()
        with ThreadPoolExecutor(1) as readers:
            read = readers.submit(lambda: release.wait(5) and "records")
            delayed = DelayedRemoteFetch(FetchPurgatory(), [TP], 5_000, read, lambda: True)
            ticks = 0

            async def tick() -> None:  # the loop keeps running while the read waits
                nonlocal ticks
                while not read.done():
                    ticks += 1
                    if ticks == 5:
                        release.set()
                    await asyncio.sleep(0.01)

            ticker = asyncio.ensure_future(tick())
            result = await delayed.complete()
            await ticker
            return result, ticks

    result, ticks = asyncio.run(run())
    assert result == "records"
    assert ticks >= 5


def test_expires_after_max_wait_and_cancels_a_read_not_started() -> None:
    async def run() -> tuple[str | None, float, Future[str]]:
        never: Future[str] = Future()  # queued behind a busy reader: never started
        delayed = DelayedRemoteFetch(FetchPurgatory(), [TP], 200, never, lambda: True)
        start = time.monotonic()
        result = await delayed.complete()
        return result, time.monotonic() - start, never

    result, waited, read = asyncio.run(run())
    assert result is None
    assert 0.15 <= waited < 2
    assert read.cancelled()


def test_a_partition_leaving_completes_it_early() -> None:
    async def run() -> tuple[str | None, float]:
        purgatory = FetchPurgatory()
        hosted = True
        never: Future[str] = Future()
        delayed = DelayedRemoteFetch(purgatory, [TP], 10_000, never, lambda: hosted)
        waiting = asyncio.ensure_future(delayed.complete())
        await asyncio.sleep(0.05)
        purgatory.wake(TP)  # an append: still hosted, it keeps waiting
        await asyncio.sleep(0.05)
        assert not waiting.done()
        hosted = False
        start = time.monotonic()
        purgatory.wake(TP)  # the partition stopped here (StopReplica, deletion)
        result = await waiting
        return result, time.monotonic() - start

    result, waited = asyncio.run(run())
    assert result is None
    assert waited < 1
