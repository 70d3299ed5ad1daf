"""ListGroups (API key 16), versions 0-5.

Declared from the facts of Kafka's message definitions
``ListGroupsRequest.json`` and ``ListGroupsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "ListGroupsRequest", "ListGroupsResponse"]

REQUEST = message(
    "ListGroupsRequest",
    16,
    "request",
    valid="0-5",
    flexible="3+",
    fields=[
        field("StatesFilter", "[]string", "4+"),
        field("TypesFilter", "[]string", "5+"),
    ],
)

RESPONSE = message(
    "ListGroupsResponse",
    16,
    "response",
    valid="0-5",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field("ErrorCode", "int16", "0+"),
        field(
            "Groups",
            "[]ListedGroup",
            "0+",
            fields=[
                field("GroupId", "string", "0+"),
                field("ProtocolType", "string", "0+"),
                field("GroupState", "string", "4+"),
                field("GroupType", "string", "5+"),
            ],
        ),
    ],
)

ListGroupsRequest = REQUEST.cls
ListGroupsResponse = RESPONSE.cls
