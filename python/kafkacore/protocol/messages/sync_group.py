"""SyncGroup (API key 14), versions 0-5.

Declared from the facts of Kafka's message definitions
``SyncGroupRequest.json`` and ``SyncGroupResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "SyncGroupRequest", "SyncGroupResponse"]

REQUEST = message(
    "SyncGroupRequest",
    14,
    "request",
    valid="0-5",
    flexible="4+",
    fields=[
        field("GroupId", "string", "0+"),
        field("GenerationId", "int32", "0+"),
        field("MemberId", "string", "0+"),
        field("GroupInstanceId", "string", "3+", nullable="3+", default=NULL),
        field("ProtocolType", "string", "5+", nullable="5+", default=NULL),
        field("ProtocolName", "string", "5+", nullable="5+", default=NULL),
        field(
            "Assignments",
            "[]SyncGroupRequestAssignment",
            "0+",
            fields=[
                field("MemberId", "string", "0+"),
                field("Assignment", "bytes", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "SyncGroupResponse",
    14,
    "response",
    valid="0-5",
    flexible="4+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field("ErrorCode", "int16", "0+"),
        field("ProtocolType", "string", "5+", nullable="5+", default=NULL),
        field("ProtocolName", "string", "5+", nullable="5+", default=NULL),
        field("Assignment", "bytes", "0+"),
    ],
)

SyncGroupRequest = REQUEST.cls
SyncGroupResponse = RESPONSE.cls
