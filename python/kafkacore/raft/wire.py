"""The Raft RPCs on Kafka's wire: typed messages (:mod:`kafkacore.raft.messages`) to and
from the KafkaStruct values of the declared schemas, at a version (Kafka's ``RaftUtil``
builders and the ``*Request``/``*Response`` helpers).

Every request carries the one partition ``__cluster_metadata-0`` (Fetch by topic id
``AAAAAAAAAAAAAAAAAAAAAQ`` from v13); a request for anything else is :class:`Refused` with
Kafka's answer (INVALID_REQUEST, or UNKNOWN_TOPIC_OR_PARTITION for FetchSnapshot and
DescribeQuorum). Responses name the leader's endpoint for the receiver's listener in
``NodeEndpoints`` (the versions that have it).

Pure functions: thread-safe.
"""

from __future__ import annotations

from typing import Any

from kafkacore.protocol.errors import ErrorCode
from kafkacore.protocol.messages import (
    add_raft_voter,
    api_versions,
    begin_quorum_epoch,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    remove_raft_voter,
    update_raft_voter,
    vote,
)
from kafkacore.protocol.schema import KafkaStruct, MessageSchema
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
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    ReplicaDescription,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
    VoteResponse,
)
from kafkacore.raft.types import (
    METADATA_PARTITION,
    METADATA_TOPIC,
    METADATA_TOPIC_ID,
    Endpoint,
    Endpoints,
    OffsetAndEpoch,
    ReplicaKey,
)

__all__ = [
    "API_KEYS",
    "KRAFT_VERSION_FEATURE",
    "LATEST_VERSIONS",
    "SCHEMAS",
    "Refused",
    "api_key_of",
    "request_from_wire",
    "request_to_wire",
    "response_from_wire",
    "response_to_wire",
]

VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, DESCRIBE_QUORUM = 52, 53, 54, 55
FETCH, FETCH_SNAPSHOT, API_VERSIONS = 1, 59, 18
ADD_RAFT_VOTER, REMOVE_RAFT_VOTER, UPDATE_RAFT_VOTER = 80, 81, 82
KRAFT_VERSION_FEATURE = "kraft.version"

SCHEMAS: dict[int, tuple[MessageSchema[Any], MessageSchema[Any]]] = {
    VOTE: (vote.REQUEST, vote.RESPONSE),
    BEGIN_QUORUM_EPOCH: (begin_quorum_epoch.REQUEST, begin_quorum_epoch.RESPONSE),
    END_QUORUM_EPOCH: (end_quorum_epoch.REQUEST, end_quorum_epoch.RESPONSE),
    DESCRIBE_QUORUM: (describe_quorum.REQUEST, describe_quorum.RESPONSE),
    FETCH: (fetch.REQUEST, fetch.RESPONSE),
    FETCH_SNAPSHOT: (fetch_snapshot.REQUEST, fetch_snapshot.RESPONSE),
    ADD_RAFT_VOTER: (add_raft_voter.REQUEST, add_raft_voter.RESPONSE),
    REMOVE_RAFT_VOTER: (remove_raft_voter.REQUEST, remove_raft_voter.RESPONSE),
    UPDATE_RAFT_VOTER: (update_raft_voter.REQUEST, update_raft_voter.RESPONSE),
    API_VERSIONS: (api_versions.REQUEST, api_versions.RESPONSE),
}
"""The request and response schema of each API the quorum speaks."""

# Fetch up to v18 (KIP-1166's HighWatermark) once the declared schema has it.
LATEST_VERSIONS = {
    VOTE: 2,
    BEGIN_QUORUM_EPOCH: 1,
    END_QUORUM_EPOCH: 1,
    DESCRIBE_QUORUM: 2,
    FETCH: min(18, fetch.REQUEST.valid.hi),
    FETCH_SNAPSHOT: 1,
    ADD_RAFT_VOTER: 1,
    REMOVE_RAFT_VOTER: 0,
    UPDATE_RAFT_VOTER: 0,
    API_VERSIONS: 3,
}

