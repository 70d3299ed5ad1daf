"""One partition's leader state over its log (Kafka's ``kafka.cluster.Partition``):
assignment, leader and leader epoch, partition epoch, ISR, high watermark and last
stable offset, with methods named for what they decide.

Replication (ZooKeeper mode, Kafka 3.9 rules): the leader keeps a :class:`ReplicaState`
per follower, fed by its fetches (:meth:`Partition.update_follower_fetch_state`); the
high watermark is the smallest log end offset over the maximal ISR (the committed ISR
plus a pending expansion) and the caught-up replicas about to join it, and does not move
while the ISR is smaller than ``min(min.insync.replicas, replication factor)``; ISR
shrinks and expansions are proposed to the controller through an
:class:`AlterPartitionSubmitter` (one in flight) and committed when it answers. A
follower appends the leader's batches unchanged
(:meth:`Partition.append_records_as_follower`) and takes ``min(leader HW, own LEO)``.

A single node is the replication-factor-1 case: the replicas and the ISR are
``[this node]``, so :meth:`Partition.maybe_increment_leader_hw` moves the high watermark
to the log end offset after every append. The last stable offset is
``min(first unstable offset, HW)``: the log's producer state knows the open transactions
(:meth:`~kafkacore.log.log.Log.last_stable_offset`). Follower LEOs and ISR changes land
here with replication.

Thread-safety (as ``Partition.scala`` states it):

* ``_leader_isr_lock`` (Kafka's ``leaderIsrUpdateLock``) guards the leader epoch,
  partition epoch, assignment and ISR. :meth:`make_leader` takes it to change them;
  appends take it so that no leader change happens between their epoch check and the
  log append, and so do reads (:meth:`fetch_records`, :meth:`fetch_offset_for_timestamp`,
  :meth:`last_offset_for_leader_epoch`) across their check, the follower's fetch state
  and the read, so a fetch racing a leader change is answered with the new epoch's error,
  never with data read after the change (Kafka takes the read side; one re-entrant lock
  here: appends to one log are serialised by the log's own lock anyway, and a read holds
  it only to locate its file region).
* The high watermark only moves under the same lock (:meth:`maybe_increment_leader_hw`)
  and never backwards; readers read it without the lock (one int: a value that is at
  worst one append old, never a torn one).
* The log locks itself; callers may append and read from any thread.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Protocol

from kafkacore.errors import InvalidTxnStateError, KafkaCoreError
from kafkacore.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    FetchDataInfo,
    Log,
    LogAppendInfo,
    LogManager,
    TimestampAndOffset,
    TopicPartition,
)
from kafkacore.log.log import AppendOrigin
from kafkacore.log.producer_state import DuplicateSequenceError
from kafkacore.metadata import PartitionState
from kafkacore.protocol import ErrorCode

__all__ = [
    "AlterPartitionSubmitter",
    "AsyncOffsetReader",
    "FencedLeaderEpochError",
    "FetchIsolation",
    "FetchParams",
    "FetchPartitionData",
    "KafkaStorageError",
    "LogReadInfo",
    "NotEnoughReplicasError",
    "NotLeaderOrFollowerError",
    "Partition",
    "RemoteOffsetSearch",
    "ReplicaState",
    "UnknownLeaderEpochError",
    "UnknownTopicOrPartitionError",
]

logger = logging.getLogger("kafkacore.server")


class NotLeaderOrFollowerError(KafkaCoreError):
    """This broker does not lead the partition (NOT_LEADER_OR_FOLLOWER)."""

    error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER


class FencedLeaderEpochError(KafkaCoreError):
    """A request's leader epoch is older than the partition's (FENCED_LEADER_EPOCH)."""

    error_code = ErrorCode.FENCED_LEADER_EPOCH


class UnknownLeaderEpochError(KafkaCoreError):
    """A request's leader epoch is newer than the partition's (UNKNOWN_LEADER_EPOCH)."""

    error_code = ErrorCode.UNKNOWN_LEADER_EPOCH


class UnknownTopicOrPartitionError(KafkaCoreError):
    """This broker hosts no such partition (UNKNOWN_TOPIC_OR_PARTITION)."""

    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class KafkaStorageError(KafkaCoreError):
    """The partition's log directory failed (Kafka's ``KafkaStorageException``,
    KAFKA_STORAGE_ERROR)."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR


class NotEnoughReplicasError(KafkaCoreError):
    """``acks=-1`` with fewer in-sync replicas than ``min.insync.replicas``
    (NOT_ENOUGH_REPLICAS)."""

    error_code = ErrorCode.NOT_ENOUGH_REPLICAS


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


