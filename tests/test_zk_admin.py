"""kafkacore.zk.admin: topic administration against a real ZooKeeper (the placement it
uses: ``test_placement.py``)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from kazoo.client import KazooClient

from kafkacore.zk.admin import AdminZkClient, new_topic_id, validate_topic_name
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import BrokerRegistration, Endpoint, topic_id_to_string
from kafkacore.zk.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    TopicAlreadyMarkedForDeletion,
    TopicExistsError,
    UnknownTopicError,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


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
