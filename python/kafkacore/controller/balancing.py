"""The partition balancer in the ZooKeeper-mode controller: :class:`ZkBalancerPort` is
the :class:`~kafkacore.balancer.driver.BalancerController` of a
:class:`~kafkacore.controller.controller.KafkaController`, and :func:`balancer_timer`
the task that samples the brokers' log directories and queues a
:class:`~kafkacore.controller.events.BalancerTick` every
``auto.partition.balance.interval.ms`` while the controller is active.

* the picture: the controller's context (live brokers and racks, assignments - a
  partition being reassigned with its target replicas -, leader and ISR) with the sizes
  the brokers reported and each topic's ``min.insync.replicas``
  (``/config/topics/<t>``, else the cluster's default, else the static config);
* moves: the controller's own AlterPartitionReassignments path
  (``_process_api_reassignment``: KIP-455 phases, ZooKeeper first, resumed by the next
  controller); elections: its ElectLeaders path (PREFERRED);
* throttles: ``/config/topics/<t>`` and ``/config/brokers/<id>`` with change
  notifications, as ``kafka-configs`` writes them (the brokers apply them live);
* state: ``/kafkacore/balancer``, written fenced by the controller epoch.

The balancer's configuration is read each tick from the static config and the cluster's
dynamic default (``/config/brokers/<default>``), so ``kafkacore balancer pause`` and a
decommission take effect on whichever broker is the controller.

Thread-safety: everything runs on the controller's event loop; the port is only called
from its event task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kafkacore.balancer import BalancerConfig, BrokerModel, ClusterModel, Move, PartitionModel
from kafkacore.balancer.driver import LogDirSamples, sample_log_dirs
from kafkacore.balancer.executor import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    Throttles,
)
from kafkacore.controller.events import BalancerTick
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode

if TYPE_CHECKING:
    from kafkacore.controller.controller import KafkaController

__all__ = ["ZkBalancerPort", "balancer_config", "balancer_timer"]

log = logging.getLogger(__name__)

DEFAULT_ENTITY = "<default>"


async def balancer_config(controller: KafkaController) -> BalancerConfig:
    """``auto.partition.balance.*`` in force: the static config under the cluster's
    dynamic default (invalid dynamic entries dropped, as brokers drop them)."""
    try:
        dynamic = await controller.zk.get_entity_config("brokers", DEFAULT_ENTITY)
    except Exception:
        log.exception("balancer: cannot read the dynamic broker defaults")
        dynamic = {}
    config = controller.config.with_dynamic(cluster_default=dynamic, validate=False)
    return BalancerConfig.from_broker_config(config)


async def balancer_timer(controller: KafkaController) -> None:
    """While the controller is active: every ``auto.partition.balance.interval.ms`` read
    the balancer's config, sample the brokers' log directories when it is on, and queue
    a :class:`BalancerTick` (the decision happens in the event task)."""
    while True:
        config = await balancer_config(controller)
        samples: LogDirSamples = {}
        if config.enabled:
            endpoints = {
                b: reg_endpoint
                for b, reg in controller.ctx.live_brokers.items()
                if (reg_endpoint := _endpoint(reg, controller.listener)) is not None
            }
            samples = await sample_log_dirs(endpoints, controller.client_factory)
        controller.post(BalancerTick(config, samples))
        await asyncio.sleep(config.interval_ms / 1000)


def _endpoint(registration: object, listener: str) -> tuple[str, int] | None:
    for e in getattr(registration, "endpoints", ()):
        if e.listener == listener:
            return str(e.host), int(e.port)
    return None


class ZkBalancerPort:
    """:class:`~kafkacore.balancer.driver.BalancerController` over a ZooKeeper-mode
    :class:`KafkaController` (see the module documentation)."""

    def __init__(self, controller: KafkaController) -> None:
        self._controller = controller

    async def cluster_model(self, log_dirs: LogDirSamples) -> ClusterModel:
        c = self._controller
        ctx = c.ctx
        live = ctx.live_broker_ids
        brokers = {
            b: BrokerModel(b, reg.rack, b in live, False, log_dirs.get(b, ()))
            for b, reg in ctx.live_brokers.items()
        }
        sizes: dict[TopicPartition, int] = {}
        for dirs in log_dirs.values():
            for d in dirs:
                for tp, size in d.sizes.items():
                    sizes[tp] = max(size, sizes.get(tp, 0))
        min_isr = await self._min_isr(sorted(ctx.all_topics))
        partitions = []
        for tp in ctx.all_partitions():
            a = ctx.full_assignment(tp)
            if a is None or ctx.is_topic_queued_for_deletion(tp.topic):
                continue
            target = tuple(r for r in a.replicas if r not in a.removing)
            for r in target:
                if r not in brokers:
                    brokers[r] = BrokerModel(r, None, alive=False)  # a dead broker's replica
            state = ctx.leader_isr.get(tp)
            partitions.append(
                PartitionModel(
                    tp,
                    target,
                    state.leader if state is not None else -1,
                    tuple(state.isr) if state is not None else (),
                    sizes.get(tp, 0),
                    min_isr.get(tp.topic, 1),
                    a.is_being_reassigned,
                )
            )
        return ClusterModel.of(brokers.values(), partitions)

    async def _min_isr(self, topics: Sequence[str]) -> dict[str, int]:
        c = self._controller
        try:
            default_dynamic = await c.zk.get_entity_config("brokers", DEFAULT_ENTITY)
        except Exception:
            default_dynamic = {}
        default = int(default_dynamic.get("min.insync.replicas", c.config.min_insync_replicas))

        async def one(topic: str) -> tuple[str, int]:
            try:
                configs = await c.zk.get_entity_config("topics", topic)
                return topic, int(configs.get("min.insync.replicas", default))
            except Exception:
                return topic, default

        return dict(await asyncio.gather(*(one(t) for t in topics)))

    async def reassign(self, moves: Sequence[Move]) -> Mapping[TopicPartition, int]:
        results = await self._controller.reassign_in_event_task(
            {m.tp: list(m.after) for m in moves}
        )
        return {tp: code for tp, code in results.items()}

    async def elect_preferred(self, partitions: Sequence[TopicPartition]) -> None:
        results = await self._controller.elect_in_event_task(list(partitions))
        failed = {
            str(tp): code
            for tp, code in results.items()
            if code not in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED)
        }
        if failed:
            log.info("balancer: preferred elections not done yet: %s", failed)

    async def apply_throttles(self, before: Throttles, after: Throttles) -> None:
        c = self._controller
        zk = c.zk
        for topic in sorted(set(before.topics) | set(after.topics)):
            wanted = after.topics.get(topic)
            if wanted == before.topics.get(topic) or topic not in c.ctx.all_topics:
                continue
            configs = await zk.get_entity_config("topics", topic)
            for key, value in zip(
                (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS),
                wanted or ("", ""),
                strict=True,
            ):
                if value:
                    configs[key] = value
                else:
                    configs.pop(key, None)
            await zk.set_entity_config("topics", topic, configs)
        for broker in sorted(before.brokers | after.brokers):
            keep = broker in after.brokers
            if keep and broker in before.brokers and before.rate == after.rate:
                continue
            configs = await zk.get_entity_config("brokers", str(broker))
            for key in (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE):
                if keep:
                    configs[key] = str(after.rate)
                else:
                    configs.pop(key, None)
            await zk.set_entity_config("brokers", str(broker), configs)

    async def load_state(self) -> bytes | None:
        return await self._controller.zk.get_balancer_state()

    async def save_state(self, data: bytes) -> None:
        c = self._controller
        await c.zk.set_balancer_state(data, controller_epoch_zk_version=c.ctx.epoch_zk_version)


async def stop_timer(task: asyncio.Task[None] | None) -> None:
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
