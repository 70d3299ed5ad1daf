# Generated from list_transactions.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in list_transactions.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ListTransactionsRequest", "ListTransactionsResponse"]

class ListTransactionsRequest(KafkaStruct):
    """Kafka's ``ListTransactionsRequestData``: versions 0-2, flexible 0+."""

    state_filters: Sequence[str]
    producer_id_filters: Sequence[int]
    duration_filter: int  # versions 1+; default -1
    transactional_id_pattern: str | None  # versions 2+; nullable 2+; default null
    def __init__(
        self,
        *,
        state_filters: Sequence[str] = ...,
        producer_id_filters: Sequence[int] = ...,
        duration_filter: int = ...,
        transactional_id_pattern: str | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ListTransactionsResponse(KafkaStruct):
    """Kafka's ``ListTransactionsResponseData``: versions 0-2, flexible 0+."""

    class TransactionState(KafkaStruct):
        transactional_id: str
        producer_id: int
        transaction_state: str
        def __init__(
            self,
            *,
            transactional_id: str = ...,
            producer_id: int = ...,
            transaction_state: str = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    unknown_state_filters: Sequence[str]
    transaction_states: list[ListTransactionsResponse.TransactionState]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        unknown_state_filters: Sequence[str] = ...,
        transaction_states: list[ListTransactionsResponse.TransactionState] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ListTransactionsRequest]
RESPONSE: MessageSchema[ListTransactionsResponse]
