"""LeaveGroup (API key 13), versions 0-5.

Declared from the facts of Kafka's message definitions
``LeaveGroupRequest.json`` and ``LeaveGroupResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "LeaveGroupRequest", "LeaveGroupResponse"]

REQUEST = message(
    "LeaveGroupRequest",
    13,
    "request",
    valid="0-5",
    flexible="4+",
    fields=[
        field("GroupId", "string", "0+"),
        field("MemberId", "string", "0-2"),
        field(
            "Members",
            "[]MemberIdentity",
            "3+",
            fields=[
                field("MemberId", "string", "3+"),
                field("GroupInstanceId", "string", "3+", nullable="3+", default=NULL),
                field("Reason", "string", "5+", nullable="5+", default=NULL),
            ],
        ),
    ],
)

RESPONSE = message(
    "LeaveGroupResponse",
    13,
    "response",
    valid="0-5",
    flexible="4+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field("ErrorCode", "int16", "0+"),
        field(
            "Members",
            "[]MemberResponse",
            "3+",
            fields=[
                field("MemberId", "string", "3+"),
                field("GroupInstanceId", "string", "3+", nullable="3+"),
                field("ErrorCode", "int16", "3+"),
            ],
        ),
    ],
)

LeaveGroupRequest = REQUEST.cls
LeaveGroupResponse = RESPONSE.cls