API_KEYS: dict[type, int] = {
    VoteRequest: VOTE,
    BeginQuorumEpochRequest: BEGIN_QUORUM_EPOCH,
    EndQuorumEpochRequest: END_QUORUM_EPOCH,
    DescribeQuorumRequest: DESCRIBE_QUORUM,
    FetchRequest: FETCH,
    FetchSnapshotRequest: FETCH_SNAPSHOT,
    AddRaftVoterRequest: ADD_RAFT_VOTER,
    RemoveRaftVoterRequest: REMOVE_RAFT_VOTER,
    UpdateRaftVoterRequest: UPDATE_RAFT_VOTER,
    ApiVersionsRequest: API_VERSIONS,
}


def _built(value: Any) -> KafkaStruct:
    assert isinstance(value, KafkaStruct)
    return value


def api_key_of(request: RaftRequest) -> int:
    return API_KEYS[type(request)]


class Refused(Exception):
    """A request the quorum answers without looking at it (wrong topic or partition):
    ``response`` is Kafka's answer, a KafkaStruct of the API's response."""

    def __init__(self, response: KafkaStruct) -> None:
        super().__init__("request for a partition other than __cluster_metadata-0")
        self.response = response


def _has(schema: MessageSchema[Any], struct_name: str, field: str) -> bool:
    """Whether the declared struct has ``field`` (Fetch's v18 fields arrive separately)."""
    pending = [schema.struct]
    while pending:
        struct = pending.pop()
        if struct.name == struct_name:
            return any(f.name == field for f in struct.fields)
        pending.extend(f.struct for f in struct.fields if f.struct is not None)
    return False


def _key(replica_id: int, directory: Any) -> ReplicaKey:
    return ReplicaKey.of(replica_id, directory)


def _listeners_to_wire(cls: Any, endpoints: Endpoints) -> list[Any]:
    return [cls(name=e.name, host=e.host, port=e.port) for e in endpoints.endpoints]


def _listeners_from_wire(items: list[Any]) -> Endpoints:
    # Kafka normalises listener names (ListenerName.normalised: upper case)
    return Endpoints(tuple(Endpoint(i.name.upper(), i.host, i.port) for i in items))


def _node_endpoints(
    cls: Any, leader_id: int | None, endpoints: Endpoints, listener: str
) -> list[Any]:
    address = endpoints.address(listener)
    if address is None or leader_id is None or leader_id < 0:
        return []
    return [cls(node_id=leader_id, host=address[0], port=address[1])]


def _leader_endpoints(items: list[Any], leader_id: int | None, listener: str) -> Endpoints:
    for item in items:
        if item.node_id == leader_id:
            return Endpoints.single(listener, item.host, item.port)
    return Endpoints()


def _leader(leader_id: int) -> int | None:
    return None if leader_id < 0 else leader_id


# -- requests -------------------------------------------------------------------------------


