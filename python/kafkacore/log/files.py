"""Every file and directory name of a Kafka log directory, in one place (Kafka's
``LogFileUtils`` plus the names scattered over ``LocalLog``, ``LogManager``,
``ReplicaManager`` and the checkpoint classes).

Layout of one log directory (``log.dirs`` entry)::

    <log dir>/
      meta.properties                       KRaft: version=1, cluster.id, node.id, directory.id
      recovery-point-offset-checkpoint      "0\\n<n>\\n<topic> <partition> <offset>\\n" ...
      log-start-offset-checkpoint           same format
      replication-offset-checkpoint         same format (high watermarks)
      cleaner-offset-checkpoint             same format (compaction progress)
      .kafka_cleanshutdown                  present after a clean shutdown
      <topic>-<partition>/                  one partition (``TopicPartition``)
        00000000000000000000.log            segment: record batches; name = base offset, 20 digits
        00000000000000000000.index          sparse offset index (8-byte entries)
        00000000000000000000.timeindex      time index (12-byte entries)
        00000000000000000000.txnindex       aborted transactions (34-byte entries), when used
        00000000000000000042.snapshot       producer state as of offset 42
        leader-epoch-checkpoint             "0\\n<n>\\n<epoch> <start offset>\\n" ...
        partition.metadata                  "version: 0\\ntopic_id: <base64url uuid>"
      <topic>-<partition>.<uuid hex>-delete/   partition being deleted
      <topic>-<partition>.<uuid hex>-future/   replica being moved between log dirs
      <topic>-<partition>.<uuid hex>-stray/    partition no longer assigned (KRaft)

Transient suffixes appended to a segment file's name: ``.deleted`` (scheduled for
deletion), ``.cleaned`` (being written by the cleaner), ``.swap`` (about to replace
segments). ``.tmp`` is appended to a checkpoint while it is being rewritten.

Pure functions on names and paths; nothing here touches the disk.
"""

from __future__ import annotations

import os
import re
import uuid
from typing import NamedTuple

__all__ = [
    "CLEANED_FILE_SUFFIX",
    "CLEANER_OFFSET_CHECKPOINT_FILE",
    "CLEAN_SHUTDOWN_FILE",
    "DELETED_FILE_SUFFIX",
    "DELETE_DIR_SUFFIX",
    "FUTURE_DIR_SUFFIX",
    "INDEX_FILE_SUFFIX",
    "LEADER_EPOCH_CHECKPOINT_FILE",
    "LOG_FILE_SUFFIX",
    "LOG_START_OFFSET_CHECKPOINT_FILE",
    "META_PROPERTIES_FILE",
    "PARTITION_METADATA_FILE",
    "PRODUCER_SNAPSHOT_FILE_SUFFIX",
    "RECOVERY_POINT_CHECKPOINT_FILE",
    "REPLICATION_OFFSET_CHECKPOINT_FILE",
    "SEGMENT_FILE_SUFFIXES",
    "STRAY_DIR_SUFFIX",
    "SWAP_FILE_SUFFIX",
    "TEMP_FILE_SUFFIX",
    "TIME_INDEX_FILE_SUFFIX",
    "TXN_INDEX_FILE_SUFFIX",
    "TopicPartition",
    "filename_prefix_from_offset",
    "is_index_file",
    "is_log_file",
    "log_delete_dir_name",
    "log_dir_name",
    "log_file",
    "log_future_dir_name",
    "log_stray_dir_name",
    "offset_from_file_name",
    "offset_index_file",
    "parse_topic_partition_name",
    "producer_snapshot_file",
    "replace_suffix",
    "time_index_file",
    "transaction_index_file",
]

# -- segment files (LogFileUtils) ------------------------------------------------------

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
TEMP_FILE_SUFFIX = ".tmp"

#: The files of one segment, in the order they are renamed and deleted.
SEGMENT_FILE_SUFFIXES = (
    LOG_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)

# -- partition directories (LocalLog) ---------------------------------------------------

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

# -- checkpoint and marker files --------------------------------------------------------

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"

_MAX_DIR_NAME = 255  # a file name component on every file system Kafka supports


