"""A classic group's state: its members, generation, committed offsets and the offsets
of open transactions.

The state machine is Kafka's (``GroupMetadata.scala``; ``ClassicGroupState`` in 4.x)::

    Empty --join--> PreparingRebalance --all joined--> CompletingRebalance --leader syncs-->
    Stable; PreparingRebalance --everyone left--> Empty; Stable/CompletingRebalance --member
    joins, leaves or times out--> PreparingRebalance; any --deleted or expired--> Dead

:meth:`Group.transition_to` enforces each state's valid previous states: a transition
Kafka would not make is a coordinator bug and raises :class:`IllegalGroupStateTransition`.
Event loop thread only."""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkacore.protocol import ErrorCode

__all__ = [
    "COMPLETING",
    "DEAD",
    "EMPTY",
    "PREPARING",
    "STABLE",
    "Group",
    "GroupState",
    "IllegalGroupStateTransition",
    "JoinResult",
    "Member",
    "Offset",
    "join_error",
]

logger = logging.getLogger("kafkacore.server.group")


class GroupState(str, enum.Enum):
    """A classic group's state; the value is Kafka's name (DescribeGroups, ListGroups)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def valid_previous_states(self) -> frozenset[GroupState]:
        """The states this one may be entered from (``validPreviousStates``)."""
        return _VALID_PREVIOUS[self]


_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.DEAD: frozenset(GroupState),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
}

EMPTY = GroupState.EMPTY
PREPARING = GroupState.PREPARING_REBALANCE
COMPLETING = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD


class IllegalGroupStateTransition(RuntimeError):
    """Kafka's ``IllegalStateException`` from ``assertValidTransition``: a bug."""


class JoinResult(NamedTuple):
    """A JoinGroup answer: ``members`` (member id, group instance id, protocol metadata)
    is filled for the leader only."""

    error_code: int
    generation: int
    protocol: str | None
    leader: str | None
    member_id: str
    members: list[tuple[str, str | None, bytes]]


def join_error(code: int, member_id: str) -> JoinResult:
    return JoinResult(code, -1, None, None, member_id, [])


