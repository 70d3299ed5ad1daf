"""The share coordinator's state (KIP-932): what ``__share_group_state`` holds for each
share partition, and the shard that rebuilds and writes it (Kafka's
``ShareCoordinatorShard``, ``ShareGroupOffset`` and ``PersisterStateBatchCombiner``).

A share partition is one (group, topic id, partition). Its durable state is a start offset
(SPSO), a state epoch (bumped when the group's offsets are reset or the state deleted and
re-initialized), the leader epoch of the partition leader that last wrote it, the number of
records already in a terminal state past the start offset (``deliveryCompleteCount``,
KIP-1226) and the state batches: ``(firstOffset, lastOffset, deliveryState,
deliveryCount)`` of the offsets in flight that are not plain "available, never
delivered".

The partition leader writes deltas (WriteShareGroupState); the coordinator appends them as
``ShareUpdate`` records and, every ``share.coordinator.snapshot.update.records.per.snapshot``
updates (and for a partition with none for a while), a whole ``ShareSnapshot``. Replaying
both rebuilds the state. :func:`combine_state_batches` is the merge both sides use.

The shard holds no runtime: :class:`ShareStateShard` validates a request and returns the
records to append with the answer; the service (``kafkacore.server.share.coordinator``)
appends them through the coordinator runtime and then :meth:`~ShareStateShard.replay`\\ s
them, exactly what a load does.

Thread-safety: a shard is replayed on an I/O thread before it is installed, then used on
the event loop only.
"""

from __future__ import annotations

import bisect
import enum
import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from kafkacore._java import java_string_hash, utils_abs
from kafkacore.coordinator.codec import Reader, read_message, write_message
from kafkacore.coordinator.runtime import CoordinatorRecord
from kafkacore.coordinator.share_records import (
    SHARE_SNAPSHOT,
    SHARE_STATE_RECORDS,
    SHARE_UPDATE,
)
from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.errors import message as default_message

__all__ = [
    "DEFAULT_STATE_EPOCH",
    "UNINITIALIZED_DELIVERY_COMPLETE_COUNT",
    "UNINITIALIZED_START_OFFSET",
    "PartitionResult",
    "RecordState",
    "ShareGroupOffset",
    "SharePartitionKey",
    "ShareStateShard",
    "StateBatch",
    "StateError",
    "combine_state_batches",
    "decode_share_record",
    "encode_share_record",
    "share_coordinator_key",
    "share_state_partition",
]

logger = logging.getLogger("kafkacore.coordinator.share")

UNINITIALIZED_START_OFFSET = -1
"""Kafka's ``PartitionFactory.UNINITIALIZED_START_OFFSET``: a share partition with no state."""
DEFAULT_STATE_EPOCH = 0
UNINITIALIZED_DELIVERY_COMPLETE_COUNT = -1


class RecordState(enum.IntEnum):
    """Kafka's ``RecordState``: the delivery state of an in-flight record (the
    ``deliveryState`` byte of a state batch)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVING = 3
    ARCHIVED = 4

    @property
    def is_terminal(self) -> bool:
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


class StateBatch(NamedTuple):
    """Kafka's ``PersisterStateBatch``: offsets ``first_offset..last_offset`` (inclusive)
    in ``delivery_state`` after ``delivery_count`` deliveries. Ordered as Kafka's
    ``compareTo``: first offset, last offset, delivery count, delivery state."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int

    def sort_key(self) -> tuple[int, int, int, int]:
        return (self.first_offset, self.last_offset, self.delivery_count, self.delivery_state)


class SharePartitionKey(NamedTuple):
    """Kafka's ``SharePartitionKey``: whose state a record or request is about."""

    group_id: str
    topic_id: uuid.UUID
    partition: int


def share_coordinator_key(key: SharePartitionKey) -> str:
    """The coordinator key of a share partition (FindCoordinator v6, key type SHARE):
    ``"<group>:<topic id, Kafka's base64>:<partition>"`` (``asCoordinatorKey``)."""
    return f"{key.group_id}:{uuid_to_base64(key.topic_id)}:{key.partition}"


