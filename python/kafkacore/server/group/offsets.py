"""``__consumer_offsets``: the coordinator's records written in Kafka's formats
(OffsetCommitKey v1 + OffsetCommitValue v4, or v1 with an expire timestamp;
GroupMetadataKey v2 + GroupMetadataValue v3; null values as tombstones) and read back at
start-up or on an election (the last record of a key wins).

In a cluster the topic is created with ``offsets.topic.replication.factor`` replicas
assigned over the live brokers (Kafka's ``AdminUtils``); with fewer live brokers the
creation fails, and FindCoordinator keeps answering COORDINATOR_NOT_AVAILABLE."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

from kafkacore import record
from kafkacore.coordinator import records as recs
from kafkacore.errors import KafkaCoreError
from kafkacore.log import AppendOrigin, TopicPartition
from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers
from kafkacore.server.partition import Partition
from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["OFFSETS_TOPIC", "OffsetsLogEntry", "OffsetsPartitionMissingError", "OffsetsTopic"]

OFFSETS_TOPIC = "__consumer_offsets"
logger = logging.getLogger("kafkacore.server.group")


class OffsetsPartitionMissingError(KafkaCoreError):
    """The ``__consumer_offsets`` partition of a group is not hosted here (Kafka's
    UnknownTopicOrPartitionException on a coordinator append)."""


class OffsetsTopic:
    """Thread-safety: :meth:`write` and :meth:`ensure_created` block (metadata and log
    writes) and run on the I/O executor; the replica manager and the logs they use are
    safe to call from any thread. :meth:`partition_for` is pure."""

    def __init__(self, replicas: ReplicaManager, *, cluster_mode: bool = False) -> None:
        self.replicas = replicas
        self.cluster_mode = cluster_mode
        self._configured_partitions = replicas.config.offsets_topic_num_partitions

    @property
    def partitions(self) -> int:
        """The topic's partition count once it exists (in a cluster it may have been
        created by a broker configured otherwise), else ``offsets.topic.num.partitions``."""
        existing = self.replicas.cache.partition_count(OFFSETS_TOPIC)
        return existing if existing is not None else self._configured_partitions

    def partition_for(self, group: str) -> int:
        return recs.partition_for_group(group, self.partitions)

    def _configs(self) -> dict[str, str]:
        return {
            "cleanup.policy": "compact",
            "segment.bytes": str(self.replicas.config.offsets_topic_segment_bytes),
            "compression.type": "producer",
        }

    def ensure_created(self) -> None:
        """Create ``__consumer_offsets`` if it does not exist yet (Kafka does this on the
        first FindCoordinator for a group, before any member joins). In a cluster:
        ``offsets.topic.replication.factor`` replicas per partition over the live
        brokers; raises :class:`~kafkacore.placement.InvalidReplicationFactorError`
        when there are fewer. Blocking: off the event loop."""
        if self.cluster_mode:
            if not self.replicas.cache.contains_topic(OFFSETS_TOPIC):
                self._create_replicated()
            return
        if self.replicas.partition(OFFSETS_TOPIC, 0) is None:
            self.replicas.ensure_topic(OFFSETS_TOPIC, self.partitions, self._configs())

    def _create_replicated(self) -> None:
        config = self.replicas.config
        brokers = sorted(
            (BrokerMetadata(b.node_id, b.rack) for b in self.replicas.cache.alive_brokers()),
            key=lambda b: b.id,
        )
        count = self._configured_partitions
        by_partition = assign_replicas_to_brokers(
            brokers, count, config.offsets_topic_replication_factor
        )
        with contextlib.suppress(KeyError):  # created meanwhile (by another broker)
            self.replicas.create_topic(
                OFFSETS_TOPIC,
                count,
                self._configs(),
                assignment=[by_partition[p] for p in range(count)],
            )

    def _partition(self, index: int) -> Partition:
        if not self.cluster_mode:
            self.ensure_created()  # a single node creates it on the first write too
        partition = self.replicas.partition(OFFSETS_TOPIC, index)
        if partition is None:
            raise OffsetsPartitionMissingError(f"{OFFSETS_TOPIC}-{index} is not hosted here")
        return partition

    def write(
        self,
        group: str,
        entries: list[tuple[bytes, bytes | None]],
        txn: tuple[int, int] | None = None,
        verification_guard: tuple[int, int] | None = None,
    ) -> tuple[TopicPartition, int]:
        """Append ``(key, value)`` records for ``group`` in one batch with acks=-1 (Kafka's
        ``offsets.commit.required.acks`` default: refused below ``min.insync.replicas``),
        on the calling thread (an I/O thread: this blocks); the partition written, whose
        delayed fetches the caller wakes on the event loop, and the offset its high
        watermark must reach for the batch to be committed (the batch's records are the
        ``len(entries)`` offsets before it). Raises what the append raised.

        ``txn`` = ``(producer id, producer epoch)``: a TxnOffsetCommit's batch, written as
        Kafka's coordinator runtime writes it - transactional, under that producer id and
        epoch, base sequence 0 (a coordinator append: the log checks the epoch, not the
        sequence); otherwise no producer id (-1/-1/-1), not transactional.
        ``verification_guard``: the KIP-890 guard of a verified TxnOffsetCommit (a marker
        of the producer appended since refuses the write, INVALID_TXN_STATE)."""
        now = int(time.time() * 1000)
        rows: list[tuple[int, int, bytes, bytes | None, list[tuple[str, bytes | None]]]] = [
            (i, now, k, v, []) for i, (k, v) in enumerate(entries)
        ]
        if txn is None:
            batch = record.build_batch(rows)
        else:
            batch = record.build_batch(
                rows,
                producer_id=txn[0],
                producer_epoch=txn[1],
                base_sequence=0,
                transactional=True,
            )
        partition = self._partition(self.partition_for(group))
        info = self.replicas.append_to_leader(
            partition,
            batch,
            required_acks=-1,
            origin=AppendOrigin.COORDINATOR,
            verification_guard=verification_guard,
        )
        return partition.topic_partition, info.last_offset + 1

    def read_all(self) -> Iterator[tuple[Any, bytes | None]]:
        """``(decoded key, value)`` of every record in the topic, in log order."""
        if not self.replicas.cache.contains_topic(OFFSETS_TOPIC):
            return
        for partition in range(self.partitions):
            yield from self.read_partition(partition)

    def read_partition(self, partition: int) -> Iterator[tuple[Any, bytes | None]]:
        """``(decoded key, value)`` of every data record of one partition, in log order,
        up to its log end (Kafka's load reads to the log end offset); transaction markers
        are left out. Blocking."""
        for entry in self.read_partition_entries(partition):
            if entry.marker is None:
                yield entry.key, entry.value

    def read_partition_entries(self, partition: int) -> Iterator[OffsetsLogEntry]:
        """Every record of one partition as an :class:`OffsetsLogEntry`, in log order, up
        to its log end: the data records (undecodable keys skipped, as Kafka logs them)
        with their batch's producer id when the batch is transactional, and the COMMIT
        and ABORT markers of control batches (Kafka's ``CoordinatorLoaderImpl`` replays
        both). Blocking."""
        log = self.replicas.get_log(OFFSETS_TOPIC, partition)
        if log is None:
            return
        for data, pos, header in log.batches():
            producer_id = header.producer_id if header.is_transactional else -1
            if header.is_control:
                for r in record.records(data, pos):
                    if r.key is None or r.value is None:
                        continue
                    try:
                        kind, _epoch = record.parse_control_record(r.key, r.value)
                    except (ValueError, KafkaCoreError) as exc:  # not a txn marker
                        logger.warning("Skipping unknown control record: %s", exc)
                        continue
                    yield OffsetsLogEntry(r.offset, producer_id, None, None, kind)
                continue
            for r in record.records(data, pos):
                if r.key is None:
                    continue
                try:
                    key = recs.decode_key(r.key)
                except Exception as exc:  # a foreign record: skip it, as Kafka logs
                    logger.warning("Skipping undecodable offsets record: %s", exc)
                    continue
                yield OffsetsLogEntry(r.offset, producer_id, key, r.value, None)


class OffsetsLogEntry(NamedTuple):
    """One record of ``__consumer_offsets`` as a load replays it: ``offset`` in the log;
    ``producer_id`` of a transactional batch (a TxnOffsetCommit's, or a marker's), else
    -1; a data record's decoded ``key`` and ``value`` (``None``: a tombstone); a
    transaction marker's ``marker`` type (then ``key`` and ``value`` are ``None``)."""

    offset: int
    producer_id: int
    key: Any
    value: bytes | None
    marker: record.ControlType | None
