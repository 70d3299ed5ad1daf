# Generated from broker_registration.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in broker_registration.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "BrokerRegistrationRequest", "BrokerRegistrationResponse"]

class BrokerRegistrationRequest(KafkaStruct):
    """Kafka's ``BrokerRegistrationRequestData``: versions 0-4, flexible 0+."""

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

    broker_id: int
    cluster_id: str
    incarnation_id: uuid.UUID
    listeners: list[BrokerRegistrationRequest.Listener]
    features: list[BrokerRegistrationRequest.Feature]
    rack: str | None  # versions 0+; nullable 0+
    is_migrating_zk_broker: bool  # versions 1+; default false
    log_dirs: Sequence[uuid.UUID]  # versions 2+
    previous_broker_epoch: int  # versions 3+; default -1
    def __init__(
        self,
        *,
        broker_id: int = ...,
        cluster_id: str = ...,
        incarnation_id: uuid.UUID = ...,
        listeners: list[BrokerRegistrationRequest.Listener] = ...,
        features: list[BrokerRegistrationRequest.Feature] = ...,
        rack: str | None = ...,
        is_migrating_zk_broker: bool = ...,
        log_dirs: Sequence[uuid.UUID] = ...,
        previous_broker_epoch: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class BrokerRegistrationResponse(KafkaStruct):
    """Kafka's ``BrokerRegistrationResponseData``: versions 0-4, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    broker_epoch: int  # versions 0+; default -1
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        broker_epoch: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[BrokerRegistrationRequest]
RESPONSE: MessageSchema[BrokerRegistrationResponse]
