# Generated from add_offsets_to_txn.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in add_offsets_to_txn.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AddOffsetsToTxnRequest", "AddOffsetsToTxnResponse"]

class AddOffsetsToTxnRequest(KafkaStruct):
    """Kafka's ``AddOffsetsToTxnRequestData``: versions 0-4, flexible 3+."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str
    def __init__(
        self,
        *,
        transactional_id: str = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        group_id: str = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AddOffsetsToTxnResponse(KafkaStruct):
    """Kafka's ``AddOffsetsToTxnResponseData``: versions 0-4, flexible 3+."""

    throttle_time_ms: int
    error_code: int
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AddOffsetsToTxnRequest]
RESPONSE: MessageSchema[AddOffsetsToTxnResponse]
