"""Remote log metadata: the per-partition cache of tiered segments (Kafka's
``RemoteLogMetadataCache``) and the topic-based manager that keeps it from
``__remote_log_metadata`` (Kafka's ``TopicBasedRemoteLogMetadataManager``).

Every state change of a tiered segment is an event appended to the metadata partition
of its user partition (:func:`~kafkacore.log.remote.records.metadata_partition`); each
broker consumes the metadata partitions of the user partitions it hosts and folds the
events into one :class:`RemoteLogMetadataCache` per user partition. A publish waits until
the broker's own consumer has read the event back, so a caller sees what it published
(Kafka's ``waitTillConsumptionCatchesUp``).

The topic is reached through a :class:`MetadataTopic` (a Kafka client of the cluster, as
Kafka's manager uses a producer and a consumer):
:class:`kafkacore.client.tiered.ClientMetadataTopic` is kafkacore's synchronous client on
the broker's own listener.

Thread-safety: the cache locks itself; the manager's publish may be called from any
thread (appends are serialized), its consumer runs on its own daemon thread.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable
from typing import Protocol

from kafkacore.log.remote.errors import RemoteStorageError, RemoteStorageNotReadyError
from kafkacore.log.remote.model import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from kafkacore.log.remote.records import (
    REMOTE_LOG_METADATA_TOPIC,
    RemoteLogMetadata,
    RemoteLogMetadataParseError,
    deserialize,
    metadata_partition,
    serialize,
)

__all__ = [
    "MetadataTopic",
    "RemoteLogMetadataCache",
    "TopicBasedRemoteLogMetadataManager",
]

logger = logging.getLogger(__name__)

_FINISHED = RemoteLogSegmentState.COPY_SEGMENT_FINISHED


def _epoch_range(metadata: RemoteLogSegmentMetadata, epoch: int) -> tuple[int, int] | None:
    """``[first, last]`` offsets of ``epoch`` inside the segment, ``None`` if absent."""
    epochs = metadata.segment_leader_epochs
    start = epochs.get(epoch)
    if start is None:
        return None
    later = [o for e, o in epochs.items() if e > epoch]
    end = min(later) - 1 if later else metadata.end_offset
    return start, end


class RemoteLogMetadataCache:
    """The tiered segments of one user partition, by segment id, in their latest state
    (Kafka's ``RemoteLogMetadataCache``; the leader-epoch lookups scan, segments per
    partition being few thousands at most). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._segments: dict[uuid.UUID, RemoteLogSegmentMetadata] = {}
        self.delete_state: RemotePartitionDeleteState | None = None

    def add_copy_in_progress(self, metadata: RemoteLogSegmentMetadata) -> None:
        if metadata.state is not RemoteLogSegmentState.COPY_SEGMENT_STARTED:
            raise ValueError(
                f"a new segment must be COPY_SEGMENT_STARTED, not {metadata.state.name}"
            )
        with self._lock:
            self._segments.setdefault(metadata.segment_id.id, metadata)

    def add(self, metadata: RemoteLogSegmentMetadata) -> None:
        """A segment in any state (a snapshot's, a test's)."""
        with self._lock:
            self._segments[metadata.segment_id.id] = metadata

    def update(self, update: RemoteLogSegmentMetadataUpdate) -> None:
        """Apply a state change (Kafka's ``updateRemoteLogSegmentMetadata``): an unknown
        segment or an invalid transition is logged and ignored, as Kafka's consumer does."""
        with self._lock:
            existing = self._segments.get(update.segment_id.id)
            if existing is None:
                logger.warning("No remote log segment for update %s", update)
                return
            if not existing.state.can_transition_to(update.state):
                logger.warning(
                    "Invalid transition %s -> %s of %s",
                    existing.state.name,
                    update.state.name,
                    update.segment_id,
                )
                return
            if update.state is RemoteLogSegmentState.DELETE_SEGMENT_FINISHED:
                del self._segments[update.segment_id.id]
            else:
                self._segments[update.segment_id.id] = existing.updated(update)

    def segments(self) -> list[RemoteLogSegmentMetadata]:
        """Every known segment (any state), by start offset then event time."""
        with self._lock:
            found = list(self._segments.values())
        return sorted(found, key=lambda m: (m.start_offset, m.event_timestamp_ms))

    def finished_segments(self) -> list[RemoteLogSegmentMetadata]:
        return [m for m in self.segments() if m.state is _FINISHED]

    def segment_for(self, epoch: int, offset: int) -> RemoteLogSegmentMetadata | None:
        """The copied segment holding ``offset`` written in leader epoch ``epoch`` (Kafka's
        ``remoteLogSegmentMetadata(leaderEpoch, offset)``)."""
        best: RemoteLogSegmentMetadata | None = None
        for m in self.finished_segments():
            r = _epoch_range(m, epoch)
            if (
                r is not None
                and r[0] <= offset <= r[1]
                and (best is None or m.event_timestamp_ms > best.event_timestamp_ms)
            ):
                best = m
        return best

    def highest_offset_for_epoch(self, epoch: int) -> int | None:
        """The largest copied offset of ``epoch`` (Kafka's ``highestOffsetForEpoch``)."""
        ends = [r[1] for m in self.finished_segments() if (r := _epoch_range(m, epoch)) is not None]
        return max(ends) if ends else None

    def segments_for_epoch(self, epoch: int) -> list[RemoteLogSegmentMetadata]:
        """Copied segments holding batches of ``epoch`` (Kafka's
        ``listRemoteLogSegments(tp, leaderEpoch)``), by start offset."""
        return [m for m in self.finished_segments() if epoch in m.segment_leader_epochs]


