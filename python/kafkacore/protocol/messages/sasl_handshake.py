"""SaslHandshake (API key 17), versions 0-1.

Declared from the facts of Kafka's message definitions
``SaslHandshakeRequest.json`` and ``SaslHandshakeResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "SaslHandshakeRequest", "SaslHandshakeResponse"]

REQUEST = message(
    "SaslHandshakeRequest",
    17,
    "request",
    valid="0-1",
    flexible="none",
    fields=[
        field("Mechanism", "string", "0+"),
    ],
)

RESPONSE = message(
    "SaslHandshakeResponse",
    17,
    "response",
    valid="0-1",
    flexible="none",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field("Mechanisms", "[]string", "0+"),
    ],
)

SaslHandshakeRequest = REQUEST.cls
SaslHandshakeResponse = RESPONSE.cls
