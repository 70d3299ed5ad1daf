"""Pure controller algorithms: leader election strategies (Kafka's
``PartitionLeaderElectionAlgorithms`` and ``Election``) and replica assignment for new
topics and partitions (Kafka's ``AdminUtils.assignReplicasToBrokers``).

Nothing here touches ZooKeeper, the network or the clock; the controller passes in
what it knows (assignment, ISR, live replicas, shutting-down brokers)."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from kafkacore.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
)

__all__ = [
    "LEADER_DURING_DELETE",
    "NO_LEADER",
    "RECOVERED",
    "RECOVERING",
    "AdminOperationError",
    "BrokerMetadata",
    "InvalidPartitionsError",
    "InvalidReplicationFactorError",
    "LeaderAndIsr",
    "assign_replicas_for_new_partitions",
    "assign_replicas_to_brokers",
    "controlled_shutdown_leader",
    "elect_controlled_shutdown",
    "elect_offline",
    "elect_preferred",
    "elect_reassign",
    "offline_partition_leader",
    "preferred_replica_leader",
    "rack_alternated_broker_list",
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


# --- replica assignment (AdminUtils) ------------------------------------------------------


@dataclass(frozen=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """Racks sorted by name, brokers of each rack sorted by id, taken one per rack in turn."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    racks = sorted(by_rack)
    iters = {rack: iter(sorted(by_rack[rack])) for rack in racks}
    result: list[int] = []
    i = 0
    while len(result) < len(broker_racks):
        nxt = next(iters[racks[i]], None)
        if nxt is not None:
            result.append(nxt)
        i = (i + 1) % len(racks)
    return result


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata | int],
    n_partitions: int,
    replication_factor: int,
    *,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """Kafka's ``AdminUtils.assignReplicasToBrokers``. ``brokers`` is used in the order
    given (Kafka's admin path passes them sorted by id). With ``fixed_start_index >= 0``
    both the start index and the initial replica shift are that value (as in Kafka);
    otherwise both are drawn from ``rng``."""
    metas = [b if isinstance(b, BrokerMetadata) else BrokerMetadata(b) for b in brokers]
    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(metas):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(metas)}."
        )
    rng = rng or random.Random()
    if all(m.rack is None for m in metas):
        return _rack_unaware(
            n_partitions,
            replication_factor,
            [m.id for m in metas],
            fixed_start_index,
            start_partition_id,
            rng,
        )
    if any(m.rack is None for m in metas):
        raise AdminOperationError(
            "Not all brokers have rack information for replica rack aware assignment."
        )
    racks = {m.id: m.rack for m in metas if m.rack is not None}
    return _rack_aware(
        n_partitions, replication_factor, racks, fixed_start_index, start_partition_id, rng
    )


def _rack_unaware(
    n_partitions: int,
    rf: int,
    broker_list: list[int],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random,
) -> dict[int, list[int]]:
    n = len(broker_list)
    start = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    pid = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start) % n
        replicas = [broker_list[first]]
        for j in range(rf - 1):
            replicas.append(broker_list[_replica_index(first, shift, j, n)])
        out[pid] = replicas
        pid += 1
    return out


def _rack_aware(
    n_partitions: int,
    rf: int,
    broker_racks: Mapping[int, str],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random,
) -> dict[int, list[int]]:
    num_racks = len(set(broker_racks.values()))
    arranged = rack_alternated_broker_list(broker_racks)
    n = len(arranged)
    start = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    pid = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start) % n
        leader = arranged[first]
        replicas = [leader]
        racks_with = {broker_racks[leader]}
        brokers_with = {leader}
        k = 0
        for _ in range(rf - 1):
            while True:
                broker = arranged[_replica_index(first, shift * num_racks, k, n)]
                rack = broker_racks[broker]
                k += 1
                if (rack not in racks_with or len(racks_with) == num_racks) and (
                    broker not in brokers_with or len(brokers_with) == n
                ):
                    replicas.append(broker)
                    racks_with.add(rack)
                    brokers_with.add(broker)
                    break
        out[pid] = replicas
        pid += 1
    return out


def assign_replicas_for_new_partitions(
    brokers: Sequence[BrokerMetadata | int],
    existing: Mapping[int, Sequence[int]],
    num_partitions: int,
    *,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """Kafka's ``AdminZkClient.createPartitions`` default assignment: the partitions
    ``len(existing) .. num_partitions-1``, with the start index taken from partition 0's
    first replica (the index of the first broker whose id >= it) and the existing
    replication factor. ``brokers`` should be sorted by id."""
    metas = [b if isinstance(b, BrokerMetadata) else BrokerMetadata(b) for b in brokers]
    if 0 not in existing:
        raise AdminOperationError(
            "the topic does not have partition with id 0, it should never happen"
        )
    to_add = num_partitions - len(existing)
    if to_add <= 0:
        raise InvalidPartitionsError(
            f"The number of partitions for a topic can only be increased. Topic currently "
            f"has {len(existing)} partitions, {num_partitions} would not be an increase."
        )
    head = existing[0][0]
    start = next((i for i, m in enumerate(metas) if m.id >= head), 0)
    return assign_replicas_to_brokers(
        metas,
        to_add,
        len(existing[0]),
        fixed_start_index=start,
        start_partition_id=len(existing),
        rng=rng,
    )
