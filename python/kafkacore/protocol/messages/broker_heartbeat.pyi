# Generated from broker_heartbeat.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in broker_heartbeat.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "BrokerHeartbeatRequest", "BrokerHeartbeatResponse"]

class BrokerHeartbeatRequest(KafkaStruct):
    """Kafka's ``BrokerHeartbeatRequestData``: versions 0-2, flexible 0+."""

    broker_id: int
    broker_epoch: int  # versions 0+; default -1
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool
    offline_log_dirs: Sequence[uuid.UUID]  # versions 1+; tag 0
    cordoned_log_dirs: Sequence[uuid.UUID] | None  # versions 2+; nullable 2+; tag 1; default null
    def __init__(
        self,
        *,
        broker_id: int = ...,
        broker_epoch: int = ...,
        current_metadata_offset: int = ...,
        want_fence: bool = ...,
        want_shut_down: bool = ...,
        offline_log_dirs: Sequence[uuid.UUID] = ...,
        cordoned_log_dirs: Sequence[uuid.UUID] | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class BrokerHeartbeatResponse(KafkaStruct):
    """Kafka's ``BrokerHeartbeatResponseData``: versions 0-2, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    is_caught_up: bool  # versions 0+; default false
    is_fenced: bool  # versions 0+; default true
    should_shut_down: bool
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        is_caught_up: bool = ...,
        is_fenced: bool = ...,
        should_shut_down: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[BrokerHeartbeatRequest]
RESPONSE: MessageSchema[BrokerHeartbeatResponse]
