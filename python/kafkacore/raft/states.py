"""A replica's state within one epoch (Kafka's ``EpochState`` and its six kinds:
``UnattachedState``, ``ProspectiveState``, ``CandidateState``, ``LeaderState``,
``FollowerState``, ``ResignedState``), and the vote tally of an election
(``EpochElection``).

Timers are absolute deadlines in milliseconds of the client's clock. Each state carries the
high watermark known when it began (a leader starts without one: it must first commit an
entry of its own epoch).

Vote granting (``canGrantVote``), by state, for a candidate whose log is at least as up
to date as ours:

* Unattached / Prospective: a pre-vote always; a vote if we voted for that candidate in
  this epoch, or if we have voted for nobody and know no leader;
* Candidate / Resigned: pre-votes only;
* Follower: pre-votes only, and only before the first successful fetch from the leader
  (KIP-996: a live leader is not disturbed);
* Leader: nothing.

Not thread-safe: owned by the client's one thread or task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkacore.raft.log import SnapshotWriter
from kafkacore.raft.quorum_state import ElectionState
from kafkacore.raft.types import EMPTY_ENDPOINTS, Endpoints, Node, ReplicaKey
from kafkacore.raft.voters import VoterSet

__all__ = [
    "CandidateState",
    "EpochElection",
    "EpochState",
    "FollowerState",
    "ProspectiveState",
    "ReplicaState",
    "ResignedState",
    "UnattachedState",
]


class EpochElection:
    """Votes granted and rejected by each voter of an election (Kafka's ``EpochElection``)."""

    def __init__(self, voters: frozenset[ReplicaKey]) -> None:
        self._keys = {key.id: key for key in voters}
        self._votes: dict[int, bool] = {}

    def record_vote(self, voter_id: int, granted: bool) -> bool:
        """Record a vote; ``True`` if the voter had not voted yet."""
        if voter_id not in self._keys:
            raise ValueError(f"Attempt to access voter state of non-voter {voter_id}")
        new = voter_id not in self._votes
        self._votes[voter_id] = granted
        return new

    def _majority(self) -> int:
        return len(self._keys) // 2 + 1

    def granting_voters(self) -> frozenset[int]:
        return frozenset(v for v, granted in self._votes.items() if granted)

    def rejecting_voters(self) -> frozenset[int]:
        return frozenset(v for v, granted in self._votes.items() if not granted)

    def unrecorded_voters(self) -> list[ReplicaKey]:
        return [key for voter_id, key in sorted(self._keys.items()) if voter_id not in self._votes]

    def is_vote_granted(self) -> bool:
        return len(self.granting_voters()) >= self._majority()

    def is_vote_rejected(self) -> bool:
        unrecorded = len(self._keys) - len(self._votes)
        return len(self.granting_voters()) + unrecorded < self._majority()


@dataclass
class EpochState:
    epoch: int
    high_watermark: int | None

    name = "Epoch"

    def election(self) -> ElectionState:
        raise NotImplementedError

    @property
    def leader_endpoints(self) -> Endpoints:
        return EMPTY_ENDPOINTS

    @property
    def voted_key(self) -> ReplicaKey | None:
        return None

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        raise NotImplementedError


def unattached_or_prospective_can_grant_vote(
    leader_id: int | None,
    voted_key: ReplicaKey | None,
    key: ReplicaKey,
    log_up_to_date: bool,
    pre_vote: bool,
) -> bool:
    """Kafka's ``QuorumState.unattachedOrProspectiveCanGrantVote``."""
    if pre_vote:
        return log_up_to_date
    if voted_key is not None:
        if voted_key.id == key.id:
            return voted_key.directory_id is None or voted_key.directory_id == key.directory_id
        return False
    if leader_id is not None:
        return False
    return log_up_to_date


@dataclass
class UnattachedState(EpochState):
    """No leader to follow (yet) in ``epoch``; maybe a vote cast, maybe a leader id known
    without its endpoints. Observers never time out here."""

    leader_id: int | None
    voted: ReplicaKey | None
    voters: frozenset[int]
    election_deadline: int  # ms; a huge value for observers

    name = "Unattached"

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.leader_id, self.voted, self.voters)

    @property
    def voted_key(self) -> ReplicaKey | None:
        return self.voted

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return unattached_or_prospective_can_grant_vote(
            self.leader_id, self.voted, key, log_up_to_date, pre_vote
        )


@dataclass
class ProspectiveState(EpochState):
    """Asking for pre-votes without bumping the epoch (KIP-996)."""

    local_id: int
    leader_id: int | None
    endpoints: Endpoints
    voted: ReplicaKey | None
    voter_set: VoterSet
    election_deadline: int
    tally: EpochElection = field(init=False)

    name = "Prospective"

    def __post_init__(self) -> None:
        self.tally = EpochElection(self.voter_set.voter_keys)
        self.tally.record_vote(self.local_id, True)

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.leader_id, self.voted, self.voter_set.voter_ids)

    @property
    def leader_endpoints(self) -> Endpoints:
        return self.endpoints

    @property
    def voted_key(self) -> ReplicaKey | None:
        return self.voted

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return unattached_or_prospective_can_grant_vote(
            self.leader_id, self.voted, key, log_up_to_date, pre_vote
        )


