"""``__consumer_offsets``: the coordinator's records written in Kafka's formats
(OffsetCommitKey v1 + OffsetCommitValue v4, or v1 with an expire timestamp;
GroupMetadataKey v2 + GroupMetadataValue v3; null values as tombstones) and read back at
start-up (the last record of a key wins)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from kafkacore import record
from kafkacore.coordinator import records as recs
from kafkacore.errors import KafkaCoreError
from kafkacore.log import AppendOrigin, TopicPartition
from kafkacore.server.partition import Partition
from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["OFFSETS_TOPIC", "OffsetsPartitionMissingError", "OffsetsTopic"]

OFFSETS_TOPIC = "__consumer_offsets"
logger = logging.getLogger("kafkacore.server.group")


class OffsetsPartitionMissingError(KafkaCoreError):
    """The ``__consumer_offsets`` partition of a group is not hosted here (Kafka's
    UnknownTopicOrPartitionException on a coordinator append)."""


class OffsetsTopic:
    """Thread-safety: :meth:`write` and :meth:`ensure_created` block (metadata and log
    writes) and run on the I/O executor; the replica manager and the logs they use are
    safe to call from any thread. :meth:`partition_for` is pure."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self.replicas = replicas
        self.partitions = replicas.config.offsets_topic_num_partitions
        existing = replicas.cache.partition_count(OFFSETS_TOPIC)
        if existing is not None:
            self.partitions = existing

    def partition_for(self, group: str) -> int:
        return recs.partition_for_group(group, self.partitions)

    def ensure_created(self) -> None:
        """Create ``__consumer_offsets`` if it does not exist yet (Kafka does this on the
        first FindCoordinator for a group, before any member joins)."""
        if self.replicas.partition(OFFSETS_TOPIC, 0) is None:
            configs = {
                "cleanup.policy": "compact",
                "segment.bytes": str(self.replicas.config.offsets_topic_segment_bytes),
                "compression.type": "producer",
            }
            self.replicas.ensure_topic(OFFSETS_TOPIC, self.partitions, configs)

    def _partition(self, index: int) -> Partition:
        self.ensure_created()
        partition = self.replicas.partition(OFFSETS_TOPIC, index)
        if partition is None:
            raise OffsetsPartitionMissingError(f"{OFFSETS_TOPIC}-{index} is not hosted here")
        return partition

    def write(self, group: str, entries: list[tuple[bytes, bytes | None]]) -> TopicPartition:
        """Append ``(key, value)`` records for ``group`` in one batch, on the calling
        thread (an I/O thread: this blocks); the partition written, whose delayed fetches
        the caller wakes on the event loop. Raises what the append raised."""
        now = int(time.time() * 1000)
        batch = record.build_batch([(i, now, k, v, []) for i, (k, v) in enumerate(entries)])
        partition = self._partition(self.partition_for(group))
        self.replicas.append_to_leader(partition, batch, origin=AppendOrigin.COORDINATOR)
        return partition.topic_partition

    def read_all(self) -> Iterator[tuple[Any, bytes | None]]:
        """``(decoded key, value)`` of every record in the topic, in log order."""
        if not self.replicas.cache.contains_topic(OFFSETS_TOPIC):
            return
        for partition in range(self.partitions):
            log = self.replicas.get_log(OFFSETS_TOPIC, partition)
            if log is None:
                continue
            offset = log.log_start_offset
            while offset < log.log_end_offset:
                data = log.read(offset, 1 << 20).read_bytes()
                if not data:
                    break
                for pos, _magic, _size in record.iter_batches(data):
                    header = record.batch_header(data, pos)
                    offset = header.last_offset + 1
                    if header.is_control:
                        continue
                    for r in record.records(data, pos):
                        if r.key is None:
                            continue
                        try:
                            key = recs.decode_key(r.key)
                        except Exception as exc:  # a foreign record: skip it, as Kafka logs
                            logger.warning("Skipping undecodable offsets record: %s", exc)
                            continue
                        yield key, r.value
