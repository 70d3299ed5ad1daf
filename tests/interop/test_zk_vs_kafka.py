"""Our ZooKeeper data against Kafka 3.9's own ``kafka.zk.KafkaZkClient``, both ways:

* what our KafkaZkClient writes, Kafka's client reads back identically
  (``java/ZkRead.java read``), and ZooKeeper's own CLI (``ZooKeeperMain``) shows it;
* what Kafka's client and ``AdminZkClient`` write (``java/ZkRead.java write``: broker
  registration, controller election, topic creation with ids, partition states, configs,
  deletion marks, ISR change notifications, a producer id block) our client decodes.

Needs Java 17+ and Kafka 3.9.1's jars (``KAFKA_VERSION=3.9.1 scripts/kafka-jars.sh``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers
from kafkacore.zk.client import ControllerMovedError, KafkaZkClient
from kafkacore.zk.data import (
    BrokerRegistration,
    Endpoint,
    LeaderIsrState,
    TopicAssignment,
    topic_id_to_string,
)
from kafkacore.zk.errors import TopicAlreadyMarkedForDeletion
from support.kafka_jars import JVM_FLAGS, compile_java
from support.zookeeper import ZooKeeperServer, zookeeper_libs

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "ZkRead.java"
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 180) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


@dataclass(frozen=True)
class Kafka39:
    """ZkRead.java compiled against Kafka 3.9.1's jars, and ZooKeeper's CLI."""

    libs: Path
    classes: Path

    def command(self, main: str, *args: str) -> list[str]:
        return ["java", *JVM_FLAGS, "-cp", f"{self.classes}:{self.libs}/*", main, *args]

    def run(self, main: str, *args: str) -> str:
        proc = subprocess.run(
            self.command(main, *args), capture_output=True, text=True, timeout=120, check=False
        )
        if proc.returncode != 0:
            raise AssertionError(f"{main} {args} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
        return proc.stdout

    def zk_read(self, connect: str, *topics: str) -> dict[str, Any]:
        out = self.run("ZkRead", "read", connect, *topics)
        return dict(json.loads(out.strip().splitlines()[-1]))

    def zk_cli(self, server: str, *command: str) -> str:
        """ZooKeeper's own ``zkCli`` (``ZooKeeperMain``) running one command."""
        return self.run("org.apache.zookeeper.ZooKeeperMain", "-server", server, *command)


@pytest.fixture(scope="module")
def kafka39(tmp_path_factory: pytest.TempPathFactory) -> Kafka39:
    libs = zookeeper_libs()
    classes = tmp_path_factory.mktemp("zk-interop-classes")
    compile_java(libs, classes, [JAVA_SOURCE])
    return Kafka39(libs, classes)


