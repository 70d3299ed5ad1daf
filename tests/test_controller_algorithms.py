"""Pure controller algorithms: election strategies (cluster.md §2.5). Replica placement:
``test_placement.py``."""

from __future__ import annotations

import itertools

from kafkacore.controller.algorithms import (
    RECOVERED,
    RECOVERING,
    LeaderAndIsr,
    controlled_shutdown_leader,
    elect_controlled_shutdown,
    elect_offline,
    elect_preferred,
    elect_reassign,
    offline_partition_leader,
    preferred_replica_leader,
    reassign_partition_leader,
)


def st(leader: int, isr: tuple[int, ...], epoch: int = 0) -> LeaderAndIsr:
    return LeaderAndIsr(leader=leader, leader_epoch=epoch, isr=isr, controller_epoch=1)


# --- leader choice ----------------------------------------------------------------------


def test_offline_first_live_in_isr_in_assignment_order() -> None:
    assert offline_partition_leader([3, 1, 2], [1, 2, 3], [1, 2], False) == 1
    assert offline_partition_leader([3, 1, 2], [2], [1, 2], False) == 2
    assert offline_partition_leader([3, 1, 2], [3], [1, 2], False) is None
    assert offline_partition_leader([3, 1, 2], [3], [1, 2], True) == 1
    assert offline_partition_leader([3, 1, 2], [3], [], True) is None


def test_reassign_uses_target_order() -> None:
    assert reassign_partition_leader([4, 5, 6], [1, 2, 3, 4, 5, 6], {4, 5, 6}) == 4
    assert reassign_partition_leader([4, 5, 6], [1, 2, 3, 5, 6], {4, 5, 6}) == 5
    assert reassign_partition_leader([4, 5, 6], [1, 2, 3], {4, 5, 6}) is None


def test_preferred_only_head() -> None:
    assert preferred_replica_leader([1, 2], [1, 2], {1, 2}) == 1
    assert preferred_replica_leader([1, 2], [2], {1, 2}) is None
    assert preferred_replica_leader([1, 2], [1, 2], {2}) is None
    assert preferred_replica_leader([], [1], {1}) is None


def test_controlled_shutdown_leader() -> None:
    assert controlled_shutdown_leader([1, 2, 3], [1, 2, 3], {1, 2, 3}, {1}) == 2
    assert controlled_shutdown_leader([1, 2, 3], [1, 3], {1, 2, 3}, {1}) == 3
    assert controlled_shutdown_leader([1, 2, 3], [1], {1, 2, 3}, {1}) is None


def brute_offline(assignment, isr, live, unclean):  # type: ignore[no-untyped-def]
    cands = [r for r in assignment if r in live and r in isr]
    if cands:
        return cands[0]
    if unclean:
        cands = [r for r in assignment if r in live]
        return cands[0] if cands else None
    return None


def test_offline_exhaustive_small() -> None:
    brokers = [1, 2, 3]
    subsets = [set(c) for k in range(4) for c in itertools.combinations(brokers, k)]
    for assignment in itertools.permutations(brokers):
        for isr in subsets:
            for live in subsets:
                for unclean in (False, True):
                    got = offline_partition_leader(list(assignment), isr, live, unclean)
                    assert got == brute_offline(assignment, isr, live, unclean)


# --- new states ---------------------------------------------------------------------------


def test_elect_offline_clean_filters_isr_and_bumps_epoch() -> None:
    new = elect_offline(st(1, (1, 2, 3), 4), [1, 2, 3], live={2, 3}, unclean=False)
    assert new is not None
    assert (new.leader, new.leader_epoch, new.isr) == (2, 5, (2, 3))
    assert new.leader_recovery_state == RECOVERED


def test_elect_offline_unclean_recovering() -> None:
    assert elect_offline(st(1, (1,), 0), [1, 2, 3], live={2, 3}, unclean=False) is None
    new = elect_offline(st(1, (1,), 0), [1, 2, 3], live={3, 2}, unclean=True)
    assert new is not None
    assert (new.leader, new.leader_epoch, new.isr) == (2, 1, (2,))
    assert new.leader_recovery_state == RECOVERING
    old = elect_offline(
        st(1, (1,), 0), [1, 2, 3], live={2}, unclean=True, leader_recovery_supported=False
    )
    assert old is not None and old.leader_recovery_state == RECOVERED


def test_elect_reassign_and_preferred_keep_isr() -> None:
    new = elect_reassign(st(1, (1, 2, 3, 4)), [4, 5], live={1, 2, 3, 4, 5})
    assert new is not None and (new.leader, new.leader_epoch, new.isr) == (4, 1, (1, 2, 3, 4))
    new = elect_preferred(st(2, (1, 2), 1), [1, 2], live={1, 2})
    assert new is not None and (new.leader, new.leader_epoch, new.isr) == (1, 2, (1, 2))
    assert elect_preferred(st(2, (2,), 1), [1, 2], live={1, 2}) is None


def test_elect_controlled_shutdown_removes_shutting_down_from_isr() -> None:
    new = elect_controlled_shutdown(st(1, (1, 2, 3), 3), [1, 2, 3], {1, 2, 3}, {1})
    assert new is not None and (new.leader, new.leader_epoch, new.isr) == (2, 4, (2, 3))
    assert elect_controlled_shutdown(st(1, (1,), 3), [1, 2], {1, 2}, {1}) is None


def test_new_epoch() -> None:
    s = st(1, (1, 2), 7).new_epoch()
    assert (s.leader, s.leader_epoch, s.isr) == (1, 8, (1, 2))
