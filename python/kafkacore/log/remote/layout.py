"""Where a tiered segment's files live in the bucket: one object per Kafka file, named
as Kafka names the file, under one folder per copy of a segment::

    <topic>-<partition>-<topic id>/                     one partition (Kafka's base64 topic id)
      <base offset, 20 digits>-<segment id>/            one copy of one segment (segment id: base64)
        00000000000000001000.log                        the segment's record batches, as on disk
        00000000000000001000.index                      its offset index (trimmed, as at roll)
        00000000000000001000.timeindex                  its time index
        00000000000000001000.txnindex                   its aborted transactions (only when any)
        00000000000000002000.snapshot                   producer state at the next segment's base
        leader-epoch-checkpoint                         the leader epochs up to the next segment

So a folder downloaded as it is (``aws s3 cp --recursive``) is a Kafka segment that
Kafka's ``kafka-dump-log`` reads, with no kafkacore; the topic id in the partition folder
keeps a re-created topic of the same name apart, and the segment id keeps apart two
copies of one segment (a leader that died mid-copy and the next leader's retry). Which
copy counts is ``__remote_log_metadata``'s to say (COPY_SEGMENT_FINISHED).

Pure functions on names: thread-safe.
"""

from __future__ import annotations

import enum

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.log.files import (
    INDEX_FILE_SUFFIX,
    LEADER_EPOCH_CHECKPOINT_FILE,
    LOG_FILE_SUFFIX,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
    filename_prefix_from_offset,
)
from kafkacore.log.remote.model import RemoteLogSegmentMetadata, TopicIdPartition

__all__ = ["IndexType", "object_key", "partition_prefix", "segment_prefix"]


class IndexType(enum.Enum):
    """Kafka's ``RemoteStorageManager.IndexType``, plus the log itself (``SEGMENT``)."""

    SEGMENT = "segment"
    OFFSET = "offset"
    TIMESTAMP = "timestamp"
    PRODUCER_SNAPSHOT = "producer_snapshot"
    TRANSACTION = "transaction"
    LEADER_EPOCH = "leader_epoch"


def partition_prefix(tip: TopicIdPartition) -> str:
    """The folder of one partition's tiered segments (ends with ``/``)."""
    return f"{tip.topic}-{tip.partition}-{uuid_to_base64(tip.topic_id)}/"


def segment_prefix(metadata: RemoteLogSegmentMetadata) -> str:
    """The folder of one copy of one segment (ends with ``/``)."""
    return (
        partition_prefix(metadata.topic_id_partition)
        + f"{filename_prefix_from_offset(metadata.start_offset)}-"
        + f"{uuid_to_base64(metadata.segment_id.id)}/"
    )


def file_name(metadata: RemoteLogSegmentMetadata, kind: IndexType) -> str:
    """The Kafka file name of one of the segment's files."""
    base = filename_prefix_from_offset(metadata.start_offset)
    match kind:
        case IndexType.SEGMENT:
            return base + LOG_FILE_SUFFIX
        case IndexType.OFFSET:
            return base + INDEX_FILE_SUFFIX
        case IndexType.TIMESTAMP:
            return base + TIME_INDEX_FILE_SUFFIX
        case IndexType.TRANSACTION:
            return base + TXN_INDEX_FILE_SUFFIX
        case IndexType.PRODUCER_SNAPSHOT:
            # the snapshot taken when the next segment was rolled: named by its base offset
            return (
                filename_prefix_from_offset(metadata.end_offset + 1) + PRODUCER_SNAPSHOT_FILE_SUFFIX
            )
        case IndexType.LEADER_EPOCH:
            return LEADER_EPOCH_CHECKPOINT_FILE


def object_key(metadata: RemoteLogSegmentMetadata, kind: IndexType) -> str:
    """The key of one of the segment's files."""
    return segment_prefix(metadata) + file_name(metadata, kind)
