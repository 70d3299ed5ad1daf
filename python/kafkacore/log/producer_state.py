"""Idempotent and transactional producer state of one partition: Kafka's
``ProducerStateManager``, ``ProducerAppendInfo``, ``ProducerStateEntry``, ``BatchMetadata``,
``TxnMetadata`` and ``CompletedTxn``, and the ``<offset>.snapshot`` files that persist it.

Per producer id the manager keeps the epoch, the metadata of the last
:data:`NUM_BATCHES_TO_RETAIN` (5) batches (duplicate detection: a producer retries at most
5 in-flight requests), the last timestamp (expiry), the coordinator epoch and the first
offset of its open transaction.

Leader-side validation of a client batch with a producer id (Kafka's
``ProducerAppendInfo.checkProducerEpoch``/``checkSequence`` and
``UnifiedLog.analyzeAndValidateProducerState``), in this order:

* same epoch and the exact sequence range of one of the 5 cached batches ->
  :class:`DuplicateSequenceError` carrying that batch's offsets (the broker acks those
  offsets and writes nothing);
* epoch below the current one -> :class:`InvalidProducerEpochError` (INVALID_PRODUCER_EPOCH;
  a replica append only warns);
* a new, higher epoch -> the base sequence must be 0, unless the producer had no epoch
  yet -> :class:`OutOfOrderSequenceError` (OUT_OF_ORDER_SEQUENCE_NUMBER);
* same epoch -> the base sequence must follow the last one (``last + 1``, or 0 after
  ``Int.MAX``) -> :class:`OutOfOrderSequenceError`; a producer the partition does not
  know (evicted by retention or expiry) is accepted at any sequence, as Kafka >= 2.8
  does (older brokers answered UNKNOWN_PRODUCER_ID: :class:`UnknownProducerIdError` is
  kept for callers that want to map it).

Transactions (Kafka's ``ongoingTxns``/``unreplicatedTxns``): a transactional batch of a
producer without an open transaction opens one at its first offset; a non-transactional
batch while one is open is :class:`InvalidTxnStateError` (INVALID_TXN_STATE). A COMMIT or
ABORT marker (a control batch, decoded to an :class:`EndTxnMarker`) checks the epoch as a
data batch does and the coordinator epoch (lower than the stored one:
:class:`TransactionCoordinatorFencedError`, TRANSACTION_COORDINATOR_FENCED; a replica
only logs both), stores the coordinator epoch, and completes the open transaction, if
any (a marker without one completes nothing). :meth:`ProducerStateManager.complete_append`
returns each :class:`CompletedTxn` with its last stable offset
(:meth:`~ProducerStateManager.last_stable_offset`: the first offset of the earliest open
transaction of another producer, else the marker's offset + 1), which the log writes to
the ``.txnindex`` for an ABORT; the transaction then waits in the unreplicated set until
the high watermark passes its marker (:meth:`~ProducerStateManager.on_high_watermark_updated`).
:attr:`~ProducerStateManager.first_unstable_offset` is the smallest first offset of both
sets. A snapshot keeps each producer's open transaction (``currentTxnFirstOffset``), so
the open transactions are rebuilt from it on load; the unreplicated set is not kept.

Snapshot file ``<20-digit offset>.snapshot`` (state of offsets ``[0, offset)``; Kafka's
``ProducerSnapshot`` message, version 1, not flexible), big-endian::

    0  version                 int16   1
    2  crc                     uint32  CRC-32C of every byte from offset 6 to the end
    6  entry count             int32
    10 entries, 46 bytes each:
         producerId int64, epoch int16, lastSequence int32, lastOffset int64,
         offsetDelta int32 (lastOffset - firstOffset of the last batch), timestamp int64,
         coordinatorEpoch int32, currentTxnFirstOffset int64 (-1: no open transaction)

Only the last cached batch of each producer is written (Kafka's format), so after a
restart a retry of an older batch is no longer recognised as a duplicate (as in Kafka).

Thread-safety: none; the owning :class:`~kafkacore.log.log.Log` calls it under its lock.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import os
import struct
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkacore.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    KafkaCoreError,
    StorageIOError,
    TransactionCoordinatorFencedError,
)
from kafkacore.log.checkpoints import write_atomically
from kafkacore.log.files import (
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    offset_from_file_name,
    producer_snapshot_file,
)
from kafkacore.record import (
    CONTROL_FLAG_MASK,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
    BatchHeader,
)

if TYPE_CHECKING:
    from kafkacore.log.segments import LogSegment

__all__ = [
    "DEFAULT_PRODUCER_ID_EXPIRATION_MS",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NUM_BATCHES_TO_RETAIN",
    "ORIGIN_CLIENT",
    "ORIGIN_COORDINATOR",
    "ORIGIN_REPLICATION",
    "SNAPSHOT_VERSION",
    "BatchMetadata",
    "CompletedTxn",
    "CorruptSnapshotError",
    "DuplicateSequenceError",
    "EndTxnMarker",
    "InvalidProducerEpochError",
    "InvalidTxnStateError",
    "OutOfOrderSequenceError",
    "PendingProducerUpdate",
    "ProducerStateEntry",
    "ProducerStateManager",
    "SnapshotRow",
    "TransactionCoordinatorFencedError",
    "TxnMetadata",
    "UnknownProducerIdError",
    "decrement_sequence",
    "end_txn_marker",
    "increment_sequence",
    "iter_segment_batches",
    "parse_snapshot",
    "read_snapshot",
    "rebuild_producer_state",
    "serialize_snapshot",
]

logger = logging.getLogger(__name__)

NUM_BATCHES_TO_RETAIN = 5
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms
SNAPSHOT_VERSION = 1
_INT_MAX = 2**31 - 1

# snapshot layout (ProducerStateManager's VERSION_OFFSET, CRC_OFFSET, PRODUCER_ENTRIES_OFFSET)
_VERSION_OFFSET = 0
_CRC_OFFSET = _VERSION_OFFSET + 2
_PRODUCER_ENTRIES_OFFSET = _CRC_OFFSET + 4
_COUNT_SIZE = 4
_VERSION = struct.Struct(">h")
_VERSION_SIZE = _VERSION.size
_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_ENTRY = struct.Struct(">qhiqiqiq")  # 46 bytes
# a control record's key (version, type) and a transaction marker's value (version,
# coordinator epoch): Kafka's ControlRecordType and EndTransactionMarker
_CONTROL_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")


# -- errors ------------------------------------------------------------------------------


class OutOfOrderSequenceError(KafkaCoreError):
    """A sequence number that does not follow the producer's last one, or a new epoch not
    starting at 0 (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER)."""

    error_code = 45  # OUT_OF_ORDER_SEQUENCE_NUMBER


class UnknownProducerIdError(KafkaCoreError):
    """UNKNOWN_PRODUCER_ID: what brokers before 2.8 answered for a producer whose state was
    evicted. Kafka 4 accepts such a producer instead; never raised by this module."""

    error_code = 59  # UNKNOWN_PRODUCER_ID


class DuplicateSequenceError(KafkaCoreError):
    """A client retry of a batch already in the log: answer with its original offsets
    (``first_offset``/``last_offset``, ``timestamp`` = its max timestamp) and write
    nothing. Kafka acks such a retry successfully (DUPLICATE_SEQUENCE_NUMBER is not sent)."""

    def __init__(self, message: str, first_offset: int, last_offset: int, timestamp: int):
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.timestamp = timestamp


class CorruptSnapshotError(StorageIOError):
    """A ``.snapshot`` file that fails its schema or CRC check (Kafka's
    ``CorruptSnapshotException``); ``filename`` names it."""

    def __init__(self, path: str, reason: str):
        super().__init__(0, reason, path)


# -- sequences ---------------------------------------------------------------------------


def increment_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment`` wrapping past ``Int.MAX`` to 0 (``DefaultRecordBatch``)."""
    if sequence > _INT_MAX - increment:
        return increment - (_INT_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Inverse of :func:`increment_sequence`."""
    if sequence < decrement:
        return _INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT_MAX)


# -- state -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One appended batch: its last sequence and last offset, ``offset_delta`` = last
    offset - first offset, ``timestamp`` = its max timestamp."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    """The state of one producer id; ``batches`` runs from the lowest sequence to the
    highest and holds at most :data:`NUM_BATCHES_TO_RETAIN` entries."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    batches: deque[BatchMetadata] = field(
        default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN)
    )

    @property
    def is_empty(self) -> bool:
        return not self.batches

    @property
    def first_seq(self) -> int:
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batches[-1].offset_delta if self.batches else 0

    def copy(self, *, with_batches: bool = True) -> ProducerStateEntry:
        return ProducerStateEntry(
            self.producer_id,
            self.producer_epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
            deque(self.batches if with_batches else (), maxlen=NUM_BATCHES_TO_RETAIN),
        )

    def maybe_update_producer_epoch(self, epoch: int) -> bool:
        """A new epoch forgets the cached batches (their sequences belong to the old one)."""
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch
            return True
        return False

    def add_batch(
        self, epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int
    ) -> None:
        self.maybe_update_producer_epoch(epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def update(self, other: ProducerStateEntry) -> None:
        """Merge the state accumulated by an append (``ProducerStateEntry.update``)."""
        self.maybe_update_producer_epoch(other.producer_epoch)
        self.batches.extend(other.batches)
        self.coordinator_epoch = other.coordinator_epoch
        self.current_txn_first_offset = other.current_txn_first_offset
        self.last_timestamp = other.last_timestamp

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """The cached batch with exactly this epoch and sequence range, if any."""
        if epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None


class EndTxnMarker(NamedTuple):
    """The record of a transaction marker batch (Kafka's ``EndTransactionMarker``):
    COMMIT or ABORT, and the epoch of the coordinator that wrote it."""

    commit: bool
    coordinator_epoch: int


class CompletedTxn(NamedTuple):
    """A transaction a marker ended (Kafka's ``CompletedTxn``): ``first_offset`` is its
    first batch's, ``last_offset`` the marker's."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(slots=True)
class TxnMetadata:
    """An open transaction, or a completed one whose marker the high watermark has not
    passed yet (``last_offset`` = the marker's offset; Kafka's ``TxnMetadata``)."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


# Who appends (Kafka's AppendOrigin): which producer checks apply
ORIGIN_CLIENT = "client"
ORIGIN_COORDINATOR = "coordinator"
ORIGIN_REPLICATION = "replication"


class _AppendInfo:
    """Kafka's ``ProducerAppendInfo``: validates the batches of one producer in one append
    against its state and accumulates the updated entry, the transactions it starts and
    the ones its markers complete (applied only if the write succeeds)."""

    __slots__ = (
        "completed",
        "current",
        "markers",
        "origin",
        "producer_id",
        "started",
        "topic_partition",
        "updated",
    )

    def __init__(self, producer_id: int, current: ProducerStateEntry, origin: str, tp: str) -> None:
        self.producer_id = producer_id
        self.current = current
        self.origin = origin
        self.topic_partition = tp
        self.updated = current.copy(with_batches=False)
        # created when needed (most appends start and end no transaction)
        self.started: list[TxnMetadata] | None = None
        self.completed: list[CompletedTxn] | None = None
        self.markers = 0  # COMMIT/ABORT markers in the append

    def _check_epoch(self, epoch: int, offset: int) -> None:
        if epoch < self.updated.producer_epoch:
            message = (
                f"Epoch of producer {self.producer_id} at offset {offset} in "
                f"{self.topic_partition} is {epoch}, which is smaller than the last seen epoch "
                f"{self.updated.producer_epoch}"
            )
            if self.origin == ORIGIN_REPLICATION:
                logger.warning(message)
            else:
                raise InvalidProducerEpochError(message)

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        updated, current = self.updated, self.current
        if epoch != updated.producer_epoch:
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"Invalid sequence number for new epoch of producer {self.producer_id} at "
                    f"offset {offset} in partition {self.topic_partition}: {epoch} (request "
                    f"epoch), {first_seq} (seq. number), {updated.producer_epoch} (current "
                    f"producer epoch)"
                )
            return
        if not updated.is_empty:
            last_seq = updated.last_seq
        elif epoch == current.producer_epoch:
            last_seq = current.last_seq
        else:
            last_seq = NO_SEQUENCE
        # no epoch yet (state lost to retention or expiry): any sequence is accepted
        if current.producer_epoch != NO_PRODUCER_EPOCH and not _in_sequence(last_seq, first_seq):
            raise OutOfOrderSequenceError(
                f"Out of order sequence number for producer {self.producer_id} at offset "
                f"{offset} in partition {self.topic_partition}: {first_seq} (incoming seq. "
                f"number), {last_seq} (current end sequence number)"
            )

    def append_data_batch(
        self,
        epoch: int,
        first_seq: int,
        last_seq: int,
        timestamp: int,
        first_offset: int,
        last_offset: int,
        transactional: bool,
    ) -> None:
        self._check_epoch(epoch, first_offset)
        if self.origin == ORIGIN_CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        open_txn = self.updated.current_txn_first_offset
        if open_txn is not None and not transactional and self.origin != ORIGIN_REPLICATION:
            raise InvalidTxnStateError(
                f"Expected transactional write from producer {self.producer_id} at offset "
                f"{first_offset} in partition {self.topic_partition}"
            )
        self.updated.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, timestamp)
        if transactional and open_txn is None:
            # a new transaction begins
            self.updated.current_txn_first_offset = first_offset
            if self.started is None:
                self.started = []
            self.started.append(TxnMetadata(self.producer_id, first_offset))

    def append_end_txn_marker(
        self, epoch: int, marker: EndTxnMarker | None, offset: int, timestamp: int
    ) -> None:
        """A COMMIT/ABORT marker at ``offset`` (Kafka's ``appendEndTxnMarker``): a lower
        producer epoch is INVALID_PRODUCER_EPOCH, a lower coordinator epoch
        TRANSACTION_COORDINATOR_FENCED (a replica only logs them); a marker for a
        producer without an open transaction completes nothing. ``marker`` ``None``:
        the record was not read (type and coordinator epoch unknown; the transaction
        counts as committed)."""
        self._check_epoch(epoch, offset)
        self.markers += 1
        updated = self.updated
        if marker is not None and updated.coordinator_epoch > marker.coordinator_epoch:
            message = (
                f"Detected invalid coordinator epoch for producerId {self.producer_id} at "
                f"offset {offset} in partition {self.topic_partition}: "
                f"{marker.coordinator_epoch} is older than previously known coordinator epoch "
                f"{updated.coordinator_epoch}"
            )
            if self.origin == ORIGIN_REPLICATION:
                logger.info(message)
            else:
                raise TransactionCoordinatorFencedError(message)
        first = updated.current_txn_first_offset
        if first is not None:
            aborted = marker is not None and not marker.commit
            if self.completed is None:
                self.completed = []
            self.completed.append(CompletedTxn(self.producer_id, first, offset, aborted))
        updated.maybe_update_producer_epoch(epoch)
        if marker is not None:
            updated.coordinator_epoch = marker.coordinator_epoch
        updated.current_txn_first_offset = None
        updated.last_timestamp = timestamp


