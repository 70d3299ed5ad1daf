# Generated from push_telemetry.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in push_telemetry.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "PushTelemetryRequest", "PushTelemetryResponse"]

class PushTelemetryRequest(KafkaStruct):
    """Kafka's ``PushTelemetryRequestData``: versions 0-0, flexible 0+."""

    client_instance_id: uuid.UUID
    subscription_id: int
    terminating: bool
    compression_type: int
    metrics: bytes
    def __init__(
        self,
        *,
        client_instance_id: uuid.UUID = ...,
        subscription_id: int = ...,
        terminating: bool = ...,
        compression_type: int = ...,
        metrics: bytes = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class PushTelemetryResponse(KafkaStruct):
    """Kafka's ``PushTelemetryResponseData``: versions 0-0, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[PushTelemetryRequest]
RESPONSE: MessageSchema[PushTelemetryResponse]
