# Generated from sasl_handshake.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in sasl_handshake.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "SaslHandshakeRequest", "SaslHandshakeResponse"]

class SaslHandshakeRequest(KafkaStruct):
    """Kafka's ``SaslHandshakeRequestData``: versions 0-1."""

    mechanism: str
    def __init__(
        self,
        *,
        mechanism: str = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class SaslHandshakeResponse(KafkaStruct):
    """Kafka's ``SaslHandshakeResponseData``: versions 0-1."""

    error_code: int
    mechanisms: Sequence[str]
    def __init__(
        self,
        *,
        error_code: int = ...,
        mechanisms: Sequence[str] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[SaslHandshakeRequest]
RESPONSE: MessageSchema[SaslHandshakeResponse]