def test_kafka_reads_what_we_write(
    kafka39: Kafka39, zookeeper: ZooKeeperServer, zk_chroot: str
) -> None:
    orders_id = uuid.uuid4()
    orders = TopicAssignment(
        "orders",
        {0: (1, 2), 1: (2, 1), 2: (1, 2, 3)},
        adding={2: (3,)},
        topic_id=orders_id,
    )
    legacy = TopicAssignment("legacy", {0: (2,)})
    b1 = BrokerRegistration(
        id=1,
        endpoints=(
            Endpoint("PLAINTEXT", "127.0.0.1", 19092, "PLAINTEXT"),
            Endpoint("INTERNAL", "127.0.0.1", 19093, "SSL"),
        ),
        rack="r1",
    )
    b2 = BrokerRegistration(
        id=2, endpoints=(Endpoint("PLAINTEXT", "localhost", 29092, "PLAINTEXT"),)
    )
    s0 = LeaderIsrState(1, 0, (1, 2), 1)
    s0_shrunk = LeaderIsrState(1, 0, (1,), 1)
    s1 = LeaderIsrState(-1, 2, (1,), 1)
    s2 = LeaderIsrState(2, 5, (2,), 1, leader_recovery_state=1)

    async def main() -> tuple[dict[str, Any], dict[int, int], str, str]:
        async with (
            await KafkaZkClient.connect(zk_chroot) as one,
            await KafkaZkClient.connect(zk_chroot) as two,
        ):
            assert await one.get_or_create_cluster_id("ours-cluster") == "ours-cluster"
            epochs = {1: await one.register_broker(b1), 2: await two.register_broker(b2)}
            epoch, v = await one.register_controller_and_increment_epoch(1)
            assert (epoch, v) == (1, 1)
            await one.create_topic_assignment(orders)
            await one.create_topic_assignment(legacy)
            await one.create_partition_states(
                "orders", {0: s0, 1: s1, 2: s2}, controller_epoch_zk_version=v
            )
            assert (
                await one.update_partition_state(
                    "orders", 0, s0_shrunk, expected_version=0, controller_epoch_zk_version=v
                )
                == 1
            )
            await one.set_entity_config(
                "topics", "orders", {"retention.ms": "1000", "cleanup.policy": "compact"}
            )
            await one.mark_topic_for_deletion("legacy")
            await one.create_isr_change_notification([("orders", 0)])
            # Kafka reads while our sessions (and their ephemeral nodes) are alive.
            seen = await asyncio.to_thread(kafka39.zk_read, zk_chroot, "orders", "legacy")
            chroot = "/" + zk_chroot.split("/", 1)[1]
            ls = await asyncio.to_thread(
                kafka39.zk_cli, zookeeper.connect_string, "ls", f"{chroot}/brokers/topics"
            )
            get = await asyncio.to_thread(
                kafka39.zk_cli,
                zookeeper.connect_string,
                "get",
                f"{chroot}/brokers/topics/orders/partitions/2/state",
            )
            return seen, epochs, ls, get

    seen, epochs, ls, get = run(main())
    assert seen["cluster_id"] == "ours-cluster"
    assert seen["broker_ids"] == [1, 2]
    assert seen["brokers"] == [
        {
            "id": 1,
            "endpoints": ["PLAINTEXT://127.0.0.1:19092", "INTERNAL://127.0.0.1:19093"],
            "listeners": {"INTERNAL": "SSL", "PLAINTEXT": "PLAINTEXT"},
            "rack": "r1",
            "epoch": epochs[1],
            "get_broker_same": True,
        },
        {
            "id": 2,
            "endpoints": ["PLAINTEXT://localhost:29092"],
            "listeners": {"PLAINTEXT": "PLAINTEXT"},
            "rack": None,
            "epoch": epochs[2],
            "get_broker_same": True,
        },
    ]
    assert seen["topics"] == ["legacy", "orders"]
    assert seen["assignments"] == {
        "orders": {"0": [1, 2], "1": [2, 1], "2": [1, 2, 3]},
        "legacy": {"0": [2]},
    }
    assert seen["full_assignments"]["orders"]["2"] == {
        "replicas": [1, 2, 3],
        "adding": [3],
        "removing": [],
    }
    assert seen["full_assignments"]["orders"]["0"] == {
        "replicas": [1, 2],
        "adding": [],
        "removing": [],
    }
    # Kafka's Uuid.toString of what we wrote is our string; no id for the legacy topic.
    assert seen["topic_ids"] == {"orders": topic_id_to_string(orders_id)}
    assert seen["states"] == {
        "orders": {
            "0": {
                "leader": 1,
                "leader_epoch": 0,
                "isr": [1],
                "controller_epoch": 1,
                "partition_epoch": 1,
                "leader_recovery_state": 0,
            },
            "1": {
                "leader": -1,
                "leader_epoch": 2,
                "isr": [1],
                "controller_epoch": 1,
                "partition_epoch": 0,
                "leader_recovery_state": 0,
            },
            "2": {
                "leader": 2,
                "leader_epoch": 5,
                "isr": [2],
                "controller_epoch": 1,
                "partition_epoch": 0,
                "leader_recovery_state": 1,
            },
        }
    }
    assert seen["controller_id"] == 1
    assert seen["controller_epoch"] == [1, 1]
    assert seen["configs"] == {
        "orders": {"retention.ms": "1000", "cleanup.policy": "compact"},
        "legacy": {},
    }
    assert seen["marked_for_deletion"] == {"orders": False, "legacy": True}
    assert seen["topics_to_delete"] == ["legacy"]
    assert seen["isr_change_partitions"] == [["orders", 0]]
    # ZooKeeper's own CLI lists and prints the very bytes we wrote.
    assert "[legacy, orders]" in ls.splitlines()
    assert s2.encode().decode() in get.splitlines()


