"""The coordinator runtime (Kafka 4's ``CoordinatorRuntime``) on its own, with a real replica
manager and log underneath and a small shard of its own (a ledger of the records it
replays): loads on the I/O executor, epoch fencing, unloads, append-then-await-the-high-
watermark, the coordinator errors of failed writes, the single node's not-yet-created
partitions, periodic jobs. The group and transaction coordinators are its shards in
``test_group_*.py`` and ``test_txn_*.py``."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kafkacore.coordinator.runtime import (
    CoordinatorRecord,
    CoordinatorRuntime,
    CoordinatorTopic,
    CoordinatorWriteError,
    append_error_code,
)
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.server.coordinator_writer import CoordinatorPartitionWriter
from test_group_cluster import Node

pytestmark = pytest.mark.timeout(60)

TOPIC = "__ledger"


class Ledger:
    """A shard that keeps the key and value of every record it replays, and notes on which
    thread it replayed and whether it is installed."""

    def __init__(self, partition: int, epoch: int) -> None:
        self.partition = partition
        self.epoch = epoch
        self.entries: list[tuple[int, bytes, bytes | None]] = []
        self.markers: list[tuple[int, bool]] = []
        self.replay_threads: set[str] = set()
        self.installed = False
        self.unloaded = False

    def replay(self, record: CoordinatorRecord) -> None:
        self.replay_threads.add(threading.current_thread().name)
        self.entries.append((record.producer_id, record.key, record.value))

    def replay_end_transaction_marker(self, producer_id: int, committed: bool) -> None:
        self.markers.append((producer_id, committed))

    def on_loaded(self) -> None:
        self.installed = True

    def on_unloaded(self) -> None:
        self.unloaded = True


def ledger_runtime(
    node: Node, *, reload_on_new_epoch: bool = False, serve_uncreated: bool = False
) -> CoordinatorRuntime[Ledger]:
    topic = CoordinatorTopic(
        TOPIC,
        CoordinatorPartitionWriter(node.replicas),
        num_partitions=2,
        replication_factor=1,
        configs={"cleanup.policy": "compact"},
        partitioner=lambda key, partitions: len(key) % partitions,
        cluster_mode=False,
    )
    return CoordinatorRuntime(
        topic,
        Ledger,
        io_executor=node.executor,
        write_timeout_ms=5000,
        reload_on_new_epoch=reload_on_new_epoch,
        serve_uncreated=serve_uncreated,
    )


def run(tmp_path: Path, scenario: Callable[[Node], Awaitable[None]]) -> None:
    node = Node(tmp_path)
    try:
        asyncio.run(scenario(node))
    finally:
        node.close()


async def loaded(runtime: CoordinatorRuntime[Ledger]) -> None:
    deadline = time.monotonic() + 10
    while runtime.loading:
        assert time.monotonic() < deadline, "the load did not finish"
        await asyncio.sleep(0.01)


def test_load_replays_on_the_io_executor_and_installs_on_the_loop(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        writer = ledger_runtime(node)
        await writer.ensure_topic()  # a single node loads what it leads: both partitions
        assert writer.owned_partitions() == {0, 1}
        end = await writer.append(1, [(b"a", b"1"), (b"b", None)])
        assert end == 2
        assert await writer.append(1, [(b"c", b"3")], producer=(7, 0)) == 3
        await writer.stop()

        runtime = ledger_runtime(node)
        assert runtime.partition_error(1) == ErrorCode.NOT_COORDINATOR
        gate = node.hold()  # the one I/O thread is busy: the load waits
        runtime.schedule_load(1, 3)
        assert runtime.partition_error(1) == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert runtime.shard(1) is None
        gate.set()
        await loaded(runtime)
        shard = runtime.shard(1)
        assert shard is not None and shard.installed and shard.epoch == 3
        assert shard.entries == [(-1, b"a", b"1"), (-1, b"b", None), (7, b"c", b"3")]
        assert shard.replay_threads and threading.current_thread().name not in shard.replay_threads
        assert runtime.partition_error(1) == ErrorCode.NONE
        assert runtime.partition_error(0) == ErrorCode.NOT_COORDINATOR  # not elected for it
        # the same shard is rebuilt from the log, as a load builds it
        assert runtime.replay_partition(1, 3).entries == shard.entries
        await runtime.stop()

    run(tmp_path, scenario)


def test_epochs_fence_loads_and_unloads(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        await ledger_runtime(node).ensure_topic()
        runtime = ledger_runtime(node)
        tp = TopicPartition(TOPIC, 0)
        runtime.on_leadership_change([(tp, 5), (TopicPartition("other", 0), 9)], [])
        await loaded(runtime)
        shard = runtime.shard(0)
        assert shard is not None and runtime.owned_partitions() == {0}
        runtime.on_leadership_change([], [(tp, 4)])  # stale: ignored
        assert runtime.shard(0) is shard and not shard.unloaded
        runtime.schedule_load(0, 6)  # a newer election keeps the loaded shard
        assert runtime.shard(0) is shard and not runtime.loading
        runtime.on_leadership_change([], [(tp, 6)])
        assert runtime.shard(0) is None and shard.unloaded
        assert runtime.partition_error(0) == ErrorCode.NOT_COORDINATOR
        runtime.schedule_load(0, 5)  # stale again
        assert not runtime.loading and runtime.shard(0) is None
        runtime.schedule_load(0, 7)
        runtime.schedule_unload(0, None)  # a deletion: no epoch, always applies
        assert not runtime.loading and runtime.partition_error(0) == ErrorCode.NOT_COORDINATOR
        await runtime.stop()

    run(tmp_path, scenario)


def test_reload_on_new_epoch_rebuilds_the_shard(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        runtime = ledger_runtime(node, reload_on_new_epoch=True)
        await runtime.ensure_topic()
        first = runtime.shard(0)
        assert first is not None
        runtime.schedule_load(0, first.epoch)  # the same epoch: nothing to do
        assert runtime.shard(0) is first and not runtime.loading
        runtime.schedule_load(0, first.epoch + 1)
        assert (
            first.unloaded and runtime.partition_error(0) == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        )
        await loaded(runtime)
        second = runtime.shard(0)
        assert second is not None and second is not first and second.epoch == first.epoch + 1
        await runtime.stop()

    run(tmp_path, scenario)


def test_append_completes_once_the_high_watermark_passes_it(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        runtime = ledger_runtime(node)
        await runtime.ensure_topic()
        end = await runtime.append(0, [(b"k", b"v")] * 3)
        partition = node.replicas.partition(TOPIC, 0)
        assert partition is not None and partition.high_watermark >= end == 3
        assert await runtime.append(0, []) == -1  # nothing to write
        # not owned (resigned while the caller waited): NOT_COORDINATOR, nothing written
        runtime.schedule_unload(0, None)
        with pytest.raises(CoordinatorWriteError) as refused:
            await runtime.append(0, [(b"k", b"late")])
        assert append_error_code(refused.value) == ErrorCode.NOT_COORDINATOR
        assert partition.log.log_end_offset == 3
        await runtime.stop()

    run(tmp_path, scenario)


def test_a_write_below_min_insync_replicas_answers_coordinator_not_available(
    tmp_path: Path,
) -> None:
    async def scenario(node: Node) -> None:
        runtime = ledger_runtime(node)
        runtime.topic.configs["min.insync.replicas"] = "2"  # one replica can never do
        await runtime.ensure_topic()
        with pytest.raises(CoordinatorWriteError) as failed:
            await runtime.append(0, [(b"k", b"v")])
        assert failed.value.error_code == ErrorCode.NOT_ENOUGH_REPLICAS
        assert append_error_code(failed.value) == ErrorCode.COORDINATOR_NOT_AVAILABLE
        await runtime.stop()

    run(tmp_path, scenario)


@pytest.mark.parametrize(
    ("cause", "answer", "kept"),
    [
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.COORDINATOR_NOT_AVAILABLE, None),
        (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE, None),
        (ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.COORDINATOR_NOT_AVAILABLE, None),
        (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.COORDINATOR_NOT_AVAILABLE, None),
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR, None),
        (ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR, None),
        (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR, None),
        (ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR, None),
        (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.UNKNOWN_SERVER_ERROR, 47),
        (ErrorCode.INVALID_TXN_STATE, ErrorCode.UNKNOWN_SERVER_ERROR, 48),
    ],
)
def test_append_error_codes_are_kafkas(cause: int, answer: int, kept: int | None) -> None:
    """Kafka 4.x ``GroupCoordinatorService.normalizeException``; a transactional offset
    commit keeps the log's own errors (``keep_log_errors``)."""
    error = CoordinatorWriteError(cause, "failed")
    assert append_error_code(error) == answer
    assert append_error_code(error, keep_log_errors=True) == (answer if kept is None else kept)
    assert append_error_code(RuntimeError("a bug")) == ErrorCode.UNKNOWN_SERVER_ERROR


