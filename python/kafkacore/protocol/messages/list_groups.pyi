# Generated from list_groups.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in list_groups.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ListGroupsRequest", "ListGroupsResponse"]

class ListGroupsRequest(KafkaStruct):
    """Kafka's ``ListGroupsRequestData``: versions 0-5, flexible 3+."""

    states_filter: Sequence[str]  # versions 4+
    types_filter: Sequence[str]  # versions 5+
    def __init__(
        self,
        *,
        states_filter: Sequence[str] = ...,
        types_filter: Sequence[str] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ListGroupsResponse(KafkaStruct):
    """Kafka's ``ListGroupsResponseData``: versions 0-5, flexible 3+."""

    class ListedGroup(KafkaStruct):
        group_id: str
        protocol_type: str
        group_state: str  # versions 4+
        group_type: str  # versions 5+
        def __init__(
            self,
            *,
            group_id: str = ...,
            protocol_type: str = ...,
            group_state: str = ...,
            group_type: str = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    error_code: int
    groups: list[ListGroupsResponse.ListedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        groups: list[ListGroupsResponse.ListedGroup] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ListGroupsRequest]
RESPONSE: MessageSchema[ListGroupsResponse]
