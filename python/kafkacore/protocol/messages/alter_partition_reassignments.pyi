# Generated from alter_partition_reassignments.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in alter_partition_reassignments.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "AlterPartitionReassignmentsRequest",
    "AlterPartitionReassignmentsResponse",
]

class AlterPartitionReassignmentsRequest(KafkaStruct):
    """Kafka's ``AlterPartitionReassignmentsRequestData``: versions 0-1, flexible 0+."""

    class ReassignableTopic(KafkaStruct):
        name: str
        partitions: list[AlterPartitionReassignmentsRequest.ReassignablePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[AlterPartitionReassignmentsRequest.ReassignablePartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ReassignablePartition(KafkaStruct):
        partition_index: int
        replicas: Sequence[int] | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            partition_index: int = ...,
            replicas: Sequence[int] | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    timeout_ms: int  # versions 0+; default 60000
    allow_replication_factor_change: bool  # versions 1+; default true
    topics: list[AlterPartitionReassignmentsRequest.ReassignableTopic]
    def __init__(
        self,
        *,
        timeout_ms: int = ...,
        allow_replication_factor_change: bool = ...,
        topics: list[AlterPartitionReassignmentsRequest.ReassignableTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AlterPartitionReassignmentsResponse(KafkaStruct):
    """Kafka's ``AlterPartitionReassignmentsResponseData``: versions 0-1, flexible 0+."""

    class ReassignableTopicResponse(KafkaStruct):
        name: str
        partitions: list[AlterPartitionReassignmentsResponse.ReassignablePartitionResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[
                AlterPartitionReassignmentsResponse.ReassignablePartitionResponse
            ] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ReassignablePartitionResponse(KafkaStruct):
        partition_index: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    allow_replication_factor_change: bool  # versions 1+; default true
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    responses: list[AlterPartitionReassignmentsResponse.ReassignableTopicResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        allow_replication_factor_change: bool = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        responses: list[AlterPartitionReassignmentsResponse.ReassignableTopicResponse] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AlterPartitionReassignmentsRequest]
RESPONSE: MessageSchema[AlterPartitionReassignmentsResponse]
