"""The replica's current epoch state and the only transitions allowed between states
(Kafka's ``QuorumState``).

Voters::

    Resigned    -> Unattached (higher epoch, or its election timeout), Follower (higher epoch)
    Unattached  -> Unattached (higher epoch; a vote cast), Prospective (election timeout),
                   Follower (a leader of this or a higher epoch)
    Prospective -> Unattached (higher epoch; lost without a known leader),
                   Candidate (a majority of pre-votes), Follower (a leader is known)
    Candidate   -> Unattached (higher epoch), Prospective (election timeout), Leader (a
                   majority of votes)
    Leader      -> Unattached (higher epoch), Resigned (shutdown, resign, lost quorum),
                   Follower (a leader of a higher epoch)
    Follower    -> Unattached (higher epoch), Prospective (fetch timeout), Follower (a
                   leader of a higher epoch, or more of its endpoints)

Observers move only between Unattached and Follower.

A *durable* transition writes the election state (epoch, leader, vote) to the quorum-state
store before it takes effect; Prospective and Resigned are memory-only (nothing in them
needs remembering). A node restarting as the leader it was comes back Resigned in the
same epoch, so it can neither vote again nor write a second, different entry at an
offset of that epoch.

Not thread-safe (the Raft client's).
"""

from __future__ import annotations

import logging
import random
import uuid

from kafkacore.raft.config import QuorumConfig
from kafkacore.raft.control import KRaftControlRecordStateMachine
from kafkacore.raft.leader import LeaderState
from kafkacore.raft.quorum_state import ElectionState, QuorumStateStore
from kafkacore.raft.states import (
    CandidateState,
    EpochState,
    FollowerState,
    ProspectiveState,
    ResignedState,
    UnattachedState,
)
from kafkacore.raft.types import Endpoints, LeaderAndEpoch, OffsetAndEpoch, ReplicaKey
from kafkacore.raft.voters import VoterNode, VoterSet

__all__ = ["QuorumState"]

logger = logging.getLogger("kafkacore.raft")
_FOREVER = 1 << 62