@dataclass(slots=True)
class PendingProducerUpdate:
    """The validated producer state of one append, applied by
    :meth:`ProducerStateManager.complete_append` once the batches are written."""

    infos: dict[int, _AppendInfo]
    end_offset: int


# -- snapshot files ----------------------------------------------------------------------


def _default_crc32c() -> Callable[[bytes], int]:
    from kafkacore.native import backend

    crc: Callable[[bytes], int] = backend.crc32c
    return crc


def serialize_snapshot(
    entries: Iterable[ProducerStateEntry], crc32c: Callable[[bytes], int] | None = None
) -> bytes:
    """The bytes of a version-1 snapshot of ``entries`` (Kafka's ``writeSnapshot``)."""
    crc32c = crc32c or _default_crc32c()
    rows = [
        _ENTRY.pack(
            e.producer_id,
            e.producer_epoch,
            e.last_seq,
            e.last_data_offset,
            e.last_offset_delta,
            e.last_timestamp,
            e.coordinator_epoch,
            -1 if e.current_txn_first_offset is None else e.current_txn_first_offset,
        )
        for e in entries
    ]
    body = struct.pack(">i", len(rows)) + b"".join(rows)
    return _HEADER.pack(SNAPSHOT_VERSION, crc32c(body), len(rows)) + body[_COUNT_SIZE:]


