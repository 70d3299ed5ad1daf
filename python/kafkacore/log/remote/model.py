"""The facts the remote log metadata is made of (Kafka's ``kafka-storage-api``:
``RemoteLogSegmentId``, ``RemoteLogSegmentMetadata``, ``RemoteLogSegmentMetadataUpdate``,
``RemotePartitionDeleteMetadata`` and their state enums), as frozen dataclasses.

A tiered segment goes through Kafka's states, each an event in ``__remote_log_metadata``::

    COPY_SEGMENT_STARTED -> COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_STARTED
        -> DELETE_SEGMENT_FINISHED
            \\______________________________________/^

(a copy that never finished is deleted from ``COPY_SEGMENT_STARTED``). A partition being
deleted goes ``DELETE_PARTITION_MARKED -> DELETE_PARTITION_STARTED -> DELETE_PARTITION_FINISHED``.

Immutable values: thread-safe.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, replace
from typing import NamedTuple

from kafkacore.log.checkpoints import uuid_to_base64

__all__ = [
    "RemoteLogSegmentId",
    "RemoteLogSegmentMetadata",
    "RemoteLogSegmentMetadataUpdate",
    "RemoteLogSegmentState",
    "RemotePartitionDeleteMetadata",
    "RemotePartitionDeleteState",
    "TopicIdPartition",
]


class RemoteLogSegmentState(enum.IntEnum):
    """Kafka's ``RemoteLogSegmentState`` (its ``id()`` is the value)."""

    COPY_SEGMENT_STARTED = 0
    COPY_SEGMENT_FINISHED = 1
    DELETE_SEGMENT_STARTED = 2
    DELETE_SEGMENT_FINISHED = 3

    def can_transition_to(self, target: RemoteLogSegmentState) -> bool:
        """Kafka's ``RemoteLogSegmentState.isValidTransition`` (a state may repeat: a
        retried deletion publishes ``DELETE_SEGMENT_STARTED`` again)."""
        return target is self or target in _SEGMENT_TRANSITIONS[self]


_SEGMENT_TRANSITIONS = {
    RemoteLogSegmentState.COPY_SEGMENT_STARTED: {
        RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
        RemoteLogSegmentState.DELETE_SEGMENT_STARTED,
    },
    RemoteLogSegmentState.COPY_SEGMENT_FINISHED: {RemoteLogSegmentState.DELETE_SEGMENT_STARTED},
    RemoteLogSegmentState.DELETE_SEGMENT_STARTED: {RemoteLogSegmentState.DELETE_SEGMENT_FINISHED},
    RemoteLogSegmentState.DELETE_SEGMENT_FINISHED: set(),
}


class RemotePartitionDeleteState(enum.IntEnum):
    """Kafka's ``RemotePartitionDeleteState``."""

    DELETE_PARTITION_MARKED = 0
    DELETE_PARTITION_STARTED = 1
    DELETE_PARTITION_FINISHED = 2


class TopicIdPartition(NamedTuple):
    """Kafka's ``TopicIdPartition``; ``str()`` is Kafka's ``topicId:topic-partition``."""

    topic_id: uuid.UUID
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{uuid_to_base64(self.topic_id)}:{self.topic}-{self.partition}"


@dataclass(frozen=True)
class RemoteLogSegmentId:
    """Kafka's ``RemoteLogSegmentId``: a partition and a random id per copy attempt (a
    segment copied twice, after a failed attempt, has two ids)."""

    topic_id_partition: TopicIdPartition
    id: uuid.UUID

    @classmethod
    def generate(cls, tip: TopicIdPartition) -> RemoteLogSegmentId:
        return cls(tip, uuid.uuid4())

    def __str__(self) -> str:
        return (
            f"RemoteLogSegmentId{{topicIdPartition={self.topic_id_partition}, "
            f"id={uuid_to_base64(self.id)}}}"
        )


@dataclass(frozen=True)
class RemoteLogSegmentMetadata:
    """Kafka's ``RemoteLogSegmentMetadata``: one tiered segment, ``[start_offset,
    end_offset]`` (inclusive), with the leader epochs of its batches (epoch -> first
    offset, ascending), its size, largest timestamp and state."""

    segment_id: RemoteLogSegmentId
    start_offset: int
    end_offset: int
    max_timestamp_ms: int
    broker_id: int
    event_timestamp_ms: int
    segment_size_in_bytes: int
    segment_leader_epochs: dict[int, int]
    state: RemoteLogSegmentState = RemoteLogSegmentState.COPY_SEGMENT_STARTED
    custom_metadata: bytes | None = None
    txn_index_empty: bool = False

    def __post_init__(self) -> None:
        if self.start_offset < 0 or self.end_offset < self.start_offset:
            raise ValueError(
                f"end offset {self.end_offset} can not be less than start offset "
                f"{self.start_offset}"
            )
        if not self.segment_leader_epochs:
            raise ValueError("segmentLeaderEpochs can not be empty")

    @property
    def topic_id_partition(self) -> TopicIdPartition:
        return self.segment_id.topic_id_partition

    def updated(self, update: RemoteLogSegmentMetadataUpdate) -> RemoteLogSegmentMetadata:
        """Kafka's ``createWithUpdates``: this segment in the update's state."""
        if update.segment_id != self.segment_id:
            raise ValueError("Given rlsmUpdate does not have this instance's remoteLogSegmentId.")
        return replace(
            self,
            broker_id=update.broker_id,
            event_timestamp_ms=update.event_timestamp_ms,
            custom_metadata=update.custom_metadata,
            state=update.state,
        )


@dataclass(frozen=True)
class RemoteLogSegmentMetadataUpdate:
    """Kafka's ``RemoteLogSegmentMetadataUpdate``: a segment's next state."""

    segment_id: RemoteLogSegmentId
    event_timestamp_ms: int
    custom_metadata: bytes | None
    state: RemoteLogSegmentState
    broker_id: int

    def __post_init__(self) -> None:
        if self.state is RemoteLogSegmentState.COPY_SEGMENT_STARTED:
            raise ValueError(
                "state can not be RemoteLogSegmentState.COPY_SEGMENT_STARTED for an update"
            )

    @property
    def topic_id_partition(self) -> TopicIdPartition:
        return self.segment_id.topic_id_partition


@dataclass(frozen=True)
class RemotePartitionDeleteMetadata:
    """Kafka's ``RemotePartitionDeleteMetadata``."""

    topic_id_partition: TopicIdPartition
    state: RemotePartitionDeleteState
    event_timestamp_ms: int
    broker_id: int
