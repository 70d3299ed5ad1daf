# Generated from envelope.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in envelope.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "PRINCIPAL",
    "REQUEST",
    "RESPONSE",
    "DefaultPrincipalData",
    "EnvelopeRequest",
    "EnvelopeResponse",
]

class DefaultPrincipalData(KafkaStruct):
    """Kafka's ``DefaultPrincipalData``: versions 0-0, flexible 0+."""

    type: str
    name: str
    token_authenticated: bool
    def __init__(
        self,
        *,
        type: str = ...,
        name: str = ...,
        token_authenticated: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class EnvelopeRequest(KafkaStruct):
    """Kafka's ``EnvelopeRequestData``: versions 0-0, flexible 0+."""

    request_data: bytes
    request_principal: bytes | None  # versions 0+; nullable 0+
    client_host_address: bytes
    def __init__(
        self,
        *,
        request_data: bytes = ...,
        request_principal: bytes | None = ...,
        client_host_address: bytes = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class EnvelopeResponse(KafkaStruct):
    """Kafka's ``EnvelopeResponseData``: versions 0-0, flexible 0+."""

    response_data: bytes | None  # versions 0+; nullable 0+; default null
    error_code: int
    def __init__(
        self,
        *,
        response_data: bytes | None = ...,
        error_code: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

PRINCIPAL: MessageSchema[DefaultPrincipalData]
REQUEST: MessageSchema[EnvelopeRequest]
RESPONSE: MessageSchema[EnvelopeResponse]
