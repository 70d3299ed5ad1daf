# Generated from offset_delete.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in offset_delete.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "OffsetDeleteRequest", "OffsetDeleteResponse"]

class OffsetDeleteRequest(KafkaStruct):
    """Kafka's ``OffsetDeleteRequestData``: versions 0-0."""

    class OffsetDeleteRequestTopic(KafkaStruct):
        name: str
        partitions: list[OffsetDeleteRequest.OffsetDeleteRequestPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OffsetDeleteRequest.OffsetDeleteRequestPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetDeleteRequestPartition(KafkaStruct):
        partition_index: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    topics: list[OffsetDeleteRequest.OffsetDeleteRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[OffsetDeleteRequest.OffsetDeleteRequestTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class OffsetDeleteResponse(KafkaStruct):
    """Kafka's ``OffsetDeleteResponseData``: versions 0-0."""

    class OffsetDeleteResponseTopic(KafkaStruct):
        name: str
        partitions: list[OffsetDeleteResponse.OffsetDeleteResponsePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OffsetDeleteResponse.OffsetDeleteResponsePartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetDeleteResponsePartition(KafkaStruct):
        partition_index: int
        error_code: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    throttle_time_ms: int
    topics: list[OffsetDeleteResponse.OffsetDeleteResponseTopic]
    def __init__(
        self,
        *,
        error_code: int = ...,
        throttle_time_ms: int = ...,
        topics: list[OffsetDeleteResponse.OffsetDeleteResponseTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[OffsetDeleteRequest]
RESPONSE: MessageSchema[OffsetDeleteResponse]
