"""CreateAcls (API key 30), versions 1-3.

Declared from the facts of Kafka's message definitions
``CreateAclsRequest.json`` and ``CreateAclsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "CreateAclsRequest", "CreateAclsResponse"]

REQUEST = message(
    "CreateAclsRequest",
    30,
    "request",
    valid="1-3",
    flexible="2+",
    fields=[
        field(
            "Creations",
            "[]AclCreation",
            "1+",
            fields=[
                field("ResourceType", "int8", "1+"),
                field("ResourceName", "string", "1+"),
                field("ResourcePatternType", "int8", "1+", default=3),
                field("Principal", "string", "1+"),
                field("Host", "string", "1+"),
                field("Operation", "int8", "1+"),
                field("PermissionType", "int8", "1+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "CreateAclsResponse",
    30,
    "response",
    valid="1-3",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field(
            "Results",
            "[]AclCreationResult",
            "1+",
            fields=[
                field("ErrorCode", "int16", "1+"),
                field("ErrorMessage", "string", "1+", nullable="1+"),
            ],
        ),
    ],
)

CreateAclsRequest = REQUEST.cls
CreateAclsResponse = RESPONSE.cls
