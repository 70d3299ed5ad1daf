"""A mixed cluster: two kafkacore brokers and one Apache Kafka 3.9.1 broker in ZooKeeper
mode on one ZooKeeper, the strongest proof that our ZooKeeper data and inter-broker
protocol are Kafka's (and the migration path of a ZooKeeper-mode Kafka user: add kafkacore
brokers, reassign, remove the Kafka ones). A replication-factor-3 topic replicates across
both kinds; the controller is SIGKILLed (it moves to the other side or stays on ours),
leaders move, and no acknowledged record is lost."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.conftest import create_topic, new_cluster
from cluster.test_cluster_failover import BackgroundProducer, check_delivery
from support.brokers import free_port
from support.cluster import Cluster, wait_until
from support.kafka_jars import JVM_FLAGS
from support.zookeeper import ZooKeeperServer, zookeeper_libs

pytestmark = pytest.mark.timeout(420)

KAFKA_ID = 3


class KafkaBroker:
    """Apache Kafka 3.9.1 (``kafka.Kafka``) in ZooKeeper mode, from its jars."""

    def __init__(self, directory: Path, zookeeper_connect: str) -> None:
        self.directory = directory
        self.port = free_port()
        self.props = directory / "server.properties"
        directory.mkdir(parents=True, exist_ok=True)
        self.props.write_text(
            "\n".join(
                [
                    f"broker.id={KAFKA_ID}",
                    f"zookeeper.connect={zookeeper_connect}",
                    f"listeners=PLAINTEXT://localhost:{self.port}",
                    f"log.dirs={directory / 'data'}",
                    "offsets.topic.replication.factor=3",
                    "offsets.topic.num.partitions=3",
                    "zookeeper.session.timeout.ms=6000",
                    "replica.lag.time.max.ms=6000",
                    "replica.fetch.wait.max.ms=200",
                    "group.initial.rebalance.delay.ms=0",
                    "",
                ]
            )
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"localhost:{self.port}"

    def start(self) -> None:
        libs = zookeeper_libs()  # Kafka 3.9.1's libs
        with open(self.directory / "kafka.log", "ab") as out:
            self.proc = subprocess.Popen(
                [
                    "java",
                    "-Xmx512m",
                    *JVM_FLAGS,
                    "-cp",
                    f"{libs}/*",
                    "kafka.Kafka",
                    str(self.props),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(30)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()
            self.proc = None


@pytest.fixture
def mixed(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[tuple[Cluster, KafkaBroker]]:
    cluster = new_cluster(zookeeper, tmp_path, "offsets.topic.replication.factor=3")
    cluster.brokers = {n: b for n, b in cluster.brokers.items() if n != KAFKA_ID}
    kafka = KafkaBroker(tmp_path / "kafka", cluster.zookeeper_connect)
    try:
        # Kafka first, so that it is the first controller; killing it moves the
        # controller to a kafkacore broker (the test then has seen both sides)
        kafka.start()
        wait_until(lambda: cluster.controller_id() == KAFKA_ID, 120, "Kafka as the controller")
        for broker in cluster.brokers.values():
            broker.spawn()
        for broker in cluster.brokers.values():
            broker.wait_started(60)
        cluster.wait_for_brokers(3, 120)
        cluster.wait_for_metadata(120, others={KAFKA_ID: kafka.bootstrap})
        yield cluster, kafka
    finally:
        kafka.stop()
        cluster.stop()


def test_replicates_across_kafkacore_and_kafka_and_survives_the_controller(
    mixed: tuple[Cluster, KafkaBroker],
) -> None:
    cluster, kafka = mixed
    create_topic(cluster, "mixed", 3, 3, {"min.insync.replicas": "2"})
    leaders = {cluster.leader("mixed", p) for p in range(3)}
    assert KAFKA_ID in leaders and leaders & set(cluster.brokers)  # both kinds lead
    for p in range(3):  # and both kinds follow
        cluster.wait_for_isr("mixed", p, 3, 60)
    controllers: list[int] = []
    with BackgroundProducer(cluster, "mixed", 3) as background:
        wait_until(lambda: background.total() > 300, 60, "records flowing")
        # kill the controller until it has been on both sides: Kafka, then one of ours
        for _ in range(3):
            controller = wait_until(cluster.controller_id, 60, "a controller")
            controllers.append(controller)
            if KAFKA_ID in controllers and set(controllers) & set(cluster.brokers):
                break
            if controller == KAFKA_ID:
                kafka.kill()
            else:
                cluster.kill(controller)
            wait_until(
                lambda c=controller: (now := cluster.controller_id()) is not None and now != c,
                90,
                "a new controller",
            )
            for p in range(3):
                cluster.wait_for_leader("mixed", p, not_in=[controller], timeout_s=90)
            before = background.total()
            wait_until(lambda b=before: background.total() > b + 200, 90, "clients continue")
            if controller == KAFKA_ID:
                kafka.start()
            else:
                cluster.brokers[controller].start()
            wait_until(lambda c=controller: c in cluster.registered(), 120, "the broker back")
            for p in range(3):
                cluster.wait_for_isr("mixed", p, 3, 90)
    assert KAFKA_ID in controllers and set(controllers) & set(cluster.brokers), controllers
    check_delivery(cluster, "mixed", background.acked)
    # every replica, of either kind, holds the same bytes: Kafka followed our leaders and
    # ours followed Kafka's (a follower stores the leader's batches unchanged)
    for p in range(3):
        wait_until(lambda p=p: len(set(copies(cluster, kafka, p).values())) == 1, 90, f"p{p}")
        assert sorted(copies(cluster, kafka, p)) == [1, 2, KAFKA_ID]
    for p in range(3):
        assert len(cluster.partition_state("mixed", p)["isr"]) == 3  # type: ignore[index]


def copies(cluster: Cluster, kafka: KafkaBroker, partition: int) -> dict[int, bytes]:
    """Each broker's copy of ``mixed-<partition>``: its .log files concatenated."""
    dirs = {n: b.data / f"mixed-{partition}" for n, b in cluster.brokers.items()}
    dirs[KAFKA_ID] = kafka.directory / "data" / f"mixed-{partition}"
    return {
        n: b"".join(f.read_bytes() for f in sorted(d.glob("*.log")))
        for n, d in dirs.items()
        if d.is_dir()
    }
