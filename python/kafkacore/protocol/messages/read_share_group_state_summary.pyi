# Generated from read_share_group_state_summary.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in read_share_group_state_summary.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "ReadShareGroupStateSummaryRequest",
    "ReadShareGroupStateSummaryResponse",
]

class ReadShareGroupStateSummaryRequest(KafkaStruct):
    """Kafka's ``ReadShareGroupStateSummaryRequestData``: versions 0-1, flexible 0+."""

    class ReadStateSummaryData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ReadShareGroupStateSummaryRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ReadShareGroupStateSummaryRequest.PartitionData] = ...,
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
    topics: list[ReadShareGroupStateSummaryRequest.ReadStateSummaryData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[ReadShareGroupStateSummaryRequest.ReadStateSummaryData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ReadShareGroupStateSummaryResponse(KafkaStruct):
    """Kafka's ``ReadShareGroupStateSummaryResponseData``: versions 0-1, flexible 0+."""

    class ReadStateSummaryResult(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ReadShareGroupStateSummaryResponse.PartitionResult]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ReadShareGroupStateSummaryResponse.PartitionResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionResult(KafkaStruct):
        partition: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        state_epoch: int
        leader_epoch: int
        start_offset: int
        delivery_complete_count: int  # versions 1+; default -1
        def __init__(
            self,
            *,
            partition: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            state_epoch: int = ...,
            leader_epoch: int = ...,
            start_offset: int = ...,
            delivery_complete_count: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    results: list[ReadShareGroupStateSummaryResponse.ReadStateSummaryResult]
    def __init__(
        self,
        *,
        results: list[ReadShareGroupStateSummaryResponse.ReadStateSummaryResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ReadShareGroupStateSummaryRequest]
RESPONSE: MessageSchema[ReadShareGroupStateSummaryResponse]
