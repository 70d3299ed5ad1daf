"""JoinGroup (API key 11), versions 0-9.

Declared from the facts of Kafka's message definitions
``JoinGroupRequest.json`` and ``JoinGroupResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "JoinGroupRequest", "JoinGroupResponse"]

REQUEST = message(
    "JoinGroupRequest",
    11,
    "request",
    valid="0-9",
    flexible="6+",
    fields=[
        field("GroupId", "string", "0+"),
        field("SessionTimeoutMs", "int32", "0+"),
        field("RebalanceTimeoutMs", "int32", "1+", default=-1),
        field("MemberId", "string", "0+"),
        field("GroupInstanceId", "string", "5+", nullable="5+", default=NULL),
        field("ProtocolType", "string", "0+"),
        field(
            "Protocols",
            "[]JoinGroupRequestProtocol",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("Metadata", "bytes", "0+"),
            ],
        ),
        field("Reason", "string", "8+", nullable="8+", default=NULL),
    ],
)

RESPONSE = message(
    "JoinGroupResponse",
    11,
    "response",
    valid="0-9",
    flexible="6+",
    fields=[
        field("ThrottleTimeMs", "int32", "2+"),
        field("ErrorCode", "int16", "0+"),
        field("GenerationId", "int32", "0+", default=-1),
        field("ProtocolType", "string", "7+", nullable="7+", default=NULL),
        field("ProtocolName", "string", "0+", nullable="7+"),
        field("Leader", "string", "0+"),
        field("SkipAssignment", "bool", "9+", default=False),
        field("MemberId", "string", "0+"),
        field(
            "Members",
            "[]JoinGroupResponseMember",
            "0+",
            fields=[
                field("MemberId", "string", "0+"),
                field("GroupInstanceId", "string", "5+", nullable="5+", default=NULL),
                field("Metadata", "bytes", "0+"),
            ],
        ),
    ],
)

JoinGroupRequest = REQUEST.cls
JoinGroupResponse = RESPONSE.cls
