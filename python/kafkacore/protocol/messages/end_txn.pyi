# Generated from end_txn.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in end_txn.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "EndTxnRequest", "EndTxnResponse"]

class EndTxnRequest(KafkaStruct):
    """Kafka's ``EndTxnRequestData``: versions 0-5, flexible 3+."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    def __init__(
        self,
        *,
        transactional_id: str = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        committed: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class EndTxnResponse(KafkaStruct):
    """Kafka's ``EndTxnResponseData``: versions 0-5, flexible 3+."""

    throttle_time_ms: int
    error_code: int
    producer_id: int  # versions 5+; default -1
    producer_epoch: int  # versions 5+; default -1
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[EndTxnRequest]
RESPONSE: MessageSchema[EndTxnResponse]
