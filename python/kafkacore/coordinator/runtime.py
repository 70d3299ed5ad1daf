"""One runtime for every coordinator that keeps its state in an internal topic: Kafka 4's
``CoordinatorRuntime``/``CoordinatorShard`` (``coordinator-common``) at Python scale.

A coordinator's state is sharded by the partitions of its topic (``__consumer_offsets``
for groups, ``__transaction_state`` for transactional ids, ``__share_group_state`` next),
and this broker serves the shards of the partitions it leads. The runtime does what every
such coordinator needs, and keeps none of their state:

* **Ownership fenced by epoch** (Kafka's ``scheduleLoadOperation`` /
  ``scheduleUnloadOperation``): :meth:`CoordinatorRuntime.on_leadership_change` loads a
  partition this broker now leads and unloads one it no longer leads; an epoch older than
  the newest seen for the partition is stale and ignored. While a partition loads its keys
  answer COORDINATOR_LOAD_IN_PROGRESS, and NOT_COORDINATOR where it is not owned
  (:meth:`~CoordinatorRuntime.partition_error`).
* **Load on the I/O executor**: a new shard is built and the partition's records replayed
  into it on an I/O thread (no one sees it yet), then installed on the event loop and told
  ``on_loaded``. A failed load is logged and the partition owned with an empty shard, as
  Kafka does. **Unload** drops the shard, told ``on_unloaded`` (it answers its waiters).
* **Append, then await the high watermark** (Kafka's ``scheduleWriteOperation``):
  :meth:`~CoordinatorRuntime.append` writes records as one batch, acks=-1, on the I/O
  executor and returns once the high watermark passes them; it raises
  :class:`CoordinatorWriteError`, which :func:`append_error_code` turns into the
  coordinator's answer. :meth:`~CoordinatorRuntime.partition_lock` orders a shard's
  "validate, append, apply" so the state applies writes in log order.
* **Background jobs** (:meth:`~CoordinatorRuntime.schedule_periodic`: session sweeps,
  expiry), cancelled at :meth:`~CoordinatorRuntime.stop`.
* **The topic** (:class:`CoordinatorTopic`): a key's partition, and its creation on first
  use, replicated over the live brokers (:mod:`kafkacore.placement`).

The runtime reaches its partitions only through a :class:`PartitionWriter` (Kafka's
interface of that name), which ``kafkacore.server.coordinator_writer`` implements over the
replica manager's public API: this package imports nothing of the server.

**How a shard plugs in.** (1) Write a :class:`CoordinatorShard`: the state of one
partition, rebuilt by ``replay`` (every data record, in log order; those of a
transactional batch carry its producer id) and ``replay_end_transaction_marker`` (the
producer's COMMIT or ABORT), told ``on_loaded`` once installed and ``on_unloaded`` when
dropped. (2) Describe its topic with a :class:`CoordinatorTopic` and build a
``CoordinatorRuntime(topic, build_shard, ...)``, ``build_shard(partition, epoch)`` making
an empty shard. (3) Send it the broker's leadership changes. (4) Serve a key: check
``partition_error`` of its partition, read ``shard(partition)``; to write, hold
``partition_lock``, validate, ``await append(...)``, then apply to the shard what
``replay`` would apply reading those records back (or, pipelined, ``append_uncommitted``
and apply under the lock, then ``await_committed`` outside it). The classic groups and the
transactional ids are shards this way (``server/group/shard.py``, ``server/txn/manager.py``).
Kafka keeps KIP-848 consumer groups and KIP-932 share groups in the same
``__consumer_offsets`` shard as classic groups (record types 3-8 and 16, 10-15): their
managers join the group shard and its ``replay`` dispatches on the record type; the share
coordinator is a second shard type, on a third runtime over ``__share_group_state``. Their
per-member timers are the runtime's (:meth:`CoordinatorRuntime.schedule_timer`, Kafka's
``CoordinatorTimer``: keyed per partition, cancelled on unload).

Thread-safety: event loop only, except :class:`CoordinatorTopic`'s blocking methods and
:meth:`CoordinatorRuntime.replay_partition`, which run on the I/O executor and touch no
installed shard.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Generic, NamedTuple, Protocol, TypeVar

from kafkacore import record
from kafkacore.errors import KafkaCoreError
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode

__all__ = [
    "CoordinatorRecord",
    "CoordinatorRuntime",
    "CoordinatorShard",
    "CoordinatorTopic",
    "CoordinatorWriteError",
    "PartitionWriter",
    "append_error_code",
]

logger = logging.getLogger("kafkacore.coordinator")


class CoordinatorWriteError(KafkaCoreError):
    """A coordinator's write failed; ``error_code`` is Kafka's code of the cause
    (``Errors.forException``: NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, ...)."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code


