"""GetTelemetrySubscriptions (API key 71), version 0.

Client metrics (KIP-714): what the client should push.

Declared from the facts of Kafka 4.3.1's message definitions
``GetTelemetrySubscriptionsRequest.json`` and ``GetTelemetrySubscriptionsResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "GetTelemetrySubscriptionsRequest",
    "GetTelemetrySubscriptionsResponse",
]

REQUEST = message(
    "GetTelemetrySubscriptionsRequest",
    71,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("ClientInstanceId", "uuid", "0+"),
    ],
)

RESPONSE = message(
    "GetTelemetrySubscriptionsResponse",
    71,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ClientInstanceId", "uuid", "0+"),
        field("SubscriptionId", "int32", "0+"),
        field("AcceptedCompressionTypes", "[]int8", "0+"),
        field("PushIntervalMs", "int32", "0+"),
        field("TelemetryMaxBytes", "int32", "0+"),
        field("DeltaTemporality", "bool", "0+"),
        field("RequestedMetrics", "[]string", "0+"),
    ],
)

GetTelemetrySubscriptionsRequest = REQUEST.cls
GetTelemetrySubscriptionsResponse = RESPONSE.cls
