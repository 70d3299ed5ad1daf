# Generated from list_partition_reassignments.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in list_partition_reassignments.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "ListPartitionReassignmentsRequest",
    "ListPartitionReassignmentsResponse",
]

class ListPartitionReassignmentsRequest(KafkaStruct):
    """Kafka's ``ListPartitionReassignmentsRequestData``: versions 0-0, flexible 0+."""

    class ListPartitionReassignmentsTopics(KafkaStruct):
        name: str
        partition_indexes: Sequence[int]
        def __init__(
            self,
            *,
            name: str = ...,
            partition_indexes: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    timeout_ms: int  # versions 0+; default 60000
    # versions 0+; nullable 0+; default null
    topics: list[ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics] | None
    def __init__(
        self,
        *,
        timeout_ms: int = ...,
        topics: list[ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics]
        | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ListPartitionReassignmentsResponse(KafkaStruct):
    """Kafka's ``ListPartitionReassignmentsResponseData``: versions 0-0, flexible 0+."""

    class OngoingTopicReassignment(KafkaStruct):
        name: str
        partitions: list[ListPartitionReassignmentsResponse.OngoingPartitionReassignment]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListPartitionReassignmentsResponse.OngoingPartitionReassignment] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OngoingPartitionReassignment(KafkaStruct):
        partition_index: int
        replicas: Sequence[int]
        adding_replicas: Sequence[int]
        removing_replicas: Sequence[int]
        def __init__(
            self,
            *,
            partition_index: int = ...,
            replicas: Sequence[int] = ...,
            adding_replicas: Sequence[int] = ...,
            removing_replicas: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    topics: list[ListPartitionReassignmentsResponse.OngoingTopicReassignment]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        topics: list[ListPartitionReassignmentsResponse.OngoingTopicReassignment] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ListPartitionReassignmentsRequest]
RESPONSE: MessageSchema[ListPartitionReassignmentsResponse]
