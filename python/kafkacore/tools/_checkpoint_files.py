"""Kafka's small text files in a log directory, printed by ``kafkacore dump-log``.

Kafka's ``DumpLogSegments`` ignores these files ("Ignoring unknown file"); kafkacore
prints what they hold, parsed by :mod:`kafkacore.log.checkpoints` (so a file kafkacore's
dump accepts is one Kafka's broker accepts). The format, one line after ``Dumping
<file>``, then one line per entry:

* offset checkpoints (``recovery-point-offset-checkpoint``,
  ``log-start-offset-checkpoint``, ``replication-offset-checkpoint``,
  ``cleaner-offset-checkpoint``)::

      Checkpoint version: 0, entries: 2
      topic: orders partition: 0 offset: 1234

* ``leader-epoch-checkpoint``::

      Checkpoint version: 0, entries: 1
      epoch: 3 startOffset: 1200

  (an empty checkpoint file, which Kafka reads as no entries: ``Empty checkpoint file``);
* ``partition.metadata``: ``version: 0 topicId: <Kafka's base64 topic id>``;
* ``meta.properties``: ``version: 1 cluster.id: <id> node.id: <n> directory.id: <id>``
  (the properties Kafka's ``MetaProperties`` reads; ``broker.id`` in version 0).

A file that does not parse raises the parser's ``CorruptCheckpointError`` (its message
names the file and the bad line).
"""

from __future__ import annotations

import os
from typing import TextIO

from kafkacore.log.checkpoints import (
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    uuid_to_base64,
)
from kafkacore.log.files import (
    CLEANER_OFFSET_CHECKPOINT_FILE,
    LEADER_EPOCH_CHECKPOINT_FILE,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    META_PROPERTIES_FILE,
    PARTITION_METADATA_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
)

__all__ = ["CHECKPOINT_FILE_NAMES", "dump_checkpoint_file"]

OFFSET_CHECKPOINT_FILE_NAMES = frozenset(
    {
        RECOVERY_POINT_CHECKPOINT_FILE,
        LOG_START_OFFSET_CHECKPOINT_FILE,
        REPLICATION_OFFSET_CHECKPOINT_FILE,
        CLEANER_OFFSET_CHECKPOINT_FILE,
    }
)
CHECKPOINT_FILE_NAMES = OFFSET_CHECKPOINT_FILE_NAMES | {
    LEADER_EPOCH_CHECKPOINT_FILE,
    PARTITION_METADATA_FILE,
    META_PROPERTIES_FILE,
}


def _header(path: str, version: int, entries: int) -> str:
    if entries == 0 and os.path.getsize(path) == 0:
        return "Empty checkpoint file\n"
    return f"Checkpoint version: {version}, entries: {entries}\n"


def dump_checkpoint_file(path: str, name: str, out: TextIO) -> None:
    """Print the file ``path`` (whose name, one of :data:`CHECKPOINT_FILE_NAMES`, is
    ``name``) on ``out``. Raises ``CorruptCheckpointError``/``StorageIOError``."""
    lines: list[str] = []
    if name in OFFSET_CHECKPOINT_FILE_NAMES:
        offsets = OffsetCheckpointFile(path).read()
        lines.append(_header(path, OffsetCheckpointFile.CURRENT_VERSION, len(offsets)))
        lines.extend(
            f"topic: {tp.topic} partition: {tp.partition} offset: {offset}\n"
            for tp, offset in offsets.items()
        )
    elif name == LEADER_EPOCH_CHECKPOINT_FILE:
        epochs = LeaderEpochCheckpointFile(path).read()
        lines.append(_header(path, LeaderEpochCheckpointFile.CURRENT_VERSION, len(epochs)))
        lines.extend(f"epoch: {e.epoch} startOffset: {e.start_offset}\n" for e in epochs)
    elif name == PARTITION_METADATA_FILE:
        metadata = PartitionMetadataFile(path).read()
        lines.append(f"version: {metadata.version} topicId: {uuid_to_base64(metadata.topic_id)}\n")
    elif name == META_PROPERTIES_FILE:
        props = MetaProperties.read(path).to_properties()
        lines.append(" ".join(f"{key}: {value}" for key, value in props.items()) + "\n")
    else:
        raise ValueError(f"not a checkpoint file: {name}")
    out.write("".join(lines))
