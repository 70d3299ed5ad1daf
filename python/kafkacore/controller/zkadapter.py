"""The controller's thin adapter over :class:`kafkacore.zk.client.KafkaZkClient`:
converts between ZooKeeper's ``LeaderIsrState`` (+ zkVersion) and the controller's
:class:`LeaderAndIsr`, and passes the controller-epoch fence on every write."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from kafkacore.controller.algorithms import LeaderAndIsr
from kafkacore.controller.context import ControllerContext
from kafkacore.log import TopicPartition
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import LeaderIsrState

__all__ = [
    "create_partition_states",
    "from_zk",
    "read_states",
    "to_zk",
    "update_partition_state",
]


def to_zk(s: LeaderAndIsr) -> LeaderIsrState:
    return LeaderIsrState(
        leader=s.leader,
        leader_epoch=s.leader_epoch,
        isr=tuple(s.isr),
        controller_epoch=s.controller_epoch,
        leader_recovery_state=s.leader_recovery_state,
    )


def from_zk(state: LeaderIsrState, zk_version: int) -> LeaderAndIsr:
    return LeaderAndIsr(
        leader=state.leader,
        leader_epoch=state.leader_epoch,
        isr=tuple(state.isr),
        controller_epoch=state.controller_epoch,
        partition_epoch=zk_version,
        leader_recovery_state=state.leader_recovery_state,
    )


async def read_states(
    zk: KafkaZkClient, tps: Iterable[TopicPartition]
) -> dict[TopicPartition, LeaderAndIsr]:
    out: dict[TopicPartition, LeaderAndIsr] = {}
    wanted: dict[str, set[int]] = {}
    for tp in tps:
        wanted.setdefault(tp.topic, set()).add(tp.partition)
    for topic, parts in wanted.items():
        states = await zk.get_partition_states(topic)
        for p, (state, version) in states.items():
            if p in parts:
                out[TopicPartition(topic, p)] = from_zk(state, version)
    return out


async def create_partition_states(
    zk: KafkaZkClient, topic: str, states: dict[int, LeaderAndIsr], ctx: ControllerContext
) -> dict[int, int]:
    result: dict[int, int] = await zk.create_partition_states(
        topic,
        {p: to_zk(s) for p, s in states.items()},
        controller_epoch_zk_version=ctx.epoch_zk_version,
    )
    return result


async def update_partition_state(
    zk: KafkaZkClient, tp: TopicPartition, s: LeaderAndIsr, ctx: ControllerContext
) -> int | None:
    """CAS on ``s.partition_epoch``; the new zkVersion, or None on BADVERSION."""
    version: int | None = await zk.update_partition_state(
        tp.topic,
        tp.partition,
        to_zk(s),
        expected_version=s.partition_epoch,
        controller_epoch_zk_version=ctx.epoch_zk_version,
    )
    return version


def with_epoch(s: LeaderAndIsr, version: int) -> LeaderAndIsr:
    return replace(s, partition_epoch=version)
