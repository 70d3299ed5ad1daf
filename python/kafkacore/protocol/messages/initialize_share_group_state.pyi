# Generated from initialize_share_group_state.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in initialize_share_group_state.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "InitializeShareGroupStateRequest",
    "InitializeShareGroupStateResponse",
]

class InitializeShareGroupStateRequest(KafkaStruct):
    """Kafka's ``InitializeShareGroupStateRequestData``: versions 0-0, flexible 0+."""

    class InitializeStateData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[InitializeShareGroupStateRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[InitializeShareGroupStateRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition: int
        state_epoch: int
        start_offset: int
        def __init__(
            self,
            *,
            partition: int = ...,
            state_epoch: int = ...,
            start_offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    topics: list[InitializeShareGroupStateRequest.InitializeStateData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[InitializeShareGroupStateRequest.InitializeStateData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class InitializeShareGroupStateResponse(KafkaStruct):
    """Kafka's ``InitializeShareGroupStateResponseData``: versions 0-0, flexible 0+."""

    class InitializeStateResult(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[InitializeShareGroupStateResponse.PartitionResult]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[InitializeShareGroupStateResponse.PartitionResult] = ...,
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

    results: list[InitializeShareGroupStateResponse.InitializeStateResult]
    def __init__(
        self,
        *,
        results: list[InitializeShareGroupStateResponse.InitializeStateResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[InitializeShareGroupStateRequest]
RESPONSE: MessageSchema[InitializeShareGroupStateResponse]
