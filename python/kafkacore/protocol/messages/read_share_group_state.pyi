# Generated from read_share_group_state.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in read_share_group_state.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ReadShareGroupStateRequest", "ReadShareGroupStateResponse"]

class ReadShareGroupStateRequest(KafkaStruct):
    """Kafka's ``ReadShareGroupStateRequestData``: versions 0-0, flexible 0+."""

    class ReadStateData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ReadShareGroupStateRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ReadShareGroupStateRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition: int
        leader_epoch: int
        def __init__(
            self,
            *,
            partition: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    topics: list[ReadShareGroupStateRequest.ReadStateData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[ReadShareGroupStateRequest.ReadStateData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ReadShareGroupStateResponse(KafkaStruct):
    """Kafka's ``ReadShareGroupStateResponseData``: versions 0-0, flexible 0+."""

    class ReadStateResult(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ReadShareGroupStateResponse.PartitionResult]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ReadShareGroupStateResponse.PartitionResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionResult(KafkaStruct):
        partition: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        state_epoch: int
        start_offset: int
        state_batches: list[ReadShareGroupStateResponse.StateBatch]
        def __init__(
            self,
            *,
            partition: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            state_epoch: int = ...,
            start_offset: int = ...,
            state_batches: list[ReadShareGroupStateResponse.StateBatch] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class StateBatch(KafkaStruct):
        first_offset: int
        last_offset: int
        delivery_state: int
        delivery_count: int
        def __init__(
            self,
            *,
            first_offset: int = ...,
            last_offset: int = ...,
            delivery_state: int = ...,
            delivery_count: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    results: list[ReadShareGroupStateResponse.ReadStateResult]
    def __init__(
        self,
        *,
        results: list[ReadShareGroupStateResponse.ReadStateResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ReadShareGroupStateRequest]
RESPONSE: MessageSchema[ReadShareGroupStateResponse]