def request_to_wire(request: RaftRequest, version: int) -> tuple[int, KafkaStruct]:
    """``(api key, request struct)`` of ``request`` for ``version``."""
    api_key = api_key_of(request)
    cls: Any = SCHEMAS[api_key][0].cls
    match request:
        case VoteRequest():
            voter = request.voter_key or ReplicaKey(-1)
            partition = cls.PartitionData(
                partition_index=METADATA_PARTITION,
                replica_epoch=request.replica_epoch,
                replica_id=request.replica_key.id,
                replica_directory_id=request.replica_key.wire_directory_id,
                voter_directory_id=voter.wire_directory_id,
                last_offset_epoch=request.last_offset_epoch,
                last_offset=request.last_offset,
                pre_vote=request.pre_vote,
            )
            struct = cls(
                cluster_id=request.cluster_id,
                voter_id=voter.id,
                topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])],
            )
        case BeginQuorumEpochRequest():
            voter = request.voter_key or ReplicaKey(-1)
            partition = cls.PartitionData(
                partition_index=METADATA_PARTITION,
                voter_directory_id=voter.wire_directory_id,
                leader_id=request.leader_id,
                leader_epoch=request.leader_epoch,
            )
            struct = cls(
                cluster_id=request.cluster_id,
                voter_id=voter.id,
                topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])],
                leader_endpoints=_listeners_to_wire(cls.LeaderEndpoint, request.leader_endpoints),
            )
        case EndQuorumEpochRequest():
            partition = cls.PartitionData(
                partition_index=METADATA_PARTITION,
                leader_id=request.leader_id,
                leader_epoch=request.leader_epoch,
                preferred_successors=[k.id for k in request.preferred_candidates],
                preferred_candidates=[
                    cls.ReplicaInfo(candidate_id=k.id, candidate_directory_id=k.wire_directory_id)
                    for k in request.preferred_candidates
                ],
            )
            struct = cls(
                cluster_id=request.cluster_id,
                topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])],
                leader_endpoints=_listeners_to_wire(cls.LeaderEndpoint, request.leader_endpoints),
            )
        case FetchRequest():
            fields: dict[str, Any] = {
                "partition": METADATA_PARTITION,
                "current_leader_epoch": request.current_leader_epoch,
                "fetch_offset": request.fetch_offset,
                "last_fetched_epoch": request.last_fetched_epoch,
                "replica_directory_id": request.replica_key.wire_directory_id,
            }
            if request.high_watermark is not None and _has(
                fetch.REQUEST, "FetchPartition", "HighWatermark"
            ):
                fields["high_watermark"] = request.high_watermark
            topic = cls.FetchTopic(
                topic=METADATA_TOPIC,
                topic_id=METADATA_TOPIC_ID,
                partitions=[cls.FetchPartition(**fields)],
            )
            struct = cls(
                cluster_id=request.cluster_id,
                replica_id=request.replica_key.id,
                replica_state=cls.ReplicaState(replica_id=request.replica_key.id),
                max_wait_ms=request.max_wait_ms,
                max_bytes=request.max_bytes,
                topics=[topic],
            )
        case FetchSnapshotRequest():
            partition = cls.PartitionSnapshot(
                partition=METADATA_PARTITION,
                current_leader_epoch=request.current_leader_epoch,
                snapshot_id=cls.SnapshotId(
                    end_offset=request.snapshot_id.offset, epoch=request.snapshot_id.epoch
                ),
                position=request.position,
                replica_directory_id=request.replica_key.wire_directory_id,
            )
            struct = cls(
                cluster_id=request.cluster_id,
                replica_id=request.replica_key.id,
                max_bytes=request.max_bytes,
                topics=[cls.TopicSnapshot(name=METADATA_TOPIC, partitions=[partition])],
            )
        case DescribeQuorumRequest():
            struct = cls(
                topics=[
                    cls.TopicData(
                        topic_name=METADATA_TOPIC,
                        partitions=[cls.PartitionData(partition_index=METADATA_PARTITION)],
                    )
                ]
            )
        case AddRaftVoterRequest():
            struct = cls(
                cluster_id=request.cluster_id,
                timeout_ms=request.timeout_ms,
                voter_id=request.voter_key.id,
                voter_directory_id=request.voter_key.wire_directory_id,
                listeners=_listeners_to_wire(cls.Listener, request.listeners),
                ack_when_committed=request.ack_when_committed,
            )
        case RemoveRaftVoterRequest():
            struct = cls(
                cluster_id=request.cluster_id,
                voter_id=request.voter_key.id,
                voter_directory_id=request.voter_key.wire_directory_id,
            )
        case UpdateRaftVoterRequest():
            struct = cls(
                cluster_id=request.cluster_id,
                current_leader_epoch=request.current_leader_epoch,
                voter_id=request.voter_key.id,
                voter_directory_id=request.voter_key.wire_directory_id,
                listeners=_listeners_to_wire(cls.Listener, request.listeners),
                k_raft_version_feature=cls.KRaftVersionFeature(
                    min_supported_version=request.min_kraft_version,
                    max_supported_version=request.max_kraft_version,
                ),
            )
        case ApiVersionsRequest():
            struct = cls(client_software_name="kafkacore", client_software_version="raft")
    return api_key, _built(struct)


def _single_partition(struct: Any, topics_attr: str, name_attr: str, partition_attr: str) -> Any:
    topics = getattr(struct, topics_attr)
    if len(topics) != 1 or getattr(topics[0], name_attr) != METADATA_TOPIC:
        return None
    partitions = topics[0].partitions
    if len(partitions) != 1 or getattr(partitions[0], partition_attr) != METADATA_PARTITION:
        return None
    return partitions[0]


