# Generated from fetch.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in fetch.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from kafkacore.protocol.types import Records

__all__ = ["REQUEST", "RESPONSE", "FetchRequest", "FetchResponse"]

class FetchRequest(KafkaStruct):
    """Kafka's ``FetchRequestData``: versions 4-18, flexible 12+."""

    class ReplicaState(KafkaStruct):
        replica_id: int  # versions 15+; default -1
        replica_epoch: int  # versions 15+; default -1
        def __init__(
            self,
            *,
            replica_id: int = ...,
            replica_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class FetchTopic(KafkaStruct):
        topic: str  # versions 4-12
        topic_id: uuid.UUID  # versions 13+
        partitions: list[FetchRequest.FetchPartition]  # versions 4+
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[FetchRequest.FetchPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class FetchPartition(KafkaStruct):
        partition: int  # versions 4+
        current_leader_epoch: int  # versions 9+; default -1
        fetch_offset: int  # versions 4+
        last_fetched_epoch: int  # versions 12+; default -1
        log_start_offset: int  # versions 5+; default -1
        partition_max_bytes: int  # versions 4+
        replica_directory_id: uuid.UUID  # versions 17+; tag 0
        high_watermark: int  # versions 18+; tag 1; default 9223372036854775807
        def __init__(
            self,
            *,
            partition: int = ...,
            current_leader_epoch: int = ...,
            fetch_offset: int = ...,
            last_fetched_epoch: int = ...,
            log_start_offset: int = ...,
            partition_max_bytes: int = ...,
            replica_directory_id: uuid.UUID = ...,
            high_watermark: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ForgottenTopic(KafkaStruct):
        topic: str  # versions 7-12
        topic_id: uuid.UUID  # versions 13+
        partitions: Sequence[int]  # versions 7+
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    cluster_id: str | None  # versions 12+; nullable 12+; tag 0; default null
    replica_id: int  # versions 4-14; default -1
    replica_state: FetchRequest.ReplicaState  # versions 15+; tag 1
    max_wait_ms: int  # versions 4+
    min_bytes: int  # versions 4+
    max_bytes: int  # versions 4+; default 2147483647
    isolation_level: int  # versions 4+; default 0
    session_id: int  # versions 7+; default 0
    session_epoch: int  # versions 7+; default -1
    topics: list[FetchRequest.FetchTopic]  # versions 4+
    forgotten_topics_data: list[FetchRequest.ForgottenTopic]  # versions 7+
    rack_id: str  # versions 11+; default ""
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        replica_id: int = ...,
        replica_state: FetchRequest.ReplicaState = ...,
        max_wait_ms: int = ...,
        min_bytes: int = ...,
        max_bytes: int = ...,
        isolation_level: int = ...,
        session_id: int = ...,
        session_epoch: int = ...,
        topics: list[FetchRequest.FetchTopic] = ...,
        forgotten_topics_data: list[FetchRequest.ForgottenTopic] = ...,
        rack_id: str = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class FetchResponse(KafkaStruct):
    """Kafka's ``FetchResponseData``: versions 4-18, flexible 12+."""

    class FetchableTopicResponse(KafkaStruct):
        topic: str  # versions 4-12
        topic_id: uuid.UUID  # versions 13+
        partitions: list[FetchResponse.PartitionData]  # versions 4+
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[FetchResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int  # versions 4+
        error_code: int  # versions 4+
        high_watermark: int  # versions 4+
        last_stable_offset: int  # versions 4+; default -1
        log_start_offset: int  # versions 5+; default -1
        diverging_epoch: FetchResponse.EpochEndOffset  # versions 12+; tag 0
        current_leader: FetchResponse.LeaderIdAndEpoch  # versions 12+; tag 1
        snapshot_id: FetchResponse.SnapshotId  # versions 12+; tag 2
        # versions 4+; nullable 4+
        aborted_transactions: list[FetchResponse.AbortedTransaction] | None
        preferred_read_replica: int  # versions 11+; default -1
        records: Records | None  # versions 4+; nullable 4+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            high_watermark: int = ...,
            last_stable_offset: int = ...,
            log_start_offset: int = ...,
            diverging_epoch: FetchResponse.EpochEndOffset = ...,
            current_leader: FetchResponse.LeaderIdAndEpoch = ...,
            snapshot_id: FetchResponse.SnapshotId = ...,
            aborted_transactions: list[FetchResponse.AbortedTransaction] | None = ...,
            preferred_read_replica: int = ...,
            records: Records | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class EpochEndOffset(KafkaStruct):
        epoch: int  # versions 12+; default -1
        end_offset: int  # versions 12+; default -1
        def __init__(
            self,
            *,
            epoch: int = ...,
            end_offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderIdAndEpoch(KafkaStruct):
        leader_id: int  # versions 12+; default -1
        leader_epoch: int  # versions 12+; default -1
        def __init__(
            self,
            *,
            leader_id: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class SnapshotId(KafkaStruct):
        end_offset: int  # versions 4+; default -1
        epoch: int  # versions 4+; default -1
        def __init__(
            self,
            *,
            end_offset: int = ...,
            epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AbortedTransaction(KafkaStruct):
        producer_id: int  # versions 4+
        first_offset: int  # versions 4+
        def __init__(
            self,
            *,
            producer_id: int = ...,
            first_offset: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class NodeEndpoint(KafkaStruct):
        node_id: int  # versions 16+
        host: str  # versions 16+
        port: int  # versions 16+
        rack: str | None  # versions 16+; nullable 16+; default null
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 4+
    error_code: int  # versions 7+
    session_id: int  # versions 7+; default 0
    responses: list[FetchResponse.FetchableTopicResponse]  # versions 4+
    node_endpoints: list[FetchResponse.NodeEndpoint]  # versions 16+; tag 0
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        session_id: int = ...,
        responses: list[FetchResponse.FetchableTopicResponse] = ...,
        node_endpoints: list[FetchResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[FetchRequest]
RESPONSE: MessageSchema[FetchResponse]
