"""Partition and replica state machines (Kafka's ``PartitionStateMachine`` and
``ReplicaStateMachine``, cluster.md §2.4).

They change the controller's context, write ZooKeeper (every write fenced on the
controller epoch's zkVersion, partition states compare-and-set on their zkVersion) and
add requests to the controller's batch; the caller sends the batch."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace

from kafkacore.controller import zkadapter as zka
from kafkacore.controller.algorithms import (
    NO_LEADER,
    LeaderAndIsr,
    elect_controlled_shutdown,
    elect_offline,
    elect_preferred,
    elect_reassign,
)
from kafkacore.controller.channel import ControllerBrokerRequestBatch
from kafkacore.controller.context import ControllerContext, PartitionState, ReplicaState
from kafkacore.log import TopicPartition
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.errors import ControllerMovedError

__all__ = [
    "CONTROLLED_SHUTDOWN",
    "OFFLINE",
    "PREFERRED",
    "REASSIGN",
    "PartitionStateMachine",
    "ReplicaStateMachine",
    "StateChangeFailed",
]

log = logging.getLogger(__name__)

OFFLINE = "offline"
REASSIGN = "reassign"
PREFERRED = "preferred"
CONTROLLED_SHUTDOWN = "controlled_shutdown"

MAX_CAS_RETRIES = 20


class StateChangeFailed(Exception):
    pass


class PartitionStateMachine:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: KafkaZkClient,
        batch: ControllerBrokerRequestBatch,
        unclean_enabled: Callable[[str], Awaitable[bool]],
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.batch = batch
        self.unclean_enabled = unclean_enabled

    def state(self, tp: TopicPartition) -> PartitionState:
        return self.ctx.partition_states.get(tp, PartitionState.NON_EXISTENT)

    def initialize(self) -> None:
        """Initial states from the context: no state -> New, leader alive -> Online,
        otherwise Offline."""
        for tp in self.ctx.all_partitions():
            s = self.ctx.leader_isr.get(tp)
            if s is None:
                self.ctx.partition_states[tp] = PartitionState.NEW
            elif self.ctx.is_replica_online(s.leader, include_shutting_down=True, tp=tp):
                self.ctx.partition_states[tp] = PartitionState.ONLINE
            else:
                self.ctx.partition_states[tp] = PartitionState.OFFLINE

    async def trigger_online_partition_state_change(self, topic: str | None = None) -> None:
        tps = [
            tp
            for tp, st in self.ctx.partition_states.items()
            if st in (PartitionState.NEW, PartitionState.OFFLINE)
            and not self.ctx.is_topic_queued_for_deletion(tp.topic)
            and (topic is None or tp.topic == topic)
        ]
        if tps:
            await self.handle_state_changes(tps, PartitionState.ONLINE, OFFLINE)

    async def handle_state_changes(
        self,
        partitions: Iterable[TopicPartition],
        target: PartitionState,
        strategy: str | None = None,
        *,
        allow_unclean: bool = False,
    ) -> dict[TopicPartition, LeaderAndIsr | Exception]:
        """Returns, for partitions that went through an election, the new state or the
        reason it failed."""
        tps = list(partitions)
        results: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        if target is PartitionState.NEW:
            for tp in tps:
                if self.state(tp) is PartitionState.NON_EXISTENT:
                    self.ctx.partition_states[tp] = PartitionState.NEW
        elif target is PartitionState.ONLINE:
            new = [tp for tp in tps if self.state(tp) is PartitionState.NEW]
            elect = [
                tp
                for tp in tps
                if self.state(tp) in (PartitionState.OFFLINE, PartitionState.ONLINE)
            ]
            if new:
                await self._initialize_leader_and_isr(new)
            if elect:
                results = await self.elect_leaders(
                    elect, strategy or OFFLINE, allow_unclean=allow_unclean
                )
                for tp, r in results.items():
                    if isinstance(r, LeaderAndIsr):
                        self.ctx.partition_states[tp] = PartitionState.ONLINE
        elif target is PartitionState.OFFLINE:
            for tp in tps:
                if self.state(tp) is not PartitionState.NON_EXISTENT or tp in self.ctx.leader_isr:
                    self.ctx.partition_states[tp] = PartitionState.OFFLINE
        elif target is PartitionState.NON_EXISTENT:
            for tp in tps:
                self.ctx.partition_states[tp] = PartitionState.NON_EXISTENT
        self.batch.send()  # each state change sends its own batch, as Kafka's does
        return results

    async def _initialize_leader_and_isr(self, tps: list[TopicPartition]) -> None:
        by_topic: dict[str, dict[int, LeaderAndIsr]] = {}
        for tp in tps:
            live = [r for r in self.ctx.replicas(tp) if self.ctx.is_replica_online(r, tp=tp)]
            if not live:
                log.error(
                    "controller: no live replica of %s among %s, it stays New",
                    tp,
                    self.ctx.replicas(tp),
                )
                continue
            by_topic.setdefault(tp.topic, {})[tp.partition] = LeaderAndIsr(
                leader=live[0], leader_epoch=0, isr=tuple(live), controller_epoch=self.ctx.epoch
            )
        for topic, states in by_topic.items():
            try:
                versions = await zka.create_partition_states(self.zk, topic, states, self.ctx)
            except ControllerMovedError:
                raise
            except Exception as exc:
                log.error("controller: creating the state of %s failed: %s", topic, exc)
                continue
            for p, s in states.items():
                tp = TopicPartition(topic, p)
                s = replace(s, partition_epoch=versions.get(p, 0))
                self.ctx.leader_isr[tp] = s
                self.batch.add_leader_and_isr(s.isr, tp, s, is_new=True)
                self.ctx.partition_states[tp] = PartitionState.ONLINE

    async def elect_leaders(
        self, tps: list[TopicPartition], strategy: str, *, allow_unclean: bool = False
    ) -> dict[TopicPartition, LeaderAndIsr | Exception]:
        results: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        remaining = list(tps)
        for _ in range(MAX_CAS_RETRIES):
            if not remaining:
                break
            retry: list[TopicPartition] = []
            current = await zka.read_states(self.zk, remaining)
            for tp in remaining:
                cur = current.get(tp)
                if cur is None:
                    results[tp] = StateChangeFailed(
                        f"{tp} has no leader and isr state in ZooKeeper"
                    )
                    continue
                if cur.controller_epoch > self.ctx.epoch:
                    results[tp] = StateChangeFailed(
                        f"{tp}: leader and isr written by another controller "
                        f"(epoch {cur.controller_epoch} > {self.ctx.epoch})"
                    )
                    continue
                new = await self._elect_one(tp, cur, strategy, allow_unclean)
                if new is None:
                    results[tp] = StateChangeFailed(f"no eligible leader for {tp} ({strategy})")
                    continue
                new = replace(new, controller_epoch=self.ctx.epoch)
                version = await zka.update_partition_state(self.zk, tp, new, self.ctx)
                if version is None:
                    retry.append(tp)
                    continue
                new = replace(new, partition_epoch=version)
                self.ctx.leader_isr[tp] = new
                if strategy == OFFLINE:
                    recipients = [r for r in self.ctx.replicas(tp) if self.ctx.is_replica_online(r)]
                else:
                    recipients = [
                        r for r in self.ctx.replicas(tp) if self.ctx.is_replica_online(r, True)
                    ]
                self.batch.add_leader_and_isr(recipients, tp, new, is_new=False)
                results[tp] = new
            remaining = retry
        for tp in remaining:
            results[tp] = StateChangeFailed(f"{tp}: too many zkVersion conflicts")
        return results

    async def _elect_one(
        self, tp: TopicPartition, cur: LeaderAndIsr, strategy: str, allow_unclean: bool
    ) -> LeaderAndIsr | None:
        ctx = self.ctx
        assignment = ctx.replicas(tp)
        # a replica in a failed log directory is not live for this partition
        live = ctx.live_brokers_for(tp, ctx.live_broker_ids)
        if strategy == OFFLINE:
            unclean = allow_unclean
            if not unclean and not any(r in cur.isr and r in live for r in assignment):
                unclean = await self.unclean_enabled(tp.topic)
            return elect_offline(cur, assignment, live, unclean)
        if strategy == REASSIGN:
            a = ctx.full_assignment(tp)
            target = [r for r in (a.replicas if a else []) if not a or r not in a.removing]
            return elect_reassign(cur, target, live)
        if strategy == PREFERRED:
            return elect_preferred(cur, assignment, live)
        if strategy == CONTROLLED_SHUTDOWN:
            return elect_controlled_shutdown(
                cur,
                assignment,
                ctx.live_brokers_for(tp, ctx.live_or_shutting_down_broker_ids),
                ctx.shutting_down,
            )
        raise ValueError(strategy)


class ReplicaStateMachine:
    def __init__(
        self, ctx: ControllerContext, zk: KafkaZkClient, batch: ControllerBrokerRequestBatch
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.batch = batch

    def state(self, tp: TopicPartition, r: int) -> ReplicaState:
        return self.ctx.replica_states.get((tp, r), ReplicaState.NON_EXISTENT)

    def initialize(self) -> None:
        for tp in self.ctx.all_partitions():
            for r in self.ctx.replicas(tp):
                online = self.ctx.is_replica_online(r, include_shutting_down=True)
                self.ctx.replica_states[(tp, r)] = (
                    ReplicaState.ONLINE if online else ReplicaState.DELETION_INELIGIBLE
                )

    async def startup(self) -> None:
        """Kafka's ``ReplicaStateMachine.startup``: online replicas -> Online (sends
        LeaderAndIsr), the others (initially DeletionIneligible) -> Offline."""
        self.initialize()
        online = [k for k, s in self.ctx.replica_states.items() if s is ReplicaState.ONLINE]
        offline = [
            k for k, s in self.ctx.replica_states.items() if s is ReplicaState.DELETION_INELIGIBLE
        ]
        await self.handle_state_changes(online, ReplicaState.ONLINE)
        await self.handle_state_changes(offline, ReplicaState.OFFLINE)

    async def handle_state_changes(
        self, replicas: Iterable[tuple[TopicPartition, int]], target: ReplicaState
    ) -> None:
        items = list(replicas)
        if not items:
            return
        ctx = self.ctx
        if target is ReplicaState.NEW:
            for tp, r in items:
                s = ctx.leader_isr.get(tp)
                if s is not None and s.leader != r:
                    self.batch.add_leader_and_isr([r], tp, s, is_new=True)
                ctx.replica_states[(tp, r)] = ReplicaState.NEW
        elif target is ReplicaState.ONLINE:
            for tp, r in items:
                s = ctx.leader_isr.get(tp)
                if self.state(tp, r) is not ReplicaState.NEW and s is not None:
                    self.batch.add_leader_and_isr([r], tp, s, is_new=False)
                a = ctx.full_assignment(tp)
                if a is not None and r not in a.replicas:
                    a.replicas.append(r)
                ctx.replica_states[(tp, r)] = ReplicaState.ONLINE
        elif target is ReplicaState.OFFLINE:
            by_replica: dict[int, list[TopicPartition]] = {}
            for tp, r in items:
                self.batch.add_stop_replica([r], tp, delete=False)
                by_replica.setdefault(r, []).append(tp)
            for r, tps in by_replica.items():
                with_state = [tp for tp in tps if tp in ctx.leader_isr]
                updated = await self.remove_replica_from_isr(r, with_state)
                for tp, s in updated.items():
                    if not ctx.is_topic_queued_for_deletion(tp.topic):
                        recipients = [
                            x for x in ctx.replicas(tp) if x != r and ctx.is_replica_online(x, True)
                        ]
                        self.batch.add_leader_and_isr(recipients, tp, s, is_new=False)
                for tp in tps:
                    if tp not in ctx.leader_isr:
                        self.batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, [tp])
                    ctx.replica_states[(tp, r)] = ReplicaState.OFFLINE
        elif target is ReplicaState.DELETION_STARTED:
            for tp, r in items:
                self.batch.add_stop_replica([r], tp, delete=True)
                ctx.replica_states[(tp, r)] = ReplicaState.DELETION_STARTED
        elif target in (ReplicaState.DELETION_INELIGIBLE, ReplicaState.DELETION_SUCCESSFUL):
            for key in items:
                ctx.replica_states[key] = target
        elif target is ReplicaState.NON_EXISTENT:
            for tp, r in items:
                a = ctx.full_assignment(tp)
                if a is not None and r in a.replicas:
                    a.replicas.remove(r)
                ctx.replica_states.pop((tp, r), None)
        self.batch.send()

    async def remove_replica_from_isr(
        self, replica: int, tps: list[TopicPartition]
    ) -> dict[TopicPartition, LeaderAndIsr]:
        """Kafka's ``removeReplicasFromIsr``: the replica leaves the ISR (an ISR of one is
        kept: last replica standing); if it led, leader = -1; leader epoch + 1."""
        ctx = self.ctx
        done: dict[TopicPartition, LeaderAndIsr] = {}
        remaining = list(tps)
        for _ in range(MAX_CAS_RETRIES):
            if not remaining:
                break
            retry = []
            current = await zka.read_states(self.zk, remaining)
            for tp in remaining:
                cur = current.get(tp)
                if cur is None:
                    continue
                if cur.controller_epoch > ctx.epoch:
                    log.error("controller: %s written by a newer controller, not shrinking", tp)
                    continue
                if replica not in cur.isr and cur.leader != replica:
                    ctx.leader_isr[tp] = cur
                    continue
                leader = NO_LEADER if cur.leader == replica else cur.leader
                isr = cur.isr if len(cur.isr) == 1 else tuple(x for x in cur.isr if x != replica)
                new = replace(cur.new_leader_and_isr(leader, isr), controller_epoch=ctx.epoch)
                version = await zka.update_partition_state(self.zk, tp, new, ctx)
                if version is None:
                    retry.append(tp)
                    continue
                new = replace(new, partition_epoch=version)
                ctx.leader_isr[tp] = new
                done[tp] = new
            remaining = retry
        return done
