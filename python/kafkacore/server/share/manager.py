"""The share partition manager (Kafka's ``SharePartitionManager`` with ``DelayedShareFetch``
and ``ShareFetchUtils``): the share partitions this broker leads, and the ShareFetch and
ShareAcknowledge work on them.

* A share partition is made on first use for a (group, topic id, partition) this broker
  leads, at the partition's leader epoch, and loads its state from the share coordinator
  (:meth:`SharePartition.maybe_initialize`). When the broker stops leading the partition
  its share partitions are fenced and dropped; the next leader loads the state again.
* **Fetch**: for each partition, under the share partition's fetch lock, the log is read
  from its next fetch offset through ``ReplicaManager.read_from_log`` (up to the high
  watermark, or the last stable offset under ``share.isolation.level=read_committed``)
  and the records acquired for the member. With
  nothing acquired the fetch waits up to ``MaxWaitMs`` for an append or a release to any
  of its partitions (the fetch purgatory) and tries again. The records returned are the
  batches overlapping what was acquired.
* **Acknowledge**: per partition, :meth:`SharePartition.acknowledge`.
* Sessions: :mod:`~kafkacore.server.share.session`; a closed connection's session ends and
  its member's records are released.

Thread-safety: event loop only; log reads run on the I/O executor.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

from kafkacore import record
from kafkacore.config.group import ShareGroupSettings
from kafkacore.coordinator.share_state import StateBatch
from kafkacore.errors import KafkaCoreError
from kafkacore.log import TopicPartition
from kafkacore.metadata import MetadataCache
from kafkacore.protocol import ErrorCode
from kafkacore.server.network import FileRegion
from kafkacore.server.partition import FetchIsolation, FetchPartitionData
from kafkacore.server.partition import FetchParams as LogFetchParams
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.share.partition import (
    AcknowledgementBatch,
    AcquiredRecords,
    FetchedBatch,
    LockTimer,
    LoopTimer,
    ReadState,
    ShareAcquireMode,
    ShareError,
    SharePartition,
)
from kafkacore.server.share.persister import SharePersister
from kafkacore.server.share.session import ShareSessionCache

__all__ = ["FetchParams", "PartitionFetch", "SharePartitionManager"]

logger = logging.getLogger("kafkacore.server.share")

ShareKey = tuple[str, uuid.UUID, int]
TopicIdPartition = tuple[uuid.UUID, int]


@dataclass(frozen=True)
class FetchParams:
    """What one ShareFetch asks of all its partitions."""

    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    batch_size: int
    mode: ShareAcquireMode


@dataclass
class PartitionFetch:
    """One partition's answer: an error, or the records read and those acquired."""

    error_code: int = ErrorCode.NONE
    error_message: str | None = None
    records: bytes = b""
    acquired: list[AcquiredRecords] = field(default_factory=list)


@dataclass
class _Read:
    data: bytes
    batches: list[FetchedBatch]
    aborted: list[tuple[int, int]]
    keys: dict[int, bytes | None] | None


