# Generated from leave_group.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in leave_group.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "LeaveGroupRequest", "LeaveGroupResponse"]

class LeaveGroupRequest(KafkaStruct):
    """Kafka's ``LeaveGroupRequestData``: versions 0-5, flexible 4+."""

    class MemberIdentity(KafkaStruct):
        member_id: str  # versions 3+
        group_instance_id: str | None  # versions 3+; nullable 3+; default null
        reason: str | None  # versions 5+; nullable 5+; default null
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            reason: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    member_id: str  # versions 0-2
    members: list[LeaveGroupRequest.MemberIdentity]  # versions 3+
    def __init__(
        self,
        *,
        group_id: str = ...,
        member_id: str = ...,
        members: list[LeaveGroupRequest.MemberIdentity] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class LeaveGroupResponse(KafkaStruct):
    """Kafka's ``LeaveGroupResponseData``: versions 0-5, flexible 4+."""

    class MemberResponse(KafkaStruct):
        member_id: str  # versions 3+
        group_instance_id: str | None  # versions 3+; nullable 3+
        error_code: int  # versions 3+
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    error_code: int
    members: list[LeaveGroupResponse.MemberResponse]  # versions 3+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        members: list[LeaveGroupResponse.MemberResponse] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[LeaveGroupRequest]
RESPONSE: MessageSchema[LeaveGroupResponse]
