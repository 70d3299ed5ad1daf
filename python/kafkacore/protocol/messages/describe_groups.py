"""DescribeGroups (API key 15), versions 0-6.

Declared from the facts of Kafka 4.3.1's message definitions
``DescribeGroupsRequest.json`` and ``DescribeGroupsResponse.json`` (v6: a per-group
``ErrorMessage``, GROUP_ID_NOT_FOUND, KIP-1043). kafkacore serves v0-5
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeGroupsRequest", "DescribeGroupsResponse"]

REQUEST = message(
    "DescribeGroupsRequest",
    15,
    "request",
    valid="0-6",
    flexible="5+",
    fields=[
        field("Groups", "[]string", "0+"),
        field("IncludeAuthorizedOperations", "bool", "3+"),
    ],
)

RESPONSE = message(
    "DescribeGroupsResponse",
    15,
    "response",
    valid="0-6",
    flexible="5+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field(
            "Groups",
            "[]DescribedGroup",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "6+", nullable="6+", default=NULL),
                field("GroupId", "string", "0+"),
                field("GroupState", "string", "0+"),
                field("ProtocolType", "string", "0+"),
                field("ProtocolData", "string", "0+"),
                field(
                    "Members",
                    "[]DescribedGroupMember",
                    "0+",
                    fields=[
                        field("MemberId", "string", "0+"),
                        field("GroupInstanceId", "string", "4+", nullable="4+", default=NULL),
                        field("ClientId", "string", "0+"),
                        field("ClientHost", "string", "0+"),
                        field("MemberMetadata", "bytes", "0+"),
                        field("MemberAssignment", "bytes", "0+"),
                    ],
                ),
                field("AuthorizedOperations", "int32", "3+", default=-2147483648),
            ],
        ),
    ],
)

DescribeGroupsRequest = REQUEST.cls
DescribeGroupsResponse = RESPONSE.cls