class QuorumState:
    def __init__(
        self,
        *,
        local_id: int | None,
        local_directory_id: uuid.UUID,
        control: KRaftControlRecordStateMachine,
        local_listeners: Endpoints,
        local_kraft_versions: tuple[int, int],
        config: QuorumConfig,
        store: QuorumStateStore,
        rng: random.Random,
    ) -> None:
        self.local_id = local_id
        self.local_directory_id = local_directory_id
        self.control = control
        self.local_listeners = local_listeners
        self.local_kraft_versions = local_kraft_versions
        self._config = config
        self._store = store
        self._rng = rng
        self.state: EpochState = UnattachedState(0, None, None, None, frozenset(), _FOREVER)

    # -- identity ----------------------------------------------------------------------

    @property
    def voters(self) -> VoterSet:
        return self.control.last_voter_set()

    def local_key(self) -> ReplicaKey:
        if self.local_id is None:
            raise RuntimeError("Required local id is not present")
        return ReplicaKey(self.local_id, self.local_directory_id)

    def local_voter_node(self) -> VoterNode:
        return VoterNode(self.local_key(), self.local_listeners, *self.local_kraft_versions)

    def is_voter(self, key: ReplicaKey | None = None) -> bool:
        if key is None:
            if self.local_id is None:
                return False
            key = self.local_key()
        return self.voters.is_voter(key)

    def is_observer(self) -> bool:
        return not self.is_voter()

    def is_only_voter(self) -> bool:
        return self.local_id is not None and self.voters.is_only_voter(self.local_key())

    # -- the current state ---------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def high_watermark(self) -> int | None:
        return self.state.high_watermark

    def election(self) -> ElectionState:
        return self.state.election()

    @property
    def leader_id(self) -> int | None:
        return self.state.election().leader_id

    @property
    def voted_key(self) -> ReplicaKey | None:
        return self.state.voted_key

    def has_leader(self) -> bool:
        return self.leader_id is not None

    def has_remote_leader(self) -> bool:
        return self.has_leader() and self.leader_id != self.local_id

    @property
    def leader_endpoints(self) -> Endpoints:
        return self.state.leader_endpoints

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self.leader_id, self.epoch, self.leader_endpoints)

    def is_leader(self) -> bool:
        return isinstance(self.state, LeaderState)

    def is_follower(self) -> bool:
        return isinstance(self.state, FollowerState)

    def is_unattached(self) -> bool:
        return isinstance(self.state, UnattachedState)

    def is_prospective(self) -> bool:
        return isinstance(self.state, ProspectiveState)

    def is_candidate(self) -> bool:
        return isinstance(self.state, CandidateState)

    def is_resigned(self) -> bool:
        return isinstance(self.state, ResignedState)

    def is_nominee(self) -> bool:
        return isinstance(self.state, ProspectiveState | CandidateState)

    def can_grant_vote(self, key: ReplicaKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        return self.state.can_grant_vote(key, log_up_to_date, pre_vote)

    def random_election_timeout_ms(self) -> int:
        timeout = self._config.election_timeout_ms
        return 0 if timeout == 0 else timeout + self._rng.randrange(timeout)

    # -- start-up ------------------------------------------------------------------------

    def initialize(self, log_end: OffsetAndEpoch, now: int) -> None:
        """The state to start in, from the quorum-state store and the log (Kafka's
        ``QuorumState.initialize``)."""
        voters = self.voters
        election = self._store.read() or ElectionState.with_unknown_leader(0, voters.voter_ids)
        timeout = now + self.random_election_timeout_ms()
        state: EpochState
        if election.voted_key is not None and self.local_id is None:
            raise RuntimeError(
                f"Initialized quorum state ({election}) with a voted candidate but without a "
                "local id"
            )
        if election.epoch < log_end.epoch:
            logger.warning(
                "Epoch from quorum store is %d, which is smaller than last written epoch %d "
                "in the log",
                election.epoch,
                log_end.epoch,
            )
            state = UnattachedState(log_end.epoch, None, None, None, voters.voter_ids, timeout)
        elif self.local_id is not None and election.is_leader(self.local_id):
            state = ResignedState(
                election.epoch,
                None,
                self.local_id,
                voters.voter_ids,
                timeout,
                (),
                self.local_listeners,
            )
        elif self.local_id is not None and election.is_voted_candidate(self.local_key()):
            state = CandidateState(election.epoch, None, self.local_key(), voters, timeout)
        elif election.leader_id is not None:
            endpoints = voters.listeners(election.leader_id)
            if not endpoints:
                state = UnattachedState(
                    election.epoch,
                    None,
                    election.leader_id,
                    election.voted_key,
                    voters.voter_ids,
                    timeout,
                )
            else:
                state = FollowerState(
                    election.epoch,
                    None,
                    election.leader_id,
                    endpoints,
                    election.voted_key,
                    voters.voter_ids,
                    self._config.fetch_timeout_ms,
                    now + self._config.fetch_timeout_ms,
                )
        else:
            state = UnattachedState(
                election.epoch, None, None, election.voted_key, voters.voter_ids, timeout
            )
        self._durable(state)

    # -- transitions ---------------------------------------------------------------------

    def _durable(self, state: EpochState) -> None:
        self._store.write(state.election(), self.control.last_kraft_version())
        self._memory(state)

    def _memory(self, state: EpochState) -> None:
        old = self.state
        if isinstance(old, FollowerState) and old is not state:
            old.set_fetching_snapshot(None)
        self.state = state
        logger.info(
            "node %s: %s epoch %d -> %s epoch %d",
            self.local_id,
            old.name,
            old.epoch,
            state.name,
            state.epoch,
        )

    def _remaining(self, deadline: int, now: int) -> int:
        return max(0, deadline - now)

    def transition_to_resigned(self, preferred_successors: list[ReplicaKey], now: int) -> None:
        if not self.is_leader():
            raise RuntimeError(f"Invalid transition to Resigned state from {self.state.name}")
        self._memory(
            ResignedState(
                self.epoch,
                None,
                self.local_key().id,
                self.voters.voter_ids,
                now + self.random_election_timeout_ms(),
                tuple(preferred_successors),
                self.local_listeners,
            )
        )

    def transition_to_unattached(self, epoch: int, leader_id: int | None, now: int) -> None:
        current = self.epoch
        if epoch < current or (
            epoch == current and not self.is_prospective() and not self.is_observer()
        ):
            raise RuntimeError(
                f"Cannot transition to Unattached with epoch {epoch} from current state "
                f"{self.state.name} in epoch {current}"
            )
        state = self.state
        if self.is_observer():
            deadline = _FOREVER
        elif isinstance(state, CandidateState | UnattachedState | ResignedState) or (
            isinstance(state, ProspectiveState) and not state.tally.is_vote_rejected()
        ):
            deadline = state.election_deadline
        else:
            deadline = now + self.random_election_timeout_ms()
        voted = self.voted_key if epoch == current else None
        self._durable(
            UnattachedState(
                epoch, self.high_watermark, leader_id, voted, self.voters.voter_ids, deadline
            )
        )

    def unattached_add_voted_state(self, epoch: int, candidate: ReplicaKey, now: int) -> None:
        state = self.state
        if self.local_id is None:
            raise RuntimeError("Cannot add voted state without a replica id")
        if candidate.id == self.local_id:
            raise RuntimeError(f"Cannot add voted key ({candidate}) matching the local id")
        if epoch != self.epoch or not isinstance(state, UnattachedState) or state.voted:
            raise RuntimeError(f"Cannot add voted key ({candidate}) to {state.name} in {epoch}")
        self._durable(
            UnattachedState(
                epoch,
                self.high_watermark,
                state.leader_id,
                candidate,
                self.voters.voter_ids,
                now + self.random_election_timeout_ms(),
            )
        )

    def prospective_add_voted_state(self, epoch: int, candidate: ReplicaKey, now: int) -> None:
        state = self.state
        if not isinstance(state, ProspectiveState):
            raise RuntimeError(f"Expected to be Prospective, but current state is {state.name}")
        if candidate.id == self.local_id:
            raise RuntimeError(f"Cannot add voted key ({candidate}) matching the local id")
        if epoch != self.epoch or state.voted is not None:
            raise RuntimeError(f"Cannot add voted key ({candidate}) to {state.name} in {epoch}")
        self._durable(
            ProspectiveState(
                epoch,
                self.high_watermark,
                self.local_key().id,
                state.leader_id,
                state.endpoints,
                candidate,
                self.voters,
                now + self.random_election_timeout_ms(),
            )
        )

    def transition_to_follower(
        self, epoch: int, leader_id: int, endpoints: Endpoints, now: int
    ) -> None:
        current = self.epoch
        if not endpoints:
            raise ValueError(
                f"Cannot transition to Follower with leader {leader_id} and epoch {epoch} "
                "without a leader endpoint"
            )
        if self.local_id is not None and leader_id == self.local_id:
            raise RuntimeError(
                f"Cannot transition to Follower with leader {leader_id} and epoch {epoch} "
                "since it matches the local node.id"
            )
        if epoch < current:
            raise RuntimeError(
                f"Cannot transition to Follower with leader {leader_id} and epoch {epoch} "
                f"since the current epoch {current} is larger"
            )
        if epoch == current:
            if self.is_follower() and len(self.leader_endpoints) >= len(endpoints):
                raise RuntimeError(
                    f"Cannot transition to Follower with leader {leader_id}, epoch {epoch} "
                    f"from state {self.state.name}"
                )
            if self.is_leader():
                raise RuntimeError(
                    f"Cannot transition to Follower with leader {leader_id} and epoch {epoch} "
                    "from state Leader"
                )
        voted = self.voted_key if epoch == current else None
        fetch_timeout = self._config.fetch_timeout_ms
        self._durable(
            FollowerState(
                epoch,
                self.high_watermark,
                leader_id,
                endpoints,
                voted,
                self.voters.voter_ids,
                fetch_timeout,
                now + fetch_timeout,
            )
        )

    def transition_to_prospective(self, now: int) -> None:
        if self.is_observer():
            raise RuntimeError("Cannot transition to Prospective: not a voter")
        if self.is_leader() or self.is_prospective():
            raise RuntimeError(f"Cannot transition to Prospective from {self.state.name}")
        self._memory(
            ProspectiveState(
                self.epoch,
                self.high_watermark,
                self.local_key().id,
                self.leader_id,
                self.leader_endpoints,
                self.voted_key,
                self.voters,
                now + self.random_election_timeout_ms(),
            )
        )

    def transition_to_candidate(self, now: int) -> None:
        if self.is_observer():
            raise RuntimeError("Cannot transition to Candidate: not a voter")
        if not self.is_prospective():
            raise RuntimeError(f"Cannot transition to Candidate from {self.state.name}")
        self._durable(
            CandidateState(
                self.epoch + 1,
                self.high_watermark,
                self.local_key(),
                self.voters,
                now + self.random_election_timeout_ms(),
            )
        )

    def transition_to_leader(self, epoch_start_offset: int, now: int) -> LeaderState:
        if self.is_observer():
            raise RuntimeError("Cannot transition to Leader: not a voter")
        state = self.state
        if not isinstance(state, CandidateState):
            raise RuntimeError(f"Cannot transition to Leader from current state {state.name}")
        if not state.tally.is_vote_granted():
            raise RuntimeError("Cannot become leader without majority votes granted")
        # The leader does not keep the high watermark it knew: it must first see a
        # majority reach the start of its own epoch (monotonic global HW).
        leader = LeaderState(
            local=self.local_voter_node(),
            epoch=self.epoch,
            epoch_start_offset=epoch_start_offset,
            voters=self.voters,
            offset_of_voters=self.control.last_voter_set_offset(),
            kraft_version=self.control.last_kraft_version(),
            granting_voters=state.tally.granting_voters(),
            fetch_timeout_ms=self._config.fetch_timeout_ms,
            linger_ms=self._config.append_linger_ms,
            now=now,
        )
        self._durable(leader)
        return leader
