"""A share partition: the state of one (share group, topic partition) on the partition
leader (Kafka's ``SharePartition`` with ``InFlightBatch`` and ``InFlightState``), beside
the partition's :class:`~kafkacore.server.partition.Partition`.

The records between the share-partition start offset (SPSO) and end offset (SPEO) are in
flight. Each is AVAILABLE (to be delivered), ACQUIRED (by one member, under an acquisition
lock that expires after ``share.record.lock.duration.ms``), ACKNOWLEDGED or ARCHIVED (both
terminal). The state is kept per fetched batch, and per offset once a batch's offsets
differ (a partial acknowledgement, a subset acquisition, a lock timeout of part of it).

* **Acquire** (ShareFetch): records read from the log are acquired by the fetching member,
  their delivery count raised: whole batches (``batch_optimized``, split at ``BatchSize``)
  or at most ``MaxRecords`` (``record_limit``, KIP-1206); never more in flight than
  ``share.partition.max.record.locks``; a record on its last delivery goes alone, and
  batches with failed deliveries are delivered in shrinking parts (Kafka's throttling).
  Under read_committed, aborted transactional batches are archived instead.
* **Acknowledge** (ShareAcknowledge, or piggy-backed on ShareFetch): ACCEPT makes a record
  ACKNOWLEDGED, RELEASE makes it AVAILABLE again (ARCHIVED at the delivery limit), REJECT
  and GAP make it ARCHIVED; RENEW (KIP-1222) restarts the lock. Only the member that
  acquired a record may acknowledge it (else INVALID_RECORD_STATE). The new states are
  written to the share coordinator first; a failed write rolls them back.
* **Lock timeout**: an expired lock makes the records AVAILABLE (or ARCHIVED at the limit).
* The SPSO moves past terminal records; records behind it leave the cache.

The durable state is read from the share coordinator when the partition is first used
(``share.auto.offset.reset`` chooses the start of a share partition without state) and
written on every change (:class:`StateWriter`).

Per-key order (a kafkacore extension, ``share.key.ordering=true``): records are acquired
one by one, only when they head their key (:mod:`~kafkacore.server.share.key_order`).

Thread-safety: the event loop only (Kafka guards the same decisions with one read-write
lock; here every method runs on the loop, and a write to the coordinator in progress is
an *ongoing state transition*, as in Kafka, that other requests see and respect).
"""

from __future__ import annotations

import asyncio
import bisect
import enum
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from kafkacore.coordinator.share_state import (
    UNINITIALIZED_START_OFFSET,
    RecordState,
    StateBatch,
)
from kafkacore.errors import KafkaCoreError
from kafkacore.protocol import ErrorCode
from kafkacore.server.share.key_order import KeyIndex

__all__ = [
    "EMPTY_MEMBER_ID",
    "AcknowledgeType",
    "AcknowledgementBatch",
    "AcquiredRecords",
    "FetchedBatch",
    "LockTimer",
    "LoopTimer",
    "PartitionState",
    "ShareAcquireMode",
    "ShareError",
    "SharePartition",
    "StateWriter",
]

logger = logging.getLogger("kafkacore.server.share")

EMPTY_MEMBER_ID = ""
"""The member of records nobody has acquired."""

_MINIMUM_THROTTLE_LIMIT = 2


