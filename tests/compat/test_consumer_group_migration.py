"""The online migration between the classic and the consumer group protocols with real
clients, consuming all along (``group.consumer.migration.policy=bidirectional``, the
default): classic members (kafka-python 3.x and aiokafka) form a classic group; a
confluent-kafka member with ``group.protocol=consumer`` joins and the group becomes a
consumer group (the classic members stay, driven through JoinGroup/SyncGroup/Heartbeat by
the consumer group); Kafka 4.3.1's Java consumer joins with ``group.protocol=consumer``,
and a kafka-python 2.x classic member; a classic member leaves, another is killed with
SIGKILL (its session expires); the consumer-protocol members leave and the group becomes
a classic group again, its last member consuming on. Records are produced throughout,
and every one is consumed (committed) by exactly one member
(:func:`support.group_members.check_consumed_once`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import admin as admin_mod

from compat.conftest import Broker
from compat.test_groups import warm_coordinator
from interop.conftest import Java, java, kafka_libs  # noqa: F401  (fixtures)
from support.brokers import BrokerFactory
from support.cluster import wait_until
from support.group_members import (
    Member,
    Producing,
    check_consumed_once,
    java_member,
    python_member,
)

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

OVERRIDES = (
    "group.initial.rebalance.delay.ms=0",
    "group.min.session.timeout.ms=1000",
    # heartbeats and assignments at the pace of a test (the defaults are 5 s and 1 s)
    "group.consumer.heartbeat.interval.ms=500",
    "group.consumer.min.heartbeat.interval.ms=500",
    "group.consumer.assignment.interval.ms=0",
)
TOPIC = "migration"
PARTITIONS = 6


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    b = broker_factory(*OVERRIDES, name="migration")
    warm_coordinator(b)
    return b


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for m in started:
        m.kill()


def group_type(broker: Broker, group: str) -> str | None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_consumer_groups().result(30)
    for g in listed.valid:
        if g.group_id == group:
            return str(g.type).rsplit(".", 1)[-1].lower()
    return None


def consumed(members: list[Member]) -> int:
    return sum(len(m.committed()) for m in members)


def covered(members: list[Member]) -> bool:
    """Every partition is assigned to a live member."""
    live = [m for m in members if m.proc.poll() is None]
    owned = [p for m in live for _, p in m.assignment]
    return sorted(owned) == list(range(PARTITIONS))


def test_classic_group_upgraded_and_downgraded_while_consuming_every_record_once(
    broker: Broker,
    test_clients: dict[str, Path],
    java: Java,  # noqa: F811
    members: list[Member],
    tmp_path: Path,
) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([admin_mod.NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
    group = "migrating"
    producing = Producing(
        {"bootstrap.servers": broker.bootstrap, "linger.ms": 5}, TOPIC, PARTITIONS, rate=40
    )

    def start(member: Member) -> Member:
        members.append(member)
        return member

    def python(client: str, name: str, version: str | None = None) -> Member:
        path = test_clients[version] if version is not None else None
        return start(python_member(client, broker.bootstrap, group, TOPIC, name, tmp_path, path))

    def progress(what: str, more: int = 100, timeout_s: float = 120) -> None:
        target = consumed(members) + more
        wait_until(lambda: consumed(members) >= target, timeout_s, what)

    def state(what: str, check: Any, timeout_s: float = 120) -> None:
        wait_until(check, timeout_s, what)

    # a classic group of two classic clients
    kp = python("kafka-python", "kafka-python-3", "kafka-python-3.0.12")
    aio = python("aiokafka", "aiokafka", "aiokafka-0.14.0")
    state("a classic group of two members", lambda: kp.assignment and aio.assignment)
    assert group_type(broker, group) == "classic"
    progress("the classic group consuming")

    # a consumer-protocol member joins: the group is upgraded, the classic members stay
    cf = python("confluent", "confluent")
    state("the upgrade", lambda: group_type(broker, group) == "consumer" and cf.assignment)
    state("the partitions shared by the three", lambda: covered(members) and kp.assignment)
    progress("the mixed group consuming")
    jv = start(java_member(java.classpath, broker.bootstrap, group, TOPIC, "java", tmp_path))
    kp2 = python("kafka-python", "kafka-python-2", "kafka-python-2.3.3")
    state("five members", lambda: jv.assignment and kp2.assignment and covered(members))
    progress("five members consuming")

    # a classic member leaves, another crashes
    kp.stop()
    state("kafka-python 3's partitions taken over", lambda: covered(members))
    progress("after a leave")
    aio.kill()
    state("aiokafka's session expired, its partitions taken over", lambda: covered(members))
    progress("after a crash")

    # the consumer-protocol members leave: a classic group again
    jv.stop()
    cf.stop()
    state("the downgrade", lambda: group_type(broker, group) == "classic")
    state("the last member owns everything", lambda: len(kp2.assignment) == PARTITIONS)
    progress("the classic group consuming again", more=50)
    produced = producing.stop()
    state(
        "everything consumed",
        lambda: consumed(members) + sum(len(m.uncertain()) for m in members) >= len(produced),
        timeout_s=180,
    )
    kp2.stop()
    for m in members:
        assert m.proc.returncode is not None
    check_consumed_once(produced, members)
    assert len(produced) > 600
    assert group_type(broker, group) == "classic"
