"""``__transaction_state`` and the transactional ids of the partitions this broker leads
(Kafka's ``TransactionStateManager``).

The topic (:class:`TransactionStateTopic`): created on first use (FindCoordinator or
InitProducerId for a transactional id), as ``__consumer_offsets`` is, with
``transaction.state.log.num.partitions`` partitions, ``cleanup.policy=compact``,
``compression.type=uncompressed``, ``unclean.leader.election.enable=false``,
``segment.bytes`` from ``transaction.state.log.segment.bytes`` and
``min.insync.replicas`` from ``transaction.state.log.min.isr``. In a cluster it gets
``transaction.state.log.replication.factor`` replicas over the live brokers and the
creation fails (FindCoordinator answers COORDINATOR_NOT_AVAILABLE) until that many are
alive; a single node creates it with one replica whatever the factor says (as it does
``__consumer_offsets``), its ``min.insync.replicas`` capped at that one replica.
Records: :mod:`kafkacore.coordinator.txn_records` (TransactionLogKey v0, value v0; a
null value is the tombstone of an expired id).

Ownership (Kafka's ``loadTransactionsForTxnTopicPartition`` /
``removeTransactionsForTxnTopicPartition``): :meth:`TransactionStateManager.on_elected`
(this broker became the partition's leader) loads the partition on the I/O executor —
its ids answer COORDINATOR_LOAD_IN_PROGRESS meanwhile — and
:meth:`~TransactionStateManager.on_resigned` drops it (NOT_COORDINATOR). The coordinator
epoch of a partition is its leader epoch at the election; a stale epoch is ignored. A
single node loads every partition it leads at start-up and after creating the topic.

Writes (:meth:`TransactionStateManager.append`, Kafka's ``appendTransactionToLog``): one
uncompressed record, acks=-1, waited for until the high watermark passes it (at most
``request.timeout.ms``); the append's failure maps to the coordinator's error as Kafka's
does (no partition / too few replicas / timeout -> COORDINATOR_NOT_AVAILABLE; not the
leader / storage error -> NOT_COORDINATOR); the pending transition then completes (or is
dropped), unless the coordinator epoch moved meanwhile (NOT_COORDINATOR).

Thread-safety: event loop only, except :class:`TransactionStateTopic`'s blocking
methods, which run on the I/O executor and touch no coordinator state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field

from kafkacore import record
from kafkacore.config import BrokerConfig
from kafkacore.coordinator.txn_records import (
    TRANSACTION_STATE_TOPIC,
    TransactionState,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
    partition_for_transactional_id,
)
from kafkacore.errors import KafkaCoreError, RecordBatchTooLargeError, RecordTooLargeError
from kafkacore.log import AppendOrigin, TopicPartition
from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers
from kafkacore.protocol import ErrorCode
from kafkacore.server.partition import NotEnoughReplicasError, NotLeaderOrFollowerError, Partition
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.txn.state import TransactionMetadata, TxnTransit

__all__ = [
    "TransactionStateManager",
    "TransactionStateTopic",
    "TxnPartitionMissingError",
    "TxnReplicationTimeoutError",
]

logger = logging.getLogger("kafkacore.server.txn")


class TxnPartitionMissingError(KafkaCoreError):
    """The ``__transaction_state`` partition is not hosted here (Kafka's
    UNKNOWN_TOPIC_OR_PARTITION on the coordinator's append)."""


class TxnReplicationTimeoutError(KafkaCoreError):
    """The append was not replicated within ``request.timeout.ms`` (REQUEST_TIMED_OUT)."""


_APPEND_ERRORS: list[tuple[tuple[type[BaseException], ...], int]] = [
    (
        (TxnPartitionMissingError, NotEnoughReplicasError, TxnReplicationTimeoutError),
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ),
    ((NotLeaderOrFollowerError, OSError), ErrorCode.NOT_COORDINATOR),
    ((RecordTooLargeError, RecordBatchTooLargeError), ErrorCode.UNKNOWN_SERVER_ERROR),
]


def append_error_code(exc: BaseException) -> int:
    """The coordinator's error for a failed ``__transaction_state`` append (Kafka's
    ``appendTransactionToLog`` mapping of the produce status)."""
    for kinds, code in _APPEND_ERRORS:
        if isinstance(exc, kinds):
            return code
    return ErrorCode.UNKNOWN_SERVER_ERROR


def _now_ms() -> int:
    return int(time.time() * 1000)


class TransactionStateTopic:
    """``__transaction_state`` itself: creation, appends, reads. Blocking methods (run
    them on the I/O executor); the replica manager is safe from any thread."""

    def __init__(self, replicas: ReplicaManager, *, cluster_mode: bool) -> None:
        self.replicas = replicas
        self.cluster_mode = cluster_mode
        self._configured_partitions = replicas.config.transaction_state_log_num_partitions

    @property
    def partitions(self) -> int:
        """The topic's partition count once it exists, else the configured one."""
        existing = self.replicas.cache.partition_count(TRANSACTION_STATE_TOPIC)
        return existing if existing is not None else self._configured_partitions

    def partition_for(self, transactional_id: str) -> int:
        return partition_for_transactional_id(transactional_id, self.partitions)

    def exists(self) -> bool:
        return self.replicas.cache.contains_topic(TRANSACTION_STATE_TOPIC)

    def _configs(self, replication_factor: int) -> dict[str, str]:
        config = self.replicas.config
        return {
            "cleanup.policy": "compact",
            "compression.type": "uncompressed",
            "unclean.leader.election.enable": "false",
            "segment.bytes": str(config.transaction_state_log_segment_bytes),
            "min.insync.replicas": str(
                min(config.transaction_state_log_min_isr, replication_factor)
                if not self.cluster_mode
                else config.transaction_state_log_min_isr
            ),
        }

    def ensure_created(self) -> None:
        """Create the topic unless it exists (see the module documentation); raises
        :class:`~kafkacore.placement.InvalidReplicationFactorError` in a
        cluster with too few live brokers."""
        if self.cluster_mode:
            if not self.exists():
                self._create_replicated()
            return
        if self.replicas.partition(TRANSACTION_STATE_TOPIC, 0) is None:
            self.replicas.ensure_topic(TRANSACTION_STATE_TOPIC, self.partitions, self._configs(1))

    def _create_replicated(self) -> None:
        config = self.replicas.config
        brokers = sorted(
            (BrokerMetadata(b.node_id, b.rack) for b in self.replicas.cache.alive_brokers()),
            key=lambda b: b.id,
        )
        count = self._configured_partitions
        factor = config.transaction_state_log_replication_factor
        by_partition = assign_replicas_to_brokers(brokers, count, factor)
        with contextlib.suppress(KeyError):  # created meanwhile by another broker
            self.replicas.create_topic(
                TRANSACTION_STATE_TOPIC,
                count,
                self._configs(factor),
                assignment=[by_partition[p] for p in range(count)],
            )

    def _partition(self, index: int) -> Partition:
        partition = self.replicas.partition(TRANSACTION_STATE_TOPIC, index)
        if partition is None:
            raise TxnPartitionMissingError(f"{TRANSACTION_STATE_TOPIC}-{index} is not hosted here")
        return partition

    def write(self, index: int, key: bytes, value: bytes | None) -> tuple[TopicPartition, int]:
        """Append one record to partition ``index`` with acks=-1, uncompressed; the
        partition and the offset its high watermark must reach. Raises what the append
        raised."""
        now = _now_ms()
        batch = record.build_batch([(0, now, key, value, [])])
        partition = self._partition(index)
        info = self.replicas.append_to_leader(
            partition, batch, required_acks=-1, origin=AppendOrigin.COORDINATOR
        )
        return partition.topic_partition, info.last_offset + 1

    def read_partition(self, index: int) -> Iterator[tuple[str, bytes | None]]:
        """``(transactional id, value)`` of every record of partition ``index`` up to its
        log end, in log order (control batches and undecodable keys skipped)."""
        log = self.replicas.get_log(TRANSACTION_STATE_TOPIC, index)
        if log is None:
            return
        for data, pos, header in log.batches():
            if header.is_control:
                continue
            for r in record.records(data, pos):
                if r.key is None:
                    continue
                try:
                    key = decode_txn_key(r.key)
                except Exception as exc:
                    logger.warning("Skipping undecodable transaction log record: %s", exc)
                    continue
                yield key, r.value


@dataclass
class TxnPartitionCache:
    """The ids of one owned ``__transaction_state`` partition (Kafka's
    ``TxnMetadataCacheEntry``)."""

    coordinator_epoch: int
    transactions: dict[str, TransactionMetadata] = field(default_factory=dict)


LoadListener = Callable[[int, int, list[TransactionMetadata]], None]


class TransactionStateManager:
    """See the module documentation. ``on_loaded(partition, coordinator_epoch,
    transactions)`` is called on the loop after each load (the coordinator completes the
    Prepare* transactions found)."""

    def __init__(
        self,
        config: BrokerConfig,
        replicas: ReplicaManager,
        *,
        clock: Callable[[], int] = _now_ms,
        io_executor: Executor | None = None,
        cluster_mode: bool | None = None,
    ) -> None:
        self.config = config
        self.topic = TransactionStateTopic(
            replicas,
            cluster_mode=bool(config.zookeeper_connect) if cluster_mode is None else cluster_mode,
        )
        self.clock = clock
        self.io_executor = io_executor
        self.on_loaded: LoadListener | None = None
        self._cache: dict[int, TxnPartitionCache] = {}
        self._loading: dict[int, asyncio.Task[None]] = {}
        self._epochs: dict[int, int] = {}
        self._creating: asyncio.Task[None] | None = None

    @property
    def cluster_mode(self) -> bool:
        return self.topic.cluster_mode

    def partition_for(self, transactional_id: str) -> int:
        return self.topic.partition_for(transactional_id)

    # -- lookups ---------------------------------------------------------------------------

    def get_state(self, transactional_id: str) -> tuple[int, int, TransactionMetadata | None]:
        """Kafka's ``getTransactionState``: ``(error, coordinator epoch, metadata)`` -
        COORDINATOR_LOAD_IN_PROGRESS while the id's partition loads, NOT_COORDINATOR if
        it is not owned here, else NONE and the metadata (None: unknown id)."""
        index = self.partition_for(transactional_id)
        if index in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, None
        entry = self._cache.get(index)
        if entry is None:
            return ErrorCode.NOT_COORDINATOR, -1, None
        return ErrorCode.NONE, entry.coordinator_epoch, entry.transactions.get(transactional_id)

    def put_if_absent(
        self, metadata: TransactionMetadata
    ) -> tuple[int, int, TransactionMetadata | None]:
        """Kafka's ``putTransactionStateIfNotExists``: the metadata now cached for the id
        (an existing one wins)."""
        index = self.partition_for(metadata.transactional_id)
        entry = self._cache.get(index)
        if index in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, None
        if entry is None:
            return ErrorCode.NOT_COORDINATOR, -1, None
        current = entry.transactions.setdefault(metadata.transactional_id, metadata)
        return ErrorCode.NONE, entry.coordinator_epoch, current

    def all_transactions(self) -> Iterator[tuple[int, TransactionMetadata]]:
        """``(coordinator epoch, metadata)`` of every owned id."""
        for entry in list(self._cache.values()):
            for metadata in list(entry.transactions.values()):
                yield entry.coordinator_epoch, metadata

    @property
    def loading(self) -> bool:
        return bool(self._loading)

    def owned_partitions(self) -> set[int]:
        return set(self._cache)

    def validate_timeout(self, timeout_ms: int) -> bool:
        """Kafka's ``validateTransactionTimeoutMs``: ``0 < timeout <= max timeout``
        (``transaction.max.timeout.ms``)."""
        return 0 < timeout_ms <= self.config.transaction_max_timeout_ms

    # -- ownership -------------------------------------------------------------------------

    def _accept_epoch(self, index: int, leader_epoch: int | None) -> bool:
        if leader_epoch is None:
            return True
        current = self._epochs.get(index)
        if current is not None and leader_epoch < current:
            return False
        self._epochs[index] = leader_epoch
        return True

    def load(self) -> None:
        """Single node: every partition it leads and has not loaded yet, loaded now
        (synchronously: at start-up, and after the topic's creation)."""
        for index in range(self.topic.partitions):
            if index in self._cache or index in self._loading:
                continue
            partition = self.topic.replicas.partition(TRANSACTION_STATE_TOPIC, index)
            if partition is None or not partition.is_leader:
                continue
            if self._accept_epoch(index, partition.leader_epoch):
                self._install(index, partition.leader_epoch, self._read_partition(index))

    def _read_partition(self, index: int) -> dict[str, TransactionMetadata]:
        """The ids of partition ``index`` from its records (the last one of an id wins; a
        tombstone removes it). Blocking; touches no manager state."""
        loaded: dict[str, TransactionMetadata] = {}
        for transactional_id, raw in self.topic.read_partition(index):
            try:
                value = decode_txn_value(raw)
            except Exception as exc:
                logger.warning("Skipping undecodable state of %s: %s", transactional_id, exc)
                continue
            if value is None:
                loaded.pop(transactional_id, None)
            else:
                loaded[transactional_id] = TransactionMetadata.from_log_value(
                    transactional_id, value
                )
        return loaded

    def _install(self, index: int, epoch: int, loaded: dict[str, TransactionMetadata]) -> None:
        self._cache[index] = TxnPartitionCache(epoch, loaded)
        if self.on_loaded is not None:
            self.on_loaded(index, epoch, list(loaded.values()))

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """Kafka's ``loadTransactionsForTxnTopicPartition``, scheduled on the I/O
        executor; a stale epoch is ignored, an owned partition takes the new epoch as its
        coordinator epoch only after a reload (its ids are read again)."""
        if not self._accept_epoch(partition, leader_epoch):
            return
        entry = self._cache.get(partition)
        if entry is not None and entry.coordinator_epoch == leader_epoch:
            return
        self._cache.pop(partition, None)
        previous = self._loading.pop(partition, None)
        if previous is not None:
            previous.cancel()
        logger.info(
            "Scheduling loading of transaction state from %s-%d for epoch %d",
            TRANSACTION_STATE_TOPIC,
            partition,
            leader_epoch,
        )
        task = asyncio.get_running_loop().create_task(self._load_partition(partition, leader_epoch))
        self._loading[partition] = task

    async def _load_partition(self, index: int, epoch: int) -> None:
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        try:
            loaded = await loop.run_in_executor(self.io_executor, self._read_partition, index)
        except Exception:
            logger.exception(
                "Error loading transactions from %s-%d", TRANSACTION_STATE_TOPIC, index
            )
            loaded = {}
        if self._loading.get(index) is not asyncio.current_task():
            return
        del self._loading[index]
        self._install(index, epoch, loaded)
        logger.info(
            "Finished loading %d transaction metadata from %s-%d in %d milliseconds, of epoch %d",
            len(loaded),
            TRANSACTION_STATE_TOPIC,
            index,
            int((time.monotonic() - start) * 1000),
            epoch,
        )

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """Kafka's ``removeTransactionsForTxnTopicPartition``: the ids of ``partition``
        are forgotten here (their pending writes end NOT_COORDINATOR)."""
        if not self._accept_epoch(partition, leader_epoch):
            return
        loading = self._loading.pop(partition, None)
        if loading is not None:
            loading.cancel()
        entry = self._cache.pop(partition, None)
        if entry is not None:
            logger.info(
                "Unloaded %d transactional ids of %s-%d for epoch %s",
                len(entry.transactions),
                TRANSACTION_STATE_TOPIC,
                partition,
                leader_epoch,
            )

    async def ensure_topic(self) -> None:
        """Create the topic if needed (on the I/O executor); a single node then loads
        the partitions it leads. Raises what the creation raised."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.io_executor, self.topic.ensure_created)
        if not self.cluster_mode:
            self.load()

    def create_topic_in_background(self) -> None:
        """Cluster: start creating the topic unless under way (FindCoordinator answers
        COORDINATOR_NOT_AVAILABLE meanwhile; a failure is logged)."""
        if self._creating is not None and not self._creating.done():
            return
        self._creating = asyncio.get_running_loop().create_task(self._create_topic())

    async def _create_topic(self) -> None:
        try:
            await self.ensure_topic()
        except Exception as exc:
            logger.warning("Could not create %s: %s", TRANSACTION_STATE_TOPIC, exc)

    async def stop(self) -> None:
        tasks = [t for t in [self._creating, *self._loading.values()] if t is not None]
        self._loading.clear()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- writes ----------------------------------------------------------------------------

    async def append(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        transit: TxnTransit,
        *,
        retry_on_unavailable: bool = False,
    ) -> int:
        """Kafka's ``appendTransactionToLog``: write ``transit`` (a tombstone for Dead),
        then complete the pending transition of the cached metadata; the error code.
        On failure the pending state is dropped, except for COORDINATOR_NOT_AVAILABLE
        when ``retry_on_unavailable`` (the caller writes again)."""
        index = self.partition_for(transactional_id)
        key = encode_txn_key(transactional_id)
        value = (
            None
            if transit.state is TransactionState.DEAD
            else encode_txn_value(transit.to_log_value())
        )
        code = self._epoch_error(transactional_id, coordinator_epoch)
        if code == ErrorCode.NONE:
            try:
                loop = asyncio.get_running_loop()
                tp, end = await loop.run_in_executor(
                    self.io_executor, self.topic.write, index, key, value
                )
                self.topic.replicas.purgatory.wake(tp)
                await self._await_replication(tp, end)
            except Exception as exc:
                code = append_error_code(exc)
                logger.warning(
                    "Appending %s's transition to %s failed: %s (%s)",
                    transactional_id,
                    transit.state.wire_name,
                    exc,
                    ErrorCode(code).name,
                )
        error, epoch, metadata = self.get_state(transactional_id)
        if code == ErrorCode.NONE:
            if error != ErrorCode.NONE or metadata is None or epoch != coordinator_epoch:
                return error if error != ErrorCode.NONE else ErrorCode.NOT_COORDINATOR
            metadata.complete_transition(transit)
            if transit.state is TransactionState.DEAD:
                entry = self._cache.get(index)
                if entry is not None and entry.transactions.get(transactional_id) is metadata:
                    del entry.transactions[transactional_id]
            return ErrorCode.NONE
        retried = retry_on_unavailable and code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        owned = error == ErrorCode.NONE and metadata is not None and epoch == coordinator_epoch
        if owned and not retried and metadata is not None:
            metadata.abort_transition()
        return code

    def _epoch_error(self, transactional_id: str, coordinator_epoch: int) -> int:
        error, epoch, metadata = self.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return error
        if metadata is None or epoch != coordinator_epoch:
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    async def _await_replication(self, tp: TopicPartition, end: int) -> None:
        """acks=-1: done once the high watermark reaches ``end`` (the replica manager's
        delayed-produce wait, at most ``request.timeout.ms``); raises what the produce
        status maps from (Kafka's ``appendTransactionToLog``)."""
        replicas = self.topic.replicas
        [code] = await replicas.wait_for_replication([(tp, end)], self.config.request_timeout_ms)
        if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
            raise NotLeaderOrFollowerError(f"{tp} is no longer led here")
        if code == ErrorCode.REQUEST_TIMED_OUT:
            raise TxnReplicationTimeoutError(f"{tp}: not replicated to offset {end}")
        if code != ErrorCode.NONE:
            raise NotEnoughReplicasError(f"{tp}: too few in-sync replicas after the append")
