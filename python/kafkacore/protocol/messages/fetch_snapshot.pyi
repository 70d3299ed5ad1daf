# Generated from fetch_snapshot.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in fetch_snapshot.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from kafkacore.protocol.types import Records

__all__ = ["REQUEST", "RESPONSE", "FetchSnapshotRequest", "FetchSnapshotResponse"]

class FetchSnapshotRequest(KafkaStruct):
    """Kafka's ``FetchSnapshotRequestData``: versions 0-1, flexible 0+."""

    class TopicSnapshot(KafkaStruct):
        name: str
        partitions: list[FetchSnapshotRequest.PartitionSnapshot]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[FetchSnapshotRequest.PartitionSnapshot] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionSnapshot(KafkaStruct):
        partition: int
        current_leader_epoch: int
        snapshot_id: FetchSnapshotRequest.SnapshotId
        position: int
        replica_directory_id: uuid.UUID  # versions 1+; tag 0
        def __init__(
            self,
            *,
            partition: int = ...,
            current_leader_epoch: int = ...,
            snapshot_id: FetchSnapshotRequest.SnapshotId = ...,
            position: int = ...,
            replica_directory_id: uuid.UUID = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class SnapshotId(KafkaStruct):
        end_offset: int
        epoch: int
        def __init__(
            self,
            *,
            end_offset: int = ...,
            epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    cluster_id: str | None  # versions 0+; nullable 0+; tag 0; default null
    replica_id: int  # versions 0+; default -1
    max_bytes: int  # versions 0+; default 2147483647
    topics: list[FetchSnapshotRequest.TopicSnapshot]
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        replica_id: int = ...,
        max_bytes: int = ...,
        topics: list[FetchSnapshotRequest.TopicSnapshot] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class FetchSnapshotResponse(KafkaStruct):
    """Kafka's ``FetchSnapshotResponseData``: versions 0-1, flexible 0+."""

    class TopicSnapshot(KafkaStruct):
        name: str
        partitions: list[FetchSnapshotResponse.PartitionSnapshot]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[FetchSnapshotResponse.PartitionSnapshot] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionSnapshot(KafkaStruct):
        index: int
        error_code: int
        snapshot_id: FetchSnapshotResponse.SnapshotId
        current_leader: FetchSnapshotResponse.LeaderIdAndEpoch  # versions 0+; tag 0
        size: int
        position: int
        unaligned_records: Records | None
        def __init__(
            self,
            *,
            index: int = ...,
            error_code: int = ...,
            snapshot_id: FetchSnapshotResponse.SnapshotId = ...,
            current_leader: FetchSnapshotResponse.LeaderIdAndEpoch = ...,
            size: int = ...,
            position: int = ...,
            unaligned_records: Records | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class SnapshotId(KafkaStruct):
        end_offset: int
        epoch: int
        def __init__(
            self,
            *,
            end_offset: int = ...,
            epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderIdAndEpoch(KafkaStruct):
        leader_id: int
        leader_epoch: int
        def __init__(
            self,
            *,
            leader_id: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class NodeEndpoint(KafkaStruct):
        node_id: int  # versions 1+
        host: str  # versions 1+
        port: int  # versions 1+
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    topics: list[FetchSnapshotResponse.TopicSnapshot]
    node_endpoints: list[FetchSnapshotResponse.NodeEndpoint]  # versions 1+; tag 0
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        topics: list[FetchSnapshotResponse.TopicSnapshot] = ...,
        node_endpoints: list[FetchSnapshotResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[FetchSnapshotRequest]
RESPONSE: MessageSchema[FetchSnapshotResponse]
