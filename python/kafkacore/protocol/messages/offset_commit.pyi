# Generated from offset_commit.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in offset_commit.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "OffsetCommitRequest", "OffsetCommitResponse"]

class OffsetCommitRequest(KafkaStruct):
    """Kafka's ``OffsetCommitRequestData``: versions 2-10, flexible 8+."""

    class OffsetCommitRequestTopic(KafkaStruct):
        name: str  # versions 2-9
        topic_id: uuid.UUID  # versions 10+
        partitions: list[OffsetCommitRequest.OffsetCommitRequestPartition]  # versions 2+
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[OffsetCommitRequest.OffsetCommitRequestPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetCommitRequestPartition(KafkaStruct):
        partition_index: int  # versions 2+
        committed_offset: int  # versions 2+
        committed_leader_epoch: int  # versions 6+; default -1
        committed_metadata: str | None  # versions 2+; nullable 2+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            committed_offset: int = ...,
            committed_leader_epoch: int = ...,
            committed_metadata: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str  # versions 2+
    generation_id_or_member_epoch: int  # versions 2+; default -1
    member_id: str  # versions 2+
    group_instance_id: str | None  # versions 7+; nullable 7+; default null
    retention_time_ms: int  # versions 2-4; default -1
    topics: list[OffsetCommitRequest.OffsetCommitRequestTopic]  # versions 2+
    def __init__(
        self,
        *,
        group_id: str = ...,
        generation_id_or_member_epoch: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        retention_time_ms: int = ...,
        topics: list[OffsetCommitRequest.OffsetCommitRequestTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class OffsetCommitResponse(KafkaStruct):
    """Kafka's ``OffsetCommitResponseData``: versions 2-10, flexible 8+."""

    class OffsetCommitResponseTopic(KafkaStruct):
        name: str  # versions 2-9
        topic_id: uuid.UUID  # versions 10+
        partitions: list[OffsetCommitResponse.OffsetCommitResponsePartition]  # versions 2+
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[OffsetCommitResponse.OffsetCommitResponsePartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetCommitResponsePartition(KafkaStruct):
        partition_index: int  # versions 2+
        error_code: int  # versions 2+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 3+
    topics: list[OffsetCommitResponse.OffsetCommitResponseTopic]  # versions 2+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[OffsetCommitResponse.OffsetCommitResponseTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[OffsetCommitRequest]
RESPONSE: MessageSchema[OffsetCommitResponse]
