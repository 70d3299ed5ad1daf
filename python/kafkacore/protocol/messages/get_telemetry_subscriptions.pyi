# Generated from get_telemetry_subscriptions.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in get_telemetry_subscriptions.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "GetTelemetrySubscriptionsRequest",
    "GetTelemetrySubscriptionsResponse",
]

class GetTelemetrySubscriptionsRequest(KafkaStruct):
    """Kafka's ``GetTelemetrySubscriptionsRequestData``: versions 0-0, flexible 0+."""

    client_instance_id: uuid.UUID
    def __init__(
        self,
        *,
        client_instance_id: uuid.UUID = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class GetTelemetrySubscriptionsResponse(KafkaStruct):
    """Kafka's ``GetTelemetrySubscriptionsResponseData``: versions 0-0, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    client_instance_id: uuid.UUID
    subscription_id: int
    accepted_compression_types: Sequence[int]
    push_interval_ms: int
    telemetry_max_bytes: int
    delta_temporality: bool
    requested_metrics: Sequence[str]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        client_instance_id: uuid.UUID = ...,
        subscription_id: int = ...,
        accepted_compression_types: Sequence[int] = ...,
        push_interval_ms: int = ...,
        telemetry_max_bytes: int = ...,
        delta_temporality: bool = ...,
        requested_metrics: Sequence[str] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[GetTelemetrySubscriptionsRequest]
RESPONSE: MessageSchema[GetTelemetrySubscriptionsResponse]
