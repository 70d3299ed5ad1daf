"""PushTelemetry (API key 72), version 0.

Client metrics (KIP-714): the client's pushed metrics.

Declared from the facts of Kafka 4.3.1's message definitions
``PushTelemetryRequest.json`` and ``PushTelemetryResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "PushTelemetryRequest", "PushTelemetryResponse"]

REQUEST = message(
    "PushTelemetryRequest",
    72,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("ClientInstanceId", "uuid", "0+"),
        field("SubscriptionId", "int32", "0+"),
        field("Terminating", "bool", "0+"),
        field("CompressionType", "int8", "0+"),
        field("Metrics", "bytes", "0+", zero_copy=True),
    ],
)

RESPONSE = message(
    "PushTelemetryResponse",
    72,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
    ],
)

PushTelemetryRequest = REQUEST.cls
PushTelemetryResponse = RESPONSE.cls
