# Generated from describe_groups.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_groups.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeGroupsRequest", "DescribeGroupsResponse"]

class DescribeGroupsRequest(KafkaStruct):
    """Kafka's ``DescribeGroupsRequestData``: versions 0-6, flexible 5+."""

    groups: Sequence[str]
    include_authorized_operations: bool  # versions 3+
    def __init__(
        self,
        *,
        groups: Sequence[str] = ...,
        include_authorized_operations: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeGroupsResponse(KafkaStruct):
    """Kafka's ``DescribeGroupsResponseData``: versions 0-6, flexible 5+."""

    class DescribedGroup(KafkaStruct):
        error_code: int
        error_message: str | None  # versions 6+; nullable 6+; default null
        group_id: str
        group_state: str
        protocol_type: str
        protocol_data: str
        members: list[DescribeGroupsResponse.DescribedGroupMember]
        authorized_operations: int  # versions 3+; default -2147483648
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            group_id: str = ...,
            group_state: str = ...,
            protocol_type: str = ...,
            protocol_data: str = ...,
            members: list[DescribeGroupsResponse.DescribedGroupMember] = ...,
            authorized_operations: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribedGroupMember(KafkaStruct):
        member_id: str
        group_instance_id: str | None  # versions 4+; nullable 4+; default null
        client_id: str
        client_host: str
        member_metadata: bytes
        member_assignment: bytes
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            client_id: str = ...,
            client_host: str = ...,
            member_metadata: bytes = ...,
            member_assignment: bytes = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    groups: list[DescribeGroupsResponse.DescribedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[DescribeGroupsResponse.DescribedGroup] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeGroupsRequest]
RESPONSE: MessageSchema[DescribeGroupsResponse]
