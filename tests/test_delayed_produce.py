"""The delayed-produce purgatory (``server/delayed.py``): a high watermark that moves
between a waiter's check and its registration is not a lost wake-up (it used to cost the
waiter the 0.5 s bound of ``ReplicaManager.wait_for_replication``)."""

from __future__ import annotations

import asyncio
import threading
import time

from kafkacore.log import TopicPartition
from kafkacore.server.delayed import ProducePurgatory

TP = TopicPartition("t", 0)


def test_ready_once_registered_returns_at_once() -> None:
    async def scenario() -> None:
        purgatory = ProducePurgatory()
        asked: list[int] = []

        def ready() -> bool:
            asked.append(purgatory.watched())  # registered before being asked
            return True

        started = time.monotonic()
        assert await purgatory.wait([TP], 5.0, ready)
        assert time.monotonic() - started < 1.0
        assert asked == [1] and purgatory.watched() == 0

    asyncio.run(scenario())


def test_not_ready_waits_for_a_wake_from_another_thread() -> None:
    async def scenario() -> None:
        purgatory = ProducePurgatory()
        timer = threading.Timer(0.05, purgatory.wake, args=(TP,))
        timer.start()
        started = time.monotonic()
        assert await purgatory.wait([TP], 5.0, lambda: False)
        assert time.monotonic() - started < 2.0
        assert not await purgatory.wait([TP], 0.05, lambda: False)  # nobody wakes it
        timer.join()

    asyncio.run(scenario())
