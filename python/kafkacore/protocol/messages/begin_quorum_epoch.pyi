# Generated from begin_quorum_epoch.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in begin_quorum_epoch.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "BeginQuorumEpochRequest", "BeginQuorumEpochResponse"]

class BeginQuorumEpochRequest(KafkaStruct):
    """Kafka's ``BeginQuorumEpochRequestData``: versions 0-1, flexible 1+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[BeginQuorumEpochRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[BeginQuorumEpochRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        voter_directory_id: uuid.UUID  # versions 1+
        leader_id: int
        leader_epoch: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            voter_directory_id: uuid.UUID = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
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
    voter_id: int  # versions 1+; default -1
    topics: list[BeginQuorumEpochRequest.TopicData]
    leader_endpoints: list[BeginQuorumEpochRequest.LeaderEndpoint]  # versions 1+
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        voter_id: int = ...,
        topics: list[BeginQuorumEpochRequest.TopicData] = ...,
        leader_endpoints: list[BeginQuorumEpochRequest.LeaderEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class BeginQuorumEpochResponse(KafkaStruct):
    """Kafka's ``BeginQuorumEpochResponseData``: versions 0-1, flexible 1+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[BeginQuorumEpochResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[BeginQuorumEpochResponse.PartitionData] = ...,
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
    topics: list[BeginQuorumEpochResponse.TopicData]
    node_endpoints: list[BeginQuorumEpochResponse.NodeEndpoint]  # versions 1+; tag 0
    def __init__(
        self,
        *,
        error_code: int = ...,
        topics: list[BeginQuorumEpochResponse.TopicData] = ...,
        node_endpoints: list[BeginQuorumEpochResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[BeginQuorumEpochRequest]
RESPONSE: MessageSchema[BeginQuorumEpochResponse]
