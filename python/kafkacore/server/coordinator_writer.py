"""The coordinators' way into their internal topics (Kafka's ``CoordinatorPartitionWriter``,
with the log reads of its ``CoordinatorLoaderImpl``): the
:class:`~kafkacore.coordinator.runtime.PartitionWriter` of the coordinator runtime, over
the replica manager's public API.

Thread-safety: :meth:`~CoordinatorPartitionWriter.append`,
:meth:`~CoordinatorPartitionWriter.create_topic` and :meth:`~CoordinatorPartitionWriter.read`
block and run on the I/O executor (the replica manager and its logs are safe from any
thread); :meth:`~CoordinatorPartitionWriter.wake_fetches` and
:meth:`~CoordinatorPartitionWriter.await_replication` run on the event loop."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping

from kafkacore.coordinator.runtime import CoordinatorWriteError
from kafkacore.log import AppendOrigin, TopicPartition
from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers
from kafkacore.protocol import ErrorCode
from kafkacore.record import BatchHeader
from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["CoordinatorPartitionWriter"]


class CoordinatorPartitionWriter:
    """See the module documentation."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self.replicas = replicas

    def partition_count(self, topic: str) -> int | None:
        return self.replicas.cache.partition_count(topic)

    def leader_epoch(self, tp: TopicPartition) -> int | None:
        partition = self.replicas.get_partition(tp)
        if partition is None or not partition.is_leader:
            return None
        return partition.leader_epoch

    def create_topic(
        self, topic: str, partitions: int, configs: Mapping[str, str], replicas: int | None
    ) -> None:
        """Create ``topic`` unless it exists: on this node (``replicas`` is ``None``), or
        with ``replicas`` replicas per partition placed over the live brokers as Kafka's
        ``AdminUtils`` places them (raises
        :class:`~kafkacore.placement.InvalidReplicationFactorError` when too few are live)."""
        if replicas is None:
            self.replicas.ensure_topic(topic, partitions, configs)
            return
        brokers = sorted(
            (BrokerMetadata(b.node_id, b.rack) for b in self.replicas.cache.alive_brokers()),
            key=lambda b: b.id,
        )
        by_partition = assign_replicas_to_brokers(brokers, partitions, replicas)
        with contextlib.suppress(KeyError):  # created meanwhile (by another broker)
            self.replicas.create_topic(
                topic,
                partitions,
                dict(configs),
                assignment=[by_partition[p] for p in range(partitions)],
            )

    def append(
        self, tp: TopicPartition, records: bytes, verification_guard: tuple[int, int] | None
    ) -> int:
        """Append ``records`` to ``tp`` as its leader with acks=-1 (Kafka's coordinators
        write with ``offsets.commit.required.acks``' default: refused below
        ``min.insync.replicas``); the offset after them."""
        partition = self.replicas.get_partition(tp)
        if partition is None:
            raise CoordinatorWriteError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} is not here")
        info = self.replicas.append_to_leader(
            partition,
            records,
            required_acks=-1,
            origin=AppendOrigin.COORDINATOR,
            verification_guard=verification_guard,
        )
        return info.last_offset + 1

    def error_code(self, exc: BaseException) -> int:
        """Kafka's ``Errors.forException`` of a failed append; an I/O error of the log is
        a KAFKA_STORAGE_ERROR (Kafka wraps it in a ``KafkaStorageException``)."""
        # imported here: the handler package imports the coordinators, which import this
        from kafkacore.errors import error_code_for

        code = error_code_for(exc)
        if code == ErrorCode.UNKNOWN_SERVER_ERROR and isinstance(exc, OSError):
            return ErrorCode.KAFKA_STORAGE_ERROR
        return int(code)

    def wake_fetches(self, tp: TopicPartition) -> None:
        self.replicas.purgatory.wake(tp)

    async def await_replication(self, tp: TopicPartition, offset: int, timeout_ms: int) -> None:
        """The replica manager's delayed-produce wait for an acks=-1 append."""
        [code] = await self.replicas.wait_for_replication([(tp, offset)], timeout_ms)
        if code != ErrorCode.NONE:
            raise CoordinatorWriteError(code, f"{tp}: {code.name} waiting for offset {offset}")

    def read(self, tp: TopicPartition) -> Iterable[tuple[bytes, int, BatchHeader]]:
        log = self.replicas.get_log(tp.topic, tp.partition)
        return log.batches() if log is not None else ()