def request_from_wire(api_key: int, version: int, struct: Any) -> RaftRequest:
    """The typed request in ``struct`` (the API's request schema); :class:`Refused` for a
    partition other than ``__cluster_metadata-0``."""
    response_cls: Any = SCHEMAS[api_key][1].cls
    invalid = Refused(response_cls(error_code=ErrorCode.INVALID_REQUEST))
    match api_key:
        case 52:  # Vote
            p = _single_partition(struct, "topics", "topic_name", "partition_index")
            if p is None:
                raise invalid
            return VoteRequest(
                cluster_id=struct.cluster_id,
                replica_key=_key(p.replica_id, p.replica_directory_id),
                replica_epoch=p.replica_epoch,
                last_offset_epoch=p.last_offset_epoch,
                last_offset=p.last_offset,
                pre_vote=p.pre_vote,
                voter_key=_key(struct.voter_id, p.voter_directory_id) if version >= 1 else None,
            )
        case 53:  # BeginQuorumEpoch
            p = _single_partition(struct, "topics", "topic_name", "partition_index")
            if p is None:
                raise invalid
            return BeginQuorumEpochRequest(
                cluster_id=struct.cluster_id,
                leader_id=p.leader_id,
                leader_epoch=p.leader_epoch,
                leader_endpoints=_listeners_from_wire(struct.leader_endpoints),
                voter_key=_key(struct.voter_id, p.voter_directory_id) if version >= 1 else None,
            )
        case 54:  # EndQuorumEpoch
            p = _single_partition(struct, "topics", "topic_name", "partition_index")
            if p is None:
                raise invalid
            if version >= 1:
                candidates = tuple(
                    _key(c.candidate_id, c.candidate_directory_id) for c in p.preferred_candidates
                )
            else:
                candidates = tuple(ReplicaKey(c) for c in p.preferred_successors)
            return EndQuorumEpochRequest(
                cluster_id=struct.cluster_id,
                leader_id=p.leader_id,
                leader_epoch=p.leader_epoch,
                preferred_candidates=candidates,
                leader_endpoints=_listeners_from_wire(struct.leader_endpoints),
            )
        case 1:  # Fetch
            topics = struct.topics
            ok = len(topics) == 1 and len(topics[0].partitions) == 1
            if ok:
                topic = topics[0]
                ok = (
                    topic.topic_id == METADATA_TOPIC_ID
                    if version >= 13
                    else topic.topic == METADATA_TOPIC
                ) and topic.partitions[0].partition == METADATA_PARTITION
            if not ok:
                raise invalid
            p = topics[0].partitions[0]
            replica_id = struct.replica_state.replica_id if version >= 15 else struct.replica_id
            high_watermark = getattr(p, "high_watermark", None) if version >= 18 else None
            return FetchRequest(
                cluster_id=struct.cluster_id,
                replica_key=_key(replica_id, p.replica_directory_id),
                current_leader_epoch=p.current_leader_epoch,
                fetch_offset=p.fetch_offset,
                last_fetched_epoch=p.last_fetched_epoch,
                max_bytes=struct.max_bytes,
                max_wait_ms=struct.max_wait_ms,
                high_watermark=high_watermark,
            )
        case 59:  # FetchSnapshot
            p = _single_partition(struct, "topics", "name", "partition")
            if p is None:
                topics = struct.topics
                name = topics[0].name if topics else ""
                index = topics[0].partitions[0].partition if topics and topics[0].partitions else 0
                raise Refused(
                    response_cls(
                        topics=[
                            response_cls.TopicSnapshot(
                                name=name,
                                partitions=[
                                    response_cls.PartitionSnapshot(
                                        index=index,
                                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                    )
                                ],
                            )
                        ]
                    )
                )
            return FetchSnapshotRequest(
                cluster_id=struct.cluster_id,
                replica_key=_key(struct.replica_id, p.replica_directory_id),
                current_leader_epoch=p.current_leader_epoch,
                snapshot_id=OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch),
                position=p.position,
                max_bytes=struct.max_bytes,
            )
        case 55:  # DescribeQuorum
            if _single_partition(struct, "topics", "topic_name", "partition_index") is None:
                raise Refused(
                    response_cls(
                        topics=[
                            response_cls.TopicData(
                                topic_name=t.topic_name,
                                partitions=[
                                    response_cls.PartitionData(
                                        partition_index=p.partition_index,
                                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                    )
                                    for p in t.partitions
                                ],
                            )
                            for t in struct.topics
                        ]
                    )
                )
            return DescribeQuorumRequest()
        case 80:  # AddRaftVoter
            return AddRaftVoterRequest(
                cluster_id=struct.cluster_id,
                timeout_ms=struct.timeout_ms,
                voter_key=_key(struct.voter_id, struct.voter_directory_id),
                listeners=_listeners_from_wire(struct.listeners),
                ack_when_committed=struct.ack_when_committed,
            )
        case 81:  # RemoveRaftVoter
            return RemoveRaftVoterRequest(
                cluster_id=struct.cluster_id,
                voter_key=_key(struct.voter_id, struct.voter_directory_id),
            )
        case 82:  # UpdateRaftVoter
            feature = struct.k_raft_version_feature
            return UpdateRaftVoterRequest(
                cluster_id=struct.cluster_id,
                current_leader_epoch=struct.current_leader_epoch,
                voter_key=_key(struct.voter_id, struct.voter_directory_id),
                listeners=_listeners_from_wire(struct.listeners),
                min_kraft_version=feature.min_supported_version,
                max_kraft_version=feature.max_supported_version,
            )
        case 18:  # ApiVersions
            return ApiVersionsRequest()
    raise ValueError(f"API key {api_key} is not a Raft API")


