"""Replication throttles (KIP-73): Kafka's ``ReplicationQuotaManager``, one for the
leader side and one for the follower side of a broker.

The rate is a sampled byte rate as Kafka's ``SimpleRate`` over a ``SampledStat`` measures
it: up to ``replication.quota.window.num`` + 1 samples of
``replication.quota.window.size.seconds`` each; a sample whose last event is
``num * size`` old or older is reset (purged); the rate is the sum of the samples over the
time since the oldest sample started, that time being at least one window (so a first
burst is measured over one whole window, not over the milliseconds it took). The quota is
exceeded when that rate is above the bound (``leader.replication.throttled.rate`` /
``follower.replication.throttled.rate``; ``Long.MAX_VALUE``, the default, is unbounded).
:meth:`ReplicationQuota.record` counts bytes whether or not the quota is exceeded.

Which partitions are throttled comes from the topic configs
``leader.replication.throttled.replicas`` / ``follower.replication.throttled.replicas``:
``*`` (every partition) or ``partition:broker`` pairs of which a broker keeps those naming
its own id (Kafka's ``ConfigHandler.parseThrottledPartitions``).

Thread-safety: every method may be called from any thread (the fetch handler may run on
an I/O thread, the replica fetchers on the event loop).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALL_PARTITIONS",
    "UNBOUNDED",
    "ReplicationQuota",
    "SampledRate",
    "parse_throttled_partitions",
]

UNBOUNDED: Final = 2**63 - 1  # Long.MAX_VALUE: no throttle
ALL_PARTITIONS: Final = "*"
DEFAULT_WINDOW_NUM: Final = 11
DEFAULT_WINDOW_SIZE_S: Final = 1


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


def parse_throttled_partitions(value: str | Iterable[str], broker_id: int) -> frozenset[int] | str:
    """The partitions a ``*.replication.throttled.replicas`` value throttles on broker
    ``broker_id``: :data:`ALL_PARTITIONS` for ``*``, else the ``p`` of each ``p:b`` whose
    ``b`` is ``broker_id`` (an empty value: none). The value was validated when it was
    set (``ThrottledReplicaListValidator``)."""
    entries = (
        [e.strip() for e in value.split(",")]
        if isinstance(value, str)
        else [str(e).strip() for e in value]
    )
    entries = [e for e in entries if e]
    if entries == [ALL_PARTITIONS]:
        return ALL_PARTITIONS
    partitions = set()
    for entry in entries:
        partition, _, broker = entry.partition(":")
        if int(broker.strip()) == broker_id:
            partitions.add(int(partition.strip()))
    return frozenset(partitions)


@dataclass(slots=True)
class _Sample:
    start_ms: int
    last_event_ms: int
    value: float = 0.0

    def reset(self, now_ms: int) -> None:
        self.start_ms = self.last_event_ms = now_ms
        self.value = 0.0


class SampledRate:
    """A byte rate over ``samples`` windows of ``window_ms`` (Kafka's ``SimpleRate`` with a
    windowed sum). Not thread-safe: :class:`ReplicationQuota` holds the lock."""

    def __init__(self, samples: int, window_ms: int) -> None:
        if samples < 1 or window_ms < 1:
            raise ValueError("a rate needs at least one sample of at least 1 ms")
        self.samples = samples
        self.window_ms = window_ms
        self._samples: list[_Sample] = []
        self._current = 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            sample = self._advance(now_ms)
        sample.value += value
        sample.last_event_ms = now_ms

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms, now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: int) -> _Sample:
        # one sample more than configured: the oldest may still overlap the window
        self._current = (self._current + 1) % (self.samples + 1)
        if self._current >= len(self._samples):
            sample = _Sample(now_ms, now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def _purge(self, now_ms: int) -> None:
        expire_ms = self.samples * self.window_ms
        for sample in self._samples:
            if now_ms - sample.last_event_ms >= expire_ms:
                sample.reset(now_ms)

    def total(self, now_ms: int) -> float:
        """The bytes the retained samples hold."""
        self._purge(now_ms)
        return sum(s.value for s in self._samples)

    def window_size_ms(self, now_ms: int) -> int:
        """Since the oldest retained sample started, at least one window."""
        self._purge(now_ms)
        oldest = min((s.start_ms for s in self._samples), default=now_ms)
        return max(now_ms - oldest, self.window_ms)

    def measure(self, now_ms: int) -> float:
        """Bytes per second."""
        total = self.total(now_ms)
        return total / (self.window_size_ms(now_ms) / 1000)


class ReplicationQuota:
    """One side's throttle (Kafka's ``ReplicationQuotaManager``): the bound, the byte rate
    of the throttled partitions' replication traffic and the throttled partitions."""

    def __init__(
        self,
        bound: int = UNBOUNDED,
        *,
        samples: int = DEFAULT_WINDOW_NUM,
        window_size_s: int = DEFAULT_WINDOW_SIZE_S,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self._lock = threading.Lock()
        self._rate = SampledRate(samples, window_size_s * 1000)
        self._bound = bound
        self._clock = clock
        self._throttled: dict[str, frozenset[int] | str] = {}

    # -- the rate --------------------------------------------------------------------------

    @property
    def upper_bound(self) -> int:
        """Bytes per second (:data:`UNBOUNDED`: no throttle)."""
        return self._bound

    def update_quota(self, bound: int) -> None:
        with self._lock:
            self._bound = bound

    def record(self, value: int) -> None:
        """Count ``value`` bytes, exceeded or not."""
        if value <= 0:
            return
        with self._lock:
            self._rate.record(value, self._clock())

    def rate(self) -> float:
        """The measured bytes per second."""
        with self._lock:
            return self._rate.measure(self._clock())

    def is_quota_exceeded(self) -> bool:
        """The measured rate is above the bound (never when unbounded)."""
        with self._lock:
            if self._bound >= UNBOUNDED:
                return False
            return self._rate.measure(self._clock()) > self._bound

    # -- the throttled partitions ----------------------------------------------------------

    def mark_throttled(self, topic: str, partitions: frozenset[int] | str) -> None:
        """``topic``'s throttled partitions become ``partitions`` (or :data:`ALL_PARTITIONS`)."""
        with self._lock:
            self._throttled[topic] = partitions

    def remove_throttle(self, topic: str) -> None:
        with self._lock:
            self._throttled.pop(topic, None)

    def update_throttled_replicas(self, topic: str, value: str | None, broker_id: int) -> None:
        """Apply a ``*.replication.throttled.replicas`` value (None or empty: no throttle),
        as Kafka's ``TopicConfigHandler`` does."""
        if value is None or not value.strip():
            self.remove_throttle(topic)
        else:
            self.mark_throttled(topic, parse_throttled_partitions(value, broker_id))

    def is_throttled(self, topic: str, partition: int) -> bool:
        found = self._throttled.get(topic)
        if found is None:
            return False
        return found == ALL_PARTITIONS or partition in found
