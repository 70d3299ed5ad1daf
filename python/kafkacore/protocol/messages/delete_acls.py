"""DeleteAcls (API key 31), versions 1-3.

Declared from the facts of Kafka's message definitions
``DeleteAclsRequest.json`` and ``DeleteAclsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DeleteAclsRequest", "DeleteAclsResponse"]

REQUEST = message(
    "DeleteAclsRequest",
    31,
    "request",
    valid="1-3",
    flexible="2+",
    fields=[
        field(
            "Filters",
            "[]DeleteAclsFilter",
            "1+",
            fields=[
                field("ResourceTypeFilter", "int8", "1+"),
                field("ResourceNameFilter", "string", "1+", nullable="1+"),
                field("PatternTypeFilter", "int8", "1+", default=3),
                field("PrincipalFilter", "string", "1+", nullable="1+"),
                field("HostFilter", "string", "1+", nullable="1+"),
                field("Operation", "int8", "1+"),
                field("PermissionType", "int8", "1+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "DeleteAclsResponse",
    31,
    "response",
    valid="1-3",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field(
            "FilterResults",
            "[]DeleteAclsFilterResult",
            "1+",
            fields=[
                field("ErrorCode", "int16", "1+"),
                field("ErrorMessage", "string", "1+", nullable="1+"),
                field(
                    "MatchingAcls",
                    "[]DeleteAclsMatchingAcl",
                    "1+",
                    fields=[
                        field("ErrorCode", "int16", "1+"),
                        field("ErrorMessage", "string", "1+", nullable="1+"),
                        field("ResourceType", "int8", "1+"),
                        field("ResourceName", "string", "1+"),
                        field("PatternType", "int8", "1+", default=3),
                        field("Principal", "string", "1+"),
                        field("Host", "string", "1+"),
                        field("Operation", "int8", "1+"),
                        field("PermissionType", "int8", "1+"),
                    ],
                ),
            ],
        ),
    ],
)

DeleteAclsRequest = REQUEST.cls
DeleteAclsResponse = RESPONSE.cls
