"""DescribeConfigs (API key 32), versions 1-4.

Declared from the facts of Kafka's message definitions
``DescribeConfigsRequest.json`` and ``DescribeConfigsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeConfigsRequest", "DescribeConfigsResponse"]

REQUEST = message(
    "DescribeConfigsRequest",
    32,
    "request",
    valid="1-4",
    flexible="4+",
    fields=[
        field(
            "Resources",
            "[]DescribeConfigsResource",
            "1+",
            fields=[
                field("ResourceType", "int8", "1+"),
                field("ResourceName", "string", "1+"),
                field("ConfigurationKeys", "[]string", "1+", nullable="1+"),
            ],
        ),
        field("IncludeSynonyms", "bool", "1+", default=False),
        field("IncludeDocumentation", "bool", "3+", default=False),
    ],
)

RESPONSE = message(
    "DescribeConfigsResponse",
    32,
    "response",
    valid="1-4",
    flexible="4+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field(
            "Results",
            "[]DescribeConfigsResult",
            "1+",
            fields=[
                field("ErrorCode", "int16", "1+"),
                field("ErrorMessage", "string", "1+", nullable="1+"),
                field("ResourceType", "int8", "1+"),
                field("ResourceName", "string", "1+"),
                field(
                    "Configs",
                    "[]DescribeConfigsResourceResult",
                    "1+",
                    fields=[
                        field("Name", "string", "1+"),
                        field("Value", "string", "1+", nullable="1+"),
                        field("ReadOnly", "bool", "1+"),
                        field("ConfigSource", "int8", "1+", default=-1),
                        field("IsSensitive", "bool", "1+"),
                        field(
                            "Synonyms",
                            "[]DescribeConfigsSynonym",
                            "1+",
                            fields=[
                                field("Name", "string", "1+"),
                                field("Value", "string", "1+", nullable="1+"),
                                field("Source", "int8", "1+"),
                            ],
                        ),
                        field("ConfigType", "int8", "3+", default=0),
                        field("Documentation", "string", "3+", nullable="1+"),
                    ],
                ),
            ],
        ),
    ],
)

DescribeConfigsRequest = REQUEST.cls
DescribeConfigsResponse = RESPONSE.cls
