"""A KIP-848 consumer group rides out its coordinator's failover in a three-broker
cluster: two confluent-kafka members and Kafka 4.3.1's Java consumer with
``group.protocol=consumer`` and a classic kafka-python member in the same group consume a
topic of RF 3 while records are produced; the broker leading the group's
``__consumer_offsets`` partition is killed with SIGKILL (a follower takes the partition
over and replays the group: its members, epochs and assignments), the members find the
new coordinator and go on consuming, then the broker comes back. Every record is consumed
(committed) by exactly one member (:func:`support.group_members.check_consumed_once`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from cluster.conftest import create_topic, new_cluster
from compat.conftest import test_clients  # noqa: F401  (fixture)
from interop.conftest import Java, java, kafka_libs  # noqa: F401  (fixtures)
from kafkacore._java import java_string_hash, utils_abs
from support.cluster import PRODUCER_CONFIG, Cluster, wait_until
from support.group_members import (
    Member,
    Producing,
    check_consumed_once,
    java_member,
    python_member,
)
from support.zookeeper import ZooKeeperServer

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

OVERRIDES = (
    "group.consumer.heartbeat.interval.ms=500",
    "group.consumer.min.heartbeat.interval.ms=500",
    "group.consumer.assignment.interval.ms=0",
    "group.min.session.timeout.ms=1000",
)
TOPIC = "failover"
PARTITIONS = 6
GROUP = "riders"


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[Cluster]:
    c = new_cluster(zookeeper, tmp_path, *OVERRIDES)
    try:
        yield c.start()
    finally:
        c.stop()


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for m in started:
        m.kill()


def consumed(members: list[Member]) -> int:
    return sum(len(m.committed()) for m in members)


def test_members_ride_out_the_coordinators_failover(
    cluster: Cluster,
    test_clients: dict[str, Path],  # noqa: F811
    java: Java,  # noqa: F811
    members: list[Member],
    tmp_path: Path,
) -> None:
    # a ZooKeeper-mode cluster starts with Kafka 3.9's empty /feature: the new protocol
    # waits for group.version 1, finalized as an operator would
    subprocess.run(
        [
            *(sys.executable, "-m", "kafkacore.cli", "features"),
            *("--bootstrap-server", cluster.bootstrap, "upgrade", "--feature", "group.version=1"),
        ],
        check=True,
        timeout=120,
    )
    create_topic(cluster, TOPIC, PARTITIONS, 3)
    logs = tmp_path / "members"
    logs.mkdir()
    bootstrap = cluster.bootstrap
    producing = Producing(
        {"bootstrap.servers": bootstrap, **PRODUCER_CONFIG}, TOPIC, PARTITIONS, rate=40
    )

    def progress(what: str, more: int = 100, timeout_s: float = 150) -> None:
        target = consumed(members) + more
        wait_until(lambda: consumed(members) >= target, timeout_s, what)

    for name in ("confluent-1", "confluent-2"):
        members.append(python_member("confluent", bootstrap, GROUP, TOPIC, name, logs))
    members.append(java_member(java.classpath, bootstrap, GROUP, TOPIC, "java", logs))
    kp = python_member(
        "kafka-python",
        bootstrap,
        GROUP,
        TOPIC,
        "kafka-python",
        logs,
        test_clients["kafka-python-3.0.12"],
    )
    members.append(kp)
    wait_until(lambda: all(m.assignment for m in members), 120, "four members with partitions")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_consumer_groups([GROUP])[GROUP].result(30)
    assert str(described.type).endswith("CONSUMER") and len(described.members) == 4
    progress("the group consuming")

    offsets_partition = utils_abs(java_string_hash(GROUP)) % 3  # offsets.topic.num.partitions
    coordinator = cluster.leader("__consumer_offsets", offsets_partition)
    cluster.kill(coordinator)
    cluster.wait_for_leader("__consumer_offsets", offsets_partition, not_in=[coordinator])
    progress("consuming with the new coordinator")
    after = AdminClient({"bootstrap.servers": cluster.bootstrap})
    described = after.describe_consumer_groups([GROUP])[GROUP].result(30)
    assert len(described.members) == 4, described.members
    cluster.restart(coordinator)
    progress("consuming with the old coordinator back")

    produced = producing.stop()
    wait_until(
        lambda: consumed(members) + sum(len(m.uncertain()) for m in members) >= len(produced),
        180,
        "everything consumed",
    )
    for m in members:
        m.stop()
    check_consumed_once(produced, members)
    assert len(produced) > 300
