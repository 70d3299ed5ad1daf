"""The transaction coordinator (Kafka's ``TransactionCoordinator``, transaction version
0 as Kafka 3.9 runs it): InitProducerId for transactional ids, AddPartitionsToTxn
(and its KIP-890 verification), EndTxn, DescribeTransactions, ListTransactions, the
abort of timed-out transactions and the expiry of idle transactional ids.

Each handler answers Kafka's error codes (the handlers downgrade PRODUCER_FENCED for old
versions):

* InitProducerId: an empty id INVALID_REQUEST; a timeout outside
  ``(0, transaction.max.timeout.ms]`` INVALID_TRANSACTION_TIMEOUT; a pending transition
  or Prepare* CONCURRENT_TRANSACTIONS; a KIP-360 producer id / epoch that does not match
  PRODUCER_FENCED; Empty/Complete* bump the epoch (a new producer id once it is
  exhausted); Ongoing fences the epoch, aborts the transaction with it and answers
  CONCURRENT_TRANSACTIONS (the retry gets a second bump).
* AddPartitionsToTxn / AddOffsetsToTxn: unknown id or another producer id
  INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED, a pending transition or
  Prepare* CONCURRENT_TRANSACTIONS, partitions already in the Ongoing transaction NONE at
  once, else Ongoing with the union is written.
* EndTxn: from Ongoing, Prepare* is written and NONE answered; the markers are sent
  afterwards (:mod:`kafkacore.server.txn.markers`) and Complete* (no partitions) written
  once all are acknowledged. A retry of the same result answers NONE in Complete* and
  CONCURRENT_TRANSACTIONS in Prepare*; the opposite result, or EndTxn in Empty,
  INVALID_TXN_STATE.

Background work: every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``
each Ongoing transaction older than its timeout is fenced and aborted; every
``transaction.remove.expired.transaction.cleanup.interval.ms`` each id idle (Empty or
Complete*) for ``transactional.id.expiration.ms`` is written as a tombstone and
forgotten. A partition loaded on election resends the markers of its Prepare*
transactions.

Thread-safety: event loop only (the loop orders every check-and-prepare; see
:mod:`kafkacore.server.txn.state`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Executor
from dataclasses import dataclass

from kafkacore.config import BrokerConfig
from kafkacore.coordinator.txn_records import TransactionState
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.txn.manager import TransactionStateManager, _now_ms
from kafkacore.server.txn.markers import MarkerResult, TransactionMarkerChannelManager
from kafkacore.server.txn.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    IllegalTransitionError,
    TransactionMetadata,
    TxnTransit,
    is_epoch_exhausted,
)

__all__ = ["InitProducerIdResult", "TransactionCoordinator", "TransactionDescription"]

logger = logging.getLogger("kafkacore.server.txn")

S = TransactionState


@dataclass(frozen=True)
class InitProducerIdResult:
    error_code: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True)
class TransactionDescription:
    """One DescribeTransactions entry (Kafka's defaults for an error: empty state name,
    zeros)."""

    transactional_id: str
    error_code: int
    state: str = ""
    timeout_ms: int = 0
    start_timestamp_ms: int = 0
    producer_id: int = 0
    producer_epoch: int = 0
    partitions: tuple[tuple[str, tuple[int, ...]], ...] = ()


class TransactionCoordinator:
    """See the module documentation. ``allocate_producer_id`` gives a new producer id
    (the metadata store's, on the I/O executor); ``markers`` sends the markers."""

    def __init__(
        self,
        config: BrokerConfig,
        replicas: ReplicaManager,
        allocate_producer_id: Callable[[], Awaitable[int]],
        *,
        clock: Callable[[], int] = _now_ms,
        io_executor: Executor | None = None,
        cluster_mode: bool | None = None,
        markers: TransactionMarkerChannelManager,
    ) -> None:
        self.config = config
        self.clock = clock
        self.state = TransactionStateManager(
            config,
            replicas,
            clock=clock,
            io_executor=io_executor,
            cluster_mode=cluster_mode,
        )
        self.state.on_loaded = self._on_partition_loaded
        self.allocate_producer_id = allocate_producer_id
        self.markers = markers
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def cluster_mode(self) -> bool:
        return self.state.cluster_mode

    def partition_for(self, transactional_id: str) -> int:
        return self.state.partition_for(transactional_id)

    # -- lifecycle -------------------------------------------------------------------------

    def load(self) -> None:
        """Single node: load the partitions it leads (start-up)."""
        self.state.load()

    def start(self) -> None:
        runtime = self.state.runtime
        # Kafka's transaction-abort and transactionalId-expiration tasks
        runtime.schedule_periodic(
            "Aborting timed-out transactions",
            lambda: self.config.transaction_abort_timed_out_transaction_cleanup_interval_ms,
            self.abort_timed_out_transactions,
        )
        runtime.schedule_periodic(
            "Expiring transactional ids",
            lambda: self.config.transaction_remove_expired_transaction_cleanup_interval_ms,
            self.remove_expired_transactional_ids,
        )

    async def stop(self) -> None:
        await self.state.stop()  # first: the periodic jobs and the loads start tasks
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.markers.close()

    def on_leadership_change(
        self,
        leaders: list[tuple[TopicPartition, int]],
        followers: list[tuple[TopicPartition, int]],
    ) -> None:
        """KafkaApis' ``onLeadershipChange`` for ``__transaction_state`` partitions."""
        self.state.runtime.on_leadership_change(leaders, followers)

    def _spawn(self, coro: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_partition_loaded(
        self, partition: int, coordinator_epoch: int, loaded: list[TransactionMetadata]
    ) -> None:
        """Kafka's load completion: a Prepare* transaction found gets its markers sent
        again, then Complete* written."""
        for metadata in loaded:
            if (
                metadata.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT)
                and not metadata.pending_transition_in_progress
            ):
                committed = metadata.state is S.PREPARE_COMMIT
                transit = metadata.prepare_complete(self.clock())
                logger.info(
                    "Completing %s's transaction (%s) found on loading %d",
                    metadata.transactional_id,
                    metadata.state.wire_name,
                    partition,
                )
                self._spawn_markers(metadata, coordinator_epoch, committed, transit)

    # -- InitProducerId --------------------------------------------------------------------

    async def init_producer_id(
        self,
        transactional_id: str,
        timeout_ms: int,
        expected: tuple[int, int] | None = None,
    ) -> InitProducerIdResult:
        """Kafka's ``handleInitProducerId`` for a transactional id; ``expected`` is the
        KIP-360 ``(producer id, epoch)`` of the request (v3+), if any."""
        if not transactional_id:
            return InitProducerIdResult(ErrorCode.INVALID_REQUEST)
        if not self.state.validate_timeout(timeout_ms):
            return InitProducerIdResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        error, coordinator_epoch, metadata = self.state.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return InitProducerIdResult(error)
        if metadata is None:
            try:
                producer_id = await self.allocate_producer_id()
            except Exception as exc:
                logger.warning("Could not allocate a producer id: %s", exc)
                return InitProducerIdResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
            created = TransactionMetadata(
                transactional_id=transactional_id,
                producer_id=producer_id,
                last_producer_id=NO_PRODUCER_ID,
                producer_epoch=NO_PRODUCER_EPOCH,
                last_producer_epoch=NO_PRODUCER_EPOCH,
                timeout_ms=timeout_ms,
                state=S.EMPTY,
                last_update_timestamp_ms=self.clock(),
            )
            error, coordinator_epoch, metadata = self.state.put_if_absent(created)
            if error != ErrorCode.NONE or metadata is None:
                return InitProducerIdResult(error)
        try:
            prepared = await self._prepare_init(transactional_id, timeout_ms, metadata, expected)
        except IllegalTransitionError as exc:
            logger.error("InitProducerId of %s: %s", transactional_id, exc)
            return InitProducerIdResult(ErrorCode.UNKNOWN_SERVER_ERROR)
        if isinstance(prepared, int):
            return InitProducerIdResult(prepared)
        if prepared.state is S.PREPARE_EPOCH_FENCE:
            code = await self._end_transaction(
                transactional_id,
                prepared.producer_id,
                prepared.producer_epoch,
                committed=False,
                from_client=False,
            )
            if metadata.pending_state is S.PREPARE_EPOCH_FENCE:  # the abort never started
                metadata.abort_transition()
            return InitProducerIdResult(
                ErrorCode.CONCURRENT_TRANSACTIONS if code == ErrorCode.NONE else code
            )
        code = await self.state.append(transactional_id, coordinator_epoch, prepared)
        if code != ErrorCode.NONE:
            return InitProducerIdResult(code)
        return InitProducerIdResult(ErrorCode.NONE, prepared.producer_id, prepared.producer_epoch)

    async def _prepare_init(
        self,
        transactional_id: str,
        timeout_ms: int,
        metadata: TransactionMetadata,
        expected: tuple[int, int] | None,
    ) -> TxnTransit | int:
        """Kafka's ``prepareInitProducerIdTransit``."""
        if metadata.pending_transition_in_progress:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if expected is not None and not (
            metadata.producer_epoch == NO_PRODUCER_EPOCH
            or expected[0] == metadata.producer_id
            or (expected[0] == metadata.last_producer_id and is_epoch_exhausted(expected[1]))
        ):
            return ErrorCode.PRODUCER_FENCED
        state = metadata.state
        if state in (S.PREPARE_ABORT, S.PREPARE_COMMIT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if state in (S.COMPLETE_ABORT, S.COMPLETE_COMMIT, S.EMPTY):
            if metadata.is_producer_epoch_exhausted and (
                expected is None or expected[1] == metadata.producer_epoch
            ):
                try:
                    new_pid = await self.allocate_producer_id()
                except Exception as exc:
                    logger.warning("Could not allocate a producer id: %s", exc)
                    return ErrorCode.COORDINATOR_NOT_AVAILABLE
                if metadata.pending_transition_in_progress:  # another request meanwhile
                    return ErrorCode.CONCURRENT_TRANSACTIONS
                return metadata.prepare_producer_id_rotation(
                    new_pid, timeout_ms, self.clock(), expected is not None
                )
            return metadata.prepare_increment_producer_epoch(
                timeout_ms, expected[1] if expected is not None else None, self.clock()
            )
        if state is S.ONGOING:
            return metadata.prepare_fence_producer_epoch()
        logger.error("Found transactionalId %s with state %s", transactional_id, state.wire_name)
        return ErrorCode.UNKNOWN_SERVER_ERROR

    # -- AddPartitionsToTxn ----------------------------------------------------------------

    def _check_producer(
        self, transactional_id: str, producer_id: int, producer_epoch: int
    ) -> tuple[int, int, TransactionMetadata | None]:
        error, coordinator_epoch, metadata = self.state.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return error, -1, None
        if metadata is None or metadata.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, None
        if metadata.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED, -1, None
        return ErrorCode.NONE, coordinator_epoch, metadata

    async def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
    ) -> int:
        """Kafka's ``handleAddPartitionsToTransaction``: one error for all partitions."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        error, coordinator_epoch, metadata = self._check_producer(
            transactional_id, producer_id, producer_epoch
        )
        if metadata is None:
            return error
        if metadata.pending_transition_in_progress or metadata.state in (
            S.PREPARE_COMMIT,
            S.PREPARE_ABORT,
        ):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if metadata.state is S.ONGOING and partitions <= metadata.partitions:
            return ErrorCode.NONE
        if metadata.state not in (S.EMPTY, S.ONGOING, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            return ErrorCode.INVALID_TXN_STATE
        transit = metadata.prepare_add_partitions(partitions, self.clock())
        return await self.state.append(transactional_id, coordinator_epoch, transit)

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
    ) -> dict[TopicPartition, int]:
        """Kafka's ``handleVerifyPartitionsInTransaction`` (AddPartitionsToTxn v4+
        ``VerifyOnly``): NONE for a partition in the transaction, TRANSACTION_ABORTABLE
        for the others; or one error for all."""
        if not transactional_id:
            return dict.fromkeys(partitions, int(ErrorCode.INVALID_REQUEST))
        error, _epoch, metadata = self._check_producer(
            transactional_id, producer_id, producer_epoch
        )
        if metadata is None:
            return dict.fromkeys(partitions, error)
        if metadata.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return dict.fromkeys(partitions, int(ErrorCode.CONCURRENT_TRANSACTIONS))
        return {
            tp: int(
                ErrorCode.NONE if tp in metadata.partitions else ErrorCode.TRANSACTION_ABORTABLE
            )
            for tp in partitions
        }

    # -- EndTxn ----------------------------------------------------------------------------

    async def end_transaction(
        self, transactional_id: str, producer_id: int, producer_epoch: int, committed: bool
    ) -> int:
        """Kafka's ``handleEndTransaction`` from a client."""
        return await self._end_transaction(
            transactional_id, producer_id, producer_epoch, committed=committed, from_client=True
        )

    async def _end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        *,
        committed: bool,
        from_client: bool,
    ) -> int:
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        error, coordinator_epoch, metadata = self.state.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return error
        if metadata is None or metadata.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if (from_client and producer_epoch != metadata.producer_epoch) or (
            producer_epoch < metadata.producer_epoch
        ):
            return ErrorCode.PRODUCER_FENCED
        if (
            metadata.pending_transition_in_progress
            and metadata.pending_state is not S.PREPARE_EPOCH_FENCE
        ):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        state = metadata.state
        fence = False
        if state is S.ONGOING:
            if not committed and metadata.pending_state is S.PREPARE_EPOCH_FENCE:
                fence = True
                transit = metadata.prepare_fenced_abort(producer_epoch, self.clock())
            elif metadata.pending_transition_in_progress:  # a fence not yet turned abort
                return ErrorCode.CONCURRENT_TRANSACTIONS
            else:
                transit = metadata.prepare_abort_or_commit(
                    S.PREPARE_COMMIT if committed else S.PREPARE_ABORT, self.clock()
                )
        elif state is S.COMPLETE_COMMIT:
            return ErrorCode.NONE if committed else self._invalid(metadata, committed)
        elif state is S.COMPLETE_ABORT:
            return ErrorCode.NONE if not committed else self._invalid(metadata, committed)
        elif state is S.PREPARE_COMMIT:
            return (
                ErrorCode.CONCURRENT_TRANSACTIONS
                if committed
                else self._invalid(metadata, committed)
            )
        elif state is S.PREPARE_ABORT:
            return (
                ErrorCode.CONCURRENT_TRANSACTIONS
                if not committed
                else self._invalid(metadata, committed)
            )
        elif state is S.EMPTY:
            return self._invalid(metadata, committed)
        else:
            logger.error(
                "Found transactionalId %s with state %s", transactional_id, state.wire_name
            )
            return ErrorCode.UNKNOWN_SERVER_ERROR
        code = await self.state.append(transactional_id, coordinator_epoch, transit)
        if code != ErrorCode.NONE:
            if fence:
                metadata.has_failed_epoch_fence = True
            return code
        # the Prepare* is written: answer now, complete with the markers afterwards
        error, epoch, current = self.state.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return error
        if current is None or epoch != coordinator_epoch:
            return ErrorCode.NOT_COORDINATOR
        if current.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if current.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        if current.pending_transition_in_progress:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        expected_state = S.PREPARE_COMMIT if committed else S.PREPARE_ABORT
        if current.state is not expected_state:
            return ErrorCode.INVALID_TXN_STATE
        complete = current.prepare_complete(self.clock())
        self._spawn_markers(current, coordinator_epoch, committed, complete)
        return ErrorCode.NONE

    @staticmethod
    def _invalid(metadata: TransactionMetadata, committed: bool) -> int:
        logger.debug(
            "TransactionalId %s's state is %s, but received transaction marker result to send: %s",
            metadata.transactional_id,
            metadata.state.wire_name,
            "COMMIT" if committed else "ABORT",
        )
        return ErrorCode.INVALID_TXN_STATE

    # -- markers and completion ------------------------------------------------------------

    def _spawn_markers(
        self,
        metadata: TransactionMetadata,
        coordinator_epoch: int,
        committed: bool,
        complete: TxnTransit,
    ) -> None:
        self._spawn(self._complete_transaction(metadata, coordinator_epoch, committed, complete))

    def _owns(self, metadata: TransactionMetadata, coordinator_epoch: int) -> bool:
        error, epoch, current = self.state.get_state(metadata.transactional_id)
        return error == ErrorCode.NONE and current is metadata and epoch == coordinator_epoch

    async def _complete_transaction(
        self,
        metadata: TransactionMetadata,
        coordinator_epoch: int,
        committed: bool,
        complete: TxnTransit,
    ) -> None:
        """Send the markers (Complete* is pending meanwhile), then write Complete*,
        again while the write answers COORDINATOR_NOT_AVAILABLE (Kafka's
        ``tryAppendToLog`` retry)."""
        transactional_id = metadata.transactional_id
        try:
            result = await self.markers.send_markers(
                transactional_id,
                complete.producer_id,
                complete.producer_epoch,
                committed,
                coordinator_epoch,
                set(metadata.partitions),
                is_current=lambda: self._owns(metadata, coordinator_epoch),
                on_partition_done=metadata.partitions.discard,
            )
        except Exception:
            logger.exception("Sending the markers of %s failed", transactional_id)
            return
        if result != MarkerResult.COMPLETED:
            return
        while self._owns(metadata, coordinator_epoch):
            code = await self.state.append(
                transactional_id, coordinator_epoch, complete, retry_on_unavailable=True
            )
            if code == ErrorCode.NONE:
                logger.debug(
                    "Completed %s's transaction (%s)", transactional_id, complete.state.wire_name
                )
                return
            if code != ErrorCode.COORDINATOR_NOT_AVAILABLE:
                logger.info(
                    "Writing %s's completion failed with %s; the next coordinator completes it",
                    transactional_id,
                    ErrorCode(code).name,
                )
                return
            await asyncio.sleep(0.1)

    # -- describe / list -------------------------------------------------------------------

    def describe(self, transactional_id: str) -> TransactionDescription:
        """Kafka's ``handleDescribeTransactions``."""
        error, _epoch, metadata = self.state.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return TransactionDescription(transactional_id, error)
        if metadata is None or metadata.state is S.DEAD:
            return TransactionDescription(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(metadata.partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return TransactionDescription(
            transactional_id,
            ErrorCode.NONE,
            state=metadata.state.wire_name,
            timeout_ms=metadata.timeout_ms,
            start_timestamp_ms=metadata.start_timestamp_ms,
            producer_id=metadata.producer_id,
            producer_epoch=metadata.producer_epoch,
            partitions=tuple((t, tuple(ps)) for t, ps in by_topic.items()),
        )

    def list_transactions(
        self, state_filters: list[str], producer_id_filters: list[int], duration_filter_ms: int = -1
    ) -> tuple[int, list[str], list[tuple[str, int, str]]]:
        """Kafka's ``listTransactionStates``: ``(error, unknown state filters,
        [(transactional id, producer id, state name)])``; never Dead;
        COORDINATOR_LOAD_IN_PROGRESS while a partition loads."""
        if self.state.loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [], []
        unknown: list[str] = []
        states: set[TransactionState] = set()
        for name in state_filters:
            state = TransactionState.from_wire_name(name)
            if state is None:
                unknown.append(name)
            else:
                states.add(state)
        pids = set(producer_id_filters)
        now = self.clock()
        out: list[tuple[str, int, str]] = []
        for _epoch, metadata in self.state.all_transactions():
            if metadata.state is S.DEAD:
                continue
            if pids and metadata.producer_id not in pids:
                continue
            if state_filters and metadata.state not in states:
                continue
            if duration_filter_ms >= 0 and now - metadata.start_timestamp_ms <= duration_filter_ms:
                continue
            out.append((metadata.transactional_id, metadata.producer_id, metadata.state.wire_name))
        return ErrorCode.NONE, unknown, out

    # -- timeouts and expiry ---------------------------------------------------------------

    async def abort_timed_out_transactions(self) -> list[str]:
        """Kafka's ``abortTimedOutTransactions``: each Ongoing transaction past its
        timeout with no pending transition is fenced (epoch bump) and aborted; the ids
        handled."""
        now = self.clock()
        handled: list[str] = []
        for _epoch, metadata in self.state.all_transactions():
            if (
                metadata.state is not S.ONGOING
                or metadata.pending_transition_in_progress
                or metadata.start_timestamp_ms + metadata.timeout_ms >= now
            ):
                continue
            transit = metadata.prepare_fence_producer_epoch()
            logger.info(
                "Aborting %s's transaction due to timeout (producer id %d, epoch %d)",
                metadata.transactional_id,
                transit.producer_id,
                transit.producer_epoch,
            )
            code = await self._end_transaction(
                metadata.transactional_id,
                transit.producer_id,
                transit.producer_epoch,
                committed=False,
                from_client=False,
            )
            if code != ErrorCode.NONE:
                if metadata.pending_state is S.PREPARE_EPOCH_FENCE:
                    metadata.abort_transition()
                logger.info(
                    "Aborting %s's timed-out transaction failed: %s",
                    metadata.transactional_id,
                    ErrorCode(code).name,
                )
            handled.append(metadata.transactional_id)
        return handled

    async def remove_expired_transactional_ids(self) -> list[str]:
        """Kafka's ``removeExpiredTransactionalIds``: ids idle (Empty / Complete*) since
        ``transactional.id.expiration.ms`` get a tombstone and are forgotten."""
        now = self.clock()
        expiration = self.config.transactional_id_expiration_ms
        removed: list[str] = []
        for coordinator_epoch, metadata in self.state.all_transactions():
            if (
                metadata.state not in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)
                or metadata.pending_transition_in_progress
                or metadata.last_update_timestamp_ms > now - expiration
            ):
                continue
            transit = metadata.prepare_dead()
            code = await self.state.append(metadata.transactional_id, coordinator_epoch, transit)
            if code == ErrorCode.NONE:
                removed.append(metadata.transactional_id)
            else:
                logger.info(
                    "Expiring transactional id %s failed: %s",
                    metadata.transactional_id,
                    ErrorCode(code).name,
                )
        return removed
