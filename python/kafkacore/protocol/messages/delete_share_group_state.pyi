# Generated from delete_share_group_state.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in delete_share_group_state.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DeleteShareGroupStateRequest", "DeleteShareGroupStateResponse"]

class DeleteShareGroupStateRequest(KafkaStruct):
    """Kafka's ``DeleteShareGroupStateRequestData``: versions 0-0, flexible 0+."""

    class DeleteStateData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[DeleteShareGroupStateRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[DeleteShareGroupStateRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition: int
        def __init__(
            self,
            *,
            partition: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    topics: list[DeleteShareGroupStateRequest.DeleteStateData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[DeleteShareGroupStateRequest.DeleteStateData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DeleteShareGroupStateResponse(KafkaStruct):
    """Kafka's ``DeleteShareGroupStateResponseData``: versions 0-0, flexible 0+."""

    class DeleteStateResult(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[DeleteShareGroupStateResponse.PartitionResult]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[DeleteShareGroupStateResponse.PartitionResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionResult(KafkaStruct):
        partition: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            partition: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    results: list[DeleteShareGroupStateResponse.DeleteStateResult]
    def __init__(
        self,
        *,
        results: list[DeleteShareGroupStateResponse.DeleteStateResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DeleteShareGroupStateRequest]
RESPONSE: MessageSchema[DeleteShareGroupStateResponse]
