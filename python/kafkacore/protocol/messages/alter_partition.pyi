# Generated from alter_partition.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in alter_partition.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AlterPartitionRequest", "AlterPartitionResponse"]

class AlterPartitionRequest(KafkaStruct):
    """Kafka's ``AlterPartitionRequestData``: versions 0-3, flexible 0+."""

    class TopicData(KafkaStruct):
        topic_name: str  # versions 0-1
        topic_id: uuid.UUID  # versions 2+
        partitions: list[AlterPartitionRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[AlterPartitionRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        leader_epoch: int
        new_isr: Sequence[int]  # versions 0-2
        new_isr_with_epochs: list[AlterPartitionRequest.BrokerState]  # versions 3+
        leader_recovery_state: int  # versions 1+; default 0
        partition_epoch: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            leader_epoch: int = ...,
            new_isr: Sequence[int] = ...,
            new_isr_with_epochs: list[AlterPartitionRequest.BrokerState] = ...,
            leader_recovery_state: int = ...,
            partition_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class BrokerState(KafkaStruct):
        broker_id: int  # versions 3+
        broker_epoch: int  # versions 3+; default -1
        def __init__(
            self,
            *,
            broker_id: int = ...,
            broker_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    broker_id: int
    broker_epoch: int  # versions 0+; default -1
    topics: list[AlterPartitionRequest.TopicData]
    def __init__(
        self,
        *,
        broker_id: int = ...,
        broker_epoch: int = ...,
        topics: list[AlterPartitionRequest.TopicData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AlterPartitionResponse(KafkaStruct):
    """Kafka's ``AlterPartitionResponseData``: versions 0-3, flexible 0+."""

    class TopicData(KafkaStruct):
        topic_name: str  # versions 0-1
        topic_id: uuid.UUID  # versions 2+
        partitions: list[AlterPartitionResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[AlterPartitionResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        leader_id: int
        leader_epoch: int
        isr: Sequence[int]
        leader_recovery_state: int  # versions 1+; default 0
        partition_epoch: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            isr: Sequence[int] = ...,
            leader_recovery_state: int = ...,
            partition_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    topics: list[AlterPartitionResponse.TopicData]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        topics: list[AlterPartitionResponse.TopicData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AlterPartitionRequest]
RESPONSE: MessageSchema[AlterPartitionResponse]
