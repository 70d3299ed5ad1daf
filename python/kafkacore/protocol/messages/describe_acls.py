"""DescribeAcls (API key 29), versions 1-3.

Declared from the facts of Kafka's message definitions
``DescribeAclsRequest.json`` and ``DescribeAclsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeAclsRequest", "DescribeAclsResponse"]

REQUEST = message(
    "DescribeAclsRequest",
    29,
    "request",
    valid="1-3",
    flexible="2+",
    fields=[
        field("ResourceTypeFilter", "int8", "1+"),
        field("ResourceNameFilter", "string", "1+", nullable="1+"),
        field("PatternTypeFilter", "int8", "1+", default=3),
        field("PrincipalFilter", "string", "1+", nullable="1+"),
        field("HostFilter", "string", "1+", nullable="1+"),
        field("Operation", "int8", "1+"),
        field("PermissionType", "int8", "1+"),
    ],
)

RESPONSE = message(
    "DescribeAclsResponse",
    29,
    "response",
    valid="1-3",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field("ErrorCode", "int16", "1+"),
        field("ErrorMessage", "string", "1+", nullable="1+"),
        field(
            "Resources",
            "[]DescribeAclsResource",
            "1+",
            fields=[
                field("ResourceType", "int8", "1+"),
                field("ResourceName", "string", "1+"),
                field("PatternType", "int8", "1+", default=3),
                field(
                    "Acls",
                    "[]AclDescription",
                    "1+",
                    fields=[
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

DescribeAclsRequest = REQUEST.cls
DescribeAclsResponse = RESPONSE.cls