class TopicPartition(NamedTuple):
    """A partition of a topic; ``str()`` is Kafka's ``topic-partition``."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def filename_prefix_from_offset(offset: int) -> str:
    """``offset`` zero-padded to 20 digits, so that ``ls`` sorts segments numerically."""
    if offset < 0:
        raise ValueError(f"a segment offset cannot be negative: {offset}")
    return f"{offset:020d}"


def _segment_file(directory: str, offset: int, kind: str, suffix: str) -> str:
    return os.path.join(directory, filename_prefix_from_offset(offset) + kind + suffix)


def log_file(directory: str, offset: int, suffix: str = "") -> str:
    """``<dir>/<offset:020>.log<suffix>`` (``suffix``: ``.deleted``, ``.cleaned``, ``.swap``)."""
    return _segment_file(directory, offset, LOG_FILE_SUFFIX, suffix)


def offset_index_file(directory: str, offset: int, suffix: str = "") -> str:
    """``<dir>/<offset:020>.index<suffix>``."""
    return _segment_file(directory, offset, INDEX_FILE_SUFFIX, suffix)


def time_index_file(directory: str, offset: int, suffix: str = "") -> str:
    """``<dir>/<offset:020>.timeindex<suffix>``."""
    return _segment_file(directory, offset, TIME_INDEX_FILE_SUFFIX, suffix)


def transaction_index_file(directory: str, offset: int, suffix: str = "") -> str:
    """``<dir>/<offset:020>.txnindex<suffix>``."""
    return _segment_file(directory, offset, TXN_INDEX_FILE_SUFFIX, suffix)


def producer_snapshot_file(directory: str, offset: int) -> str:
    """``<dir>/<offset:020>.snapshot``: producer state up to ``offset`` (exclusive)."""
    return _segment_file(directory, offset, PRODUCER_SNAPSHOT_FILE_SUFFIX, "")


def offset_from_file_name(file_name: str) -> int:
    """The number before the first ``.`` of a segment file's name (``ValueError`` if none)."""
    name = os.path.basename(file_name)
    dot = name.find(".")
    prefix = name if dot < 0 else name[:dot]
    if not prefix.isdigit():
        raise ValueError(f"{file_name!r} is not named after an offset")
    return int(prefix)


def is_log_file(path: str) -> bool:
    """A ``.log`` file (not ``.log.deleted`` and the like)."""
    return path.endswith(LOG_FILE_SUFFIX)


def is_index_file(path: str) -> bool:
    """An offset, time or transaction index (not one with a transient suffix)."""
    return path.endswith((INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX))


def replace_suffix(path: str, old_suffix: str, new_suffix: str) -> str:
    """``path`` with ``old_suffix`` swapped for ``new_suffix`` (Kafka's ``Utils.replaceSuffix``)."""
    if not path.endswith(old_suffix):
        raise ValueError(f"expected {path!r} to end with {old_suffix!r}")
    return path[: len(path) - len(old_suffix)] + new_suffix


# -- partition directory names ---------------------------------------------------------


def log_dir_name(tp: TopicPartition) -> str:
    """``<topic>-<partition>``."""
    return f"{tp.topic}-{tp.partition}"


def _dir_name_with_suffix_capped(tp: TopicPartition, suffix: str, unique_id: str | None) -> str:
    unique = unique_id if unique_id is not None else uuid.uuid4().hex
    full_suffix = f"-{tp.partition}.{unique}{suffix}"
    prefix_length = min(len(tp.topic), _MAX_DIR_NAME - len(full_suffix))
    return tp.topic[:prefix_length] + full_suffix


def log_delete_dir_name(tp: TopicPartition, unique_id: str | None = None) -> str:
    """``<topic>-<partition>.<uuid hex>-delete``, the topic cut so the name fits 255 chars."""
    return _dir_name_with_suffix_capped(tp, DELETE_DIR_SUFFIX, unique_id)


def log_stray_dir_name(tp: TopicPartition, unique_id: str | None = None) -> str:
    """``<topic>-<partition>.<uuid hex>-stray``, the topic cut so the name fits 255 chars."""
    return _dir_name_with_suffix_capped(tp, STRAY_DIR_SUFFIX, unique_id)


def log_future_dir_name(tp: TopicPartition, unique_id: str | None = None) -> str:
    """``<topic>-<partition>.<uuid hex>-future`` (not capped, as in Kafka)."""
    unique = unique_id if unique_id is not None else uuid.uuid4().hex
    return f"{log_dir_name(tp)}.{unique}{FUTURE_DIR_SUFFIX}"


_MARKED_DIR_PATTERNS = {
    suffix: re.compile(r"^(\S+)-(\S+)\.(\S+)" + re.escape(suffix) + "$")
    for suffix in (DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)
}


def parse_topic_partition_name(dir_name: str) -> TopicPartition:
    """The partition a directory holds, as Kafka's ``LocalLog.parseTopicPartitionName``.

    The partition number follows the *last* ``-`` (topics may contain ``-``); a
    ``-delete``/``-future``/``-stray`` directory is ``<topic>-<partition>.<id><suffix>``.
    ``ValueError`` with Kafka's message otherwise."""
    name = os.path.basename(os.path.normpath(dir_name)) if dir_name else dir_name

    def error() -> ValueError:
        return ValueError(
            f"Found directory {dir_name}, '{name}' is not in the form of topic-partition or "
            "topic-partition.uniqueId-delete (if marked for deletion).\n"
            "Kafka's log directories (and children) should only contain Kafka topic data."
        )

    if not name or "-" not in name:
        raise error()
    marked = False
    for suffix, pattern in _MARKED_DIR_PATTERNS.items():
        if name.endswith(suffix):
            if not pattern.match(name):
                raise error()
            marked = True
    base = name[: name.rindex(".")] if marked else name
    dash = base.rfind("-")
    topic, partition_string = base[:dash], base[dash + 1 :]
    if dash < 0 or not topic or not partition_string:
        raise error()
    # Java's Integer.parseInt: an optional sign, ASCII digits, within int32.
    if not re.fullmatch(r"[+-]?[0-9]+", partition_string):
        raise error()
    partition = int(partition_string)
    if not -(2**31) <= partition < 2**31:
        raise error()
    return TopicPartition(topic, partition)
