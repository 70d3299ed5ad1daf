"""``within(awaitable, timeout_s)``: ``asyncio.wait_for`` without its lost cancellations.

Before Python 3.12, ``asyncio.wait_for`` swallows a cancellation that arrives just as the
awaited thing completes (CPython gh-86296): the cancelled task carries on, and a broker
shutting down waits for it (a replica fetcher's Fetch, a delayed produce). On 3.11+ the
``asyncio.timeout`` context manager has no such race; on 3.10 the awaitable runs as its
own task under ``asyncio.wait``, which never absorbs the caller's cancellation.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["stop_task", "within"]

_T = TypeVar("_T")

logger = logging.getLogger("kafkacore.net")


async def within(awaitable: Awaitable[_T], timeout_s: float | None) -> _T:
    """The awaitable's result, or ``TimeoutError`` after ``timeout_s`` (``None``: no
    limit); a cancellation of the caller always propagates."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout_s):
            return await awaitable
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    finally:
        if not task.done():
            task.cancel()
    if not done:
        raise TimeoutError
    return task.result()


async def stop_task(task: asyncio.Task[None], timeout_s: float = 10.0) -> None:
    """Cancel ``task`` and wait until it is done, cancelling again if a cancellation was
    swallowed on the way (an ``await`` under ``suppress(CancelledError)`` in a callee eats
    it); after ``timeout_s`` it is left behind with a warning, so that a shutdown always
    ends."""
    deadline = time.monotonic() + timeout_s
    while not task.done():
        if time.monotonic() >= deadline:
            logger.warning("%s did not stop within %g s", task.get_name(), timeout_s)
            return
        task.cancel()
        await asyncio.wait({task}, timeout=0.5)
    if not task.cancelled() and task.exception() is not None:
        logger.warning("%s ended with %r", task.get_name(), task.exception())
