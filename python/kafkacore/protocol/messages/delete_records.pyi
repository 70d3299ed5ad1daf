# Generated from delete_records.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in delete_records.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DeleteRecordsRequest", "DeleteRecordsResponse"]

class DeleteRecordsRequest(KafkaStruct):
    """Kafka's ``DeleteRecordsRequestData``: versions 0-2, flexible 2+."""

    class DeleteRecordsTopic(KafkaStruct):
        name: str
        partitions: list[DeleteRecordsRequest.DeleteRecordsPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[DeleteRecordsRequest.DeleteRecordsPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DeleteRecordsPartition(KafkaStruct):
        partition_index: int
        offset: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[DeleteRecordsRequest.DeleteRecordsTopic]
    timeout_ms: int
    def __init__(
        self,
        *,
        topics: list[DeleteRecordsRequest.DeleteRecordsTopic] = ...,
        timeout_ms: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DeleteRecordsResponse(KafkaStruct):
    """Kafka's ``DeleteRecordsResponseData``: versions 0-2, flexible 2+."""

    class DeleteRecordsTopicResult(KafkaStruct):
        name: str
        partitions: list[DeleteRecordsResponse.DeleteRecordsPartitionResult]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[DeleteRecordsResponse.DeleteRecordsPartitionResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DeleteRecordsPartitionResult(KafkaStruct):
        partition_index: int
        low_watermark: int
        error_code: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            low_watermark: int = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[DeleteRecordsResponse.DeleteRecordsTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[DeleteRecordsResponse.DeleteRecordsTopicResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DeleteRecordsRequest]
RESPONSE: MessageSchema[DeleteRecordsResponse]