class ShareError(KafkaCoreError):
    """A share-partition operation refused with Kafka's error code (INVALID_RECORD_STATE,
    INVALID_REQUEST, a persister's error mapped as Kafka maps it, ...)."""

    def __init__(self, error_code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


class AcknowledgeType(enum.IntEnum):
    """The acknowledgement types of ShareFetch/ShareAcknowledge (``AcknowledgeType``;
    0 marks a gap: an offset with no record)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


_ACK_TO_STATE = {
    AcknowledgeType.GAP: RecordState.ARCHIVED,
    AcknowledgeType.ACCEPT: RecordState.ACKNOWLEDGED,
    AcknowledgeType.RELEASE: RecordState.AVAILABLE,
    AcknowledgeType.REJECT: RecordState.ARCHIVED,
}


class ShareAcquireMode(enum.IntEnum):
    """ShareFetch v2's ``ShareAcquireMode`` (KIP-1206)."""

    BATCH_OPTIMIZED = 0
    RECORD_LIMIT = 1


class PartitionState(enum.Enum):
    """Kafka's ``SharePartitionState``."""

    EMPTY = "EMPTY"
    INITIALIZING = "INITIALIZING"
    ACTIVE = "ACTIVE"
    FAILED = "FAILED"
    FENCED = "FENCED"


class _Ops(enum.Enum):
    """What a state change does to the delivery count (``DeliveryCountOps``)."""

    INCREASE = 1
    DECREASE = -1
    NO_OP = 0


class FetchedBatch(NamedTuple):
    """A batch read from the log, as far as acquisition cares: its offsets and, for
    read_committed, its producer and whether it is transactional, a control batch, an
    ABORT marker."""

    base_offset: int
    last_offset: int
    producer_id: int = -1
    transactional: bool = False
    control: bool = False
    abort_marker: bool = False


class AcquiredRecords(NamedTuple):
    """ShareFetch's ``AcquiredRecords``."""

    first_offset: int
    last_offset: int
    delivery_count: int


class AcknowledgementBatch(NamedTuple):
    """One ``AcknowledgementBatch``: a type per offset of ``first..last``, or one type
    for them all."""

    first_offset: int
    last_offset: int
    acknowledge_types: tuple[int, ...]


class LockHandle(Protocol):
    def cancel(self) -> None: ...

    @property
    def expiration_ms(self) -> float: ...


class LockTimer(Protocol):
    """Runs acquisition-lock timeouts: ``schedule(delay_ms, fn)`` calls ``fn()`` on the
    event loop after ``delay_ms`` unless cancelled; ``now_ms()`` is its clock."""

    def schedule(self, delay_ms: float, fn: Callable[[], None]) -> LockHandle: ...

    def now_ms(self) -> float: ...


class LoopTimer:
    """:class:`LockTimer` on the running event loop (monotonic clock)."""

    class _Handle:
        __slots__ = ("_timer", "expiration_ms")

        def __init__(self, timer: asyncio.TimerHandle, expiration_ms: float) -> None:
            self._timer = timer
            self.expiration_ms = expiration_ms

        def cancel(self) -> None:
            self._timer.cancel()

    def schedule(self, delay_ms: float, fn: Callable[[], None]) -> LockHandle:
        loop = asyncio.get_running_loop()
        delay = max(0.0, delay_ms) / 1000
        return LoopTimer._Handle(loop.call_later(delay, fn), self.now_ms() + delay * 1000)

    def now_ms(self) -> float:
        return time.monotonic() * 1000


class StateWriter(Protocol):
    """Writes a share partition's state changes to the share coordinator
    (WriteShareGroupState through the persister); raises :class:`ShareError`."""

    def __call__(
        self,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: list[StateBatch],
    ) -> Awaitable[None]: ...


@dataclass
class ReadState:
    """What ReadShareGroupState answered (the persister's ``PartitionAllData``)."""

    state_epoch: int
    start_offset: int
    batches: list[StateBatch]


# --- in-flight state --------------------------------------------------------------------


class _Lock:
    """An acquisition lock: the records ``first..last`` of ``member`` return when it
    expires (``AcquisitionLockTimerTask``)."""

    __slots__ = ("cancelled", "first", "handle", "last", "member")

    def __init__(self, member: str, first: int, last: int) -> None:
        self.member = member
        self.first = first
        self.last = last
        self.cancelled = False
        self.handle: LockHandle | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()


class InFlightState:
    """The state of a batch or an offset (``InFlightState``): its record state, delivery
    count and member, its lock, and the state to restore if a change in progress (an
    *ongoing transition*, waiting for its write) fails."""

    __slots__ = ("count", "lock", "member", "rollback", "state", "terminal")

    def __init__(
        self, state: RecordState, count: int, member: str, lock: _Lock | None = None
    ) -> None:
        self.state = state
        self.count = count
        self.member = member
        self.lock = lock
        self.rollback: tuple[RecordState, int, str] | None = None
        self.terminal = False  # archived for good (log start offset moved, aborted txn)

    def __repr__(self) -> str:
        return f"InFlightState({self.state.name}, count={self.count}, member={self.member!r})"

    @property
    def in_transition(self) -> bool:
        return self.rollback is not None

    def try_update(
        self, new: RecordState, ops: _Ops, max_count: int, member: str
    ) -> RecordState | None:
        """``tryUpdateState``: the move to ``new`` if allowed (AVAILABLE at the delivery
        limit becomes ARCHIVED): the state reached, or None (nothing changed) for a
        forbidden move or one during a transition."""
        if self.in_transition:
            return None
        if new == RecordState.AVAILABLE and ops != _Ops.DECREASE and self.count >= max_count:
            new = RecordState.ARCHIVED
        current = self.state
        if current == new or current.is_terminal:
            return None
        if current == RecordState.AVAILABLE and new != RecordState.ACQUIRED:
            return None
        self.state = new
        if new != RecordState.ARCHIVED:
            self.count += ops.value
        self.member = member
        return new

    def acquire(self, max_count: int, member: str) -> bool:
        """AVAILABLE -> ACQUIRED by ``member``, one more delivery; False if the record
        could not be acquired (at the delivery limit it is archived instead)."""
        reached = self.try_update(RecordState.ACQUIRED, _Ops.INCREASE, max_count, member)
        return reached is RecordState.ACQUIRED

    def start_transition(self, new: RecordState, ops: _Ops, max_count: int, member: str) -> bool:
        saved = (self.state, self.count, self.member)
        if self.try_update(new, ops, max_count, member) is not None:
            self.rollback = saved
            return True
        return False

    def complete_transition(self, commit: bool, now_ms: float) -> None:
        """``completeStateTransition``: keep the new state (and drop the lock), or
        restore the old one (AVAILABLE if its lock expired meanwhile)."""
        saved = self.rollback
        if commit or self.terminal or saved is None:
            self.cancel_lock()
            self.rollback = None
            return
        if (
            self.lock is not None
            and self.lock.handle is not None
            and (now_ms >= self.lock.handle.expiration_ms)
        ):
            self.state = RecordState.AVAILABLE
            self.member = EMPTY_MEMBER_ID
            self.cancel_lock()
        else:
            self.state, _, self.member = saved
        self.count = saved[1]
        self.rollback = None

    def archive(self) -> None:
        self.terminal = True
        self.state = RecordState.ARCHIVED
        self.member = EMPTY_MEMBER_ID
        self.cancel_lock()

    def cancel_lock(self) -> None:
        if self.lock is not None:
            self.lock.cancel()
            self.lock = None


class InFlightBatch:
    """Fetched offsets ``first..last`` with one state (``batch``) or, once they differ,
    one per offset (``offsets``, ascending)."""

    __slots__ = ("batch", "first", "last", "offsets")

    def __init__(self, first: int, last: int, state: InFlightState) -> None:
        self.first = first
        self.last = last
        self.batch: InFlightState | None = state
        self.offsets: dict[int, InFlightState] | None = None

    def __repr__(self) -> str:
        inner = self.batch if self.offsets is None else f"{len(self.offsets)} offsets"
        return f"InFlightBatch({self.first}-{self.last}, {inner})"

    def whole(self) -> InFlightState:
        if self.batch is None:
            raise RuntimeError("the batch state is kept per offset")
        return self.batch

    def states(self) -> Iterator[tuple[int, int, InFlightState]]:
        """``(first, last, state)`` of each part with its own state."""
        if self.offsets is None:
            yield self.first, self.last, self.whole()
        else:
            for offset, state in self.offsets.items():
                yield offset, offset, state


@dataclass
class _PersisterBatch:
    """A state change waiting for its write: the state it changed and the batch written."""

    state: InFlightState
    batch: StateBatch


class _Cache:
    """``cachedState``: the in-flight batches by first offset (a sorted map)."""

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.batches: dict[int, InFlightBatch] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def put(self, batch: InFlightBatch) -> None:
        if batch.first not in self.batches:
            bisect.insort(self.keys, batch.first)
        self.batches[batch.first] = batch

    def floor(self, offset: int) -> InFlightBatch | None:
        i = bisect.bisect_right(self.keys, offset)
        return self.batches[self.keys[i - 1]] if i else None

    def first(self) -> InFlightBatch:
        return self.batches[self.keys[0]]

    def last(self) -> InFlightBatch:
        return self.batches[self.keys[-1]]

    def sub(self, lo: int, hi: int) -> list[InFlightBatch]:
        """The batches whose first offset is in ``lo..hi`` (inclusive)."""
        i = bisect.bisect_left(self.keys, lo)
        j = bisect.bisect_right(self.keys, hi)
        return [self.batches[k] for k in self.keys[i:j]]

    def sub_below(self, lo: int, hi: int) -> list[InFlightBatch]:
        """The batches whose first offset is in ``lo..hi`` (``hi`` excluded)."""
        i = bisect.bisect_left(self.keys, lo)
        j = bisect.bisect_left(self.keys, hi)
        return [self.batches[k] for k in self.keys[i:j]]

    def higher_key(self, offset: int) -> int | None:
        i = bisect.bisect_right(self.keys, offset)
        return self.keys[i] if i < len(self.keys) else None

    def lower_key(self, offset: int) -> int | None:
        i = bisect.bisect_left(self.keys, offset)
        return self.keys[i - 1] if i else None

    def remove_through(self, first_key: int, last_key: int) -> None:
        i = bisect.bisect_left(self.keys, first_key)
        j = bisect.bisect_right(self.keys, last_key)
        for k in self.keys[i:j]:
            del self.batches[k]
        del self.keys[i:j]

    def clear(self) -> None:
        self.keys.clear()
        self.batches.clear()

    def __iter__(self) -> Iterator[InFlightBatch]:
        return (self.batches[k] for k in list(self.keys))


# --- the share partition ----------------------------------------------------------------


class SharePartition:
    """See the module documentation. Collaborators: ``write_state`` (the persister's
    write for this share partition), ``timer`` (acquisition locks), ``lock_duration_ms``,
    ``max_delivery_count`` and ``max_in_flight`` (the group's configs, read when used),
    ``on_released`` (records became available or the SPSO moved: delayed share fetches
    may complete) and ``key_ordering`` (the kafkacore extension)."""

    def __init__(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        topic: str,
        partition: int,
        leader_epoch: int,
        *,
        write_state: StateWriter,
        timer: LockTimer,
        lock_duration_ms: Callable[[], int],
        max_delivery_count: int,
        max_in_flight: int,
        on_released: Callable[[], None] = lambda: None,
        key_ordering: bool = False,
    ) -> None:
        self.group_id = group_id
        self.topic_id = topic_id
        self.topic = topic
        self.partition = partition
        self.leader_epoch = leader_epoch
        self._write_state = write_state
        self._timer = timer
        self._lock_duration_ms = lock_duration_ms
        self.max_delivery_count = max_delivery_count
        self.max_in_flight = max_in_flight
        self._throttle_limit = max(_MINIMUM_THROTTLE_LIMIT, -(-max_delivery_count // 2))
        self._on_released = on_released
        self.keys: KeyIndex | None = KeyIndex() if key_ordering else None
        self.cache = _Cache()
        self.state = PartitionState.EMPTY
        self.start_offset = 0
        self.end_offset = 0
        self.state_epoch = 0
        self.delivery_complete_count = 0
        self._find_next = False
        self._gap_window: list[int] | None = None  # [end offset, gap start offset]
        self.fetch_lock: object | None = None
        self._initializing: asyncio.Future[None] | None = None
        self._pending_writes: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return (
            f"SharePartition({self.group_id}, {self.topic}-{self.partition}, "
            f"start={self.start_offset}, end={self.end_offset})"
        )

    # -- initialization ------------------------------------------------------------------

    async def maybe_initialize(
        self,
        read_state: Callable[[], Awaitable[ReadState]],
        reset_offset: Callable[[], Awaitable[int]],
    ) -> None:
        """``maybeInitialize``: the first caller reads the durable state (and, for a
        share partition without one, the start offset ``share.auto.offset.reset``
        chooses); concurrent callers wait for it. Raises :class:`ShareError`:
        LEADER_NOT_AVAILABLE while fenced, UNKNOWN_SERVER_ERROR after a failed load, or
        the persister's error."""
        if self.state == PartitionState.ACTIVE:
            return
        if self.state == PartitionState.FAILED:
            raise ShareError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Share partition failed to load {self.group_id}-{self.topic_id}:{self.topic}"
                f"-{self.partition}",
            )
        if self.state == PartitionState.FENCED:
            raise ShareError(
                ErrorCode.LEADER_NOT_AVAILABLE,
                f"Share partition is fenced {self.group_id}-{self.topic}-{self.partition}",
            )
        if self._initializing is not None:
            await asyncio.shield(self._initializing)
            return
        self.state = PartitionState.INITIALIZING
        self._initializing = asyncio.get_running_loop().create_future()
        try:
            read = await read_state()
            start = read.start_offset
            if start == UNINITIALIZED_START_OFFSET:
                start = await reset_offset()
            self._apply_read_state(start, read)
        except BaseException as exc:
            self.state = PartitionState.FAILED
            self._initializing.set_exception(exc)
            self._initializing.exception()  # retrieved: the waiters re-raise it
            raise
        self.state = PartitionState.ACTIVE
        self._initializing.set_result(None)

    def _apply_read_state(self, start: int, read: ReadState) -> None:
        self.start_offset = start
        self.state_epoch = read.state_epoch
        gap_start = -1
        previous_last = start - 1
        for b in read.batches:
            if b.first_offset < start:
                raise ShareError(
                    ErrorCode.UNKNOWN_SERVER_ERROR,
                    f"Failed to initialize the share partition {self.group_id}-{self.topic}",
                )
            if gap_start == -1 and b.first_offset > previous_last + 1:
                gap_start = previous_last + 1
            previous_last = b.last_offset
            state = RecordState(b.delivery_state)
            self.cache.put(
                InFlightBatch(
                    b.first_offset,
                    b.last_offset,
                    InFlightState(state, b.delivery_count, EMPTY_MEMBER_ID),
                )
            )
            if state.is_terminal:
                self.delivery_complete_count += b.last_offset - b.first_offset + 1
        if self.cache:
            self._find_next = True
            self.end_offset = self.cache.last().last
            if gap_start != -1:
                self._gap_window = [self.end_offset, gap_start]
            self._maybe_update_cached_state_and_offsets()
        else:
            self.end_offset = start

    def mark_fenced(self) -> None:
        self.state = PartitionState.FENCED

    def cancel_locks(self) -> None:
        """The partition is no longer ours: no lock may fire any more."""
        for batch in self.cache:
            for _, _, state in batch.states():
                state.cancel_lock()

    @property
    def active(self) -> bool:
        return self.state == PartitionState.ACTIVE

    # -- the fetch offset ----------------------------------------------------------------

    def _gap_window_active(self) -> bool:
        return self._gap_window is not None and self._gap_window[0] == self.end_offset

    def next_fetch_offset(self) -> int:
        """``nextFetchOffset``: the first AVAILABLE offset when some were released (or
        loaded), else the offset after the end. Under key ordering: the first AVAILABLE
        offset heading its key."""
        empty_or_behind = not self.cache or self.start_offset > self.cache.last().last
        if not self._find_next:
            return self.end_offset if empty_or_behind else self.end_offset + 1
        if empty_or_behind:
            self._find_next = False
            return self.end_offset
        gap_start = self._gap_window[1] if self._gap_window_active() else -1  # type: ignore[index]
        for batch in self.cache:
            if self._gap_window_active():
                if batch.first > gap_start:
                    return gap_start
                gap_start = max(batch.last + 1, gap_start)
            for first, _, state in batch.states():
                available = state.state == RecordState.AVAILABLE and not state.in_transition
                if available and (self.keys is None or self.keys.is_head(first)):
                    return first
        self._find_next = False
        return self.end_offset + 1

    def num_in_flight(self) -> int:
        return self.end_offset - self.start_offset + 1 if self.cache else 0

    def can_acquire_records(self) -> bool:
        """``canAcquireRecords``: records were released, or the window has room."""
        if self.next_fetch_offset() != self.end_offset + 1:
            return True
        return self.num_in_flight() < self.max_in_flight

    def try_fetch_lock(self, owner: object) -> bool:
        """``maybeAcquireFetchLock``: one share fetch reads and acquires at a time."""
        if not self.active or self.fetch_lock is not None:
            return False
        self.fetch_lock = owner
        return True

    def release_fetch_lock(self, owner: object) -> None:
        if self.fetch_lock is owner:
            self.fetch_lock = None

    # -- acquisition ---------------------------------------------------------------------

    def acquire(
        self,
        member_id: str,
        mode: ShareAcquireMode,
        batch_size: int,
        max_fetch_records: int,
        fetch_offset: int,
        batches: Sequence[FetchedBatch],
        *,
        aborted: Sequence[tuple[int, int]] = (),
        read_committed: bool = False,
        keys: Mapping[int, bytes | None] | None = None,
    ) -> tuple[list[AcquiredRecords], int]:
        """``acquire``: the records of ``batches`` (read from ``fetch_offset``) that
        ``member_id`` now holds, and their count. ``aborted``: ``(producer id, first
        offset)`` of the aborted transactions the read overlaps (read_committed archives
        their batches). ``keys``: each data record's key, for key ordering."""
        if not self.active or max_fetch_records <= 0 or not batches:
            return [], 0
        last_fetched = batches[-1].last_offset
        if last_fetched < self.start_offset:
            return [], 0
        max_records, last_to_acquire = self._limits(fetch_offset, max_fetch_records, last_fetched)
        if max_records <= 0:
            return [], 0
        if self.keys is not None:
            return self._acquire_key_ordered(
                member_id,
                max_records,
                fetch_offset,
                batches,
                last_to_acquire,
                keys or {},
                aborted if read_committed else (),
            )
        record_limit = mode == ShareAcquireMode.RECORD_LIMIT
        first_base = batches[0].base_offset
        base = first_base
        self._archive_stale(fetch_offset, base)
        floor = self.cache.floor(base)
        if floor is None:
            if base < self.start_offset:
                base = self.start_offset
        elif floor.last >= base:
            base = floor.first
        sub = self.cache.sub(min(first_base, base), last_to_acquire)
        if not sub:
            acquired, count = self._acquire_new(
                member_id,
                batches,
                record_limit,
                base,
                last_to_acquire,
                batch_size,
                max_records,
            )
            return self._filter_aborted(batches, aborted, read_committed, acquired, count)
        result: list[AcquiredRecords] = []
        count = 0
        gap_start = base
        for batch in sub:
            if count >= max_records:
                break
            if self._gap_window_active():
                if gap_start < batch.first:
                    acquired, n = self._acquire_new(
                        member_id,
                        batches,
                        record_limit,
                        gap_start,
                        batch.first - 1,
                        batch_size,
                        max_records - count,
                    )
                    result += acquired
                    count += n
                gap_start = batch.last + 1
                if count >= max_records:
                    break
            full = batch.first >= first_base and batch.last <= last_to_acquire
            remaining = max_records - count
            subset_limit = record_limit and (batch.last - batch.first + 1) > remaining
            throttle = self._should_throttle(batch, first_base, last_to_acquire)
            if throttle and count > 0:
                max_records = 0
                break
            if not full or batch.offsets is not None or subset_limit or throttle:
                if batch.offsets is None:
                    whole = batch.whole()
                    if whole.state != RecordState.AVAILABLE or whole.in_transition:
                        continue
                    self._explode(batch)
                n = self._acquire_subset(
                    member_id,
                    record_limit,
                    remaining,
                    first_base,
                    last_to_acquire,
                    batch,
                    result,
                )
                count += n
                if throttle and n > 0:
                    max_records = 0
                    break
                continue
            whole = batch.whole()
            if whole.state != RecordState.AVAILABLE or whole.in_transition:
                continue
            if not whole.acquire(self.max_delivery_count, member_id):
                continue
            whole.lock = self._schedule_lock(member_id, batch.first, batch.last)
            result.append(AcquiredRecords(batch.first, batch.last, whole.count))
            count += batch.last - batch.first + 1
        if count < max_records and sub[-1].last < last_to_acquire:
            acquired, n = self._acquire_new(
                member_id,
                batches,
                record_limit,
                sub[-1].last + 1,
                last_to_acquire,
                batch_size,
                max_records - count,
            )
            result += acquired
            count += n
        if result:
            self._maybe_shrink_gap_window(result[-1].last_offset + 1)
            return self._filter_aborted(batches, aborted, read_committed, result, count)
        return result, count

    def _limits(self, fetch_offset: int, max_fetch: int, last_offset: int) -> tuple[int, int]:
        """``lastOffsetAndMaxRecordsToAcquire``: what the in-flight limit allows."""
        in_flight = self.num_in_flight()
        max_records = min(max_fetch, self.max_in_flight - in_flight)
        last = last_offset
        if max_records <= 0 and fetch_offset <= self.end_offset:
            # a fetch between the in-flight batches (some were released) at the limit
            max_records = min(max_fetch, self.end_offset - fetch_offset + 1)
            last = min(last_offset, self.end_offset)
        return max_records, last

    def _acquire_new(
        self,
        member_id: str,
        batches: Sequence[FetchedBatch],
        record_limit: bool,
        first: int,
        last: int,
        batch_size: int,
        max_fetch: int,
    ) -> tuple[list[AcquiredRecords], int]:
        """``acquireNewBatchRecords``: records past the cache (or in a gap of it)."""
        first_acquired = first
        if not self.cache and self.end_offset > first_acquired:
            first_acquired = self.end_offset
        last_acquired = last
        if max_fetch < last_acquired - first_acquired + 1:
            # to the end of the batch holding the last record allowed (whole batches)
            last_acquired = _last_of_batch_with(batches, first_acquired + max_fetch - 1)
            if self._gap_window_active() and last_acquired > last:
                last_acquired = last
        acquired = self._create_batches(
            member_id, batches, record_limit, max_fetch, first_acquired, last_acquired, batch_size
        )
        if self.cache.first().first == first_acquired:
            self.start_offset = first_acquired
        if last_acquired > self.end_offset:
            self.end_offset = last_acquired
        if record_limit:
            last_acquired = acquired[0].last_offset
        self._maybe_shrink_gap_window(last_acquired + 1)
        return acquired, last_acquired - first_acquired + 1

    def _create_batches(
        self,
        member_id: str,
        batches: Sequence[FetchedBatch],
        record_limit: bool,
        max_fetch: int,
        first: int,
        last: int,
        batch_size: int,
    ) -> list[AcquiredRecords]:
        """``createBatches``: ``first..last`` as acquired batches of about ``batch_size``
        records, split at log batch boundaries (batch_optimized); one batch, acquired up
        to ``max_fetch`` records and AVAILABLE beyond (record_limit)."""
        result: list[AcquiredRecords] = []
        current = first
        if not record_limit and last - first + 1 > batch_size:
            for b in batches:
                if b.base_offset > last:
                    break
                if b.base_offset - current >= batch_size:
                    result.append(AcquiredRecords(current, b.base_offset - 1, 1))
                    current = b.base_offset
        result.append(AcquiredRecords(current, last, 1))
        if record_limit:
            acq = result[0]
            if acq.last_offset - acq.first_offset + 1 > max_fetch:
                batch = InFlightBatch(
                    acq.first_offset,
                    acq.last_offset,
                    InFlightState(RecordState.ACQUIRED, 1, member_id),
                )
                cut = acq.first_offset + max_fetch - 1
                self._explode(batch, target=cut)
                self._find_next = True
                self.cache.put(batch)
                return [acq._replace(last_offset=cut)]
        for acq in result:
            lock = self._schedule_lock(member_id, acq.first_offset, acq.last_offset)
            self.cache.put(
                InFlightBatch(
                    acq.first_offset,
                    acq.last_offset,
                    InFlightState(RecordState.ACQUIRED, 1, member_id, lock),
                )
            )
        return result

    def _acquire_subset(
        self,
        member_id: str,
        record_limit: bool,
        max_fetch: int,
        first: int,
        last: int,
        batch: InFlightBatch,
        result: list[AcquiredRecords],
    ) -> int:
        """``acquireSubsetBatchRecords``: the AVAILABLE offsets of a per-offset batch, one
        by one (a record on its last delivery alone; fewer at a time once deliveries
        failed)."""
        assert batch.offsets is not None
        count = 0
        throttled_max = -1
        for offset, state in batch.offsets.items():
            if offset < first:
                continue
            if offset > last:
                break
            if state.state != RecordState.AVAILABLE or state.in_transition:
                continue
            if (
                self.max_delivery_count > 2
                and state.count == self.max_delivery_count - 1
                and count > 0
            ):
                break
            if state.count >= self._throttle_limit and throttled_max < 0:
                throttled_max = max(
                    1, len(batch.offsets) >> (state.count - self._throttle_limit + 1)
                )
            if not state.acquire(self.max_delivery_count, member_id):
                continue
            state.lock = self._schedule_lock(member_id, offset, offset)
            previous = result[-1] if result else None
            if (
                previous is not None
                and previous.last_offset == offset - 1
                and (previous.delivery_count == state.count)
            ):
                result[-1] = previous._replace(last_offset=offset)  # contiguous: one range
            else:
                result.append(AcquiredRecords(offset, offset, state.count))
            count += 1
            if state.count == self.max_delivery_count and self.max_delivery_count > 2:
                break
            if record_limit and count == max_fetch:
                break
            if throttled_max > 0 and count == throttled_max:
                break
        return count

    def _should_throttle(self, batch: InFlightBatch, first: int, last: int) -> bool:
        """``shouldThrottleRecordsDelivery``: a batch whose deliveries failed at least
        half the delivery limit is delivered in parts."""
        if batch.offsets is None:
            return batch.whole().count >= self._throttle_limit
        counts = [
            s.count
            for o, s in batch.offsets.items()
            if first <= o <= last and s.state == RecordState.AVAILABLE
        ]
        return max(counts, default=0) >= self._throttle_limit

    def _explode(self, batch: InFlightBatch, target: int | None = None) -> None:
        """``maybeInitializeOffsetStateUpdate``: keep ``batch``'s state per offset (each
        with its own lock for the time the batch's lock had left). With ``target``:
        offsets after it become AVAILABLE, not yet delivered (record_limit)."""
        if batch.offsets is not None:
            return
        whole = batch.whole()
        offsets: dict[int, InFlightState] = {}
        now = self._timer.now_ms()
        for offset in range(batch.first, batch.last + 1):
            if target is not None:
                if offset <= target:
                    timed = self._schedule_lock(
                        whole.member, offset, offset, self._lock_duration_ms()
                    )
                    offsets[offset] = InFlightState(whole.state, whole.count, whole.member, timed)
                else:
                    offsets[offset] = InFlightState(
                        RecordState.AVAILABLE, whole.count - 1, EMPTY_MEMBER_ID
                    )
                continue
            lock: _Lock | None = None
            if whole.lock is not None and whole.lock.handle is not None:
                remaining = whole.lock.handle.expiration_ms - now
                lock = self._schedule_lock(whole.member, offset, offset, remaining)
            offsets[offset] = InFlightState(whole.state, whole.count, whole.member, lock)
        whole.cancel_lock()
        batch.offsets = offsets
        batch.batch = None

    # -- key ordering (kafkacore) ----------------------------------------------------------

    def _acquire_key_ordered(
        self,
        member_id: str,
        max_records: int,
        fetch_offset: int,
        batches: Sequence[FetchedBatch],
        last_to_acquire: int,
        keys: Mapping[int, bytes | None],
        aborted: Sequence[tuple[int, int]],
    ) -> tuple[list[AcquiredRecords], int]:
        """Acquisition one record at a time under key ordering: the records of the read
        enter the key index (:meth:`_index_read`); then every AVAILABLE record from
        ``fetch_offset`` that heads its key is acquired, up to ``max_records``."""
        assert self.keys is not None
        self._index_read(batches, last_to_acquire, keys, aborted)
        result: list[AcquiredRecords] = []
        count = 0
        for batch in self._sub_for(min(fetch_offset, self.cache.keys[0]), last_to_acquire):
            if count >= max_records:
                break
            if batch.last < fetch_offset:
                continue
            if batch.offsets is None:
                whole = batch.whole()
                if whole.state != RecordState.AVAILABLE or whole.in_transition:
                    continue
                self._explode(batch)
            assert batch.offsets is not None
            for offset, state in batch.offsets.items():
                if offset < fetch_offset:
                    continue
                if offset > last_to_acquire or count >= max_records:
                    break
                if state.state != RecordState.AVAILABLE or state.in_transition:
                    continue
                if not self.keys.is_head(offset):
                    continue
                if not state.acquire(self.max_delivery_count, member_id):
                    continue
                state.lock = self._schedule_lock(member_id, offset, offset)
                count += 1
                if (
                    result
                    and result[-1].last_offset == offset - 1
                    and result[-1].delivery_count == state.count
                ):
                    result[-1] = result[-1]._replace(last_offset=offset)
                else:
                    result.append(AcquiredRecords(offset, offset, state.count))
        self._maybe_update_cached_state_and_offsets()
        return result, count

    def _index_read(
        self,
        batches: Sequence[FetchedBatch],
        last_to_acquire: int,
        keys: Mapping[int, bytes | None],
        aborted: Sequence[tuple[int, int]],
    ) -> None:
        """Key ordering: every record of the read not yet in the window (past its end, up
        to the in-flight limit, or in a gap of it, as after a load) enters it AVAILABLE;
        the keys of the read's non-terminal data records are indexed (records loaded from
        the share coordinator too, whose keys only a read tells). Offsets holding no data
        record (control records, compacted gaps) are archived at once, as the clients
        would acknowledge them as gaps."""
        assert self.keys is not None
        data: set[int] = set()
        for b in batches:
            if not b.control:
                data.update(range(b.base_offset, b.last_offset + 1))
        if self.cache:
            lo = max(self.start_offset, batches[0].base_offset)
            hi = min(self.end_offset, batches[-1].last_offset)
            expected = lo
            for batch in self._sub_for(lo, hi):
                if batch.first > expected:  # a gap of the window
                    self._enter_window(expected, min(batch.first - 1, hi), data, keys)
                    self._archive_aborted_new(batches, aborted, expected, batch.first - 1)
                for first, last, state in batch.states():
                    if state.state.is_terminal:
                        continue
                    for offset in range(max(first, lo), min(last, hi) + 1):
                        if offset in data and not self.keys.knows(offset):
                            self.keys.add(offset, keys.get(offset))
                expected = max(expected, batch.last + 1)
            if expected <= hi:
                self._enter_window(expected, hi, data, keys)
                self._archive_aborted_new(batches, aborted, expected, hi)
            if hi >= lo:
                self._maybe_shrink_gap_window(hi + 1)
        was_empty = not self.cache
        first_new = self.end_offset + 1 if self.cache else self.end_offset
        if was_empty and batches[0].base_offset > first_new:
            first_new = batches[0].base_offset
        last_new = min(last_to_acquire, first_new + self.max_in_flight - self.num_in_flight() - 1)
        if last_new >= first_new:
            self._enter_window(first_new, last_new, data, keys)
            if was_empty:
                self.start_offset = first_new
            self.end_offset = max(self.end_offset, last_new)
            self._archive_aborted_new(batches, aborted, first_new, last_new)
        self._find_next = True

    def _enter_window(
        self, first: int, last: int, data: set[int], keys: Mapping[int, bytes | None]
    ) -> None:
        """Offsets ``first..last`` enter the window AVAILABLE, one state each."""
        assert self.keys is not None
        batch = InFlightBatch(first, last, InFlightState(RecordState.AVAILABLE, 0, EMPTY_MEMBER_ID))
        self._explode(batch)
        assert batch.offsets is not None
        self.cache.put(batch)
        for offset, state in batch.offsets.items():
            if offset in data:
                self.keys.add(offset, keys.get(offset))
            else:
                state.archive()
                self.delivery_complete_count += 1

    def _archive_aborted_new(
        self,
        batches: Sequence[FetchedBatch],
        aborted: Sequence[tuple[int, int]],
        first: int,
        last: int,
    ) -> None:
        """Key ordering under read_committed: the new records of aborted transactions are
        archived before anyone acquires them."""
        for b in _aborted_batches(batches, aborted):
            for batch in self._sub_for(b.base_offset, b.last_offset):
                for offset, _, state in batch.states():
                    if not (b.base_offset <= offset <= b.last_offset and first <= offset <= last):
                        continue
                    if state.state == RecordState.AVAILABLE:
                        state.archive()
                        self.delivery_complete_count += 1
                        self._terminal(offset)

    def _terminal(self, offset: int) -> None:
        if self.keys is not None:
            self.keys.done(offset)
            self._find_next = True  # its key's next record became acquirable

    # -- read_committed --------------------------------------------------------------------

    def _filter_aborted(
        self,
        batches: Sequence[FetchedBatch],
        aborted: Sequence[tuple[int, int]],
        read_committed: bool,
        acquired: list[AcquiredRecords],
        count: int,
    ) -> tuple[list[AcquiredRecords], int]:
        """``maybeFilterAbortedTransactionalAcquiredRecords``: under read_committed the
        acquired records of aborted transactions are archived and not delivered."""
        if not read_committed or not aborted:
            return acquired, count
        to_archive = _aborted_batches(batches, aborted)
        for b in to_archive:
            sub = self._sub_for(b.base_offset, b.last_offset)
            self._archive_records(b.base_offset, b.last_offset + 1, sub, RecordState.ACQUIRED, True)
        result = _without(acquired, to_archive)
        return result, sum(a.last_offset - a.first_offset + 1 for a in result)

    def _sub_for(self, first: int, last: int) -> list[InFlightBatch]:
        """The cached batches holding any of the offsets ``first..last``."""
        floor = self.cache.floor(first)
        start = floor.first if floor is not None and floor.last >= first else first
        return self.cache.sub(start, last)

    # -- archiving -------------------------------------------------------------------------

    def _archive_stale(self, fetch_offset: int, base_offset: int) -> None:
        """``maybeArchiveStaleBatches``: cached batches between the fetch offset and the
        first batch the log returned are gone (compaction): archive them."""
        if not self.cache or fetch_offset >= base_offset:
            return
        lo = fetch_offset
        floor = self.cache.floor(fetch_offset)
        if floor is not None and floor.last >= fetch_offset:
            lo = floor.first
        sub = self.cache.sub_below(lo, base_offset)
        if sub and self._archive_records(
            fetch_offset, base_offset, sub, RecordState.AVAILABLE, True
        ):
            self._find_next = True

    def _archive_records(
        self,
        start: int,
        end: int,
        batches: Iterable[InFlightBatch],
        initial: RecordState,
        count_complete: bool,
    ) -> bool:
        """``archiveRecords``: the records of ``start..end-1`` in state ``initial``
        become ARCHIVED for good."""
        archived = False
        for batch in batches:
            if batch.first >= end:
                break
            full = batch.first >= start and batch.last <= end - 1
            if not full or batch.offsets is not None:
                if batch.offsets is None:
                    if batch.whole().state != initial:
                        continue
                    self._explode(batch)
                assert batch.offsets is not None
                for offset, state in batch.offsets.items():
                    if offset < start:
                        continue
                    if offset > end - 1:
                        break
                    if state.state != initial:
                        continue
                    state.archive()
                    self._terminal(offset)
                    if count_complete:
                        self.delivery_complete_count += 1
                    archived = True
                continue
            whole = batch.whole()
            if whole.state == initial:
                whole.archive()
                for offset in range(batch.first, batch.last + 1):
                    self._terminal(offset)
                if count_complete:
                    self.delivery_complete_count += batch.last - batch.first + 1
                archived = True
        return archived

    def update_cache_and_offsets(self, log_start_offset: int) -> None:
        """``updateCacheAndOffsets``: the log start offset moved past the SPSO (retention,
        DeleteRecords): the AVAILABLE records before it are archived, the SPSO follows."""
        if log_start_offset <= self.start_offset:
            return
        if not self.cache:
            self.start_offset = self.end_offset = log_start_offset
            self.delivery_complete_count = 0
            return
        removed = self._count_terminal_below(log_start_offset)
        if self._archive_records(
            self.start_offset, log_start_offset, list(self.cache), RecordState.AVAILABLE, False
        ):
            self._find_next = True
        self.start_offset = log_start_offset
        self.delivery_complete_count -= removed
        if self.end_offset < self.start_offset:
            self.end_offset = self.start_offset
        if self.keys is not None:
            self.keys.forget_below(log_start_offset)

    def _count_terminal_below(self, new_start: int) -> int:
        count = 0
        for batch in self.cache.sub_below(self.cache.keys[0], new_start):
            if batch.last < self.start_offset:
                continue
            for first, last, state in batch.states():
                if not state.state.is_terminal:
                    continue
                lo, hi = max(self.start_offset, first), min(new_start - 1, last)
                if lo <= hi:
                    count += hi - lo + 1
        return count

    # -- acknowledgement -------------------------------------------------------------------

    async def acknowledge(self, member_id: str, batches: Sequence[AcknowledgementBatch]) -> None:
        """``acknowledge``: apply ``batches`` for ``member_id``, write the new states to
        the share coordinator, keep them (moving the SPSO) or roll them back. Raises
        :class:`ShareError`: INVALID_REQUEST (an unknown type, offsets past the records
        acquired), INVALID_RECORD_STATE (records not acquired by this member, or in a
        change), or the write's error."""
        pending: list[_PersisterBatch] = []
        error: ShareError | None = None
        for ack in batches:
            try:
                types = _ack_types(ack)
            except ValueError:
                error = ShareError(
                    ErrorCode.INVALID_REQUEST,
                    f"Invalid acknowledge type: {list(ack.acknowledge_types)}",
                )
                break
            if ack.last_offset < self.start_offset:
                continue
            try:
                sub = self._sub_for_ack(ack)
                self._ack_batch(member_id, ack, types, sub, pending)
            except ShareError as exc:
                error = exc
                break
        await self._rollback_or_process(error, pending)

    def _sub_for_ack(self, ack: AcknowledgementBatch) -> list[InFlightBatch]:
        """``fetchSubMapForAcknowledgementBatch``."""
        floor = self.cache.floor(ack.first_offset)
        if floor is None:
            if ack.first_offset < self.start_offset <= ack.last_offset:
                floor = self.cache.floor(self.start_offset)
            if floor is None:
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "Batch record not found. The request batch offsets are not found in the cache.",
                )
        sub = self.cache.sub(floor.first, ack.last_offset)
        if sub[-1].last < ack.first_offset:
            raise ShareError(
                ErrorCode.INVALID_REQUEST,
                "Batch record not found. The first offset in request is past acquired records.",
            )
        if ack.last_offset > sub[-1].last:
            raise ShareError(
                ErrorCode.INVALID_REQUEST,
                "Batch record not found. The last offset in request is past acquired records.",
            )
        return sub

    def _ack_batch(
        self,
        member_id: str,
        ack: AcknowledgementBatch,
        types: dict[int, int] | int,
        sub: list[InFlightBatch],
        pending: list[_PersisterBatch],
    ) -> None:
        """``acknowledgeBatchRecords``."""
        for batch in sub:
            if batch.last < self.start_offset:
                continue
            if batch.offsets is None:
                whole = batch.whole()
                if whole.member == EMPTY_MEMBER_ID:
                    raise ShareError(
                        ErrorCode.INVALID_RECORD_STATE,
                        "The batch cannot be acknowledged. The batch is not in the acquired state.",
                    )
                if whole.member != member_id:
                    raise ShareError(
                        ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of batch record"
                    )
                if whole.in_transition:
                    raise ShareError(
                        ErrorCode.INVALID_RECORD_STATE,
                        "The record state is invalid. The acknowledgement of delivery could "
                        "not be completed.",
                    )
            full = batch.first >= ack.first_offset and batch.last <= ack.last_offset
            per_offset = isinstance(types, dict)
            start_moved = batch.first < self.start_offset <= batch.last
            if not full or batch.offsets is not None or per_offset or start_moved:
                if batch.offsets is None:
                    if batch.whole().state != RecordState.ACQUIRED:
                        raise ShareError(
                            ErrorCode.INVALID_RECORD_STATE,
                            "The batch cannot be acknowledged. The subset batch is not in the "
                            "acquired state.",
                        )
                    self._explode(batch)
                self._ack_offsets(member_id, ack, batch, types, pending)
            else:
                assert isinstance(types, int)
                self._ack_whole(batch, types, pending, member_id)

    def _ack_offsets(
        self,
        member_id: str,
        ack: AcknowledgementBatch,
        batch: InFlightBatch,
        types: dict[int, int] | int,
        pending: list[_PersisterBatch],
    ) -> None:
        assert batch.offsets is not None
        for offset, state in batch.offsets.items():
            if offset < ack.first_offset or offset < self.start_offset:
                continue
            if offset > ack.last_offset:
                break
            if state.state != RecordState.ACQUIRED:
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "The offset cannot be acknowledged. The offset is not acquired.",
                )
            if state.in_transition:
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "The record state is invalid. The acknowledgement of delivery could not be "
                    "completed.",
                )
            if state.member != member_id:
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of offset"
                )
            kind = types[offset] if isinstance(types, dict) else types
            if kind == AcknowledgeType.RENEW:
                state.cancel_lock()
                state.lock = self._schedule_lock(member_id, offset, offset)
                continue
            target = _ACK_TO_STATE[AcknowledgeType(kind)]
            if not state.start_transition(
                target, _Ops.NO_OP, self.max_delivery_count, EMPTY_MEMBER_ID
            ):
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE, "Unable to acknowledge records for the batch"
                )
            pending.append(
                _PersisterBatch(state, StateBatch(offset, offset, state.state, state.count))
            )
            if state.state.is_terminal:
                self.delivery_complete_count += 1

    def _ack_whole(
        self, batch: InFlightBatch, kind: int, pending: list[_PersisterBatch], member_id: str
    ) -> None:
        whole = batch.whole()
        if whole.state != RecordState.ACQUIRED:
            raise ShareError(
                ErrorCode.INVALID_RECORD_STATE,
                "The batch cannot be acknowledged. The batch is not in the acquired state.",
            )
        if kind == AcknowledgeType.RENEW:
            whole.cancel_lock()
            whole.lock = self._schedule_lock(member_id, batch.first, batch.last)
            return
        target = _ACK_TO_STATE[AcknowledgeType(kind)]
        if not whole.start_transition(target, _Ops.NO_OP, self.max_delivery_count, EMPTY_MEMBER_ID):
            raise ShareError(
                ErrorCode.INVALID_RECORD_STATE, "Unable to acknowledge records for the batch"
            )
        pending.append(
            _PersisterBatch(whole, StateBatch(batch.first, batch.last, whole.state, whole.count))
        )
        if whole.state.is_terminal:
            self.delivery_complete_count += batch.last - batch.first + 1

    async def release_acquired_records(self, member_id: str) -> None:
        """``releaseAcquiredRecords``: a member's session ended (or its connection closed):
        its acquired records become AVAILABLE again, their delivery counted (Kafka 4.3.1
        keeps the count), records behind the SPSO archived."""
        pending: list[_PersisterBatch] = []
        error: ShareError | None = None
        for batch in self.cache:
            if (
                batch.offsets is None
                and batch.whole().state == RecordState.ACQUIRED
                and batch.whole().member == member_id
                and batch.first < self.start_offset <= batch.last
            ):
                self._explode(batch)
            if batch.offsets is not None:
                for offset, state in batch.offsets.items():
                    if state.member not in (member_id, EMPTY_MEMBER_ID):
                        continue  # another member's offset: skipped
                    if state.state != RecordState.ACQUIRED:
                        continue
                    target = (
                        RecordState.ARCHIVED
                        if offset < self.start_offset
                        else RecordState.AVAILABLE
                    )
                    if not state.start_transition(
                        target, _Ops.NO_OP, self.max_delivery_count, EMPTY_MEMBER_ID
                    ):
                        error = ShareError(
                            ErrorCode.INVALID_RECORD_STATE,
                            "Unable to release acquired records for the offset",
                        )
                        break
                    pending.append(
                        _PersisterBatch(state, StateBatch(offset, offset, state.state, state.count))
                    )
                    if offset >= self.start_offset and state.state.is_terminal:
                        self.delivery_complete_count += 1
                if error is not None:
                    break
                continue
            whole = batch.whole()
            if whole.member not in (member_id, EMPTY_MEMBER_ID):
                continue
            if whole.state == RecordState.ACQUIRED:
                target = (
                    RecordState.ARCHIVED
                    if batch.last < self.start_offset
                    else RecordState.AVAILABLE
                )
                if not whole.start_transition(
                    target, _Ops.NO_OP, self.max_delivery_count, EMPTY_MEMBER_ID
                ):
                    error = ShareError(
                        ErrorCode.INVALID_RECORD_STATE,
                        "Unable to release acquired records for the batch",
                    )
                    break
                pending.append(
                    _PersisterBatch(
                        whole, StateBatch(batch.first, batch.last, whole.state, whole.count)
                    )
                )
                if whole.state.is_terminal:
                    self.delivery_complete_count += self._in_flight_in(batch.first, batch.last)
        await self._rollback_or_process(error, pending)

    def _release_target(self, last: int) -> RecordState:
        """Where released records go: AVAILABLE, or ARCHIVED once behind the SPSO."""
        return RecordState.ARCHIVED if last < self.start_offset else RecordState.AVAILABLE

    def _in_flight_in(self, first: int, last: int) -> int:
        """``numInFlightRecordsInBatch``: the offsets of ``first..last`` past the SPSO."""
        return last - max(self.start_offset, first) + 1 if last >= self.start_offset else 0

    async def _rollback_or_process(
        self, error: ShareError | None, pending: list[_PersisterBatch]
    ) -> None:
        """``rollbackOrProcessStateUpdates``: undo the changes after an error, else write
        them and keep them once written (moving the SPSO), undo them if the write fails."""
        if error is not None:
            self._undo(pending)
            raise error
        if not pending:
            return
        try:
            await self._write([p.batch for p in pending])
        except ShareError:
            self._undo(pending)
            raise
        now = self._timer.now_ms()
        released = False
        for p in pending:
            p.state.complete_transition(True, now)
            if p.state.state == RecordState.AVAILABLE:
                self._find_next = True
                released = True
            elif p.state.state.is_terminal:
                self._terminal_batch(p.batch)
                released = released or self.keys is not None  # a key's next record
        moved = self._maybe_update_cached_state_and_offsets()
        if moved or released:
            self._on_released()

    def _terminal_batch(self, batch: StateBatch) -> None:
        for offset in range(batch.first_offset, batch.last_offset + 1):
            self._terminal(offset)

    def _undo(self, pending: list[_PersisterBatch]) -> None:
        now = self._timer.now_ms()
        for p in pending:
            p.state.complete_transition(False, now)
            if p.state.state == RecordState.AVAILABLE:
                self._find_next = True
            if RecordState(p.batch.delivery_state).is_terminal and not p.state.state.is_terminal:
                self.delivery_complete_count -= self._in_flight_in(
                    p.batch.first_offset, p.batch.last_offset
                )

    async def _write(self, batches: list[StateBatch]) -> None:
        await self._write_state(
            self.state_epoch,
            self.leader_epoch,
            self.start_offset,
            self.delivery_complete_count,
            batches,
        )

    # -- the start offset ------------------------------------------------------------------

    def _maybe_update_cached_state_and_offsets(self) -> bool:
        """``maybeUpdateCachedStateAndOffsets``: move the SPSO past the terminal records
        at the front, dropping whole batches behind it."""
        if not self._can_move_start_offset():
            return False
        last_acked, terminal_count = self._last_offset_acknowledged()
        if last_acked == -1:
            return False
        last_cached = self.cache.last().last
        if last_acked == last_cached:
            self.start_offset = self.end_offset = last_cached + 1
            self.cache.clear()
            self.delivery_complete_count = 0
            if self.keys is not None:
                self.keys.clear()
            return True
        first_key = self.cache.keys[0]
        floor = self.cache.floor(last_acked)
        assert floor is not None
        last_key: int | None
        if last_acked == floor.last:
            higher = self.cache.higher_key(last_acked)
            assert higher is not None
            if higher > self.start_offset:
                self.start_offset = higher
            if self._gap_window_active():
                assert self._gap_window is not None
                self.start_offset = min(self._gap_window[1], self.start_offset)
            last_key = floor.first
        else:
            if last_acked + 1 > self.start_offset:
                self.start_offset = last_acked + 1
            last_key = None if floor.first == first_key else self.cache.lower_key(floor.first)
        self.delivery_complete_count -= terminal_count
        if last_key is not None:
            self.cache.remove_through(first_key, last_key)
        if self.keys is not None:
            self.keys.forget_below(self.start_offset)
        return True

    def _can_move_start_offset(self) -> bool:
        if not self.cache:
            return False
        floor = self.cache.floor(self.start_offset)
        if floor is None:
            return False  # an acquirable gap at the start (after a load)
        if floor.offsets is None:
            state = floor.whole()
        else:
            found = floor.offsets.get(self.start_offset)
            if found is None:
                return False
            state = found
        return not state.in_transition and state.state.is_terminal

    def _last_offset_acknowledged(self) -> tuple[int, int]:
        """``findLastOffsetAcknowledgedAndMetadata``: the last offset of the run of
        terminal records at the front, and how many of them are past the SPSO."""
        last = -1
        terminal = 0
        for batch in self.cache:
            if self._gap_window_active():
                assert self._gap_window is not None
                if batch.last >= self._gap_window[1]:
                    return last, terminal
            if batch.offsets is None:
                whole = batch.whole()
                if whole.in_transition or not whole.state.is_terminal:
                    return last, terminal
                last = batch.last
                terminal += self._in_flight_in(batch.first, batch.last)
            else:
                for offset, state in batch.offsets.items():
                    if state.in_transition or not state.state.is_terminal:
                        return last, terminal
                    last = offset
                    if offset >= self.start_offset:
                        terminal += 1
        return last, terminal

    def _maybe_shrink_gap_window(self, offset: int) -> None:
        if self._gap_window is None:
            return
        if self._gap_window[0] == self.end_offset and offset <= self._gap_window[0]:
            self._gap_window[1] = offset
        else:
            self._gap_window = None

    # -- acquisition locks -----------------------------------------------------------------

    def _schedule_lock(
        self, member_id: str, first: int, last: int, delay_ms: float | None = None
    ) -> _Lock:
        lock = _Lock(member_id, first, last)
        delay = self._lock_duration_ms() if delay_ms is None else delay_ms
        lock.handle = self._timer.schedule(delay, lambda: self._on_lock_timeout(lock))
        return lock

    def _on_lock_timeout(self, lock: _Lock) -> None:
        """An acquisition lock expired (``releaseAcquisitionLockOnTimeout``): its records
        still ACQUIRED become AVAILABLE (ARCHIVED at the delivery limit, or behind the
        SPSO); the change is written, and kept even if the write fails."""
        if lock.cancelled:
            return
        floor = self.cache.floor(lock.first)
        if floor is None:
            return
        changed: list[StateBatch] = []
        for batch in self.cache.sub(floor.first, lock.last):
            if (
                batch.offsets is None
                and batch.whole().state == RecordState.ACQUIRED
                and batch.first < self.start_offset <= batch.last
            ):
                self._explode(batch)
            for first, last, state in list(batch.states()):
                if batch.offsets is not None and not lock.first <= first <= lock.last:
                    continue
                if state.state != RecordState.ACQUIRED:
                    continue
                target = RecordState.ARCHIVED if last < self.start_offset else RecordState.AVAILABLE
                reached = state.try_update(
                    target, _Ops.NO_OP, self.max_delivery_count, EMPTY_MEMBER_ID
                )
                if reached is None:
                    continue
                changed.append(StateBatch(first, last, reached, state.count))
                state.cancel_lock()
                if reached is RecordState.AVAILABLE:
                    self._find_next = True
                else:
                    self.delivery_complete_count += self._in_flight_in(first, last)
                    for offset in range(first, last + 1):
                        self._terminal(offset)
        if not changed:
            return
        task = asyncio.get_running_loop().create_task(self._write_after_timeout(changed))
        self._pending_writes.add(task)
        task.add_done_callback(self._pending_writes.discard)
        self._on_released()

    async def _write_after_timeout(self, batches: list[StateBatch]) -> None:
        try:
            await self._write(batches)
        except ShareError as exc:
            logger.debug(
                "Failed to write the share group state on acquisition lock timeout for %s: %s",
                self,
                exc,
            )
        if self._maybe_update_cached_state_and_offsets():
            self._on_released()

    # -- reading -----------------------------------------------------------------------

    def in_flight(self) -> list[StateBatch]:
        """The in-flight records as state batches (for describing and the console)."""
        out: list[StateBatch] = []
        for batch in self.cache:
            for first, last, state in batch.states():
                if last < self.start_offset:
                    continue
                out.append(
                    StateBatch(max(first, self.start_offset), last, state.state, state.count)
                )
        return out

    def acquired_by(self) -> dict[str, int]:
        """How many records each member holds now."""
        held: dict[str, int] = {}
        for batch in self.cache:
            for first, last, state in batch.states():
                if state.state == RecordState.ACQUIRED:
                    held[state.member] = held.get(state.member, 0) + last - first + 1
        return held

    async def drain(self) -> None:
        """Wait for the lock-timeout writes under way (shutdown, tests)."""
        if self._pending_writes:
            await asyncio.gather(*list(self._pending_writes), return_exceptions=True)


