# Generated from vote.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in vote.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "VoteRequest", "VoteResponse"]

class VoteRequest(KafkaStruct):
    """Kafka's ``VoteRequestData``: versions 0-2, flexible 0+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[VoteRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[VoteRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        replica_epoch: int
        replica_id: int
        replica_directory_id: uuid.UUID  # versions 1+
        voter_directory_id: uuid.UUID  # versions 1+
        last_offset_epoch: int
        last_offset: int
        pre_vote: bool  # versions 2+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            replica_epoch: int = ...,
            replica_id: int = ...,
            replica_directory_id: uuid.UUID = ...,
            voter_directory_id: uuid.UUID = ...,
            last_offset_epoch: int = ...,
            last_offset: int = ...,
            pre_vote: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    cluster_id: str | None  # versions 0+; nullable 0+; default null
    voter_id: int  # versions 1+; default -1
    topics: list[VoteRequest.TopicData]
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        voter_id: int = ...,
        topics: list[VoteRequest.TopicData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class VoteResponse(KafkaStruct):
    """Kafka's ``VoteResponseData``: versions 0-2, flexible 0+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[VoteResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[VoteResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int
        vote_granted: bool
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            vote_granted: bool = ...,
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
    topics: list[VoteResponse.TopicData]
    node_endpoints: list[VoteResponse.NodeEndpoint]  # versions 1+; tag 0
    def __init__(
        self,
        *,
        error_code: int = ...,
        topics: list[VoteResponse.TopicData] = ...,
        node_endpoints: list[VoteResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[VoteRequest]
RESPONSE: MessageSchema[VoteResponse]
