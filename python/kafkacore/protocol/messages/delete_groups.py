"""DeleteGroups (API key 42), versions 0-2.

Declared from the facts of Kafka's message definitions
``DeleteGroupsRequest.json`` and ``DeleteGroupsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DeleteGroupsRequest", "DeleteGroupsResponse"]

REQUEST = message(
    "DeleteGroupsRequest",
    42,
    "request",
    valid="0-2",
    flexible="2+",
    fields=[
        field("GroupsNames", "[]string", "0+"),
    ],
)

RESPONSE = message(
    "DeleteGroupsResponse",
    42,
    "response",
    valid="0-2",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Results",
            "[]DeletableGroupResult",
            "0+",
            fields=[
                field("GroupId", "string", "0+"),
                field("ErrorCode", "int16", "0+"),
            ],
        ),
    ],
)

DeleteGroupsRequest = REQUEST.cls
DeleteGroupsResponse = RESPONSE.cls