def share_state_partition(coordinator_key: str, partitions: int) -> int:
    """``__share_group_state``'s partition for a coordinator key
    (``ShareCoordinatorService.partitionFor``: ``Utils.abs(key.hashCode()) % n``)."""
    return utils_abs(java_string_hash(coordinator_key)) % partitions


# --- merging state batches (Kafka's PersisterStateBatchCombiner) -------------------------


def _priority(batch: StateBatch) -> tuple[int, int]:
    """Which of two overlapping batches wins (``compareBatchDeliveryInfo``): the higher
    delivery count, then the higher state (a record's state only moves forward)."""
    return (batch.delivery_count, batch.delivery_state)


def combine_state_batches(
    so_far: Sequence[StateBatch], new: Sequence[StateBatch], start_offset: int
) -> list[StateBatch]:
    """The non-overlapping batches of ``so_far`` and ``new`` together, in offset order:
    the parts before ``start_offset`` (unless -1) dropped, overlaps resolved in favour of
    the higher delivery count (then state), overlapping or contiguous batches of the same
    delivery count and state merged. The same steps as Kafka's combiner, so the batches
    a record holds are the ones Kafka writes: pairs are taken from the front of the sorted
    set, batches found mergeable with nothing are set aside in order (and not looked at
    again), a resolved pair goes back into the set."""
    combined = [*so_far, *new]
    if start_offset != -1:
        pruned = []
        for b in combined:
            if b.last_offset < start_offset:
                continue
            if b.first_offset >= start_offset:
                pruned.append(b)
            else:
                pruned.append(b._replace(first_offset=start_offset))
        combined = pruned
    if len(combined) < 2:
        return combined
    # a sorted set (TreeSet: equal batches collapse)
    pending: list[StateBatch] = sorted(set(combined), key=StateBatch.sort_key)
    final: list[StateBatch] = []

    def add(batch: StateBatch) -> None:
        if batch not in pending:
            bisect.insort(pending, batch, key=StateBatch.sort_key)

    while True:
        pair = _merge_candidates(pending, final)
        if pair is None:
            break
        prev, cand = pair
        pending.remove(prev)
        pending.remove(cand)
        if _priority(cand) == _priority(prev):
            add(prev._replace(last_offset=max(cand.last_offset, prev.last_offset)))
            continue
        for batch in _resolve_overlap(prev, cand):
            add(batch)
    final.extend(pending)
    return final


def _merge_candidates(
    pending: list[StateBatch], final: list[StateBatch]
) -> tuple[StateBatch, StateBatch] | None:
    """The first pair of the sorted ``pending`` that overlaps or is contiguous with the
    same delivery info; the batches before it move to ``final``."""
    if not pending:
        return None
    prev = pending[0]
    skipped = 0
    for cand in pending[1:]:
        if cand.first_offset <= prev.last_offset or (
            prev.last_offset + 1 == cand.first_offset and _priority(prev) == _priority(cand)
        ):
            final.extend(pending[:skipped])
            del pending[:skipped]
            return prev, cand
        skipped += 1
        prev = cand
    final.extend(pending[:skipped])
    del pending[:skipped]
    return None


def _resolve_overlap(prev: StateBatch, cand: StateBatch) -> list[StateBatch]:
    """Two overlapping batches of different delivery info (``prev`` sorts first) as the
    batches that replace them."""
    cand_wins = _priority(cand) >= _priority(prev)
    if cand.first_offset == prev.first_offset:
        if cand.last_offset == prev.last_offset:
            return [cand]  # the set order already made cand the higher one
        # cand is longer (sorted by last offset)
        if not cand_wins:
            return [prev, cand._replace(first_offset=prev.last_offset + 1)]
        return [cand]
    before = prev._replace(last_offset=cand.first_offset - 1)
    if cand.last_offset < prev.last_offset:  # prev swallows cand
        if not cand_wins:
            return [prev]
        return [before, cand, prev._replace(first_offset=cand.last_offset + 1)]
    if cand.last_offset == prev.last_offset:
        return [prev] if not cand_wins else [before, cand]
    # cand runs past prev
    if not cand_wins:
        return [prev, cand._replace(first_offset=prev.last_offset + 1)]
    return [before, cand]