#: One producer of a snapshot, as stored: producer id, epoch, last sequence, last offset,
#: offset delta, last timestamp, coordinator epoch, current transaction's first offset (-1).
SnapshotRow = tuple[int, int, int, int, int, int, int, int]


def parse_snapshot(
    data: bytes, crc32c: Callable[[bytes], int], path: str = ""
) -> list[SnapshotRow]:
    """The rows of a snapshot file's bytes, checked as Kafka's ``readSnapshot`` checks them
    (the ``ProducerSnapshot`` schema, version 1, then the CRC-32C of everything after the
    CRC field); :class:`CorruptSnapshotError` naming ``path`` with Kafka's own messages
    (the dump tool prints them). Bytes after the last entry are not a schema error, as in
    Kafka (the CRC covers them)."""

    def invalid(reason: str) -> CorruptSnapshotError:
        return CorruptSnapshotError(path, f"Snapshot failed schema validation: {reason}")

    if len(data) < _VERSION_SIZE:
        raise invalid("null")
    (version,) = _VERSION.unpack_from(data, _VERSION_OFFSET)
    if version != SNAPSHOT_VERSION:
        raise invalid(f"Snapshot contained an unknown file version {version}")
    if len(data) < _HEADER.size:
        raise invalid("null")
    _, stored_crc, count = _HEADER.unpack_from(data, 0)
    if count < 0:
        raise invalid("non-nullable field producerEntries was serialized as null")
    remaining = len(data) - _HEADER.size
    if count > remaining:
        raise invalid(
            f"Tried to allocate a collection of size {count}, but there are only "
            f"{remaining} bytes remaining."
        )
    if count * _ENTRY.size > remaining:
        raise invalid("null")
    rows: list[SnapshotRow] = [
        _ENTRY.unpack_from(data, _HEADER.size + n * _ENTRY.size) for n in range(count)
    ]
    computed = crc32c(data[_PRODUCER_ENTRIES_OFFSET:])
    if stored_crc != computed:
        raise CorruptSnapshotError(
            path,
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored_crc}. "
            f"Computed crc: {computed}",
        )
    return rows


