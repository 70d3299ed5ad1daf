"""Delayed background work of the log layer (Kafka's ``Scheduler``): the physical
deletion of ``.deleted`` segment files after ``file.delete.delay.ms``, and the flush of a
segment after it is rolled.

* :class:`ThreadScheduler` runs tasks on one daemon thread, in due order. A log made
  without a scheduler shares :func:`default_scheduler`, created on first use.
* :class:`MockScheduler` runs tasks only when a :class:`~kafkacore.log.clock.MockTime`
  moves past their due time (or :meth:`MockScheduler.tick` is called): deterministic tests.

A task that raises is logged (logger ``kafkacore.log``) and dropped; the scheduler keeps
running. Thread-safety: ``schedule_once`` may be called from any thread.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Protocol

from kafkacore.log.clock import SYSTEM_TIME, MockTime, Time

__all__ = ["MockScheduler", "Scheduler", "ThreadScheduler", "default_scheduler"]

logger = logging.getLogger("kafkacore.log")

Task = Callable[[], None]


class Scheduler(Protocol):
    """Runs ``task`` once, ``delay_ms`` from now, off the caller's thread."""

    def schedule_once(self, name: str, task: Task, delay_ms: int = 0) -> None: ...


def _run(name: str, task: Task) -> None:
    try:
        task()
    except Exception:
        logger.exception("scheduled task %r failed", name)


class ThreadScheduler:
    """One daemon thread running tasks in due order (ties: first scheduled first)."""

    def __init__(self, name: str = "kafkacore-scheduler", time: Time = SYSTEM_TIME) -> None:
        self._name = name
        self._time = time
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int, str, Task]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._shutdown = False

    def schedule_once(self, name: str, task: Task, delay_ms: int = 0) -> None:
        due_ns = self._time.nanoseconds() + max(delay_ms, 0) * 1_000_000
        with self._cond:
            if self._shutdown:
                raise RuntimeError(f"scheduler {self._name} is shut down")
            heapq.heappush(self._queue, (due_ns, next(self._seq), name, task))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()

    @property
    def pending(self) -> int:
        """Tasks not yet run."""
        with self._cond:
            return len(self._queue)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._shutdown and not self._queue:
                        return
                    if self._queue:
                        wait_ns = self._queue[0][0] - self._time.nanoseconds()
                        if wait_ns <= 0 or self._shutdown:
                            _, _, name, task = heapq.heappop(self._queue)
                            break
                        self._cond.wait(wait_ns / 1e9)
                    else:
                        self._cond.wait()
            _run(name, task)

    def shutdown(self, run_pending: bool = True) -> None:
        """Stop the thread. ``run_pending``: run every queued task now (due or not);
        otherwise drop them."""
        with self._cond:
            self._shutdown = True
            if not run_pending:
                self._queue.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()


class MockScheduler:
    """Runs due tasks when its :class:`MockTime` sleeps, or on :meth:`tick`."""

    def __init__(self, time: MockTime) -> None:
        self._time = time
        self._lock = threading.Lock()
        self._queue: list[tuple[int, int, str, Task]] = []
        self._seq = itertools.count()
        time.add_listener(self._on_time_moved)

    def schedule_once(self, name: str, task: Task, delay_ms: int = 0) -> None:
        with self._lock:
            due = self._time.milliseconds() + max(delay_ms, 0)
            heapq.heappush(self._queue, (due, next(self._seq), name, task))

    @property
    def pending(self) -> list[str]:
        """Names of the tasks not yet run, in due order."""
        with self._lock:
            return [name for _, _, name, _ in sorted(self._queue)]

    def _on_time_moved(self) -> None:
        self.tick()

    def tick(self) -> int:
        """Run every task due at the current mock time; returns how many ran."""
        ran = 0
        while True:
            with self._lock:
                if not self._queue or self._queue[0][0] > self._time.milliseconds():
                    return ran
                _, _, name, task = heapq.heappop(self._queue)
            _run(name, task)
            ran += 1


_default: ThreadScheduler | None = None
_default_lock = threading.Lock()


def default_scheduler() -> ThreadScheduler:
    """The process-wide scheduler of logs created without one (one daemon thread)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ThreadScheduler()
        return _default
