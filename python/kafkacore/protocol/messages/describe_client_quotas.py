"""DescribeClientQuotas (API key 48), versions 0-1 (KIP-546).

Declared from the facts of Kafka's message definitions
``DescribeClientQuotasRequest.json`` and ``DescribeClientQuotasResponse.json``.
``MatchType``: 0 exact name, 1 the default entity, 2 any entity of that type.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeClientQuotasRequest", "DescribeClientQuotasResponse"]

REQUEST = message(
    "DescribeClientQuotasRequest",
    48,
    "request",
    valid="0-1",
    flexible="1+",
    fields=[
        field(
            "Components",
            "[]ComponentData",
            "0+",
            fields=[
                field("EntityType", "string", "0+"),
                field("MatchType", "int8", "0+"),
                field("Match", "string", "0+", nullable="0+"),
            ],
        ),
        field("Strict", "bool", "0+"),
    ],
)

RESPONSE = message(
    "DescribeClientQuotasResponse",
    48,
    "response",
    valid="0-1",
    flexible="1+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
        field(
            "Entries",
            "[]EntryData",
            "0+",
            nullable="0+",
            fields=[
                field(
                    "Entity",
                    "[]EntityData",
                    "0+",
                    fields=[
                        field("EntityType", "string", "0+"),
                        field("EntityName", "string", "0+", nullable="0+"),
                    ],
                ),
                field(
                    "Values",
                    "[]ValueData",
                    "0+",
                    fields=[
                        field("Key", "string", "0+"),
                        field("Value", "float64", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

DescribeClientQuotasRequest = REQUEST.cls
DescribeClientQuotasResponse = RESPONSE.cls
