"""The KRaft replica: Kafka's ``KafkaRaftClient`` as a sans-IO state machine.

Elections follow KIP-595 with KIP-996's pre-vote: a voter whose leader is silent for
``controller.quorum.fetch.timeout.ms`` (or that has none for a randomized
``controller.quorum.election.timeout.ms``) becomes Prospective and asks for pre-votes
without changing its epoch; with a majority it becomes Candidate in epoch + 1, votes for
itself and asks for votes; with a majority it leads, appending a LeaderChangeMessage as
the first entry of its epoch. Replication is pulled: followers and observers Fetch from
the leader, which answers with records, with the epoch at which their log diverges
(truncate, KIP-101), or with a snapshot to download (FetchSnapshot) when they are below
its log start. The high watermark is the offset a majority of voters reached, once it
passes the start of the leader's epoch. Every request is fenced by epoch, with Kafka's
error codes. The voter set is ``controller.quorum.voters`` (kraft.version 0) or the
latest VotersRecord (kraft.version 1), changed one voter at a time by AddRaftVoter,
RemoveRaftVoter and UpdateRaftVoter (KIP-853).

Sans-IO: time, randomness, the log and the quorum-state store are given; the network is
events in and messages out. The owner (an asyncio driver, or the simulation) calls
:meth:`RaftClient.handle` for each :class:`~kafkacore.raft.messages.InboundRequest` or
:class:`~kafkacore.raft.messages.InboundResponse`, :meth:`RaftClient.poll` when the delay
it returned has passed (or after handling), and sends what :meth:`RaftClient.take_outbound`
returns. A request the network could not deliver comes back as an ``InboundResponse``
carrying :func:`~kafkacore.raft.messages.error_response` (BROKER_NOT_AVAILABLE,
REQUEST_TIMED_OUT).

Not thread-safe: one owner thread or task drives a client.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkacore.protocol.errors import ErrorCode
from kafkacore.protocol.messages.raft_records import ControlRecordType
from kafkacore.raft.config import QuorumConfig
from kafkacore.raft.control import KRaftControlRecordStateMachine
from kafkacore.raft.leader import LeaderState
from kafkacore.raft.log import BOOTSTRAP_SNAPSHOT_ID, RaftLog
from kafkacore.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    ApiVersionsRequest,
    ApiVersionsResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    InboundRequest,
    InboundResponse,
    OutboundRequest,
    OutboundResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
    VoteResponse,
    error_response,
)
from kafkacore.raft.quorum import QuorumState
from kafkacore.raft.quorum_state import QuorumStateStore
from kafkacore.raft.reconfig import VoterChanges
from kafkacore.raft.records import ControlRecord, kraft_version_record, leader_change_message
from kafkacore.raft.requests import RequestManager
from kafkacore.raft.snapshots import build_snapshot
from kafkacore.raft.states import (
    CandidateState,
    EpochState,
    FollowerState,
    ProspectiveState,
    ResignedState,
    UnattachedState,
)
from kafkacore.raft.types import (
    Endpoints,
    LeaderAndEpoch,
    Node,
    OffsetAndEpoch,
    ReplicaKey,
    ValidKind,
)
from kafkacore.raft.voters import VoterSet

__all__ = ["NotLeaderError", "RaftClient"]

logger = logging.getLogger("kafkacore.raft")

_NOT_HANDLED = None  # maybe_handle_common_response: let the API's handler go on


class NotLeaderError(RuntimeError):
    """An append or a leader-only operation on a replica that is not the leader."""


@dataclass
class _ParkedFetch:
    """A Fetch held by the leader until data arrives, the HW moves or it expires (Kafka's
    fetch purgatory)."""

    inbound: InboundRequest
    request: FetchRequest
    deadline: int
    response: FetchResponse


class RaftClient:
    """One replica of the metadata partition (see the module docstring).

    ``node_id`` is ``None`` for a pure observer; ``directory_id`` is the metadata log
    directory's id (KIP-853). ``static_voters``: ``controller.quorum.voters`` (empty with
    a dynamic quorum); ``bootstrap_servers``: whom to ask who leads (the static voters,
    or ``controller.quorum.bootstrap.servers``). ``listener`` is the quorum's listener
    name (the first of ``controller.listener.names``), ``local_listeners`` this node's
    endpoints, ``local_kraft_versions`` the kraft.version range it supports."""

    def __init__(
        self,
        *,
        node_id: int | None,
        directory_id: uuid.UUID,
        cluster_id: str,
        log: RaftLog,
        store: QuorumStateStore,
        config: QuorumConfig,
        static_voters: VoterSet,
        bootstrap_servers: Sequence[Node],
        listener: str,
        local_listeners: Endpoints,
        local_kraft_versions: tuple[int, int] = (0, 1),
        rng: random.Random | None = None,
        can_become_voter: bool = False,
    ) -> None:
        if directory_id == uuid.UUID(int=0):
            raise ValueError("The node directory id must be set and not be the zero uuid")
        self.node_id = node_id
        self.directory_id = directory_id
        self.cluster_id = cluster_id
        self.log = log
        self.config = config
        self.listener = listener
        self._rng = rng or random.Random()
        self._can_become_voter = can_become_voter
        self.control = KRaftControlRecordStateMachine(static_voters, log)
        self.quorum = QuorumState(
            local_id=node_id,
            local_directory_id=directory_id,
            control=self.control,
            local_listeners=local_listeners,
            local_kraft_versions=local_kraft_versions,
            config=config,
            store=store,
            rng=self._rng,
        )
        self.requests = RequestManager(
            bootstrap_servers, config.retry_backoff_ms, config.request_timeout_ms, self._rng
        )
        self.voter_changes = VoterChanges(
            quorum=self.quorum,
            control=self.control,
            config=config,
            listener=listener,
            send=self._maybe_send_request,
            respond=self._respond,
        )
        self._outbound: list[OutboundRequest | OutboundResponse] = []
        self._correlation = 0
        self._parked: list[_ParkedFetch] = []
        self._shutdown_deadline: int | None = None
        self.shutdown_complete = False
        self._initialized = False
        #: requests answered UNKNOWN_SERVER_ERROR because handling them failed
        self.failed_requests = 0

    # -- the owner's API -------------------------------------------------------------------

    def initialize(self, now: int) -> None:
        """Read the log and the quorum state; start in the state Kafka would."""
        self.control.update()
        self.quorum.initialize(self.log.end_offset_and_epoch(), now)
        self._initialized = True
        if self.quorum.is_leader():
            raise RuntimeError("Voter cannot initialize as a Leader")
        if self.quorum.is_only_voter() and (
            self.quorum.is_unattached() or self.quorum.is_follower() or self.quorum.is_resigned()
        ):
            self._transition_to_prospective(now)
        elif self.quorum.is_candidate():
            self._on_become_candidate(now)
        elif self.quorum.is_follower():
            self._on_become_follower(now)

    def take_outbound(self) -> list[OutboundRequest | OutboundResponse]:
        out, self._outbound = self._outbound, []
        return out

    @property
    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.quorum.leader_and_epoch()

    @property
    def epoch(self) -> int:
        return self.quorum.epoch

    @property
    def high_watermark(self) -> int | None:
        return self.quorum.high_watermark

    @property
    def state_name(self) -> str:
        return self.quorum.state.name

    def is_leader(self) -> bool:
        return self.quorum.is_leader()

    def append(self, values: Sequence[bytes], now: int) -> int:
        """Queue ``values`` (serialized metadata records) as one batch of the leader's
        epoch; returns the offset of the last. ``NotLeaderError`` when not the leader."""
        state = self.quorum.state
        if not isinstance(state, LeaderState):
            raise NotLeaderError("Append failed because the replica is not the current leader")
        return state.accumulator.append(values, now)

    def next_write_offset(self) -> int:
        """The offset the next :meth:`append` will start at (a controller writes a broker's
        epoch into its RegisterBrokerRecord with it). ``NotLeaderError`` when not the
        leader."""
        state = self.quorum.state
        if not isinstance(state, LeaderState):
            raise NotLeaderError("Not the leader: no offset to write at")
        return state.accumulator.next_offset

    def resign(self, epoch: int) -> None:
        """Give up leadership of ``epoch`` (Kafka's ``resign``); ignored if stale."""
        state = self.quorum.state
        if isinstance(state, LeaderState) and state.epoch == epoch:
            state.resign_requested = True

    def shutdown(self, timeout_ms: int, now: int) -> None:
        """Begin a graceful shutdown: a leader resigns and tells the voters; a voter in an
        election stays until it ends or ``timeout_ms`` passes; then
        :attr:`shutdown_complete`."""
        self._shutdown_deadline = now + timeout_ms

    def create_snapshot(
        self,
        snapshot_id: OffsetAndEpoch,
        values: Sequence[bytes],
        *,
        last_contained_log_timestamp: int,
        now: int,
    ) -> bool:
        """Write a snapshot of the committed log below ``snapshot_id`` holding the state's
        ``values``; ``False`` if it exists or is below the log start."""
        writer = self.log.create_snapshot(snapshot_id)
        if writer is None:
            return False
        last = snapshot_id.offset - 1
        kraft_version = self.control.kraft_version_at_offset(last)
        voters = self.control.voter_set_at_offset(last) if kraft_version >= 1 else None
        writer.append(
            build_snapshot(
                snapshot_id,
                values,
                timestamp_ms=now,
                last_contained_log_timestamp=last_contained_log_timestamp,
                kraft_version=kraft_version,
                voters=voters,
            )
        )
        writer.freeze()
        self.control.truncate_old_entries(snapshot_id.offset)
        return True

    def delete_log_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Drop the log below a frozen snapshot (the log start moves to it)."""
        return self.log.delete_before_snapshot(snapshot_id)

    # -- events ----------------------------------------------------------------------------

    def handle(self, event: InboundRequest | InboundResponse, now: int) -> None:
        if not self._initialized:
            raise RuntimeError("Replica needs to be initialized before handling events")
        match event:
            case InboundRequest():
                self._handle_request(event, now)
            case InboundResponse():
                if self.requests.is_response_expected(event.source, event.correlation_id):
                    ok = self._handle_response(event, now)
                    self.requests.on_response_result(event.source, event.correlation_id, ok, now)

    def poll(self, now: int) -> int:
        """Run timers and send what the state calls for; returns how many ms until the
        next call is needed (earlier if an event arrives)."""
        if self._maybe_complete_shutdown(now):
            return 1 << 62
        timeout = self._poll_current_state(now)
        timeout = min(timeout, self._expire_parked_fetches(now))
        return max(0, timeout)

    # -- sending -----------------------------------------------------------------------

    def _respond(self, inbound: InboundRequest, response: RaftResponse) -> None:
        self._outbound.append(OutboundResponse(inbound.correlation_id, response, inbound.reply_to))

    def _maybe_send_request(
        self, now: int, destination: Node, build: Callable[[], RaftRequest]
    ) -> tuple[bool, int]:
        """``(sent, ms to wait before it may be retried)``."""
        if self.requests.is_backing_off(destination, now):
            return False, self.requests.remaining_backoff_ms(destination, now)
        if self.requests.is_ready(destination, now):
            self._correlation += 1
            request = build()
            self.requests.on_request_sent(destination, self._correlation, now)
            self._outbound.append(OutboundRequest(destination, self._correlation, request, now))
            return True, self.requests.remaining_request_time_ms(destination, now)
        return False, self.requests.remaining_request_time_ms(destination, now)

    # -- transitions -------------------------------------------------------------------

    def _end_offset(self) -> OffsetAndEpoch:
        return self.log.end_offset_and_epoch()

    def _reset_connections(self) -> None:
        self.requests.reset_all()

    def _on_become_leader(self, now: int) -> None:
        end = self.log.end_offset
        state = self.quorum.transition_to_leader(end, now)
        self.log.initialize_leader_epoch(self.quorum.epoch)
        state.accumulator.append_control(self._start_of_epoch_records(state), now)
        self._reset_connections()

    def _start_of_epoch_records(self, state: LeaderState) -> list[ControlRecord]:
        """LeaderChangeMessage; with kraft.version >= 1 also the KRaftVersion and Voters
        records when the voters came from the bootstrap snapshot or need this leader's
        endpoints (Kafka's ``appendStartOfEpochControlRecords``)."""
        records = [
            ControlRecord(
                ControlRecordType.LEADER_CHANGE,
                leader_change_message(
                    state.local.key.id, list(state.voter_states), sorted(state.granting_voters)
                ),
            )
        ]
        version = state.kraft_version_at_epoch_start
        offset = state.offset_of_voters_at_epoch_start
        voters = state.voter_set_at_epoch_start
        if (
            version >= 1
            and offset is not None
            and (offset == -1 or voters.voter_node_needs_update(state.local))
        ):
            updated = voters.update_voter(state.local) or voters
            records.append(
                ControlRecord(ControlRecordType.KRAFT_VERSION, kraft_version_record(version))
            )
            records.append(
                ControlRecord(ControlRecordType.KRAFT_VOTERS, updated.to_voters_record())
            )
        return records

    def _maybe_transition_forward(self, now: int) -> None:
        state = self.quorum.state
        if isinstance(state, ProspectiveState) and state.tally.is_vote_granted():
            self._transition_to_candidate(now)
        elif isinstance(state, CandidateState) and state.tally.is_vote_granted():
            self._on_become_leader(now)

    def _on_become_candidate(self, now: int) -> None:
        state = self.quorum.state
        assert isinstance(state, CandidateState)
        if state.tally.is_vote_granted():
            self._on_become_leader(now)
        else:
            self._reset_connections()

    def _transition_to_candidate(self, now: int) -> None:
        self.quorum.transition_to_candidate(now)
        self._on_become_candidate(now)

    def _transition_to_prospective(self, now: int) -> None:
        self.quorum.transition_to_prospective(now)
        state = self.quorum.state
        assert isinstance(state, ProspectiveState)
        if state.tally.is_vote_granted():
            self._transition_to_candidate(now)
        else:
            self._reset_connections()

    def _transition_to_unattached(self, epoch: int, leader_id: int | None, now: int) -> None:
        old = self.quorum.state
        self.quorum.transition_to_unattached(epoch, leader_id, now)
        self._leave_leadership(old)
        self._reset_connections()

    def _transition_to_resigned(self, successors: list[ReplicaKey], now: int) -> None:
        old = self.quorum.state
        self.quorum.transition_to_resigned(successors, now)
        self._leave_leadership(old)
        self._reset_connections()

    def _transition_to_follower(
        self, epoch: int, leader_id: int, endpoints: Endpoints, now: int
    ) -> None:
        if not endpoints:
            raise RuntimeError(
                f"Unknown leader endpoints ({endpoints}) after request or response with "
                f"leader ({leader_id}) and the voters {self.quorum.voters}"
            )
        old = self.quorum.state
        self.quorum.transition_to_follower(epoch, leader_id, endpoints, now)
        self._leave_leadership(old)
        self._on_become_follower(now)

    def _on_become_follower(self, now: int) -> None:
        self._reset_connections()

    def _leave_leadership(self, old: EpochState) -> None:
        """After a transition, answer what the old state held as leader: parked fetches
        and its pending voter change, NOT_LEADER_OR_FOLLOWER with the new leader's news."""
        for parked in self._parked:
            error = ErrorCode.NOT_LEADER_OR_FOLLOWER
            self._respond(parked.inbound, self._empty_fetch_response(error, None))
        self._parked.clear()
        if isinstance(old, LeaderState) and old.pending_voter_change is not None:
            self.voter_changes.complete(old, ErrorCode.NOT_LEADER_OR_FOLLOWER, None)

    # -- requests ------------------------------------------------------------------------

    def _handle_request(self, inbound: InboundRequest, now: int) -> None:
        request = inbound.request
        response: RaftResponse | None
        try:
            response = self._dispatch_request(inbound, request, now)
        except Exception:
            # A request this replica cannot make sense of (a peer claiming to be it, a
            # leader inconsistent with what it knows): refused before any change, answered
            # UNKNOWN_SERVER_ERROR; the replica keeps running (Kafka's raft thread would
            # stop on most of these).
            logger.exception("node %s: failed to handle %r", self.node_id, request)
            self.failed_requests += 1
            response = error_response(request, ErrorCode.UNKNOWN_SERVER_ERROR)
        if response is not None:
            self._respond(inbound, response)

    def _dispatch_request(
        self, inbound: InboundRequest, request: RaftRequest, now: int
    ) -> RaftResponse | None:
        match request:
            case FetchRequest():
                return self._handle_fetch_request(inbound, request, now)
            case VoteRequest():
                return self._handle_vote_request(request, now)
            case BeginQuorumEpochRequest():
                return self._handle_begin_quorum_epoch_request(request, now)
            case EndQuorumEpochRequest():
                return self._handle_end_quorum_epoch_request(request, now)
            case DescribeQuorumRequest():
                return self._handle_describe_quorum_request(now)
            case FetchSnapshotRequest():
                return self._handle_fetch_snapshot_request(request, now)
            case AddRaftVoterRequest():
                return self._handle_add_voter_request(inbound, request, now)
            case RemoveRaftVoterRequest():
                return self._handle_remove_voter_request(inbound, request, now)
            case UpdateRaftVoterRequest():
                return self._handle_update_voter_request(inbound, request, now)
            case ApiVersionsRequest():
                return ApiVersionsResponse(kraft_versions=self.quorum.local_kraft_versions)

    def _valid_cluster_id(self, cluster_id: str | None) -> bool:
        return cluster_id is None or cluster_id == self.cluster_id

    def _validate_voter_only_request(self, remote_id: int, epoch: int) -> int | None:
        if epoch < self.quorum.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if remote_id < 0:
            return ErrorCode.INVALID_REQUEST
        return None

    def _validate_leader_only_request(self, epoch: int) -> int | None:
        if epoch < self.quorum.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if epoch > self.quorum.epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        if not self.quorum.is_leader():
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self._shutdown_deadline is not None:
            return ErrorCode.BROKER_NOT_AVAILABLE
        return None

    def _is_valid_voter_key(self, key: ReplicaKey | None) -> bool:
        if key is None:
            return True
        if key.id != self.node_id:
            return False
        return key.directory_id is None or key.directory_id == self.directory_id

    def _handle_vote_request(self, request: VoteRequest, now: int) -> VoteResponse:
        if not self._valid_cluster_id(request.cluster_id):
            return VoteResponse(error=ErrorCode.INCONSISTENT_CLUSTER_ID)
        epoch, last_epoch = request.replica_epoch, request.last_offset_epoch
        illegal = last_epoch > epoch if request.pre_vote else last_epoch >= epoch
        if request.last_offset < 0 or last_epoch < 0 or illegal:
            return self._vote_response(ErrorCode.INVALID_REQUEST, False)
        error = self._validate_voter_only_request(request.replica_key.id, epoch)
        if error is not None:
            return self._vote_response(error, False)
        if epoch > self.quorum.epoch:
            self._transition_to_unattached(epoch, None, now)
        if not self._is_valid_voter_key(request.voter_key):
            return self._vote_response(ErrorCode.INVALID_VOTER_KEY, False)
        candidate_end = OffsetAndEpoch(request.last_offset, last_epoch)
        granted = self.quorum.can_grant_vote(
            request.replica_key, candidate_end.at_least(self._end_offset()), request.pre_vote
        )
        if granted and not request.pre_vote:
            state = self.quorum.state
            if isinstance(state, UnattachedState) and state.voted is None:
                self.quorum.unattached_add_voted_state(epoch, request.replica_key, now)
            elif isinstance(state, ProspectiveState) and state.voted is None:
                self.quorum.prospective_add_voted_state(epoch, request.replica_key, now)
        return self._vote_response(ErrorCode.NONE, granted)

    def _vote_response(self, error: int, granted: bool) -> VoteResponse:
        return VoteResponse(
            partition_error=error,
            leader_id=self.quorum.leader_id,
            leader_epoch=self.quorum.epoch,
            vote_granted=granted,
            leader_endpoints=self.quorum.leader_endpoints,
        )

    def _epoch_response_fields(self) -> dict[str, object]:
        return {
            "leader_id": self.quorum.leader_id,
            "leader_epoch": self.quorum.epoch,
            "leader_endpoints": self.quorum.leader_endpoints,
        }

    def _handle_begin_quorum_epoch_request(
        self, request: BeginQuorumEpochRequest, now: int
    ) -> BeginQuorumEpochResponse:
        if not self._valid_cluster_id(request.cluster_id):
            return BeginQuorumEpochResponse(error=ErrorCode.INCONSISTENT_CLUSTER_ID)
        error = self._validate_voter_only_request(request.leader_id, request.leader_epoch)
        if error is not None:
            return BeginQuorumEpochResponse(partition_error=error, **self._epoch_response_fields())  # type: ignore[arg-type]
        endpoints = request.leader_endpoints or self.quorum.voters.listeners(request.leader_id)
        self._maybe_transition(request.leader_id, request.leader_epoch, endpoints, now)
        if not self._is_valid_voter_key(request.voter_key):
            return BeginQuorumEpochResponse(
                partition_error=ErrorCode.INVALID_VOTER_KEY,
                **self._epoch_response_fields(),  # type: ignore[arg-type]
            )
        return BeginQuorumEpochResponse(**self._epoch_response_fields())  # type: ignore[arg-type]

    def _handle_end_quorum_epoch_request(
        self, request: EndQuorumEpochRequest, now: int
    ) -> EndQuorumEpochResponse:
        if not self._valid_cluster_id(request.cluster_id):
            return EndQuorumEpochResponse(error=ErrorCode.INCONSISTENT_CLUSTER_ID)
        error = self._validate_voter_only_request(request.leader_id, request.leader_epoch)
        if error is not None:
            return EndQuorumEpochResponse(partition_error=error, **self._epoch_response_fields())  # type: ignore[arg-type]
        endpoints = request.leader_endpoints or self.quorum.voters.listeners(request.leader_id)
        self._maybe_transition(request.leader_id, request.leader_epoch, endpoints, now)
        state = self.quorum.state
        if isinstance(state, FollowerState) and state.leader_id == request.leader_id:
            backoff = self._end_epoch_election_backoff(request.preferred_candidates)
            state.override_fetch_timeout(now, backoff)
        return EndQuorumEpochResponse(**self._epoch_response_fields())  # type: ignore[arg-type]

    def _end_epoch_election_backoff(self, candidates: Sequence[ReplicaKey]) -> int:
        """The earlier in the resigning leader's preferred list, the sooner to run."""
        position = 0
        for candidate in candidates:
            if candidate.id == self.node_id and (
                candidate.directory_id is None or candidate.directory_id == self.directory_id
            ):
                break
            position += 1
        return self._strict_exponential_election_backoff(position, len(candidates))

    def _strict_exponential_election_backoff(self, position: int, total: int) -> int:
        maximum = self.config.election_backoff_max_ms
        if position == 0:
            return 0
        if position < 0 or position >= total:
            return maximum
        base = maximum >> (total - 1)
        return min(maximum, base << (position - 1))

    # -- Fetch (leader side) ------------------------------------------------------------

    def _empty_fetch_response(self, error: int, high_watermark: int | None) -> FetchResponse:
        return FetchResponse(
            partition_error=error,
            high_watermark=-1 if high_watermark is None else high_watermark,
            log_start_offset=self.log.start_offset,
            **self._epoch_response_fields(),  # type: ignore[arg-type]
        )

    def _handle_fetch_request(
        self, inbound: InboundRequest, request: FetchRequest, now: int
    ) -> FetchResponse | None:
        if not self._valid_cluster_id(request.cluster_id):
            return FetchResponse(error=ErrorCode.INCONSISTENT_CLUSTER_ID)
        if (
            request.max_wait_ms < 0
            or request.fetch_offset < 0
            or request.last_fetched_epoch < 0
            or request.last_fetched_epoch > request.current_leader_epoch
        ):
            return self._empty_fetch_response(ErrorCode.INVALID_REQUEST, None)
        response = self._try_complete_fetch(request, now)
        if (
            response.partition_error != ErrorCode.NONE
            or response.records
            or request.max_wait_ms == 0
            or response.diverging is not None
            or response.snapshot_id is not None
            or (
                request.high_watermark is not None
                and request.high_watermark < response.high_watermark
            )
        ):
            return response
        self._parked.append(_ParkedFetch(inbound, request, now + request.max_wait_ms, response))
        return None

    def _try_complete_fetch(self, request: FetchRequest, now: int) -> FetchResponse:
        error = self._validate_leader_only_request(request.current_leader_epoch)
        if error is not None:
            return self._empty_fetch_response(error, None)
        state = self.quorum.state
        assert isinstance(state, LeaderState)
        log = self.log
        latest = log.latest_snapshot_id()
        if request.fetch_offset == 0 and latest is not None and latest != BOOTSTRAP_SNAPSHOT_ID:
            valid_kind, valid_at = ValidKind.SNAPSHOT, latest
        else:
            valid_kind, valid_at = log.validate_offset_and_epoch(
                request.fetch_offset, request.last_fetched_epoch
            )
        records = b""
        if valid_kind is ValidKind.VALID:
            records = log.read(request.fetch_offset, request.max_bytes)
            if state.update_replica_state(request.replica_key, now, request.fetch_offset):
                self._on_update_leader_high_watermark(state, now)
        return FetchResponse(
            high_watermark=-1 if state.high_watermark is None else state.high_watermark,
            log_start_offset=log.start_offset,
            records=records,
            diverging=valid_at if valid_kind is ValidKind.DIVERGING else None,
            snapshot_id=valid_at if valid_kind is ValidKind.SNAPSHOT else None,
            **self._epoch_response_fields(),  # type: ignore[arg-type]
        )

    def _complete_parked(self, now: int, end_offset: int | None = None) -> None:
        """Answer parked fetches: those below ``end_offset``, or all (``None``)."""
        keep = []
        for parked in self._parked:
            if end_offset is None or parked.request.fetch_offset < end_offset:
                self._respond(parked.inbound, self._try_complete_fetch(parked.request, now))
            else:
                keep.append(parked)
        self._parked = keep

    def _expire_parked_fetches(self, now: int) -> int:
        keep = []
        for parked in self._parked:
            if parked.deadline <= now:
                self._respond(parked.inbound, parked.response)
            else:
                keep.append(parked)
        self._parked = keep
        return min((p.deadline - now for p in self._parked), default=1 << 62)

    def _on_update_leader_high_watermark(self, state: LeaderState, now: int) -> None:
        hw = state.high_watermark
        if hw is None:
            return
        self.log.update_high_watermark(hw)
        self.voter_changes.high_watermark_updated(state, hw)
        # parked fetches may now be answered with the new HW
        if self._parked:
            self._complete_parked(now)

    def _update_leader_end_offset(self, state: LeaderState, now: int) -> None:
        end = self.log.end_offset
        if state.update_local_state(end, self.quorum.voters):
            self._on_update_leader_high_watermark(state, now)
        if self._parked:
            self._complete_parked(now, end)

    # -- Fetch (follower side) ----------------------------------------------------------

    def _build_fetch_request(self) -> FetchRequest:
        hw = self.quorum.high_watermark
        return FetchRequest(
            cluster_id=self.cluster_id,
            replica_key=ReplicaKey(-1 if self.node_id is None else self.node_id, self.directory_id),
            current_leader_epoch=self.quorum.epoch,
            fetch_offset=self.log.end_offset,
            last_fetched_epoch=self.log.last_fetched_epoch,
            max_bytes=self.config.fetch_max_bytes,
            max_wait_ms=self.config.fetch_max_wait_ms,
            high_watermark=-1 if hw is None else hw,
        )

    def _build_fetch_snapshot_request(
        self, snapshot_id: OffsetAndEpoch, size: int
    ) -> FetchSnapshotRequest:
        return FetchSnapshotRequest(
            cluster_id=self.cluster_id,
            replica_key=ReplicaKey(-1 if self.node_id is None else self.node_id, self.directory_id),
            current_leader_epoch=self.quorum.epoch,
            snapshot_id=snapshot_id,
            position=size,
            max_bytes=self.config.fetch_snapshot_max_bytes,
        )

    def _handle_fetch_response(self, source: Node, response: FetchResponse, now: int) -> bool:
        if response.error != ErrorCode.NONE:
            return self._handle_top_level_error(response.error)
        leader_id, epoch = response.leader_id, response.leader_epoch
        endpoints = response.leader_endpoints
        if leader_id is not None and not endpoints:
            endpoints = self.quorum.voters.listeners(leader_id)
        handled = self._maybe_handle_common_response(
            response.partition_error, leader_id, epoch, endpoints, now
        )
        if handled is not None:
            return handled
        state = self.quorum.state
        if not isinstance(state, FollowerState):
            raise RuntimeError(f"Expected to be Follower, but the current state is {state.name}")
        if response.partition_error != ErrorCode.NONE:
            return False
        if response.diverging is not None and response.diverging.epoch >= 0:
            diverging = response.diverging
            if state.high_watermark is not None and diverging.offset < state.high_watermark:
                raise RuntimeError(
                    f"The leader requested truncation to offset {diverging.offset}, which is "
                    f"below the current high watermark {state.high_watermark}"
                )
            end = self.log.truncate_to_end_offset(diverging)
            logger.info("node %s truncated to offset %d (leader %s)", self.node_id, end, leader_id)
            self.control.truncate_new_entries(end)
        elif response.snapshot_id is not None and (
            response.snapshot_id.epoch >= 0 or response.snapshot_id.offset >= 0
        ):
            snapshot_id = response.snapshot_id
            if snapshot_id.epoch < 0 or snapshot_id.offset < 0:
                return False
            state.set_fetching_snapshot(self.log.create_snapshot_unchecked(snapshot_id))
        else:
            self._append_as_follower(response.records)
            hw = response.high_watermark
            self._update_follower_high_watermark(state, None if hw < 0 else hw)
        state.reset_fetch_timeout_for_successful_fetch(now)
        return True

    def _append_as_follower(self, records: bytes) -> None:
        if not records:
            return
        try:
            self.log.append_as_follower(records)
        except ValueError:
            logger.info("node %s failed to append fetched records", self.node_id, exc_info=True)
            return
        self.log.flush()
        self.control.update()

    def _update_follower_high_watermark(self, state: FollowerState, hw: int | None) -> None:
        if hw is None:
            return
        new = min(self.log.end_offset, hw)
        if state.update_high_watermark(new):
            self.log.update_high_watermark(new)

    # -- FetchSnapshot ------------------------------------------------------------------

    def _handle_fetch_snapshot_request(
        self, request: FetchSnapshotRequest, now: int
    ) -> FetchSnapshotResponse:
        if not self._valid_cluster_id(request.cluster_id):
            return FetchSnapshotResponse(error=ErrorCode.INCONSISTENT_CLUSTER_ID)
        common = self._epoch_response_fields()
        error = self._validate_leader_only_request(request.current_leader_epoch)
        if error is not None:
            return FetchSnapshotResponse(partition_error=error, **common)  # type: ignore[arg-type]
        snapshot_id = request.snapshot_id
        data = self.log.read_snapshot(snapshot_id)
        if data is None or snapshot_id == BOOTSTRAP_SNAPSHOT_ID:
            return FetchSnapshotResponse(
                partition_error=ErrorCode.SNAPSHOT_NOT_FOUND,
                **common,  # type: ignore[arg-type]
            )
        if request.position < 0 or request.position >= len(data):
            return FetchSnapshotResponse(
                partition_error=ErrorCode.POSITION_OUT_OF_RANGE,
                **common,  # type: ignore[arg-type]
            )
        chunk = data[request.position : request.position + max(0, request.max_bytes)]
        state = self.quorum.state
        assert isinstance(state, LeaderState)
        state.update_check_quorum_for_following_voter(request.replica_key, now)
        return FetchSnapshotResponse(
            snapshot_id=snapshot_id,
            size=len(data),
            position=request.position,
            data=chunk,
            **common,  # type: ignore[arg-type]
        )

    def _handle_fetch_snapshot_response(self, response: FetchSnapshotResponse, now: int) -> bool:
        if response.error != ErrorCode.NONE:
            return self._handle_top_level_error(response.error)
        endpoints = response.leader_endpoints
        if response.leader_id is not None and not endpoints:
            endpoints = self.quorum.voters.listeners(response.leader_id)
        handled = self._maybe_handle_common_response(
            response.partition_error, response.leader_id, response.leader_epoch, endpoints, now
        )
        if handled is not None:
            return handled
        state = self.quorum.state
        if not isinstance(state, FollowerState):
            raise RuntimeError(f"Expected to be Follower, but the current state is {state.name}")
        if (
            response.partition_error == ErrorCode.SNAPSHOT_NOT_FOUND
            or response.snapshot_id.offset < 0
            or response.snapshot_id.epoch < 0
        ):
            # the leader dropped it: start over with a Fetch
            state.set_fetching_snapshot(None)
            state.reset_fetch_timeout_for_successful_fetch(now)
            return True
        if response.partition_error != ErrorCode.NONE:
            return False
        writer = state.fetching_snapshot
        if writer is None:
            raise RuntimeError(f"Received unexpected fetch snapshot response: {response}")
        if writer.snapshot_id != response.snapshot_id:
            raise RuntimeError(
                f"Received fetch snapshot response with an invalid id. Expected "
                f"{writer.snapshot_id}; Received {response.snapshot_id}"
            )
        if writer.size != response.position:
            raise RuntimeError(
                f"Received fetch snapshot response with an invalid position. Expected "
                f"{writer.size}; Received {response.position}"
            )
        writer.append(response.data)
        if writer.size == response.size:
            writer.freeze()
            state.fetching_snapshot = None
            if not self.log.truncate_to_latest_snapshot():
                raise RuntimeError(
                    f"Full log truncation expected but didn't happen. Snapshot of "
                    f"{writer.snapshot_id}, log end offset {self.log.end_offset}"
                )
            self.control.update()
            self._update_follower_high_watermark(state, self.log.high_watermark)
        state.reset_fetch_timeout_for_successful_fetch(now)
        return True

    # -- DescribeQuorum -----------------------------------------------------------------

    def _handle_describe_quorum_request(self, now: int) -> DescribeQuorumResponse:
        state = self.quorum.state
        if not isinstance(state, LeaderState):
            return DescribeQuorumResponse(partition_error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
        voters, observers = state.describe(now)
        nodes = tuple(
            (node.key.id, node.listeners) for _, node in sorted(self.quorum.voters.voters.items())
        )
        return DescribeQuorumResponse(
            leader_id=state.local.key.id,
            leader_epoch=state.epoch,
            high_watermark=-1 if state.high_watermark is None else state.high_watermark,
            voters=voters,
            observers=observers,
            nodes=nodes,
        )

    # -- voter changes (KIP-853): the front checks here, the rest in reconfig -----------

    def _leader_for_voter_change(
        self, cluster_id: str | None
    ) -> tuple[LeaderState | None, int | None, str | None]:
        if not self._valid_cluster_id(cluster_id):
            return (
                None,
                ErrorCode.INCONSISTENT_CLUSTER_ID,
                f'The given id "{cluster_id}" doesn\'t match the cluster id "{self.cluster_id}"',
            )
        error = self._validate_leader_only_request(self.quorum.epoch)
        if error is not None:
            return None, error, None
        state = self.quorum.state
        assert isinstance(state, LeaderState)
        return state, None, None

    def _handle_add_voter_request(
        self, inbound: InboundRequest, request: AddRaftVoterRequest, now: int
    ) -> AddRaftVoterResponse | None:
        state, error, message = self._leader_for_voter_change(request.cluster_id)
        if state is None:
            return AddRaftVoterResponse(error=error or 0, error_message=message)
        return self.voter_changes.add(state, inbound, request, now)

    def _handle_remove_voter_request(
        self, inbound: InboundRequest, request: RemoveRaftVoterRequest, now: int
    ) -> RemoveRaftVoterResponse | None:
        state, error, message = self._leader_for_voter_change(request.cluster_id)
        if state is None:
            return RemoveRaftVoterResponse(error=error or 0, error_message=message)
        return self.voter_changes.remove(state, inbound, request, now)

    def _handle_update_voter_request(
        self, inbound: InboundRequest, request: UpdateRaftVoterRequest, now: int
    ) -> UpdateRaftVoterResponse | None:
        if not self._valid_cluster_id(request.cluster_id):
            return self.voter_changes.update_response(ErrorCode.INCONSISTENT_CLUSTER_ID)
        error = self._validate_leader_only_request(request.current_leader_epoch)
        if error is not None:
            return self.voter_changes.update_response(error)
        state = self.quorum.state
        assert isinstance(state, LeaderState)
        return self.voter_changes.update(state, inbound, request, now)

    # -- responses ---------------------------------------------------------------------

    def _handle_response(self, event: InboundResponse, now: int) -> bool:
        response = event.response
        match response:
            case FetchResponse():
                return self._handle_fetch_response(event.source, response, now)
            case VoteResponse():
                return self._handle_vote_response(event.source, response, now)
            case BeginQuorumEpochResponse() | EndQuorumEpochResponse():
                return self._handle_epoch_ack_response(event.source, response, now)
            case FetchSnapshotResponse():
                return self._handle_fetch_snapshot_response(response, now)
            case ApiVersionsResponse():
                state = self.quorum.state
                if not isinstance(state, LeaderState):
                    return True
                return self.voter_changes.api_versions_received(state, event.source, response, now)
            case UpdateRaftVoterResponse():
                return self._handle_update_voter_response(response, now)
            case AddRaftVoterResponse() | RemoveRaftVoterResponse():
                return response.error in (
                    ErrorCode.NONE,
                    ErrorCode.REQUEST_TIMED_OUT,
                    ErrorCode.DUPLICATE_VOTER,
                    ErrorCode.VOTER_NOT_FOUND,
                )
            case DescribeQuorumResponse():
                return True

    def _handle_top_level_error(self, error: int) -> bool:
        if error == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            raise RuntimeError("Received cluster authorization error in a Raft response")
        return False  # BROKER_NOT_AVAILABLE and the rest: back off

    def _has_consistent_leader(self, epoch: int, leader_id: int | None) -> bool:
        if leader_id is not None and leader_id == self.node_id:
            return self.quorum.is_leader()
        return (
            epoch != self.quorum.epoch
            or leader_id is None
            or self.quorum.leader_id is None
            or leader_id == self.quorum.leader_id
        )

    def _maybe_handle_common_response(
        self,
        error: int,
        leader_id: int | None,
        epoch: int,
        endpoints: Endpoints,
        now: int,
    ) -> bool | None:
        """Kafka's ``maybeHandleCommonResponse``: ``None`` lets the API's handler go on;
        ``True``/``False``: handled (ready / back off)."""
        if not endpoints and leader_id is not None:
            endpoints = self.quorum.voters.listeners(leader_id)
        if epoch < self.quorum.epoch or error == ErrorCode.UNKNOWN_LEADER_EPOCH:
            return True
        if (
            epoch > self.quorum.epoch
            or error == ErrorCode.FENCED_LEADER_EPOCH
            or error == ErrorCode.NOT_LEADER_OR_FOLLOWER
        ):
            self._maybe_transition(leader_id, epoch, endpoints, now)
            return True
        if (
            epoch == self.quorum.epoch
            and leader_id is not None
            and leader_id != self.node_id
            and endpoints
            and (not self.quorum.has_leader() or self.quorum.is_unattached())
        ):
            # the leader of this epoch, newly known - or known only by id until now (an
            # Unattached replica whose leader was not among its voters: Kafka after 4.3
            # follows it here too, maybeSwitchObserverFetchToLeader)
            self._transition_to_follower(epoch, leader_id, endpoints, now)
            return _NOT_HANDLED if error == ErrorCode.NONE else True
        if error == ErrorCode.BROKER_NOT_AVAILABLE:
            return False
        if error == ErrorCode.INVALID_VOTER_KEY:
            return True
        if error == ErrorCode.INVALID_REQUEST:
            raise RuntimeError("Received unexpected invalid request error")
        return _NOT_HANDLED

    def _maybe_transition(
        self, leader_id: int | None, epoch: int, endpoints: Endpoints, now: int
    ) -> None:
        if not self._has_consistent_leader(epoch, leader_id):
            raise RuntimeError(
                f"Received request or response with leader {leader_id} and epoch {epoch} which "
                f"is inconsistent with current leader {self.quorum.leader_id} and epoch "
                f"{self.quorum.epoch}"
            )
        if epoch > self.quorum.epoch:
            if leader_id is not None and endpoints:
                self._transition_to_follower(epoch, leader_id, endpoints, now)
            else:
                self._transition_to_unattached(epoch, leader_id, now)
        elif (
            leader_id is not None
            and (not self.quorum.has_leader() or len(endpoints) > len(self.quorum.leader_endpoints))
            and endpoints
            and leader_id != self.node_id
        ):
            self._transition_to_follower(epoch, leader_id, endpoints, now)

    def _handle_vote_response(self, source: Node, response: VoteResponse, now: int) -> bool:
        if response.error == ErrorCode.UNSUPPORTED_VERSION and self.quorum.is_prospective():
            # a voter without pre-vote (Vote v2): run the real election at once
            self._transition_to_candidate(now)
            return True
        decided = self._decide_epoch_response(response, now)
        if decided is not None:
            return decided
        state = self.quorum.state
        if isinstance(state, ProspectiveState | CandidateState):
            if source.id not in {k.id for k in state.voter_set.voter_keys}:
                return True
            if response.vote_granted:
                state.tally.record_vote(source.id, True)
                self._maybe_transition_forward(now)
            else:
                state.tally.record_vote(source.id, False)
                if isinstance(state, ProspectiveState) and state.tally.is_vote_rejected():
                    self._prospective_lost(state, now)
        return True

    def _decide_epoch_response(
        self,
        response: VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse,
        now: int,
    ) -> bool | None:
        """What Vote, BeginQuorumEpoch and EndQuorumEpoch responses share: a top-level
        error, the common errors and leader news, a partition error; ``None`` when the
        API's own handling follows."""
        if response.error != ErrorCode.NONE:
            return self._handle_top_level_error(response.error)
        handled = self._maybe_handle_common_response(
            response.partition_error,
            response.leader_id,
            response.leader_epoch,
            response.leader_endpoints,
            now,
        )
        if handled is not None:
            return handled
        if response.partition_error != ErrorCode.NONE:
            return False
        return None

    def _prospective_lost(self, state: ProspectiveState, now: int) -> None:
        if state.leader_id is not None and state.endpoints:
            self._transition_to_follower(self.quorum.epoch, state.leader_id, state.endpoints, now)
        else:
            self._transition_to_unattached(self.quorum.epoch, state.leader_id, now)

    def _handle_epoch_ack_response(
        self,
        source: Node,
        response: BeginQuorumEpochResponse | EndQuorumEpochResponse,
        now: int,
    ) -> bool:
        """A voter acknowledged this leader's BeginQuorumEpoch or this resigned leader's
        EndQuorumEpoch (Kafka's two handlers, alike but for what is acknowledged)."""
        decided = self._decide_epoch_response(response, now)
        if decided is not None:
            return decided
        state = self.quorum.state
        if isinstance(response, BeginQuorumEpochResponse):
            if isinstance(state, LeaderState) and source.id in state.voter_states:
                state.add_acknowledgement_from(source.id)
        elif isinstance(state, ResignedState) and source.id in state.voters:
            state.acknowledge_resignation(source.id)
        return True

    def _handle_update_voter_response(self, response: UpdateRaftVoterResponse, now: int) -> bool:
        endpoints = Endpoints()
        if response.leader_id is not None and response.leader_host:
            endpoints = Endpoints.single(self.listener, response.leader_host, response.leader_port)
        handled = self._maybe_handle_common_response(
            response.error, response.leader_id, response.leader_epoch, endpoints, now
        )
        if handled is not None:
            return handled
        if response.error in (ErrorCode.NONE, ErrorCode.UNSUPPORTED_VERSION):
            state = self.quorum.state
            if isinstance(state, FollowerState):
                state.has_updated_leader = True
                state.reset_fetch_timeout_for_successful_fetch(now)
            return True
        return False

    # -- polling -----------------------------------------------------------------------

    def _poll_current_state(self, now: int) -> int:
        state = self.quorum.state
        match state:
            case LeaderState():
                return self._poll_leader(state, now)
            case CandidateState():
                return self._poll_candidate(state, now)
            case ProspectiveState():
                return self._poll_prospective(state, now)
            case FollowerState():
                if self.quorum.is_voter():
                    return self._poll_follower_as_voter(state, now)
                return self._poll_follower_as_observer(state, now)
            case UnattachedState():
                return self._poll_unattached(state, now)
            case ResignedState():
                return self._poll_resigned(state, now)
        raise RuntimeError(f"Unexpected quorum state {state}")

    def _poll_leader(self, state: LeaderState, now: int) -> int:
        until_check_quorum = state.time_until_check_quorum_expires(now)
        if self._shutdown_deadline is not None or state.resign_requested or until_check_quorum == 0:
            self._transition_to_resigned(state.non_leader_voters_by_descending_fetch_offset(), now)
            return 0
        until_voter_change = self.voter_changes.expire(state, now)
        until_drain = self._maybe_append_batches(state, now)
        until_begin_quorum = self._maybe_send_begin_quorum_epoch(state, now)
        return min(until_check_quorum, until_voter_change, until_drain, until_begin_quorum)

    def _maybe_append_batches(self, state: LeaderState, now: int) -> int:
        accumulator = state.accumulator
        if accumulator.time_until_drain(now) <= 0:
            for _base, data in accumulator.drain():
                self.log.append_as_leader(data, state.epoch)
                self.control.apply(data)
            self._update_leader_end_offset(state, now)
            self.log.flush()
        return accumulator.time_until_drain(now)

    def _maybe_send_begin_quorum_epoch(self, state: LeaderState, now: int) -> int:
        wait = state.time_until_begin_quorum_epoch(now)
        if wait > 0:
            return wait
        voters = self.quorum.voters
        wait = 1 << 62
        for key in state.need_to_send_begin_quorum(now):
            node = voters.voter_node(key.id, self.listener)
            if node is None:
                continue
            _, backoff = self._maybe_send_request(
                now,
                node,
                lambda key=key: BeginQuorumEpochRequest(  # type: ignore[misc]
                    cluster_id=self.cluster_id,
                    leader_id=state.local.key.id,
                    leader_epoch=state.epoch,
                    leader_endpoints=state.local.listeners,
                    voter_key=key,
                ),
            )
            wait = min(wait, backoff)
        state.reset_begin_quorum_timer(now)
        return min(wait, state.time_until_begin_quorum_epoch(now))

    def _maybe_send_vote_requests(self, state: ProspectiveState | CandidateState, now: int) -> int:
        if state.tally.is_vote_rejected():
            return 1 << 62
        pre_vote = isinstance(state, ProspectiveState)
        voters = self.quorum.voters
        end = self._end_offset()
        wait = 1 << 62
        local = self.quorum.local_key()
        for key in state.tally.unrecorded_voters():
            node = voters.voter_node(key.id, self.listener)
            if node is None:
                raise RuntimeError(
                    f"Unknown endpoint for voter id {key.id} for listener name {self.listener}"
                )
            _, backoff = self._maybe_send_request(
                now,
                node,
                lambda key=key: VoteRequest(  # type: ignore[misc]
                    cluster_id=self.cluster_id,
                    replica_key=local,
                    replica_epoch=self.quorum.epoch,
                    last_offset_epoch=end.epoch,
                    last_offset=end.offset,
                    pre_vote=pre_vote,
                    voter_key=key,
                ),
            )
            wait = min(wait, backoff)
        return wait

    def _poll_candidate(self, state: CandidateState, now: int) -> int:
        if self._shutdown_deadline is not None:
            return min(self._shutdown_deadline - now, self._maybe_send_vote_requests(state, now))
        if now >= state.election_deadline:
            logger.info(
                "node %s: election was not granted, transitioning to prospective", self.node_id
            )
            self._transition_to_prospective(now)
            return 0
        return min(self._maybe_send_vote_requests(state, now), state.election_deadline - now)

    def _poll_prospective(self, state: ProspectiveState, now: int) -> int:
        if self._shutdown_deadline is not None:
            return min(self._shutdown_deadline - now, self._maybe_send_vote_requests(state, now))
        if now >= state.election_deadline:
            self._prospective_lost(state, now)
            return 0
        return min(self._maybe_send_vote_requests(state, now), state.election_deadline - now)

    def _should_send_update_voter(self, state: FollowerState) -> bool:
        version = self.control.last_kraft_version()
        if version >= 1:
            return self.quorum.voters.voter_node_needs_update(self.quorum.local_voter_node())
        return not state.has_updated_leader

    def _poll_follower_as_voter(self, state: FollowerState, now: int) -> int:
        if self._shutdown_deadline is not None:
            return 0
        if now >= state.fetch_deadline:
            logger.info("node %s: fetch timeout, transitioning to prospective", self.node_id)
            self._transition_to_prospective(now)
            return 0
        if now >= state.update_voter_deadline:
            if self._should_send_update_voter(state):
                node = state.leader_node(self.listener)
                local = self.quorum.local_voter_node()
                sent, backoff = self._maybe_send_request(
                    now,
                    node,
                    lambda: UpdateRaftVoterRequest(
                        cluster_id=self.cluster_id,
                        current_leader_epoch=self.quorum.epoch,
                        voter_key=local.key,
                        listeners=local.listeners,
                        min_kraft_version=local.min_kraft_version,
                        max_kraft_version=local.max_kraft_version,
                    ),
                )
                if sent:
                    state.reset_update_voter_period(now)
            else:
                state.reset_update_voter_period(now)
                backoff = self._maybe_send_fetch_to_best_node(state, now)
        else:
            backoff = self._maybe_send_fetch_to_best_node(state, now)
        return min(backoff, state.fetch_deadline - now)

    def _poll_follower_as_observer(self, state: FollowerState, now: int) -> int:
        if self._shutdown_deadline is not None:
            return 0
        if (
            self.control.last_kraft_version() >= 1
            and self._can_become_voter
            and self.config.auto_join
            and now >= state.update_voter_deadline
        ):
            # controller.quorum.auto.join.enable: join the voters (replacing an old
            # directory of this id first)
            local = self.quorum.local_voter_node()
            voters = self.quorum.voters
            old = voters.voter_key(local.key.id)
            node = state.leader_node(self.listener)
            if old is not None:
                request: RaftRequest = RemoveRaftVoterRequest(self.cluster_id, old)
            else:
                request = AddRaftVoterRequest(
                    self.cluster_id,
                    self.config.request_timeout_ms,
                    local.key,
                    local.listeners,
                    ack_when_committed=False,
                )
            sent, wait = self._maybe_send_request(now, node, lambda: request)
            if sent:
                state.reset_update_voter_period(now)
            return wait
        return self._maybe_send_fetch_to_best_node(state, now)

    def _maybe_send_fetch_to_best_node(self, state: FollowerState, now: int) -> int:
        leader = state.leader_node(self.listener)
        if self.requests.has_request_timed_out(leader, now):
            self.requests.reset(leader)
            backoff = self._maybe_send_fetch_to_any_bootstrap(now)
        elif self.requests.is_backing_off(leader, now):
            backoff = self._maybe_send_fetch_to_any_bootstrap(now)
        elif not self.requests.has_any_inflight_request(now):
            backoff = self._maybe_send_fetch_or_fetch_snapshot(state, now)
        else:
            backoff = self.requests.backoff_before_available_bootstrap_server(now)
        return backoff

    def _maybe_send_fetch_or_fetch_snapshot(self, state: FollowerState, now: int) -> int:
        writer = state.fetching_snapshot
        node = state.leader_node(self.listener)
        if writer is not None:
            snapshot_id, size = writer.snapshot_id, writer.size
            return self._maybe_send_request(
                now, node, lambda: self._build_fetch_snapshot_request(snapshot_id, size)
            )[1]
        return self._maybe_send_request(now, node, self._build_fetch_request)[1]

    def _maybe_send_fetch_to_any_bootstrap(self, now: int) -> int:
        node = self.requests.find_ready_bootstrap_server(now)
        if node is None:
            return self.requests.backoff_before_available_bootstrap_server(now)
        return self._maybe_send_request(now, node, self._build_fetch_request)[1]

    def _poll_unattached(self, state: UnattachedState, now: int) -> int:
        if self.quorum.is_voter():
            if self._shutdown_deadline is not None:
                return max(0, self._shutdown_deadline - now)
            if now >= state.election_deadline:
                self._transition_to_prospective(now)
                return 0
        backoff = self._maybe_send_fetch_to_any_bootstrap(now)
        return min(backoff, max(0, state.election_deadline - now))

    def _poll_resigned(self, state: ResignedState, now: int) -> int:
        voters = self.quorum.voters
        wait = 1 << 62
        for voter_id in sorted(state.unacked):
            node = voters.voter_node(voter_id, self.listener)
            if node is None:
                continue
            _, backoff = self._maybe_send_request(
                now,
                node,
                lambda: EndQuorumEpochRequest(
                    cluster_id=self.cluster_id,
                    leader_id=state.local_id,
                    leader_epoch=state.epoch,
                    preferred_candidates=state.preferred_successors,
                    leader_endpoints=state.endpoints,
                ),
            )
            wait = min(wait, backoff)
        if self._shutdown_deadline is not None:
            return min(wait, max(0, self._shutdown_deadline - now))
        if now >= state.election_deadline:
            self._transition_to_unattached(self.quorum.epoch + 1, None, now)
            return 0
        return min(wait, state.election_deadline - now)

    def _maybe_complete_shutdown(self, now: int) -> bool:
        if self._shutdown_deadline is None or self.shutdown_complete:
            return self.shutdown_complete
        if (
            now >= self._shutdown_deadline
            or self.quorum.is_observer()
            or self.quorum.is_only_voter()
            or self.quorum.has_remote_leader()
        ):
            self.shutdown_complete = True
            self.log.flush()
            return True
        return False
