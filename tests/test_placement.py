"""Replica placement (Kafka's ``AdminUtils.assignReplicasToBrokers`` and the default
assignment of added partitions): expected values are Kafka's ``AdminUtilsTest`` outputs and
the examples of its documentation. Against Kafka's own code:
``test_controller_assignment_kafka.py`` and ``interop/test_zk_vs_kafka.py``."""

from __future__ import annotations

import random

import pytest

from kafkacore.placement import (
    AdminOperationError,
    BrokerMetadata,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    assign_replicas_for_new_partitions,
    assign_replicas_to_brokers,
    rack_alternated_broker_list,
)


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


def test_rack_aware_placement_matches_kafkas_example() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    metas = [BrokerMetadata(b, r) for b, r in sorted(racks.items())]
    got = assign_replicas_to_brokers(metas, 7, 3, fixed_start_index=0)
    assert got == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }
    # Every partition spans all three racks.
    assert all(len({racks[b] for b in r}) == 3 for r in got.values())


def test_random_placement_is_balanced() -> None:
    got = assign_replicas_to_brokers([1, 2, 3], 30, 2, rng=random.Random(7))
    leaders = [r[0] for r in got.values()]
    assert sorted(leaders.count(b) for b in (1, 2, 3)) == [10, 10, 10]
    assert all(len(set(r)) == 2 for r in got.values())