class SharePartitionManager:
    """See the module documentation. ``settings(group)``: the group's share configs in
    force; ``max_sessions``: ``group.share.max.share.sessions``."""

    def __init__(
        self,
        replicas: ReplicaManager,
        cache: MetadataCache,
        persister: SharePersister,
        settings: Callable[[str], ShareGroupSettings],
        *,
        io_executor: Executor | None,
        max_sessions: int,
        fetch_max_bytes: int,
        timer: LockTimer | None = None,
    ) -> None:
        self.replicas = replicas
        self.cache = cache
        self.persister = persister
        self.settings = settings
        self.io_executor = io_executor
        self.fetch_max_bytes = fetch_max_bytes
        self.timer = timer or LoopTimer()
        self.sessions = ShareSessionCache(max_sessions)
        self.partitions: dict[ShareKey, SharePartition] = {}
        self._released_tasks: set[asyncio.Task[None]] = set()

    # -- share partitions ------------------------------------------------------------------

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self.cache.topic_by_id(topic_id)
        return None if topic is None else topic.name

    def _share_partition(
        self, group_id: str, topic_id: uuid.UUID, partition: int
    ) -> SharePartition:
        """``getOrCreateSharePartition``: raises :class:`ShareError`
        (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR)."""
        name = self.topic_name(topic_id)
        if name is None:
            raise ShareError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        tp = TopicPartition(name, partition)
        local = self.replicas.get_partition(tp)
        if local is None:
            if self.cache.partition_state(tp) is None:
                raise ShareError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            if self.replicas.is_offline(tp):
                raise ShareError(ErrorCode.KAFKA_STORAGE_ERROR)
            raise ShareError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if not local.is_leader:
            raise ShareError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        key = (group_id, topic_id, partition)
        sp = self.partitions.get(key)
        if sp is not None and sp.leader_epoch != local.leader_epoch:
            sp.mark_fenced()
            del self.partitions[key]
            sp = None
        if sp is None:
            settings = self.settings(group_id)
            sp = SharePartition(
                group_id,
                topic_id,
                name,
                partition,
                local.leader_epoch,
                write_state=self._state_writer(group_id, topic_id, partition),
                timer=self.timer,
                lock_duration_ms=lambda: self.settings(group_id).record_lock_duration_ms,
                max_delivery_count=settings.delivery_count_limit,
                max_in_flight=settings.partition_max_record_locks,
                on_released=lambda: self.replicas.purgatory.wake(tp),
                key_ordering=settings.key_ordering,
            )
            self.partitions[key] = sp
        return sp

    def _state_writer(self, group_id: str, topic_id: uuid.UUID, partition: int):  # type: ignore[no-untyped-def]
        async def write(
            state_epoch: int,
            leader_epoch: int,
            start_offset: int,
            delivery_complete_count: int,
            batches: list[StateBatch],
        ) -> None:
            await self.persister.write_state(
                group_id,
                topic_id,
                partition,
                state_epoch,
                leader_epoch,
                start_offset,
                delivery_complete_count,
                batches,
            )

        return write

    async def _initialized(
        self, group_id: str, topic_id: uuid.UUID, partition: int
    ) -> SharePartition:
        """The share partition, its state loaded; a failed load drops it (the next
        request loads again, as Kafka removes a failed share partition)."""
        sp = self._share_partition(group_id, topic_id, partition)
        key = (group_id, topic_id, partition)

        async def read() -> ReadState:
            return await self.persister.read_state(group_id, topic_id, partition, sp.leader_epoch)

        async def reset() -> int:
            return await self._reset_offset(group_id, sp)

        try:
            await sp.maybe_initialize(read, reset)
        except ShareError:
            if self.partitions.get(key) is sp:
                del self.partitions[key]
            raise
        except Exception as exc:
            if self.partitions.get(key) is sp:
                del self.partitions[key]
            raise ShareError(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)) from exc
        return sp

    async def _reset_offset(self, group_id: str, sp: SharePartition) -> int:
        """The start of a share partition without state (``share.auto.offset.reset``):
        the log end (latest: the high watermark), its start (earliest), or the first
        offset at or after now minus a duration."""
        settings = self.settings(group_id)
        local = self.replicas.get_partition(TopicPartition(sp.topic, sp.partition))
        if local is None:
            raise ShareError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        log = local.log
        if settings.auto_offset_reset == "earliest":
            return log.log_start_offset
        duration = settings.reset_duration_ms()
        if duration is not None:
            ts = int(time.time() * 1000) - duration
            loop = asyncio.get_running_loop()
            found = await loop.run_in_executor(self.io_executor, log.offset_for_timestamp, ts)
            if found is not None and found.offset >= 0:
                return int(found.offset)
        return local.high_watermark

    # -- leadership ------------------------------------------------------------------------

    def on_leadership_change(
        self,
        leaders: Iterable[tuple[TopicPartition, int]],
        followers: Iterable[tuple[TopicPartition, int]],
    ) -> None:
        """Partitions no longer led here (or led at a new epoch): their share partitions
        are fenced and dropped, their locks cancelled."""
        changed = {tp for tp, _ in [*leaders, *followers]}
        for key, sp in list(self.partitions.items()):
            if TopicPartition(sp.topic, sp.partition) in changed:
                sp.mark_fenced()
                sp.cancel_locks()
                del self.partitions[key]

    # -- fetch -----------------------------------------------------------------------------

    async def fetch(
        self,
        group_id: str,
        member_id: str,
        partitions: Sequence[TopicIdPartition],
        params: FetchParams,
    ) -> dict[TopicIdPartition, PartitionFetch]:
        """The share fetch of ``partitions`` for ``member_id`` (``fetchMessages``)."""
        results: dict[TopicIdPartition, PartitionFetch] = {}
        deadline = time.monotonic() + max(0, params.max_wait_ms) / 1000
        while True:
            acquired = await self._try_fetch(group_id, member_id, partitions, params, results)
            remaining = deadline - time.monotonic()
            if (
                acquired
                or remaining <= 0
                or all(results.get(tp, PartitionFetch()).error_code for tp in partitions)
            ):
                return results
            watched = [
                TopicPartition(name, p)
                for t, p in partitions
                if (name := self.topic_name(t)) is not None
                and not results.get((t, p), PartitionFetch()).error_code
            ]
            if not watched:
                return results
            await self.replicas.purgatory.wait(watched, remaining)

    async def _try_fetch(
        self,
        group_id: str,
        member_id: str,
        partitions: Sequence[TopicIdPartition],
        params: FetchParams,
        results: dict[TopicIdPartition, PartitionFetch],
    ) -> int:
        """One pass over the partitions; how many records were acquired."""
        settings = self.settings(group_id)
        total = 0
        budget = min(params.max_bytes, self.fetch_max_bytes)
        records_left = params.max_records
        ready: list[tuple[TopicIdPartition, SharePartition]] = []
        for tp in partitions:
            try:
                sp = await self._initialized(group_id, *tp)
            except ShareError as exc:
                results[tp] = PartitionFetch(exc.error_code, exc.message)
                continue
            results[tp] = PartitionFetch()
            if sp.can_acquire_records():
                ready.append((tp, sp))
        if not ready:
            return 0
        per_partition = max(1, budget // len(ready))
        token = object()
        for tp, sp in ready:
            if records_left <= 0 and params.mode == ShareAcquireMode.RECORD_LIMIT:
                break
            if not sp.try_fetch_lock(token):
                continue
            try:
                offset = sp.next_fetch_offset()
                try:
                    read = await self._read(sp, offset, per_partition, settings)
                except ShareError as exc:
                    results[tp] = PartitionFetch(exc.error_code, exc.message)
                    continue
                if read is None or not read.batches:
                    continue
                acquired, count = sp.acquire(
                    member_id,
                    params.mode,
                    params.batch_size,
                    max(records_left, 0)
                    if params.mode == ShareAcquireMode.RECORD_LIMIT
                    else params.max_records,
                    offset,
                    read.batches,
                    aborted=read.aborted,
                    read_committed=settings.read_committed,
                    keys=read.keys,
                )
            finally:
                sp.release_fetch_lock(token)
            if not acquired:
                continue
            records_left -= count
            total += count
            results[tp] = PartitionFetch(
                records=_slice(read.data, acquired[0].first_offset, acquired[-1].last_offset),
                acquired=acquired,
            )
        return total

    async def _read(
        self, sp: SharePartition, offset: int, max_bytes: int, settings: ShareGroupSettings
    ) -> _Read | None:
        """The log from ``offset`` as a consumer reads it, through
        :meth:`ReplicaManager.read_from_log` as Kafka's ``DelayedShareFetch`` does (up to
        the high watermark, or the last stable offset under read_committed, with the
        aborted transactions it overlaps); the bytes are read on the I/O executor."""
        tp = TopicPartition(sp.topic, sp.partition)
        local = self.replicas.get_partition(tp)
        if local is None or not local.is_leader or local.leader_epoch != sp.leader_epoch:
            raise ShareError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        log_start = local.log.log_start_offset
        if offset < log_start:
            sp.update_cache_and_offsets(log_start)
            offset = sp.next_fetch_offset()
        isolation = (
            FetchIsolation.TXN_COMMITTED
            if settings.read_committed
            else FetchIsolation.HIGH_WATERMARK
        )
        params = LogFetchParams(-1, 0, 1, max_bytes, isolation)
        [result] = self.replicas.read_from_log(
            params, [(tp, FetchPartitionData(offset, -1, max_bytes))], update_fetch_state=False
        )
        if result.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            return None
        if result.error_code != ErrorCode.NONE:
            raise ShareError(result.error_code)
        fetched = result.fetched
        if fetched is None:
            return None
        aborted = [(a.producer_id, a.first_offset) for a in result.aborted_transactions]
        want_keys = settings.key_ordering

        def read() -> _Read:
            data = FileRegion(fetched.file, fetched.position, fetched.length).read_bytes()
            return _parse(data, aborted, want_keys)

        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.io_executor, read)
        except KafkaCoreError as exc:
            raise ShareError(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)) from exc

    # -- acknowledge -----------------------------------------------------------------------

    async def acknowledge(
        self,
        group_id: str,
        member_id: str,
        acknowledgements: Mapping[TopicIdPartition, list[AcknowledgementBatch]],
    ) -> dict[TopicIdPartition, tuple[int, str | None]]:
        """``acknowledge``: each partition's error code and message."""

        async def one(
            tp: TopicIdPartition, batches: list[AcknowledgementBatch]
        ) -> tuple[int, str | None]:
            sp = self.partitions.get((group_id, *tp))
            if sp is None:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
            try:
                await sp.acknowledge(member_id, batches)
            except ShareError as exc:
                return exc.error_code, exc.message
            return ErrorCode.NONE, None

        keys = list(acknowledgements)
        answers = await asyncio.gather(*(one(tp, acknowledgements[tp]) for tp in keys))
        return dict(zip(keys, answers, strict=True))

    async def release_session(self, group_id: str, member_id: str) -> None:
        """The session ended (epoch -1, or its connection closed): the member's acquired
        records in its partitions are released (``releaseSession``)."""
        session = self.sessions.remove(group_id, member_id)
        partitions = list(session.partitions) if session is not None else []
        await self._release(group_id, member_id, partitions)

    async def _release(
        self, group_id: str, member_id: str, partitions: Iterable[TopicIdPartition]
    ) -> None:
        for tp in partitions:
            sp = self.partitions.get((group_id, *tp))
            if sp is None:
                continue
            try:
                await sp.release_acquired_records(member_id)
            except ShareError as exc:
                logger.debug("Releasing records of %s on %s failed: %s", member_id, sp, exc)

    def on_disconnect(self, connection_id: str) -> None:
        """A client connection closed: its share session ends and its member's records
        are released (Kafka's ``ConnectionDisconnectListener``)."""
        session = self.sessions.remove_connection(connection_id)
        if session is None:
            return
        task = asyncio.get_running_loop().create_task(
            self._release(session.group_id, session.member_id, list(session.partitions))
        )
        self._released_tasks.add(task)
        task.add_done_callback(self._released_tasks.discard)

    async def stop(self) -> None:
        for sp in self.partitions.values():
            sp.cancel_locks()
        for task in list(self._released_tasks):
            task.cancel()

    # -- reading ---------------------------------------------------------------------------

    def group_partitions(self, group_id: str) -> list[SharePartition]:
        """The share partitions of ``group_id`` led here (describe, console)."""
        return [sp for (g, _, _), sp in self.partitions.items() if g == group_id]


