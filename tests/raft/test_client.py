"""The Raft client request by request (the role of Kafka's ``KafkaRaftClientTest`` and
``RaftClientTestContext``): Kafka's error codes for stale epochs, other clusters,
invalid or misdirected requests, unknown snapshots and voters - each leaving the
replica's state unchanged - and the election, commit and fetch rules seen from one
replica."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from kafkacore.protocol.errors import ErrorCode
from kafkacore.raft import (
    Endpoints,
    MemoryQuorumStateStore,
    MemoryRaftLog,
    Node,
    OffsetAndEpoch,
    QuorumConfig,
    RaftClient,
    ReplicaKey,
    VoterNode,
    VoterSet,
)
from kafkacore.raft.messages import (
    AddRaftVoterRequest,
    BeginQuorumEpochRequest,
    DescribeQuorumRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    InboundRequest,
    InboundResponse,
    OutboundRequest,
    OutboundResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    UpdateRaftVoterRequest,
    VoteRequest,
    VoteResponse,
)
from kafkacore.raft.records import build_data_batch
from kafkacore.raft.snapshots import build_snapshot

LISTENER = "CONTROLLER"
CLUSTER = "test-cluster"
DIRS = {i: uuid.UUID(int=1000 + i) for i in range(1, 6)}


def endpoints(node_id: int) -> Endpoints:
    return Endpoints.single(LISTENER, f"node{node_id}", 9000 + node_id)


def node(node_id: int) -> Node:
    return Node(node_id, f"node{node_id}", 9000 + node_id)


@dataclass
class Context:
    """One replica (id 1 of voters 1-3) driven request by request."""

    dynamic: bool = False
    now: int = 1_000
    log: MemoryRaftLog = field(default_factory=MemoryRaftLog)
    store: MemoryQuorumStateStore = field(default_factory=MemoryQuorumStateStore)
    client: RaftClient = field(init=False)
    sent: list[OutboundRequest] = field(default_factory=list)
    _correlation: int = 1000

    def __post_init__(self) -> None:
        voters = VoterSet.of(
            VoterNode(ReplicaKey(i, DIRS[i] if self.dynamic else None), endpoints(i), 0, 1)
            for i in (1, 2, 3)
        )
        if self.dynamic:
            writer = self.log.create_snapshot_unchecked(OffsetAndEpoch(0, 0))
            assert writer is not None
            writer.append(
                build_snapshot(
                    OffsetAndEpoch(0, 0),
                    [],
                    timestamp_ms=0,
                    last_contained_log_timestamp=-1,
                    kraft_version=1,
                    voters=voters,
                )
            )
            writer.freeze()
        self.client = RaftClient(
            node_id=1,
            directory_id=DIRS[1],
            cluster_id=CLUSTER,
            log=self.log,
            store=self.store,
            config=QuorumConfig(),
            static_voters=VoterSet.empty() if self.dynamic else voters,
            bootstrap_servers=[node(i) for i in (1, 2, 3)],
            listener=LISTENER,
            local_listeners=endpoints(1),
            rng=random.Random(7),
        )
        self.client.initialize(self.now)
        self.poll()

    def poll(self) -> list[OutboundResponse]:
        for _ in range(10):  # a transition asks to be polled again at once
            if self.client.poll(self.now) > 0:
                break
        responses = []
        for message in self.client.take_outbound():
            if isinstance(message, OutboundRequest):
                self.sent.append(message)
            else:
                responses.append(message)
        return responses

    def advance(self, ms: int) -> None:
        self.now += ms
        self.poll()

    def request(self, request: RaftRequest) -> RaftResponse | None:
        """``request`` from outside; its response, or ``None`` if it was held."""
        self._correlation += 1
        self.client.handle(InboundRequest(self._correlation, request, "test"), self.now)
        for response in self.poll():
            if response.correlation_id == self._correlation:
                return response.response
        return None

    def respond(self, sent: OutboundRequest, response: RaftResponse) -> None:
        self.client.handle(
            InboundResponse(sent.destination, sent.correlation_id, response), self.now
        )
        self.poll()

    def take(self, kind: type) -> list[OutboundRequest]:
        found = [s for s in self.sent if isinstance(s.request, kind)]
        self.sent = [s for s in self.sent if not isinstance(s.request, kind)]
        return found

    def become_leader(self) -> None:
        """Time out, win the pre-vote, then the vote."""
        self.advance(3000)
        assert self.client.state_name == "Prospective"
        for sent in self.take(VoteRequest):
            assert sent.request.pre_vote  # type: ignore[union-attr]
            self.respond(sent, VoteResponse(leader_epoch=self.client.epoch, vote_granted=True))
        assert self.client.state_name in ("Candidate", "Leader")
        for sent in self.take(VoteRequest):
            assert not sent.request.pre_vote  # type: ignore[union-attr]
            self.respond(sent, VoteResponse(leader_epoch=self.client.epoch, vote_granted=True))
        assert self.client.is_leader()
        self.poll()

    def snapshot(self) -> tuple[Any, ...]:
        """What must not change when a request is refused."""
        quorum = self.client.quorum
        return (
            quorum.state.name,
            quorum.epoch,
            quorum.leader_id,
            quorum.voted_key,
            self.store.writes,
            self.log.end_offset,
        )


def vote(
    epoch: int,
    *,
    replica: int = 2,
    last_epoch: int = 0,
    last_offset: int = 0,
    pre_vote: bool = False,
    cluster: str | None = CLUSTER,
    voter: ReplicaKey | None = None,
) -> VoteRequest:
    return VoteRequest(
        cluster,
        ReplicaKey(replica, DIRS.get(replica)),
        epoch,
        last_epoch,
        last_offset,
        pre_vote,
        voter,
    )


def fetch(
    epoch: int, offset: int, last_epoch: int, replica: int = 2, **kwargs: Any
) -> FetchRequest:
    return FetchRequest(
        CLUSTER,
        ReplicaKey(replica, DIRS.get(replica)),
        epoch,
        offset,
        last_epoch,
        1 << 20,
        kwargs.pop("max_wait_ms", 0),
        **kwargs,
    )


# -- votes ------------------------------------------------------------------------------


def test_a_granted_vote_is_persisted_and_binding() -> None:
    ctx = Context()
    response = ctx.request(vote(5))
    assert response == VoteResponse(leader_epoch=5, vote_granted=True)
    stored = ctx.store.read()
    assert stored is not None and stored.epoch == 5 and stored.voted_key == ReplicaKey(2, DIRS[2])
    # another candidate of the same epoch is refused; the same one is granted again
    assert ctx.request(vote(5, replica=3)) == VoteResponse(leader_epoch=5, vote_granted=False)
    assert ctx.request(vote(5)) == VoteResponse(leader_epoch=5, vote_granted=True)


def test_a_vote_for_a_stale_log_is_refused() -> None:
    ctx = Context()
    ctx.log.append_as_leader(build_data_batch(0, 3, 1, [b"x"]), 3)
    assert ctx.request(vote(5, last_epoch=2, last_offset=10)) == VoteResponse(
        leader_epoch=5, vote_granted=False
    )
    assert ctx.client.quorum.voted_key is None


@pytest.mark.parametrize(
    ("request_", "error", "top_level"),
    [
        (vote(0, cluster="other"), ErrorCode.INCONSISTENT_CLUSTER_ID, True),
        (vote(5, last_epoch=5), ErrorCode.INVALID_REQUEST, False),  # last epoch >= its epoch
        (vote(5, last_offset=-1), ErrorCode.INVALID_REQUEST, False),
        (vote(5, replica=-1), ErrorCode.INVALID_REQUEST, False),
    ],
)
def test_invalid_votes_get_kafkas_errors_and_change_nothing(
    request_: VoteRequest, error: int, top_level: bool
) -> None:
    ctx = Context()
    before = ctx.snapshot()
    response = ctx.request(request_)
    assert isinstance(response, VoteResponse) and not response.vote_granted
    assert (response.error if top_level else response.partition_error) == error
    assert ctx.snapshot() == before


def test_a_vote_of_an_older_epoch_is_fenced() -> None:
    ctx = Context()
    assert ctx.request(vote(4)) is not None  # now in epoch 4, voted for 2
    before = ctx.snapshot()
    response = ctx.request(vote(3, replica=3))
    assert response == VoteResponse(
        partition_error=ErrorCode.FENCED_LEADER_EPOCH, leader_epoch=4, vote_granted=False
    )
    assert ctx.snapshot() == before


def test_a_vote_meant_for_another_replica_gets_invalid_voter_key() -> None:
    ctx = Context()
    response = ctx.request(vote(5, voter=ReplicaKey(1, uuid.UUID(int=99))))
    assert isinstance(response, VoteResponse)
    assert response.partition_error == ErrorCode.INVALID_VOTER_KEY and not response.vote_granted
    assert ctx.client.quorum.voted_key is None


def test_a_pre_vote_changes_no_vote() -> None:
    ctx = Context()
    response = ctx.request(vote(0, pre_vote=True))
    assert response == VoteResponse(leader_epoch=0, vote_granted=True)
    assert ctx.client.quorum.voted_key is None and ctx.client.epoch == 0


def test_a_follower_refuses_pre_votes_while_its_leader_is_alive() -> None:
    ctx = Context()
    ctx.request(BeginQuorumEpochRequest(CLUSTER, 2, 4, endpoints(2)))
    assert ctx.client.state_name == "Follower"
    assert ctx.request(vote(4, replica=3, pre_vote=True)).vote_granted  # type: ignore[union-attr]
    sent = [s for s in ctx.take(FetchRequest) if s.destination.id == 2][-1]
    ctx.respond(sent, FetchResponse(high_watermark=0, leader_id=2, leader_epoch=4))
    # it has heard from its leader: no pre-vote now (KIP-996)
    assert not ctx.request(vote(4, replica=3, pre_vote=True)).vote_granted  # type: ignore[union-attr]


# -- leadership ---------------------------------------------------------------------------


def test_election_then_the_leader_change_record_starts_the_epoch() -> None:
    ctx = Context()
    ctx.become_leader()
    epoch = ctx.client.epoch
    assert epoch == 1 and ctx.log.end_offset == 1 and ctx.log.last_fetched_epoch == 1
    assert ctx.client.high_watermark is None  # nothing of its epoch is committed yet
    stored = ctx.store.read()
    assert stored is not None and stored.leader_id == 1 and stored.voted_key is None
    # BeginQuorumEpoch goes to the voters that have not fetched
    assert {s.destination.id for s in ctx.take(BeginQuorumEpochRequest)} == {2, 3}


def test_the_leader_commits_on_a_majority_and_only_its_own_epoch() -> None:
    ctx = Context()
    ctx.log.append_as_leader(build_data_batch(0, 0, 1, [b"old-1", b"old-2"]), 0)  # epoch 0
    ctx.become_leader()  # epoch 1 starts at 2: LeaderChange at offset 2
    assert ctx.request(fetch(1, 2, 0)).high_watermark == -1  # type: ignore[union-attr]
    # a majority holds the old entries only: not enough to commit them
    assert ctx.client.high_watermark is None
    response = ctx.request(fetch(1, 3, 1))
    assert isinstance(response, FetchResponse) and response.high_watermark == 3
    assert ctx.client.high_watermark == 3 == ctx.log.high_watermark
    # a lagging voter does not move the HW back
    ctx.request(fetch(1, 2, 0, replica=3))
    assert ctx.client.high_watermark == 3


def test_fetches_are_fenced_by_epoch() -> None:
    ctx = Context()
    ctx.become_leader()
    before = ctx.snapshot()
    for request_, error in [
        (fetch(0, 0, 0), ErrorCode.FENCED_LEADER_EPOCH),
        (fetch(2, 0, 0), ErrorCode.UNKNOWN_LEADER_EPOCH),
        (fetch(1, 0, 2), ErrorCode.INVALID_REQUEST),  # last fetched epoch > current
        (fetch(1, -1, 0), ErrorCode.INVALID_REQUEST),
    ]:
        response = ctx.request(request_)
        assert isinstance(response, FetchResponse), request_
        assert response.partition_error == error, (request_, response)
        assert (response.leader_id, response.leader_epoch) == (1, 1)
        assert response.records == b""
    assert ctx.snapshot() == before
    assert ctx.request(
        FetchRequest("other", ReplicaKey(2, DIRS[2]), 1, 0, 0, 100, 0)
    ) == FetchResponse(error=ErrorCode.INCONSISTENT_CLUSTER_ID)


def test_a_follower_answers_fetches_with_its_leader() -> None:
    ctx = Context()
    ctx.request(BeginQuorumEpochRequest(CLUSTER, 2, 4, endpoints(2)))
    response = ctx.request(fetch(4, 0, 0, replica=3))
    assert isinstance(response, FetchResponse)
    assert response.partition_error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (response.leader_id, response.leader_epoch) == (2, 4)
    assert response.leader_endpoints == endpoints(2)


def test_a_diverging_follower_is_told_where_to_truncate() -> None:
    ctx = Context()
    ctx.log.append_as_leader(build_data_batch(0, 1, 1, [b"a", b"b", b"c"]), 1)
    ctx.request(vote(2, last_epoch=1, last_offset=3))  # epoch 2
    ctx.become_leader()  # epoch 3, LeaderChange at 3
    # the follower has epoch 2 entries this leader never had
    response = ctx.request(fetch(3, 5, 2))
    assert isinstance(response, FetchResponse)
    assert response.diverging == OffsetAndEpoch(3, 1) and response.records == b""


def test_a_follower_below_the_log_start_is_sent_to_the_snapshot() -> None:
    ctx = Context()
    ctx.become_leader()
    ctx.client.append([b"v%d" % i for i in range(10)], ctx.now)
    ctx.advance(100)
    ctx.request(fetch(1, ctx.log.end_offset, 1))
    hw = ctx.client.high_watermark
    assert hw == ctx.log.end_offset == 11
    snapshot_id = OffsetAndEpoch(hw, 1)
    assert ctx.client.create_snapshot(
        snapshot_id, [b"state"], last_contained_log_timestamp=1, now=ctx.now
    )
    assert ctx.client.delete_log_before_snapshot(snapshot_id)
    response = ctx.request(fetch(1, 0, 0, replica=3))
    assert isinstance(response, FetchResponse) and response.snapshot_id == snapshot_id
    request = FetchSnapshotRequest(CLUSTER, ReplicaKey(3, DIRS[3]), 1, snapshot_id, 0, 64)
    chunk = ctx.request(request)
    data = ctx.log.read_snapshot(snapshot_id)
    assert data is not None
    assert chunk.data == data[:64] and chunk.size == len(data)  # type: ignore[union-attr]
    unknown = FetchSnapshotRequest(CLUSTER, ReplicaKey(3, DIRS[3]), 1, OffsetAndEpoch(5, 1), 0, 64)
    assert ctx.request(unknown).partition_error == ErrorCode.SNAPSHOT_NOT_FOUND  # type: ignore[union-attr]
    beyond = FetchSnapshotRequest(CLUSTER, ReplicaKey(3, DIRS[3]), 1, snapshot_id, len(data), 64)
    assert ctx.request(beyond).partition_error == ErrorCode.POSITION_OUT_OF_RANGE  # type: ignore[union-attr]
    stale = FetchSnapshotRequest(CLUSTER, ReplicaKey(3, DIRS[3]), 0, snapshot_id, 0, 64)
    assert ctx.request(stale).partition_error == ErrorCode.FENCED_LEADER_EPOCH  # type: ignore[union-attr]


def test_begin_and_end_quorum_epoch_are_fenced_and_followed() -> None:
    ctx = Context()
    ctx.request(vote(6))
    before = ctx.snapshot()
    response = ctx.request(BeginQuorumEpochRequest(CLUSTER, 2, 5, endpoints(2)))
    assert response.partition_error == ErrorCode.FENCED_LEADER_EPOCH  # type: ignore[union-attr]
    response = ctx.request(EndQuorumEpochRequest(CLUSTER, 2, 5, ()))
    assert response.partition_error == ErrorCode.FENCED_LEADER_EPOCH  # type: ignore[union-attr]
    assert ctx.snapshot() == before
    ctx.request(BeginQuorumEpochRequest(CLUSTER, 2, 6, endpoints(2)))
    assert ctx.client.leader_and_epoch.leader_id == 2 and ctx.client.state_name == "Follower"
    # the leader resigns naming this replica first: it runs for election at once
    ctx.request(EndQuorumEpochRequest(CLUSTER, 2, 6, (ReplicaKey(1, DIRS[1]), ReplicaKey(3))))
    ctx.advance(1)
    assert ctx.client.state_name == "Prospective"


def test_describe_quorum_on_the_leader_only() -> None:
    ctx = Context()
    response = ctx.request(DescribeQuorumRequest())
    assert response.partition_error == ErrorCode.NOT_LEADER_OR_FOLLOWER  # type: ignore[union-attr]
    ctx.become_leader()
    ctx.request(fetch(1, 1, 1))
    response = ctx.request(DescribeQuorumRequest())
    assert response.leader_id == 1 and response.high_watermark == 1  # type: ignore[union-attr]
    rows = {r.replica_key.id: r.log_end_offset for r in response.voters}  # type: ignore[union-attr]
    assert rows == {1: 1, 2: 1, 3: -1}


# -- voter changes ----------------------------------------------------------------------------


def test_voter_changes_need_kraft_version_1() -> None:
    ctx = Context()
    ctx.become_leader()
    ctx.request(fetch(1, 1, 1))
    response = ctx.request(AddRaftVoterRequest(CLUSTER, 1000, ReplicaKey(4, DIRS[4]), endpoints(4)))
    assert response.error == ErrorCode.UNSUPPORTED_VERSION  # type: ignore[union-attr]
    # an UpdateRaftVoter at kraft.version 0 writes nothing
    end = ctx.log.end_offset
    response = ctx.request(
        UpdateRaftVoterRequest(CLUSTER, 1, ReplicaKey(2, DIRS[2]), endpoints(2), 0, 1)
    )
    assert response.error == ErrorCode.NONE and ctx.log.end_offset == end  # type: ignore[union-attr]


def test_add_and_remove_voters_refusals() -> None:
    ctx = Context(dynamic=True)
    ctx.become_leader()
    add = AddRaftVoterRequest(CLUSTER, 1000, ReplicaKey(4, DIRS[4]), endpoints(4))
    # before the leader committed its epoch: REQUEST_TIMED_OUT
    assert ctx.request(add).error == ErrorCode.REQUEST_TIMED_OUT  # type: ignore[union-attr]
    ctx.request(fetch(1, ctx.log.end_offset, 1))
    assert ctx.client.high_watermark == ctx.log.end_offset
    end = ctx.log.end_offset
    duplicate = AddRaftVoterRequest(CLUSTER, 1000, ReplicaKey(2, DIRS[2]), endpoints(2))
    assert ctx.request(duplicate).error == ErrorCode.DUPLICATE_VOTER  # type: ignore[union-attr]
    unknown = RemoveRaftVoterRequest(CLUSTER, ReplicaKey(4, DIRS[4]))
    assert ctx.request(unknown).error == ErrorCode.VOTER_NOT_FOUND  # type: ignore[union-attr]
    no_directory = RemoveRaftVoterRequest(CLUSTER, ReplicaKey(2))
    assert ctx.request(no_directory).error == ErrorCode.INVALID_REQUEST  # type: ignore[union-attr]
    other = AddRaftVoterRequest("other", 1000, ReplicaKey(4, DIRS[4]), endpoints(4))
    assert ctx.request(other).error == ErrorCode.INCONSISTENT_CLUSTER_ID  # type: ignore[union-attr]
    assert ctx.log.end_offset == end and ctx.client.quorum.voters.voter_ids == {1, 2, 3}


def test_remove_a_voter_commits_with_the_new_majority() -> None:
    ctx = Context(dynamic=True)
    ctx.become_leader()
    ctx.request(fetch(1, ctx.log.end_offset, 1))
    remove = RemoveRaftVoterRequest(CLUSTER, ReplicaKey(3, DIRS[3]))
    assert ctx.request(remove) is None  # held until the VotersRecord commits
    ctx.advance(1)
    assert ctx.client.quorum.voters.voter_ids == {1, 2}  # in force once written
    # a second change waits for the first
    second = RemoveRaftVoterRequest(CLUSTER, ReplicaKey(2, DIRS[2]))
    assert ctx.request(second).error == ErrorCode.REQUEST_TIMED_OUT  # type: ignore[union-attr]
    ctx.client.handle(InboundRequest(77, fetch(1, ctx.log.end_offset, 1), "test"), ctx.now)
    answers = {r.correlation_id: r.response for r in ctx.poll()}
    assert answers[77].high_watermark == ctx.log.end_offset  # type: ignore[union-attr]
    removed = [r for cid, r in answers.items() if cid != 77]
    assert [r.error for r in removed] == [ErrorCode.NONE]  # type: ignore[union-attr]


def test_a_request_that_makes_no_sense_is_refused_and_changes_nothing() -> None:
    """A Fetch claiming to come from the leader itself, a BeginQuorumEpoch naming this
    replica as someone else's leader: UNKNOWN_SERVER_ERROR, and the replica goes on."""
    ctx = Context()
    ctx.become_leader()
    before = ctx.snapshot()
    response = ctx.request(fetch(1, 0, 0, replica=1))
    assert isinstance(response, FetchResponse) and response.error == ErrorCode.UNKNOWN_SERVER_ERROR
    response = ctx.request(BeginQuorumEpochRequest(CLUSTER, 1, 9, endpoints(1)))
    assert response.error == ErrorCode.UNKNOWN_SERVER_ERROR  # type: ignore[union-attr]
    assert ctx.snapshot() == before and ctx.client.failed_requests == 2
    assert ctx.request(fetch(1, 1, 1)).high_watermark == 1  # type: ignore[union-attr]
