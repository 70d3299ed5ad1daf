"""Partition replication rules (Kafka 3.9's ``Partition``/``ReplicaManager``): the leader's
high watermark over the maximal ISR, ISR shrink and expansion proposals and their
answers, follower appends and truncation, and the delayed ``acks=-1`` produce."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkacore import _native
from kafkacore.config import LogConfig
from kafkacore.log import Log, TopicPartition
from kafkacore.metadata import PartitionState
from kafkacore.protocol import ErrorCode
from kafkacore.server.delayed import ProducePurgatory
from kafkacore.server.partition import (
    FencedLeaderEpochError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    Partition,
    UnknownLeaderEpochError,
)
from kafkacore.server.replica_fetcher import truncation_offset

TP = TopicPartition("t", 0)
LAG = 10_000


def batch(n: int = 1, *, base_offset: int = 0, epoch: int = -1) -> bytes:
    records = [(base_offset + i, 1_700_000_000_000, b"k", b"v", []) for i in range(n)]
    return bytes(_native.build_batch(records, partition_leader_epoch=epoch))


class FakeAlterPartition:
    def __init__(self) -> None:
        self.submitted: list[tuple[Any, ...]] = []
        self.callbacks: list[Callable[[int, Any], None]] = []

    def submit(
        self, tp: Any, leader_epoch: int, new_isr: Any, partition_epoch: int, cb: Any
    ) -> bool:
        self.submitted.append((tp, leader_epoch, new_isr, partition_epoch))
        self.callbacks.append(cb)
        return True

    def answer(self, error: int, result: Any = None) -> None:
        self.callbacks.pop(0)(error, result)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_partition(
    tmp_path: Path, clock: Clock
) -> Callable[..., tuple[Partition, FakeAlterPartition]]:
    def make(
        node: int = 1, min_isr: int = 1, alive: set[int] | None = None, name: str = "t-0"
    ) -> tuple[Partition, FakeAlterPartition]:
        log = Log(
            tmp_path / f"{node}{name}" / "t-0", LogConfig({"min.insync.replicas": str(min_isr)})
        )
        alter = FakeAlterPartition()
        partition = Partition(
            TP,
            log,
            node,
            alter_partition=alter,
            is_broker_alive=(lambda b: b in alive) if alive is not None else None,
            clock=clock,
        )
        return partition, alter

    return make


def leader_state(
    isr: tuple[int, ...] = (1, 2, 3), epoch: int = 1, pepoch: int = 0
) -> PartitionState:
    return PartitionState((1, 2, 3), 1, epoch, isr, pepoch)


def test_single_replica_hw_follows_the_log_end(make_partition: Any) -> None:
    partition, alter = make_partition()
    partition.make_leader(PartitionState((1,), 1, 0, (1,), 0))
    partition.append_records_to_leader(batch(3))
    assert partition.high_watermark == 3
    assert partition.log.leader_epoch_cache.entries() == [(0, 0)]
    assert not alter.submitted


def test_single_replica_keeps_min_insync_replicas_before_append(make_partition: Any) -> None:
    partition, _ = make_partition(min_isr=2)
    partition.make_leader(PartitionState((1,), 1, 0, (1,), 0))
    with pytest.raises(NotEnoughReplicasError):
        partition.append_records_to_leader(batch(), required_acks=-1)


def test_make_leader_records_the_epoch_even_without_records(make_partition: Any) -> None:
    partition, _ = make_partition()
    partition.make_leader(leader_state(epoch=5), record_epoch_start=True)
    assert partition.log.leader_epoch_cache.entries() == [(5, 0)]
    assert partition.log.end_offset_for_epoch(5) == (5, 0)


def test_hw_is_the_minimum_leo_of_the_isr_and_only_moves_forward(make_partition: Any) -> None:
    partition, _ = make_partition()
    partition.make_leader(leader_state(), record_epoch_start=True)
    partition.append_records_to_leader(batch(5))
    assert partition.high_watermark == 0  # followers' positions unknown
    partition.update_follower_fetch_state(2, 5, 0)
    assert partition.high_watermark == 0  # 3 still unknown
    partition.update_follower_fetch_state(3, 2, 0)
    assert partition.high_watermark == 2
    partition.update_follower_fetch_state(3, 4, 0)
    assert partition.high_watermark == 4
    partition.update_follower_fetch_state(3, 1, 0)  # a lower fetch: HW stays
    assert partition.high_watermark == 4


def test_hw_is_held_while_isr_below_min_isr(make_partition: Any) -> None:
    partition, _ = make_partition(min_isr=2)
    partition.make_leader(leader_state(isr=(1,)), record_epoch_start=True)
    partition.append_records_to_leader(batch(3))
    assert partition.high_watermark == 0
    with pytest.raises(NotEnoughReplicasError):
        partition.append_records_to_leader(batch(), required_acks=-1)


def test_expansion_counts_in_the_hw_while_pending_and_commits_on_success(
    make_partition: Any,
) -> None:
    partition, alter = make_partition()
    partition.make_leader(leader_state(isr=(1, 2)), record_epoch_start=True)
    partition.append_records_to_leader(batch(4))
    partition.update_follower_fetch_state(2, 4, 0)
    assert partition.high_watermark == 4
    assert not alter.submitted  # 3 unknown yet
    partition.update_follower_fetch_state(3, 4, 0)  # caught up to the HW: expand
    assert alter.submitted == [(TP, 1, (1, 2, 3), 0)]
    assert partition.maximal_isr == {1, 2, 3}
    assert partition.isr == {1, 2}
    partition.append_records_to_leader(batch(2))
    partition.update_follower_fetch_state(2, 6, 0)
    assert partition.high_watermark == 4  # 3 (pending) holds it
    alter.answer(0, (1, (1, 2, 3), 1))
    assert partition.isr == {1, 2, 3}
    assert partition.partition_epoch == 1
    assert partition.pending_isr is None


def test_expansion_needs_the_current_epoch_start_and_a_live_broker(make_partition: Any) -> None:
    partition, alter = make_partition(alive={1, 2})
    partition.log.append_as_leader(batch(3), 0)
    partition.make_leader(leader_state(isr=(1, 2)), record_epoch_start=True)  # epoch 1 at 3
    partition.update_follower_fetch_state(2, 3, 0)
    partition.update_follower_fetch_state(3, 3, 0)
    assert not alter.submitted  # 3 is not alive
    partition2, alter2 = make_partition(name="t-0b")
    partition2.log.append_as_leader(batch(3), 0)
    partition2.make_leader(leader_state(isr=(1,)), record_epoch_start=True)
    partition2.update_follower_fetch_state(2, 2, 0)  # >= HW 0 but below the epoch start 3
    assert not alter2.submitted
    partition2.update_follower_fetch_state(2, 3, 0)
    assert alter2.submitted[0][2] == (1, 2)


def test_shrink_after_lag_time_and_one_in_flight(make_partition: Any, clock: Clock) -> None:
    partition, alter = make_partition()
    partition.make_leader(leader_state(), record_epoch_start=True)
    partition.append_records_to_leader(batch(2))
    partition.update_follower_fetch_state(2, 2, 0)
    partition.update_follower_fetch_state(3, 0, 0)
    clock.now += LAG  # exactly the lag: still caught up
    assert not partition.maybe_shrink_isr(lag_ms=LAG)
    clock.now += 1
    assert partition.maybe_shrink_isr(lag_ms=LAG)
    assert alter.submitted[-1] == (TP, 1, (1, 2), 0)
    assert partition.maximal_isr == {1, 2, 3}  # a pending shrink keeps the larger ISR
    assert not partition.maybe_shrink_isr(lag_ms=LAG)  # one in flight
    alter.answer(0, (1, (1, 2), 1))
    assert partition.isr == {1, 2}
    assert partition.high_watermark == 2


def test_caught_up_time_uses_the_previous_fetch(make_partition: Any, clock: Clock) -> None:
    partition, _ = make_partition()
    partition.make_leader(leader_state(), record_epoch_start=True)
    partition.append_records_to_leader(batch(2))
    start = clock.now
    partition.update_follower_fetch_state(2, 2, 0)  # at the LEO: caught up now
    assert partition.follower_state(2).last_caught_up_time == start  # type: ignore[union-attr]
    partition.append_records_to_leader(batch(2))  # LEO 4
    clock.now += 100
    partition.update_follower_fetch_state(
        2, 2, 0
    )  # behind, but reached the LEO of its previous fetch
    assert partition.follower_state(2).last_caught_up_time == start  # type: ignore[union-attr]
    clock.now += 100
    partition.update_follower_fetch_state(2, 4, 0)
    assert partition.follower_state(2).last_caught_up_time == clock.now  # type: ignore[union-attr]


def test_fenced_isr_update_waits_for_leader_and_isr(make_partition: Any, clock: Clock) -> None:
    partition, alter = make_partition()
    partition.make_leader(leader_state(), record_epoch_start=True)
    partition.update_follower_fetch_state(2, 0, 0)
    partition.update_follower_fetch_state(3, 0, 0)
    partition.append_records_to_leader(batch(1))
    clock.now += LAG + 1
    assert partition.maybe_shrink_isr(lag_ms=LAG)
    alter.answer(int(ErrorCode.INVALID_UPDATE_VERSION))
    assert partition.isr == {1, 2, 3}
    assert not partition.maybe_shrink_isr(lag_ms=LAG)  # waits for LeaderAndIsr
    partition.make_leader(leader_state(epoch=2, pepoch=3), record_epoch_start=True)
    clock.now += LAG + 1
    assert partition.maybe_shrink_isr(lag_ms=LAG)


def test_other_errors_let_the_proposal_be_made_again(make_partition: Any, clock: Clock) -> None:
    partition, alter = make_partition()
    partition.make_leader(leader_state(), record_epoch_start=True)
    partition.append_records_to_leader(batch(1))
    clock.now += LAG + 1
    assert partition.maybe_shrink_isr(lag_ms=LAG)
    alter.answer(int(ErrorCode.UNKNOWN_SERVER_ERROR))
    assert partition.maybe_shrink_isr(lag_ms=LAG)


def test_leader_epoch_checks_and_not_leader(make_partition: Any) -> None:
    partition, _ = make_partition()
    partition.make_leader(leader_state(epoch=3), record_epoch_start=True)
    partition.check_leader_epoch(3)
    partition.check_leader_epoch(-1)
    with pytest.raises(FencedLeaderEpochError):
        partition.check_leader_epoch(2)
    with pytest.raises(UnknownLeaderEpochError):
        partition.check_leader_epoch(4)
    partition.make_follower(PartitionState((1, 2, 3), 2, 4, (2, 3), 1))
    assert not partition.is_leader
    assert partition.isr == frozenset()
    with pytest.raises(NotLeaderOrFollowerError):
        partition.append_records_to_leader(batch())
    with pytest.raises(NotLeaderOrFollowerError):
        partition.update_follower_fetch_state(3, 0, 0)


def test_follower_append_hw_and_truncation(make_partition: Any) -> None:
    leader, _ = make_partition(node=1)
    leader.make_leader(leader_state(epoch=1), record_epoch_start=True)
    leader.append_records_to_leader(batch(3))
    leader.append_records_to_leader(batch(2))
    data = leader.log.read(0, 1 << 20).read_bytes()

    follower, _ = make_partition(node=2)
    follower.make_follower(PartitionState((1, 2, 3), 1, 1, (1, 2, 3), 0))
    follower.append_records_as_follower(data, 1)
    assert follower.log.log_end_offset == 5
    assert follower.log.read(0, 1 << 20).read_bytes() == data  # byte-identical
    assert follower.log.leader_epoch_cache.entries() == [(1, 0)]
    follower.update_follower_high_watermark(3, 0)
    assert follower.high_watermark == 3
    follower.update_follower_high_watermark(9, 0)  # never above the own LEO
    assert follower.high_watermark == 5
    with pytest.raises(NotLeaderOrFollowerError):
        follower.append_records_as_follower(batch(1, base_offset=5, epoch=1), 0)  # stale epoch
    follower.truncate_to(3)
    assert follower.log.log_end_offset == 3
    assert follower.high_watermark == 3


def test_truncation_offset_kip_279(make_partition: Any) -> None:
    """The follower has epochs 1 [0,3) and 2 [3,6); the leader answers per epoch."""
    follower, _ = make_partition(node=2)
    follower.make_follower(PartitionState((1, 2), 1, 3, (1, 2), 0))
    follower.append_records_as_follower(batch(3, base_offset=0, epoch=1))
    follower.append_records_as_follower(batch(3, base_offset=3, epoch=2))
    # the leader knows epoch 2 up to 4: truncate to 4, done
    assert truncation_offset(follower, 2, 4) == (4, True)
    # the leader's epoch 2 goes further than ours: our LEO
    assert truncation_offset(follower, 2, 9) == (6, True)
    # the leader answers epoch 1 ending at 2 (it never had our epoch 2): min(2, our end of 1)
    assert truncation_offset(follower, 1, 2) == (2, True)
    # undefined: the high watermark
    assert truncation_offset(follower, -1, -1) == (0, True)
    # the leader answers an epoch we never had (0 < ours; KIP-279): our end of the largest
    # epoch below it, then ask again
    follower2, _ = make_partition(node=3, name="t-0c")
    follower2.make_follower(PartitionState((1, 3), 1, 5, (1, 3), 0))
    follower2.append_records_as_follower(batch(2, base_offset=0, epoch=1))
    follower2.append_records_as_follower(batch(2, base_offset=2, epoch=3))
    assert truncation_offset(follower2, 2, 10) == (2, False)


def test_delayed_produce_completion_timeout_and_not_enough_replicas(
    make_partition: Any, clock: Clock
) -> None:
    """``check_enough_replicas_reach_offset`` through a minimal replica manager stand-in,
    woken by the ProducePurgatory on each HW move."""
    from kafkacore.server.replica_manager import ReplicaManager

    partition, _ = make_partition(min_isr=2)
    partition.make_leader(leader_state(isr=(1, 2, 3)), record_epoch_start=True)
    purgatory = ProducePurgatory()
    partition.on_high_watermark = purgatory.wake
    rm: Any = ReplicaManager.__new__(ReplicaManager)
    rm.get_partition = lambda tp: partition

    info = partition.append_records_to_leader(batch(2), required_acks=-1)
    required = info.last_offset + 1
    assert ReplicaManager.check_enough_replicas_reach_offset(rm, TP, required) is None

    async def scenario() -> list[Any]:
        results: list[Any] = []

        async def waiter() -> None:
            while (
                code := ReplicaManager.check_enough_replicas_reach_offset(rm, TP, required)
            ) is None:
                if not await purgatory.wait([TP], 2.0):
                    results.append("timeout")
                    return
            results.append(code)

        task = asyncio.create_task(waiter())
        await asyncio.sleep(0.01)
        partition.update_follower_fetch_state(2, 2, 0)
        await asyncio.sleep(0.01)
        assert not task.done()
        partition.update_follower_fetch_state(3, 2, 0)
        await asyncio.wait_for(task, 1)
        # a timeout: nothing moves
        assert not await purgatory.wait([TP], 0.05)
        return results

    assert asyncio.run(scenario()) == [ErrorCode.NONE]

    # no longer leader
    partition.make_follower(PartitionState((1, 2, 3), 2, 2, (2, 3), 2))
    assert (
        ReplicaManager.check_enough_replicas_reach_offset(rm, TP, 3)
        == ErrorCode.NOT_LEADER_OR_FOLLOWER
    )


def test_not_enough_replicas_after_append(make_partition: Any, clock: Clock) -> None:
    from kafkacore.server.replica_manager import ReplicaManager

    partition, alter = make_partition(min_isr=2)
    partition.make_leader(PartitionState((1, 2, 3), 1, 1, (1, 2), 0), record_epoch_start=True)
    rm: Any = ReplicaManager.__new__(ReplicaManager)
    rm.get_partition = lambda tp: partition
    partition.append_records_to_leader(batch(1), required_acks=-1)
    partition.update_follower_fetch_state(2, 1, 0)
    assert partition.high_watermark == 1
    # the ISR shrank to {1, 2} -> {1}... while HW already reached: min(2, RF 3) = 2 > 1
    clock.now += LAG + 1
    partition.append_records_to_leader(batch(1), required_acks=-1)
    assert partition.maybe_shrink_isr(lag_ms=LAG)
    alter.answer(0, (1, (1,), 1))
    assert ReplicaManager.check_enough_replicas_reach_offset(rm, TP, 1) == (
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    )
