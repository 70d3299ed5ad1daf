"""Kafka's ``RemoteLogManager``: the broker side of tiered storage.

Per partition whose topic has ``remote.storage.enable=true`` (and the broker
``remote.log.storage.system.enable=true``), on its own thread pools:

* **copy** (leader, every ``remote.log.manager.task.interval.ms``; Kafka's
  ``RLMCopyTask``): each closed segment wholly below the last stable offset and above the
  highest offset already tiered is copied, one after the other: ``COPY_SEGMENT_STARTED``
  published, its ``.log``, ``.index``, ``.timeindex``, ``.txnindex``, the producer
  snapshot and the leader epochs up to the next segment uploaded, ``COPY_SEGMENT_FINISHED``
  published (the commit point), then the log told its highest tiered offset, after which
  (and only after which) local retention may delete the segment. A leader that lost its
  leadership meanwhile deletes what it uploaded instead. Throttled by
  ``remote.log.manager.copy.max.bytes.per.second``; ``remote.log.copy.disable`` stops it.
* **expiration** (leader; Kafka's ``RLMExpirationTask``): retention over both tiers —
  ``retention.ms`` on the segments' largest timestamps, ``retention.bytes`` on the remote
  size plus the local bytes not yet tiered, the log start offset (DeleteRecords) — then
  the log start offset moved past what was deleted; copies left ``COPY_SEGMENT_STARTED``
  by a leader that died mid-copy are deleted (Kafka's orphan clean-up).
* **follower** (Kafka's ``RLMFollowerTask``): the highest tiered offset learnt from the
  metadata, so a follower's local retention deletes what is tiered too.

Reads: :meth:`RemoteLogManager.read` serves a Fetch below the local log start from the
bucket (one ranged GET from the offset index's position, whole batches, each batch's CRC
checked; the aborted transactions of read_committed from the remote ``.txnindex`` files,
then the local ones), on the reader pool (``remote.log.reader.threads``) through
:meth:`async_read`, so the event loop never waits on the store; a Fetch while
``remote.log.manager.fetch.max.bytes.per.second`` is exceeded reads nothing remote.
:meth:`async_offset_read` searches the tiered segments, then the local ones, for
ListOffsets by time.
:meth:`build_remote_log_aux_state` is a follower's catch-up from remote state (Kafka's
``TierStateMachine.buildRemoteLogAuxState``).

Thread-safety: one lock over the partition table; each partition's tasks run one at a
time (a task is not submitted again while it runs); reads may run concurrently with
everything (the metadata cache and index cache lock themselves).
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import struct
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafkacore.errors import OffsetOutOfRangeError
from kafkacore.log.checkpoints import EpochEntry, LeaderEpochCheckpointFile
from kafkacore.log.files import TopicPartition, producer_snapshot_file
from kafkacore.log.log import TimestampAndOffset
from kafkacore.log.remote.errors import (
    CorruptRemoteDataError,
    RemoteStorageError,
    RemoteStorageNotReadyError,
)
from kafkacore.log.remote.index_cache import RemoteIndexCache
from kafkacore.log.remote.layout import IndexType
from kafkacore.log.remote.metadata import TopicBasedRemoteLogMetadataManager
from kafkacore.log.remote.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from kafkacore.log.remote.quota import RLMQuotaManager
from kafkacore.log.remote.storage import LogSegmentData, RemoteStorageManager
from kafkacore.log.txn_index import AbortedTxn

__all__ = [
    "RemoteFetchResult",
    "RemoteLogManager",
    "RemoteLogManagerConfig",
    "RemoteLogReadResult",
    "RemoteStorageFetchInfo",
    "TieringStatus",
]

logger = logging.getLogger(__name__)

_INT64_MAX = (1 << 63) - 1
_HEADER = 61
_LENGTH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_S = RemoteLogSegmentState


@dataclass(frozen=True)
class RemoteLogManagerConfig:
    """Kafka's ``RemoteLogManagerConfig`` values the manager uses (defaults Kafka 4.3.1's)."""

    task_interval_ms: int = 30_000
    task_retry_backoff_ms: int = 500
    task_retry_backoff_max_ms: int = 30_000
    task_retry_jitter: float = 0.2
    copier_threads: int = 10
    expiration_threads: int = 10
    follower_threads: int = 2
    reader_threads: int = 10
    reader_max_pending_tasks: int = 100
    copy_max_bytes_per_second: int = _INT64_MAX
    copy_quota_window_num: int = 11
    copy_quota_window_size_seconds: int = 1
    fetch_max_bytes_per_second: int = _INT64_MAX
    fetch_quota_window_num: int = 11
    fetch_quota_window_size_seconds: int = 1
    index_cache_total_size_bytes: int = 1 << 30
    index_cache_ttl_ms: int = 900_000
    custom_metadata_max_bytes: int = 128

    @classmethod
    def from_values(cls, v: Mapping[str, Any]) -> RemoteLogManagerConfig:
        """From broker config values by Kafka's names."""
        return cls(
            task_interval_ms=int(v["remote.log.manager.task.interval.ms"]),
            task_retry_backoff_ms=int(v["remote.log.manager.task.retry.backoff.ms"]),
            task_retry_backoff_max_ms=int(v["remote.log.manager.task.retry.backoff.max.ms"]),
            task_retry_jitter=float(v["remote.log.manager.task.retry.jitter"]),
            copier_threads=int(v["remote.log.manager.copier.thread.pool.size"]),
            expiration_threads=int(v["remote.log.manager.expiration.thread.pool.size"]),
            follower_threads=int(v["remote.log.manager.follower.thread.pool.size"]),
            reader_threads=int(v["remote.log.reader.threads"]),
            reader_max_pending_tasks=int(v["remote.log.reader.max.pending.tasks"]),
            copy_max_bytes_per_second=int(v["remote.log.manager.copy.max.bytes.per.second"]),
            copy_quota_window_num=int(v["remote.log.manager.copy.quota.window.num"]),
            copy_quota_window_size_seconds=int(
                v["remote.log.manager.copy.quota.window.size.seconds"]
            ),
            fetch_max_bytes_per_second=int(v["remote.log.manager.fetch.max.bytes.per.second"]),
            fetch_quota_window_num=int(v["remote.log.manager.fetch.quota.window.num"]),
            fetch_quota_window_size_seconds=int(
                v["remote.log.manager.fetch.quota.window.size.seconds"]
            ),
            index_cache_total_size_bytes=int(v["remote.log.index.file.cache.total.size.bytes"]),
            index_cache_ttl_ms=int(v["remote.log.index.file.cache.ttl.ms"]),
            custom_metadata_max_bytes=int(v["remote.log.metadata.custom.metadata.max.bytes"]),
        )