def _parse(data: bytes, aborted: list[tuple[int, int]], want_keys: bool) -> _Read:
    """The batches of a log read (and, for key ordering, each data record's key)."""
    batches: list[FetchedBatch] = []
    keys: dict[int, bytes | None] | None = {} if want_keys else None
    for pos, magic, _size in record.iter_batches(data):
        if magic < 2:
            continue
        h = record.batch_header(data, pos)
        abort = False
        if h.is_control:
            for r in record.records(data, pos):
                if r.key is not None and r.value is not None:
                    try:
                        kind, _ = record.parse_control_record(r.key, r.value)
                    except (ValueError, KafkaCoreError):
                        continue
                    abort = kind == record.ControlType.ABORT
                break
        elif keys is not None:
            for r in record.records(data, pos):
                keys[r.offset] = r.key
        batches.append(
            FetchedBatch(
                h.base_offset,
                h.last_offset,
                h.producer_id,
                h.is_transactional,
                h.is_control,
                abort,
            )
        )
    return _Read(data, batches, aborted, keys)


def _slice(data: bytes, first: int, last: int) -> bytes:
    """The batches of ``data`` overlapping offsets ``first..last``
    (``ShareFetchUtils.maybeSliceFetchRecords``)."""
    start = end = None
    for pos, magic, size in record.iter_batches(data):
        if magic < 2:
            continue
        h = record.batch_header(data, pos)
        if h.last_offset < first:
            continue
        if h.base_offset > last:
            break
        if start is None:
            start = pos
        end = pos + size
    if start is None or end is None:
        return b""
    return data[start:end]