@dataclass(slots=True)
class ReplicaState:
    """What the leader knows of one follower (Kafka's ``Replica``/``ReplicaState``), from
    its fetches. Times are milliseconds on the partition's clock; -1 offsets: unknown."""

    broker_id: int
    log_end_offset: int = -1
    log_start_offset: int = -1
    last_caught_up_time: int = 0
    last_fetch_leader_leo: int = -1
    last_fetch_time: int = 0

    def reset(self, now: int, in_isr: bool, leader_leo: int) -> None:
        """A new leadership: offsets unknown, ISR members count as caught up now."""
        self.log_end_offset = -1
        self.log_start_offset = -1
        self.last_caught_up_time = now if in_isr else 0
        self.last_fetch_leader_leo = leader_leo
        self.last_fetch_time = now if in_isr else 0

    def is_caught_up(self, leader_leo: int, now: int, lag_ms: int) -> bool:
        return self.log_end_offset == leader_leo or now - self.last_caught_up_time <= lag_ms


class FetchIsolation(enum.Enum):
    """How far a read may go (Kafka's ``FetchIsolation``): a follower to the log end
    offset, a read_uncommitted consumer to the high watermark, a read_committed one to the
    last stable offset."""

    LOG_END = "log_end"
    HIGH_WATERMARK = "high_watermark"
    TXN_COMMITTED = "txn_committed"


@dataclass(frozen=True, slots=True)
class FetchParams:
    """What a Fetch asks of all its partitions (Kafka's ``FetchParams``): the fetching
    replica (-1: a consumer), how long and for how many bytes it may wait, at most how
    many bytes in all (a consumer's already capped by its quota), and its isolation."""

    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation: FetchIsolation

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0

    # followers and consumers alike read from the leader (no KIP-392 follower fetching)
    fetch_only_leader: ClassVar[bool] = True


class FetchPartitionData(NamedTuple):
    """One partition of a Fetch (Kafka's ``FetchRequest.PartitionData``): where to read,
    the follower's log start offset (-1 from a consumer), at most how many bytes, the
    fetcher's leader epoch (-1: not checked; Fetch < 9) and, from a follower, the epoch of
    its last fetched batch (-1: none; Fetch < 12)."""

    fetch_offset: int
    log_start_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1


class LogReadInfo(NamedTuple):
    """What :meth:`Partition.fetch_records` read (Kafka's ``LogReadInfo``): the records'
    file region (``None``: nothing read), the ``(epoch, end offset)`` a diverged follower
    must truncate to, and the offsets at the time of the read. ``read_error``: the log
    refused the read (an offset out of range, a storage error); the offsets are still
    those of the time."""

    fetched: FetchDataInfo | None
    diverging_epoch: tuple[int, int] | None
    high_watermark: int
    log_start_offset: int
    log_end_offset: int
    last_stable_offset: int
    read_error: Exception | None = None


class AsyncOffsetReader(Protocol):
    """Where a tiered log's offsets by time are searched (Kafka's ``AsyncOffsetReader``,
    the remote log manager): the tiered segments from ``start_offset``, then
    ``local_search``, off the caller's thread."""

    def async_offset_read(
        self,
        tp: TopicPartition,
        timestamp: int,
        start_offset: int,
        local_search: Callable[[], TimestampAndOffset | None],
    ) -> Future[TimestampAndOffset | None]: ...


class RemoteOffsetSearch(NamedTuple):
    """A ListOffsets by time on a tiered log, under way (Kafka's ``OffsetResultHolder``
    with its future): the search, and the bound a hit must be below to be found (the
    isolation's, as :meth:`Partition.fetch_offset_for_timestamp` applies it)."""

    search: Future[TimestampAndOffset | None]
    last_fetchable_offset: int


# An ISR change outcome: (error code, the committed state or None)
AlterPartitionCallback = Callable[[int, "tuple[int, tuple[int, ...], int] | None"], None]


class AlterPartitionSubmitter(Protocol):
    """Where a leader proposes ISR changes (the
    :class:`~kafkacore.server.alter_partition.AlterPartitionManager`)."""

    def submit(
        self,
        tp: TopicPartition,
        leader_epoch: int,
        new_isr: tuple[int, ...],
        partition_epoch: int,
        callback: AlterPartitionCallback,
    ) -> bool: ...


# AlterPartition errors after which the leader waits for a LeaderAndIsr
_FENCED_LEADER_EPOCH = 74
_INVALID_UPDATE_VERSION = 95


