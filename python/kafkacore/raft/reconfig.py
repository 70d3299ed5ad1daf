"""Changes to the voter set, one at a time (KIP-853; Kafka's ``AddVoterHandler``,
``RemoveVoterHandler`` and ``UpdateVoterHandler``).

The leader refuses a change while another is pending, before its high watermark is known
(it has not yet fenced earlier leaders' changes), at kraft.version 0, and while the last
VotersRecord is uncommitted. An add first asks the new voter for its supported
kraft.version (ApiVersions) and requires it to have caught up as an observer. Each change
is one VotersRecord appended as a control batch; the new set is in force once written
and the change completes when it commits - under the new majority. A leader that removed
itself resigns then.

Not thread-safe (the Raft client's).
"""

from __future__ import annotations

from collections.abc import Callable

from kafkacore.protocol.errors import ErrorCode
from kafkacore.protocol.messages.raft_records import ControlRecordType
from kafkacore.raft.config import QuorumConfig
from kafkacore.raft.control import KRaftControlRecordStateMachine
from kafkacore.raft.leader import LeaderState, PendingVoterChange
from kafkacore.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    ApiVersionsRequest,
    ApiVersionsResponse,
    InboundRequest,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
)
from kafkacore.raft.quorum import QuorumState
from kafkacore.raft.records import ControlRecord
from kafkacore.raft.types import Node
from kafkacore.raft.voters import VoterNode, VoterSet

__all__ = ["VoterChanges"]

_FOREVER = 1 << 62