def test_we_read_what_kafka_writes(kafka39: Kafka39, zk_chroot: str) -> None:
    writer = subprocess.Popen(
        kafka39.command(
            "ZkRead", "write", zk_chroot, "5", "h5", "9092", "rack-5", "orders", "gone", "cid-1"
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdin is not None
        line = writer.stdout.readline()
        if not line:
            writer.wait(30)
            assert writer.stderr is not None
            raise AssertionError(f"ZkRead write failed:\n{writer.stderr.read()[-4000:]}")
        wrote = json.loads(line)
        assert writer.stdout.readline().strip() == "READY"

        async def main() -> None:
            async with await KafkaZkClient.connect(zk_chroot) as zk:
                assert await zk.get_cluster_id() == "cid-1"
                assert await zk.get_or_create_cluster_id("other") == "cid-1"
                brokers = await zk.get_all_brokers()
                assert list(brokers) == [5]
                reg, epoch = brokers[5]
                assert epoch == wrote["broker_epoch"]
                assert reg.endpoints == (
                    Endpoint("PLAINTEXT", "h5", 9092, "PLAINTEXT"),
                    Endpoint("INTERNAL", "h5", 9093, "SSL"),
                )
                assert reg.rack == "rack-5" and reg.version == 5 and reg.features == {}
                # Kafka 3.9 writes /controller as version 2 (kraftControllerEpoch -1).
                assert await zk.get_controller_id() == 5
                assert await zk.get_controller_epoch() == tuple(wrote["controller_epoch"]) == (1, 1)
                with pytest.raises(ControllerMovedError):
                    await zk.register_controller_and_increment_epoch(6)
                assert await zk.get_all_topics() == ["gone", "orders"]
                orders = await zk.get_topic_assignment("orders")
                assert orders is not None
                assert orders.partitions == {0: (5,), 1: (5,)}
                assert orders.adding == {} and orders.removing == {}
                assert orders.topic_id is not None
                assert topic_id_to_string(orders.topic_id) == wrote["topic_ids"]["orders"]
                assert await zk.get_partition_states("orders") == {
                    0: (LeaderIsrState(5, 3, (5,), 1, 0), 0),
                    1: (LeaderIsrState(5, 4, (5,), 1, 1), 0),
                }
                assert await zk.get_entity_config("topics", "orders") == {
                    "retention.ms": "777",
                    "cleanup.policy": "compact",
                }
                changes = await zk.get_config_changes()
                assert [await zk.get_config_change(c) for c in changes] == ["topics/orders"]
                assert await zk.get_topics_to_delete() == ["gone"]
                with pytest.raises(TopicAlreadyMarkedForDeletion):
                    await zk.mark_topic_for_deletion("gone")
                names = await zk.get_isr_change_notifications()
                assert await zk.get_isr_change_partitions(names) == [("orders", 0)]
                # Our allocation continues after Kafka's block.
                assert wrote["producer_id_block"] == [0, 999]
                assert await zk.allocate_producer_id_block(1) == (1000, 1999)

                # Kafka's session ends: its ephemeral registration and /controller go.
                writer.stdin.close()  # type: ignore[union-attr]
                await asyncio.to_thread(writer.wait, 60)
                assert writer.returncode == 0
                assert await zk.get_broker_ids() == []
                assert await zk.get_controller_id() is None
                assert await zk.register_controller_and_increment_epoch(6) == (2, 2)

        run(main())
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(30)


PLACEMENTS = [
    # (partitions, replication factor, fixed start index, start partition id, brokers)
    (10, 3, 0, -1, [(b, None) for b in range(5)]),
    (17, 2, 3, -1, [(b, None) for b in (1, 2, 5, 9)]),
    (6, 3, 2, 6, [(b, None) for b in (0, 1, 2, 3)]),
    (7, 1, 1, -1, [(b, None) for b in (4, 7)]),
    (
        12,
        3,
        0,
        -1,
        [(0, "rack1"), (1, "rack3"), (2, "rack3"), (3, "rack2"), (4, "rack2"), (5, "rack1")],
    ),
    (20, 2, 4, -1, [(1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "c")]),
    (9, 4, 1, 3, [(1, "a"), (2, "b"), (3, "a"), (4, "b"), (5, "a"), (6, "c")]),
]


def test_replica_placement_matches_kafka(kafka39: Kafka39) -> None:
    jobs = []
    for n, rf, start, first, brokers in PLACEMENTS:
        specs = [f"{b}:{r}" if r else str(b) for b, r in brokers]
        jobs.append(["assign", str(n), str(rf), str(start), str(first), *specs])
    outputs = [kafka39.run("ZkRead", *job) for job in jobs]
    for (n, rf, start, first, brokers), out in zip(PLACEMENTS, outputs, strict=True):
        kafka = {int(p): tuple(r) for p, r in json.loads(out.strip().splitlines()[-1]).items()}
        placed = assign_replicas_to_brokers(
            [BrokerMetadata(b, r) for b, r in brokers],
            n,
            rf,
            fixed_start_index=start,
            start_partition_id=first,
        )
        ours = {p: tuple(r) for p, r in placed.items()}
        assert ours == kafka, (n, rf, start, first, brokers)
