# Generated from heartbeat.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in heartbeat.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "HeartbeatRequest", "HeartbeatResponse"]

class HeartbeatRequest(KafkaStruct):
    """Kafka's ``HeartbeatRequestData``: versions 0-4, flexible 4+."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None  # versions 3+; nullable 3+; default null
    def __init__(
        self,
        *,
        group_id: str = ...,
        generation_id: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class HeartbeatResponse(KafkaStruct):
    """Kafka's ``HeartbeatResponseData``: versions 0-4, flexible 4+."""

    throttle_time_ms: int  # versions 1+
    error_code: int
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[HeartbeatRequest]
RESPONSE: MessageSchema[HeartbeatResponse]
