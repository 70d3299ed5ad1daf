"""One transactional id's coordinator state (Kafka's ``TransactionMetadata``) and its
transitions.

A transition is two steps, as in Kafka: a ``prepare_*`` method checks the request
against the current state, sets :attr:`TransactionMetadata.pending_state` and returns a
:class:`TxnTransit` (Kafka's ``TxnTransitMetadata``), the state to write to
``__transaction_state``; once that write is replicated,
:meth:`TransactionMetadata.complete_transition` makes it current (else
:meth:`TransactionMetadata.abort_transition` drops the pending state). While a
transition is pending every other request for the id is answered
CONCURRENT_TRANSACTIONS, so one id has at most one write in flight.

States and the states each may follow (Kafka's ``TransactionState.validPreviousStates``)
are in :data:`VALID_PREVIOUS_STATES`. ``PrepareEpochFence`` is never written: it is the
pending state of a fence (InitProducerId while ``Ongoing``, a timed-out transaction)
that becomes a ``PrepareAbort`` with the bumped epoch.

Epochs: ``producer_epoch`` is the current one, ``last_producer_epoch`` the one before a
KIP-360 bump (so that a retried InitProducerId gets the same answer); an epoch at or
above 32766 (``Short.MaxValue - 1``) is exhausted and the next InitProducerId rotates to
a new producer id at epoch 0 (one epoch is kept free for fencing).

Thread-safety: event loop thread only (Kafka guards each metadata with its lock; here
the loop is the lock: a check and its ``prepare_*`` run without an ``await`` between).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkacore.coordinator.txn_records import TransactionLogValue, TransactionState
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode

__all__ = [
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "VALID_PREVIOUS_STATES",
    "IllegalTransitionError",
    "TransactionMetadata",
    "TxnTransit",
    "is_epoch_exhausted",
]

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
_SHORT_MAX = 32767

S = TransactionState

VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    # TV2: an abort from Empty / Complete* (a transaction that added no partition)
    S.PREPARE_ABORT: frozenset(
        {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    ),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}
"""Kafka's ``validPreviousStates`` per state."""


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka's ``TransactionMetadata.isEpochExhausted``: ``epoch >= Short.MaxValue - 1``."""
    return epoch >= _SHORT_MAX - 1


class IllegalTransitionError(RuntimeError):
    """A transition Kafka treats as an ``IllegalStateException`` (a coordinator bug, or a
    state written by someone else)."""


@dataclass(frozen=True)
class TxnTransit:
    """The state a transition writes (Kafka's ``TxnTransitMetadata``)."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: frozenset[TopicPartition]
    start_timestamp_ms: int
    last_update_timestamp_ms: int
    next_producer_id: int = NO_PRODUCER_ID
    """TV2: the producer id a transaction ending with an exhausted epoch rotates to."""
    client_transaction_version: int = 0
    """The transaction version the client runs (2: the epoch is bumped at every end)."""

    def to_log_value(self, version: int = 0) -> TransactionLogValue:
        """The ``TransactionLogValue`` of this state at ``version`` (partitions grouped by
        topic, sorted; the null list in ``Empty``); v1 adds the tagged fields TV2 keeps:
        the previous and next producer ids and the client's transaction version."""
        partitions: dict[str, list[int]] | None = None
        if self.state is not S.EMPTY:
            partitions = {}
            for tp in sorted(self.partitions):
                partitions.setdefault(tp.topic, []).append(tp.partition)
        return TransactionLogValue(
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            timeout_ms=self.timeout_ms,
            state=self.state,
            partitions=partitions,
            last_update_timestamp_ms=self.last_update_timestamp_ms,
            start_timestamp_ms=self.start_timestamp_ms,
            previous_producer_id=self.last_producer_id,
            next_producer_id=self.next_producer_id,
            client_transaction_version=self.client_transaction_version,
            version=version,
        )


