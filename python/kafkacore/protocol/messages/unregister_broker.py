"""UnregisterBroker (API key 64), version 0.

KRaft: remove a broker's registration (KIP-631).

Declared from the facts of Kafka 4.3.1's message definitions
``UnregisterBrokerRequest.json`` and ``UnregisterBrokerResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "UnregisterBrokerRequest", "UnregisterBrokerResponse"]

REQUEST = message(
    "UnregisterBrokerRequest",
    64,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("BrokerId", "int32", "0+"),
    ],
)

RESPONSE = message(
    "UnregisterBrokerResponse",
    64,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
    ],
)

UnregisterBrokerRequest = REQUEST.cls
UnregisterBrokerResponse = RESPONSE.cls
