# Generated from describe_producers.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_producers.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeProducersRequest", "DescribeProducersResponse"]

class DescribeProducersRequest(KafkaStruct):
    """Kafka's ``DescribeProducersRequestData``: versions 0-0, flexible 0+."""

    class TopicRequest(KafkaStruct):
        name: str
        partition_indexes: Sequence[int]
        def __init__(
            self,
            *,
            name: str = ...,
            partition_indexes: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[DescribeProducersRequest.TopicRequest]
    def __init__(
        self,
        *,
        topics: list[DescribeProducersRequest.TopicRequest] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeProducersResponse(KafkaStruct):
    """Kafka's ``DescribeProducersResponseData``: versions 0-0, flexible 0+."""

    class TopicResponse(KafkaStruct):
        name: str
        partitions: list[DescribeProducersResponse.PartitionResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[DescribeProducersResponse.PartitionResponse] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionResponse(KafkaStruct):
        partition_index: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        active_producers: list[DescribeProducersResponse.ProducerState]
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            active_producers: list[DescribeProducersResponse.ProducerState] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ProducerState(KafkaStruct):
        producer_id: int
        producer_epoch: int
        last_sequence: int  # versions 0+; default -1
        last_timestamp: int  # versions 0+; default -1
        coordinator_epoch: int
        current_txn_start_offset: int  # versions 0+; default -1
        def __init__(
            self,
            *,
            producer_id: int = ...,
            producer_epoch: int = ...,
            last_sequence: int = ...,
            last_timestamp: int = ...,
            coordinator_epoch: int = ...,
            current_txn_start_offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[DescribeProducersResponse.TopicResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[DescribeProducersResponse.TopicResponse] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeProducersRequest]
RESPONSE: MessageSchema[DescribeProducersResponse]