class RemoteFetchResult(NamedTuple):
    """What a remote read returns: whole batches (``records``; empty when nothing was
    read), the aborted transactions a read_committed reader needs for them, and the
    segment they came from."""

    records: bytes
    aborted_transactions: list[AbortedTxn]
    segment: RemoteLogSegmentMetadata | None
    throttled: bool = False


class RemoteStorageFetchInfo(NamedTuple):
    """A consumer's Fetch partition whose offset lies in the remote tier (Kafka's
    ``RemoteStorageFetchInfo``): where to read, at most how many bytes (the first batch
    whole with ``min_one_message``), and whether the reader is read_committed."""

    topic_partition: TopicPartition
    fetch_offset: int
    max_bytes: int
    min_one_message: bool
    read_committed: bool


class RemoteLogReadResult(NamedTuple):
    """What an asynchronous remote read ended with (Kafka's ``RemoteLogReadResult``): the
    records read, or the error that stopped it (the Fetch answers its code)."""

    fetched: RemoteFetchResult | None
    error: Exception | None = None


class TieringStatus(NamedTuple):
    """One partition's tiering state, for tools and the console."""

    topic_partition: TopicPartition
    role: str  # "leader", "follower"
    remote_segments: int
    remote_size_bytes: int
    remote_start_offset: int  # -1: nothing tiered
    highest_tiered_offset: int  # -1: nothing tiered
    copy_lag_segments: int  # closed local segments not yet tiered (leader)
    copy_lag_bytes: int
    last_error: str | None


@dataclass
class _Partition:
    tp: TopicPartition
    tip: TopicIdPartition
    leader: bool
    leader_epoch: int
    next_run: float = 0.0
    running: set[str] = field(default_factory=set)
    failures: int = 0
    last_error: str | None = None
    copying: set[uuid.UUID] = field(default_factory=set)
    stopped: bool = False


