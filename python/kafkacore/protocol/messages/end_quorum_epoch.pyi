# Generated from end_quorum_epoch.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in end_quorum_epoch.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "EndQuorumEpochRequest", "EndQuorumEpochResponse"]

class EndQuorumEpochRequest(KafkaStruct):
    """Kafka's ``EndQuorumEpochRequestData``: versions 0-1, flexible 1+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[EndQuorumEpochRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[EndQuorumEpochRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        leader_id: int
        leader_epoch: int
        preferred_successors: Sequence[int]  # versions 0-0
        preferred_candidates: list[EndQuorumEpochRequest.ReplicaInfo]  # versions 1+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            preferred_successors: Sequence[int] = ...,
            preferred_candidates: list[EndQuorumEpochRequest.ReplicaInfo] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ReplicaInfo(KafkaStruct):
        candidate_id: int  # versions 1+
        candidate_directory_id: uuid.UUID  # versions 1+
        def __init__(
            self,
            *,
            candidate_id: int = ...,
            candidate_directory_id: uuid.UUID = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderEndpoint(KafkaStruct):
        name: str  # versions 1+
        host: str  # versions 1+
        port: int  # versions 1+
        def __init__(
            self,
            *,
            name: str = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    cluster_id: str | None  # versions 0+; nullable 0+; default null
    topics: list[EndQuorumEpochRequest.TopicData]
    leader_endpoints: list[EndQuorumEpochRequest.LeaderEndpoint]  # versions 1+
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        topics: list[EndQuorumEpochRequest.TopicData] = ...,
        leader_endpoints: list[EndQuorumEpochRequest.LeaderEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class EndQuorumEpochResponse(KafkaStruct):
    """Kafka's ``EndQuorumEpochResponseData``: versions 0-1, flexible 1+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[EndQuorumEpochResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[EndQuorumEpochResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class NodeEndpoint(KafkaStruct):
        node_id: int  # versions 1+
        host: str  # versions 1+
        port: int  # versions 1+
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    topics: list[EndQuorumEpochResponse.TopicData]
    node_endpoints: list[EndQuorumEpochResponse.NodeEndpoint]  # versions 1+; tag 0
    def __init__(
        self,
        *,
        error_code: int = ...,
        topics: list[EndQuorumEpochResponse.TopicData] = ...,
        node_endpoints: list[EndQuorumEpochResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[EndQuorumEpochRequest]
RESPONSE: MessageSchema[EndQuorumEpochResponse]