@dataclass
class CandidateState(EpochState):
    """Asking for votes in a new epoch, having voted for itself (persisted)."""

    local_key: ReplicaKey
    voter_set: VoterSet
    election_deadline: int
    tally: EpochElection = field(init=False)

    name = "Candidate"

    def __post_init__(self) -> None:
        self.tally = EpochElection(self.voter_set.voter_keys)
        self.tally.record_vote(self.local_key.id, True)

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, None, self.local_key, self.voter_set.voter_ids)

    @property
    def voted_key(self) -> ReplicaKey | None:
        return self.local_key

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return pre_vote and log_up_to_date


@dataclass
class FollowerState(EpochState):
    """Fetching from the leader of ``epoch``; a voter that hears nothing for
    ``fetch.timeout.ms`` becomes Prospective."""

    leader_id: int
    endpoints: Endpoints
    voted: ReplicaKey | None
    voters: frozenset[int]
    fetch_timeout_ms: int
    fetch_deadline: int
    update_voter_deadline: int = 0
    has_fetched_from_leader: bool = False
    has_updated_leader: bool = False
    fetching_snapshot: SnapshotWriter | None = None

    name = "Follower"

    def __post_init__(self) -> None:
        if not self.update_voter_deadline:
            # the first UpdateRaftVoter goes out one fetch timeout after following
            self.update_voter_deadline = self.fetch_deadline

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.leader_id, self.voted, self.voters)

    @property
    def leader_endpoints(self) -> Endpoints:
        return self.endpoints

    @property
    def voted_key(self) -> ReplicaKey | None:
        return self.voted

    def leader_node(self, listener: str) -> Node:
        address = self.endpoints.address(listener)
        if address is None:
            raise ValueError(
                f"Unknown endpoint for leader {self.leader_id} and listener {listener}, "
                f"known endpoints are {self.endpoints}"
            )
        return Node(self.leader_id, *address)

    def reset_fetch_timeout_for_successful_fetch(self, now: int) -> None:
        self.fetch_deadline = now + self.fetch_timeout_ms
        self.has_fetched_from_leader = True

    def override_fetch_timeout(self, now: int, timeout_ms: int) -> None:
        self.fetch_deadline = now + timeout_ms

    def reset_update_voter_period(self, now: int) -> None:
        self.update_voter_deadline = now + self.fetch_timeout_ms

    def update_high_watermark(self, high_watermark: int | None) -> bool:
        """Monotonic: a lower value is an error (the leader never lowers it)."""
        if high_watermark is None:
            if self.high_watermark is not None:
                raise ValueError(
                    f"Attempt to overwrite current high watermark {self.high_watermark} with "
                    "unknown value"
                )
            return False
        if self.high_watermark is not None:
            if high_watermark < 0:
                raise ValueError(f"Illegal negative ({high_watermark}) high watermark update")
            if self.high_watermark > high_watermark:
                raise ValueError(
                    f"Non-monotonic update of high watermark from {self.high_watermark} to "
                    f"{high_watermark}"
                )
            if self.high_watermark == high_watermark:
                return False
        self.high_watermark = high_watermark
        return True

    def set_fetching_snapshot(self, writer: SnapshotWriter | None) -> None:
        if self.fetching_snapshot is not None:
            self.fetching_snapshot.close()
        self.fetching_snapshot = writer

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return pre_vote and not self.has_fetched_from_leader and log_up_to_date


@dataclass
class ReplicaState:
    """The leader's view of one replica (Kafka's ``LeaderState.ReplicaState``)."""

    key: ReplicaKey
    end_offset: int | None = None
    last_fetch_ms: int = -1
    last_fetch_leader_end_offset: int = -1
    last_caught_up_ms: int = -1
    has_acknowledged_leader: bool = False

    def update_follower(self, now: int, fetch_offset: int, leader_end_offset: int | None) -> None:
        if leader_end_offset is not None:
            if fetch_offset >= leader_end_offset:
                self.last_caught_up_ms = max(self.last_caught_up_ms, now)
            elif (
                self.last_fetch_leader_end_offset > 0
                and fetch_offset >= self.last_fetch_leader_end_offset
            ):
                self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
            self.last_fetch_leader_end_offset = leader_end_offset
        self.last_fetch_ms = max(self.last_fetch_ms, now)
        self.end_offset = fetch_offset
        self.has_acknowledged_leader = True


@dataclass
class ResignedState(EpochState):
    """A leader that gave up ``epoch`` (shutdown, resign, or lost its quorum): it tells the
    voters (EndQuorumEpoch), then after an election timeout moves to epoch + 1."""

    local_id: int
    voters: frozenset[int]
    election_deadline: int
    preferred_successors: tuple[ReplicaKey, ...]
    endpoints: Endpoints
    unacked: set[int] = field(init=False)

    name = "Resigned"

    def __post_init__(self) -> None:
        self.unacked = set(self.voters) - {self.local_id}

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.local_id, None, self.voters)

    @property
    def leader_endpoints(self) -> Endpoints:
        return self.endpoints

    def acknowledge_resignation(self, voter_id: int) -> None:
        if voter_id not in self.voters:
            raise ValueError(
                f"Attempt to acknowledge delivery of EndQuorumEpoch by a non-voter {voter_id}"
            )
        self.unacked.discard(voter_id)

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return pre_vote and log_up_to_date
