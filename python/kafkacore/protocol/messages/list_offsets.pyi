# Generated from list_offsets.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in list_offsets.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ListOffsetsRequest", "ListOffsetsResponse"]

class ListOffsetsRequest(KafkaStruct):
    """Kafka's ``ListOffsetsRequestData``: versions 1-11, flexible 6+."""

    class ListOffsetsTopic(KafkaStruct):
        name: str  # versions 1+
        partitions: list[ListOffsetsRequest.ListOffsetsPartition]  # versions 1+
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListOffsetsRequest.ListOffsetsPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ListOffsetsPartition(KafkaStruct):
        partition_index: int  # versions 1+
        current_leader_epoch: int  # versions 4+; default -1
        timestamp: int  # versions 1+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            current_leader_epoch: int = ...,
            timestamp: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    replica_id: int  # versions 1+
    isolation_level: int  # versions 2+
    topics: list[ListOffsetsRequest.ListOffsetsTopic]  # versions 1+
    timeout_ms: int  # versions 10+
    def __init__(
        self,
        *,
        replica_id: int = ...,
        isolation_level: int = ...,
        topics: list[ListOffsetsRequest.ListOffsetsTopic] = ...,
        timeout_ms: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ListOffsetsResponse(KafkaStruct):
    """Kafka's ``ListOffsetsResponseData``: versions 1-11, flexible 6+."""

    class ListOffsetsTopicResponse(KafkaStruct):
        name: str  # versions 1+
        partitions: list[ListOffsetsResponse.ListOffsetsPartitionResponse]  # versions 1+
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListOffsetsResponse.ListOffsetsPartitionResponse] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ListOffsetsPartitionResponse(KafkaStruct):
        partition_index: int  # versions 1+
        error_code: int  # versions 1+
        timestamp: int  # versions 1+; default -1
        offset: int  # versions 1+; default -1
        leader_epoch: int  # versions 4+; default -1
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            timestamp: int = ...,
            offset: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 2+
    topics: list[ListOffsetsResponse.ListOffsetsTopicResponse]  # versions 1+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[ListOffsetsResponse.ListOffsetsTopicResponse] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ListOffsetsRequest]
RESPONSE: MessageSchema[ListOffsetsResponse]
