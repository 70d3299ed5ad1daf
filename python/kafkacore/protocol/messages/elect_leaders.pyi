# Generated from elect_leaders.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in elect_leaders.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ElectLeadersRequest", "ElectLeadersResponse"]

class ElectLeadersRequest(KafkaStruct):
    """Kafka's ``ElectLeadersRequestData``: versions 0-2, flexible 2+."""

    class TopicPartitions(KafkaStruct):
        topic: str
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    election_type: int  # versions 1+
    topic_partitions: list[ElectLeadersRequest.TopicPartitions] | None  # versions 0+; nullable 0+
    timeout_ms: int  # versions 0+; default 60000
    def __init__(
        self,
        *,
        election_type: int = ...,
        topic_partitions: list[ElectLeadersRequest.TopicPartitions] | None = ...,
        timeout_ms: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ElectLeadersResponse(KafkaStruct):
    """Kafka's ``ElectLeadersResponseData``: versions 0-2, flexible 2+."""

    class ReplicaElectionResult(KafkaStruct):
        topic: str
        partition_result: list[ElectLeadersResponse.PartitionResult]
        def __init__(
            self,
            *,
            topic: str = ...,
            partition_result: list[ElectLeadersResponse.PartitionResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionResult(KafkaStruct):
        partition_id: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            partition_id: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int  # versions 1+
    replica_election_results: list[ElectLeadersResponse.ReplicaElectionResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        replica_election_results: list[ElectLeadersResponse.ReplicaElectionResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ElectLeadersRequest]
RESPONSE: MessageSchema[ElectLeadersResponse]