def _log_failure(what: str) -> Callable[[Future[Any]], None]:
    def done(future: Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            logger.error("%s failed: %s", what, future.exception(), exc_info=future.exception())

    return done


class _Cancelled(Exception):
    """The partition's leadership (or the manager) went away during a task."""


def _crc_ok(buf: bytes | memoryview, pos: int, size: int) -> bool:
    from kafkacore.native import backend

    stored: int = _CRC.unpack_from(buf, pos + 17)[0]
    return int(backend.crc32c(bytes(buf[pos + 21 : pos + size]))) == stored


class RemoteLogManager:
    """Kafka's ``RemoteLogManager`` (see the module docstring).

    ``get_log(tp)`` gives the partition's :class:`~kafkacore.log.log.Log` (``None`` once
    gone); ``high_watermark(tp)`` its high watermark (the copy task tiers only below the
    last stable offset under it); ``log_dir``: where the remote index cache lives."""

    def __init__(
        self,
        config: RemoteLogManagerConfig,
        *,
        broker_id: int,
        log_dir: str,
        rsm: RemoteStorageManager,
        rlmm: TopicBasedRemoteLogMetadataManager,
        get_log: Callable[[TopicPartition], Any],
        high_watermark: Callable[[TopicPartition], int],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.broker_id = broker_id
        self.rsm = rsm
        self.rlmm = rlmm
        self._get_log = get_log
        self._high_watermark = high_watermark
        self._clock = clock
        self.index_cache = RemoteIndexCache(
            log_dir,
            rsm,
            max_bytes=config.index_cache_total_size_bytes,
            ttl_ms=config.index_cache_ttl_ms,
        )
        self.copy_quota = RLMQuotaManager(
            config.copy_max_bytes_per_second,
            window_num=config.copy_quota_window_num,
            window_size_s=config.copy_quota_window_size_seconds,
        )
        self.fetch_quota = RLMQuotaManager(
            config.fetch_max_bytes_per_second,
            window_num=config.fetch_quota_window_num,
            window_size_s=config.fetch_quota_window_size_seconds,
        )
        self._copiers = ThreadPoolExecutor(config.copier_threads, "rlm-copier")
        self._expirers = ThreadPoolExecutor(config.expiration_threads, "rlm-expiration")
        self._followers = ThreadPoolExecutor(config.follower_threads, "rlm-follower")
        self._readers = ThreadPoolExecutor(config.reader_threads, "rlm-reader")
        self._pending_reads = threading.BoundedSemaphore(config.reader_max_pending_tasks)
        self._lock = threading.Lock()
        self._partitions: dict[TopicPartition, _Partition] = {}
        self._closed = threading.Event()
        self._wake = threading.Event()
        self._scheduler: threading.Thread | None = None
        self.copied_segments = 0
        self.deleted_segments = 0

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the task scheduler (the metadata manager is started by its owner)."""
        if self._scheduler is None:
            self._scheduler = threading.Thread(
                target=self._schedule_loop, name="rlm-scheduler", daemon=True
            )
            self._scheduler.start()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._scheduler is not None:
            self._scheduler.join(timeout=10)
        for pool in (self._copiers, self._expirers, self._followers, self._readers):
            pool.shutdown(wait=False, cancel_futures=True)
        self.index_cache.close()

    # -- leadership -----------------------------------------------------------------------------

    def on_leadership_change(
        self,
        leaders: Mapping[TopicPartition, tuple[uuid.UUID, int]],
        followers: Mapping[TopicPartition, tuple[uuid.UUID, int]],
    ) -> None:
        """Partitions this broker now leads or follows, with their topic id and leader
        epoch (Kafka's ``onLeadershipChange``; only tiered topics are to be passed)."""
        with self._lock:
            for tps, leader in ((leaders, True), (followers, False)):
                for tp, (topic_id, epoch) in tps.items():
                    tip = TopicIdPartition(topic_id, tp.topic, tp.partition)
                    current = self._partitions.get(tp)
                    if current is not None and current.tip == tip:
                        current.leader, current.leader_epoch = leader, epoch
                        current.stopped = False
                        current.next_run = 0.0
                    else:
                        self._partitions[tp] = _Partition(tp, tip, leader, epoch)
        self.rlmm.on_partition_leadership_changes(
            [TopicIdPartition(t, tp.topic, tp.partition) for tp, (t, _) in leaders.items()],
            [TopicIdPartition(t, tp.topic, tp.partition) for tp, (t, _) in followers.items()],
        )
        self._wake.set()

    def stop_partitions(
        self, tps: Mapping[TopicPartition, uuid.UUID], *, delete_remote: bool
    ) -> list[Future[int]]:
        """Stop tiering ``tps`` (Kafka's ``stopPartitions``); with ``delete_remote`` (the
        topic is deleted, or ``remote.log.delete.on.disable``) every tiered segment of
        each is deleted, on the expiration pool. Returns the deletions' futures."""
        futures: list[Future[int]] = []
        with self._lock:
            for tp in tps:
                state = self._partitions.pop(tp, None)
                if state is not None:
                    state.stopped = True
        if not delete_remote:
            self.rlmm.on_stop_partitions(
                TopicIdPartition(t, tp.topic, tp.partition) for tp, t in tps.items()
            )
            return futures
        for tp, topic_id in tps.items():
            tip = TopicIdPartition(topic_id, tp.topic, tp.partition)
            future = self._expirers.submit(self._delete_remote_partition_until_done, tip)
            future.add_done_callback(_log_failure(f"Deleting the remote data of {tip}"))
            futures.append(future)
        return futures

    def is_tiered(self, tp: TopicPartition) -> bool:
        with self._lock:
            return tp in self._partitions

    def topic_id_partition(self, tp: TopicPartition) -> TopicIdPartition | None:
        with self._lock:
            state = self._partitions.get(tp)
            return None if state is None else state.tip

    # -- scheduling ------------------------------------------------------------------------------

    def _schedule_loop(self) -> None:
        while not self._closed.is_set():
            now = time.monotonic()
            with self._lock:
                due = [p for p in self._partitions.values() if p.next_run <= now and not p.running]
                for p in due:
                    p.next_run = now + self.config.task_interval_ms / 1000
            for p in due:
                self._submit(p)
            self._wake.wait(0.1)
            self._wake.clear()

    def _submit(self, p: _Partition) -> None:
        if p.leader:
            with self._lock:
                p.running.add("leader")
            self._copiers.submit(self._run_leader_tasks, p)
        else:
            with self._lock:
                p.running.add("follower")
            self._followers.submit(self._run_task, p, "follower", self.run_follower_task)

    def _run_leader_tasks(self, p: _Partition) -> None:
        try:
            self._run_task(p, None, self.run_copy_task)
            self._run_task(p, None, self.run_expiration_task)
        finally:
            with self._lock:
                p.running.discard("leader")

    def _backoff_s(self, failures: int) -> float:
        """The wait before the next try after ``failures`` failures in a row: Kafka's
        ``remote.log.manager.task.retry.backoff.ms``, doubled per failure up to its max,
        with its jitter."""
        backoff: float = min(
            self.config.task_retry_backoff_ms * 2 ** (failures - 1),
            self.config.task_retry_backoff_max_ms,
        )
        return backoff * (1 + random.uniform(-1, 1) * self.config.task_retry_jitter) / 1000

    def _run_task(
        self, p: _Partition, flag: str | None, task: Callable[[TopicPartition], Any]
    ) -> None:
        try:
            task(p.tp)
            with self._lock:
                p.failures = 0
                p.last_error = None
        except _Cancelled:
            pass
        except RemoteStorageNotReadyError:
            with self._lock:
                p.next_run = time.monotonic() + self.config.task_retry_backoff_ms / 1000
        except Exception as exc:
            logger.warning("Tiered storage task of %s failed: %s", p.tp, exc, exc_info=True)
            with self._lock:
                p.failures += 1
                p.last_error = f"{type(exc).__name__}: {exc}"
                p.next_run = time.monotonic() + self._backoff_s(p.failures)
        finally:
            if flag is not None:
                with self._lock:
                    p.running.discard(flag)

    def _state(self, tp: TopicPartition) -> _Partition:
        with self._lock:
            state = self._partitions.get(tp)
        if state is None:
            raise _Cancelled(str(tp))
        return state

    def _check_leader(self, state: _Partition, epoch: int) -> None:
        with self._lock:
            if (
                state.stopped
                or not state.leader
                or state.leader_epoch != epoch
                or self._closed.is_set()
            ):
                raise _Cancelled(str(state.tp))

    # -- the copy task ---------------------------------------------------------------------------

    def _highest_tiered_offset(self, log: Any, tip: TopicIdPartition) -> int:
        """Kafka's ``findHighestRemoteOffset``: the largest copied offset of the latest
        epoch in the log's epoch cache that has one (-1 if none)."""
        cache = self.rlmm.cache(tip)
        for entry in reversed(log.leader_epoch_cache.entries()):
            found = cache.highest_offset_for_epoch(entry.epoch)
            if found is not None:
                return int(found)
        return -1

    def run_copy_task(self, tp: TopicPartition) -> int:
        """One round of the copy task; the number of segments copied."""
        state = self._state(tp)
        epoch = state.leader_epoch
        self._check_leader(state, epoch)
        log = self._get_log(tp)
        if log is None or not log.remote_log_enabled:
            return 0
        if log.config.remote_log_copy_disable:
            return 0
        highest = self._highest_tiered_offset(log, state.tip)
        log.update_highest_offset_in_remote_storage(highest)
        lso = log.last_stable_offset(self._high_watermark(tp))
        copied = 0
        segments = log.segments
        for segment, following in itertools.pairwise(segments):
            next_base = following.base_offset
            if segment.base_offset <= highest and next_base - 1 <= highest:
                continue
            if next_base > lso or segment.size == 0:
                if segment.size == 0:
                    continue
                break
            throttle = self.copy_quota.throttle_time_ms()
            while throttle > 0:
                self._check_leader(state, epoch)
                self._closed.wait(min(throttle, 1000) / 1000)
                throttle = self.copy_quota.throttle_time_ms()
            self._copy_segment(state, epoch, log, segment, next_base)
            highest = next_base - 1
            copied += 1
        return copied

    def _copy_segment(
        self, state: _Partition, epoch: int, log: Any, segment: Any, next_base: int
    ) -> None:
        start, end = segment.base_offset, next_base - 1
        entries = log.leader_epoch_cache.epoch_entries_in_range(-1, next_base)
        in_segment = {
            e.epoch: e.start_offset
            for e in log.leader_epoch_cache.epoch_entries_in_range(start, next_base)
        }
        if not in_segment:  # a log written without epochs (epoch -1 batches)
            in_segment = {max(epoch, 0): start}
        segment_id = RemoteLogSegmentId.generate(state.tip)
        txn_path = segment.txn_index.path
        txn_present = os.path.exists(txn_path) and os.path.getsize(txn_path) > 0
        metadata = RemoteLogSegmentMetadata(
            segment_id=segment_id,
            start_offset=start,
            end_offset=end,
            max_timestamp_ms=segment.max_timestamp,
            broker_id=self.broker_id,
            event_timestamp_ms=int(self._clock() * 1000),
            segment_size_in_bytes=segment.size,
            segment_leader_epochs=in_segment,
            txn_index_empty=not txn_present,
        )
        with self._lock:
            state.copying.add(segment_id.id)
        try:
            self.rlmm.add_remote_log_segment_metadata(metadata)
            self._check_leader(state, epoch)
            snapshot = producer_snapshot_file(log.dir, next_base)
            paths = segment.file_paths()
            data = LogSegmentData(
                log_segment=segment.log_path,
                offset_index=paths[1],
                time_index=paths[2],
                transaction_index=txn_path if txn_present else None,
                producer_snapshot=snapshot if os.path.exists(snapshot) else None,
                leader_epoch_index=LeaderEpochCheckpointFile.encode(entries),
            )
            try:
                custom = self.rsm.copy_log_segment_data(metadata, data)
            except Exception:
                self._discard_copy(metadata)
                raise
            if len(custom) > self.config.custom_metadata_max_bytes:
                self._discard_copy(metadata)
                raise RemoteStorageError(
                    f"Custom metadata size {len(custom)} exceeds configured limit "
                    f"{self.config.custom_metadata_max_bytes}"
                )
            try:
                self._check_leader(state, epoch)
            except _Cancelled:
                self._discard_copy(metadata)
                raise
            self.rlmm.update_remote_log_segment_metadata(
                RemoteLogSegmentMetadataUpdate(
                    segment_id,
                    int(self._clock() * 1000),
                    custom,
                    _S.COPY_SEGMENT_FINISHED,
                    self.broker_id,
                )
            )
        finally:
            with self._lock:
                state.copying.discard(segment_id.id)
        self.copy_quota.record(segment.size)
        log.update_highest_offset_in_remote_storage(end)
        self.copied_segments += 1
        logger.info("Copied %s [%d, %d] to remote storage as %s", state.tp, start, end, segment_id)

    def _discard_copy(self, metadata: RemoteLogSegmentMetadata) -> None:
        """Delete a copy that will not be committed, and say so in the metadata."""
        try:
            self._delete_segment(metadata)
        except Exception as exc:  # the expiration task retries orphans
            logger.warning("Cleaning the failed copy %s failed: %s", metadata.segment_id, exc)

    def _delete_segment(self, metadata: RemoteLogSegmentMetadata) -> None:
        now = int(self._clock() * 1000)
        sid = metadata.segment_id
        self.rlmm.update_remote_log_segment_metadata(
            RemoteLogSegmentMetadataUpdate(
                sid, now, metadata.custom_metadata, _S.DELETE_SEGMENT_STARTED, self.broker_id
            )
        )
        self.rsm.delete_log_segment_data(metadata)
        self.index_cache.remove([sid.id])
        self.rlmm.update_remote_log_segment_metadata(
            RemoteLogSegmentMetadataUpdate(
                sid,
                int(self._clock() * 1000),
                metadata.custom_metadata,
                _S.DELETE_SEGMENT_FINISHED,
                self.broker_id,
            )
        )
        self.deleted_segments += 1

    # -- the expiration task ---------------------------------------------------------------------

    def run_expiration_task(self, tp: TopicPartition) -> int:
        """One round of retention over both tiers; the number of segments deleted."""
        state = self._state(tp)
        epoch = state.leader_epoch
        self._check_leader(state, epoch)
        log = self._get_log(tp)
        if log is None or not log.remote_log_enabled:
            return 0
        cache = self.rlmm.cache(state.tip)
        deleted = 0
        with self._lock:
            copying = set(state.copying)
        # copies a dead or deposed leader left unfinished (none of ours in flight)
        for m in cache.segments():
            if m.state is _S.COPY_SEGMENT_STARTED and m.segment_id.id not in copying:
                self._check_leader(state, epoch)
                self._delete_segment(m)
                deleted += 1
            elif m.state is _S.DELETE_SEGMENT_STARTED:  # a deletion that did not finish
                self._check_leader(state, epoch)
                self._delete_segment(m)
        finished = cache.finished_segments()
        if not finished:
            return deleted
        config = log.config
        log_start = log.log_start_offset
        now_ms = int(self._clock() * 1000)
        highest = finished[-1].end_offset if finished else -1
        retention_bytes = config.retention_bytes
        remaining_breach = -1
        if retention_bytes >= 0:
            local_only = sum(s.size for s in log.segments if s.base_offset > highest)
            remote_size = sum(
                m.segment_size_in_bytes for m in finished if m.end_offset >= log_start
            )
            remaining_breach = local_only + remote_size - retention_bytes
        new_start = -1
        for m in finished:
            expired = m.end_offset < log_start
            if (
                not expired
                and config.retention_ms >= 0
                and m.max_timestamp_ms <= now_ms - config.retention_ms
            ):
                expired = True
            if not expired and remaining_breach >= m.segment_size_in_bytes:
                expired = True
            if not expired:
                break
            self._check_leader(state, epoch)
            if m.end_offset >= log_start and remaining_breach >= 0:
                remaining_breach -= m.segment_size_in_bytes
            self._delete_segment(m)
            deleted += 1
            new_start = max(new_start, m.end_offset + 1)
        if new_start > log_start:
            log.update_log_start_offset_from_remote_tier(new_start)
        return deleted

    def _delete_remote_partition_until_done(self, tip: TopicIdPartition) -> int:
        """:meth:`_delete_remote_partition`, tried again after a failure with the tasks'
        back-off until it succeeds or the manager closes: nothing else would ever delete
        a deleted partition's objects once the store answers again."""
        failures = 0
        while True:
            try:
                return self._delete_remote_partition(tip)
            except Exception as exc:
                failures += 1
                if self._closed.wait(self._backoff_s(failures)):
                    raise
                logger.warning(
                    "Deleting the remote data of %s failed (try %d), retrying: %s",
                    tip,
                    failures,
                    exc,
                )

    def _delete_remote_partition(self, tip: TopicIdPartition) -> int:
        """Delete every tiered segment of a deleted partition (Kafka's
        ``DELETE_PARTITION_*`` sequence); the number of objects swept at the end."""
        now = int(self._clock() * 1000)
        self.rlmm.on_partition_leadership_changes([tip], [])
        self.rlmm.put_remote_partition_delete_metadata(
            RemotePartitionDeleteMetadata(
                tip, RemotePartitionDeleteState.DELETE_PARTITION_MARKED, now, self.broker_id
            )
        )
        if not self.rlmm.wait_ready(tip, 60):
            raise RemoteStorageNotReadyError(f"Remote log metadata of {tip} did not load")
        self.rlmm.put_remote_partition_delete_metadata(
            RemotePartitionDeleteMetadata(
                tip,
                RemotePartitionDeleteState.DELETE_PARTITION_STARTED,
                int(self._clock() * 1000),
                self.broker_id,
            )
        )
        for m in self.rlmm.cache(tip).segments():
            if m.state is not _S.DELETE_SEGMENT_FINISHED:
                self._delete_segment(m)
        swept = self.rsm.delete_partition_data(tip)
        self.rlmm.put_remote_partition_delete_metadata(
            RemotePartitionDeleteMetadata(
                tip,
                RemotePartitionDeleteState.DELETE_PARTITION_FINISHED,
                int(self._clock() * 1000),
                self.broker_id,
            )
        )
        self.rlmm.on_stop_partitions([tip])
        return swept

    # -- the follower task ------------------------------------------------------------------------

    def run_follower_task(self, tp: TopicPartition) -> int:
        """Learn the highest tiered offset for a follower's log (its local retention then
        deletes tiered segments too); returns it."""
        state = self._state(tp)
        log = self._get_log(tp)
        if log is None or not log.remote_log_enabled:
            return -1
        highest = self._highest_tiered_offset(log, state.tip)
        log.update_highest_offset_in_remote_storage(highest)
        return highest

    # -- reads ---------------------------------------------------------------------------------

    def _segment_for(
        self, tip: TopicIdPartition, log: Any, offset: int
    ) -> RemoteLogSegmentMetadata | None:
        """Kafka's ``fetchRemoteLogSegmentMetadata``: the copied segment holding
        ``offset`` under its epoch, else the first one after it in later epochs."""
        cache = self.rlmm.cache(tip)
        epoch_cache = log.leader_epoch_cache
        epoch = epoch_cache.epoch_for_offset(offset)
        if epoch is None:
            return None
        found = cache.segment_for(epoch, offset)
        if found is not None:
            return found
        # the offset is in a gap (compaction is not allowed; an aborted copy): next segment
        later = [m for m in cache.finished_segments() if m.end_offset >= offset]
        return later[0] if later else None

    def read(
        self,
        tp: TopicPartition,
        offset: int,
        max_bytes: int,
        *,
        read_committed: bool = False,
        min_one_message: bool = True,
    ) -> RemoteFetchResult:
        """Whole batches from ``offset`` out of the tiered segment holding it (Kafka's
        ``RemoteLogManager.read``). ``OffsetOutOfRangeError`` when no tiered segment holds
        it; :class:`CorruptRemoteDataError` when a batch fails its CRC; remote-storage
        errors as they come (the caller answers KAFKA_STORAGE_ERROR)."""
        tip = self.topic_id_partition(tp)
        log = self._get_log(tp)
        if tip is None or log is None:
            raise RemoteStorageNotReadyError(f"{tp} is not tiered on this broker")
        if self.fetch_quota.is_quota_exceeded():
            return RemoteFetchResult(b"", [], None, throttled=True)
        metadata = self._segment_for(tip, log, offset)
        if metadata is None:
            raise OffsetOutOfRangeError(
                f"Received request for offset {offset} for partition {tp}, "
                "which does not exist in remote tier."
            )
        indexes = self.index_cache.get(metadata)
        position = indexes.position_for(max(offset, metadata.start_offset))
        records = self._read_batches(metadata, position, offset, max_bytes, min_one_message)
        self.fetch_quota.record(len(records))
        aborted: list[AbortedTxn] = []
        if read_committed and records:
            from kafkacore.record import batch_header

            first = batch_header(records, 0).base_offset
            upper = self._offset_after(records)
            aborted = self._aborted_transactions(tip, log, metadata, first, upper)
        return RemoteFetchResult(records, aborted, metadata)

    def async_read(self, info: RemoteStorageFetchInfo) -> Future[RemoteLogReadResult]:
        """:meth:`read` on the reader pool (Kafka's ``asyncRead``): the future never fails,
        its result carries the error; cancelling it before it runs frees its place.
        ``RemoteStorageError`` (Kafka's ``RejectedExecutionException``) when
        ``remote.log.reader.max.pending.tasks`` reads already wait."""
        if not self._pending_reads.acquire(blocking=False):
            raise RemoteStorageError(
                "Too many pending remote reads (remote.log.reader.max.pending.tasks)"
            )

        def run() -> RemoteLogReadResult:
            tp = info.topic_partition
            try:
                fetched = self.read(
                    tp,
                    info.fetch_offset,
                    info.max_bytes,
                    read_committed=info.read_committed,
                    min_one_message=info.min_one_message,
                )
            except OffsetOutOfRangeError as exc:
                return RemoteLogReadResult(None, exc)
            except CorruptRemoteDataError as exc:
                logger.error("Corrupt remote data of %s at %d: %s", tp, info.fetch_offset, exc)
                return RemoteLogReadResult(None, exc)
            except Exception as exc:
                logger.warning("Remote read of %s at %d failed: %s", tp, info.fetch_offset, exc)
                return RemoteLogReadResult(None, exc)
            return RemoteLogReadResult(fetched)

        try:
            future = self._readers.submit(run)
        except RuntimeError as exc:  # shut down
            self._pending_reads.release()
            raise RemoteStorageError(f"The remote log reader is closed: {exc}") from exc
        future.add_done_callback(lambda _f: self._pending_reads.release())
        return future

    def async_offset_read(
        self,
        tp: TopicPartition,
        timestamp: int,
        start_offset: int,
        local_search: Callable[[], TimestampAndOffset | None],
    ) -> Future[TimestampAndOffset | None]:
        """ListOffsets by time on a tiered log, on the reader pool (Kafka's
        ``asyncOffsetRead``): the tiered segments from ``start_offset`` first
        (:meth:`find_offset_by_timestamp`), then ``local_search`` (the local segments
        from the local log start). The future fails with the error that stopped it."""

        def run() -> TimestampAndOffset | None:
            found = self.find_offset_by_timestamp(tp, timestamp, start_offset)
            if found is not None:
                return TimestampAndOffset(*found)
            return local_search()

        return self._readers.submit(run)

    @staticmethod
    def _offset_after(records: bytes) -> int:
        from kafkacore.record import batch_header, iter_batches

        last = -1
        for pos, _magic, _size in iter_batches(records):
            last = batch_header(records, pos).last_offset
        return last + 1

    def _read_batches(
        self,
        metadata: RemoteLogSegmentMetadata,
        position: int,
        offset: int,
        max_bytes: int,
        min_one: bool,
    ) -> bytes:
        """Whole, CRC-checked batches of ``metadata``'s log from ``position``: skipping
        batches wholly below ``offset``, at most ``max_bytes`` (the first one whole when
        ``min_one``)."""
        size = metadata.segment_size_in_bytes
        want = max(max_bytes, 16 << 10)
        buf = self.rsm.fetch_log_segment(metadata, position, min(position + want, size) - 1)
        out: list[bytes] = []
        taken = 0
        pos = 0
        base = position
        while True:
            if pos + _HEADER > len(buf):
                if base + pos >= size or out:
                    break
                buf = self.rsm.fetch_log_segment(
                    metadata, base + pos, min(base + pos + want, size) - 1
                )
                base, pos = base + pos, 0
                if len(buf) < _HEADER:
                    raise CorruptRemoteDataError(
                        f"{metadata.segment_id}: truncated batch at {base}"
                    )
                continue
            batch_size = _LENGTH.unpack_from(buf, pos + 8)[0] + 12
            if batch_size < _HEADER:
                raise CorruptRemoteDataError(
                    f"{metadata.segment_id}: batch size {batch_size} at position {base + pos}"
                )
            last_offset = (
                struct.unpack_from(">q", buf, pos)[0] + struct.unpack_from(">i", buf, pos + 23)[0]
            )
            if last_offset < offset:
                pos += batch_size
                continue
            if out and taken + batch_size > max_bytes:
                break
            if not out and not min_one and batch_size > max_bytes:
                break
            if pos + batch_size > len(buf):
                # the batch goes past what was read: read it (and what fits after it)
                more = self.rsm.fetch_log_segment(
                    metadata, base + pos, min(base + pos + max(batch_size, want), size) - 1
                )
                buf, base, pos = more, base + pos, 0
                if len(buf) < batch_size:
                    raise CorruptRemoteDataError(
                        f"{metadata.segment_id}: batch of {batch_size} bytes at {base} cut short"
                    )
            if buf[pos + 16] >= 2 and not _crc_ok(buf, pos, batch_size):
                raise CorruptRemoteDataError(
                    f"Remote segment {metadata.segment_id} ({metadata.topic_id_partition}, offsets "
                    f"{metadata.start_offset}-{metadata.end_offset}): batch at position "
                    f"{base + pos} "
                    "fails its CRC"
                )
            out.append(bytes(buf[pos : pos + batch_size]))
            taken += batch_size
            pos += batch_size
            if taken >= max_bytes:
                break
        return b"".join(out)

    def _aborted_transactions(
        self,
        tip: TopicIdPartition,
        log: Any,
        first: RemoteLogSegmentMetadata,
        start: int,
        upper: int,
    ) -> list[AbortedTxn]:
        """Kafka's ``addAbortedTransactions``: the remote ``.txnindex`` of this segment
        and the next tiered ones, then the local log's, until one says no later segment
        can hold more."""
        found: list[AbortedTxn] = []
        for m in self.rlmm.cache(tip).finished_segments():
            if m.end_offset < first.start_offset:
                continue
            complete = False
            for entry in self.index_cache.get(m).aborted():
                if entry.last_offset >= start and entry.first_offset < upper:
                    found.append(entry)
                if entry.last_stable_offset >= upper:
                    complete = True
                    break
            if complete:
                return found
        # not complete in the remote tier: the markers may sit in the local segments
        found.extend(log.collect_aborted_transactions(start, upper))
        return found

    def find_offset_by_timestamp(
        self, tp: TopicPartition, timestamp: int, starting_offset: int
    ) -> tuple[int, int, int | None] | None:
        """``(timestamp, offset, leader epoch)`` of the first tiered record at or after
        ``starting_offset`` with a timestamp >= ``timestamp`` (Kafka's
        ``findOffsetByTimestamp``); ``None`` if the tiered segments have none."""
        from kafkacore.record import batch_header, iter_batches, records

        tip = self.topic_id_partition(tp)
        if tip is None:
            return None
        for m in self.rlmm.cache(tip).finished_segments():
            if m.max_timestamp_ms < timestamp or m.end_offset < starting_offset:
                continue
            indexes = self.index_cache.get(m)
            from_offset = max(
                indexes.offset_for_timestamp(timestamp), starting_offset, m.start_offset
            )
            position = indexes.position_for(from_offset)
            data = self.rsm.fetch_log_segment(m, position)
            for pos, magic, size in iter_batches(data):
                if magic >= 2 and not _crc_ok(data, pos, size):
                    raise CorruptRemoteDataError(
                        f"Remote segment {m.segment_id}: bad CRC at {position + pos}"
                    )
                h = batch_header(data, pos)
                if h.max_timestamp < timestamp or h.last_offset < starting_offset:
                    continue
                for r in records(data, pos):
                    if r.timestamp >= timestamp and r.offset >= starting_offset:
                        epoch = h.partition_leader_epoch
                        return r.timestamp, r.offset, epoch if epoch >= 0 else None
        return None

    # -- a follower's catch-up from remote state -----------------------------------------------

    def build_remote_log_aux_state(
        self,
        tp: TopicPartition,
        leader_local_log_start_offset: int,
        leader_log_start_offset: int,
        epoch_for_previous_offset: int | None,
    ) -> int:
        """Kafka's ``buildRemoteLogAuxState``: a follower whose fetch offset is below the
        leader's local log start restarts its log at the end of the tiered segment just
        below it, with that segment's leader epochs and producer snapshot; returns the
        offset to fetch from next. ``RemoteStorageNotReadyError`` until the metadata is
        loaded, ``RemoteStorageError`` when no tiered segment ends there yet."""
        tip = self.topic_id_partition(tp)
        log = self._get_log(tp)
        if tip is None or log is None:
            raise RemoteStorageNotReadyError(f"{tp} is not tiered on this broker")
        previous = leader_local_log_start_offset - 1
        if previous < 0:
            return leader_local_log_start_offset
        cache = self.rlmm.cache(tip)
        if epoch_for_previous_offset is not None:
            metadata = cache.segment_for(epoch_for_previous_offset, previous)
        else:  # the copied segment holding it, whatever its epoch
            holding = [
                m for m in cache.finished_segments() if m.start_offset <= previous <= m.end_offset
            ]
            metadata = holding[-1] if holding else None
        if metadata is None:
            raise RemoteStorageError(
                f"Couldn't build the state from remote store for partition: {tp}, "
                f"currentLeaderEpoch: {epoch_for_previous_offset}, "
                f"leaderLocalLogStartOffset: {leader_local_log_start_offset}, "
                "as the previous remote log segment metadata was not found"
            )
        next_offset = metadata.end_offset + 1
        epochs = LeaderEpochCheckpointFile.decode(
            self.rsm.fetch_index(metadata, IndexType.LEADER_EPOCH)
        )
        snapshot = self.rsm.fetch_index(metadata, IndexType.PRODUCER_SNAPSHOT)
        log.rebuild_from_remote_state(
            next_offset,
            leader_log_start_offset,
            [EpochEntry(e.epoch, e.start_offset) for e in epochs],
            snapshot,
        )
        log.update_highest_offset_in_remote_storage(metadata.end_offset)
        return next_offset

    # -- status ------------------------------------------------------------------------------------

    def status(self, tp: TopicPartition) -> TieringStatus | None:
        """The partition's tiering state (``None`` when it is not tiered here)."""
        with self._lock:
            state = self._partitions.get(tp)
        if state is None:
            return None
        try:
            finished = self.rlmm.cache(state.tip).finished_segments()
        except RemoteStorageNotReadyError:
            finished = []
        log = self._get_log(tp)
        highest = finished[-1].end_offset if finished else -1
        lag_segments = lag_bytes = 0
        if log is not None and state.leader:
            segments = log.segments
            for s in segments[:-1]:
                if s.base_offset > highest:
                    lag_segments += 1
                    lag_bytes += s.size
        return TieringStatus(
            tp,
            "leader" if state.leader else "follower",
            len(finished),
            sum(m.segment_size_in_bytes for m in finished),
            finished[0].start_offset if finished else -1,
            highest,
            lag_segments,
            lag_bytes,
            state.last_error,
        )

    def remote_segments(self, tp: TopicPartition) -> list[RemoteLogSegmentMetadata]:
        """The committed tiered segments of ``tp`` (empty when not tiered here)."""
        tip = self.topic_id_partition(tp)
        if tip is None:
            return []
        try:
            return self.rlmm.cache(tip).finished_segments()
        except RemoteStorageNotReadyError:
            return []
