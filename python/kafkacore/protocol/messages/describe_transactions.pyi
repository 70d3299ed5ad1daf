# Generated from describe_transactions.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_transactions.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeTransactionsRequest", "DescribeTransactionsResponse"]

class DescribeTransactionsRequest(KafkaStruct):
    """Kafka's ``DescribeTransactionsRequestData``: versions 0-0, flexible 0+."""

    transactional_ids: Sequence[str]
    def __init__(
        self,
        *,
        transactional_ids: Sequence[str] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeTransactionsResponse(KafkaStruct):
    """Kafka's ``DescribeTransactionsResponseData``: versions 0-0, flexible 0+."""

    class TransactionState(KafkaStruct):
        error_code: int
        transactional_id: str
        transaction_state: str
        transaction_timeout_ms: int
        transaction_start_time_ms: int
        producer_id: int
        producer_epoch: int
        topics: list[DescribeTransactionsResponse.TopicData]
        def __init__(
            self,
            *,
            error_code: int = ...,
            transactional_id: str = ...,
            transaction_state: str = ...,
            transaction_timeout_ms: int = ...,
            transaction_start_time_ms: int = ...,
            producer_id: int = ...,
            producer_epoch: int = ...,
            topics: list[DescribeTransactionsResponse.TopicData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TopicData(KafkaStruct):
        topic: str
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    transaction_states: list[DescribeTransactionsResponse.TransactionState]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        transaction_states: list[DescribeTransactionsResponse.TransactionState] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeTransactionsRequest]
RESPONSE: MessageSchema[DescribeTransactionsResponse]