@dataclass
class TransactionMetadata:
    """Kafka's ``TransactionMetadata``: see the module documentation."""

    transactional_id: str
    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: set[TopicPartition] = field(default_factory=set)
    start_timestamp_ms: int = -1
    last_update_timestamp_ms: int = -1
    pending_state: TransactionState | None = None
    has_failed_epoch_fence: bool = False
    """A fence's PrepareAbort failed to be written: the next fence keeps the epoch
    (Kafka's ``hasFailedEpochFence``)."""
    next_producer_id: int = NO_PRODUCER_ID
    """TV2: the producer id the transaction being ended rotates to (its epoch exhausted)."""
    client_transaction_version: int = 0
    """The transaction version of the client's last transaction (Kafka's
    ``clientTransactionVersion``; 2: KIP-890 part 2, an epoch bump at every end)."""

    @classmethod
    def from_log_value(
        cls, transactional_id: str, value: TransactionLogValue
    ) -> TransactionMetadata:
        """The metadata a load rebuilds from the last record of ``transactional_id``
        (v0 values carry no previous producer id / epoch)."""
        return cls(
            transactional_id=transactional_id,
            producer_id=value.producer_id,
            last_producer_id=value.previous_producer_id,
            producer_epoch=value.producer_epoch,
            last_producer_epoch=NO_PRODUCER_EPOCH,
            timeout_ms=value.timeout_ms,
            state=value.state,
            partitions={
                TopicPartition(t, p) for t, ps in (value.partitions or {}).items() for p in ps
            },
            start_timestamp_ms=value.start_timestamp_ms,
            last_update_timestamp_ms=value.last_update_timestamp_ms,
            next_producer_id=value.next_producer_id,
            client_transaction_version=value.client_transaction_version,
        )

    # -- queries ---------------------------------------------------------------------------

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def has_pending_transaction(self) -> bool:
        return self.state in (S.ONGOING, S.PREPARE_ABORT, S.PREPARE_COMMIT)

    # -- prepare ---------------------------------------------------------------------------

    def _prepare(
        self,
        state: TransactionState,
        producer_id: int,
        producer_epoch: int,
        last_producer_epoch: int,
        timeout_ms: int,
        partitions: frozenset[TopicPartition],
        start_timestamp_ms: int,
        update_timestamp_ms: int,
        last_producer_id: int | None = None,
        *,
        next_producer_id: int = NO_PRODUCER_ID,
        client_transaction_version: int | None = None,
    ) -> TxnTransit:
        """Kafka's ``prepareTransitionTo``: refuse a second pending transition or an
        invalid one, then mark ``state`` pending."""
        if self.pending_state is not None:
            raise IllegalTransitionError(
                f"Preparing transaction state transition to {state.wire_name} while it "
                f"already has a pending state {self.pending_state.wire_name}"
            )
        if producer_id < 0:
            raise IllegalTransitionError(f"Illegal new producer id {producer_id}")
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalTransitionError(
                f"Preparing transaction state transition to {state.wire_name} failed since "
                f"the target state is not a valid previous state of the current state "
                f"{self.state.wire_name}"
            )
        self.pending_state = state
        return TxnTransit(
            producer_id=producer_id,
            last_producer_id=self.last_producer_id
            if last_producer_id is None
            else last_producer_id,
            producer_epoch=producer_epoch,
            last_producer_epoch=last_producer_epoch,
            timeout_ms=timeout_ms,
            state=state,
            partitions=partitions,
            start_timestamp_ms=start_timestamp_ms,
            last_update_timestamp_ms=update_timestamp_ms,
            next_producer_id=next_producer_id,
            client_transaction_version=self.client_transaction_version
            if client_transaction_version is None
            else client_transaction_version,
        )

    def prepare_increment_producer_epoch(
        self, timeout_ms: int, expected_epoch: int | None, now_ms: int
    ) -> TxnTransit | int:
        """InitProducerId in Empty/Complete*: the bumped epoch; with a KIP-360 expected
        epoch, a retry of the previous bump (expected = last epoch) keeps the current
        epoch, any other mismatch is PRODUCER_FENCED (returned as an error code)."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTransitionError("Cannot allocate any more producer epochs")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            return ErrorCode.PRODUCER_FENCED
        return self._prepare(
            S.EMPTY, self.producer_id, epoch, last, timeout_ms, frozenset(), -1, now_ms
        )

    def prepare_producer_id_rotation(
        self, new_producer_id: int, timeout_ms: int, now_ms: int, record_last_epoch: bool
    ) -> TxnTransit:
        """The epoch is exhausted: a new producer id at epoch 0 (the old one kept as the
        last producer id, its epoch as the last epoch when the request named it)."""
        if self.has_pending_transaction:
            raise IllegalTransitionError(
                "Cannot rotate producer ids while a transaction is still pending"
            )
        return self._prepare(
            S.EMPTY,
            new_producer_id,
            0,
            self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
            timeout_ms,
            frozenset(),
            -1,
            now_ms,
            last_producer_id=self.producer_id,
        )

    def prepare_fence_producer_epoch(self) -> TxnTransit:
        """Kafka's ``prepareFenceProducerEpoch``: PrepareEpochFence with the epoch bumped
        (kept after a failed fence), then aborted with that epoch."""
        if self.producer_epoch >= _SHORT_MAX:
            raise IllegalTransitionError(
                f"Cannot fence producer with epoch equal to Short.MaxValue since this would "
                f"overflow ({self.transactional_id})"
            )
        epoch = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(
            S.PREPARE_EPOCH_FENCE,
            self.producer_id,
            epoch,
            NO_PRODUCER_EPOCH,
            self.timeout_ms,
            frozenset(self.partitions),
            self.start_timestamp_ms,
            self.last_update_timestamp_ms,
        )

    def prepare_fenced_abort(self, bumped_epoch: int, now_ms: int) -> TxnTransit:
        """A fence's abort (Kafka's ``endTransaction`` for a pending PrepareEpochFence):
        the fence is dropped, the bumped epoch taken in memory, and PrepareAbort
        prepared with it."""
        self.pending_state = None
        self.producer_epoch = bumped_epoch
        self.last_producer_epoch = NO_PRODUCER_EPOCH
        # the fence bumped the epoch already: TV2 does not bump it again for the markers
        return self.prepare_abort_or_commit(S.PREPARE_ABORT, now_ms, bump_epoch=False)

    def prepare_add_partitions(
        self,
        added: set[TopicPartition],
        now_ms: int,
        client_transaction_version: int | None = None,
    ) -> TxnTransit:
        """Ongoing with the union of the partitions; the start time is set by the first
        add of a transaction, which also records the client's transaction version."""
        start = (
            now_ms
            if self.state in (S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT)
            else self.start_timestamp_ms
        )
        return self._prepare(
            S.ONGOING,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.timeout_ms,
            frozenset(self.partitions | added),
            start,
            now_ms,
            client_transaction_version=client_transaction_version,
        )

    def prepare_abort_or_commit(
        self,
        state: TransactionState,
        now_ms: int,
        *,
        client_transaction_version: int | None = None,
        next_producer_id: int = NO_PRODUCER_ID,
        no_partition_added: bool = False,
        bump_epoch: bool = True,
    ) -> TxnTransit:
        """Prepare*: with transaction version 2 the epoch is bumped (the markers and the
        client's next transaction carry it; ``next_producer_id`` when it is exhausted),
        and an abort of a transaction that added no partition starts now."""
        version = (
            self.client_transaction_version
            if client_transaction_version is None
            else client_transaction_version
        )
        epoch, last = self.producer_epoch, self.last_producer_epoch
        if version >= 2 and bump_epoch:
            epoch, last = self.producer_epoch + 1, self.producer_epoch
        return self._prepare(
            state,
            self.producer_id,
            epoch,
            last,
            self.timeout_ms,
            frozenset(self.partitions),
            now_ms if no_partition_added else self.start_timestamp_ms,
            now_ms,
            next_producer_id=next_producer_id,
            client_transaction_version=version,
        )

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        """Complete* after every marker is written, with no partitions; with transaction
        version 2 and an exhausted epoch, the next producer id at epoch 0 (the old one
        kept as the last producer id, for the client's retry)."""
        state = S.COMPLETE_COMMIT if self.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
        producer_id, epoch, last_id = self.producer_id, self.producer_epoch, None
        if self.client_transaction_version >= 2 and self.next_producer_id != NO_PRODUCER_ID:
            producer_id, epoch, last_id = self.next_producer_id, 0, self.producer_id
        return self._prepare(
            state,
            producer_id,
            epoch,
            self.last_producer_epoch,
            self.timeout_ms,
            frozenset(),
            self.start_timestamp_ms,
            now_ms,
            last_id,
        )

    def prepare_dead(self) -> TxnTransit:
        """Expiry of the transactional id: Dead, written as a tombstone."""
        return self._prepare(
            S.DEAD,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.timeout_ms,
            frozenset(),
            self.start_timestamp_ms,
            self.last_update_timestamp_ms,
        )

    # -- complete --------------------------------------------------------------------------

    def complete_transition(self, transit: TxnTransit) -> None:
        """Kafka's ``completeTransitionTo``: ``transit`` was written; it becomes the state."""
        if self.pending_state is not transit.state:
            raise IllegalTransitionError(
                f"Completing transaction state transition to {transit.state.wire_name} while "
                f"the pending state is {self.pending_state}"
            )
        if self.state not in VALID_PREVIOUS_STATES[transit.state] and not (
            transit.state is S.PREPARE_ABORT and self.state is S.ONGOING
        ):
            raise IllegalTransitionError(
                f"Completing a transition from {self.state.wire_name} to {transit.state.wire_name}"
            )
        self.producer_id = transit.producer_id
        self.last_producer_id = transit.last_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.timeout_ms = transit.timeout_ms
        self.state = transit.state
        self.partitions = set(transit.partitions)
        self.start_timestamp_ms = transit.start_timestamp_ms
        self.last_update_timestamp_ms = transit.last_update_timestamp_ms
        self.next_producer_id = transit.next_producer_id
        self.client_transaction_version = transit.client_transaction_version
        self.pending_state = None
        if transit.state is S.PREPARE_ABORT:
            self.has_failed_epoch_fence = False

    def abort_transition(self) -> None:
        """The write failed: no transition is pending any more."""
        self.pending_state = None
