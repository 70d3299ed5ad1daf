# Generated from sasl_authenticate.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in sasl_authenticate.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "SaslAuthenticateRequest", "SaslAuthenticateResponse"]

class SaslAuthenticateRequest(KafkaStruct):
    """Kafka's ``SaslAuthenticateRequestData``: versions 0-2, flexible 2+."""

    auth_bytes: bytes
    def __init__(
        self,
        *,
        auth_bytes: bytes = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class SaslAuthenticateResponse(KafkaStruct):
    """Kafka's ``SaslAuthenticateResponseData``: versions 0-2, flexible 2+."""

    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    auth_bytes: bytes
    session_lifetime_ms: int  # versions 1+; default 0
    def __init__(
        self,
        *,
        error_code: int = ...,
        error_message: str | None = ...,
        auth_bytes: bytes = ...,
        session_lifetime_ms: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[SaslAuthenticateRequest]
RESPONSE: MessageSchema[SaslAuthenticateResponse]
