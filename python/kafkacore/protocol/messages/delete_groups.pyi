# Generated from delete_groups.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in delete_groups.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DeleteGroupsRequest", "DeleteGroupsResponse"]

class DeleteGroupsRequest(KafkaStruct):
    """Kafka's ``DeleteGroupsRequestData``: versions 0-2, flexible 2+."""

    groups_names: Sequence[str]
    def __init__(
        self,
        *,
        groups_names: Sequence[str] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DeleteGroupsResponse(KafkaStruct):
    """Kafka's ``DeleteGroupsResponseData``: versions 0-2, flexible 2+."""

    class DeletableGroupResult(KafkaStruct):
        group_id: str
        error_code: int
        def __init__(
            self,
            *,
            group_id: str = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[DeleteGroupsResponse.DeletableGroupResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[DeleteGroupsResponse.DeletableGroupResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DeleteGroupsRequest]
RESPONSE: MessageSchema[DeleteGroupsResponse]
