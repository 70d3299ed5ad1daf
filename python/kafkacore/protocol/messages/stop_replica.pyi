# Generated from stop_replica.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in stop_replica.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "StopReplicaRequest", "StopReplicaResponse"]

class StopReplicaRequest(KafkaStruct):
    """Kafka's ``StopReplicaRequestData``: versions 0-4, flexible 2+."""

    class StopReplicaPartitionV0(KafkaStruct):
        topic_name: str  # versions 0-0
        partition_index: int  # versions 0-0
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class StopReplicaTopicV1(KafkaStruct):
        name: str  # versions 1-2
        partition_indexes: Sequence[int]  # versions 1-2
        def __init__(
            self,
            *,
            name: str = ...,
            partition_indexes: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class StopReplicaTopicState(KafkaStruct):
        topic_name: str  # versions 3+
        partition_states: list[StopReplicaRequest.StopReplicaPartitionState]  # versions 3+
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_states: list[StopReplicaRequest.StopReplicaPartitionState] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class StopReplicaPartitionState(KafkaStruct):
        partition_index: int  # versions 3+
        leader_epoch: int  # versions 3+; default -1
        delete_partition: bool  # versions 3+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            leader_epoch: int = ...,
            delete_partition: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    controller_id: int
    is_k_raft_controller: bool  # versions 4+; default false
    controller_epoch: int
    broker_epoch: int  # versions 1+; default -1
    delete_partitions: bool  # versions 0-2
    ungrouped_partitions: list[StopReplicaRequest.StopReplicaPartitionV0]  # versions 0-0
    topics: list[StopReplicaRequest.StopReplicaTopicV1]  # versions 1-2
    topic_states: list[StopReplicaRequest.StopReplicaTopicState]  # versions 3+
    def __init__(
        self,
        *,
        controller_id: int = ...,
        is_k_raft_controller: bool = ...,
        controller_epoch: int = ...,
        broker_epoch: int = ...,
        delete_partitions: bool = ...,
        ungrouped_partitions: list[StopReplicaRequest.StopReplicaPartitionV0] = ...,
        topics: list[StopReplicaRequest.StopReplicaTopicV1] = ...,
        topic_states: list[StopReplicaRequest.StopReplicaTopicState] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class StopReplicaResponse(KafkaStruct):
    """Kafka's ``StopReplicaResponseData``: versions 0-4, flexible 2+."""

    class StopReplicaPartitionError(KafkaStruct):
        topic_name: str
        partition_index: int
        error_code: int
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    partition_errors: list[StopReplicaResponse.StopReplicaPartitionError]
    def __init__(
        self,
        *,
        error_code: int = ...,
        partition_errors: list[StopReplicaResponse.StopReplicaPartitionError] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[StopReplicaRequest]
RESPONSE: MessageSchema[StopReplicaResponse]
