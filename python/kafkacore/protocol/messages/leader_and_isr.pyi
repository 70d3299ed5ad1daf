# Generated from leader_and_isr.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in leader_and_isr.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "LeaderAndIsrRequest", "LeaderAndIsrResponse"]

class LeaderAndIsrRequest(KafkaStruct):
    """Kafka's ``LeaderAndIsrRequestData``: versions 0-7, flexible 4+."""

    class LeaderAndIsrPartitionState(KafkaStruct):
        topic_name: str  # versions 0-1
        partition_index: int
        controller_epoch: int
        leader: int
        leader_epoch: int
        isr: Sequence[int]
        partition_epoch: int
        replicas: Sequence[int]
        adding_replicas: Sequence[int]  # versions 3+
        removing_replicas: Sequence[int]  # versions 3+
        is_new: bool  # versions 1+; default false
        leader_recovery_state: int  # versions 6+; default 0
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            controller_epoch: int = ...,
            leader: int = ...,
            leader_epoch: int = ...,
            isr: Sequence[int] = ...,
            partition_epoch: int = ...,
            replicas: Sequence[int] = ...,
            adding_replicas: Sequence[int] = ...,
            removing_replicas: Sequence[int] = ...,
            is_new: bool = ...,
            leader_recovery_state: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderAndIsrTopicState(KafkaStruct):
        topic_name: str  # versions 2+
        topic_id: uuid.UUID  # versions 5+
        partition_states: list[LeaderAndIsrRequest.LeaderAndIsrPartitionState]  # versions 2+
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            partition_states: list[LeaderAndIsrRequest.LeaderAndIsrPartitionState] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderAndIsrLiveLeader(KafkaStruct):
        broker_id: int
        host_name: str
        port: int
        def __init__(
            self,
            *,
            broker_id: int = ...,
            host_name: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    controller_id: int
    is_k_raft_controller: bool  # versions 7+; default false
    controller_epoch: int
    broker_epoch: int  # versions 2+; default -1
    type: int  # versions 5+
    ungrouped_partition_states: list[LeaderAndIsrRequest.LeaderAndIsrPartitionState]  # versions 0-1
    topic_states: list[LeaderAndIsrRequest.LeaderAndIsrTopicState]  # versions 2+
    live_leaders: list[LeaderAndIsrRequest.LeaderAndIsrLiveLeader]
    def __init__(
        self,
        *,
        controller_id: int = ...,
        is_k_raft_controller: bool = ...,
        controller_epoch: int = ...,
        broker_epoch: int = ...,
        type: int = ...,
        ungrouped_partition_states: list[LeaderAndIsrRequest.LeaderAndIsrPartitionState] = ...,
        topic_states: list[LeaderAndIsrRequest.LeaderAndIsrTopicState] = ...,
        live_leaders: list[LeaderAndIsrRequest.LeaderAndIsrLiveLeader] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class LeaderAndIsrResponse(KafkaStruct):
    """Kafka's ``LeaderAndIsrResponseData``: versions 0-7, flexible 4+."""

    class LeaderAndIsrPartitionError(KafkaStruct):
        topic_name: str  # versions 0-4
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

    class LeaderAndIsrTopicError(KafkaStruct):
        topic_id: uuid.UUID  # versions 5+
        partition_errors: list[LeaderAndIsrResponse.LeaderAndIsrPartitionError]  # versions 5+
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partition_errors: list[LeaderAndIsrResponse.LeaderAndIsrPartitionError] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    partition_errors: list[LeaderAndIsrResponse.LeaderAndIsrPartitionError]  # versions 0-4
    topics: list[LeaderAndIsrResponse.LeaderAndIsrTopicError]  # versions 5+
    def __init__(
        self,
        *,
        error_code: int = ...,
        partition_errors: list[LeaderAndIsrResponse.LeaderAndIsrPartitionError] = ...,
        topics: list[LeaderAndIsrResponse.LeaderAndIsrTopicError] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[LeaderAndIsrRequest]
RESPONSE: MessageSchema[LeaderAndIsrResponse]
