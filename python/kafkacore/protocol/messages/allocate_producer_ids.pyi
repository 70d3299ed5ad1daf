# Generated from allocate_producer_ids.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in allocate_producer_ids.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AllocateProducerIdsRequest", "AllocateProducerIdsResponse"]

class AllocateProducerIdsRequest(KafkaStruct):
    """Kafka's ``AllocateProducerIdsRequestData``: versions 0-0, flexible 0+."""

    broker_id: int
    broker_epoch: int  # versions 0+; default -1
    def __init__(
        self,
        *,
        broker_id: int = ...,
        broker_epoch: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AllocateProducerIdsResponse(KafkaStruct):
    """Kafka's ``AllocateProducerIdsResponseData``: versions 0-0, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    producer_id_start: int
    producer_id_len: int
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        producer_id_start: int = ...,
        producer_id_len: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AllocateProducerIdsRequest]
RESPONSE: MessageSchema[AllocateProducerIdsResponse]
