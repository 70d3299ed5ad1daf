"""FindCoordinator (API key 10), versions 0-6.

Declared from the facts of Kafka 4.3.1's message definitions
``FindCoordinatorRequest.json`` and ``FindCoordinatorResponse.json`` (v5 answers
TRANSACTION_ABORTABLE, v6 the SHARE key type of KIP-932). kafkacore serves v0-4
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "FindCoordinatorRequest", "FindCoordinatorResponse"]

REQUEST = message(
    "FindCoordinatorRequest",
    10,
    "request",
    valid="0-6",
    flexible="3+",
    fields=[
        field("Key", "string", "0-3"),
        field("KeyType", "int8", "1+", default=0),
        field("CoordinatorKeys", "[]string", "4+"),
    ],
)

RESPONSE = message(
    "FindCoordinatorResponse",
    10,
    "response",
    valid="0-6",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field("ErrorCode", "int16", "0-3"),
        field("ErrorMessage", "string", "1-3", nullable="1-3"),
        field("NodeId", "int32", "0-3"),
        field("Host", "string", "0-3"),
        field("Port", "int32", "0-3"),
        field(
            "Coordinators",
            "[]Coordinator",
            "4+",
            fields=[
                field("Key", "string", "4+"),
                field("NodeId", "int32", "4+"),
                field("Host", "string", "4+"),
                field("Port", "int32", "4+"),
                field("ErrorCode", "int16", "4+"),
                field("ErrorMessage", "string", "4+", nullable="4+"),
            ],
        ),
    ],
)

FindCoordinatorRequest = REQUEST.cls
FindCoordinatorResponse = RESPONSE.cls
