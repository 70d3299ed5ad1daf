# Generated from unregister_broker.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in unregister_broker.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "UnregisterBrokerRequest", "UnregisterBrokerResponse"]

class UnregisterBrokerRequest(KafkaStruct):
    """Kafka's ``UnregisterBrokerRequestData``: versions 0-0, flexible 0+."""

    broker_id: int
    def __init__(
        self,
        *,
        broker_id: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class UnregisterBrokerResponse(KafkaStruct):
    """Kafka's ``UnregisterBrokerResponseData``: versions 0-0, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[UnregisterBrokerRequest]
RESPONSE: MessageSchema[UnregisterBrokerResponse]
