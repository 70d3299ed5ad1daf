"""Kafka's partition log over the storage backend: segments, rolling, reads as file
regions, offsets by time, leader epochs, truncation, retention and Kafka's checkpoint files.

Layers (Kafka's, bottom up; each module says who may call it concurrently):

* the backend ``Segment`` (``kafkacore.native.backend``): one ``.log`` with its indexes;
* :mod:`~kafkacore.log.segments` - :class:`LogSegment` (roll rule, creation time, jitter)
  and :class:`LogSegments` (sorted by base offset, binary-search lookups);
* :mod:`~kafkacore.log.log` - :class:`Log`, one partition directory: append, roll, read,
  ``offset_for_timestamp``, truncation, retention, flush (one lock);
* :mod:`~kafkacore.log.epoch` - :class:`LeaderEpochFileCache` (``leader-epoch-checkpoint``);
* :mod:`~kafkacore.log.checkpoints` - the text files: offset checkpoints,
  ``partition.metadata``, ``meta.properties``; :mod:`~kafkacore.log.files` - every file
  name and suffix; :mod:`~kafkacore.log.loader` - loading a directory (with recovery);
  :mod:`~kafkacore.log.retention` - the ``delete`` policy's predicates;
  :mod:`~kafkacore.log.reader` - the files read read-only, without a broker (the Spark
  source, the console, the tools);
  :mod:`~kafkacore.log.manager` - :class:`LogManager`, every log of a broker over its
  ``log.dirs``: start-up loading and recovery, partition directories, per-dir
  checkpoints, the clean shutdown marker and background retention/flush/checkpoints;
  :mod:`~kafkacore.log.dir_failure` - :class:`LogDirFailureChannel`, the log dirs an
  I/O error took offline;
  :mod:`~kafkacore.log.clock` / :mod:`~kafkacore.log.scheduler` - time and delayed work.

Example::

    from kafkacore import backend
    from kafkacore.config import LogConfig
    from kafkacore.log import Log

    config = LogConfig({"segment.bytes": 64 << 20, "retention.ms": 3_600_000})
    with Log("/data/orders-0", config) as log:
        # records are (offset, timestamp ms, key, value, headers)
        batch = backend.build_batch([(0, now_ms, b"k", b"v", [])])
        info = log.append_as_leader(batch, leader_epoch=0)   # info.first_offset == 0
        region = log.read(0, max_bytes=1 << 20, upper_bound=log.log_end_offset)
        data = region.read_bytes()      # or sendfile(region.file, region.position, region.length)
        log.offset_for_timestamp(-1)    # TimestampAndOffset(-1, 1, 0): latest
        log.delete_old_segments()       # retention.ms / retention.bytes / log start offset

Time-dependent behaviour (``segment.ms``, ``retention.ms``, ``file.delete.delay.ms``)
reads a :class:`Time`; delayed work (removing ``.deleted`` files, flushing a rolled segment)
runs on a :class:`Scheduler`: by default one shared daemon thread
(:func:`default_scheduler`); tests pass a :class:`MockTime` and a :class:`MockScheduler`,
which runs due tasks when the mock time moves.

Thread-safety: a :class:`Log` serializes all its operations with one lock; a read holds
it only to locate the file region, whose bytes are copied without it (see
:mod:`kafkacore.log.log`). Checkpoint objects and the epoch cache lock themselves.
"""

from __future__ import annotations

from kafkacore.log.checkpoints import (
    CheckpointFile,
    EpochEntry,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadata,
    PartitionMetadataFile,
    random_uuid,
    uuid_from_base64,
    uuid_to_base64,
    write_atomically,
)
from kafkacore.log.clock import SYSTEM_TIME, MockTime, Time
from kafkacore.log.dir_failure import LogDirFailureChannel
from kafkacore.log.epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kafkacore.log.files import TopicPartition, parse_topic_partition_name
from kafkacore.log.loader import LoadedLog, LogLoader, ProgressCallback, recovery_progress
from kafkacore.log.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    AppendOrigin,
    FetchDataInfo,
    Log,
    LogAppendInfo,
    LogOptions,
    TimestampAndOffset,
)
from kafkacore.log.manager import (
    CleanerHooks,
    CleanShutdownFile,
    LogDirError,
    LogManager,
    LogManagerHealth,
    RecoveryProgress,
)
from kafkacore.log.producer_state import (
    DuplicateSequenceError,
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    ProducerStateManager,
)
from kafkacore.log.scheduler import MockScheduler, Scheduler, ThreadScheduler, default_scheduler
from kafkacore.log.segments import LogSegment, LogSegments, read_region

__all__ = [
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_PENDING_UPLOAD_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "SYSTEM_TIME",
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "AppendOrigin",
    "CheckpointFile",
    "CleanShutdownFile",
    "CleanerHooks",
    "DuplicateSequenceError",
    "EpochEntry",
    "FetchDataInfo",
    "InvalidProducerEpochError",
    "LeaderEpochCheckpointFile",
    "LeaderEpochFileCache",
    "LoadedLog",
    "Log",
    "LogAppendInfo",
    "LogDirError",
    "LogDirFailureChannel",
    "LogLoader",
    "LogManager",
    "LogManagerHealth",
    "LogOptions",
    "LogSegment",
    "LogSegments",
    "MetaProperties",
    "MockScheduler",
    "MockTime",
    "OffsetCheckpointFile",
    "OutOfOrderSequenceError",
    "PartitionMetadata",
    "PartitionMetadataFile",
    "ProducerStateManager",
    "ProgressCallback",
    "RecoveryProgress",
    "Scheduler",
    "ThreadScheduler",
    "Time",
    "TimestampAndOffset",
    "TopicPartition",
    "default_scheduler",
    "parse_topic_partition_name",
    "random_uuid",
    "read_region",
    "recovery_progress",
    "uuid_from_base64",
    "uuid_to_base64",
    "write_atomically",
]
