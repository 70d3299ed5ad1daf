# Generated from assign_replicas_to_dirs.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in assign_replicas_to_dirs.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AssignReplicasToDirsRequest", "AssignReplicasToDirsResponse"]

class AssignReplicasToDirsRequest(KafkaStruct):
    """Kafka's ``AssignReplicasToDirsRequestData``: versions 0-0, flexible 0+."""

    class DirectoryData(KafkaStruct):
        id: uuid.UUID
        topics: list[AssignReplicasToDirsRequest.TopicData]
        def __init__(
            self,
            *,
            id: uuid.UUID = ...,
            topics: list[AssignReplicasToDirsRequest.TopicData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TopicData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[AssignReplicasToDirsRequest.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[AssignReplicasToDirsRequest.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    broker_id: int
    broker_epoch: int  # versions 0+; default -1
    directories: list[AssignReplicasToDirsRequest.DirectoryData]
    def __init__(
        self,
        *,
        broker_id: int = ...,
        broker_epoch: int = ...,
        directories: list[AssignReplicasToDirsRequest.DirectoryData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AssignReplicasToDirsResponse(KafkaStruct):
    """Kafka's ``AssignReplicasToDirsResponseData``: versions 0-0, flexible 0+."""

    class DirectoryData(KafkaStruct):
        id: uuid.UUID
        topics: list[AssignReplicasToDirsResponse.TopicData]
        def __init__(
            self,
            *,
            id: uuid.UUID = ...,
            topics: list[AssignReplicasToDirsResponse.TopicData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TopicData(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[AssignReplicasToDirsResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[AssignReplicasToDirsResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    directories: list[AssignReplicasToDirsResponse.DirectoryData]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        directories: list[AssignReplicasToDirsResponse.DirectoryData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AssignReplicasToDirsRequest]
RESPONSE: MessageSchema[AssignReplicasToDirsResponse]
