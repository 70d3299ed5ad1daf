# Generated from init_producer_id.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in init_producer_id.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "InitProducerIdRequest", "InitProducerIdResponse"]

class InitProducerIdRequest(KafkaStruct):
    """Kafka's ``InitProducerIdRequestData``: versions 0-6, flexible 2+."""

    transactional_id: str | None  # versions 0+; nullable 0+
    transaction_timeout_ms: int
    producer_id: int  # versions 3+; default -1
    producer_epoch: int  # versions 3+; default -1
    enable2_pc: bool  # versions 6+; default false
    keep_prepared_txn: bool  # versions 6+; default false
    def __init__(
        self,
        *,
        transactional_id: str | None = ...,
        transaction_timeout_ms: int = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        enable2_pc: bool = ...,
        keep_prepared_txn: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class InitProducerIdResponse(KafkaStruct):
    """Kafka's ``InitProducerIdResponseData``: versions 0-6, flexible 2+."""

    throttle_time_ms: int
    error_code: int
    producer_id: int  # versions 0+; default -1
    producer_epoch: int
    ongoing_txn_producer_id: int  # versions 6+; default -1
    ongoing_txn_producer_epoch: int  # versions 6+; default -1
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        ongoing_txn_producer_id: int = ...,
        ongoing_txn_producer_epoch: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[InitProducerIdRequest]
RESPONSE: MessageSchema[InitProducerIdResponse]
