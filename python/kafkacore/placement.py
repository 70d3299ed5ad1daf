"""Replica placement for new topics and partitions: Kafka's
``AdminUtils.assignReplicasToBrokers`` (``server-common``), rack-unaware and rack-aware,
and ``AdminZkClient.createPartitions``' default assignment of added partitions.

On the ground floor because everyone places replicas: the topic handlers (CreateTopics,
CreatePartitions), the coordinators creating their internal topics, the ZooKeeper admin
recipes, the controller and ``kafkacore reassign-partitions --generate``. Pure functions
(the randomness comes from the caller's ``rng``): thread-safe."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafkacore.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
)

__all__ = [
    "AdminOperationError",
    "BrokerMetadata",
    "InvalidPartitionsError",
    "InvalidReplicationFactorError",
    "assign_replicas_for_new_partitions",
    "assign_replicas_to_brokers",
    "rack_alternated_broker_list",
]


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
