"""``__transaction_state`` and the transactional ids of the partitions this broker leads
(Kafka's ``TransactionStateManager``), on the coordinator runtime
(:mod:`kafkacore.coordinator.runtime`): one :class:`TxnShard` per partition.

The topic (:func:`transaction_state_topic`): created on first use (FindCoordinator or
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
``removeTransactionsForTxnTopicPartition``): the runtime loads a partition this broker
became the leader of on the I/O executor — its ids answer COORDINATOR_LOAD_IN_PROGRESS
meanwhile — and drops one it resigned (NOT_COORDINATOR). The coordinator epoch of a
partition is its leader epoch at the load: a re-election at a newer epoch reloads it; a
stale epoch is ignored. A single node loads every partition it leads at start-up and
after creating the topic.

Writes (:meth:`TransactionStateManager.append`, Kafka's ``appendTransactionToLog``): one
uncompressed record, acks=-1, waited for until the high watermark passes it (at most
``request.timeout.ms``); the append's failure maps to the coordinator's error as Kafka's
does (:func:`~kafkacore.coordinator.runtime.append_error_code`); the pending transition
then completes (or is dropped), unless the coordinator epoch moved meanwhile
(NOT_COORDINATOR).

Thread-safety: event loop only; a shard is replayed on the I/O executor before it is
installed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor

from kafkacore.config import BrokerConfig
from kafkacore.coordinator.runtime import (
    CoordinatorRecord,
    CoordinatorRuntime,
    CoordinatorTopic,
    PartitionWriter,
    append_error_code,
)
from kafkacore.coordinator.txn_records import (
    TRANSACTION_STATE_TOPIC,
    TransactionState,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
    partition_for_transactional_id,
)
from kafkacore.protocol import ErrorCode
from kafkacore.server.coordinator_writer import CoordinatorPartitionWriter
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.txn.state import TransactionMetadata, TxnTransit

__all__ = ["TransactionStateManager", "TxnShard", "transaction_state_topic"]

logger = logging.getLogger("kafkacore.server.txn")


def _now_ms() -> int:
    return int(time.time() * 1000)


def transaction_state_topic(
    writer: PartitionWriter, config: BrokerConfig, cluster_mode: bool
) -> CoordinatorTopic:
    """``__transaction_state`` as ``config`` defines it (see the module documentation)."""
    min_isr = config.transaction_state_log_min_isr
    return CoordinatorTopic(
        TRANSACTION_STATE_TOPIC,
        writer,
        num_partitions=config.transaction_state_log_num_partitions,
        replication_factor=config.transaction_state_log_replication_factor,
        configs={
            "cleanup.policy": "compact",
            "compression.type": "uncompressed",
            "unclean.leader.election.enable": "false",
            "segment.bytes": str(config.transaction_state_log_segment_bytes),
            "min.insync.replicas": str(min_isr if cluster_mode else min(min_isr, 1)),
        },
        partitioner=partition_for_transactional_id,
        cluster_mode=cluster_mode,
    )


class TxnShard:
    """The ids of one owned ``__transaction_state`` partition (Kafka's
    ``TxnMetadataCacheEntry``), loaded at ``coordinator_epoch``: the last record of an id
    wins, a tombstone removes it."""

    def __init__(
        self, partition: int, coordinator_epoch: int, on_loaded: Callable[[TxnShard], None]
    ) -> None:
        self.partition = partition
        self.coordinator_epoch = coordinator_epoch
        self.transactions: dict[str, TransactionMetadata] = {}
        self._on_loaded = on_loaded

    def replay(self, record: CoordinatorRecord) -> None:
        try:
            transactional_id = decode_txn_key(record.key)
        except Exception as exc:
            logger.warning("Skipping undecodable transaction log record: %s", exc)
            return
        try:
            value = decode_txn_value(record.value)
        except Exception as exc:
            logger.warning("Skipping undecodable state of %s: %s", transactional_id, exc)
            return
        if value is None:
            self.transactions.pop(transactional_id, None)
        else:
            self.transactions[transactional_id] = TransactionMetadata.from_log_value(
                transactional_id, value
            )

    def replay_end_transaction_marker(self, producer_id: int, committed: bool) -> None:
        """None: the coordinator writes no transactions of its own to its log."""

    def on_loaded(self) -> None:
        self._on_loaded(self)

    def on_unloaded(self) -> None:
        logger.info(
            "Unloaded %d transactional ids of %s-%d",
            len(self.transactions),
            TRANSACTION_STATE_TOPIC,
            self.partition,
        )


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
        self.cache = replicas.cache
        if cluster_mode is None:
            cluster_mode = bool(config.zookeeper_connect)
        self.runtime = CoordinatorRuntime(
            transaction_state_topic(
                CoordinatorPartitionWriter(replicas), replicas.config, cluster_mode
            ),
            self._new_shard,
            io_executor=io_executor,
            write_timeout_ms=config.request_timeout_ms,
            reload_on_new_epoch=True,
        )
        self.topic = self.runtime.topic
        self.clock = clock
        self.on_loaded: LoadListener | None = None

    def _new_shard(self, partition: int, coordinator_epoch: int) -> TxnShard:
        return TxnShard(partition, coordinator_epoch, self._shard_loaded)

    def _shard_loaded(self, shard: TxnShard) -> None:
        if self.on_loaded is not None:
            self.on_loaded(
                shard.partition, shard.coordinator_epoch, list(shard.transactions.values())
            )

    @property
    def cluster_mode(self) -> bool:
        return self.topic.cluster_mode

    def partition_for(self, transactional_id: str) -> int:
        return self.topic.partition_for(transactional_id)

    # -- lookups ---------------------------------------------------------------------------

    def _owned_shard(self, transactional_id: str) -> tuple[int, TxnShard | None]:
        index = self.partition_for(transactional_id)
        error = self.runtime.partition_error(index)
        if error != ErrorCode.NONE:
            return error, None
        shard = self.runtime.shard(index)
        return (ErrorCode.NONE, shard) if shard is not None else (ErrorCode.NOT_COORDINATOR, None)

    def get_state(self, transactional_id: str) -> tuple[int, int, TransactionMetadata | None]:
        """Kafka's ``getTransactionState``: ``(error, coordinator epoch, metadata)`` -
        COORDINATOR_LOAD_IN_PROGRESS while the id's partition loads, NOT_COORDINATOR if
        it is not owned here, else NONE and the metadata (None: unknown id)."""
        error, shard = self._owned_shard(transactional_id)
        if shard is None:
            return error, -1, None
        return ErrorCode.NONE, shard.coordinator_epoch, shard.transactions.get(transactional_id)

    def put_if_absent(
        self, metadata: TransactionMetadata
    ) -> tuple[int, int, TransactionMetadata | None]:
        """Kafka's ``putTransactionStateIfNotExists``: the metadata now cached for the id
        (an existing one wins)."""
        error, shard = self._owned_shard(metadata.transactional_id)
        if shard is None:
            return error, -1, None
        current = shard.transactions.setdefault(metadata.transactional_id, metadata)
        return ErrorCode.NONE, shard.coordinator_epoch, current

    def all_transactions(self) -> Iterator[tuple[int, TransactionMetadata]]:
        """``(coordinator epoch, metadata)`` of every owned id."""
        for shard in self.runtime.shards():
            for metadata in list(shard.transactions.values()):
                yield shard.coordinator_epoch, metadata

    @property
    def loading(self) -> bool:
        return self.runtime.loading

    def owned_partitions(self) -> set[int]:
        return self.runtime.owned_partitions()

    def validate_timeout(self, timeout_ms: int) -> bool:
        """Kafka's ``validateTransactionTimeoutMs``: ``0 < timeout <= max timeout``
        (``transaction.max.timeout.ms``)."""
        return 0 < timeout_ms <= self.config.transaction_max_timeout_ms

    # -- lifecycle (the runtime's) ---------------------------------------------------------

    def load(self) -> None:
        """Single node: every partition it leads and has not loaded yet, loaded now
        (synchronously: at start-up, and after the topic's creation)."""
        self.runtime.load_led_partitions()

    async def ensure_topic(self) -> None:
        """Create the topic if needed (on the I/O executor); a single node then loads
        the partitions it leads. Raises what the creation raised."""
        await self.runtime.ensure_topic()

    def create_topic_in_background(self) -> None:
        """Cluster: start creating the topic unless under way (FindCoordinator answers
        COORDINATOR_NOT_AVAILABLE meanwhile; a failure is logged)."""
        self.runtime.create_topic_in_background()

    async def stop(self) -> None:
        await self.runtime.stop()

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
        # Kafka writes v1 (flexible, TV2's tagged fields) once transaction.version >= 1
        version = 1 if self.cache.features.transaction_version >= 1 else 0
        value = (
            None
            if transit.state is TransactionState.DEAD
            else encode_txn_value(transit.to_log_value(version), version)
        )
        code = self._epoch_error(transactional_id, coordinator_epoch)
        if code == ErrorCode.NONE:
            try:
                await self.runtime.append(index, [(key, value)])
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
                shard = self.runtime.shard(index)
                if shard is not None and shard.transactions.get(transactional_id) is metadata:
                    del shard.transactions[transactional_id]
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