class VoterChanges:
    """The leader's side of Add/Remove/UpdateRaftVoter. ``send(now, node, build)`` sends a
    request as the client does (``(sent, wait ms)``); ``respond`` answers an inbound
    request."""

    def __init__(
        self,
        *,
        quorum: QuorumState,
        control: KRaftControlRecordStateMachine,
        config: QuorumConfig,
        listener: str,
        send: Callable[[int, Node, Callable[[], RaftRequest]], tuple[bool, int]],
        respond: Callable[[InboundRequest, RaftResponse], None],
    ) -> None:
        self._quorum = quorum
        self._control = control
        self._config = config
        self._listener = listener
        self._send = send
        self._respond = respond

    def high_watermark_updated(self, state: LeaderState, high_watermark: int) -> None:
        change = state.pending_voter_change
        if (
            change is not None
            and change.commit_offset is not None
            and high_watermark > change.commit_offset
        ):
            self.complete(state, ErrorCode.NONE, None)

    def _refusal(self, state: LeaderState, now: int) -> tuple[int, str] | None:
        """The common refusals of Add/Remove/UpdateRaftVoter (Kafka's handlers): a change
        in progress, no HW yet, kraft.version 0, an uncommitted VotersRecord."""
        if state.pending_voter_change is not None:
            return (
                ErrorCode.REQUEST_TIMED_OUT,
                "Request timed out waiting for leader to handle previous voter change request",
            )
        if state.high_watermark is None:
            return (
                ErrorCode.REQUEST_TIMED_OUT,
                "Request timed out waiting for leader to establish HWM and fence previous "
                "voter changes",
            )
        version = self._control.last_kraft_version()
        if version < 1:
            return (
                ErrorCode.UNSUPPORTED_VERSION,
                f"Cluster doesn't support adding voter because the kraft.version feature is "
                f"{version}",
            )
        offset = self._control.last_voter_set_offset()
        if offset is None or offset >= state.high_watermark:
            return (
                ErrorCode.REQUEST_TIMED_OUT,
                f"Request timed out waiting for voters to commit the latest voter change at "
                f"{offset} with HWM {state.high_watermark}",
            )
        return None

    def add(
        self, state: LeaderState, inbound: InboundRequest, request: AddRaftVoterRequest, now: int
    ) -> AddRaftVoterResponse | None:
        """AddRaftVoter (Kafka's ``AddVoterHandler``): refusals, then an ApiVersions to the
        new voter; ``None`` while that and the VotersRecord's commit are awaited."""
        if request.voter_key.directory_id is None:
            return AddRaftVoterResponse(
                error=ErrorCode.INVALID_REQUEST,
                error_message="Add voter request didn't include a valid voter",
            )
        address = request.listeners.address(self._listener)
        if address is None:
            return AddRaftVoterResponse(
                error=ErrorCode.INVALID_REQUEST,
                error_message=(
                    f"Add voter request didn't include the endpoint ({request.listeners}) for "
                    f"the default listener {self._listener}"
                ),
            )
        refused = self._refusal(state, now)
        if refused is not None:
            return AddRaftVoterResponse(error=refused[0], error_message=refused[1])
        voters = self._quorum.voters
        if request.voter_key.id in voters.voter_ids:
            return AddRaftVoterResponse(
                error=ErrorCode.DUPLICATE_VOTER,
                error_message=(
                    f"The voter id for {request.voter_key} is already part of the set of "
                    f"voters {sorted(k.id for k in voters.voter_keys)}."
                ),
            )
        destination = Node(request.voter_key.id, *address)
        sent, _ = self._send(now, destination, ApiVersionsRequest)
        if not sent:
            return AddRaftVoterResponse(
                error=ErrorCode.REQUEST_TIMED_OUT,
                error_message=f"New voter {request.voter_key} is not ready to receive requests",
            )
        state.pending_voter_change = PendingVoterChange(
            inbound,
            now + self._config.request_timeout_ms,
            new_voter=VoterNode(request.voter_key, request.listeners),
        )
        return None

    def api_versions_received(
        self, state: LeaderState, source: Node, response: ApiVersionsResponse, now: int
    ) -> bool:
        """The new voter's supported kraft.version (steps 6-8 of Kafka's add)."""
        change = state.pending_voter_change
        if (
            change is None
            or not isinstance(change.inbound.request, AddRaftVoterRequest)
            or change.new_voter is None
            or change.commit_offset is not None
            or change.new_voter.key.id != source.id
        ):
            return True
        key = change.new_voter.key
        if response.error != ErrorCode.NONE:
            self.complete(
                state,
                ErrorCode.REQUEST_TIMED_OUT,
                f"Aborted add voter operation for since API_VERSIONS returned an error "
                f"{response.error}",
            )
            return False
        version = self._control.last_kraft_version()
        supported = response.kraft_versions
        if supported is None or not supported[0] <= version <= supported[1]:
            shown = (
                f"(min: {supported[0]}, max: {supported[1]}" if supported else "(min: 0, max: 0)"
            )
            self.complete(
                state,
                ErrorCode.INVALID_REQUEST,
                f"Aborted add voter operation for {key} since the kraft.version range {shown} "
                f"doesn't support the finalized version {version}",
            )
            return True
        if not state.is_replica_caught_up(key, now):
            self.complete(
                state,
                ErrorCode.REQUEST_TIMED_OUT,
                f"Aborted add voter operation for {key} since it is lagging behind",
            )
            return True
        node = VoterNode(key, change.new_voter.listeners, supported[0], supported[1])
        new_voters = self._quorum.voters.add_voter(node)
        if new_voters is None:
            raise RuntimeError(f"Unable to add {key} to the set of voters {self._quorum.voters}")
        change.commit_offset = self._append_voters_record(state, new_voters, now)
        assert isinstance(change.inbound.request, AddRaftVoterRequest)
        if not change.inbound.request.ack_when_committed:
            self.complete(state, ErrorCode.NONE, None)
        return True

    def _append_voters_record(self, state: LeaderState, voters: VoterSet, now: int) -> int:
        offset = state.accumulator.append_control(
            [ControlRecord(ControlRecordType.KRAFT_VOTERS, voters.to_voters_record())], now
        )
        return offset

    def remove(
        self,
        state: LeaderState,
        inbound: InboundRequest,
        request: RemoveRaftVoterRequest,
        now: int,
    ) -> RemoveRaftVoterResponse | None:
        """RemoveRaftVoter (Kafka's ``RemoveVoterHandler``): ``None`` until the VotersRecord
        without the voter commits."""
        if request.voter_key.directory_id is None:
            return RemoveRaftVoterResponse(
                error=ErrorCode.INVALID_REQUEST,
                error_message="Remove voter request didn't include a valid voter",
            )
        refused = self._refusal(state, now)
        if refused is not None:
            return RemoveRaftVoterResponse(error=refused[0], error_message=refused[1])
        voters = self._quorum.voters
        new_voters = voters.remove_voter(request.voter_key)
        if new_voters is None or not len(new_voters):
            return RemoveRaftVoterResponse(
                error=ErrorCode.VOTER_NOT_FOUND,
                error_message=(
                    f"Cannot remove voter {request.voter_key} from the set of voters "
                    f"{sorted(k.id for k in voters.voter_keys)}"
                ),
            )
        state.pending_voter_change = PendingVoterChange(
            inbound,
            now + self._config.request_timeout_ms,
            commit_offset=self._append_voters_record(state, new_voters, now),
        )
        return None

    def update(
        self,
        state: LeaderState,
        inbound: InboundRequest,
        request: UpdateRaftVoterRequest,
        now: int,
    ) -> UpdateRaftVoterResponse | None:
        """UpdateRaftVoter (Kafka's ``UpdateVoterHandler``): nothing written at kraft.version
        0; else ``None`` until the updated VotersRecord commits."""
        key = request.voter_key
        if (
            key.directory_id is None
            or request.listeners.address(self._listener) is None
            or request.min_kraft_version < 0
            or request.max_kraft_version < 0
            or request.max_kraft_version < request.min_kraft_version
        ):
            return self.update_response(ErrorCode.INVALID_REQUEST)
        node = VoterNode(
            key, request.listeners, request.min_kraft_version, request.max_kraft_version
        )
        if self._control.last_kraft_version() < 1:
            # kraft.version 0: nothing is written; the leader just learns the endpoints
            return self.update_response(ErrorCode.NONE)
        refused = self._refusal(state, now)
        if refused is not None:
            return self.update_response(refused[0])
        version = self._control.last_kraft_version()
        if not node.min_kraft_version <= version <= node.max_kraft_version:
            return self.update_response(ErrorCode.INVALID_REQUEST)
        updated = self._quorum.voters.update_voter(node)
        if updated is None:
            return self.update_response(ErrorCode.VOTER_NOT_FOUND)
        state.pending_voter_change = PendingVoterChange(
            inbound,
            now + self._config.request_timeout_ms,
            commit_offset=self._append_voters_record(state, updated, now),
        )
        return None

    def update_response(self, error: int) -> UpdateRaftVoterResponse:
        host, port = "", 0
        leader = self._quorum.leader_id
        if leader is not None:
            address = self._quorum.leader_endpoints.address(self._listener)
            if address is not None:
                host, port = address
        return UpdateRaftVoterResponse(
            error=error,
            leader_id=leader,
            leader_epoch=self._quorum.epoch,
            leader_host=host,
            leader_port=port,
        )

    def complete(self, state: LeaderState, error: int, message: str | None) -> None:
        change = state.pending_voter_change
        if change is None:
            return
        state.pending_voter_change = None
        response: RaftResponse
        match change.inbound.request:
            case AddRaftVoterRequest():
                response = AddRaftVoterResponse(error=error, error_message=message)
            case RemoveRaftVoterRequest(voter_key=removed):
                response = RemoveRaftVoterResponse(error=error, error_message=message)
                if error == ErrorCode.NONE and removed.matches(state.local.key):
                    state.resign_requested = True  # a leader that removed itself steps down
            case _:
                response = self.update_response(error)
        self._respond(change.inbound, response)

    def expire(self, state: LeaderState, now: int) -> int:
        change = state.pending_voter_change
        if change is None:
            return _FOREVER
        if now >= change.deadline_ms:
            self.complete(
                state, ErrorCode.REQUEST_TIMED_OUT, "Request timed out waiting for the change"
            )
            return _FOREVER
        return change.deadline_ms - now
