"""The copy and fetch throttles of the remote tier (Kafka's ``RLMQuotaManager``): a byte
rate measured over ``window_num`` windows of ``window_size_s`` seconds, the way Kafka's
``Rate`` stat samples it.

``remote.log.manager.copy.max.bytes.per.second`` throttles the copy tasks: a task asks
:meth:`throttle_time_ms` before each segment and waits that long (Kafka's copy task waits
on the quota manager's condition). ``remote.log.manager.fetch.max.bytes.per.second``
throttles remote reads: while :meth:`is_quota_exceeded`, a Fetch reads nothing from the
remote tier for that round (Kafka's ``ReplicaManager`` skips the remote read).

Thread-safety: one lock; any thread may record and ask.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["RLMQuotaManager"]


class RLMQuotaManager:
    """A byte-rate quota (see the module docstring). ``max_bytes_per_s`` of Kafka's
    default (``Long.MAX_VALUE``) means unthrottled."""

    def __init__(
        self,
        max_bytes_per_s: int,
        *,
        window_num: int = 11,
        window_size_s: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self.max_bytes_per_s = max_bytes_per_s
        self._window_num = window_num
        self._window_s = float(window_size_s)
        self._clock = clock
        self._samples: dict[int, int] = {}  # window index -> bytes

    @property
    def unlimited(self) -> bool:
        return self.max_bytes_per_s >= (1 << 63) - 1

    def update_quota(self, max_bytes_per_s: int) -> None:
        with self._lock:
            self.max_bytes_per_s = max_bytes_per_s

    def _window(self, now: float) -> int:
        return int(now // self._window_s)

    def _purge(self, current: int) -> None:
        for w in [w for w in self._samples if w <= current - self._window_num]:
            del self._samples[w]

    def record(self, n_bytes: int) -> None:
        now = self._clock()
        with self._lock:
            current = self._window(now)
            self._purge(current)
            self._samples[current] = self._samples.get(current, 0) + n_bytes

    def _rate(self, now: float) -> float:
        current = self._window(now)
        self._purge(current)
        total = sum(self._samples.values())
        if not self._samples:
            return 0.0
        oldest = min(self._samples)
        # elapsed over the windows kept, at least one whole window (Kafka's Rate.windowSize)
        elapsed = max(now - oldest * self._window_s, self._window_s)
        return total / elapsed

    def is_quota_exceeded(self) -> bool:
        if self.unlimited:
            return False
        with self._lock:
            return self._rate(self._clock()) > self.max_bytes_per_s

    def throttle_time_ms(self) -> int:
        """How long to wait until the rate is back under the quota (0 when it is)."""
        if self.unlimited:
            return 0
        now = self._clock()
        with self._lock:
            rate = self._rate(now)
            if rate <= self.max_bytes_per_s:
                return 0
            total = sum(self._samples.values())
            oldest = min(self._samples)
            # the time t after which total / (now + t - oldest window's start) == quota
            elapsed = now - oldest * self._window_s
            return max(int(1000 * (total / self.max_bytes_per_s - elapsed)) + 1, 1)
