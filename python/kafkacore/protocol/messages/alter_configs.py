"""AlterConfigs (API key 33), versions 0-2.

Declared from the facts of Kafka's message definitions
``AlterConfigsRequest.json`` and ``AlterConfigsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AlterConfigsRequest", "AlterConfigsResponse"]

REQUEST = message(
    "AlterConfigsRequest",
    33,
    "request",
    valid="0-2",
    flexible="2+",
    fields=[
        field(
            "Resources",
            "[]AlterConfigsResource",
            "0+",
            fields=[
                field("ResourceType", "int8", "0+"),
                field("ResourceName", "string", "0+"),
                field(
                    "Configs",
                    "[]AlterableConfig",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field("Value", "string", "0+", nullable="0+"),
                    ],
                ),
            ],
        ),
        field("ValidateOnly", "bool", "0+"),
    ],
)

RESPONSE = message(
    "AlterConfigsResponse",
    33,
    "response",
    valid="0-2",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Responses",
            "[]AlterConfigsResourceResponse",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+"),
                field("ResourceType", "int8", "0+"),
                field("ResourceName", "string", "0+"),
            ],
        ),
    ],
)

AlterConfigsRequest = REQUEST.cls
AlterConfigsResponse = RESPONSE.cls
