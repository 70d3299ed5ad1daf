"""The balancer's planner: from a :class:`~kafkacore.balancer.model.ClusterModel`, the
moves (reassignments) that bring the cluster within its goals, and the skew before and
after them. Pure and deterministic: the controller and ``kafkacore balancer plan`` get the
same plan from the same picture.

Goals, in the default priority order (``auto.partition.balance.goals``); each is
optimised in turn on a simulated copy of the cluster, and a move a later goal proposes is
taken only if no earlier goal gets worse (Cruise Control's rule):

* **decommission** (always first when brokers are being drained): every replica on a
  decommissioned broker moves to an eligible one;
* **rack.awareness**: a partition's replicas span ``min(replication factor, racks)``
  racks (Kafka's rack-aware placement, kept as brokers come and go); off when a broker
  has no rack;
* **replica.count**: each broker holds the mean number of replicas within
  ``replica.imbalance.percentage``;
* **leader.count**: each broker is the preferred leader (first replica) of the mean
  number of partitions within ``leader.imbalance.percentage``, by reordering replicas
  (no data moves; a preferred election follows);
* **disk.usage**: the bytes of each broker's replicas within ``disk.imbalance.percentage``
  of the mean (or one mean replica size, whichever is wider: brokers hold whole
  replicas); when no single move is allowed (a broker at the edge of the count bands),
  a swap - a larger replica one way, a smaller one back - keeps the counts;
* **log.dir.usage**: the bytes in each log directory within
  ``log.dir.imbalance.percentage`` of the mean over the cluster's directories (a replica
  leaves an over-full directory for another broker: kafkacore, like Kafka's ZooKeeper
  mode, has no move between the directories of one broker);
* **disk.high.water.mark**: no log directory's volume fuller than
  ``disk.high.water.mark.percentage``.

Destinations are the eligible brokers (alive, not decommissioned) whose log directories
are not all cordoned (KIP-1066); a replica lands in the destination's directory Kafka's
``LogManager.nextLogDirs`` would choose (fewest partitions, cordoned ones skipped). Each
partition moves at most once per plan. Only partitions that are safe to move are planned
(:func:`movable`): no reassignment in progress, every replica in the ISR (a replica on a
dead decommissioned broker aside) and the ISR at least ``min.insync.replicas`` - a
reassignment only removes replicas once the new ones are in the ISR, so the partition
then never drops below ``min.insync.replicas`` by the move.

Thread-safety: pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafkacore.balancer.config import BalancerConfig
from kafkacore.balancer.model import (
    LEADER_MOVE,
    REPLICA_MOVE,
    BrokerModel,
    ClusterModel,
    Move,
    PartitionModel,
)
from kafkacore.log import TopicPartition

__all__ = [
    "DECOMMISSION",
    "Plan",
    "Skew",
    "Spread",
    "movable",
    "plan",
    "skew",
]

DECOMMISSION = "decommission"
RACK = "rack.awareness"
REPLICAS = "replica.count"
LEADERS = "leader.count"
DISK = "disk.usage"
LOG_DIR = "log.dir.usage"
HIGH_WATER_MARK = "disk.high.water.mark"

_MAX_STEPS = 100_000  # a guard: every step strictly improves a goal, so it ends long before


@dataclass(frozen=True, slots=True)
class Spread:
    """One metric over the eligible brokers (or log directories): its smallest, largest
    and mean value and the band the tolerance allows."""

    min: float
    max: float
    mean: float
    lower: float
    upper: float

    @property
    def balanced(self) -> bool:
        return self.min >= self.lower and self.max <= self.upper

    def as_dict(self) -> dict[str, float | bool]:
        return {
            "min": self.min,
            "max": self.max,
            "mean": round(self.mean, 3),
            "lower": self.lower,
            "upper": self.upper,
            "balanced": self.balanced,
        }


@dataclass(frozen=True, slots=True)
class Skew:
    """How far the cluster is from its goals: the spread of replica counts, preferred
    leader counts, bytes per broker and bytes per log directory (``None``: sizes not
    known), the fullest volume (percent used), the partitions whose replicas span fewer
    racks than they could, and the replicas still on decommissioned brokers."""

    replicas: Spread
    leaders: Spread
    disk_bytes: Spread | None
    log_dir_bytes: Spread | None
    max_disk_usage_percent: float | None
    rack_violations: int
    on_decommissioned: int

    def as_dict(self) -> dict[str, object]:
        return {
            "replicas": self.replicas.as_dict(),
            "leaders": self.leaders.as_dict(),
            "disk_bytes": None if self.disk_bytes is None else self.disk_bytes.as_dict(),
            "log_dir_bytes": None if self.log_dir_bytes is None else self.log_dir_bytes.as_dict(),
            "max_disk_usage_percent": self.max_disk_usage_percent,
            "rack_violations": self.rack_violations,
            "on_decommissioned": self.on_decommissioned,
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """The moves, in the order they should run (by goal priority), the skew now and
    after them, and the goals the moves cannot meet (with why)."""

    moves: tuple[Move, ...]
    before: Skew
    after: Skew
    unmet: tuple[str, ...] = ()

    @property
    def bytes(self) -> int:
        return sum(m.bytes for m in self.moves)


def movable(p: PartitionModel, brokers: dict[int, BrokerModel] | None = None) -> bool:
    """Whether the balancer may move ``p`` now: no reassignment in progress, a leader,
    every replica in the ISR - except replicas on dead brokers being decommissioned, which
    a move removes - and the ISR at least ``min.insync.replicas``."""
    if p.reassigning or not p.replicas or p.leader < 0:
        return False
    isr = set(p.isr)
    if len(isr) < p.min_isr:
        return False
    for r in p.replicas:
        if r in isr:
            continue
        b = (brokers or {}).get(r)
        if b is None or b.alive or not b.decommissioned:
            return False
    return True


def _band(
    mean: float, percentage: int, integral: bool, granule: float = 0.0
) -> tuple[float, float]:
    """The tolerance band around ``mean``: ``mean * (1 ± percentage/100)``, widened to the
    nearest integers for counts (a count cannot be closer to a fractional mean) and, for
    bytes, to at least one ``granule`` (the mean replica size) either side: a broker holds
    whole replicas, so a finer band could never be met."""
    t = percentage / 100
    lower, upper = mean * (1 - t), mean * (1 + t)
    if integral:
        return float(min(math.floor(lower), math.floor(mean))), float(
            max(math.ceil(upper), math.ceil(mean))
        )
    return min(lower, mean - granule), max(upper, mean + granule)


@dataclass
class _Sim:
    """The cluster as the plan so far leaves it (mutable; the planner's alone). Counts and
    bytes per broker and per log directory are kept up to date by :meth:`apply`."""

    config: BalancerConfig
    brokers: dict[int, BrokerModel]
    partitions: dict[TopicPartition, PartitionModel]
    replicas: dict[TopicPartition, list[int]]
    eligible: list[int] = field(default_factory=list)
    destinations: list[int] = field(default_factory=list)
    rc: dict[int, int] = field(default_factory=dict)  # replicas per broker
    lc: dict[int, int] = field(default_factory=dict)  # preferred leaderships per broker
    bb: dict[int, int] = field(default_factory=dict)  # bytes of replicas per broker
    # (broker, log dir) -> bytes of replicas / partitions / volume bytes used and total
    dir_bytes: dict[tuple[int, str], int] = field(default_factory=dict)
    dir_count: dict[tuple[int, str], int] = field(default_factory=dict)
    dir_used: dict[tuple[int, str], int] = field(default_factory=dict)
    dir_total: dict[tuple[int, str], int] = field(default_factory=dict)
    dir_of: dict[tuple[TopicPartition, int], str] = field(default_factory=dict)
    moves: dict[TopicPartition, Move] = field(default_factory=dict)
    known_sizes: bool = False
    usable_racks: bool = False
    eligible_racks: int = 0

    @classmethod
    def of(cls, model: ClusterModel, config: BalancerConfig) -> _Sim:
        brokers = {
            b.id: _with_decommission(b, config.decommissioned) for b in model.brokers.values()
        }
        sim = cls(
            config,
            brokers,
            dict(model.partitions),
            {tp: list(p.replicas) for tp, p in model.partitions.items()},
        )
        sim.eligible = sorted(b.id for b in brokers.values() if b.eligible)
        sim.destinations = sorted(b.id for b in brokers.values() if b.accepts_new_replicas)
        sim.known_sizes = bool(sim.eligible) and all(brokers[b].log_dirs for b in sim.eligible)
        sim.usable_racks = bool(sim.eligible) and all(
            brokers[b].rack is not None for b in sim.eligible
        )
        sim.eligible_racks = len({brokers[b].rack for b in sim.eligible})
        for b in sim.eligible:
            sim.rc[b] = sim.lc[b] = sim.bb[b] = 0
        for tp, replicas in sim.replicas.items():
            size = sim.partitions[tp].size
            for r in replicas:
                sim.rc[r] = sim.rc.get(r, 0) + 1
                sim.bb[r] = sim.bb.get(r, 0) + size
            if replicas:
                sim.lc[replicas[0]] = sim.lc.get(replicas[0], 0) + 1
        for broker in brokers.values():
            for d in broker.log_dirs:
                key = (broker.id, d.path)
                sim.dir_bytes[key] = d.partition_bytes
                sim.dir_count[key] = len(d.sizes)
                sim.dir_total[key] = d.total_bytes
                sim.dir_used[key] = (
                    d.total_bytes - d.usable_bytes if d.total_bytes > 0 else d.partition_bytes
                )
                for tp in d.sizes:
                    sim.dir_of[(tp, broker.id)] = d.path
        return sim

    # -- facts -------------------------------------------------------------------------

    def sizes_known(self) -> bool:
        return self.known_sizes

    def rack(self, broker: int) -> str | None:
        b = self.brokers.get(broker)
        return None if b is None else b.rack

    def racks_usable(self) -> bool:
        return self.usable_racks

    def wanted_racks(self, tp: TopicPartition) -> int:
        return min(len(self.replicas[tp]), self.eligible_racks)

    def distinct_racks(self, replicas: Iterable[int]) -> int:
        return len({self.rack(b) for b in replicas})

    def replica_count(self, broker: int) -> int:
        return self.rc.get(broker, 0)

    def leader_count(self, broker: int) -> int:
        return self.lc.get(broker, 0)

    def size(self, tp: TopicPartition) -> int:
        return self.partitions[tp].size

    def broker_bytes(self, broker: int) -> int:
        return self.bb.get(broker, 0)

    def next_log_dir(self, broker: int) -> str | None:
        """Kafka's ``nextLogDirs`` head on ``broker``: the non-cordoned directory with
        the fewest partitions (all cordoned: the first)."""
        dirs = self.brokers[broker].log_dirs
        if not dirs:
            return None
        open_dirs = [d for d in dirs if not d.cordoned] or [dirs[0]]
        return min(open_dirs, key=lambda d: self.dir_count.get((broker, d.path), 0)).path

    def can_move(self, tp: TopicPartition) -> bool:
        return tp not in self.moves and movable(self.partitions[tp], self.brokers)

    # -- bands -------------------------------------------------------------------------

    def replica_band(self) -> tuple[float, float]:
        total = sum(self.rc.values())
        n = len(self.eligible)
        return _band(total / n if n else 0.0, self.config.replica_imbalance_percentage, True)

    def leader_band(self) -> tuple[float, float]:
        n = len(self.eligible)
        mean = len(self.replicas) / n if n else 0.0
        return _band(mean, self.config.leader_imbalance_percentage, True)

    def mean_replica_size(self) -> float:
        replicas = sum(self.rc.values())
        return sum(self.bb.values()) / replicas if replicas else 0.0

    def bytes_band(self) -> tuple[float, float]:
        n = len(self.eligible)
        total = sum(self.bb.values())
        mean = total / n if n else 0.0
        return _band(mean, self.config.disk_imbalance_percentage, False, self.mean_replica_size())

    def eligible_dirs(self) -> list[tuple[int, str]]:
        return [(b, d.path) for b in self.eligible for d in self.brokers[b].log_dirs]

    def dir_band(self) -> tuple[float, float]:
        dirs = self.eligible_dirs()
        total = sum(self.dir_bytes.get(k, 0) for k in dirs)
        mean = total / len(dirs) if dirs else 0.0
        return _band(
            mean, self.config.log_dir_imbalance_percentage, False, self.mean_replica_size()
        )

    def dir_usage(self, key: tuple[int, str]) -> float | None:
        total = self.dir_total.get(key, -1)
        if total <= 0:
            return None
        return 100.0 * self.dir_used[key] / total

    # -- changes -----------------------------------------------------------------------

    def apply(self, tp: TopicPartition, after: list[int], goal: str) -> None:
        """Record the move of ``tp`` to ``after`` (merged with one planned before)."""
        before = self.replicas[tp]
        size = self.size(tp)
        for removed in [b for b in before if b not in after]:
            self.rc[removed] -= 1
            self.bb[removed] -= size
            path = self.dir_of.pop((tp, removed), None)
            if path is not None:
                key = (removed, path)
                self.dir_bytes[key] = self.dir_bytes.get(key, 0) - size
                self.dir_count[key] = self.dir_count.get(key, 0) - 1
                self.dir_used[key] = self.dir_used.get(key, 0) - size
        for added in [b for b in after if b not in before]:
            self.rc[added] = self.rc.get(added, 0) + 1
            self.bb[added] = self.bb.get(added, 0) + size
            path = self.next_log_dir(added)
            if path is not None:
                key = (added, path)
                self.dir_of[(tp, added)] = path
                self.dir_bytes[key] = self.dir_bytes.get(key, 0) + size
                self.dir_count[key] = self.dir_count.get(key, 0) + 1
                self.dir_used[key] = self.dir_used.get(key, 0) + size
        if before and after and before[0] != after[0]:
            self.lc[before[0]] -= 1
            self.lc[after[0]] = self.lc.get(after[0], 0) + 1
        self.replicas[tp] = list(after)
        original = tuple(self.partitions[tp].replicas)
        new = tuple(after)
        if new == original:
            self.moves.pop(tp, None)
            return
        copies = sum(1 for b in new if b not in original)
        kind = REPLICA_MOVE if copies else LEADER_MOVE
        previous = self.moves.get(tp)
        self.moves[tp] = Move(
            tp, original, new, kind, previous.goal if previous else goal, size * copies
        )


def _with_decommission(b: BrokerModel, decommissioned: frozenset[int]) -> BrokerModel:
    if b.id in decommissioned and not b.decommissioned:
        return BrokerModel(b.id, b.rack, b.alive, True, b.log_dirs)
    return b


def _replace(replicas: list[int], source: int, destination: int) -> list[int]:
    """``replicas`` with ``source`` replaced by ``destination`` in its place (so a moved
    preferred leader's leadership goes with it)."""
    return [destination if r == source else r for r in replicas]


# -- acceptance: a later goal's move may not make an earlier goal worse -----------------


def _rack_ok(sim: _Sim, tp: TopicPartition, after: list[int]) -> bool:
    if not sim.racks_usable():
        return True
    before = sim.distinct_racks(sim.replicas[tp])
    return sim.distinct_racks(after) >= min(before, sim.wanted_racks(tp))


def _counts_ok(sim: _Sim, tp: TopicPartition, after: list[int]) -> bool:
    """Neither a broker losing a replica nor one gaining one leaves the replica band
    (unless it was already outside it on that side and does not get further)."""
    lower, upper = sim.replica_band()
    before = sim.replicas[tp]
    for b in before:
        if b not in after and sim.brokers[b].eligible and sim.replica_count(b) - 1 < lower:
            return False
    return all(not (b not in before and sim.replica_count(b) + 1 > upper) for b in after)


def _leaders_ok(sim: _Sim, tp: TopicPartition, after: list[int]) -> bool:
    before = sim.replicas[tp]
    if not before or not after or before[0] == after[0]:
        return True
    lower, upper = sim.leader_band()
    old, new = before[0], after[0]
    if sim.brokers[old].eligible and sim.leader_count(old) - 1 < lower:
        return False
    return sim.leader_count(new) + 1 <= upper


def _disk_ok(sim: _Sim, tp: TopicPartition, after: list[int]) -> bool:
    if not sim.sizes_known():
        return True
    lower, upper = sim.bytes_band()
    size = sim.size(tp)
    before = sim.replicas[tp]
    for b in before:
        if b not in after and sim.brokers[b].eligible and sim.broker_bytes(b) - size < lower:
            return False
    return all(not (b not in before and sim.broker_bytes(b) + size > upper) for b in after)


def _dir_ok(sim: _Sim, tp: TopicPartition, after: list[int]) -> bool:
    if not sim.sizes_known():
        return True
    lower, upper = sim.dir_band()
    size = sim.size(tp)
    before = sim.replicas[tp]
    for b in before:
        path = sim.dir_of.get((tp, b))
        leaving = b not in after and path is not None and sim.brokers[b].eligible
        if leaving and sim.dir_bytes.get((b, path or ""), 0) - size < lower:
            return False
    for b in after:
        if b in before:
            continue
        path = sim.next_log_dir(b)
        if path is not None and sim.dir_bytes.get((b, path), 0) + size > upper:
            return False
    return True


def _hwm_ok(sim: _Sim, tp: TopicPartition, after: list[int]) -> bool:
    mark = sim.config.disk_high_water_mark_percentage
    size = sim.size(tp)
    for b in after:
        if b in sim.replicas[tp]:
            continue
        path = sim.next_log_dir(b)
        if path is None:
            continue
        key = (b, path)
        total = sim.dir_total.get(key, -1)
        if total > 0 and 100.0 * (sim.dir_used[key] + size) / total > mark:
            return False
    return True


_ACCEPTS: dict[str, Callable[[_Sim, TopicPartition, list[int]], bool]] = {
    RACK: _rack_ok,
    REPLICAS: _counts_ok,
    LEADERS: _leaders_ok,
    DISK: _disk_ok,
    LOG_DIR: _dir_ok,
    HIGH_WATER_MARK: _hwm_ok,
}


def _accepted(sim: _Sim, earlier: list[str], tp: TopicPartition, after: list[int]) -> bool:
    return all(_ACCEPTS[goal](sim, tp, after) for goal in earlier)


# -- the goals ---------------------------------------------------------------------------


def _decommission(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    drained = sorted(b.id for b in sim.brokers.values() if b.decommissioned)
    for tp in sorted(sim.replicas):
        on = [b for b in sim.replicas[tp] if b in drained]
        if not on:
            continue
        if not sim.can_move(tp):
            unmet.append(f"{DECOMMISSION}: {tp} is not safe to move now")
            continue
        after = list(sim.replicas[tp])
        for source in on:
            rack_taken = {sim.rack(b) for b in after if b != source}
            candidates = [d for d in sim.destinations if d not in after]
            if not candidates:
                unmet.append(f"{DECOMMISSION}: no broker can take {tp} from {source}")
                break
            destination = min(
                candidates,
                key=lambda d: (
                    sim.rack(d) in rack_taken,
                    sim.replica_count(d),
                    sim.broker_bytes(d),
                    d,
                ),
            )
            after = _replace(after, source, destination)
        else:
            sim.apply(tp, after, DECOMMISSION)


def _rack_awareness(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    if not sim.racks_usable():
        return
    for tp in sorted(sim.replicas):
        replicas = sim.replicas[tp]
        if sim.distinct_racks(replicas) >= sim.wanted_racks(tp):
            continue
        if not sim.can_move(tp):
            unmet.append(f"{RACK}: {tp} is not safe to move now")
            continue
        after = list(replicas)
        while sim.distinct_racks(after) < sim.wanted_racks(tp):
            by_rack: dict[str | None, list[int]] = {}
            for b in after:
                by_rack.setdefault(sim.rack(b), []).append(b)
            crowded = [b for rack, bs in by_rack.items() if len(bs) > 1 for b in bs]
            missing = [d for d in sim.destinations if sim.rack(d) not in by_rack]
            if not crowded or not missing:
                break
            # the crowded replica on the fullest broker, not the preferred leader if avoidable
            source = max(crowded, key=lambda b: (b != after[0], sim.replica_count(b), b))
            destination = min(missing, key=lambda d: (sim.replica_count(d), d))
            after = _replace(after, source, destination)
        if _accepted(sim, earlier, tp, after):
            sim.apply(tp, after, RACK)


_SortKey = tuple[float | str, ...]


def _any(_tp: TopicPartition) -> bool:
    return True


def _pick(
    sim: _Sim,
    earlier: list[str],
    source: int,
    destination: int,
    order: Callable[[TopicPartition], _SortKey],
    fits: Callable[[TopicPartition], bool] = _any,
) -> TopicPartition | None:
    """A partition on ``source`` and not on ``destination`` that may move and whose move
    every earlier goal accepts, the first by ``order``."""
    best: TopicPartition | None = None
    best_key: _SortKey | None = None
    for tp, replicas in sim.replicas.items():
        if source not in replicas or destination in replicas or not sim.can_move(tp):
            continue
        if not fits(tp):
            continue
        key = order(tp)
        if best_key is not None and key >= best_key:
            continue
        if _accepted(sim, earlier, tp, _replace(replicas, source, destination)):
            best, best_key = tp, key
    return best


def _replica_count(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    for _ in range(_MAX_STEPS):
        lower, upper = sim.replica_band()
        counts = {b: sim.replica_count(b) for b in sim.eligible}
        if not counts:
            return
        sources = sorted(counts, key=lambda b: (-counts[b], b))
        destinations = sorted(
            (d for d in sim.destinations if d in counts), key=lambda d: (counts[d], d)
        )
        moved = False
        for source in sources:
            for destination in destinations:
                if counts[source] - counts[destination] < 2:
                    break
                if counts[source] <= upper and counts[destination] >= lower:
                    continue

                def order(tp: TopicPartition, source: int = source) -> _SortKey:
                    # a follower rather than the preferred leader (whose leadership would
                    # go along), then the least data
                    return (sim.replicas[tp][0] == source, sim.size(tp), tp.topic, tp[1])

                tp = _pick(sim, earlier, source, destination, order)
                if tp is not None:
                    sim.apply(tp, _replace(sim.replicas[tp], source, destination), REPLICAS)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            if counts[sources[0]] > upper or min(counts.values()) < lower:
                unmet.append(f"{REPLICAS}: no safe move narrows the spread further")
            return


def _leader_count(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    eligible = set(sim.eligible)
    for _ in range(_MAX_STEPS):
        lower, upper = sim.leader_band()
        counts = {b: sim.leader_count(b) for b in sim.eligible}
        if not counts:
            return
        moved = False
        for source in sorted(counts, key=lambda b: (-counts[b], b)):
            if counts[source] <= upper and min(counts.values()) >= lower:
                break
            best: tuple[int, int, TopicPartition] | None = None
            for tp, replicas in sorted(sim.replicas.items()):
                if not replicas or replicas[0] != source:
                    continue
                # a partition already planned is reordered in its planned move
                if tp not in sim.moves and not sim.can_move(tp):
                    continue
                partition = sim.partitions[tp]
                # the new preferred leader must be in the ISR when the election runs: now,
                # or - a replica the planned move adds - once the move completes
                in_sync = set(partition.isr) | (set(replicas) - set(partition.replicas))
                for other in replicas[1:]:
                    if other not in eligible or other not in in_sync:
                        continue
                    if counts[source] - counts[other] < 2:
                        continue
                    if counts[source] <= upper and counts[other] >= lower:
                        continue
                    key = (counts[other], other, tp)
                    if best is None or key < best:
                        after = [other, *(r for r in replicas if r != other)]
                        if _accepted(sim, earlier, tp, after):
                            best = key
            if best is not None:
                _c, other, tp = best
                replicas = sim.replicas[tp]
                sim.apply(tp, [other, *(r for r in replicas if r != other)], LEADERS)
                moved = True
                break
        if not moved:
            if max(counts.values()) > upper or min(counts.values()) < lower:
                unmet.append(f"{LEADERS}: no safe reorder narrows the spread further")
            return


def _disk_usage(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    if not sim.sizes_known():
        return
    for _ in range(_MAX_STEPS):
        lower, upper = sim.bytes_band()
        used = {b: sim.broker_bytes(b) for b in sim.eligible}
        sources = sorted(used, key=lambda b: (-used[b], b))
        destinations = sorted((d for d in sim.destinations if d in used), key=lambda d: used[d])
        moved = False
        for source in sources:
            for destination in destinations:
                gap = used[source] - used[destination]
                if gap <= 0:
                    break
                if used[source] <= upper and used[destination] >= lower:
                    continue

                def closest(tp: TopicPartition, half: float = gap / 2) -> _SortKey:
                    return (abs(sim.size(tp) - half), tp.topic, tp[1])

                def fits(tp: TopicPartition, gap: int = gap) -> bool:
                    return 0 < sim.size(tp) < gap

                tp = _pick(sim, earlier, source, destination, closest, fits)
                if tp is not None:
                    sim.apply(tp, _replace(sim.replicas[tp], source, destination), DISK)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            moved = _disk_swap(sim, earlier, sources, destinations, used, (lower, upper))
        if not moved:
            if used and (max(used.values()) > upper or min(used.values()) < lower):
                unmet.append(f"{DISK}: no safe move narrows the spread further")
            return


def _disk_swap(
    sim: _Sim,
    earlier: list[str],
    sources: list[int],
    destinations: list[int],
    used: dict[int, int],
    band: tuple[float, float],
) -> bool:
    """When no single move may narrow the bytes (a broker at the edge of the count bands
    cannot give a replica away), swap: a larger replica from ``source`` to
    ``destination`` and a smaller one back, so replica counts stay as they were. The
    pair whose size difference is closest to half the gap; applied if every earlier goal
    accepts it. Whether one was applied."""
    lower, upper = band
    for source in sources:
        for destination in destinations:
            gap = used[source] - used[destination]
            if gap <= 0:
                break
            if used[source] <= upper and used[destination] >= lower:
                continue
            here = [
                tp
                for tp, r in sim.replicas.items()
                if source in r and destination not in r and sim.can_move(tp)
            ]
            there = [
                tp
                for tp, r in sim.replicas.items()
                if destination in r and source not in r and sim.can_move(tp)
            ]
            pairs = sorted(
                (
                    (abs(sim.size(big) - sim.size(small) - gap / 2), big, small)
                    for big in here
                    for small in there
                    if 0 < sim.size(big) - sim.size(small) < gap
                ),
                key=lambda c: (c[0], c[1].topic, c[1].partition, c[2].topic, c[2].partition),
            )
            for _, big, small in pairs:
                big_after = _replace(sim.replicas[big], source, destination)
                small_after = _replace(sim.replicas[small], destination, source)
                if _swap_accepted(sim, earlier, (big, big_after), (small, small_after)):
                    sim.apply(big, big_after, DISK)
                    sim.apply(small, small_after, DISK)
                    return True
    return False


def _swap_accepted(
    sim: _Sim,
    earlier: list[str],
    first: tuple[TopicPartition, list[int]],
    second: tuple[TopicPartition, list[int]],
) -> bool:
    """Whether the two moves of a swap, together, leave every earlier goal no worse:
    replica counts do not change; leader counts may not leave their band (or go further
    out); the other goals judge each move alone."""
    for goal in earlier:
        if goal == REPLICAS:
            continue
        if goal == LEADERS:
            change: dict[int, int] = {}
            for tp, after in (first, second):
                before = sim.replicas[tp]
                if before and after and before[0] != after[0]:
                    change[before[0]] = change.get(before[0], 0) - 1
                    change[after[0]] = change.get(after[0], 0) + 1
            low, high = sim.leader_band()
            for b, d in change.items():
                now = sim.leader_count(b) + d
                if d < 0 and sim.brokers[b].eligible and now < low:
                    return False
                if d > 0 and now > high:
                    return False
            continue
        if not all(_ACCEPTS[goal](sim, tp, after) for tp, after in (first, second)):
            return False
    return True


def _log_dir_usage(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    if not sim.sizes_known():
        return
    for _ in range(_MAX_STEPS):
        _lower, upper = sim.dir_band()
        full = sorted(
            (k for k in sim.eligible_dirs() if sim.dir_bytes.get(k, 0) > upper),
            key=lambda k: (-sim.dir_bytes.get(k, 0), k),
        )
        moved = False
        for broker, path in full:
            here = sim.dir_bytes.get((broker, path), 0)
            for destination in sorted(
                (d for d in sim.destinations if d != broker),
                key=lambda d: (sim.dir_bytes.get((d, sim.next_log_dir(d) or ""), 0), d),
            ):
                target_dir = sim.next_log_dir(destination)
                there = sim.dir_bytes.get((destination, target_dir or ""), 0)
                gap = here - there
                if gap <= 0:
                    break

                def closest(tp: TopicPartition, half: float = gap / 2) -> _SortKey:
                    return (abs(sim.size(tp) - half), tp.topic, tp[1])

                def in_dir(
                    tp: TopicPartition, gap: int = gap, b: int = broker, d: str = path
                ) -> bool:
                    return sim.dir_of.get((tp, b)) == d and 0 < sim.size(tp) < gap

                tp = _pick(sim, earlier, broker, destination, closest, in_dir)
                if tp is not None:
                    sim.apply(tp, _replace(sim.replicas[tp], broker, destination), LOG_DIR)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            if full:
                unmet.append(f"{LOG_DIR}: no safe move narrows the spread further")
            return


def _high_water_mark(sim: _Sim, earlier: list[str], unmet: list[str]) -> None:
    mark = sim.config.disk_high_water_mark_percentage
    for _ in range(_MAX_STEPS):
        over = sorted(
            (k for k in sim.eligible_dirs() if (sim.dir_usage(k) or 0.0) > mark),
            key=lambda k: (-(sim.dir_usage(k) or 0.0), k),
        )
        if not over:
            return
        moved = False
        for broker, path in over:
            for destination in sorted(
                (d for d in sim.destinations if d != broker),
                key=lambda d: (sim.dir_usage((d, sim.next_log_dir(d) or "")) or 100.0, d),
            ):

                def largest(tp: TopicPartition) -> _SortKey:
                    return (-sim.size(tp), tp.topic, tp[1])

                def in_dir(tp: TopicPartition, b: int = broker, d: str = path) -> bool:
                    return sim.dir_of.get((tp, b)) == d and sim.size(tp) > 0

                tp = _pick(sim, [*earlier, HIGH_WATER_MARK], broker, destination, largest, in_dir)
                if tp is not None:
                    sim.apply(tp, _replace(sim.replicas[tp], broker, destination), HIGH_WATER_MARK)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            unmet.append(f"{HIGH_WATER_MARK}: {len(over)} log dir(s) stay above {mark}%")
            return


_GOALS: dict[str, Callable[[_Sim, list[str], list[str]], None]] = {
    RACK: _rack_awareness,
    REPLICAS: _replica_count,
    LEADERS: _leader_count,
    DISK: _disk_usage,
    LOG_DIR: _log_dir_usage,
    HIGH_WATER_MARK: _high_water_mark,
}


def plan(model: ClusterModel, config: BalancerConfig) -> Plan:
    """The moves that bring ``model`` within ``config``'s goals (see the module
    documentation), with the skew before and after."""
    sim = _Sim.of(model, config)
    before = _skew(sim)
    unmet: list[str] = []
    earlier: list[str] = []
    if any(b.decommissioned for b in sim.brokers.values()):
        _decommission(sim, earlier, unmet)
    for goal in config.goals:
        _GOALS[goal](sim, earlier, unmet)
        earlier.append(goal)
    order = {goal: i for i, goal in enumerate([DECOMMISSION, *config.goals])}
    moves = sorted(sim.moves.values(), key=lambda m: (order.get(m.goal, 99), m.tp))
    return Plan(tuple(moves), before, _skew(sim), tuple(unmet))


def skew(model: ClusterModel, config: BalancerConfig) -> Skew:
    """How far ``model`` is from ``config``'s goals now."""
    return _skew(_Sim.of(model, config))


def _spread(values: list[float], band: tuple[float, float]) -> Spread:
    if not values:
        return Spread(0, 0, 0, band[0], band[1])
    return Spread(min(values), max(values), sum(values) / len(values), band[0], band[1])


def _skew(sim: _Sim) -> Skew:
    eligible = sim.eligible
    known = sim.sizes_known()
    usages = [u for k in sim.eligible_dirs() if (u := sim.dir_usage(k)) is not None]
    racks = (
        sum(1 for tp, r in sim.replicas.items() if sim.distinct_racks(r) < sim.wanted_racks(tp))
        if sim.racks_usable()
        else 0
    )
    drained = {b.id for b in sim.brokers.values() if b.decommissioned}
    return Skew(
        replicas=_spread([float(sim.replica_count(b)) for b in eligible], sim.replica_band()),
        leaders=_spread([float(sim.leader_count(b)) for b in eligible], sim.leader_band()),
        disk_bytes=(
            _spread([float(sim.broker_bytes(b)) for b in eligible], sim.bytes_band())
            if known
            else None
        ),
        log_dir_bytes=(
            _spread([float(sim.dir_bytes.get(k, 0)) for k in sim.eligible_dirs()], sim.dir_band())
            if known
            else None
        ),
        max_disk_usage_percent=round(max(usages), 2) if usages else None,
        rack_violations=racks,
        on_decommissioned=sum(1 for r in sim.replicas.values() for b in r if b in drained),
    )
