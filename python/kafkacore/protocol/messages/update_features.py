"""UpdateFeatures (API key 57), versions 0-2.

Finalized features (KIP-584; v1 validateOnly, v2 drops the per-feature
results).

Declared from the facts of Kafka 4.3.1's message definitions
``UpdateFeaturesRequest.json`` and ``UpdateFeaturesResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "UpdateFeaturesRequest", "UpdateFeaturesResponse"]

REQUEST = message(
    "UpdateFeaturesRequest",
    57,
    "request",
    valid="0-2",
    flexible="0+",
    fields=[
        field("timeoutMs", "int32", "0+", default=60000),
        field(
            "FeatureUpdates",
            "[]FeatureUpdateKey",
            "0+",
            fields=[
                field("Feature", "string", "0+"),
                field("MaxVersionLevel", "int16", "0+"),
                field("AllowDowngrade", "bool", "0"),
                field("UpgradeType", "int8", "1+", default=1),
            ],
        ),
        field("ValidateOnly", "bool", "1+", default=False),
    ],
)

RESPONSE = message(
    "UpdateFeaturesResponse",
    57,
    "response",
    valid="0-2",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
        field(
            "Results",
            "[]UpdatableFeatureResult",
            "0-1",
            fields=[
                field("Feature", "string", "0+"),
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+"),
            ],
        ),
    ],
)

UpdateFeaturesRequest = REQUEST.cls
UpdateFeaturesResponse = RESPONSE.cls
