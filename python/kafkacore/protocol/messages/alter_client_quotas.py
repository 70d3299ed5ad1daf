"""AlterClientQuotas (API key 49), versions 0-1 (KIP-546).

Declared from the facts of Kafka's message definitions
``AlterClientQuotasRequest.json`` and ``AlterClientQuotasResponse.json``. An entity
name of null is the entity type's default.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AlterClientQuotasRequest", "AlterClientQuotasResponse"]

_ENTITY = [
    field("EntityType", "string", "0+"),
    field("EntityName", "string", "0+", nullable="0+"),
]

REQUEST = message(
    "AlterClientQuotasRequest",
    49,
    "request",
    valid="0-1",
    flexible="1+",
    fields=[
        field(
            "Entries",
            "[]EntryData",
            "0+",
            fields=[
                field("Entity", "[]EntityData", "0+", fields=list(_ENTITY)),
                field(
                    "Ops",
                    "[]OpData",
                    "0+",
                    fields=[
                        field("Key", "string", "0+"),
                        field("Value", "float64", "0+"),
                        field("Remove", "bool", "0+"),
                    ],
                ),
            ],
        ),
        field("ValidateOnly", "bool", "0+"),
    ],
)

RESPONSE = message(
    "AlterClientQuotasResponse",
    49,
    "response",
    valid="0-1",
    flexible="1+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Entries",
            "[]EntryData",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+"),
                field("Entity", "[]EntityData", "0+", fields=list(_ENTITY)),
            ],
        ),
    ],
)

AlterClientQuotasRequest = REQUEST.cls
AlterClientQuotasResponse = RESPONSE.cls
