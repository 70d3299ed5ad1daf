# Generated from write_share_group_state.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in write_share_group_state.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "WriteShareGroupStateRequest", "WriteShareGroupStateResponse"]

class WriteShareGroupStateRequest(KafkaStruct):
    """Kafka's ``WriteShareGroupStateRequestData``: versions 0-1, flexible 0+."""

    class WriteStateData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[WriteShareGroupStateRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[WriteShareGroupStateRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition: int
        state_epoch: int
        leader_epoch: int
        start_offset: int
        delivery_complete_count: int  # versions 1+; default -1
        state_batches: list[WriteShareGroupStateRequest.StateBatch]
        def __init__(
            self,
            *,
            partition: int = ...,
            state_epoch: int = ...,
            leader_epoch: int = ...,
            start_offset: int = ...,
            delivery_complete_count: int = ...,
            state_batches: list[WriteShareGroupStateRequest.StateBatch] = ...,
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

    group_id: str
    topics: list[WriteShareGroupStateRequest.WriteStateData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[WriteShareGroupStateRequest.WriteStateData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class WriteShareGroupStateResponse(KafkaStruct):
    """Kafka's ``WriteShareGroupStateResponseData``: versions 0-1, flexible 0+."""

    class WriteStateResult(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[WriteShareGroupStateResponse.PartitionResult]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[WriteShareGroupStateResponse.PartitionResult] = ...,
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

    results: list[WriteShareGroupStateResponse.WriteStateResult]
    def __init__(
        self,
        *,
        results: list[WriteShareGroupStateResponse.WriteStateResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[WriteShareGroupStateRequest]
RESPONSE: MessageSchema[WriteShareGroupStateResponse]