def read_snapshot(
    path: str, crc32c: Callable[[bytes], int] | None = None
) -> list[ProducerStateEntry]:
    """The entries of the snapshot at ``path`` (Kafka's ``readSnapshot``);
    :class:`CorruptSnapshotError` naming the file on an unknown version, a short file or
    a CRC mismatch."""
    crc32c = crc32c or _default_crc32c()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise StorageIOError(
            exc.errno or 0, f"Error while reading producer snapshot: {exc.strerror}", path
        ) from exc
    entries = []
    for pid, epoch, last_seq, last_offset, delta, ts, coord, txn in parse_snapshot(
        data, crc32c, path
    ):
        entry = ProducerStateEntry(pid, epoch, coord, ts, txn if txn >= 0 else None)
        if last_offset >= 0:
            entry.batches.append(BatchMetadata(last_seq, last_offset, delta, ts))
        entries.append(entry)
    return entries


def _list_snapshot_offsets(directory: str) -> list[int]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    offsets = []
    for name in names:
        if name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX) and os.path.isfile(
            os.path.join(directory, name)
        ):
            try:
                offsets.append(offset_from_file_name(name))
            except ValueError:
                continue
    return sorted(offsets)


def _remove_sorted(offsets: list[int], offset: int) -> None:
    index = bisect.bisect_left(offsets, offset)
    if index < len(offsets) and offsets[index] == offset:
        del offsets[index]


