"""What the balancer plans from: an immutable picture of the cluster (brokers with their
racks and log directories, partitions with their replicas, leader, ISR and size), and the
moves it plans (reassignments, as Kafka's ``kafka-reassign-partitions`` would run them).

The picture is assembled by whoever runs the balancer - the ZooKeeper-mode controller
from its context and the brokers' DescribeLogDirs answers, ``kafkacore balancer plan``
from a client's Metadata, DescribeConfigs and DescribeLogDirs - so that both plan from
the same facts with the same code (:func:`~kafkacore.balancer.planner.plan`).

Thread-safety: immutable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafkacore.log import TopicPartition

__all__ = [
    "LEADER_MOVE",
    "REPLICA_MOVE",
    "BrokerModel",
    "ClusterModel",
    "LogDirModel",
    "Move",
    "PartitionModel",
]

REPLICA_MOVE = "replica"
"""A move that copies data: replicas added to (and removed from) a partition."""
LEADER_MOVE = "leader"
"""A move of the preferred leader only: the same replicas in another order, then a
preferred election (no data copied)."""


@dataclass(frozen=True, slots=True)
class LogDirModel:
    """One log directory of a broker (DescribeLogDirs' ``DescribeLogDirsResult``): its
    absolute path, the volume's total and usable bytes (-1: unknown), whether it is
    cordoned (KIP-1066: it takes no new replicas), and the partitions in it with their
    size on disk."""

    path: str
    total_bytes: int = -1
    usable_bytes: int = -1
    cordoned: bool = False
    sizes: Mapping[TopicPartition, int] = field(default_factory=dict)

    @property
    def partition_bytes(self) -> int:
        return sum(self.sizes.values())

    @property
    def usage_percent(self) -> float | None:
        """The volume's fill level (used / total), ``None`` when unknown."""
        if self.total_bytes <= 0 or self.usable_bytes < 0:
            return None
        return 100.0 * (self.total_bytes - self.usable_bytes) / self.total_bytes


@dataclass(frozen=True, slots=True)
class BrokerModel:
    """A broker: its rack, whether it is alive (registered, not shutting down), whether it
    is being decommissioned (drained), and its log directories (empty: not sampled)."""

    id: int
    rack: str | None = None
    alive: bool = True
    decommissioned: bool = False
    log_dirs: tuple[LogDirModel, ...] = ()

    @property
    def cordoned(self) -> bool:
        """Every log directory is cordoned (KIP-1066): the broker takes no new replica."""
        return bool(self.log_dirs) and all(d.cordoned for d in self.log_dirs)

    @property
    def eligible(self) -> bool:
        """May hold replicas the balancer places: alive and not being drained."""
        return self.alive and not self.decommissioned

    @property
    def accepts_new_replicas(self) -> bool:
        return self.eligible and not self.cordoned

    def dir_of(self, tp: TopicPartition) -> LogDirModel | None:
        for d in self.log_dirs:
            if tp in d.sizes:
                return d
        return None


@dataclass(frozen=True, slots=True)
class PartitionModel:
    """A partition: its replicas in preference order (the first is the preferred
    leader), its leader and ISR, its size (the leader's log, bytes; 0 when unknown), the
    topic's ``min.insync.replicas`` and whether a reassignment of it is in progress."""

    tp: TopicPartition
    replicas: tuple[int, ...]
    leader: int = -1
    isr: tuple[int, ...] = ()
    size: int = 0
    min_isr: int = 1
    reassigning: bool = False

    @property
    def preferred_leader(self) -> int:
        return self.replicas[0] if self.replicas else -1

    @property
    def fully_in_sync(self) -> bool:
        return set(self.replicas) <= set(self.isr)


@dataclass(frozen=True, slots=True)
class ClusterModel:
    """Brokers by id and partitions by topic partition."""

    brokers: Mapping[int, BrokerModel]
    partitions: Mapping[TopicPartition, PartitionModel]

    @classmethod
    def of(
        cls, brokers: Iterable[BrokerModel], partitions: Iterable[PartitionModel]
    ) -> ClusterModel:
        return cls({b.id: b for b in brokers}, {p.tp: p for p in partitions})


@dataclass(frozen=True, slots=True)
class Move:
    """One planned reassignment: the partition's replicas before and after (the order is
    the preference order), what kind of move it is (:data:`REPLICA_MOVE` or
    :data:`LEADER_MOVE`), the goal that asked for it and the bytes it copies (the
    partition's size for each replica added)."""

    tp: TopicPartition
    before: tuple[int, ...]
    after: tuple[int, ...]
    kind: str
    goal: str
    bytes: int = 0

    @property
    def sources(self) -> tuple[int, ...]:
        """The replicas removed."""
        return tuple(b for b in self.before if b not in self.after)

    @property
    def destinations(self) -> tuple[int, ...]:
        """The replicas added."""
        return tuple(b for b in self.after if b not in self.before)

    def as_dict(self) -> dict[str, object]:
        """As JSON (the balancer's saved state, ``kafkacore balancer plan --json``)."""
        return {
            "topic": self.tp.topic,
            "partition": self.tp.partition,
            "before": list(self.before),
            "after": list(self.after),
            "kind": self.kind,
            "goal": self.goal,
            "bytes": self.bytes,
        }

    def describe(self) -> str:
        """One line: ``t-0 [1, 2, 3] -> [4, 2, 3] (replica count)``."""
        what = "leader" if self.kind == LEADER_MOVE else f"{self.bytes} bytes"
        return (
            f"{self.tp.topic}-{self.tp.partition} {list(self.before)} -> {list(self.after)} "
            f"({self.goal}, {what})"
        )