# -- responses ------------------------------------------------------------------------------


def response_to_wire(
    api_key: int, response: RaftResponse, version: int, listener: str
) -> KafkaStruct:
    """The response struct of ``response`` for ``version``; ``listener`` is the one the
    request came on (its leader endpoint goes into ``NodeEndpoints``)."""
    cls: Any = SCHEMAS[api_key][1].cls
    match response:
        case VoteResponse() | BeginQuorumEpochResponse() | EndQuorumEpochResponse():
            fields: dict[str, Any] = {
                "partition_index": METADATA_PARTITION,
                "error_code": response.partition_error,
                "leader_id": -1 if response.leader_id is None else response.leader_id,
                "leader_epoch": response.leader_epoch,
            }
            if isinstance(response, VoteResponse):
                fields["vote_granted"] = response.vote_granted
            if response.error != ErrorCode.NONE:
                return _built(cls(error_code=response.error))
            return _built(
                cls(
                    error_code=response.error,
                    topics=[
                        cls.TopicData(
                            topic_name=METADATA_TOPIC, partitions=[cls.PartitionData(**fields)]
                        )
                    ],
                    node_endpoints=_node_endpoints(
                        cls.NodeEndpoint, response.leader_id, response.leader_endpoints, listener
                    ),
                )
            )
        case FetchResponse():
            if response.error != ErrorCode.NONE:
                return _built(cls(error_code=response.error))
            diverging = response.diverging
            snapshot = response.snapshot_id
            partition = cls.PartitionData(
                partition_index=METADATA_PARTITION,
                error_code=response.partition_error,
                high_watermark=response.high_watermark,
                log_start_offset=response.log_start_offset,
                diverging_epoch=cls.EpochEndOffset(
                    epoch=diverging.epoch if diverging else -1,
                    end_offset=diverging.offset if diverging else -1,
                ),
                current_leader=cls.LeaderIdAndEpoch(
                    leader_id=-1 if response.leader_id is None else response.leader_id,
                    leader_epoch=response.leader_epoch,
                ),
                snapshot_id=cls.SnapshotId(
                    end_offset=snapshot.offset if snapshot else -1,
                    epoch=snapshot.epoch if snapshot else -1,
                ),
                records=response.records,
            )
            return _built(
                cls(
                    error_code=response.error,
                    responses=[
                        cls.FetchableTopicResponse(
                            topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[partition]
                        )
                    ],
                    node_endpoints=_node_endpoints(
                        cls.NodeEndpoint, response.leader_id, response.leader_endpoints, listener
                    )
                    if version >= 17
                    else [],
                )
            )
        case FetchSnapshotResponse():
            if response.error != ErrorCode.NONE:
                return _built(cls(error_code=response.error))
            snapshot_partition = cls.PartitionSnapshot(
                index=METADATA_PARTITION,
                error_code=response.partition_error,
                snapshot_id=cls.SnapshotId(
                    end_offset=response.snapshot_id.offset, epoch=response.snapshot_id.epoch
                ),
                current_leader=cls.LeaderIdAndEpoch(
                    leader_id=-1 if response.leader_id is None else response.leader_id,
                    leader_epoch=response.leader_epoch,
                ),
                size=response.size,
                position=response.position,
                unaligned_records=response.data,
            )
            return _built(
                cls(
                    error_code=response.error,
                    topics=[
                        cls.TopicSnapshot(name=METADATA_TOPIC, partitions=[snapshot_partition])
                    ],
                    node_endpoints=_node_endpoints(
                        cls.NodeEndpoint, response.leader_id, response.leader_endpoints, listener
                    ),
                )
            )
        case DescribeQuorumResponse():
            if response.error != ErrorCode.NONE:
                return _built(cls(error_code=response.error, error_message=response.error_message))

            def rows(items: tuple[ReplicaDescription, ...]) -> list[Any]:
                return [
                    cls.ReplicaState(
                        replica_id=r.replica_key.id,
                        replica_directory_id=r.replica_key.wire_directory_id,
                        log_end_offset=r.log_end_offset,
                        last_fetch_timestamp=r.last_fetch_timestamp,
                        last_caught_up_timestamp=r.last_caught_up_timestamp,
                    )
                    for r in items
                ]

            describe_partition = cls.PartitionData(
                partition_index=METADATA_PARTITION,
                error_code=response.partition_error,
                leader_id=-1 if response.leader_id is None else response.leader_id,
                leader_epoch=response.leader_epoch,
                high_watermark=response.high_watermark,
                current_voters=rows(response.voters),
                observers=rows(response.observers),
            )
            return _built(
                cls(
                    topics=[
                        cls.TopicData(topic_name=METADATA_TOPIC, partitions=[describe_partition])
                    ],
                    nodes=[
                        cls.Node(node_id=node_id, listeners=_listeners_to_wire(cls.Listener, eps))
                        for node_id, eps in response.nodes
                    ],
                )
            )
        case AddRaftVoterResponse() | RemoveRaftVoterResponse():
            return _built(cls(error_code=response.error, error_message=response.error_message))
        case UpdateRaftVoterResponse():
            return _built(
                cls(
                    error_code=response.error,
                    current_leader=cls.CurrentLeader(
                        leader_id=-1 if response.leader_id is None else response.leader_id,
                        leader_epoch=response.leader_epoch,
                        host=response.leader_host,
                        port=response.leader_port,
                    ),
                )
            )
        case ApiVersionsResponse():
            features = []
            if response.kraft_versions is not None:
                features.append(
                    cls.SupportedFeatureKey(
                        name=KRAFT_VERSION_FEATURE,
                        min_version=response.kraft_versions[0],
                        max_version=response.kraft_versions[1],
                    )
                )
            return _built(cls(error_code=response.error, supported_features=features))
    raise ValueError(f"not a Raft response: {response!r}")


