# Generated from alter_share_group_offsets.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in alter_share_group_offsets.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AlterShareGroupOffsetsRequest", "AlterShareGroupOffsetsResponse"]

class AlterShareGroupOffsetsRequest(KafkaStruct):
    """Kafka's ``AlterShareGroupOffsetsRequestData``: versions 0-0, flexible 0+."""

    class AlterShareGroupOffsetsRequestTopic(KafkaStruct):
        topic_name: str
        partitions: list[AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[
                AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition
            ] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AlterShareGroupOffsetsRequestPartition(KafkaStruct):
        partition_index: int
        start_offset: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            start_offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    topics: list[AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AlterShareGroupOffsetsResponse(KafkaStruct):
    """Kafka's ``AlterShareGroupOffsetsResponseData``: versions 0-0, flexible 0+."""

    class AlterShareGroupOffsetsResponseTopic(KafkaStruct):
        topic_name: str
        topic_id: uuid.UUID
        partitions: list[AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponsePartition]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[
                AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponsePartition
            ] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AlterShareGroupOffsetsResponsePartition(KafkaStruct):
        partition_index: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+; default null
    responses: list[AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        responses: list[AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AlterShareGroupOffsetsRequest]
RESPONSE: MessageSchema[AlterShareGroupOffsetsResponse]
