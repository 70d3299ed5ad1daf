# Generated from offset_for_leader_epoch.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in offset_for_leader_epoch.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "OffsetForLeaderEpochRequest", "OffsetForLeaderEpochResponse"]

class OffsetForLeaderEpochRequest(KafkaStruct):
    """Kafka's ``OffsetForLeaderEpochRequestData``: versions 2-4, flexible 4+."""

    class OffsetForLeaderTopic(KafkaStruct):
        topic: str  # versions 2+
        partitions: list[OffsetForLeaderEpochRequest.OffsetForLeaderPartition]  # versions 2+
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: list[OffsetForLeaderEpochRequest.OffsetForLeaderPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetForLeaderPartition(KafkaStruct):
        partition: int  # versions 2+
        current_leader_epoch: int  # versions 2+; default -1
        leader_epoch: int  # versions 2+
        def __init__(
            self,
            *,
            partition: int = ...,
            current_leader_epoch: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    replica_id: int  # versions 3+; default -2
    topics: list[OffsetForLeaderEpochRequest.OffsetForLeaderTopic]  # versions 2+
    def __init__(
        self,
        *,
        replica_id: int = ...,
        topics: list[OffsetForLeaderEpochRequest.OffsetForLeaderTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class OffsetForLeaderEpochResponse(KafkaStruct):
    """Kafka's ``OffsetForLeaderEpochResponseData``: versions 2-4, flexible 4+."""

    class OffsetForLeaderTopicResult(KafkaStruct):
        topic: str  # versions 2+
        partitions: list[OffsetForLeaderEpochResponse.EpochEndOffset]  # versions 2+
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: list[OffsetForLeaderEpochResponse.EpochEndOffset] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class EpochEndOffset(KafkaStruct):
        error_code: int  # versions 2+
        partition: int  # versions 2+
        leader_epoch: int  # versions 2+; default -1
        end_offset: int  # versions 2+; default -1
        def __init__(
            self,
            *,
            error_code: int = ...,
            partition: int = ...,
            leader_epoch: int = ...,
            end_offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 2+
    topics: list[OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult]  # versions 2+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[OffsetForLeaderEpochRequest]
RESPONSE: MessageSchema[OffsetForLeaderEpochResponse]
