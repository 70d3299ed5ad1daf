# Generated from join_group.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in join_group.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "JoinGroupRequest", "JoinGroupResponse"]

class JoinGroupRequest(KafkaStruct):
    """Kafka's ``JoinGroupRequestData``: versions 0-9, flexible 6+."""

    class JoinGroupRequestProtocol(KafkaStruct):
        name: str
        metadata: bytes
        def __init__(
            self,
            *,
            name: str = ...,
            metadata: bytes = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int  # versions 1+; default -1
    member_id: str
    group_instance_id: str | None  # versions 5+; nullable 5+; default null
    protocol_type: str
    protocols: list[JoinGroupRequest.JoinGroupRequestProtocol]
    reason: str | None  # versions 8+; nullable 8+; default null
    def __init__(
        self,
        *,
        group_id: str = ...,
        session_timeout_ms: int = ...,
        rebalance_timeout_ms: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        protocol_type: str = ...,
        protocols: list[JoinGroupRequest.JoinGroupRequestProtocol] = ...,
        reason: str | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class JoinGroupResponse(KafkaStruct):
    """Kafka's ``JoinGroupResponseData``: versions 0-9, flexible 6+."""

    class JoinGroupResponseMember(KafkaStruct):
        member_id: str
        group_instance_id: str | None  # versions 5+; nullable 5+; default null
        metadata: bytes
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            metadata: bytes = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 2+
    error_code: int
    generation_id: int  # versions 0+; default -1
    protocol_type: str | None  # versions 7+; nullable 7+; default null
    protocol_name: str | None  # versions 0+; nullable 7+
    leader: str
    skip_assignment: bool  # versions 9+; default false
    member_id: str
    members: list[JoinGroupResponse.JoinGroupResponseMember]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        generation_id: int = ...,
        protocol_type: str | None = ...,
        protocol_name: str | None = ...,
        leader: str = ...,
        skip_assignment: bool = ...,
        member_id: str = ...,
        members: list[JoinGroupResponse.JoinGroupResponseMember] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[JoinGroupRequest]
RESPONSE: MessageSchema[JoinGroupResponse]
