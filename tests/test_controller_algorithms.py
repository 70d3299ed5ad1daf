"""Pure controller algorithms: election strategies (cluster.md §2.5) and AdminUtils
replica assignment (expected values are Kafka's AdminUtilsTest outputs)."""

from __future__ import annotations

import itertools
import random

import pytest

from kafkacore.controller.algorithms import (
    RECOVERED,
    RECOVERING,
    AdminOperationError,
    BrokerMetadata,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    LeaderAndIsr,
    assign_replicas_for_new_partitions,
    assign_replicas_to_brokers,
    controlled_shutdown_leader,
    elect_controlled_shutdown,
    elect_offline,
    elect_preferred,
    elect_reassign,
    offline_partition_leader,
    preferred_replica_leader,
    rack_alternated_broker_list,
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


# --- assignment (AdminUtils) --------------------------------------------------------------


def test_rack_unaware_kafka_expected() -> None:
    # AdminUtilsTest.testReplicaAssignment
    expected = {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 10, 3, fixed_start_index=0) == expected


def test_rack_unaware_formula_random_start() -> None:
    rng = random.Random(42)
    brokers = [10, 11, 12, 13]
    out = assign_replicas_to_brokers(brokers, 9, 3, rng=random.Random(42))
    start = rng.randrange(4)
    shift = rng.randrange(4)
    for p in range(9):
        if p > 0 and p % 4 == 0:
            shift += 1
        first = (p + start) % 4
        exp = [brokers[first]] + [brokers[(first + 1 + (shift + j) % 3) % 4] for j in range(2)]
        assert out[p] == exp
    for replicas in out.values():
        assert len(set(replicas)) == 3


def test_errors() -> None:
    with pytest.raises(InvalidReplicationFactorError) as e:
        assign_replicas_to_brokers([1, 2, 3], 1, 4)
    assert str(e.value) == "Replication factor: 4 larger than available brokers: 3."
    with pytest.raises(InvalidReplicationFactorError, match="larger than 0"):
        assign_replicas_to_brokers([1, 2, 3], 1, 0)
    with pytest.raises(InvalidPartitionsError, match="larger than 0"):
        assign_replicas_to_brokers([1, 2, 3], 0, 1)
    with pytest.raises(AdminOperationError):
        assign_replicas_to_brokers([BrokerMetadata(1, "a"), BrokerMetadata(2)], 1, 1)


def test_rack_alternated_list() -> None:
    # AdminUtilsTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    racks2 = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    assert rack_alternated_broker_list(racks2) == [0, 1, 3, 5, 2, 4]


def test_rack_aware_spreads_racks() -> None:
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    metas = [BrokerMetadata(b, r) for b, r in racks.items()]
    for start in range(6):
        out = assign_replicas_to_brokers(metas, 6, 3, fixed_start_index=start)
        for replicas in out.values():
            assert len({racks[b] for b in replicas}) == 3
            assert len(set(replicas)) == 3
    out = assign_replicas_to_brokers(metas, 6, 3, fixed_start_index=0)
    assert out[0] == [0, 1, 3]
    assert [out[p][0] for p in range(6)] == [0, 1, 3, 5, 2, 4]


def test_add_partitions_starts_from_existing_head() -> None:
    existing = {0: [1, 2], 1: [2, 3]}
    out = assign_replicas_for_new_partitions([1, 2, 3], existing, 4)
    # start index = index of broker 1 = 0, shift 0, start partition 2
    assert out == assign_replicas_to_brokers(
        [1, 2, 3], 2, 2, fixed_start_index=0, start_partition_id=2
    )
    assert sorted(out) == [2, 3]
    assert out[2] == [3, 1]
    with pytest.raises(InvalidPartitionsError):
        assign_replicas_for_new_partitions([1, 2, 3], existing, 2)