def _ack_types(ack: AcknowledgementBatch) -> dict[int, int] | int:
    """``fetchAckTypeMapForBatch``: one type for the whole batch, or one per offset;
    ValueError for an unknown type."""
    for t in ack.acknowledge_types:
        if t != AcknowledgeType.GAP and t not in (1, 2, 3, 4):
            raise ValueError(t)
    if len(ack.acknowledge_types) == 1:
        return ack.acknowledge_types[0]
    return {ack.first_offset + i: t for i, t in enumerate(ack.acknowledge_types)}


def _last_of_batch_with(batches: Sequence[FetchedBatch], offset: int) -> int:
    """``lastOffsetFromBatchWithRequestOffset``: the last offset of the batch holding
    ``offset``, else ``offset``."""
    previous: FetchedBatch | None = None
    for b in batches:
        if offset >= b.base_offset:
            previous = b
            continue
        break
    if previous is not None and offset <= previous.last_offset:
        return previous.last_offset
    return offset


def _aborted_batches(
    batches: Sequence[FetchedBatch], aborted: Sequence[tuple[int, int]]
) -> list[FetchedBatch]:
    """``fetchAbortedTransactionRecordBatches``: the transactional batches of aborted
    transactions (an ABORT marker ends a producer's aborted run)."""
    queue = sorted(aborted, key=lambda a: a[1])
    i = 0
    producers: set[int] = set()
    out: list[FetchedBatch] = []
    for b in batches:
        if b.producer_id < 0:
            continue
        while i < len(queue) and queue[i][1] <= b.last_offset:
            producers.add(queue[i][0])
            i += 1
        if b.abort_marker:
            producers.discard(b.producer_id)
        elif b.transactional and b.producer_id in producers:
            out.append(b)
    return out


def _without(acquired: list[AcquiredRecords], removed: list[FetchedBatch]) -> list[AcquiredRecords]:
    """``filterRecordBatchesFromAcquiredRecords``: the acquired ranges minus the offsets
    of ``removed`` (both sorted)."""
    if not removed:
        return acquired
    out: list[AcquiredRecords] = []
    it = iter(removed)
    cut: FetchedBatch | None = next(it, None)
    pending = list(acquired)
    pending.reverse()
    current: AcquiredRecords | None = None
    while current is not None or pending:
        if current is None:
            current = pending.pop()
        if cut is None:
            out.append(current)
            current = None
            continue
        first, last, count = current
        if last < cut.base_offset:
            out.append(current)
            current = None
        if first <= cut.last_offset and last >= cut.base_offset:
            current = None
            if first < cut.base_offset:
                out.append(AcquiredRecords(first, cut.base_offset - 1, count))
            if last > cut.last_offset:
                current = AcquiredRecords(cut.last_offset + 1, last, count)
        if last > cut.last_offset:
            cut = next(it, None)
    return out