_COORDINATOR_ERRORS: dict[int, int] = {
    # the partition is not here, too few replicas are in sync, or the wait timed out
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    # not the leader (any more), or the log's disk failed
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.NOT_COORDINATOR: ErrorCode.NOT_COORDINATOR,
    # records the log refuses as too large
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


def append_error_code(exc: BaseException, *, keep_log_errors: bool = False) -> int:
    """What a failed coordinator write answers (Kafka 4.x ``GroupCoordinatorService``
    normalising the runtime's write exception; ``TransactionStateManager`` maps the
    produce status alike): no partition, too few replicas or a timeout ->
    COORDINATOR_NOT_AVAILABLE; not the leader or a storage failure -> NOT_COORDINATOR;
    too large -> UNKNOWN_SERVER_ERROR; any other error UNKNOWN_SERVER_ERROR, or with
    ``keep_log_errors`` the log's own (Kafka's ``CoordinatorOperationExceptionHelper``
    lets a transactional offset commit's INVALID_PRODUCER_EPOCH, ... reach the producer)."""
    if not isinstance(exc, CoordinatorWriteError):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    code = _COORDINATOR_ERRORS.get(exc.error_code)
    if code is not None:
        return code
    return exc.error_code if keep_log_errors else ErrorCode.UNKNOWN_SERVER_ERROR


class CoordinatorRecord(NamedTuple):
    """One record of a coordinator partition as a load reads it: its ``offset``, the
    ``producer_id`` of its transactional batch (else -1), its ``key`` and ``value``
    (``None``: a tombstone); ``marker`` for a COMMIT/ABORT control record (then ``key``
    is empty and ``value`` ``None``)."""

    offset: int
    producer_id: int
    key: bytes
    value: bytes | None
    marker: record.ControlType | None = None


class CoordinatorShard(Protocol):
    """The state of one partition of a coordinator's topic (Kafka's ``CoordinatorShard``).
    ``replay`` and ``replay_end_transaction_marker`` run on an I/O thread during a load
    (before the shard is installed); the rest on the event loop."""

    def replay(self, record: CoordinatorRecord) -> None:
        """Apply one data record (undecodable ones are logged and skipped)."""

    def replay_end_transaction_marker(self, producer_id: int, committed: bool) -> None:
        """Apply a COMMIT (``committed``) or ABORT marker of ``producer_id``."""

    def on_loaded(self) -> None:
        """The shard is installed: it serves its keys from now on."""

    def on_unloaded(self) -> None:
        """The shard is dropped (resigned): answer whoever waits on it."""


class PartitionWriter(Protocol):
    """What the runtime needs of the replica manager (Kafka's ``PartitionWriter``, plus
    the log reads of its ``CoordinatorLoaderImpl``). ``append``, ``create_topic`` and
    ``read`` block (I/O executor); ``wake_fetches`` and ``await_replication`` run on the
    event loop."""

    def partition_count(self, topic: str) -> int | None: ...

    def leader_epoch(self, tp: TopicPartition) -> int | None:
        """``tp``'s leader epoch if this broker leads it, else ``None``."""

    def create_topic(
        self, topic: str, partitions: int, configs: Mapping[str, str], replicas: int | None
    ) -> None:
        """Create ``topic`` unless it exists: ``replicas`` per partition over the live
        brokers, or (``None``) on this node only."""

    def append(
        self, tp: TopicPartition, records: bytes, verification_guard: tuple[int, int] | None
    ) -> int:
        """Append as leader with acks=-1; the offset after the batch."""

    def error_code(self, exc: BaseException) -> int:
        """Kafka's error code for an exception ``append`` or ``create_topic`` raised."""

    def wake_fetches(self, tp: TopicPartition) -> None:
        """After an append: the partition's delayed fetches read again."""

    async def await_replication(self, tp: TopicPartition, offset: int, timeout_ms: int) -> None:
        """Return once the high watermark reaches ``offset``; raises
        :class:`CoordinatorWriteError` (NOT_LEADER_OR_FOLLOWER,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT)."""

    def read(self, tp: TopicPartition) -> Iterable[tuple[bytes, int, record.BatchHeader]]:
        """Every batch of ``tp`` up to its log end as ``(buffer, position, header)``."""


class CoordinatorTopic:
    """A coordinator's internal topic: its partition count (the existing topic's, else
    ``num_partitions``), a key's partition (``partitioner``, cached), its creation
    (:meth:`ensure_created`) and its records (:meth:`read`). In a cluster the topic gets
    ``replication_factor`` replicas over the live brokers (too few: the placement error);
    a single node creates it with one. ``ensure_created`` and ``read`` block."""

    def __init__(
        self,
        name: str,
        writer: PartitionWriter,
        *,
        num_partitions: int,
        replication_factor: int,
        configs: Mapping[str, str],
        partitioner: Callable[[str, int], int],
        cluster_mode: bool,
    ) -> None:
        self.name = name
        self.writer = writer
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.configs = dict(configs)
        self.cluster_mode = cluster_mode
        # a key's partition is asked for on every request: Java's String.hashCode is a loop
        self._partition_of = functools.lru_cache(maxsize=1 << 16)(partitioner)

    @property
    def partitions(self) -> int:
        existing = self.writer.partition_count(self.name)
        return existing if existing is not None else self.num_partitions

    def partition_for(self, key: str) -> int:
        return self._partition_of(key, self.partitions)

    def exists(self) -> bool:
        return self.writer.partition_count(self.name) is not None

    def ensure_created(self) -> None:
        """Create the topic unless it exists (Kafka creates its internal topics on first
        use: FindCoordinator, InitProducerId, a single node's first write). Blocking."""
        if self.cluster_mode:
            if not self.exists():
                self.writer.create_topic(
                    self.name, self.num_partitions, self.configs, self.replication_factor
                )
        elif self.writer.leader_epoch(TopicPartition(self.name, 0)) is None:
            self.writer.create_topic(self.name, self.partitions, self.configs, None)

    def read(self, index: int) -> Iterator[CoordinatorRecord]:
        """Partition ``index``'s records up to its log end, in log order: the data records
        with a key, and the COMMIT/ABORT markers of control batches (Kafka's
        ``CoordinatorLoaderImpl`` replays both). Blocking."""
        for data, pos, header in self.writer.read(TopicPartition(self.name, index)):
            producer_id = header.producer_id if header.is_transactional else -1
            for r in record.records(data, pos):
                if not header.is_control:
                    if r.key is not None:
                        yield CoordinatorRecord(r.offset, producer_id, r.key, r.value)
                    continue
                if r.key is None or r.value is None:
                    continue
                try:
                    kind, _epoch = record.parse_control_record(r.key, r.value)
                except (ValueError, KafkaCoreError) as exc:  # not a transaction marker
                    logger.warning("Skipping unknown control record: %s", exc)
                    continue
                yield CoordinatorRecord(r.offset, producer_id, b"", None, kind)


S = TypeVar("S", bound=CoordinatorShard)


@dataclass
class _Owned(Generic[S]):
    shard: S
    epoch: int | None
    """The leader epoch it was loaded at (``None``: a partition not created yet)."""


class CoordinatorRuntime(Generic[S]):
    """See the module documentation. ``write_timeout_ms``: how long an append waits for
    the high watermark. ``reload_on_new_epoch`` (Kafka's ``TransactionStateManager``,
    whose coordinator epoch is the epoch of the load): a re-election at a newer epoch
    reloads an owned partition; otherwise (the ``CoordinatorRuntime``) the shard stays
    and the epoch is recorded. ``serve_uncreated`` (a single node's group coordinator):
    the partitions of a topic not created yet are served here, by shards made empty on
    demand, and the first write creates the topic. ``base_sequence``: the base sequence of
    a non-transactional batch (Kafka's ``CoordinatorRuntime`` writes 0, numbering its
    records; the Scala ``TransactionStateManager`` -1, no sequence)."""

    def __init__(
        self,
        topic: CoordinatorTopic,
        build_shard: Callable[[int, int], S],
        *,
        io_executor: Executor | None,
        write_timeout_ms: int,
        reload_on_new_epoch: bool = False,
        serve_uncreated: bool = False,
        base_sequence: int = -1,
    ) -> None:
        self.topic = topic
        self.build_shard = build_shard
        self.io_executor = io_executor
        self.write_timeout_ms = write_timeout_ms
        self.reload_on_new_epoch = reload_on_new_epoch
        self.serve_uncreated = serve_uncreated
        self.base_sequence = base_sequence
        self._epochs: dict[int, int] = {}
        """Kafka's ``epochForPartitionId``: the newest leader epoch seen per partition."""
        self._owned: dict[int, _Owned[S]] = {}
        self._loading: dict[int, asyncio.Task[None]] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._jobs: list[asyncio.Task[None]] = []
        self._creating: asyncio.Task[None] | None = None
        self._timers: dict[int, dict[str, asyncio.TimerHandle]] = {}
        self._timer_tasks: set[asyncio.Task[None]] = set()
        self._last_written: dict[int, int] = {}
        """The offset after the last batch :meth:`append_uncommitted` wrote, per partition."""

    # -- ownership -------------------------------------------------------------------------

    def partition_error(self, index: int) -> int:
        """COORDINATOR_LOAD_IN_PROGRESS while partition ``index`` loads, NOT_COORDINATOR if
        it is not owned here, else NONE."""
        if index in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if index in self._owned or self._uncreated(index):
            return ErrorCode.NONE
        return ErrorCode.NOT_COORDINATOR

    def _uncreated(self, index: int) -> bool:
        return self.serve_uncreated and index not in self._epochs and index not in self._loading

    def shard(self, index: int) -> S | None:
        """The shard of owned partition ``index`` (``None``: not owned, or loading)."""
        owned = self._owned.get(index)
        if owned is None and self._uncreated(index):
            owned = self._owned[index] = _Owned(self.build_shard(index, -1), None)
            owned.shard.on_loaded()
        return owned.shard if owned is not None else None

    def shards(self) -> list[S]:
        """The installed shards."""
        return [owned.shard for owned in self._owned.values()]

    @property
    def loading(self) -> bool:
        return bool(self._loading)

    def owned_partitions(self) -> set[int]:
        return set(self._owned)

    async def wait_loaded(self, index: int) -> None:
        """Wait for partition ``index``'s load under way, if any (done or abandoned)."""
        loading = self._loading.get(index)
        if loading is not None:
            await asyncio.wait({loading})

    def on_leadership_change(
        self,
        leaders: Iterable[tuple[TopicPartition, int]],
        followers: Iterable[tuple[TopicPartition, int]],
    ) -> None:
        """KafkaApis' ``onLeadershipChange``: ``(partition, leader epoch)`` of the
        partitions that became leaders here and of those that became followers."""
        for tp, epoch in leaders:
            if tp.topic == self.topic.name:
                self.schedule_load(tp.partition, epoch)
        for tp, epoch in followers:
            if tp.topic == self.topic.name:
                self.schedule_unload(tp.partition, epoch)

    def _accept_epoch(self, index: int, epoch: int | None, action: str) -> bool:
        """Kafka's ``maybeUpdateCoordinatorEpoch``: record ``epoch`` unless older than the
        newest seen; whether it is current. ``None`` (a StopReplica without an epoch) is."""
        if epoch is None:
            return True
        current = self._epochs.get(index)
        if current is not None and epoch < current:
            logger.info(
                "Not %s %s-%d in epoch %d, since current epoch is %d",
                action,
                self.topic.name,
                index,
                epoch,
                current,
            )
            return False
        self._epochs[index] = epoch
        return True

    def schedule_load(self, index: int, epoch: int) -> None:
        """This broker leads partition ``index`` at ``epoch``: load it on the I/O executor
        (see the class documentation for a partition already owned or loading)."""
        if not self._accept_epoch(index, epoch, "loading"):
            return
        owned = self._owned.get(index)
        if self.reload_on_new_epoch:
            if owned is not None and owned.epoch == epoch:
                return
        elif owned is not None or index in self._loading:
            return
        self._drop(index)
        logger.info("Scheduling loading of %s-%d for epoch %d", self.topic.name, index, epoch)
        self._loading[index] = asyncio.get_running_loop().create_task(self._load(index, epoch))

    async def _load(self, index: int, epoch: int) -> None:
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        try:
            shard = await loop.run_in_executor(
                self.io_executor, self.replay_partition, index, epoch
            )
        except Exception:  # Kafka logs the failure and owns the partition all the same
            logger.exception("Error loading %s-%d", self.topic.name, index)
            shard = self.build_shard(index, epoch)
        if self._loading.get(index) is not asyncio.current_task():
            return  # unloaded (or stopped) meanwhile
        del self._loading[index]
        self._install(index, epoch, shard)
        logger.info(
            "Finished loading %s-%d for epoch %d in %d milliseconds",
            self.topic.name,
            index,
            epoch,
            int((time.monotonic() - start) * 1000),
        )

    def replay_partition(self, index: int, epoch: int) -> S:
        """A new shard rebuilt from partition ``index``'s records, as a load builds it (not
        installed). Blocking: the I/O executor."""
        shard = self.build_shard(index, epoch)
        for rec in self.topic.read(index):
            if rec.marker is None:
                shard.replay(rec)
            else:
                shard.replay_end_transaction_marker(
                    rec.producer_id, rec.marker == record.ControlType.COMMIT
                )
        return shard

    def _install(self, index: int, epoch: int, shard: S) -> None:
        self._owned[index] = _Owned(shard, epoch)
        shard.on_loaded()

    def load_led_partitions(self) -> None:
        """Load now, on the calling thread, every partition this node leads and does not
        own yet (a single node at start-up, and once it created the topic)."""
        for index in range(self.topic.partitions):
            if index in self._owned or index in self._loading:
                continue
            epoch = self.topic.writer.leader_epoch(TopicPartition(self.topic.name, index))
            if epoch is not None and self._accept_epoch(index, epoch, "loading"):
                self._install(index, epoch, self.replay_partition(index, epoch))

    def schedule_unload(self, index: int, epoch: int | None) -> None:
        """This broker no longer leads partition ``index``: its load is abandoned and its
        shard dropped. ``None`` (a StopReplica deleting the partition) always applies."""
        if self._accept_epoch(index, epoch, "unloading"):
            self._drop(index)
            logger.info("Unloaded %s-%d for epoch %s", self.topic.name, index, epoch)

    def _drop(self, index: int) -> None:
        self._cancel_timers(index)
        self._last_written.pop(index, None)
        loading = self._loading.pop(index, None)
        if loading is not None:
            loading.cancel()
        owned = self._owned.pop(index, None)
        if owned is not None:
            owned.shard.on_unloaded()

    # -- the topic -------------------------------------------------------------------------

    async def ensure_topic(self) -> None:
        """Create the topic if needed (on the I/O executor); a single node then loads the
        partitions it leads. Raises what the creation raised."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.io_executor, self.topic.ensure_created)
        if not self.topic.cluster_mode:
            self.load_led_partitions()

    def create_topic_in_background(self) -> None:
        """Start creating the topic unless under way (in a cluster FindCoordinator answers
        COORDINATOR_NOT_AVAILABLE meanwhile); a failure is logged, the next call retries."""
        if self._creating is None or self._creating.done():
            self._creating = asyncio.get_running_loop().create_task(self._create_topic())

    async def _create_topic(self) -> None:
        try:
            await self.ensure_topic()
        except Exception as exc:
            logger.warning("Could not create %s: %s", self.topic.name, exc)

    # -- writes ----------------------------------------------------------------------------

    def partition_lock(self, index: int) -> asyncio.Lock:
        """The lock a shard holds across "validate, append, apply" on partition ``index``:
        its writes are serialised, each waiting for the high watermark before the next
        validates. (Kafka's runtime pipelines them instead: it applies a write to a
        snapshot at once and answers at the high watermark; a shard whose writes are
        frequent, as KIP-848 heartbeats are, will want that.)"""
        lock = self._locks.get(index)
        if lock is None:
            lock = self._locks[index] = asyncio.Lock()
        return lock

    async def append(
        self,
        index: int,
        records: Sequence[tuple[bytes, bytes | None]],
        *,
        producer: tuple[int, int] | None = None,
        verification_guard: tuple[int, int] | None = None,
    ) -> int:
        """Append ``(key, value)`` records to partition ``index`` as one batch (acks=-1) on
        the I/O executor, then wait until the high watermark passes them (at most
        ``write_timeout_ms``); the offset after the batch (its records are the
        ``len(records)`` offsets before it), -1 for no records. ``producer``: (producer
        id, epoch) of a transactional batch, written as Kafka's runtime writes one
        (base sequence 0: the log checks the epoch, not the sequence); its KIP-890
        ``verification_guard``. Raises :class:`CoordinatorWriteError`."""
        if not records:
            return -1
        if self.partition_error(index) != ErrorCode.NONE:  # resigned while the caller waited
            raise CoordinatorWriteError(
                ErrorCode.NOT_COORDINATOR, f"{self.topic.name}-{index} is not owned here"
            )
        end = await self.append_uncommitted(
            index, records, producer=producer, verification_guard=verification_guard
        )
        await self.await_committed(index, end)
        return end

    async def append_uncommitted(
        self,
        index: int,
        records: Sequence[tuple[bytes, bytes | None]],
        *,
        producer: tuple[int, int] | None = None,
        verification_guard: tuple[int, int] | None = None,
    ) -> int:
        """The first half of :meth:`append` (Kafka's runtime writing to the partition
        before it answers): the records appended to the leader's log as one batch, not
        waiting for the high watermark; the offset after the batch (-1 for none). A shard
        whose writes are frequent (KIP-848 heartbeats) applies them to its state now,
        under :meth:`partition_lock`, releases the lock and answers after
        :meth:`await_committed`, so that its writes are pipelined instead of serialised
        one replication round trip apart. Raises :class:`CoordinatorWriteError`."""
        if not records:
            return -1
        if self.partition_error(index) != ErrorCode.NONE:  # resigned while the caller waited
            raise CoordinatorWriteError(
                ErrorCode.NOT_COORDINATOR, f"{self.topic.name}-{index} is not owned here"
            )
        tp = TopicPartition(self.topic.name, index)
        loop = asyncio.get_running_loop()
        end = await loop.run_in_executor(
            self.io_executor, self._write, tp, records, producer, verification_guard
        )
        self._last_written[index] = max(end, self._last_written.get(index, -1))
        self.topic.writer.wake_fetches(tp)
        return end

    async def await_written(self, index: int) -> None:
        """Wait until every batch written to partition ``index`` so far is committed (Kafka's
        runtime completes a write operation without records once the high watermark
        reaches the last written offset, so its answer never reflects uncommitted state).
        Raises :class:`CoordinatorWriteError`."""
        await self.await_committed(index, self._last_written.get(index, -1))

    async def await_committed(self, index: int, end: int) -> None:
        """Wait until the high watermark of partition ``index`` reaches ``end`` (an offset
        :meth:`append_uncommitted` returned; -1 returns at once), at most
        ``write_timeout_ms``. Raises :class:`CoordinatorWriteError`."""
        if end < 0:
            return
        tp = TopicPartition(self.topic.name, index)
        await self.topic.writer.await_replication(tp, end, self.write_timeout_ms)

    def _write(
        self,
        tp: TopicPartition,
        records: Sequence[tuple[bytes, bytes | None]],
        producer: tuple[int, int] | None,
        verification_guard: tuple[int, int] | None,
    ) -> int:
        writer = self.topic.writer
        try:
            if self.serve_uncreated:
                self.topic.ensure_created()
            now = int(time.time() * 1000)
            rows: list[tuple[int, int, bytes, bytes | None, list[tuple[str, bytes | None]]]]
            rows = [(i, now, key, value, []) for i, (key, value) in enumerate(records)]
            if producer is None:
                batch = record.build_batch(rows, base_sequence=self.base_sequence)
            else:
                batch = record.build_batch(
                    rows,
                    producer_id=producer[0],
                    producer_epoch=producer[1],
                    base_sequence=0,
                    transactional=True,
                )
            return writer.append(tp, batch, verification_guard)
        except CoordinatorWriteError:
            raise
        except Exception as exc:
            raise CoordinatorWriteError(writer.error_code(exc), f"{tp}: {exc}") from exc

    # -- timers (Kafka's CoordinatorTimer) -------------------------------------------------

    def schedule_timer(
        self,
        index: int,
        key: str,
        delay_ms: float,
        operation: Callable[[], Awaitable[object]],
        *,
        if_absent: bool = False,
    ) -> None:
        """Run ``operation`` in ``delay_ms`` unless the timer ``key`` of partition ``index``
        is rescheduled or cancelled first (Kafka's ``CoordinatorTimer.schedule``; with
        ``if_absent``, ``scheduleIfAbsent``). The timers of a partition are cancelled when
        it is unloaded; a failed operation is logged. Event loop only."""
        timers = self._timers.setdefault(index, {})
        existing = timers.get(key)
        if existing is not None:
            if if_absent:
                return
            existing.cancel()
        loop = asyncio.get_running_loop()
        handle = loop.call_later(max(0.0, delay_ms / 1000), self._fire, index, key, operation)
        timers[key] = handle

    def cancel_timer(self, index: int, key: str) -> None:
        handle = self._timers.get(index, {}).pop(key, None)
        if handle is not None:
            handle.cancel()

    def timer_scheduled(self, index: int, key: str) -> bool:
        return key in self._timers.get(index, {})

    def _fire(self, index: int, key: str, operation: Callable[[], Awaitable[object]]) -> None:
        self._timers.get(index, {}).pop(key, None)
        task = asyncio.get_running_loop().create_task(self._run_timer(key, operation))
        self._timer_tasks.add(task)
        task.add_done_callback(self._timer_tasks.discard)

    @staticmethod
    async def _run_timer(key: str, operation: Callable[[], Awaitable[object]]) -> None:
        try:
            await operation()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("Timer %s failed", key)

    def _cancel_timers(self, index: int) -> None:
        for handle in self._timers.pop(index, {}).values():
            handle.cancel()

    # -- background jobs -------------------------------------------------------------------

    def schedule_periodic(
        self, what: str, interval_ms: Callable[[], float], job: Callable[[], object]
    ) -> None:
        """Run ``job`` (a function or a coroutine function) every ``interval_ms()``
        milliseconds until :meth:`stop`; a failure is logged and the next run goes ahead,
        as Kafka's scheduler does."""
        self._jobs.append(
            asyncio.get_running_loop().create_task(self._every(what, interval_ms, job))
        )

    @staticmethod
    async def _every(
        what: str, interval_ms: Callable[[], float], job: Callable[[], object]
    ) -> None:
        while True:
            await asyncio.sleep(interval_ms() / 1000)
            try:
                done = job()
                if inspect.isawaitable(done):
                    await done
            except Exception:
                logger.exception("%s failed", what)

    async def stop(self) -> None:
        """Cancel the background jobs, the loads and the topic's creation."""
        for index in list(self._timers):
            self._cancel_timers(index)
        tasks = [*self._jobs, *self._loading.values(), *self._timer_tasks]
        if self._creating is not None:
            tasks.append(self._creating)
        self._jobs.clear()
        self._loading.clear()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
