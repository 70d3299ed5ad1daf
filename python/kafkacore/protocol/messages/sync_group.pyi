# Generated from sync_group.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in sync_group.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "SyncGroupRequest", "SyncGroupResponse"]

class SyncGroupRequest(KafkaStruct):
    """Kafka's ``SyncGroupRequestData``: versions 0-5, flexible 4+."""

    class SyncGroupRequestAssignment(KafkaStruct):
        member_id: str
        assignment: bytes
        def __init__(
            self,
            *,
            member_id: str = ...,
            assignment: bytes = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None  # versions 3+; nullable 3+; default null
    protocol_type: str | None  # versions 5+; nullable 5+; default null
    protocol_name: str | None  # versions 5+; nullable 5+; default null
    assignments: list[SyncGroupRequest.SyncGroupRequestAssignment]
    def __init__(
        self,
        *,
        group_id: str = ...,
        generation_id: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        protocol_type: str | None = ...,
        protocol_name: str | None = ...,
        assignments: list[SyncGroupRequest.SyncGroupRequestAssignment] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class SyncGroupResponse(KafkaStruct):
    """Kafka's ``SyncGroupResponseData``: versions 0-5, flexible 4+."""

    throttle_time_ms: int  # versions 1+
    error_code: int
    protocol_type: str | None  # versions 5+; nullable 5+; default null
    protocol_name: str | None  # versions 5+; nullable 5+; default null
    assignment: bytes
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        protocol_type: str | None = ...,
        protocol_name: str | None = ...,
        assignment: bytes = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[SyncGroupRequest]
RESPONSE: MessageSchema[SyncGroupResponse]