# --- one share partition's durable state --------------------------------------------------


@dataclass(frozen=True)
class ShareGroupOffset:
    """Kafka's ``ShareGroupOffset``: the coordinator's view of one share partition."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int = UNINITIALIZED_DELIVERY_COMPLETE_COUNT
    create_timestamp: int = -1
    write_timestamp: int = -1
    state_batches: tuple[StateBatch, ...] = ()

    def to_snapshot_value(self) -> dict[str, Any]:
        return {
            "snapshotEpoch": self.snapshot_epoch,
            "stateEpoch": self.state_epoch,
            "leaderEpoch": self.leader_epoch,
            "startOffset": self.start_offset,
            "deliveryCompleteCount": self.delivery_complete_count,
            "createTimestamp": self.create_timestamp,
            "writeTimestamp": self.write_timestamp,
            "stateBatches": [_batch_json(b) for b in self.state_batches],
        }

    def to_update_value(self) -> dict[str, Any]:
        return {
            "snapshotEpoch": self.snapshot_epoch,
            "leaderEpoch": self.leader_epoch,
            "startOffset": self.start_offset,
            "deliveryCompleteCount": self.delivery_complete_count,
            "stateBatches": [_batch_json(b) for b in self.state_batches],
        }


def _batch_json(b: StateBatch) -> dict[str, int]:
    return {
        "firstOffset": b.first_offset,
        "lastOffset": b.last_offset,
        "deliveryState": b.delivery_state,
        "deliveryCount": b.delivery_count,
    }


def _batches(values: Iterable[dict[str, Any]]) -> tuple[StateBatch, ...]:
    return tuple(
        StateBatch(v["firstOffset"], v["lastOffset"], v["deliveryState"], v["deliveryCount"])
        for v in values
    )


# --- the records -----------------------------------------------------------------------


def encode_share_record(
    record_type: int, key: SharePartitionKey, value: dict[str, Any] | None
) -> tuple[bytes, bytes | None]:
    """A ``__share_group_state`` record as Kafka's ``CoordinatorRecordSerde`` writes it
    (value version 0; ``None``: a tombstone)."""
    key_schema, value_schema = SHARE_STATE_RECORDS[record_type]
    key_dict = {"groupId": key.group_id, "topicId": key.topic_id, "partition": key.partition}
    key_bytes = record_type.to_bytes(2, "big") + write_message(key_schema, key_dict, 0)
    if value is None:
        return key_bytes, None
    return key_bytes, (0).to_bytes(2, "big") + write_message(value_schema, value, 0)


def decode_share_record(
    key: bytes, value: bytes | None
) -> tuple[int, SharePartitionKey, dict[str, Any] | None]:
    """``(record type, share partition, value or None)``; raises on foreign bytes."""
    reader = Reader(key)
    record_type = reader.int16()
    key_schema, value_schema = SHARE_STATE_RECORDS[record_type]
    k = read_message(key_schema, reader, record_type)
    spk = SharePartitionKey(k["groupId"], k["topicId"], k["partition"])
    if value is None:
        return record_type, spk, None
    reader = Reader(value)
    version = reader.int16()
    return record_type, spk, read_message(value_schema, reader, version)


# --- the shard -------------------------------------------------------------------------


class StateError(Exception):
    """A share-state request refused with Kafka's ``error_code`` and message."""

    def __init__(self, error_code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message if message is not None else default_message(error_code)


class PartitionResult(NamedTuple):
    """What a request about one share partition produced: the records to append (empty:
    nothing to write) and the answer's data (the state read, or ``None``)."""

    records: list[tuple[bytes, bytes | None]]
    state: ShareGroupOffset | None = None


NULL_TOPIC_ID = "The topic id cannot be null."
NEGATIVE_PARTITION_ID = "The partition id cannot be a negative number."
WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."


@dataclass
class ShareStateShard:
    """The share partitions whose coordinator key maps to one ``__share_group_state``
    partition (Kafka's ``ShareCoordinatorShard``). ``snapshot_every``: the
    ``share.coordinator.snapshot.update.records.per.snapshot`` config; ``topic_exists``:
    whether a topic id / partition exists in the cluster's metadata; ``clock``: wall-clock
    ms for the snapshots' timestamps."""

    partition: int
    snapshot_every: Callable[[], int]
    topic_exists: Callable[[uuid.UUID, int], bool]
    clock: Callable[[], int]
    states: dict[SharePartitionKey, ShareGroupOffset] = field(default_factory=dict)
    leader_epochs: dict[SharePartitionKey, int] = field(default_factory=dict)
    state_epochs: dict[SharePartitionKey, int] = field(default_factory=dict)
    updates_since_snapshot: dict[SharePartitionKey, int] = field(default_factory=dict)

    # -- replay (CoordinatorShard) --------------------------------------------------------

    def replay(self, record: CoordinatorRecord) -> None:
        try:
            record_type, key, value = decode_share_record(record.key, record.value)
        except Exception as exc:  # a foreign record: skip it, as Kafka logs
            logger.warning("Skipping undecodable share state record: %s", exc)
            return
        self.apply(record_type, key, value)

    def apply(self, record_type: int, key: SharePartitionKey, value: dict[str, Any] | None) -> None:
        """One record's effect on the state (``replay``'s, also applied after a write)."""
        if value is None:
            if record_type == SHARE_SNAPSHOT:  # the share partition's state is deleted
                for table in (self.states, self.leader_epochs, self.state_epochs):
                    table.pop(key, None)
                self.updates_since_snapshot.pop(key, None)
            return
        self._raise_epoch(self.leader_epochs, key, value["leaderEpoch"])
        if record_type == SHARE_SNAPSHOT:
            self._raise_epoch(self.state_epochs, key, value["stateEpoch"])
            self.states[key] = ShareGroupOffset(
                snapshot_epoch=value["snapshotEpoch"],
                state_epoch=value["stateEpoch"],
                leader_epoch=value["leaderEpoch"],
                start_offset=value["startOffset"],
                delivery_complete_count=value["deliveryCompleteCount"],
                create_timestamp=value["createTimestamp"],
                write_timestamp=value["writeTimestamp"],
                state_batches=_batches(value["stateBatches"]),
            )
            count = self.updates_since_snapshot.get(key)
            if count is not None and count >= self.snapshot_every():
                self.updates_since_snapshot[key] = 0
        elif record_type == SHARE_UPDATE:
            current = self.states.get(key)
            update = ShareGroupOffset(
                snapshot_epoch=value["snapshotEpoch"],
                state_epoch=DEFAULT_STATE_EPOCH,
                leader_epoch=value["leaderEpoch"],
                start_offset=value["startOffset"],
                delivery_complete_count=value["deliveryCompleteCount"],
                state_batches=_batches(value["stateBatches"]),
            )
            self.states[key] = update if current is None else _merge(current, update)
            self.updates_since_snapshot[key] = self.updates_since_snapshot.get(key, 0) + 1

    @staticmethod
    def _raise_epoch(
        table: dict[SharePartitionKey, int], key: SharePartitionKey, epoch: int
    ) -> None:
        if table.get(key, epoch) <= epoch:
            table[key] = epoch

    def replay_end_transaction_marker(self, producer_id: int, committed: bool) -> None:
        """The share coordinator writes no transactions."""

    def on_loaded(self) -> None:
        if self.states:
            logger.info(
                "Loaded %d share partitions of __share_group_state-%d",
                len(self.states),
                self.partition,
            )

    def on_unloaded(self) -> None:
        self.states.clear()

    # -- requests -------------------------------------------------------------------------

    def _check_key(self, topic_id: uuid.UUID | None, partition: int) -> None:
        if topic_id is None:
            raise StateError(ErrorCode.INVALID_REQUEST, NULL_TOPIC_ID)
        if partition < 0:
            raise StateError(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID)

    def _check_exists(self, topic_id: uuid.UUID, partition: int) -> None:
        if not self.topic_exists(topic_id, partition):
            raise StateError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    def write_state(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: Sequence[StateBatch],
    ) -> PartitionResult:
        """WriteShareGroupState of one share partition (``writeState``): a ShareUpdate, or
        a ShareSnapshot once ``snapshot_every`` updates followed the last snapshot. The
        stored leader epoch is kept (a leader raises it by reading). Raises
        :class:`StateError`: INVALID_REQUEST (a null topic id, a negative partition, a
        share partition never initialized), FENCED_LEADER_EPOCH / FENCED_STATE_EPOCH
        for a stale writer, UNKNOWN_TOPIC_OR_PARTITION."""
        self._check_key(key.topic_id, key.partition)
        if key not in self.states:
            raise StateError(ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED)
        known_leader = self.leader_epochs.get(key)
        if leader_epoch != -1 and known_leader is not None and known_leader > leader_epoch:
            raise StateError(ErrorCode.FENCED_LEADER_EPOCH)
        known_state = self.state_epochs.get(key)
        if state_epoch != -1 and known_state is not None and known_state > state_epoch:
            raise StateError(ErrorCode.FENCED_STATE_EPOCH)
        self._check_exists(key.topic_id, key.partition)
        record = self._state_record(
            key, leader_epoch, start_offset, delivery_complete_count, batches, False
        )
        return PartitionResult([record])

    def _state_record(
        self,
        key: SharePartitionKey,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: Sequence[StateBatch],
        update_leader_epoch: bool,
    ) -> tuple[bytes, bytes | None]:
        """``generateShareStateRecord`` for an initialized share partition: a snapshot
        once enough updates accumulated (merging the state so far), else an update
        carrying only the request's batches."""
        now = self.clock()
        current = self.states[key]
        if update_leader_epoch and leader_epoch != -1:
            new_leader_epoch = leader_epoch
        else:
            new_leader_epoch = current.leader_epoch
        if self.updates_since_snapshot.get(key, 0) >= self.snapshot_every():
            new_start = current.start_offset if start_offset == -1 else start_offset
            snapshot = ShareGroupOffset(
                snapshot_epoch=current.snapshot_epoch + 1,
                state_epoch=current.state_epoch,
                leader_epoch=new_leader_epoch,
                start_offset=new_start,
                delivery_complete_count=delivery_complete_count,
                create_timestamp=now,
                write_timestamp=now,
                state_batches=tuple(
                    combine_state_batches(current.state_batches, batches, new_start)
                ),
            )
            return encode_share_record(SHARE_SNAPSHOT, key, snapshot.to_snapshot_value())
        update = ShareGroupOffset(
            snapshot_epoch=current.snapshot_epoch,
            state_epoch=current.state_epoch,
            leader_epoch=new_leader_epoch,
            start_offset=start_offset,
            delivery_complete_count=delivery_complete_count,
            state_batches=tuple(combine_state_batches((), batches, start_offset)),
        )
        return encode_share_record(SHARE_UPDATE, key, update.to_update_value())

    def read_state(self, key: SharePartitionKey, leader_epoch: int) -> PartitionResult:
        """ReadShareGroupState (``readStateAndMaybeUpdateLeaderEpoch``): the state, and a
        record raising the stored leader epoch when the reader's is newer. Raises
        :class:`StateError`: INVALID_REQUEST (also for a share partition never
        initialized), FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION."""
        self._check_key(key.topic_id, key.partition)
        state = self.states.get(key)
        if state is None:
            raise StateError(ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED)
        known = self.leader_epochs.get(key)
        if leader_epoch != -1 and known is not None and known > leader_epoch:
            raise StateError(ErrorCode.FENCED_LEADER_EPOCH)
        self._check_exists(key.topic_id, key.partition)
        if leader_epoch == -1 or known == leader_epoch:
            return PartitionResult([], state)
        logger.info(
            "Read with leader epoch update call for key %s having new leader epoch %d.",
            key,
            leader_epoch,
        )
        record = self._state_record(
            key, leader_epoch, state.start_offset, state.delivery_complete_count, (), True
        )
        return PartitionResult([record], state)

    def read_summary(self, key: SharePartitionKey) -> ShareGroupOffset:
        """ReadShareGroupStateSummary (``readStateSummary``): the state, changing
        nothing; a share partition without state reads as start offset -1, leader and
        state epoch 0. Raises :class:`StateError` as :meth:`read_state` does, but never
        for an uninitialized share partition."""
        self._check_key(key.topic_id, key.partition)
        self._check_exists(key.topic_id, key.partition)
        state = self.states.get(key)
        if state is None:
            return ShareGroupOffset(
                snapshot_epoch=0,
                state_epoch=DEFAULT_STATE_EPOCH,
                leader_epoch=0,
                start_offset=UNINITIALIZED_START_OFFSET,
            )
        return state

    def initialize_state(
        self, key: SharePartitionKey, state_epoch: int, start_offset: int
    ) -> PartitionResult:
        """InitializeShareGroupState (``initializeState``): a fresh ShareSnapshot at
        ``start_offset`` (resetting a group's offsets re-initializes it at a newer state
        epoch). Raises :class:`StateError`: INVALID_REQUEST, FENCED_STATE_EPOCH for an
        older epoch, UNKNOWN_TOPIC_OR_PARTITION."""
        self._check_key(key.topic_id, key.partition)
        known = self.state_epochs.get(key)
        if state_epoch != -1 and known is not None and known > state_epoch:
            raise StateError(ErrorCode.FENCED_STATE_EPOCH)
        self._check_exists(key.topic_id, key.partition)
        now = self.clock()
        current = self.states.get(key)
        snapshot = ShareGroupOffset(
            snapshot_epoch=0 if current is None else current.snapshot_epoch + 1,
            state_epoch=state_epoch,
            leader_epoch=0,
            start_offset=start_offset,
            delivery_complete_count=-1 if start_offset == -1 else 0,
            create_timestamp=now,
            write_timestamp=now,
        )
        return PartitionResult(
            [encode_share_record(SHARE_SNAPSHOT, key, snapshot.to_snapshot_value())]
        )

    def delete_state(self, key: SharePartitionKey) -> PartitionResult:
        """DeleteShareGroupState (``deleteState``): a ShareSnapshot tombstone, or nothing
        for a share partition without state. Raises :class:`StateError`:
        INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION."""
        self._check_key(key.topic_id, key.partition)
        self._check_exists(key.topic_id, key.partition)
        if key not in self.states:
            logger.warning("Attempted to delete non-existent share partition %s.", key)
            return PartitionResult([])
        return PartitionResult([encode_share_record(SHARE_SNAPSHOT, key, None)])

    def cold_snapshots(self, older_than_ms: int) -> list[tuple[bytes, bytes | None]]:
        """``snapshotColdPartitions``: a fresh snapshot (next snapshot epoch, write
        timestamp now) of each share partition whose last snapshot is ``older_than_ms``
        old, so that the log before it can be pruned; nothing when every state already
        had one (its write timestamp differs from its create timestamp)."""
        if all(s.create_timestamp != s.write_timestamp for s in self.states.values()):
            return []
        now = self.clock()
        out = []
        for key, state in self.states.items():
            if now - state.write_timestamp < older_than_ms:
                continue
            snapshot = replace(state, snapshot_epoch=state.snapshot_epoch + 1, write_timestamp=now)
            out.append(encode_share_record(SHARE_SNAPSHOT, key, snapshot.to_snapshot_value()))
        return out


def _merge(current: ShareGroupOffset, update: ShareGroupOffset) -> ShareGroupOffset:
    """A ShareUpdate applied to the state so far (``ShareCoordinatorShard.merge``)."""
    start = current.start_offset if update.start_offset == -1 else update.start_offset
    return ShareGroupOffset(
        snapshot_epoch=current.snapshot_epoch,
        state_epoch=current.state_epoch,
        leader_epoch=current.leader_epoch if update.leader_epoch == -1 else update.leader_epoch,
        start_offset=start,
        delivery_complete_count=update.delivery_complete_count,
        create_timestamp=current.create_timestamp,
        write_timestamp=current.write_timestamp,
        state_batches=tuple(
            combine_state_batches(current.state_batches, update.state_batches, start)
        ),
    )
