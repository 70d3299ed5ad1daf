"""ApiVersions (API key 18), versions 0-4.

Declared from the facts of Kafka's message definitions
``ApiVersionsRequest.json`` and ``ApiVersionsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "ApiVersionsRequest", "ApiVersionsResponse"]

REQUEST = message(
    "ApiVersionsRequest",
    18,
    "request",
    valid="0-4",
    flexible="3+",
    fields=[
        field("ClientSoftwareName", "string", "3+"),
        field("ClientSoftwareVersion", "string", "3+"),
    ],
)

RESPONSE = message(
    "ApiVersionsResponse",
    18,
    "response",
    valid="0-4",
    flexible="3+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field(
            "ApiKeys",
            "[]ApiVersion",
            "0+",
            fields=[
                field("ApiKey", "int16", "0+"),
                field("MinVersion", "int16", "0+"),
                field("MaxVersion", "int16", "0+"),
            ],
        ),
        field("ThrottleTimeMs", "int32", "1+"),
        field(
            "SupportedFeatures",
            "[]SupportedFeatureKey",
            "3+",
            tagged="3+",
            tag=0,
            fields=[
                field("Name", "string", "3+"),
                field("MinVersion", "int16", "3+"),
                field("MaxVersion", "int16", "3+"),
            ],
        ),
        field("FinalizedFeaturesEpoch", "int64", "3+", tagged="3+", tag=1, default=-1),
        field(
            "FinalizedFeatures",
            "[]FinalizedFeatureKey",
            "3+",
            tagged="3+",
            tag=2,
            fields=[
                field("Name", "string", "3+"),
                field("MaxVersionLevel", "int16", "3+"),
                field("MinVersionLevel", "int16", "3+"),
            ],
        ),
        field("ZkMigrationReady", "bool", "3+", tagged="3+", tag=3, default=False),
    ],
)

ApiVersionsRequest = REQUEST.cls
ApiVersionsResponse = RESPONSE.cls
