"""The leader's state in its epoch (Kafka's ``LeaderState``) and the batches it is about to
append (Kafka's ``BatchAccumulator``).

The high watermark is the largest offset a majority of the voters has reached: voters
sorted by end offset, descending, the one at index ``len // 2``. A leader never exposes
it before that offset passes the start of its own epoch: only an entry of the current
epoch commits the ones before it (Raft's rule; KIP-595), and the high watermark moves
forward only.

The leader resigns when it has not heard a Fetch or FetchSnapshot from a majority of the
voters for 1.5 x ``fetch.timeout.ms`` ("check quorum"), and sends BeginQuorumEpoch every
``fetch.timeout.ms`` / 2 to the voters that have not fetched for that long.

Not thread-safe (the Raft client's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kafkacore.raft.config import MAX_BATCH_SIZE_BYTES
from kafkacore.raft.messages import InboundRequest, ReplicaDescription
from kafkacore.raft.quorum_state import ElectionState
from kafkacore.raft.records import (
    ControlRecord,
    build_control_batch,
    build_data_batch,
)
from kafkacore.raft.states import EpochState, ReplicaState
from kafkacore.raft.types import Endpoints, ReplicaKey
from kafkacore.raft.voters import VoterNode, VoterSet

__all__ = ["BatchAccumulator", "LeaderState", "PendingVoterChange", "RaftBatchTooLargeError"]

CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
OBSERVER_SESSION_TIMEOUT_MS = 300_000
_RECORD_OVERHEAD = 21  # a record's framing beside its value, at most


def _key_order(key: ReplicaKey) -> tuple[int, str]:
    return key.id, str(key.directory_id or "")


class RaftBatchTooLargeError(ValueError):
    """Records that do not fit in one batch (Kafka's ``RaftBatchTooLargeException``)."""


@dataclass
class _Pending:
    """A batch waiting to be appended: data values, or control records."""

    base_offset: int
    values: list[bytes] = field(default_factory=list)
    control: tuple[ControlRecord, ...] = ()
    timestamp_ms: int = 0
    size: int = 0

    @property
    def count(self) -> int:
        return len(self.control) if self.control else len(self.values)


class BatchAccumulator:
    """Records appended by the leader's owner, grouped into batches that are written once
    ``append.linger.ms`` has passed since the first (or at once when forced). Offsets are
    assigned here, in order, from the log end offset at the start of the epoch; control
    batches close the data batch before them."""

    def __init__(self, epoch: int, base_offset: int, linger_ms: int, max_batch_bytes: int) -> None:
        self.epoch = epoch
        self.next_offset = base_offset
        self._linger_ms = linger_ms
        self._max_batch_bytes = max_batch_bytes
        self._completed: list[_Pending] = []
        self._current: _Pending | None = None
        self._drain_deadline: int | None = None
        self._force = False

    def is_empty(self) -> bool:
        return not self._completed and self._current is None

    def append(self, values: Sequence[bytes], now: int) -> int:
        """Queue ``values`` in one batch; returns the offset of the last one."""
        if not values:
            raise ValueError("Append failed because there are no records")
        size = sum(len(v) + _RECORD_OVERHEAD for v in values)
        if size > self._max_batch_bytes:
            raise RaftBatchTooLargeError(
                f"The total record(s) size of {size} exceeds the maximum allowed batch size "
                f"of {self._max_batch_bytes}"
            )
        current = self._current
        if current is None or current.size + size > self._max_batch_bytes:
            self._complete_current()
            current = self._current = _Pending(self.next_offset, timestamp_ms=now)
        current.values.extend(values)
        current.size += size
        self.next_offset += len(values)
        if self._drain_deadline is None:
            self._drain_deadline = now + self._linger_ms
        return self.next_offset - 1

    def append_control(self, records: Sequence[ControlRecord], now: int) -> int:
        """Queue one control batch (after any data batch being filled); drained at once."""
        self._complete_current()
        self._completed.append(_Pending(self.next_offset, control=tuple(records), timestamp_ms=now))
        self.next_offset += len(records)
        self._force = True
        return self.next_offset - 1

    def _complete_current(self) -> None:
        if self._current is not None:
            self._completed.append(self._current)
            self._current = None

    def time_until_drain(self, now: int) -> int:
        if self._force and (self._completed or self._current is not None):
            return 0
        if self._drain_deadline is None:
            return 1 << 62
        return max(0, self._drain_deadline - now)

    def drain(self) -> list[tuple[int, bytes]]:
        """The batches to append now, as ``(base offset, bytes)``."""
        self._complete_current()
        out = []
        for pending in self._completed:
            if pending.control:
                data = build_control_batch(
                    pending.base_offset, self.epoch, pending.timestamp_ms, pending.control
                )
            else:
                data = build_data_batch(
                    pending.base_offset, self.epoch, pending.timestamp_ms, pending.values
                )
            out.append((pending.base_offset, data))
        self._completed.clear()
        self._drain_deadline = None
        self._force = False
        return out


@dataclass
class PendingVoterChange:
    """The one voter change a leader handles at a time: the AddRaftVoter, RemoveRaftVoter
    or UpdateRaftVoter request to answer (its type says which change), when it gives up,
    the offset whose commit completes it, and for an add the node being added while its
    ApiVersions is awaited."""

    inbound: InboundRequest
    deadline_ms: int
    commit_offset: int | None = None
    new_voter: VoterNode | None = None


class LeaderState(EpochState):
    name = "Leader"

    def __init__(
        self,
        *,
        local: VoterNode,
        epoch: int,
        epoch_start_offset: int,
        voters: VoterSet,
        offset_of_voters: int | None,
        kraft_version: int,
        granting_voters: frozenset[int],
        fetch_timeout_ms: int,
        linger_ms: int,
        now: int,
        max_batch_bytes: int = MAX_BATCH_SIZE_BYTES,
    ) -> None:
        super().__init__(epoch, None)
        self.local = local
        self.epoch_start_offset = epoch_start_offset
        self.voter_set_at_epoch_start = voters
        self.offset_of_voters_at_epoch_start = offset_of_voters
        self.kraft_version_at_epoch_start = kraft_version
        self.granting_voters = granting_voters
        self.voter_states: dict[int, ReplicaState] = {}
        for node in voters.voters.values():
            self.voter_states[node.key.id] = ReplicaState(
                node.key, has_acknowledged_leader=node.is_voter(local.key)
            )
        self.observer_states: dict[ReplicaKey, ReplicaState] = {}
        self.fetched_voters: set[int] = set()
        self.check_quorum_timeout_ms = int(fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR)
        self.check_quorum_deadline = now + self.check_quorum_timeout_ms
        self.begin_quorum_timeout_ms = fetch_timeout_ms // 2
        self.begin_quorum_deadline = now
        self.accumulator = BatchAccumulator(epoch, epoch_start_offset, linger_ms, max_batch_bytes)
        self.resign_requested = False
        self.pending_voter_change: PendingVoterChange | None = None

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.local.key.id, None, frozenset(self.voter_states))

    @property
    def leader_endpoints(self) -> Endpoints:
        return self.local.listeners

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return False

    # -- check quorum, BeginQuorumEpoch ----------------------------------------------------

    def time_until_check_quorum_expires(self, now: int) -> int:
        if len(self.voter_states) == 1:
            return 1 << 62
        return max(0, self.check_quorum_deadline - now)

    def update_check_quorum_for_following_voter(self, key: ReplicaKey, now: int) -> None:
        if key.id == self.local.key.id:
            raise ValueError("Received a FETCH/FETCH_SNAPSHOT request from the leader itself.")
        state = self.voter_states.get(key.id)
        if state is not None and state.key.matches(key):
            self.fetched_voters.add(key.id)
        majority = len(self.voter_states) // 2 + 1
        if self.local.key.id in self.voter_states:
            majority -= 1
        if len(self.fetched_voters) >= majority:
            self.fetched_voters.clear()
            self.check_quorum_deadline = now + self.check_quorum_timeout_ms

    def time_until_begin_quorum_epoch(self, now: int) -> int:
        return max(0, self.begin_quorum_deadline - now)

    def need_to_send_begin_quorum(self, now: int) -> list[ReplicaKey]:
        return [
            state.key
            for voter_id, state in sorted(self.voter_states.items())
            if voter_id != self.local.key.id
            and now - state.last_fetch_ms >= self.begin_quorum_timeout_ms
        ]

    def reset_begin_quorum_timer(self, now: int) -> None:
        self.begin_quorum_deadline = now + self.begin_quorum_timeout_ms

    def add_acknowledgement_from(self, voter_id: int) -> None:
        state = self.voter_states.get(voter_id)
        if state is None:
            raise ValueError(f"Unexpected acknowledgement from non-voter {voter_id}")
        state.has_acknowledged_leader = True

    # -- replication, high watermark -------------------------------------------------------

    def _replica_state(self, key: ReplicaKey) -> ReplicaState:
        state = self.voter_states.get(key.id)
        if state is None or not state.key.matches(key):
            state = self.observer_states.setdefault(key, ReplicaState(key))
        return state

    def replica_state(self, key: ReplicaKey) -> ReplicaState | None:
        state = self.voter_states.get(key.id)
        if state is None or not state.key.matches(key):
            return self.observer_states.get(key)
        return state

    def is_voter(self, key: ReplicaKey) -> bool:
        state = self.voter_states.get(key.id)
        return state is not None and state.key.matches(key)

    def update_local_state(self, end_offset: int, last_voter_set: VoterSet) -> bool:
        """The leader's own log end moved; returns whether the high watermark moved."""
        state = self._replica_state(self.local.key)
        if state.end_offset is not None and state.end_offset > end_offset:
            raise RuntimeError(
                f"Detected non-monotonic update of local end offset: {state.end_offset} -> "
                f"{end_offset}"
            )
        state.end_offset = end_offset
        self._update_voter_and_observer_states(last_voter_set)
        return self._maybe_update_high_watermark()

    def update_replica_state(self, key: ReplicaKey, now: int, fetch_offset: int) -> bool:
        """A replica fetched at ``fetch_offset``; returns whether the high watermark moved."""
        if key.id < 0:
            return False
        if key.id == self.local.key.id:
            raise RuntimeError(f"Remote replica ID {key} matches the local leader ID")
        state = self._replica_state(key)
        leader = self._replica_state(self.local.key)
        state.update_follower(now, fetch_offset, leader.end_offset)
        self.update_check_quorum_for_following_voter(key, now)
        return self.is_voter(state.key) and self._maybe_update_high_watermark()

    def _by_descending_end_offset(self) -> list[ReplicaState]:
        def order(state: ReplicaState) -> tuple[int, int, int, str]:
            known = state.end_offset is not None
            offset = state.end_offset if state.end_offset is not None else 0
            return (0 if known else 1, -offset, *_key_order(state.key))

        return sorted(self.voter_states.values(), key=order)

    def _maybe_update_high_watermark(self) -> bool:
        ordered = self._by_descending_end_offset()
        if not ordered:
            return False
        candidate = ordered[len(self.voter_states) // 2].end_offset
        if candidate is None or candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark is not None and candidate <= self.high_watermark:
            return False
        self.high_watermark = candidate
        return True

    def non_leader_voters_by_descending_fetch_offset(self) -> list[ReplicaKey]:
        return [
            state.key
            for state in self._by_descending_end_offset()
            if not state.key.matches(self.local.key)
        ]

    def _update_voter_and_observer_states(self, voters: VoterSet) -> None:
        """The voter set changed in the log: move replicas between voters and observers."""
        old = dict(self.voter_states)
        new: dict[int, ReplicaState] = {}
        for node in voters.voters.values():
            state = self.replica_state(node.key) or ReplicaState(node.key)
            old.pop(node.key.id, None)
            self.observer_states.pop(node.key, None)
            state.key = node.key
            new[node.key.id] = state
        self.voter_states = new
        for state in old.values():
            self.observer_states.setdefault(state.key, state)

    def is_replica_caught_up(self, key: ReplicaKey, now: int) -> bool:
        """An observer that fetched within the hour and caught up once (AddRaftVoter)."""
        state = self.observer_states.get(key)
        return (
            state is not None
            and state.last_caught_up_ms > 0
            and state.last_fetch_ms > 0
            and state.last_fetch_ms > now - 3_600_000
        )

    def describe(
        self, now: int
    ) -> tuple[tuple[ReplicaDescription, ...], tuple[ReplicaDescription, ...]]:
        """DescribeQuorum's voters and observers (inactive observers dropped first)."""
        for key in [
            k
            for k, s in self.observer_states.items()
            if now - s.last_fetch_ms >= OBSERVER_SESSION_TIMEOUT_MS and k != self.local.key
        ]:
            del self.observer_states[key]

        def row(state: ReplicaState) -> ReplicaDescription:
            if state.key.matches(self.local.key):
                fetch_ms = caught_up_ms = now
            else:
                fetch_ms, caught_up_ms = state.last_fetch_ms, state.last_caught_up_ms
            end = state.end_offset if state.end_offset is not None else -1
            return ReplicaDescription(state.key, end, fetch_ms, caught_up_ms)

        voters = tuple(row(s) for _, s in sorted(self.voter_states.items()))
        observers = tuple(
            row(s) for s in sorted(self.observer_states.values(), key=lambda s: _key_order(s.key))
        )
        return voters, observers
