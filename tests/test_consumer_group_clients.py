"""KIP-848 consumer groups with a real client: confluent-kafka (librdkafka 2.16) with
``group.protocol=consumer`` against a broker subprocess. Three consumers on a topic of
six partitions split it two by two and, the group stable, consume every record once; a
member that leaves hands its partitions over (revoked before reassigned); the group is
listed and described as a consumer group, and its offsets survive a broker restart (the
records replayed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from support.brokers import Broker, BrokerFactory

pytestmark = pytest.mark.timeout(180)

# heartbeats and assignments at the pace of a test (the defaults are 5 s and 1 s)
OVERRIDES = [
    "group.consumer.heartbeat.interval.ms=500",
    "group.consumer.min.heartbeat.interval.ms=500",
    "group.consumer.assignment.interval.ms=0",
]


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(*OVERRIDES)


def _topic(broker: Broker, name: str, partitions: int, records: int) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([admin_mod.NewTopic(name, partitions, 1)])[name].result(10)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(records):
        producer.produce(name, key=b"%d" % i, value=b"v%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0


def _consumer(broker: Broker, group: str, name: str) -> Any:
    return ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )


def _drain(
    consumers: list[Any], until: Any, timeout_s: float = 60
) -> dict[str, list[tuple[int, int]]]:
    seen: dict[str, list[tuple[int, int]]] = {}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not until(seen):
        for i, c in enumerate(consumers):
            msg = c.poll(0.1)
            if msg is not None and msg.error() is None:
                seen.setdefault(str(i), []).append((msg.partition(), msg.offset()))
    return seen


@pytest.fixture
def consumers() -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    for c in made:
        c.close()


def test_three_members_split_six_partitions_and_consume_everything_once(
    broker: Broker, consumers: list[Any]
) -> None:
    _topic(broker, "kip848-split", 6, 0)
    for i in range(3):
        consumers.append(_consumer(broker, "g-split", f"m{i}"))
        consumers[-1].subscribe(["kip848-split"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        sizes = sorted(len(c.assignment()) for c in consumers)
        if sizes == [2, 2, 2]:
            break
        for c in consumers:
            c.poll(0.1)
    assignments = [sorted(tp.partition for tp in c.assignment()) for c in consumers]
    assert sorted(len(a) for a in assignments) == [2, 2, 2], assignments
    assert sorted(p for a in assignments for p in a) == list(range(6))
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(600):
        producer.produce("kip848-split", value=b"v%d" % i, partition=i % 6)
    assert producer.flush(30) == 0
    seen = _drain(consumers, lambda s: sum(len(v) for v in s.values()) >= 600)
    records = [r for got in seen.values() for r in got]
    assert len(records) == 600 and len(set(records)) == 600
    assert all(len(got) == 200 for got in seen.values())

    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_consumer_groups().result(10)
    kinds = {g.group_id: g.type for g in listed.valid}
    assert kinds["g-split"] == ck.ConsumerGroupType.CONSUMER
    described = admin.describe_consumer_groups(["g-split"])["g-split"].result(10)
    assert described.type == ck.ConsumerGroupType.CONSUMER
    assert str(described.state) in ("ConsumerGroupState.STABLE", "ConsumerGroupState.RECONCILING")
    assert len(described.members) == 3


def test_a_leaving_member_hands_its_partitions_over(broker: Broker, consumers: list[Any]) -> None:
    _topic(broker, "kip848-leave", 4, 0)
    for i in range(2):
        consumers.append(_consumer(broker, "g-leave", f"m{i}"))
        consumers[-1].subscribe(["kip848-leave"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.1)
        if sorted(len(c.assignment()) for c in consumers) == [2, 2]:
            break
    assert sorted(len(c.assignment()) for c in consumers) == [2, 2]
    consumers.pop().close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(consumers[0].assignment()) != 4:
        consumers[0].poll(0.1)
    assert sorted(tp.partition for tp in consumers[0].assignment()) == [0, 1, 2, 3]


def test_committed_offsets_and_the_group_survive_a_restart(broker: Broker) -> None:
    _topic(broker, "kip848-restart", 2, 10)
    c = _consumer(broker, "g-restart", "m")
    c.subscribe(["kip848-restart"])
    seen = _drain([c], lambda s: sum(len(v) for v in s.values()) >= 10)
    assert sum(len(v) for v in seen.values()) == 10
    c.commit(asynchronous=False)
    committed = {tp.partition: tp.offset for tp in c.committed(c.assignment(), timeout=10)}
    assert committed == {0: 5, 1: 5}
    c.close()
    broker.restart()
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    offsets = admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions("g-restart")])
    listed = offsets["g-restart"].result(10)
    assert {tp.partition: tp.offset for tp in listed.topic_partitions} == {0: 5, 1: 5}
    described = admin.describe_consumer_groups(["g-restart"])["g-restart"].result(10)
    assert described.type == ck.ConsumerGroupType.CONSUMER