def response_from_wire(api_key: int, version: int, struct: Any, listener: str) -> RaftResponse:
    """The typed response in ``struct``; a partition other than ``__cluster_metadata-0``
    reads as INVALID_REQUEST-free top-level UNKNOWN_SERVER_ERROR (Kafka ignores it)."""
    unknown = ErrorCode.UNKNOWN_SERVER_ERROR
    match api_key:
        case 52 | 53 | 54:
            cls: type[VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse] = {
                52: VoteResponse,
                53: BeginQuorumEpochResponse,
                54: EndQuorumEpochResponse,
            }[api_key]
            if struct.error_code != ErrorCode.NONE:
                return cls(error=struct.error_code)
            p = _single_partition(struct, "topics", "topic_name", "partition_index")
            if p is None:
                return cls(error=unknown)
            leader = _leader(p.leader_id)
            common: dict[str, Any] = {
                "partition_error": p.error_code,
                "leader_id": leader,
                "leader_epoch": p.leader_epoch,
                "leader_endpoints": _leader_endpoints(struct.node_endpoints, leader, listener),
            }
            if api_key == VOTE:
                common["vote_granted"] = p.vote_granted
            return cls(**common)
        case 1:
            if struct.error_code != ErrorCode.NONE:
                return FetchResponse(error=struct.error_code)
            responses = struct.responses
            if len(responses) != 1 or len(responses[0].partitions) != 1:
                return FetchResponse(error=unknown)
            p = responses[0].partitions[0]
            leader = _leader(p.current_leader.leader_id)
            diverging = p.diverging_epoch
            snapshot = p.snapshot_id
            records = p.records
            return FetchResponse(
                partition_error=p.error_code,
                high_watermark=p.high_watermark,
                log_start_offset=p.log_start_offset,
                records=bytes(records) if records is not None else b"",
                diverging=OffsetAndEpoch(diverging.end_offset, diverging.epoch)
                if diverging.epoch >= 0
                else None,
                snapshot_id=OffsetAndEpoch(snapshot.end_offset, snapshot.epoch)
                if snapshot.epoch >= 0 or snapshot.end_offset >= 0
                else None,
                leader_id=leader,
                leader_epoch=p.current_leader.leader_epoch,
                leader_endpoints=_leader_endpoints(
                    getattr(struct, "node_endpoints", []), leader, listener
                ),
            )
        case 59:
            if struct.error_code != ErrorCode.NONE:
                return FetchSnapshotResponse(error=struct.error_code)
            p = _single_partition(struct, "topics", "name", "index")
            if p is None:
                return FetchSnapshotResponse(error=unknown)
            leader = _leader(p.current_leader.leader_id)
            return FetchSnapshotResponse(
                partition_error=p.error_code,
                snapshot_id=OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch),
                leader_id=leader,
                leader_epoch=p.current_leader.leader_epoch,
                size=p.size,
                position=p.position,
                data=bytes(p.unaligned_records) if p.unaligned_records is not None else b"",
                leader_endpoints=_leader_endpoints(struct.node_endpoints, leader, listener),
            )
        case 55:
            if struct.error_code != ErrorCode.NONE:
                return DescribeQuorumResponse(
                    error=struct.error_code, error_message=struct.error_message
                )
            p = _single_partition(struct, "topics", "topic_name", "partition_index")
            if p is None:
                return DescribeQuorumResponse(error=unknown)

            def rows(items: list[Any]) -> tuple[ReplicaDescription, ...]:
                return tuple(
                    ReplicaDescription(
                        _key(r.replica_id, r.replica_directory_id),
                        r.log_end_offset,
                        r.last_fetch_timestamp,
                        r.last_caught_up_timestamp,
                    )
                    for r in items
                )

            return DescribeQuorumResponse(
                partition_error=p.error_code,
                error_message=p.error_message,
                leader_id=_leader(p.leader_id),
                leader_epoch=p.leader_epoch,
                high_watermark=p.high_watermark,
                voters=rows(p.current_voters),
                observers=rows(p.observers),
                nodes=tuple((n.node_id, _listeners_from_wire(n.listeners)) for n in struct.nodes),
            )
        case 80:
            return AddRaftVoterResponse(struct.error_code, struct.error_message)
        case 81:
            return RemoveRaftVoterResponse(struct.error_code, struct.error_message)
        case 82:
            leader = struct.current_leader
            return UpdateRaftVoterResponse(
                error=struct.error_code,
                leader_id=_leader(leader.leader_id),
                leader_epoch=leader.leader_epoch,
                leader_host=leader.host,
                leader_port=leader.port,
            )
        case 18:
            kraft = next(
                (f for f in struct.supported_features if f.name == KRAFT_VERSION_FEATURE), None
            )
            return ApiVersionsResponse(
                error=struct.error_code,
                kraft_versions=(kraft.min_version, kraft.max_version) if kraft else None,
            )
    raise ValueError(f"API key {api_key} is not a Raft API")
