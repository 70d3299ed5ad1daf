"""SaslAuthenticate (API key 36), versions 0-2.

Declared from the facts of Kafka's message definitions
``SaslAuthenticateRequest.json`` and ``SaslAuthenticateResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "SaslAuthenticateRequest", "SaslAuthenticateResponse"]

REQUEST = message(
    "SaslAuthenticateRequest",
    36,
    "request",
    valid="0-2",
    flexible="2+",
    fields=[
        field("AuthBytes", "bytes", "0+"),
    ],
)

RESPONSE = message(
    "SaslAuthenticateResponse",
    36,
    "response",
    valid="0-2",
    flexible="2+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
        field("AuthBytes", "bytes", "0+"),
        field("SessionLifetimeMs", "int64", "1+", default=0),
    ],
)

SaslAuthenticateRequest = REQUEST.cls
SaslAuthenticateResponse = RESPONSE.cls
