"""The partition balancer's planner and executor (``kafkacore.balancer``), pure: plans for
expansion, decommission, racks, leaders, disk and log-dir usage, the high-water mark and
KIP-1066 cordoning, the safety rules (never a partition being moved, under-replicated or
below ``min.insync.replicas``; one move per partition; a degraded cluster waits), and the
executor's bounds, throttles, cool-down and failover state - plus properties over random
clusters (hypothesis): a plan never makes an earlier goal worse and is deterministic."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkacore.balancer import (
    LEADER_MOVE,
    REPLICA_MOVE,
    BalancerConfig,
    BrokerModel,
    ClusterModel,
    LogDirModel,
    Move,
    PartitionModel,
    movable,
    plan,
)
from kafkacore.balancer.executor import BalancerState, Throttles, step, throttles_for
from kafkacore.log import TopicPartition
from kafkacore.placement import assign_replicas_to_brokers

ON = BalancerConfig(enabled=True, cooldown_ms=0)
GB = 10**9


def cluster(
    assignment: dict[int, list[int]],
    brokers: Iterable[int],
    *,
    racks: dict[int, str] | None = None,
    sizes: dict[int, int] | None = None,
    dirs: dict[int, list[str]] | None = None,
    cordoned: set[str] | None = None,
    capacity: int = GB,
    extra_used: dict[int, int] | None = None,
    min_isr: int = 1,
    topic: str = "t",
) -> ClusterModel:
    """A healthy cluster: every replica in the ISR; log dirs per broker (default one,
    ``/b<id>``) holding the replicas round-robin by partition."""
    racks = racks or {}
    sizes = sizes or {}
    partitions = [
        PartitionModel(
            TopicPartition(topic, p),
            tuple(r),
            r[0],
            tuple(r),
            sizes.get(p, 1000 * (p + 1)),
            min_isr,
        )
        for p, r in assignment.items()
    ]
    models = []
    for b in brokers:
        paths = (dirs or {}).get(b, [f"/b{b}"])
        held = [pm for pm in partitions if b in pm.replicas]
        per_dir: dict[str, dict[TopicPartition, int]] = {d: {} for d in paths}
        for i, pm in enumerate(held):
            per_dir[paths[i % len(paths)]][pm.tp] = pm.size
        log_dirs = tuple(
            LogDirModel(
                d,
                capacity,
                capacity - sum(per_dir[d].values()) - (extra_used or {}).get(b, 0),
                d in (cordoned or set()),
                per_dir[d],
            )
            for d in paths
        )
        models.append(BrokerModel(b, racks.get(b), True, False, log_dirs))
    return ClusterModel.of(models, partitions)


def applied(model: ClusterModel, moves: Iterable[Move]) -> ClusterModel:
    """``model`` once ``moves`` completed (new replicas in the ISR, preferred leaders
    elected; sizes moved with the replicas)."""
    partitions = dict(model.partitions)
    brokers = {b: replace(m) for b, m in model.brokers.items()}
    for m in moves:
        p = partitions[m.tp]
        partitions[m.tp] = replace(p, replicas=m.after, isr=m.after, leader=m.after[0])
        for b in m.sources:
            bm = brokers[b]
            brokers[b] = replace(
                bm,
                log_dirs=tuple(
                    replace(d, sizes={tp: s for tp, s in d.sizes.items() if tp != m.tp})
                    for d in bm.log_dirs
                ),
            )
        for b in m.destinations:
            bm = brokers[b]
            first, *rest = bm.log_dirs
            brokers[b] = replace(
                bm, log_dirs=(replace(first, sizes={**first.sizes, m.tp: p.size}), *rest)
            )
    return ClusterModel(brokers, partitions)


def three_to_four(partitions: int = 12) -> ClusterModel:
    a = assign_replicas_to_brokers([1, 2, 3], partitions, 3, fixed_start_index=0)
    return cluster(a, [1, 2, 3, 4], racks={1: "a", 2: "b", 3: "c", 4: "d"})


def test_a_new_broker_gets_its_share_of_replicas_leaders_and_bytes() -> None:
    found = plan(three_to_four(), ON)
    assert not found.before.replicas.balanced
    after = found.after
    assert after.replicas.balanced and after.leaders.balanced
    assert after.disk_bytes is not None and after.disk_bytes.balanced
    assert after.rack_violations == 0
    assert len({m.tp for m in found.moves}) == len(found.moves)
    assert all(4 in m.after for m in found.moves if m.kind == REPLICA_MOVE)
    # applied, the cluster is balanced: the next plan is empty
    again = plan(applied(three_to_four(), found.moves), ON)
    assert again.moves == () and again.before.replicas.balanced


def test_a_decommissioned_broker_drains() -> None:
    model = three_to_four()
    # the cluster of 4 balanced, then broker 2 is decommissioned
    balanced = applied(model, plan(model, ON).moves)
    drain = BalancerConfig(enabled=True, decommissioned=frozenset({2}))
    found = plan(balanced, drain)
    assert found.before.on_decommissioned > 0
    assert found.after.on_decommissioned == 0
    assert all(2 not in m.after for m in found.moves)
    assert all(m.goal == "decommission" for m in found.moves if 2 in m.before)
    assert found.after.replicas.balanced


def test_racks_are_restored_before_counts() -> None:
    # two racks; every partition has both replicas in rack a
    model = cluster(
        {p: [1, 2] for p in range(4)}, [1, 2, 3, 4], racks={1: "a", 2: "a", 3: "b", 4: "b"}
    )
    found = plan(model, ON)
    assert found.before.rack_violations == 4
    assert found.after.rack_violations == 0
    assert all(m.goal == "rack.awareness" for m in found.moves)
    # no rack on some broker: the goal stands aside (Kafka's placement does the same)
    unracked = cluster({p: [1, 2] for p in range(4)}, [1, 2, 3, 4], racks={1: "a", 2: "a"})
    assert all(m.goal != "rack.awareness" for m in plan(unracked, ON).moves)


def test_leader_counts_by_reordering_only() -> None:
    # every partition prefers broker 1: reorders move the preferred leadership, no data
    model = cluster({p: [1, 2, 3] for p in range(6)}, [1, 2, 3])
    found = plan(model, ON)
    assert found.after.leaders.balanced
    assert {m.kind for m in found.moves} == {LEADER_MOVE}
    assert all(sorted(m.before) == sorted(m.after) and m.bytes == 0 for m in found.moves)


def test_disk_bytes_balance_with_counts_kept() -> None:
    # equal counts, but broker 1 holds the big partitions
    model = cluster(
        {0: [1, 2], 1: [1, 3], 2: [2, 3], 3: [4, 2], 4: [4, 3], 5: [1, 4]},
        [1, 2, 3, 4],
        sizes={0: 50_000, 1: 50_000, 5: 50_000, 2: 1000, 3: 1000, 4: 1000},
    )
    found = plan(model, BalancerConfig(enabled=True, goals=("replica.count", "disk.usage")))
    assert found.before.disk_bytes is not None and not found.before.disk_bytes.balanced
    assert found.after.disk_bytes is not None
    assert found.after.disk_bytes.max < found.before.disk_bytes.max
    assert found.after.replicas.balanced


def test_counts_at_the_band_edge_balance_bytes_by_swapping() -> None:
    # two replicas each and a zero count tolerance: no broker may give one away, so only
    # a swap (broker 1's large replica for broker 2's small one) narrows the bytes
    model = cluster(
        {0: [1], 1: [1], 2: [2], 3: [2], 4: [3], 5: [3]},
        [1, 2, 3],
        sizes={0: 10_000, 1: 10_000, 2: 100, 3: 100, 4: 5_000, 5: 5_000},
    )
    config = BalancerConfig(enabled=True, replica_imbalance_percentage=0)
    found = plan(model, config)
    before, after = found.before.disk_bytes, found.after.disk_bytes
    assert before is not None and after is not None and not before.balanced
    assert after.balanced and found.after.replicas.balanced and found.after.leaders.balanced
    assert sorted((m.before, m.after, m.goal) for m in found.moves) == [
        ((1,), (2,), "disk.usage"),
        ((2,), (1,), "disk.usage"),
    ]


def test_an_over_full_log_dir_gives_replicas_to_other_brokers() -> None:
    # broker 1 holds half the partitions, all in /b1a (its /b1b is empty)
    a = {p: [1] if p < 12 else [2 + p % 2] for p in range(24)}
    model = cluster(a, [1, 2, 3], dirs={1: ["/b1a", "/b1b"]}, sizes=dict.fromkeys(range(24), 1000))
    b1 = model.brokers[1]
    everything = {tp: 1000 for tp, p in model.partitions.items() if p.replicas == (1,)}
    packed = replace(
        b1, log_dirs=(replace(b1.log_dirs[0], sizes=everything), replace(b1.log_dirs[1], sizes={}))
    )
    model = ClusterModel({**model.brokers, 1: packed}, model.partitions)
    found = plan(model, BalancerConfig(enabled=True, goals=("log.dir.usage",)))
    before, after = found.before.log_dir_bytes, found.after.log_dir_bytes
    assert before is not None and after is not None and not before.balanced
    # no move inside a broker exists: replicas leave /b1a for the other brokers (which
    # may in turn fill the empty /b1b)
    assert any(m.sources == (1,) for m in found.moves)
    assert after.max < before.max and after.max - after.min < before.max - before.min
    # what whole-replica moves between brokers cannot do is said, not hidden
    assert all(u.startswith("log.dir.usage") for u in found.unmet)


def test_no_volume_stays_above_the_high_water_mark() -> None:
    a = {p: [1 + p % 3] for p in range(9)}
    model = cluster(
        a,
        [1, 2, 3],
        capacity=100_000,
        sizes=dict.fromkeys(range(9), 10_000),
        extra_used={1: 60_000},
    )
    config = BalancerConfig(
        enabled=True, goals=("disk.high.water.mark",), disk_high_water_mark_percentage=85
    )
    found = plan(model, config)
    assert found.before.max_disk_usage_percent == 90.0
    assert found.after.max_disk_usage_percent is not None
    assert found.after.max_disk_usage_percent <= 85.0
    assert all(m.sources == (1,) for m in found.moves)


def test_cordoned_brokers_and_log_dirs_take_nothing_new() -> None:
    model = cluster(
        assign_replicas_to_brokers([1, 2, 3], 12, 3, fixed_start_index=0),
        [1, 2, 3, 4, 5],
        dirs={5: ["/b5"]},
        cordoned={"/b5"},
    )
    found = plan(model, ON)
    assert found.moves and all(5 not in m.destinations for m in found.moves)
    # one cordoned dir of two: the replicas go to the other (Kafka's nextLogDirs)
    model = cluster(
        assign_replicas_to_brokers([1, 2, 3], 12, 3, fixed_start_index=0),
        [1, 2, 3, 4],
        dirs={4: ["/b4a", "/b4b"]},
        cordoned={"/b4a"},
    )
    found = plan(model, ON)
    assert any(4 in m.destinations for m in found.moves)
    moved = applied(model, [])  # the simulation's dir choice shows in the skew after
    assert found.after.log_dir_bytes is not None
    assert moved.brokers[4].log_dirs[0].sizes == {}


def test_unsafe_partitions_are_never_moved() -> None:
    model = three_to_four()
    tps = sorted(model.partitions)
    unsafe = {
        tps[0]: replace(model.partitions[tps[0]], isr=model.partitions[tps[0]].replicas[:2]),
        tps[1]: replace(model.partitions[tps[1]], reassigning=True),
        tps[2]: replace(model.partitions[tps[2]], min_isr=4),
    }
    model = ClusterModel(model.brokers, {**model.partitions, **unsafe})
    found = plan(model, ON)
    assert not {m.tp for m in found.moves} & set(unsafe)
    for tp in unsafe:
        assert not movable(model.partitions[tp], dict(model.brokers))


def test_a_dead_decommissioned_broker_can_still_be_drained() -> None:
    model = three_to_four()
    dead = replace(model.brokers[3], alive=False, log_dirs=())
    parts = {
        tp: replace(p, isr=tuple(r for r in p.replicas if r != 3))
        for tp, p in model.partitions.items()
    }
    model = ClusterModel({**model.brokers, 3: dead}, parts)
    assert plan(model, ON).moves == ()  # a down broker: nothing moves
    found = plan(model, BalancerConfig(enabled=True, decommissioned=frozenset({3})))
    assert found.after.on_decommissioned == 0
    assert len(found.moves) == len(parts)


# -- properties over random clusters --------------------------------------------------------


@st.composite
def random_clusters(draw: st.DrawFn) -> tuple[ClusterModel, BalancerConfig]:
    n = draw(st.integers(2, 6))
    brokers = list(range(1, n + 1))
    rf = draw(st.integers(1, min(3, n)))
    count = draw(st.integers(1, 24))
    start = draw(st.integers(0, n - 1))
    # placed on a subset of the brokers (the others new), healthy or not
    used = brokers[: draw(st.integers(rf, n))]
    assignment = assign_replicas_to_brokers(used, count, rf, fixed_start_index=start % len(used))
    racks = {b: f"r{draw(st.integers(0, 2))}" for b in brokers} if draw(st.booleans()) else {}
    sizes = {p: draw(st.integers(0, 100_000)) for p in assignment}
    model = cluster(assignment, brokers, racks=racks, sizes=sizes, min_isr=min(2, rf))
    sick = draw(st.sets(st.sampled_from(sorted(model.partitions)), max_size=3))
    parts = dict(model.partitions)
    for tp in sick:
        p = parts[tp]
        parts[tp] = replace(p, isr=p.replicas[:1]) if rf > 1 else replace(p, reassigning=True)
    decommissioned = frozenset(draw(st.sets(st.sampled_from(brokers), max_size=1)))
    if len(brokers) - len(decommissioned) < rf:
        decommissioned = frozenset()
    config = BalancerConfig(
        enabled=True,
        decommissioned=decommissioned,
        replica_imbalance_percentage=draw(st.sampled_from([0, 10, 50])),
        leader_imbalance_percentage=draw(st.sampled_from([0, 10, 50])),
    )
    return ClusterModel(model.brokers, parts), config


@settings(max_examples=150, deadline=None)
@given(random_clusters())
def test_plans_are_safe_and_never_undo_an_earlier_goal(
    case: tuple[ClusterModel, BalancerConfig],
) -> None:
    model, config = case
    found = plan(model, config)
    assert found == plan(model, config)  # deterministic
    seen = set()
    for m in found.moves:
        assert m.tp not in seen  # one move per partition
        seen.add(m.tp)
        p = model.partitions[m.tp]
        assert m.before == p.replicas and movable(p, dict(model.brokers))
        assert len(m.after) == len(set(m.after)) == len(m.before)
        for d in m.destinations:
            b = model.brokers[d]
            assert b.accepts_new_replicas and d not in config.decommissioned
        assert m.kind == (REPLICA_MOVE if m.destinations else LEADER_MOVE)
    # each goal, in priority order, is no worse - unless a goal before it had work to do
    before, after = found.before, found.after
    assert after.on_decommissioned <= before.on_decommissioned
    if before.on_decommissioned:
        return
    assert after.rack_violations <= before.rack_violations
    if before.rack_violations:
        return
    if before.replicas.balanced:
        assert after.replicas.balanced  # within the tolerance it stays within it
    else:
        spread = after.replicas.max - after.replicas.min
        assert spread <= before.replicas.max - before.replicas.min


# -- the executor ---------------------------------------------------------------------------


def running(model: ClusterModel, moves: Iterable[Move]) -> ClusterModel:
    """``model`` with ``moves`` started: target replicas, ``reassigning`` set."""
    parts = dict(model.partitions)
    for m in moves:
        parts[m.tp] = replace(parts[m.tp], replicas=m.after, reassigning=True)
    return ClusterModel(model.brokers, parts)


def test_executor_bounds_throttles_completion_and_cooldown() -> None:
    model = three_to_four()
    config = BalancerConfig(enabled=True, cooldown_ms=1000, max_moves_in_flight=2)
    # a controller taking over waits for the cool-down first
    d = step(BalancerState(), model, config, 0, activated=True)
    assert d.start == () and d.status.startswith("cooling down")
    d = step(d.state, model, config, 1000)
    assert len(d.start) == 2 and d.state.round_started_ms == 1000
    assert d.throttles == throttles_for(d.start, config.throttle_bytes_per_second)
    assert d.throttles.brokers == {b for m in d.start for b in (*m.before, *m.after)}
    # while they run: no more than two, never the same partition again
    moving = running(model, d.start)
    d2 = step(d.state, moving, config, 2000)
    assert d2.start == () and set(d2.state.in_flight) == {m.tp for m in d.start}
    # one completes: its slot is taken by another move; the finished one is counted
    first, second = d.start
    done = applied(moving, [first])
    done = ClusterModel(
        done.brokers,
        {**done.partitions, first.tp: replace(done.partitions[first.tp], reassigning=False)},
    )
    d3 = step(d2.state, done, config, 3000)
    assert d3.state.completed == 1 and d3.state.bytes_moved == first.bytes
    assert len(d3.start) == 1 and d3.start[0].tp not in {first.tp, second.tp}
    assert set(d3.state.in_flight) == {second.tp, d3.start[0].tp}
    # the state survives a failover (JSON), and a new controller resumes tracking them
    restored = BalancerState.from_json(d3.state.to_json())
    assert restored == d3.state


def test_executor_disabled_paused_degraded_and_membership() -> None:
    model = three_to_four()
    off = step(BalancerState(), model, BalancerConfig(), 0)
    assert off.start == () and off.status == "disabled" and off.throttles == Throttles()
    paused = step(BalancerState(), model, replace(ON, paused=True), 0)
    assert paused.start == () and paused.status.startswith("paused")
    dead = ClusterModel(
        {**model.brokers, 2: replace(model.brokers[2], alive=False)}, model.partitions
    )
    waiting = step(BalancerState(), dead, ON, 0)
    assert waiting.start == () and "down" in waiting.status
    # a broker joining starts a cool-down
    config = replace(ON, cooldown_ms=5000)
    three = ClusterModel({b: m for b, m in model.brokers.items() if b != 4}, model.partitions)
    seen = step(BalancerState(), three, config, 0).state
    joined = step(seen, model, config, 100)
    assert joined.start == () and joined.state.cooldown_until_ms == 5100
    assert step(joined.state, model, config, 5100).start


def test_executor_abandons_a_move_replaced_by_someone_else() -> None:
    model = three_to_four()
    d = step(BalancerState(), model, ON, 0)
    m, still = d.start
    moving = running(model, [still])
    other = tuple(sorted(m.before))  # an operator cancelled it back to the old replicas
    parts = {**moving.partitions, m.tp: replace(model.partitions[m.tp], replicas=other)}
    after = step(d.state, ClusterModel(model.brokers, parts), ON, 1)
    assert (after.state.abandoned, after.state.completed) == (1, 0)
    assert after.state.history[-1]["outcome"] == "abandoned"
    assert still.tp in after.state.in_flight
