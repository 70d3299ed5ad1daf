"""Time for the log layer (Kafka's ``org.apache.kafka.common.utils.Time``): the system
clock, and :class:`MockTime` so that tests of ``segment.ms``, ``retention.ms`` and
``file.delete.delay.ms`` move time instead of sleeping.

Thread-safety: both are safe to call from any thread.
"""

from __future__ import annotations

import threading
import time as _time
from collections.abc import Callable

__all__ = ["SYSTEM_TIME", "MockTime", "Time"]


class Time:
    """Wall-clock milliseconds (``System.currentTimeMillis``) and a monotonic clock."""

    def milliseconds(self) -> int:
        """Milliseconds since the epoch (what timestamps and retention use)."""
        return _time.time_ns() // 1_000_000

    def nanoseconds(self) -> int:
        """A monotonic clock, for measuring intervals."""
        return _time.monotonic_ns()

    def sleep(self, ms: int) -> None:
        _time.sleep(ms / 1000)


SYSTEM_TIME = Time()


class MockTime(Time):
    """A clock that moves only when told to. ``sleep(ms)`` advances it and then runs the
    listeners (a :class:`~kafkacore.log.scheduler.MockScheduler` registers itself, so
    tasks that became due run inside ``sleep``, as with Kafka's ``MockTime``)."""

    def __init__(self, start_ms: int = 1_700_000_000_000, start_ns: int = 0) -> None:
        self._lock = threading.Lock()
        self._ms = start_ms
        self._ns = start_ns
        self._listeners: list[Callable[[], None]] = []

    def milliseconds(self) -> int:
        with self._lock:
            return self._ms

    def nanoseconds(self) -> int:
        with self._lock:
            return self._ns

    def sleep(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"cannot sleep a negative time: {ms}")
        with self._lock:
            self._ms += ms
            self._ns += ms * 1_000_000
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def set_milliseconds(self, ms: int) -> None:
        """Jump to ``ms`` (forward only)."""
        with self._lock:
            delta = ms - self._ms
        self.sleep(delta)

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after every ``sleep``."""
        with self._lock:
            self._listeners.append(listener)
