"""kafkacore.zk.admin: Kafka's default replica placement (the examples of
``AdminUtils.assignReplicasToBrokers``' documentation) and topic administration against a
real ZooKeeper."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from kazoo.client import KazooClient

from kafkacore.zk.admin import (
    AdminZkClient,
    assign_replicas_to_brokers,
    new_topic_id,
    rack_alternated_broker_list,
    validate_topic_name,
)
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import BrokerRegistration, Endpoint, topic_id_to_string
from kafkacore.zk.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyMarkedForDeletion,
    TopicExistsError,
    UnknownTopicError,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_rack_unaware_placement_matches_kafkas_table() -> None:
    brokers = [(b, None) for b in range(5)]
    got = assign_replicas_to_brokers(brokers, 10, 3, fixed_start_index=0)
    # First replicas round-robin; followers shifted, the shift growing after 5 partitions.
    assert got == {
        0: (0, 1, 2),
        1: (1, 2, 3),
        2: (2, 3, 4),
        3: (3, 4, 0),
        4: (4, 0, 1),
        5: (0, 2, 3),
        6: (1, 3, 4),
        7: (2, 4, 0),
        8: (3, 0, 1),
        9: (4, 1, 2),
    }


def test_rack_aware_placement_matches_kafkas_example() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    got = assign_replicas_to_brokers(sorted(racks.items()), 7, 3, fixed_start_index=0)
    assert got == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }
    # Every partition spans all three racks.
    assert all(len({racks[b] for b in r}) == 3 for r in got.values())


def test_random_placement_is_balanced() -> None:
    brokers = [(b, None) for b in (1, 2, 3)]
    got = assign_replicas_to_brokers(brokers, 30, 2, rng=random.Random(7))
    leaders = [r[0] for r in got.values()]
    assert sorted(leaders.count(b) for b in (1, 2, 3)) == [10, 10, 10]
    assert all(len(set(r)) == 2 for r in got.values())


def test_placement_errors() -> None:
    with pytest.raises(InvalidPartitionsError):
        assign_replicas_to_brokers([(1, None)], 0, 1)
    with pytest.raises(InvalidReplicationFactorError):
        assign_replicas_to_brokers([(1, None)], 1, 0)
    with pytest.raises(InvalidReplicationFactorError):
        assign_replicas_to_brokers([(1, None), (2, None)], 1, 3)
    with pytest.raises(AdminOperationError):
        assign_replicas_to_brokers([(1, "a"), (2, None)], 1, 2)


def test_topic_names_and_ids() -> None:
    for bad in ("", ".", "..", "a/b", "x" * 250, "sp ace"):
        with pytest.raises(InvalidTopicError):
            validate_topic_name(bad)
    validate_topic_name("ok.name_with-chars9")
    for seed in range(200):
        tid = new_topic_id(random.Random(seed))
        assert not topic_id_to_string(tid).startswith("-")


def broker(i: int) -> BrokerRegistration:
    return BrokerRegistration(i, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + i, "PLAINTEXT"),))


def test_admin_against_zookeeper(zk_chroot: str) -> None:
    async def main() -> None:
        async with await KafkaZkClient.connect(zk_chroot) as zk:
            for i in (1, 2, 3):
                await zk.register_broker(broker(i))
            admin = AdminZkClient(zk, rng=random.Random(1))
            created = await admin.create_topic("orders", 6, 2, {"retention.ms": "100"})
            assert sorted(created.partitions) == list(range(6))
            assert all(len(set(r)) == 2 for r in created.partitions.values())
            assert await zk.get_topic_assignment("orders") == created
            assert created.topic_id is not None
            assert await zk.get_entity_config("topics", "orders") == {"retention.ms": "100"}
            # Creation writes the config without a change notification (Kafka does too).
            assert await zk.get_config_changes() == []
            with pytest.raises(TopicExistsError):
                await admin.create_topic("orders", 1, 1)
            # '.' and '_' collide in metric names: Kafka refuses the second one.
            await admin.create_topic_with_assignment("o_rders", {}, {0: (1,)})
            with pytest.raises(InvalidTopicError):
                await admin.create_topic_with_assignment("o.rders", {}, {0: (1,)})
            with pytest.raises(InvalidReplicaAssignmentError):
                await admin.create_topic_with_assignment("bad", {}, {0: (1, 1)})
            with pytest.raises(InvalidReplicaAssignmentError):
                await admin.create_topic_with_assignment("bad", {}, {0: (1,), 2: (2,)})
            with pytest.raises(InvalidReplicaAssignmentError):
                await admin.create_topic_with_assignment("bad", {}, {0: (1,), 1: (2, 3)})
            # Growing keeps the old partitions and the id; new ones are placed like Kafka.
            grown = await admin.add_partitions("orders", 9)
            assert {p: grown.partitions[p] for p in range(6)} == created.partitions
            assert sorted(grown.partitions) == list(range(9))
            assert grown.topic_id == created.topic_id
            assert await zk.get_topic_assignment("orders") == grown
            with pytest.raises(InvalidPartitionsError):
                await admin.add_partitions("orders", 9)
            manual = await admin.add_partitions("orders", 10, {9: (3, 1)})
            assert manual.partitions[9] == (3, 1)
            await admin.change_topic_config("orders", {"cleanup.policy": "compact"})
            changes = await zk.get_config_changes()
            assert [await zk.get_config_change(c) for c in changes] == ["topics/orders"]
            with pytest.raises(UnknownTopicError):
                await admin.change_topic_config("nope", {})
            with pytest.raises(UnknownTopicError):
                await admin.delete_topic("nope")
            await admin.delete_topic("orders")
            with pytest.raises(TopicAlreadyMarkedForDeletion):
                await admin.delete_topic("orders")
            assert await zk.get_topics_to_delete() == ["orders"]

    run(main())
    raw = KazooClient(hosts=zk_chroot)
    raw.start(timeout=15)
    try:
        js = json.loads(raw.get("/brokers/topics/orders")[0])
        assert js["version"] == 3 and len(js["partitions"]) == 10 and len(js["topic_id"]) == 22
    finally:
        raw.stop()
        raw.close()