def test_a_single_nodes_uncreated_partitions_are_served_and_created_on_write(
    tmp_path: Path,
) -> None:
    async def scenario(node: Node) -> None:
        runtime = ledger_runtime(node, serve_uncreated=True)
        assert not runtime.topic.exists()
        assert runtime.partition_error(1) == ErrorCode.NONE
        shard = runtime.shard(1)
        assert shard is not None and shard.installed and shard.entries == []
        assert await runtime.append(1, [(b"k", b"v")]) == 1
        assert runtime.topic.exists() and runtime.topic.partitions == 2
        runtime.schedule_unload(1, 3)  # a resignation with an epoch ends the implicit ownership
        assert shard.unloaded and runtime.partition_error(1) == ErrorCode.NOT_COORDINATOR
        await runtime.stop()

    run(tmp_path, scenario)


def test_periodic_jobs_survive_failures_and_stop_with_the_runtime(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario(node: Node) -> None:
        runtime = ledger_runtime(node)
        runs: list[int] = []

        async def job() -> None:
            runs.append(len(runs))
            if len(runs) == 1:
                raise RuntimeError("the first run fails")

        with caplog.at_level(logging.ERROR, logger="kafkacore.coordinator"):
            runtime.schedule_periodic("Ledger sweep", lambda: 10, job)
            deadline = time.monotonic() + 10
            while len(runs) < 3:
                assert time.monotonic() < deadline, "the job stopped after its failure"
                await asyncio.sleep(0.01)
            await runtime.stop()
        stopped_at = len(runs)
        await asyncio.sleep(0.05)
        assert len(runs) == stopped_at
        assert [r.getMessage() for r in caplog.records] == ["Ledger sweep failed"]

    run(tmp_path, scenario)
