# Generated from controller_registration.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in controller_registration.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ControllerRegistrationRequest", "ControllerRegistrationResponse"]

class ControllerRegistrationRequest(KafkaStruct):
    """Kafka's ``ControllerRegistrationRequestData``: versions 0-0, flexible 0+."""

    class Listener(KafkaStruct):
        name: str
        host: str
        port: int
        security_protocol: int
        def __init__(
            self,
            *,
            name: str = ...,
            host: str = ...,
            port: int = ...,
            security_protocol: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Feature(KafkaStruct):
        name: str
        min_supported_version: int
        max_supported_version: int
        def __init__(
            self,
            *,
            name: str = ...,
            min_supported_version: int = ...,
            max_supported_version: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    controller_id: int
    incarnation_id: uuid.UUID
    zk_migration_ready: bool
    listeners: list[ControllerRegistrationRequest.Listener]
    features: list[ControllerRegistrationRequest.Feature]
    def __init__(
        self,
        *,
        controller_id: int = ...,
        incarnation_id: uuid.UUID = ...,
        zk_migration_ready: bool = ...,
        listeners: list[ControllerRegistrationRequest.Listener] = ...,
        features: list[ControllerRegistrationRequest.Feature] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ControllerRegistrationResponse(KafkaStruct):
    """Kafka's ``ControllerRegistrationResponseData``: versions 0-0, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ControllerRegistrationRequest]
RESPONSE: MessageSchema[ControllerRegistrationResponse]
