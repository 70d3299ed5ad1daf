# Generated from describe_quorum.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_quorum.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeQuorumRequest", "DescribeQuorumResponse"]

class DescribeQuorumRequest(KafkaStruct):
    """Kafka's ``DescribeQuorumRequestData``: versions 0-2, flexible 0+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[DescribeQuorumRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[DescribeQuorumRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[DescribeQuorumRequest.TopicData]
    def __init__(
        self,
        *,
        topics: list[DescribeQuorumRequest.TopicData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeQuorumResponse(KafkaStruct):
    """Kafka's ``DescribeQuorumResponseData``: versions 0-2, flexible 0+."""

    class TopicData(KafkaStruct):
        topic_name: str
        partitions: list[DescribeQuorumResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[DescribeQuorumResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        error_message: str | None  # versions 2+; nullable 2+
        leader_id: int
        leader_epoch: int
        high_watermark: int
        current_voters: list[DescribeQuorumResponse.ReplicaState]
        observers: list[DescribeQuorumResponse.ReplicaState]
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            high_watermark: int = ...,
            current_voters: list[DescribeQuorumResponse.ReplicaState] = ...,
            observers: list[DescribeQuorumResponse.ReplicaState] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ReplicaState(KafkaStruct):
        replica_id: int
        replica_directory_id: uuid.UUID  # versions 2+
        log_end_offset: int
        last_fetch_timestamp: int  # versions 1+; default -1
        last_caught_up_timestamp: int  # versions 1+; default -1
        def __init__(
            self,
            *,
            replica_id: int = ...,
            replica_directory_id: uuid.UUID = ...,
            log_end_offset: int = ...,
            last_fetch_timestamp: int = ...,
            last_caught_up_timestamp: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Node(KafkaStruct):
        node_id: int  # versions 2+
        listeners: list[DescribeQuorumResponse.Listener]  # versions 2+
        def __init__(
            self,
            *,
            node_id: int = ...,
            listeners: list[DescribeQuorumResponse.Listener] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Listener(KafkaStruct):
        name: str  # versions 2+
        host: str  # versions 2+
        port: int  # versions 2+
        def __init__(
            self,
            *,
            name: str = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    error_message: str | None  # versions 2+; nullable 2+
    topics: list[DescribeQuorumResponse.TopicData]
    nodes: list[DescribeQuorumResponse.Node]  # versions 2+
    def __init__(
        self,
        *,
        error_code: int = ...,
        error_message: str | None = ...,
        topics: list[DescribeQuorumResponse.TopicData] = ...,
        nodes: list[DescribeQuorumResponse.Node] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeQuorumRequest]
RESPONSE: MessageSchema[DescribeQuorumResponse]