@dataclass
class Offset:
    """A committed offset; ``expire_timestamp``: when it expires regardless of the
    group's state (an OffsetCommit v2-4 RetentionTimeMs), else ``None``: after
    ``offsets.retention.minutes``. ``record_offset``: where its record is in
    ``__consumer_offsets`` (Kafka's ``OffsetAndMetadata.recordOffset``; -1 unknown): a
    transactional offset materialised at its COMMIT marker replaces a committed one only
    if its record is the later one in the log."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None = None
    record_offset: int = -1


@dataclass
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout: int
    rebalance_timeout: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    deadline: float = 0.0
    join_future: asyncio.Future[JoinResult] | None = None
    #: the SyncGroup answer: (error code, this member's assignment)
    sync_future: asyncio.Future[tuple[int, bytes]] | None = None

    def renew_session(self) -> None:
        """The member's session starts again (a heartbeat, a join, a sync, a commit, a
        load by a new coordinator)."""
        self.deadline = time.monotonic() + self.session_timeout / 1000

    def metadata_for(self, protocol: str | None) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        return b""


@dataclass
class Group:
    group_id: str
    _state: GroupState = field(default=GroupState.EMPTY, repr=False)
    generation: int = 0
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str | None = None
    state_timestamp: int = -1
    members: dict[str, Member] = field(default_factory=dict)
    pending: dict[str, float] = field(default_factory=dict)  # member id -> expiry
    static: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    offsets: dict[tuple[str, int], Offset] = field(default_factory=dict)
    pending_txn: dict[int, dict[tuple[str, int], Offset]] = field(default_factory=dict)
    """Transactional offsets written by TxnOffsetCommit whose transaction is not decided
    yet, by producer id (Kafka's ``pendingTransactionalOffsets`` of the group): invisible
    to OffsetFetch until the producer's COMMIT marker, dropped at its ABORT."""
    joined: asyncio.Event | None = None
    rebalance: asyncio.Task[None] | None = None

    def has_pending_txn(self, tp: tuple[str, int]) -> bool:
        """Some open transaction wrote an offset of ``tp`` (Kafka's
        ``hasPendingTransactionalOffsets``: OffsetFetch with RequireStable answers
        UNSTABLE_OFFSET_COMMIT for it)."""
        return any(tp in offsets for offsets in self.pending_txn.values())

    def drop_pending_txn(self, tp: tuple[str, int]) -> None:
        """Forget every open transaction's offset of ``tp`` (a tombstone of ``tp``
        removes them too, as Kafka's ``OffsetMetadataManager.replay``)."""
        for producer_id, offsets in list(self.pending_txn.items()):
            offsets.pop(tp, None)
            if not offsets:
                del self.pending_txn[producer_id]

    def complete_transaction(self, producer_id: int, committed: bool) -> int:
        """Kafka's ``replayEndTransactionMarker`` for this group: ``producer_id``'s pending
        offsets become committed (each unless the committed offset's record is later in
        the log) or are dropped; how many were materialised."""
        pending = self.pending_txn.pop(producer_id, None)
        if not pending or not committed:
            return 0
        materialised = 0
        for tp, offset in pending.items():
            existing = self.offsets.get(tp)
            if existing is None or offset.record_offset > existing.record_offset:
                self.offsets[tp] = offset
                materialised += 1
            else:
                logger.info(
                    "Skipped the materialization of transactional offset commit %s for "
                    "producer id %d in group %s with topic %s, partition %d since its record "
                    "offset %d is smaller than the record offset %d of the last committed "
                    "offset.",
                    offset,
                    producer_id,
                    self.group_id,
                    tp[0],
                    tp[1],
                    offset.record_offset,
                    existing.record_offset,
                )
        return materialised

    def unload(self) -> None:
        """Kafka's ``onGroupUnloaded``: the group is Dead here (its partition resigned);
        whoever waits in JoinGroup or SyncGroup is told NOT_COORDINATOR (they find the
        new coordinator), and its rebalance is cancelled."""
        self.transition_to(DEAD)
        self.pending.clear()
        for member in self.members.values():
            if member.join_future is not None and not member.join_future.done():
                member.join_future.set_result(
                    join_error(ErrorCode.NOT_COORDINATOR, member.member_id)
                )
            if member.sync_future is not None and not member.sync_future.done():
                member.sync_future.set_result((ErrorCode.NOT_COORDINATOR, b""))
        if self.rebalance is not None:
            self.rebalance.cancel()
            self.rebalance = None

    @property
    def state(self) -> GroupState:
        return self._state

    def set_loaded_state(self, state: GroupState) -> None:
        """The state a group is loaded in from ``__consumer_offsets`` (Kafka's
        ``GroupMetadata.loadGroup``: Stable with members, else Empty): a start, not a
        transition."""
        self._state = state

    def transition_to(self, target: GroupState) -> None:
        """Move to ``target``; raises :class:`IllegalGroupStateTransition` unless the
        current state is one of ``target``'s valid previous states."""
        if self._state not in target.valid_previous_states:
            raise IllegalGroupStateTransition(
                f"Group {self.group_id} should be in the "
                f"{','.join(s.value for s in sorted(target.valid_previous_states))} states "
                f"before moving to {target.value} state. Instead it is in {self._state.value} "
                "state"
            )
        self._state = target

    def supported_protocols(self) -> set[str]:
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str | None:
        candidates = self.supported_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = next(name for name, _ in m.protocols if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda p: votes[p]) if votes else None

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to (consumer protocol), None if unknown."""
        if self.protocol_type != "consumer" or self.protocol is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            data = m.metadata_for(self.protocol)
            try:
                pos = 2
                (count,) = _i32(data, pos)
                pos += 4
                for _ in range(count):
                    size = int.from_bytes(data[pos : pos + 2], "big", signed=True)
                    pos += 2
                    topics.add(data[pos : pos + size].decode())
                    pos += size
            except (ValueError, IndexError, UnicodeDecodeError):
                return None
        return topics


def _i32(data: bytes, pos: int) -> tuple[int]:
    if pos + 4 > len(data):
        raise ValueError("truncated")
    return (int.from_bytes(data[pos : pos + 4], "big", signed=True),)