class Partition:
    def __init__(
        self,
        topic_partition: TopicPartition,
        log: Log,
        local_broker_id: int,
        *,
        alter_partition: AlterPartitionSubmitter | None = None,
        is_broker_alive: Callable[[int], bool] | None = None,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self.topic_partition = topic_partition
        self.log = log
        self.local_broker_id = local_broker_id
        self.alter_partition = alter_partition
        self._is_broker_alive = is_broker_alive
        self._clock = clock
        # truncations go through the log manager when there is one (it pauses the
        # cleaner and checkpoints the recovery points)
        self.log_manager: LogManager | None = None
        # replica.lag.time.max.ms (the replica manager keeps it current)
        self.replica_lag_time_max_ms = 30000
        self._leader_isr_lock = threading.RLock()
        self._leader_id = -1
        self._leader_epoch = -1
        self._leader_epoch_start_offset = 0
        self._partition_epoch = -1
        self._replicas: tuple[int, ...] = ()
        self._isr: frozenset[int] = frozenset()
        # the ISR proposed to the controller and not yet answered (None: nothing in flight)
        self._pending_isr: frozenset[int] | None = None
        # an AlterPartition was fenced: no proposals until the next LeaderAndIsr
        self._isr_update_fenced = False
        self._followers: dict[int, ReplicaState] = {}
        self._high_watermark = 0
        # called (outside the lock) after every high watermark move / leadership change
        self.on_high_watermark: Callable[[TopicPartition], None] | None = None

    def __repr__(self) -> str:
        return (
            f"Partition({self.topic_partition}, leader={self._leader_id}, "
            f"epoch={self._leader_epoch}, isr={sorted(self._isr)}, hw={self._high_watermark})"
        )

    # -- state -----------------------------------------------------------------------------

    @property
    def leader_id(self) -> int:
        return self._leader_id

    @property
    def leader_epoch(self) -> int:
        return self._leader_epoch

    @property
    def partition_epoch(self) -> int:
        return self._partition_epoch

    @property
    def replicas(self) -> tuple[int, ...]:
        return self._replicas

    @property
    def isr(self) -> frozenset[int]:
        return self._isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        """The committed ISR plus a pending expansion (a pending shrink keeps the larger
        committed ISR until the controller answers)."""
        pending = self._pending_isr
        return self._isr if pending is None else self._isr | pending

    @property
    def pending_isr(self) -> frozenset[int] | None:
        return self._pending_isr

    @property
    def is_leader(self) -> bool:
        return self._leader_id == self.local_broker_id

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def last_stable_offset(self) -> int:
        """``min(first unstable offset, HW)`` (Kafka's ``lastStableOffset``): the first
        offset of the earliest transaction still open (or whose marker the HW has not
        passed), the HW when there is none. What read_committed consumers read up to."""
        return self.log.last_stable_offset(self._high_watermark)

    def initialize_high_watermark(self, checkpointed: int) -> None:
        """Start from the ``replication-offset-checkpoint`` value (a restarted replica),
        within ``[log start, log end]``."""
        with self._leader_isr_lock:
            log = self.log
            self._high_watermark = max(log.log_start_offset, min(checkpointed, log.log_end_offset))

    def follower_state(self, replica_id: int) -> ReplicaState | None:
        return self._followers.get(replica_id)

    def effective_min_isr(self) -> int:
        """``min(min.insync.replicas, replication factor)`` (Kafka 3.7+)."""
        return min(self.log.config.min_insync_replicas, max(1, len(self._replicas)))

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        """A request's ``current_leader_epoch`` (-1: not checked) against ours."""
        if current_leader_epoch == -1:
            return
        if current_leader_epoch < self._leader_epoch:
            raise FencedLeaderEpochError(
                f"The leader epoch in the request {current_leader_epoch} is older than the "
                f"current leader epoch {self._leader_epoch} of {self.topic_partition}"
            )
        if current_leader_epoch > self._leader_epoch:
            raise UnknownLeaderEpochError(
                f"The leader epoch in the request {current_leader_epoch} is newer than the "
                f"current leader epoch {self._leader_epoch} of {self.topic_partition}"
            )

    def local_log_with_epoch_or_raise(self, current_leader_epoch: int, require_leader: bool) -> Log:
        """The log, once a request's ``current_leader_epoch`` (-1: not checked) is ours
        and, with ``require_leader``, this broker leads (Kafka's
        ``localLogWithEpochOrThrow``, in its order: the epoch first). Raises
        ``FencedLeaderEpochError`` / ``UnknownLeaderEpochError`` /
        ``NotLeaderOrFollowerError``. The one check of Fetch, ListOffsets and
        OffsetForLeaderEpoch; the callers below hold the lock across it and what they read."""
        with self._leader_isr_lock:
            return self._local_log_or_raise(current_leader_epoch, require_leader)

    def _local_log_or_raise(self, current_leader_epoch: int, require_leader: bool) -> Log:
        """:meth:`local_log_with_epoch_or_raise` for a caller that holds the lock."""
        self.check_leader_epoch(current_leader_epoch)
        if require_leader and not self.is_leader:
            raise NotLeaderOrFollowerError(
                f"Failed to find leader log for partition {self.topic_partition} with "
                f"leader epoch {current_leader_epoch}. The current leader is "
                f"{self._leader_id} and the current epoch {self._leader_epoch}"
            )
        return self.log

    # -- reads -----------------------------------------------------------------------------

    def fetch_records(
        self,
        params: FetchParams,
        fetch: FetchPartitionData,
        max_bytes: int,
        min_one_message: bool,
        update_fetch_state: bool,
    ) -> LogReadInfo:
        """One partition of a Fetch (Kafka's ``fetchRecords``), the whole decision under
        the lock, so that no leader change falls between the check and the read: the
        epoch and leadership (:meth:`local_log_with_epoch_or_raise`); from a follower, that
        it is a replica (``NotLeaderOrFollowerError``), the KIP-320/595 divergence check
        of its last fetched epoch (a diverged follower gets its truncation point and no
        records), and, with ``update_fetch_state``, its fetch state (LEO, ISR expansion,
        the HW: so the answer carries the HW its own fetch moved; a delayed fetch re-reads
        without); then at most ``max_bytes`` (the first batch whole with
        ``min_one_message``) up to the isolation's bound."""
        moved = False
        with self._leader_isr_lock:
            log = self._local_log_or_raise(fetch.current_leader_epoch, params.fetch_only_leader)
            if params.replica_id >= 0:  # a follower
                now = self._clock()
                follower = self._follower_or_raise(params.replica_id)
                if fetch.last_fetched_epoch >= 0:
                    diverging = _diverging_epoch(log, fetch.fetch_offset, fetch.last_fetched_epoch)
                    if diverging is not None:
                        return LogReadInfo(
                            None,
                            diverging,
                            self._high_watermark,
                            log.log_start_offset,
                            log.log_end_offset,
                            self.last_stable_offset,
                        )
                if (
                    update_fetch_state
                    and log.log_start_offset <= fetch.fetch_offset <= log.log_end_offset
                ):
                    moved = self._record_follower_fetch(
                        follower, fetch.fetch_offset, fetch.log_start_offset, now
                    )
            info = self._read(log, params.isolation, fetch.fetch_offset, max_bytes, min_one_message)
        if moved:
            self._notify_hw()
        return info

    def _read(
        self,
        log: Log,
        isolation: FetchIsolation,
        offset: int,
        max_bytes: int,
        min_one_message: bool,
    ) -> LogReadInfo:
        """Kafka's ``readRecords``, under the lock: the offsets first, then the read."""
        hw = self._high_watermark
        lso = self.last_stable_offset
        log_start = log.log_start_offset
        log_end = log.log_end_offset
        upper_bound = (
            None
            if isolation is FetchIsolation.LOG_END
            else lso
            if isolation is FetchIsolation.TXN_COMMITTED
            else hw
        )
        try:
            fetched = log.read(offset, max_bytes, upper_bound, min_one_batch=min_one_message)
        except Exception as exc:  # the answer carries its code; the fetch goes on
            return LogReadInfo(None, None, hw, log_start, log_end, lso, read_error=exc)
        return LogReadInfo(fetched, None, hw, log_start, log_end, lso)

    def fetch_offset_for_timestamp(
        self,
        timestamp: int,
        isolation: FetchIsolation,
        current_leader_epoch: int,
        remote: AsyncOffsetReader | None = None,
    ) -> TimestampAndOffset | RemoteOffsetSearch | None:
        """ListOffsets on the leader (Kafka's ``fetchOffsetForTimestamp``), under the lock:
        the epoch and leadership checked, then the bound the isolation may see (the log
        end for a follower, the last stable offset for read_committed, else the HW).
        LATEST is that bound with the log's latest epoch; a timestamp (or MAX_TIMESTAMP)
        whose hit is at or past it is not found (``None``), as is a lookup with nothing.
        A timestamp on a non-empty tiered log is searched by ``remote`` (the tiered
        segments, then the local ones; Kafka's ``asyncOffsetRead``): the search under way
        and its bound are returned (:class:`RemoteOffsetSearch`)."""
        with self._leader_isr_lock:
            log = self._local_log_or_raise(current_leader_epoch, True)
            if isolation is FetchIsolation.LOG_END:
                fetchable = log.log_end_offset
            elif isolation is FetchIsolation.TXN_COMMITTED:
                fetchable = self.last_stable_offset
            else:
                fetchable = self._high_watermark
            if timestamp == LATEST_TIMESTAMP:
                return TimestampAndOffset(-1, fetchable, log.latest_epoch)
            if (
                timestamp >= 0
                and remote is not None
                and log.remote_log_enabled
                and log.log_start_offset != log.log_end_offset
            ):
                search = remote.async_offset_read(
                    self.topic_partition,
                    timestamp,
                    log.log_start_offset,
                    lambda: log.offset_for_timestamp(timestamp),
                )
                return RemoteOffsetSearch(search, fetchable)
            found = log.offset_for_timestamp(timestamp)
        if found is None or (timestamp != EARLIEST_TIMESTAMP and found.offset < 0):
            return None
        if timestamp not in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP) and (
            found.offset >= fetchable
        ):
            return None  # not fetchable yet under the isolation level
        return found

    def last_offset_for_leader_epoch(
        self, current_leader_epoch: int, leader_epoch: int, require_leader: bool = True
    ) -> tuple[int, int] | None:
        """OffsetForLeaderEpoch (Kafka's ``lastOffsetForLeaderEpoch``), under the lock:
        the largest epoch <= ``leader_epoch`` and its end offset, ``None`` when the epoch
        cache cannot answer."""
        with self._leader_isr_lock:
            log = self._local_log_or_raise(current_leader_epoch, require_leader)
            return log.end_offset_for_epoch(leader_epoch)

    # -- leadership ------------------------------------------------------------------------

    def make_leader(
        self, state: PartitionState, now: int | None = None, *, record_epoch_start: bool = False
    ) -> bool:
        """Take ``state`` (this node must be its leader); whether the leader epoch
        changed (Kafka's ``makeLeader``). A new epoch is recorded in the leader epoch
        cache at the log end offset when ``record_epoch_start`` (KAFKA-7415; the
        LeaderAndIsr path; the single-node store path keeps its cache as it was), the
        followers' states are reset (ISR members caught up now), and the high watermark
        is re-derived (``maybeIncrementLeaderHW``)."""
        if state.leader != self.local_broker_id:
            raise ValueError(f"{self.topic_partition}: node {state.leader} leads, not us")
        now = self._clock() if now is None else now
        with self._leader_isr_lock:
            if state.partition_epoch < self._partition_epoch:
                return False  # a stale update
            changed = state.leader_epoch != self._leader_epoch or not self.is_leader
            leo = self.log.log_end_offset
            if changed:
                if record_epoch_start and state.leader_epoch >= 0:
                    self.log.maybe_assign_epoch_start_offset(state.leader_epoch, leo)
                self._leader_epoch_start_offset = leo
            self._leader_id = state.leader
            self._leader_epoch = state.leader_epoch
            self._partition_epoch = state.partition_epoch
            self._replicas = state.replicas
            self._isr = frozenset(state.isr)
            self._pending_isr = None
            self._isr_update_fenced = False
            followers = {}
            for replica in state.replicas:
                if replica == self.local_broker_id:
                    continue
                follower = self._followers.get(replica) or ReplicaState(replica)
                if changed:
                    follower.reset(now, replica in self._isr, leo)
                followers[replica] = follower
            self._followers = followers
            self._maybe_increment_leader_hw_locked()
        self._notify_hw()
        return changed

    def make_follower(self, state: PartitionState) -> bool:
        """Follow ``state.leader`` (Kafka's ``makeFollower``): the ISR is emptied (only
        leaders keep one), leader and epochs recorded; whether the leader or the leader
        epoch changed (then the caller restarts the fetcher)."""
        with self._leader_isr_lock:
            if state.partition_epoch < self._partition_epoch and (
                state.leader_epoch <= self._leader_epoch
            ):
                return False
            changed = state.leader != self._leader_id or state.leader_epoch != self._leader_epoch
            self._leader_id = state.leader
            self._leader_epoch = state.leader_epoch
            self._partition_epoch = state.partition_epoch
            self._replicas = state.replicas
            self._isr = frozenset()
            self._pending_isr = None
            self._isr_update_fenced = False
            self._followers = {}
            # never above our own log end
            self._high_watermark = min(self._high_watermark, self.log.log_end_offset)
        self._notify_hw()
        return changed

    def stop_leading(self) -> None:
        """No leader known here (StopReplica without delete): appends and reads are
        refused until the next LeaderAndIsr."""
        with self._leader_isr_lock:
            self._leader_id = -1
            self._isr = frozenset()
            self._pending_isr = None
            self._followers = {}
        self._notify_hw()

    # -- appends ---------------------------------------------------------------------------

    def append_records_to_leader(
        self,
        records: bytes,
        *,
        required_acks: int = 1,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        verification_guard: tuple[int, int] | None = None,
    ) -> LogAppendInfo:
        """Append a batch as leader (Kafka's ``appendRecordsToLeader``): refused when this
        node does not lead, or with ``acks=-1`` when the ISR is smaller than
        ``min.insync.replicas``; a duplicate idempotent batch is answered with its
        original offsets and nothing written. ``verification_guard``: ``(producer id,
        token)`` of a transactional write verified with the coordinator (KIP-890); if a
        marker of that producer was appended since the token was taken
        (:meth:`Log.verification_guard`), the write is refused with
        ``InvalidTxnStateError`` - it would reopen the transaction the marker ended.
        Markers are appended under the same lock (:meth:`append_txn_marker`). The high
        watermark follows."""
        with self._leader_isr_lock:
            if not self.is_leader:
                raise NotLeaderOrFollowerError(
                    f"Leader not local for partition {self.topic_partition} on broker "
                    f"{self.local_broker_id}"
                )
            self.ensure_enough_replicas(required_acks)
            if verification_guard is not None:
                producer_id, token = verification_guard
                if self.log.verification_guard(producer_id) != token:
                    raise InvalidTxnStateError(
                        f"The transaction of producer {producer_id} on "
                        f"{self.topic_partition} ended while the write was verified"
                    )
            try:
                info = self.log.append_as_leader(records, self._leader_epoch, origin=origin)
            except DuplicateSequenceError as duplicate:
                return self._answer_for_duplicate(duplicate)
            moved = self._maybe_increment_leader_hw_locked()
        if moved:
            self._notify_hw()
        return info

    def append_is_quick(self, size: int) -> bool:
        """Whether :meth:`append_records_to_leader` of ``size`` bytes would now take no
        lock anybody holds and only write into the page cache (:meth:`Log.append_is_quick`);
        a hint, read without waiting."""
        if not self._leader_isr_lock.acquire(blocking=False):
            return False
        try:
            return self.is_leader and self.log.append_is_quick(size, self._leader_epoch)
        finally:
            self._leader_isr_lock.release()

    def append_txn_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        *,
        required_acks: int = -1,
        timestamp_ms: int | None = None,
    ) -> LogAppendInfo:
        """Append a COMMIT/ABORT marker as leader at the current leader epoch (Kafka's
        ``appendRecordsToLeader`` with ``AppendOrigin.COORDINATOR``; see
        :meth:`Log.append_txn_marker` for the producer checks); refused like
        :meth:`append_records_to_leader`. The high watermark follows."""
        with self._leader_isr_lock:
            if not self.is_leader:
                raise NotLeaderOrFollowerError(
                    f"Leader not local for partition {self.topic_partition} on broker "
                    f"{self.local_broker_id}"
                )
            self.ensure_enough_replicas(required_acks)
            info = self.log.append_txn_marker(
                producer_id,
                producer_epoch,
                coordinator_epoch,
                commit,
                self._leader_epoch,
                timestamp_ms,
            )
            moved = self._maybe_increment_leader_hw_locked()
        if moved:
            self._notify_hw()
        return info

    def ensure_enough_replicas(self, required_acks: int) -> None:
        """``acks=-1`` needs at least ``min.insync.replicas`` in the ISR (Kafka checks it
        before the append, with this message). A replicated partition uses
        ``min(min.insync.replicas, replication factor)`` (Kafka 3.7+); a single node keeps
        the plain ``min.insync.replicas`` it always had."""
        if required_acks != -1:
            return
        min_isr = self.log.config.min_insync_replicas
        if len(self._replicas) > 1:
            min_isr = self.effective_min_isr()
        isr = self._isr
        if len(isr) < min_isr:
            raise NotEnoughReplicasError(
                f"The size of the current ISR Set({', '.join(str(r) for r in sorted(isr))}) "
                f"is insufficient to satisfy the min.isr requirement of {min_isr} for "
                f"partition {self.topic_partition}"
            )

    def _answer_for_duplicate(self, duplicate: DuplicateSequenceError) -> LogAppendInfo:
        """Kafka's ``UnifiedLog.append`` finding a duplicate in
        ``analyzeAndValidateProducerState``: nothing is written, and the producer is acked
        with the offsets and timestamp of the batch already stored."""
        logger.debug("%s", duplicate)
        return LogAppendInfo(
            first_offset=duplicate.first_offset,
            last_offset=duplicate.last_offset,
            max_timestamp=duplicate.timestamp,
            offset_of_max_timestamp=duplicate.last_offset,
            log_append_time=duplicate.timestamp,
            log_start_offset=self.log.log_start_offset,
            valid_bytes=0,
            last_leader_epoch=None,
            source_compression=0,
            num_batches=0,
            num_records=0,
        )

    # -- high watermark --------------------------------------------------------------------

    def maybe_increment_leader_hw(self) -> bool:
        """Move the high watermark up to the smallest log end offset over the leader, the
        maximal ISR and the caught-up live replicas outside it (Kafka's
        ``maybeIncrementLeaderHW``); whether it moved. It never moves back, and not at all
        while the ISR is smaller than ``min(min.insync.replicas, replication factor)``
        (KAFKA-15583)."""
        with self._leader_isr_lock:
            moved = self._maybe_increment_leader_hw_locked()
        if moved:
            self._notify_hw()
        return moved

    def _maybe_increment_leader_hw_locked(self) -> bool:
        if not self.is_leader:
            return False
        if len(self._replicas) > 1 and len(self._isr) < self.effective_min_isr():
            return False  # under min ISR (Kafka's isUnderMinIsr: the committed ISR)
        isr = self.maximal_isr
        leader_leo = self.log.log_end_offset
        new_hw = leader_leo
        now = self._clock()
        for replica in self._replicas:
            if replica == self.local_broker_id:
                continue
            follower = self._followers.get(replica)
            if replica in isr:
                leo = follower.log_end_offset if follower is not None else -1
                if leo < 0:
                    return False  # a member whose position is not known yet holds it
                new_hw = min(new_hw, leo)
            elif (
                # a caught-up, eligible replica about to join is waited for too
                follower is not None
                and follower.log_end_offset >= 0
                and follower.is_caught_up(leader_leo, now, self.replica_lag_time_max_ms)
                and (self._is_broker_alive is None or self._is_broker_alive(replica))
            ):
                new_hw = min(new_hw, follower.log_end_offset)
        if new_hw > self._high_watermark:
            self._high_watermark = new_hw
            return True
        return False

    def _notify_hw(self) -> None:
        # completed transactions whose marker the HW passed no longer hold the LSO
        self.log.update_high_watermark(self._high_watermark)
        callback = self.on_high_watermark
        if callback is not None:
            callback(self.topic_partition)

    # -- the leader's view of its followers ----------------------------------------------

    def update_follower_fetch_state(
        self, replica_id: int, fetch_offset: int, log_start_offset: int, now: int | None = None
    ) -> None:
        """A follower fetched from ``fetch_offset`` (Kafka's ``updateFollowerFetchState``):
        its LEO and log start offset recorded, its last caught-up time advanced, then the
        ISR may expand and the high watermark move. ``NotLeaderOrFollowerError`` when not
        leader or ``replica_id`` is not a replica. (A Fetch does this inside
        :meth:`fetch_records`.)"""
        now = self._clock() if now is None else now
        with self._leader_isr_lock:
            if not self.is_leader:
                raise NotLeaderOrFollowerError(
                    f"Leader not local for partition {self.topic_partition} on broker "
                    f"{self.local_broker_id}"
                )
            follower = self._follower_or_raise(replica_id)
            moved = self._record_follower_fetch(follower, fetch_offset, log_start_offset, now)
        if moved:
            self._notify_hw()

    def _follower_or_raise(self, replica_id: int) -> ReplicaState:
        follower = self._followers.get(replica_id)
        if follower is None:
            raise NotLeaderOrFollowerError(
                f"Replica {replica_id} is not a replica of {self.topic_partition}"
            )
        return follower

    def _record_follower_fetch(
        self, follower: ReplicaState, fetch_offset: int, log_start_offset: int, now: int
    ) -> bool:
        """Under the lock, as leader: the follower's fetch state, ISR expansion and the HW;
        whether the HW moved (the caller notifies once it released the lock)."""
        leader_leo = self.log.log_end_offset
        if fetch_offset >= leader_leo:
            follower.last_caught_up_time = max(follower.last_caught_up_time, now)
        elif fetch_offset >= follower.last_fetch_leader_leo:
            follower.last_caught_up_time = max(
                follower.last_caught_up_time, follower.last_fetch_time
            )
        follower.log_end_offset = fetch_offset
        follower.log_start_offset = log_start_offset
        follower.last_fetch_leader_leo = leader_leo
        follower.last_fetch_time = now
        self.maybe_expand_isr(follower.broker_id)
        return self._maybe_increment_leader_hw_locked()

    def maybe_expand_isr(self, replica_id: int) -> bool:
        """Propose ``replica_id`` for the ISR (Kafka's ``maybeExpandIsr``) when it is not
        in it, has caught up to the high watermark and to the start of the current epoch,
        and is alive; whether a proposal was made."""
        with self._leader_isr_lock:
            if not self.is_leader or self._pending_isr is not None or self._isr_update_fenced:
                return False
            if replica_id in self._isr:
                return False
            follower = self._followers.get(replica_id)
            if follower is None:
                return False
            if follower.log_end_offset < self._high_watermark:
                return False
            if follower.log_end_offset < self._leader_epoch_start_offset:
                return False
            if self._is_broker_alive is not None and not self._is_broker_alive(replica_id):
                return False
            return self._propose_isr(self._isr | {replica_id})

    def out_of_sync_replicas(self, lag_ms: int, now: int | None = None) -> set[int]:
        """ISR members (the leader aside) that are not caught up."""
        now = self._clock() if now is None else now
        leader_leo = self.log.log_end_offset
        return {
            r
            for r in self._isr
            if r != self.local_broker_id
            and (f := self._followers.get(r)) is not None
            and not f.is_caught_up(leader_leo, now, lag_ms)
        }

    def maybe_shrink_isr(self, now: int | None = None, lag_ms: int | None = None) -> bool:
        """Propose the ISR without its members that are not caught up (Kafka's
        ``maybeShrinkIsr``, the ``isr-expiration`` task); whether a proposal was made.
        Nothing while an update is in flight."""
        with self._leader_isr_lock:
            if not self.is_leader or self._pending_isr is not None or self._isr_update_fenced:
                return False
            if lag_ms is None:
                lag_ms = self.replica_lag_time_max_ms
            lagging = self.out_of_sync_replicas(lag_ms, now)
            if not lagging:
                return False
            logger.info(
                "Shrinking ISR of %s from %s to %s (out of sync: %s)",
                self.topic_partition,
                sorted(self._isr),
                sorted(self._isr - lagging),
                sorted(lagging),
            )
            return self._propose_isr(self._isr - lagging)

    def _propose_isr(self, new_isr: frozenset[int]) -> bool:
        manager = self.alter_partition
        if manager is None:
            return False
        leader_epoch = self._leader_epoch
        accepted = manager.submit(
            self.topic_partition,
            leader_epoch,
            tuple(sorted(new_isr)),
            self._partition_epoch,
            lambda error, result: self.on_alter_partition_result(leader_epoch, error, result),
        )
        if accepted:
            self._pending_isr = new_isr
        return accepted

    def on_alter_partition_result(
        self,
        leader_epoch: int,
        error: int,
        result: tuple[int, tuple[int, ...], int] | None,
    ) -> None:
        """The controller answered an ISR proposal made under ``leader_epoch``: on
        success ``result`` is ``(leader epoch, ISR, partition epoch)`` and is committed;
        FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION stop proposals until the next
        LeaderAndIsr; other errors drop the proposal (it is made again)."""
        with self._leader_isr_lock:
            if leader_epoch != self._leader_epoch or self._pending_isr is None:
                return  # a LeaderAndIsr came in between
            self._pending_isr = None
            if error == 0 and result is not None:
                epoch, isr, partition_epoch = result
                if epoch == self._leader_epoch and partition_epoch >= self._partition_epoch:
                    self._isr = frozenset(isr)
                    self._partition_epoch = partition_epoch
                    logger.info(
                        "ISR of %s is now %s (partition epoch %d)",
                        self.topic_partition,
                        sorted(self._isr),
                        partition_epoch,
                    )
            elif error in (_FENCED_LEADER_EPOCH, _INVALID_UPDATE_VERSION):
                self._isr_update_fenced = True
                logger.info(
                    "ISR update of %s fenced (error %d): waiting for LeaderAndIsr",
                    self.topic_partition,
                    error,
                )
            self._maybe_increment_leader_hw_locked()
        # an ISR change completes or fails delayed produces either way
        self._notify_hw()

    # -- the follower side -----------------------------------------------------------------

    def append_records_as_follower(
        self, records: bytes, leader_epoch: int | None = None
    ) -> LogAppendInfo:
        """Append the leader's batches unchanged (offsets, epochs, producer state kept);
        refused when this broker leads, or follows at another leader epoch than
        ``leader_epoch`` (a fetch answered before a LeaderAndIsr)."""
        with self._leader_isr_lock:
            if self.is_leader or (leader_epoch is not None and leader_epoch != self._leader_epoch):
                raise NotLeaderOrFollowerError(
                    f"{self.topic_partition}: not a follower at leader epoch {leader_epoch} "
                    f"(leader {self._leader_id}, epoch {self._leader_epoch})"
                )
            return self.log.append_as_follower(records)

    def update_follower_high_watermark(self, leader_hw: int, leader_log_start: int) -> bool:
        """After a fetch: HW = ``min(leader HW, own LEO)``, never below the log start; the
        log start offset follows the leader's. Whether the HW changed."""
        with self._leader_isr_lock:
            log = self.log
            if log.log_start_offset < leader_log_start <= log.log_end_offset:
                log.delete_records_before(leader_log_start)
            new_hw = max(min(leader_hw, log.log_end_offset), log.log_start_offset)
            changed = new_hw != self._high_watermark
            self._high_watermark = new_hw
        if changed:
            self._notify_hw()
        return changed

    def truncate_to(self, offset: int) -> None:
        """Remove every offset >= ``offset`` (log and epoch cache); the HW stays at or
        below the new log end."""
        with self._leader_isr_lock:
            if self.log_manager is not None:
                self.log_manager.truncate_to({self.topic_partition: offset})
            else:
                self.log.truncate_to(offset)
            self._high_watermark = min(self._high_watermark, self.log.log_end_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        with self._leader_isr_lock:
            if self.log_manager is not None:
                self.log_manager.truncate_fully_and_start_at(self.topic_partition, offset)
            else:
                self.log.truncate_fully_and_start_at(offset)
            self._high_watermark = offset


def _diverging_epoch(
    log: Log, fetch_offset: int, last_fetched_epoch: int
) -> tuple[int, int] | None:
    """KIP-320/595 truncation on fetch: the leader's ``(epoch, end offset)`` for the
    follower's last fetched epoch when that epoch is not ours up to ``fetch_offset``."""
    found = log.end_offset_for_epoch(last_fetched_epoch)
    epoch, end_offset = found if found is not None else (-1, -1)
    if epoch < last_fetched_epoch or end_offset < fetch_offset:
        return epoch, end_offset
    return None
