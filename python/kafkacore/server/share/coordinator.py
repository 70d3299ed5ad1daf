"""The share coordinator (Kafka's ``ShareCoordinatorService``): the durable state of every
share partition, kept in ``__share_group_state`` by one
:class:`~kafkacore.coordinator.share_state.ShareStateShard` per partition of that topic
on the coordinator runtime, and served to the partition leaders through the share-state
RPCs (InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
DeleteShareGroupState, ReadShareGroupStateSummary).

A share partition's key ``"<group>:<topic id>:<partition>"`` hashes to one partition of
``__share_group_state`` (:func:`~kafkacore.coordinator.share_state.share_state_partition`);
the broker leading it is its share coordinator (FindCoordinator key type SHARE). The topic
is created on first use: ``cleanup.policy=delete`` with infinite retention, as Kafka
creates it (the coordinator prunes it itself once snapshots make records redundant; not
done here yet), ``share.coordinator.state.topic.num.partitions`` partitions with
``share.coordinator.state.topic.replication.factor`` replicas in a cluster.

A write validates against the shard, appends the record(s) and, once committed, replays
them into the shard: the same path a load takes, so a failover serves what was written.
Every ``share.coordinator.cold.partition.snapshot.interval.ms`` each owned partition
writes fresh snapshots of its share partitions idle that long.

Thread-safety: event loop only (the runtime's loads and appends run on the I/O executor).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from typing import NamedTuple

from kafkacore.config import BrokerConfig
from kafkacore.coordinator.runtime import (
    CoordinatorRecord,
    CoordinatorRuntime,
    CoordinatorTopic,
    PartitionWriter,
    append_error_code,
)
from kafkacore.coordinator.share_records import SHARE_GROUP_STATE_TOPIC
from kafkacore.coordinator.share_state import (
    PartitionResult,
    ShareGroupOffset,
    SharePartitionKey,
    ShareStateShard,
    StateBatch,
    StateError,
    share_coordinator_key,
    share_state_partition,
)
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode

__all__ = ["ShareCoordinator", "StateAnswer", "share_state_topic"]

logger = logging.getLogger("kafkacore.server.share")


def share_state_topic(
    writer: PartitionWriter, config: BrokerConfig, cluster_mode: bool
) -> CoordinatorTopic:
    """``__share_group_state`` as ``config`` defines it (``shareGroupStateTopicConfigs``)."""
    min_isr = config.share_coordinator_state_topic_min_isr
    return CoordinatorTopic(
        SHARE_GROUP_STATE_TOPIC,
        writer,
        num_partitions=config.share_coordinator_state_topic_num_partitions,
        replication_factor=config.share_coordinator_state_topic_replication_factor,
        configs={
            "cleanup.policy": "delete",
            "compression.type": "producer",
            "segment.bytes": str(config.share_coordinator_state_topic_segment_bytes),
            "min.insync.replicas": str(min_isr if cluster_mode else 1),
            "retention.ms": "-1",
        },
        partitioner=share_state_partition,
        cluster_mode=cluster_mode,
    )


class StateAnswer(NamedTuple):
    """One share partition's answer to a share-state request: Kafka's error code and
    message, and the state read (for Read/ReadSummary)."""

    error_code: int
    error_message: str | None = None
    state: ShareGroupOffset | None = None


def _now_ms() -> int:
    return int(time.time() * 1000)


class ShareCoordinator:
    """See the module documentation. ``topic_exists(topic_id, partition)``: whether the
    cluster's metadata has that partition (Kafka checks it on every request)."""

    def __init__(
        self,
        config: BrokerConfig,
        writer: PartitionWriter,
        topic_exists: Callable[[uuid.UUID, int], bool],
        *,
        io_executor: Executor | None,
        cluster_mode: bool,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self.config = config
        self.clock = clock
        self.topic_exists = topic_exists
        self.runtime: CoordinatorRuntime[ShareStateShard] = CoordinatorRuntime(
            share_state_topic(writer, config, cluster_mode),
            lambda partition, _epoch: ShareStateShard(
                partition,
                snapshot_every=lambda: (
                    self.config.share_coordinator_snapshot_update_records_per_snapshot
                ),
                topic_exists=self.topic_exists,
                clock=self.clock,
            ),
            io_executor=io_executor,
            write_timeout_ms=config.share_coordinator_write_timeout_ms,
            serve_uncreated=not cluster_mode,
        )
        self.topic = self.runtime.topic

    def _snapshot_every(self) -> int:
        return self.config.share_coordinator_snapshot_update_records_per_snapshot

    # -- ownership -------------------------------------------------------------------------

    def partition_for(self, key: SharePartitionKey) -> int:
        return self.topic.partition_for(share_coordinator_key(key))

    def partition_for_coordinator_key(self, coordinator_key: str) -> int:
        return self.topic.partition_for(coordinator_key)

    def coordinator_error(self, key: SharePartitionKey) -> int:
        return self.runtime.partition_error(self.partition_for(key))

    def on_leadership_change(
        self,
        leaders: Iterable[tuple[TopicPartition, int]],
        followers: Iterable[tuple[TopicPartition, int]],
    ) -> None:
        self.runtime.on_leadership_change(leaders, followers)

    def load(self) -> None:
        self.runtime.load_led_partitions()

    def create_topic(self) -> None:
        """Start creating ``__share_group_state`` unless under way (FindCoordinator)."""
        self.runtime.create_topic_in_background()

    def start(self) -> None:
        self.runtime.schedule_periodic(
            "Snapshot cold share partitions",
            lambda: self.config.share_coordinator_cold_partition_snapshot_interval_ms,
            self._snapshot_cold_partitions,
        )

    async def stop(self) -> None:
        await self.runtime.stop()

    async def _snapshot_cold_partitions(self) -> None:
        interval = self.config.share_coordinator_cold_partition_snapshot_interval_ms
        for index in sorted(self.runtime.owned_partitions()):
            async with self.runtime.partition_lock(index):
                shard = self.runtime.shard(index)
                if shard is None:
                    continue
                records = shard.cold_snapshots(interval)
                if records:
                    await self._append(index, shard, records)

    # -- requests --------------------------------------------------------------------------

    async def _apply(
        self, key: SharePartitionKey, operation: Callable[[ShareStateShard], PartitionResult]
    ) -> StateAnswer:
        """Run ``operation`` against ``key``'s shard under its partition's lock, append
        what it wrote and replay it once committed; the answer."""
        index = self.partition_for(key)
        code = self.runtime.partition_error(index)
        if code:
            return StateAnswer(code, None)
        async with self.runtime.partition_lock(index):
            shard = self.runtime.shard(index)
            if shard is None:
                code = self.runtime.partition_error(index) or ErrorCode.NOT_COORDINATOR
                return StateAnswer(code, None)
            try:
                result = operation(shard)
            except StateError as exc:
                return StateAnswer(exc.error_code, exc.message)
            if result.records:
                try:
                    await self._append(index, shard, result.records)
                except _AppendFailed as exc:
                    return StateAnswer(exc.code, exc.message)
        return StateAnswer(ErrorCode.NONE, None, result.state)

    async def _append(
        self, index: int, shard: ShareStateShard, records: list[tuple[bytes, bytes | None]]
    ) -> None:
        try:
            end = await self.runtime.append(index, records)
        except Exception as exc:
            code = append_error_code(exc)
            raise _AppendFailed(code, str(exc)) from exc
        first = end - len(records)
        for i, (key, value) in enumerate(records):
            shard.replay(CoordinatorRecord(first + i, -1, key, value))

    async def write_state(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: list[StateBatch],
    ) -> StateAnswer:
        return await self._apply(
            key,
            lambda shard: shard.write_state(
                key, state_epoch, leader_epoch, start_offset, delivery_complete_count, batches
            ),
        )

    async def read_state(self, key: SharePartitionKey, leader_epoch: int) -> StateAnswer:
        return await self._apply(key, lambda shard: shard.read_state(key, leader_epoch))

    async def read_summary(self, key: SharePartitionKey) -> StateAnswer:
        index = self.partition_for(key)
        code = self.runtime.partition_error(index)
        shard = self.runtime.shard(index)
        if code or shard is None:
            return StateAnswer(code or ErrorCode.NOT_COORDINATOR)
        try:
            return StateAnswer(ErrorCode.NONE, None, shard.read_summary(key))
        except StateError as exc:
            return StateAnswer(exc.error_code, exc.message)

    async def initialize_state(
        self, key: SharePartitionKey, state_epoch: int, start_offset: int
    ) -> StateAnswer:
        return await self._apply(
            key, lambda shard: shard.initialize_state(key, state_epoch, start_offset)
        )

    async def delete_state(self, key: SharePartitionKey) -> StateAnswer:
        return await self._apply(key, lambda shard: shard.delete_state(key))

    # -- reading -----------------------------------------------------------------------

    def states(self) -> Mapping[SharePartitionKey, ShareGroupOffset]:
        """Every share partition's state this coordinator owns (console, describe)."""
        out: dict[SharePartitionKey, ShareGroupOffset] = {}
        for shard in self.runtime.shards():
            out.update(shard.states)
        return out


class _AppendFailed(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
