"""IncrementalAlterConfigs (API key 44), versions 0-1.

Declared from the facts of Kafka's message definitions
``IncrementalAlterConfigsRequest.json`` and ``IncrementalAlterConfigsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResponse",
]

REQUEST = message(
    "IncrementalAlterConfigsRequest",
    44,
    "request",
    valid="0-1",
    flexible="1+",
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
                        field("ConfigOperation", "int8", "0+"),
                        field("Value", "string", "0+", nullable="0+"),
                    ],
                ),
            ],
        ),
        field("ValidateOnly", "bool", "0+"),
    ],
)

RESPONSE = message(
    "IncrementalAlterConfigsResponse",
    44,
    "response",
    valid="0-1",
    flexible="1+",
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

IncrementalAlterConfigsRequest = REQUEST.cls
IncrementalAlterConfigsResponse = RESPONSE.cls
