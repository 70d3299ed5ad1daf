"""The Raft RPCs as the state machine speaks them: one frozen dataclass per request and
response, version-free (``kafkacore.raft.wire`` maps them to and from Kafka's wire
messages at a version), and the events that carry them in and out of the client.

Only the ``__cluster_metadata-0`` partition exists here: the wire layer checks the topic
and partition of a request and answers a mismatch itself, so a typed message holds the
one partition's fields flat. ``error`` is the top-level error code, ``partition_error``
the partition's.

Immutable: thread-safe.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from kafkacore.protocol.errors import ErrorCode
from kafkacore.raft.types import EMPTY_ENDPOINTS, Endpoints, Node, OffsetAndEpoch, ReplicaKey

__all__ = [
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "BeginQuorumEpochRequest",
    "BeginQuorumEpochResponse",
    "DescribeQuorumRequest",
    "DescribeQuorumResponse",
    "EndQuorumEpochRequest",
    "EndQuorumEpochResponse",
    "FetchRequest",
    "FetchResponse",
    "FetchSnapshotRequest",
    "FetchSnapshotResponse",
    "InboundRequest",
    "InboundResponse",
    "OutboundRequest",
    "OutboundResponse",
    "RaftRequest",
    "RaftResponse",
    "RemoveRaftVoterRequest",
    "RemoveRaftVoterResponse",
    "ReplicaDescription",
    "UpdateRaftVoterRequest",
    "UpdateRaftVoterResponse",
    "VoteRequest",
    "VoteResponse",
    "error_response",
]

_NO_SNAPSHOT = OffsetAndEpoch(-1, -1)

# -- requests ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VoteRequest:
    """A (pre-)vote from ``replica_key`` in ``replica_epoch`` whose log ends at
    ``(last_offset, last_offset_epoch)``; ``voter_key`` is the intended receiver (v1+)."""

    cluster_id: str | None
    replica_key: ReplicaKey
    replica_epoch: int
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool = False
    voter_key: ReplicaKey | None = None


@dataclass(frozen=True)
class BeginQuorumEpochRequest:
    cluster_id: str | None
    leader_id: int
    leader_epoch: int
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS
    voter_key: ReplicaKey | None = None


@dataclass(frozen=True)
class EndQuorumEpochRequest:
    cluster_id: str | None
    leader_id: int
    leader_epoch: int
    preferred_candidates: tuple[ReplicaKey, ...] = ()
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS


@dataclass(frozen=True)
class FetchRequest:
    """A follower's or observer's Fetch of the metadata partition. ``high_watermark`` is
    the fetcher's known HW (v18, -1 unknown; ``None``: not sent, Kafka's default)."""

    cluster_id: str | None
    replica_key: ReplicaKey
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_bytes: int
    max_wait_ms: int
    high_watermark: int | None = None


@dataclass(frozen=True)
class FetchSnapshotRequest:
    cluster_id: str | None
    replica_key: ReplicaKey
    current_leader_epoch: int
    snapshot_id: OffsetAndEpoch
    position: int
    max_bytes: int


@dataclass(frozen=True)
class DescribeQuorumRequest:
    pass


@dataclass(frozen=True)
class AddRaftVoterRequest:
    cluster_id: str | None
    timeout_ms: int
    voter_key: ReplicaKey
    listeners: Endpoints
    ack_when_committed: bool = True


@dataclass(frozen=True)
class RemoveRaftVoterRequest:
    cluster_id: str | None
    voter_key: ReplicaKey


@dataclass(frozen=True)
class UpdateRaftVoterRequest:
    cluster_id: str | None
    current_leader_epoch: int
    voter_key: ReplicaKey
    listeners: Endpoints
    min_kraft_version: int
    max_kraft_version: int


@dataclass(frozen=True)
class ApiVersionsRequest:
    """What the leader asks a voter being added (its supported kraft.version)."""


RaftRequest = (
    VoteRequest
    | BeginQuorumEpochRequest
    | EndQuorumEpochRequest
    | FetchRequest
    | FetchSnapshotRequest
    | DescribeQuorumRequest
    | AddRaftVoterRequest
    | RemoveRaftVoterRequest
    | UpdateRaftVoterRequest
    | ApiVersionsRequest
)

# -- responses ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VoteResponse:
    error: int = ErrorCode.NONE
    partition_error: int = ErrorCode.NONE
    leader_id: int | None = None
    leader_epoch: int = -1
    vote_granted: bool = False
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS


@dataclass(frozen=True)
class BeginQuorumEpochResponse:
    error: int = ErrorCode.NONE
    partition_error: int = ErrorCode.NONE
    leader_id: int | None = None
    leader_epoch: int = -1
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS


@dataclass(frozen=True)
class EndQuorumEpochResponse:
    error: int = ErrorCode.NONE
    partition_error: int = ErrorCode.NONE
    leader_id: int | None = None
    leader_epoch: int = -1
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS


@dataclass(frozen=True)
class FetchResponse:
    """``diverging``: truncate to it (``DivergingEpoch``); ``snapshot_id``: fetch that
    snapshot; else ``records`` (whole batches, possibly none)."""

    error: int = ErrorCode.NONE
    partition_error: int = ErrorCode.NONE
    high_watermark: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    diverging: OffsetAndEpoch | None = None
    snapshot_id: OffsetAndEpoch | None = None
    leader_id: int | None = None
    leader_epoch: int = -1
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS


@dataclass(frozen=True)
class FetchSnapshotResponse:
    error: int = ErrorCode.NONE
    partition_error: int = ErrorCode.NONE
    snapshot_id: OffsetAndEpoch = _NO_SNAPSHOT
    leader_id: int | None = None
    leader_epoch: int = -1
    size: int = 0
    position: int = 0
    data: bytes = b""
    leader_endpoints: Endpoints = EMPTY_ENDPOINTS


@dataclass(frozen=True)
class ReplicaDescription:
    """A row of DescribeQuorum: a voter's or observer's replication state."""

    replica_key: ReplicaKey
    log_end_offset: int
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass(frozen=True)
class DescribeQuorumResponse:
    error: int = ErrorCode.NONE
    partition_error: int = ErrorCode.NONE
    error_message: str | None = None
    leader_id: int | None = None
    leader_epoch: int = -1
    high_watermark: int = -1
    voters: tuple[ReplicaDescription, ...] = ()
    observers: tuple[ReplicaDescription, ...] = ()
    nodes: tuple[tuple[int, Endpoints], ...] = ()


@dataclass(frozen=True)
class AddRaftVoterResponse:
    error: int = ErrorCode.NONE
    error_message: str | None = None


@dataclass(frozen=True)
class RemoveRaftVoterResponse:
    error: int = ErrorCode.NONE
    error_message: str | None = None


@dataclass(frozen=True)
class UpdateRaftVoterResponse:
    error: int = ErrorCode.NONE
    leader_id: int | None = None
    leader_epoch: int = -1
    leader_host: str = ""
    leader_port: int = 0


@dataclass(frozen=True)
class ApiVersionsResponse:
    """``kraft_versions``: the ``kraft.version`` range the node supports (``None``: not
    advertised)."""

    error: int = ErrorCode.NONE
    kraft_versions: tuple[int, int] | None = None


RaftResponse = (
    VoteResponse
    | BeginQuorumEpochResponse
    | EndQuorumEpochResponse
    | FetchResponse
    | FetchSnapshotResponse
    | DescribeQuorumResponse
    | AddRaftVoterResponse
    | RemoveRaftVoterResponse
    | UpdateRaftVoterResponse
    | ApiVersionsResponse
)


def error_response(request: RaftRequest, error: int) -> RaftResponse:
    """The response to ``request`` carrying only a top-level ``error`` (Kafka's
    ``RaftUtil.errorResponse``): what a failed send (timeout, disconnection) turns into."""
    match request:
        case VoteRequest():
            return VoteResponse(error=error)
        case BeginQuorumEpochRequest():
            return BeginQuorumEpochResponse(error=error)
        case EndQuorumEpochRequest():
            return EndQuorumEpochResponse(error=error)
        case FetchRequest():
            return FetchResponse(error=error)
        case FetchSnapshotRequest():
            return FetchSnapshotResponse(error=error)
        case DescribeQuorumRequest():
            return DescribeQuorumResponse(error=error)
        case AddRaftVoterRequest():
            return AddRaftVoterResponse(error=error)
        case RemoveRaftVoterRequest():
            return RemoveRaftVoterResponse(error=error)
        case UpdateRaftVoterRequest():
            return UpdateRaftVoterResponse(error=error)
        case ApiVersionsRequest():
            return ApiVersionsResponse(error=error)


# -- events -------------------------------------------------------------------------------


@dataclass(frozen=True)
class InboundRequest:
    """A request that arrived. ``reply_to`` is the channel's handle for the answer (the
    connection; in the simulation the sender's id), returned in the
    :class:`OutboundResponse`."""

    correlation_id: int
    request: RaftRequest
    reply_to: Hashable = None


@dataclass(frozen=True)
class InboundResponse:
    """The answer (or the error a failed send turned into) to a request the client sent
    to ``source`` with ``correlation_id``."""

    source: Node
    correlation_id: int
    response: RaftResponse


@dataclass(frozen=True)
class OutboundRequest:
    destination: Node
    correlation_id: int
    request: RaftRequest
    sent_ms: int = field(default=0, compare=False)


@dataclass(frozen=True)
class OutboundResponse:
    correlation_id: int
    response: RaftResponse
    reply_to: Hashable = None
