"""Pure controller algorithms: leader election strategies (Kafka's
``PartitionLeaderElectionAlgorithms`` and ``Election``). Replica placement for new
topics and partitions (Kafka's ``AdminUtils``) is :mod:`kafkacore.placement`.

Nothing here touches ZooKeeper, the network or the clock; the controller passes in
what it knows (assignment, ISR, live replicas, shutting-down brokers)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

__all__ = [
    "LEADER_DURING_DELETE",
    "NO_LEADER",
    "RECOVERED",
    "RECOVERING",
    "LeaderAndIsr",
    "controlled_shutdown_leader",
    "elect_controlled_shutdown",
    "elect_offline",
    "elect_preferred",
    "elect_reassign",
    "offline_partition_leader",
    "preferred_replica_leader",
    "reassign_partition_leader",
]

NO_LEADER = -1
LEADER_DURING_DELETE = -2
RECOVERED = 0
RECOVERING = 1


@dataclass(frozen=True)
class LeaderAndIsr:
    """The controller's in-memory view of ``…/state`` plus its zkVersion (= partition epoch)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    partition_epoch: int = 0
    leader_recovery_state: int = RECOVERED

    def new_leader(self, leader: int) -> LeaderAndIsr:
        """Kafka's ``newLeader``: new leader, same ISR, leader epoch + 1."""
        return self.new_leader_and_isr(leader, self.isr)

    def new_leader_and_isr(self, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        """Kafka's ``newLeaderAndIsr``: leader epoch + 1 (recovery state kept)."""
        return replace(self, leader=leader, isr=tuple(isr), leader_epoch=self.leader_epoch + 1)

    def new_recovering_leader_and_isr(self, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        """Kafka's ``newRecoveringLeaderAndIsr`` (unclean election, KIP-704)."""
        return replace(
            self,
            leader=leader,
            isr=tuple(isr),
            leader_epoch=self.leader_epoch + 1,
            leader_recovery_state=RECOVERING,
        )

    def new_epoch(self) -> LeaderAndIsr:
        """Kafka's ``newEpoch``: same leader and ISR, leader epoch + 1."""
        return replace(self, leader_epoch=self.leader_epoch + 1)


# --- leader election (PartitionLeaderElectionAlgorithms) -------------------------------


def offline_partition_leader(
    assignment: Sequence[int],
    isr: Collection[int],
    live_replicas: Collection[int],
    unclean: bool,
) -> int | None:
    for r in assignment:
        if r in live_replicas and r in isr:
            return r
    if unclean:
        for r in assignment:
            if r in live_replicas:
                return r
    return None


def reassign_partition_leader(
    target: Sequence[int], isr: Collection[int], live_replicas: Collection[int]
) -> int | None:
    for r in target:
        if r in live_replicas and r in isr:
            return r
    return None


def preferred_replica_leader(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int]
) -> int | None:
    if assignment and assignment[0] in live_replicas and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_leader(
    assignment: Sequence[int],
    isr: Collection[int],
    live_or_shutting_down: Collection[int],
    shutting_down: Collection[int],
) -> int | None:
    for r in assignment:
        if r in live_or_shutting_down and r in isr and r not in shutting_down:
            return r
    return None


# --- elections producing a new state (Election.scala) ----------------------------------


def elect_offline(
    state: LeaderAndIsr,
    assignment: Sequence[int],
    live: Collection[int],
    unclean: bool,
    *,
    leader_recovery_supported: bool = True,
) -> LeaderAndIsr | None:
    """OfflinePartition strategy. ``live`` = brokers for which ``isReplicaOnline`` holds
    (registered and not shutting down). Returns None when no leader can be elected."""
    live_replicas = [r for r in assignment if r in live]
    leader = offline_partition_leader(assignment, state.isr, live_replicas, unclean)
    if leader is None:
        return None
    if leader in state.isr:
        return state.new_leader_and_isr(leader, [r for r in state.isr if r in live])
    if leader_recovery_supported:
        return state.new_recovering_leader_and_isr(leader, [leader])
    return state.new_leader_and_isr(leader, [leader])


def elect_reassign(
    state: LeaderAndIsr, target: Sequence[int], live: Collection[int]
) -> LeaderAndIsr | None:
    live_replicas = [r for r in target if r in live]
    leader = reassign_partition_leader(target, state.isr, live_replicas)
    return None if leader is None else state.new_leader(leader)


def elect_preferred(
    state: LeaderAndIsr, assignment: Sequence[int], live: Collection[int]
) -> LeaderAndIsr | None:
    live_replicas = [r for r in assignment if r in live]
    leader = preferred_replica_leader(assignment, state.isr, live_replicas)
    return None if leader is None else state.new_leader(leader)


def elect_controlled_shutdown(
    state: LeaderAndIsr,
    assignment: Sequence[int],
    live_or_shutting_down: Collection[int],
    shutting_down: Collection[int],
) -> LeaderAndIsr | None:
    candidates = [r for r in assignment if r in live_or_shutting_down]
    leader = controlled_shutdown_leader(assignment, state.isr, candidates, shutting_down)
    if leader is None:
        return None
    return state.new_leader_and_isr(leader, [r for r in state.isr if r not in shutting_down])
