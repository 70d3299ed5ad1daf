"""The partition balancer (a kafkacore extension; off by default): the controller keeps
racks, replica and preferred-leader counts and disk usage within tolerances by itself,
moving replicas with the reassignment machinery Kafka already has (throttled), a few
moves at a time, with a cool-down - so a new broker fills up and a decommissioned one
drains without an operator running ``kafka-reassign-partitions``.

* :mod:`~kafkacore.balancer.model` - the cluster picture it plans from, and its moves;
* :mod:`~kafkacore.balancer.config` - ``auto.partition.balance.*`` as one value;
* :mod:`~kafkacore.balancer.planner` - the goals and the plan (pure, deterministic);
* :mod:`~kafkacore.balancer.executor` - which moves start, finish or are abandoned, the
  throttles they need, and the state a new controller takes over (pure);
* :mod:`~kafkacore.balancer.driver` - the controller-agnostic loop over a
  :class:`~kafkacore.balancer.driver.BalancerController`, the small interface a controller
  implements (the ZooKeeper-mode controller now; the KRaft ``QuorumController`` through
  the same interface).

``kafkacore balancer status|plan|pause|resume`` (:mod:`kafkacore.admin.balancer`) builds
the same picture through an admin client and asks the same planner.
"""

from __future__ import annotations

from kafkacore.balancer.config import BALANCER_GOALS, BalancerConfig
from kafkacore.balancer.model import (
    LEADER_MOVE,
    REPLICA_MOVE,
    BrokerModel,
    ClusterModel,
    LogDirModel,
    Move,
    PartitionModel,
)
from kafkacore.balancer.planner import Plan, Skew, Spread, movable, plan, skew

__all__ = [
    "BALANCER_GOALS",
    "LEADER_MOVE",
    "REPLICA_MOVE",
    "BalancerConfig",
    "BrokerModel",
    "ClusterModel",
    "LogDirModel",
    "Move",
    "PartitionModel",
    "Plan",
    "Skew",
    "Spread",
    "movable",
    "plan",
    "skew",
]
