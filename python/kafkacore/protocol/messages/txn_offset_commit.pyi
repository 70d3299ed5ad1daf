# Generated from txn_offset_commit.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in txn_offset_commit.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "TxnOffsetCommitRequest", "TxnOffsetCommitResponse"]

class TxnOffsetCommitRequest(KafkaStruct):
    """Kafka's ``TxnOffsetCommitRequestData``: versions 0-5, flexible 3+."""

    class TxnOffsetCommitRequestTopic(KafkaStruct):
        name: str
        partitions: list[TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TxnOffsetCommitRequestPartition(KafkaStruct):
        partition_index: int
        committed_offset: int
        committed_leader_epoch: int  # versions 2+; default -1
        committed_metadata: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            committed_offset: int = ...,
            committed_leader_epoch: int = ...,
            committed_metadata: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    generation_id: int  # versions 3+; default -1
    member_id: str  # versions 3+; default ""
    group_instance_id: str | None  # versions 3+; nullable 3+; default null
    topics: list[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic]
    def __init__(
        self,
        *,
        transactional_id: str = ...,
        group_id: str = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        generation_id: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        topics: list[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class TxnOffsetCommitResponse(KafkaStruct):
    """Kafka's ``TxnOffsetCommitResponseData``: versions 0-5, flexible 3+."""

    class TxnOffsetCommitResponseTopic(KafkaStruct):
        name: str
        partitions: list[TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TxnOffsetCommitResponsePartition(KafkaStruct):
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
    topics: list[TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[TxnOffsetCommitRequest]
RESPONSE: MessageSchema[TxnOffsetCommitResponse]