def _delete_if_exists(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


# -- the manager -------------------------------------------------------------------------


class ProducerStateManager:
    """The producer state of the partition in ``directory`` and its snapshots (see the
    module docstring). ``map_end_offset`` is the offset up to which the state reflects
    the log; snapshots are named by it.

    Leader append: :meth:`prepare_append` (raises, writes nothing) -> write the batches ->
    :meth:`complete_append`. Replay while loading: :meth:`update_from_batch`.
    Not thread-safe: the owning log calls it under its lock.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        topic_partition: str = "",
        crc32c: Callable[[bytes], int] | None = None,
    ) -> None:
        self._dir = os.fspath(directory)
        self._tp = topic_partition or os.path.basename(os.path.abspath(self._dir))
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self._crc32c = crc32c or _default_crc32c()
        self._producers: dict[int, ProducerStateEntry] = {}
        # Kafka's ongoingTxns and unreplicatedTxns, keyed by first offset; the sorted keys
        # of each beside them (few entries: one per producer with an open transaction)
        self._ongoing: dict[int, TxnMetadata] = {}
        self._ongoing_offsets: list[int] = []
        self._unreplicated: dict[int, TxnMetadata] = {}
        self._unreplicated_offsets: list[int] = []
        # markers applied per producer since this manager was created: what a KIP-890
        # verification guard compares (Kafka's VerificationGuard)
        self._markers_applied: dict[int, int] = {}
        self._snapshots: list[int] = _list_snapshot_offsets(self._dir)
        self._map_end_offset = 0
        self._last_snap_offset = 0

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        log_end_offset: int,
        *,
        log_start_offset: int = 0,
        now_ms: int = -1,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        topic_partition: str = "",
        crc32c: Callable[[bytes], int] | None = None,
    ) -> ProducerStateManager:
        """A manager loaded from the latest valid snapshot in ``[log_start_offset,
        log_end_offset]``; out-of-range and corrupt snapshots are deleted (as Kafka's
        ``truncateAndReload``/``loadFromSnapshot``). The caller then replays the batches
        from :attr:`map_end_offset` to the log end with :meth:`update_from_batch`.
        ``now_ms`` >= 0 drops producers already expired at that time."""
        manager = cls(
            directory,
            producer_id_expiration_ms=producer_id_expiration_ms,
            topic_partition=topic_partition,
            crc32c=crc32c,
        )
        manager.truncate_and_reload(log_start_offset, log_end_offset, now_ms, force=True)
        return manager

    # -- properties ----------------------------------------------------------------------

    @property
    def directory(self) -> str:
        return self._dir

    @property
    def map_end_offset(self) -> int:
        return self._map_end_offset

    @property
    def active_producers(self) -> Mapping[int, ProducerStateEntry]:
        return self._producers

    @property
    def snapshot_offsets(self) -> list[int]:
        return list(self._snapshots)

    @property
    def latest_snapshot_offset(self) -> int | None:
        return self._snapshots[-1] if self._snapshots else None

    @property
    def oldest_snapshot_offset(self) -> int | None:
        return self._snapshots[0] if self._snapshots else None

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def is_empty(self) -> bool:
        return not self._producers

    # -- transactions --------------------------------------------------------------------

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest transaction that is open, or completed by a
        marker the high watermark has not passed (Kafka's ``firstUnstableOffset``);
        ``None`` when there is none."""
        ongoing, unreplicated = self._ongoing_offsets, self._unreplicated_offsets
        if ongoing and unreplicated:
            return min(ongoing[0], unreplicated[0])
        if ongoing:
            return ongoing[0]
        return unreplicated[0] if unreplicated else None

    @property
    def has_unstable_transactions(self) -> bool:
        """Whether a transaction is open or awaits the high watermark (a cheap test: two
        list reads, no lock needed)."""
        return bool(self._ongoing_offsets or self._unreplicated_offsets)

    @property
    def ongoing_transactions(self) -> list[TxnMetadata]:
        """The open transactions, by first offset."""
        return [self._ongoing[o] for o in self._ongoing_offsets]

    def verification_guard(self, producer_id: int) -> int:
        """A token that changes whenever a marker of ``producer_id`` is applied: taken
        before a transactional write is verified with the coordinator, compared before
        it is appended, so that a transaction ended meanwhile is not reopened by it
        (KIP-890's ``VerificationGuard``)."""
        return self._markers_applied.get(producer_id, 0)

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """The LSO right after ``completed``'s marker (Kafka's ``lastStableOffset``): the
        first offset of the earliest open transaction of another producer, else the
        marker's offset + 1."""
        for offset in self._ongoing_offsets:
            txn = self._ongoing[offset]
            if txn.producer_id != completed.producer_id:
                return txn.first_offset
        return completed.last_offset + 1

    def complete_txn(self, completed: CompletedTxn) -> None:
        """Move ``completed`` from the open transactions to those waiting for the high
        watermark to pass their marker (Kafka's ``completeTxn``)."""
        txn = self._ongoing.pop(completed.first_offset, None)
        if txn is None:  # Kafka throws; the marker is written already, so only log
            logger.error(
                "Attempted to complete transaction %s on partition %s which was not started",
                completed,
                self._tp,
            )
            return
        _remove_sorted(self._ongoing_offsets, completed.first_offset)
        txn.last_offset = completed.last_offset
        self._unreplicated[completed.first_offset] = txn
        bisect.insort(self._unreplicated_offsets, completed.first_offset)

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """Forget the completed transactions whose marker lies below ``high_watermark``
        (Kafka's ``onHighWatermarkUpdated``)."""
        self._remove_unreplicated(high_watermark)

    def _remove_unreplicated(self, offset: int) -> None:
        if not self._unreplicated:
            return
        for first in list(self._unreplicated_offsets):
            last = self._unreplicated[first].last_offset
            if last is not None and last < offset:
                del self._unreplicated[first]
                _remove_sorted(self._unreplicated_offsets, first)

    def _add_ongoing(self, txn: TxnMetadata) -> None:
        if txn.first_offset not in self._ongoing:
            bisect.insort(self._ongoing_offsets, txn.first_offset)
        self._ongoing[txn.first_offset] = txn

    def _clear_transactions(self) -> None:
        self._ongoing.clear()
        self._ongoing_offsets.clear()
        self._unreplicated.clear()
        self._unreplicated_offsets.clear()

    def __repr__(self) -> str:
        return (
            f"ProducerStateManager(dir={self._dir!r}, producers={len(self._producers)}, "
            f"map_end_offset={self._map_end_offset})"
        )

    # -- appends -------------------------------------------------------------------------

    def prepare_append(
        self,
        headers: Sequence[BatchHeader],
        first_offset: int | None,
        *,
        client: bool,
        origin: str | None = None,
        markers: Sequence[EndTxnMarker | None] | None = None,
    ) -> PendingProducerUpdate:
        """Validate the producer state of one append (Kafka's
        ``analyzeAndValidateProducerState``): ``headers`` are the batches' headers;
        ``first_offset`` is the offset the leader assigns to the first batch (``None``:
        the batches keep their own base offsets, as on a replica). ``origin`` (Kafka's
        ``AppendOrigin``; default ``client`` when ``client`` else ``replication``):
        ``client`` gets full validation and duplicate detection, ``coordinator`` (a
        transaction marker) the epoch and coordinator-epoch checks, ``replication`` only
        warnings. ``markers``: the decoded record of each control batch, in the order of
        ``headers`` (``None`` for the others; without it a marker counts as a commit of
        unknown coordinator epoch).

        Raises :class:`DuplicateSequenceError`, :class:`InvalidProducerEpochError`,
        :class:`OutOfOrderSequenceError`, :class:`InvalidTxnStateError`,
        :class:`TransactionCoordinatorFencedError`; changes nothing."""
        if origin is None:
            origin = ORIGIN_CLIENT if client else ORIGIN_REPLICATION
        check_duplicates = origin == ORIGIN_CLIENT
        infos: dict[int, _AppendInfo] = {}
        next_offset = first_offset
        end_offset = self._map_end_offset
        for index, h in enumerate(headers):
            delta = h.last_offset_delta
            base = h.base_offset if next_offset is None else next_offset
            last = base + delta
            if next_offset is not None:
                next_offset = last + 1
            end_offset = last + 1
            pid = h.producer_id
            if pid < 0:
                continue
            epoch, base_seq, ts = h.producer_epoch, h.base_sequence, h.max_timestamp
            last_seq = increment_sequence(base_seq, delta) if base_seq >= 0 else NO_SEQUENCE
            if check_duplicates:
                entry = self._producers.get(pid)
                duplicate = entry.find_duplicate(epoch, base_seq, last_seq) if entry else None
                if duplicate is not None:
                    raise DuplicateSequenceError(
                        f"Duplicate batch of producer {pid} (epoch {epoch}, sequences "
                        f"{base_seq}..{last_seq}) in {self._tp}: already at offsets "
                        f"{duplicate.first_offset}..{duplicate.last_offset}",
                        duplicate.first_offset,
                        duplicate.last_offset,
                        duplicate.timestamp,
                    )
            info = infos.get(pid)
            if info is None:
                current = self._producers.get(pid) or ProducerStateEntry(pid)
                info = infos[pid] = _AppendInfo(pid, current, origin, self._tp)
            if h.attributes & CONTROL_FLAG_MASK:
                # the marker's type and coordinator epoch are in its record
                marker = markers[index] if markers is not None else None
                info.append_end_txn_marker(epoch, marker, base, ts)
            else:
                info.append_data_batch(
                    epoch,
                    base_seq,
                    last_seq,
                    ts,
                    base,
                    last,
                    bool(h.attributes & TRANSACTIONAL_FLAG_MASK),
                )
        return PendingProducerUpdate(infos, end_offset)

    def complete_append(
        self, pending: PendingProducerUpdate, end_offset: int | None = None
    ) -> list[tuple[CompletedTxn, int]]:
        """Apply a validated append once written (Kafka's ``update``, then per completed
        transaction ``lastStableOffset`` + ``completeTxn``, then ``updateMapEndOffset``);
        ``end_offset`` defaults to the one computed from the headers (the log end offset
        after the write). Returns each transaction the append's markers completed with
        the last stable offset after it (what an ABORT's ``.txnindex`` entry records)."""
        completed: list[CompletedTxn] | None = None
        for pid, info in pending.infos.items():
            current = self._producers.get(pid)
            if current is not None:
                current.update(info.updated)
            else:
                self._producers[pid] = info.updated
            if info.started is not None:
                for txn in info.started:
                    self._add_ongoing(txn)
            if info.markers:
                self._markers_applied[pid] = self._markers_applied.get(pid, 0) + info.markers
                if info.completed is not None:
                    completed = (completed or []) + info.completed
        done: list[tuple[CompletedTxn, int]] = []
        if completed:
            completed.sort(key=lambda c: c.last_offset)
            for done_txn in completed:
                done.append((done_txn, self.last_stable_offset(done_txn)))
                self.complete_txn(done_txn)
        self._map_end_offset = pending.end_offset if end_offset is None else end_offset
        return done

    def update_from_batch(
        self, header: BatchHeader, marker: EndTxnMarker | None = None
    ) -> list[tuple[CompletedTxn, int]]:
        """Replay one batch already in the log (loading/recovery; Kafka's
        ``loadProducersFromRecords``/``updateProducers``): no sequence check, the state end
        moves past it. ``marker``: the record of a control batch. Returns what
        :meth:`complete_append` returns."""
        markers = None if marker is None else [marker]
        return self.complete_append(
            self.prepare_append([header], None, client=False, markers=markers)
        )

    def append_in_sequence(
        self,
        producer_id: int,
        last_seq: int,
        first_offset: int,
        last_offset: int,
        timestamp: int,
        end_offset: int,
    ) -> None:
        """Apply a data batch the native produce path appended (:mod:`kafkacore.log.lease`):
        a known producer's next batch at its epoch and transaction state, which
        :meth:`prepare_append` + :meth:`complete_append` would accept and record just so
        (``producer_id`` < 0: only the state end moves to ``end_offset``)."""
        if producer_id >= 0:
            entry = self._producers[producer_id]
            entry.batches.append(
                BatchMetadata(last_seq, last_offset, last_offset - first_offset, timestamp)
            )
            entry.last_timestamp = timestamp
        self._map_end_offset = end_offset

    def update_map_end_offset(self, offset: int) -> None:
        self._map_end_offset = offset

    # -- snapshots -----------------------------------------------------------------------

    def snapshot_file(self, offset: int) -> str:
        return producer_snapshot_file(self._dir, offset)

    def take_snapshot(self, offset: int | None = None, *, sync: bool = True) -> str | None:
        """Write ``<map end offset>.snapshot`` atomically (tmp, fsync, rename) unless no
        offset was added since the last one; ``offset`` first moves the map end offset
        there (the roll path: a snapshot at the new segment's base offset). Returns the
        path written, or ``None``."""
        if offset is not None:
            self._map_end_offset = offset
        if self._map_end_offset <= self._last_snap_offset:
            return None
        offset = self._map_end_offset
        path = self.snapshot_file(offset)
        write_atomically(
            path, serialize_snapshot(self._producers.values(), self._crc32c), fsync=sync
        )
        index = bisect.bisect_left(self._snapshots, offset)
        if index == len(self._snapshots) or self._snapshots[index] != offset:
            self._snapshots.insert(index, offset)
        self._last_snap_offset = offset
        return path

    def remove_snapshot(self, offset: int) -> None:
        """Forget and delete the snapshot at ``offset`` (its segment was deleted)."""
        index = bisect.bisect_left(self._snapshots, offset)
        if index < len(self._snapshots) and self._snapshots[index] == offset:
            del self._snapshots[index]
        _delete_if_exists(self.snapshot_file(offset))

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete every snapshot below ``offset`` (Kafka's ``deleteSnapshotsBefore``)."""
        for snapshot in [s for s in self._snapshots if s < offset]:
            self.remove_snapshot(snapshot)

    def remove_stray_snapshots(self, segment_base_offsets: Iterable[int]) -> None:
        """Delete snapshots at no segment base offset, except the newest one if it lies
        above every segment (written at a clean shutdown)."""
        bases = set(segment_base_offsets)
        self._snapshots = _list_snapshot_offsets(self._dir)
        strays = [s for s in self._snapshots if s not in bases]
        keep = strays[-1] if strays and (not bases or strays[-1] >= max(bases)) else None
        for stray in strays:
            if stray != keep:
                self.remove_snapshot(stray)

    def _load_latest_snapshot(self, log_start_offset: int, now_ms: int) -> None:
        while self._snapshots:
            offset = self._snapshots[-1]
            path = self.snapshot_file(offset)
            try:
                entries = read_snapshot(path, self._crc32c)
            except CorruptSnapshotError as exc:
                logger.warning("Failed to load producer snapshot from '%s': %s", path, exc)
                self.remove_snapshot(offset)
                continue
            logger.info("Loading producer state from snapshot file '%s'", path)
            for entry in entries:
                if now_ms < 0 or not self._is_expired(now_ms, entry):
                    self._producers[entry.producer_id] = entry
                    first = entry.current_txn_first_offset
                    if first is not None:
                        self._add_ongoing(TxnMetadata(entry.producer_id, first))
            self._last_snap_offset = self._map_end_offset = offset
            return
        self._last_snap_offset = self._map_end_offset = log_start_offset

    # -- truncation, log start, expiry ---------------------------------------------------

    def truncate_and_reload(
        self, log_start_offset: int, log_end_offset: int, now_ms: int = -1, *, force: bool = False
    ) -> None:
        """Drop snapshots above ``log_end_offset`` or at/below ``log_start_offset`` and, if
        the state no longer ends at ``log_end_offset`` (or ``force``), reload it from the
        latest remaining snapshot (Kafka's ``truncateAndReload``; the caller replays the
        batches from :attr:`map_end_offset`)."""
        if force:  # the directory is the truth (a recovery may have written some)
            self._snapshots = _list_snapshot_offsets(self._dir)
        for snapshot in list(self._snapshots):
            if snapshot > log_end_offset or snapshot <= log_start_offset:
                self.remove_snapshot(snapshot)
        if force or log_end_offset != self._map_end_offset:
            self._producers.clear()
            self._clear_transactions()
            self._load_latest_snapshot(log_start_offset, now_ms)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and delete every snapshot; the state starts at ``offset``."""
        self._producers.clear()
        self._clear_transactions()
        for snapshot in list(self._snapshots):
            self.remove_snapshot(snapshot)
        self._last_snap_offset = 0
        self._map_end_offset = offset

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        self._remove_unreplicated(log_start_offset)
        self._map_end_offset = max(self._map_end_offset, log_start_offset)
        latest = self.latest_snapshot_offset
        self._last_snap_offset = log_start_offset if latest is None else latest

    def _is_expired(self, now_ms: int, entry: ProducerStateEntry) -> bool:
        return (
            entry.current_txn_first_offset is None
            and now_ms - entry.last_timestamp >= self.producer_id_expiration_ms
        )

    def remove_expired(self, now_ms: int) -> list[int]:
        """Forget producers idle ``producer.id.expiration.ms`` or longer (by the timestamp
        of their last batch) without an open transaction; returns their ids."""
        expired = [pid for pid, e in self._producers.items() if self._is_expired(now_ms, e)]
        for pid in expired:
            del self._producers[pid]
        return expired


# -- rebuilding from the log -------------------------------------------------------------

_REPLAY_CHUNK = 1 << 20


def end_txn_marker(records: Sequence[Sequence[Any]]) -> EndTxnMarker | None:
    """The :class:`EndTxnMarker` of a control batch from its decoded records (backend
    tuples ``(offset, timestamp, key, value, headers)``): key ``int16 version, int16
    type`` (ABORT 0, COMMIT 1), value ``int16 version, int32 coordinator epoch``.
    ``None`` for another control type or a record too short to be a marker."""
    if not records:
        return None
    key, value = records[0][2], records[0][3]
    if key is None or value is None or len(key) < 4 or len(value) < 6:
        return None
    _, kind = _CONTROL_KEY.unpack_from(key)
    if kind not in (0, 1):
        return None
    _, coordinator_epoch = _MARKER_VALUE.unpack_from(value)
    return EndTxnMarker(kind == 1, coordinator_epoch)


def iter_segment_batches(
    log_segment: LogSegment,
    start: int,
    end: int,
    batch_header: Callable[[bytes, int], Sequence[int]],
) -> Iterator[tuple[BatchHeader, bytes, int]]:
    """``(header, chunk, position in chunk)`` of each batch of ``log_segment`` whose last
    offset is >= ``start`` and base offset < ``end``, read in chunks of at most 1 MiB
    (headers only are decoded; the chunk holds the whole batch unless it is larger than
    a chunk)."""
    segment = log_segment.files
    if segment.next_offset <= start or log_segment.base_offset >= end:
        return
    located = segment.translate_offset(start)
    if located is None:
        return
    position, size_end = located[1], segment.size
    done = False
    while not done and position + RECORD_BATCH_OVERHEAD <= size_end:
        chunk = segment.read_bytes(position, min(_REPLAY_CHUNK, size_end - position))
        offset = 0
        while offset + RECORD_BATCH_OVERHEAD <= len(chunk):
            # reads the 61 header bytes only
            header = BatchHeader._make(batch_header(chunk, offset))
            size = LOG_OVERHEAD + header.batch_length
            if size < RECORD_BATCH_OVERHEAD:  # corrupt tail: recovery's business
                done = True
                break
            if offset > 0 and offset + size > len(chunk):
                break  # read again from this batch; a first batch larger than a
                # chunk is handled from its header alone
            if header.base_offset >= end:
                done = True
                break
            if header.last_offset >= start:
                yield header, chunk, offset
            offset += size
        if offset == 0:
            break
        position += offset


def rebuild_producer_state(
    manager: ProducerStateManager,
    segments: Iterable[LogSegment],
    log_start_offset: int,
    log_end_offset: int,
    batch_header: Callable[[bytes, int], Sequence[int]],
    *,
    now_ms: int = -1,
    batch_records: Callable[[bytes, int], Sequence[Sequence[Any]]] | None = None,
) -> None:
    """Bring ``manager`` to ``log_end_offset`` (Kafka's ``UnifiedLog.rebuildProducerState``):
    reload from the latest snapshot in range, then replay the headers of the batches from
    its offset to the log end, reading each segment in chunks of at most 1 MiB; with
    ``batch_records`` the records of control batches are read too (the marker's type and
    coordinator epoch)."""
    manager.truncate_and_reload(log_start_offset, log_end_offset, now_ms, force=True)
    start = manager.map_end_offset
    for log_segment in segments:
        for header, chunk, position in iter_segment_batches(
            log_segment, start, log_end_offset, batch_header
        ):
            marker = None
            if batch_records is not None and header.attributes & CONTROL_FLAG_MASK:
                marker = end_txn_marker(batch_records(chunk, position))
            manager.update_from_batch(header, marker)
    manager.update_map_end_offset(log_end_offset)
