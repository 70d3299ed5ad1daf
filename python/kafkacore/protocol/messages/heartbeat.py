"""Heartbeat (API key 12), versions 0-4.

Declared from the facts of Kafka's message definitions
``HeartbeatRequest.json`` and ``HeartbeatResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "HeartbeatRequest", "HeartbeatResponse"]

REQUEST = message(
    "HeartbeatRequest",
    12,
    "request",
    valid="0-4",
    flexible="4+",
    fields=[
        field("GroupId", "string", "0+"),
        field("GenerationId", "int32", "0+"),
        field("MemberId", "string", "0+"),
        field("GroupInstanceId", "string", "3+", nullable="3+", default=NULL),
    ],
)

RESPONSE = message(
    "HeartbeatResponse",
    12,
    "response",
    valid="0-4",
    flexible="4+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field("ErrorCode", "int16", "0+"),
    ],
)

HeartbeatRequest = REQUEST.cls
HeartbeatResponse = RESPONSE.cls