class MetadataTopic(Protocol):
    """Reads and appends ``__remote_log_metadata`` (a Kafka client's view of it)."""

    def ensure_topic(self, partitions: int, replication_factor: int, retention_ms: int) -> None: ...

    def append(self, partition: int, value: bytes) -> int: ...

    def read(self, partition: int, offset: int) -> tuple[list[tuple[int, bytes]], int]: ...

    def end_offset(self, partition: int) -> int: ...

    def close(self) -> None: ...


class TopicBasedRemoteLogMetadataManager:
    """Kafka's ``TopicBasedRemoteLogMetadataManager`` (see the module docstring).

    ``num_partitions``/``replication_factor``/``retention_ms``: Kafka's
    ``remote.log.metadata.topic.*`` (rlmm.config. prefix), ``consume_wait_ms`` its
    ``remote.log.metadata.consume.wait.ms``. :meth:`start` creates the topic if needed
    and starts the consumer thread."""

    def __init__(
        self,
        topic: MetadataTopic,
        *,
        broker_id: int,
        num_partitions: int = 50,
        replication_factor: int = 3,
        retention_ms: int = -1,
        consume_wait_ms: int = 120_000,
        poll_interval_s: float = 0.1,
    ) -> None:
        self._topic = topic
        self.broker_id = broker_id
        self.num_partitions = num_partitions
        self._replication_factor = replication_factor
        self._retention_ms = retention_ms
        self._consume_wait_s = consume_wait_ms / 1000
        self._poll_s = poll_interval_s
        self._lock = threading.Condition()
        self._publish_lock = threading.Lock()
        self._caches: dict[TopicIdPartition, RemoteLogMetadataCache] = {}
        # metadata partition -> next offset to read; partitions consumed
        self._positions: dict[int, int] = {}
        # user partition -> the metadata partition's end offset when the consumer took
        # the assignment (None: not yet asked)
        self._assigned: dict[TopicIdPartition, int | None] = {}
        self._ready: set[TopicIdPartition] = set()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._wake = threading.Event()
        self._started = False
        self.last_error: BaseException | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self, *, wait: bool = True) -> None:
        """Create ``__remote_log_metadata`` if missing and start consuming; the creation
        is retried until it succeeds (Kafka's ``initializeResources``: a cluster may not
        have enough brokers yet). ``wait``: return only once it exists (else at once)."""
        if self._started:
            return
        self._started = True
        created = threading.Event()

        def run() -> None:
            delay = 0.1
            while not self._closed.is_set():
                try:
                    self._topic.ensure_topic(
                        self.num_partitions, self._replication_factor, self._retention_ms
                    )
                    break
                except Exception as exc:
                    self.last_error = exc
                    logger.info("Creating %s failed (retrying): %s", REMOTE_LOG_METADATA_TOPIC, exc)
                    self._closed.wait(delay)
                    delay = min(delay * 2, 5.0)
            created.set()
            self._consume_loop()

        self._thread = threading.Thread(target=run, name="rlmm-consumer", daemon=True)
        self._thread.start()
        if wait:
            created.wait()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._topic.close()

    # -- assignment -------------------------------------------------------------------------

    def metadata_partition(self, tip: TopicIdPartition) -> int:
        return metadata_partition(tip, self.num_partitions)

    def on_partition_leadership_changes(
        self, leaders: Iterable[TopicIdPartition], followers: Iterable[TopicIdPartition]
    ) -> None:
        """Start following the metadata of these user partitions (Kafka's
        ``onPartitionLeadershipChanges``): each is ready once its metadata partition is
        consumed up to the end offset it had when the consumer took the assignment.
        Returns at once (the consumer thread asks the end offsets): safe on an event loop."""
        with self._lock:
            for tip in (*leaders, *followers):
                if tip not in self._assigned:
                    self._assigned[tip] = None
                    self._caches.setdefault(tip, RemoteLogMetadataCache())
        self._wake.set()

    def on_stop_partitions(self, tips: Iterable[TopicIdPartition]) -> None:
        with self._lock:
            for tip in tips:
                self._assigned.pop(tip, None)
                self._ready.discard(tip)

    def is_ready(self, tip: TopicIdPartition) -> bool:
        with self._lock:
            return tip in self._ready

    def wait_ready(self, tip: TopicIdPartition, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while tip not in self._ready:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def _update_ready_locked(self) -> None:
        for tip, end in self._assigned.items():
            if (
                tip not in self._ready
                and end is not None
                and self._positions.get(self.metadata_partition(tip), 0) >= end
            ):
                self._ready.add(tip)
        self._lock.notify_all()

    def _take_assignments(self) -> None:
        """The end offsets of newly assigned partitions' metadata partitions (consumer
        thread: network calls)."""
        with self._lock:
            pending = [tip for tip, end in self._assigned.items() if end is None]
        for tip in pending:
            p = self.metadata_partition(tip)
            try:
                end = self._topic.end_offset(p)
            except Exception as exc:  # the topic is being created, a leader moving
                self.last_error = exc
                continue
            with self._lock:
                if tip in self._assigned:
                    self._assigned[tip] = end
                    self._positions.setdefault(p, 0)
                self._update_ready_locked()

    # -- the consumer -----------------------------------------------------------------------

    def _consume_loop(self) -> None:
        while not self._closed.is_set():
            self._take_assignments()
            moved = False
            with self._lock:
                positions = dict(self._positions)
            for p, offset in positions.items():
                try:
                    records, next_offset = self._topic.read(p, offset)
                except Exception as exc:  # a broker restarting, a leader moving: retried
                    self.last_error = exc
                    logger.debug("reading %s-%d failed: %s", REMOTE_LOG_METADATA_TOPIC, p, exc)
                    continue
                for _offset, value in records:
                    self._apply(value)
                with self._lock:
                    if next_offset > self._positions.get(p, 0):
                        self._positions[p] = next_offset
                        moved = True
                    self._update_ready_locked()
            if not moved:
                self._wake.wait(self._poll_s)
                self._wake.clear()

    def _apply(self, value: bytes) -> None:
        try:
            event = deserialize(value)
        except RemoteLogMetadataParseError as exc:
            logger.error("Skipping an unreadable %s record: %s", REMOTE_LOG_METADATA_TOPIC, exc)
            return
        with self._lock:
            cache = self._caches.setdefault(event.topic_id_partition, RemoteLogMetadataCache())
        match event:
            case RemoteLogSegmentMetadata():
                if event.state is RemoteLogSegmentState.COPY_SEGMENT_STARTED:
                    cache.add_copy_in_progress(event)
                else:
                    cache.add(event)
            case RemoteLogSegmentMetadataUpdate():
                cache.update(event)
            case RemotePartitionDeleteMetadata():
                cache.delete_state = event.state

    # -- publishing -------------------------------------------------------------------------

    def _publish(self, event: RemoteLogMetadata) -> None:
        p = self.metadata_partition(event.topic_id_partition)
        with self._publish_lock:
            offset = self._topic.append(p, serialize(event))
        self._wake.set()
        deadline = time.monotonic() + self._consume_wait_s
        with self._lock:
            self._positions.setdefault(p, 0)
            while self._positions[p] <= offset:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RemoteStorageError(
                        f"The consumer of {REMOTE_LOG_METADATA_TOPIC}-{p} did not reach offset "
                        f"{offset} within {self._consume_wait_s} s"
                    )
                self._lock.wait(min(left, 0.5))

    def add_remote_log_segment_metadata(self, metadata: RemoteLogSegmentMetadata) -> None:
        if metadata.state is not RemoteLogSegmentState.COPY_SEGMENT_STARTED:
            raise ValueError("a new remote log segment must be in COPY_SEGMENT_STARTED")
        self._publish(metadata)

    def update_remote_log_segment_metadata(self, update: RemoteLogSegmentMetadataUpdate) -> None:
        self._publish(update)

    def put_remote_partition_delete_metadata(self, metadata: RemotePartitionDeleteMetadata) -> None:
        self._publish(metadata)

    # -- queries ----------------------------------------------------------------------------

    def cache(self, tip: TopicIdPartition) -> RemoteLogMetadataCache:
        """The partition's cache; ``RemoteStorageNotReadyError`` until it is loaded."""
        with self._lock:
            if tip not in self._ready:
                raise RemoteStorageNotReadyError(f"Remote log metadata of {tip} is not loaded yet")
            return self._caches[tip]

    def delete_state(self, tip: TopicIdPartition) -> RemotePartitionDeleteState | None:
        """The last partition-deletion event seen for ``tip`` (``None``: none)."""
        with self._lock:
            cache = self._caches.get(tip)
        return None if cache is None else cache.delete_state

    def remote_log_segment_metadata(
        self, tip: TopicIdPartition, epoch: int, offset: int
    ) -> RemoteLogSegmentMetadata | None:
        return self.cache(tip).segment_for(epoch, offset)

    def highest_offset_for_epoch(self, tip: TopicIdPartition, epoch: int) -> int | None:
        return self.cache(tip).highest_offset_for_epoch(epoch)

    def list_remote_log_segments(
        self, tip: TopicIdPartition, epoch: int | None = None
    ) -> list[RemoteLogSegmentMetadata]:
        cache = self.cache(tip)
        return cache.segments() if epoch is None else cache.segments_for_epoch(epoch)
