"""Replication throttles (KIP-73) on a three-broker cluster, measured in bytes per second.

1. Kafka's ``kafka-reassign-partitions`` adds broker 3 to two partitions holding ~16 MiB
   each: ``throttled-0`` on [1, 2] led by 1, ``throttled-1`` on [2, 1] led by 2. The
   throttled replica lists are written as the tool writes them (``p:<current replica>``
   for the leaders, ``p:<added replica>`` for the followers) so that partition 0 is
   throttled by its leader alone (broker 1's ``leader.replication.throttled.rate``) and
   partition 1 by its follower alone (broker 3's ``follower.replication.throttled.rate``),
   both per-broker dynamic configs. Broker 3's copy of each grows at the throttle (±10 %),
   measured as the slope of its size over the steady part of the move (the first 3 MiB
   and the last 2 MiB left out). The tool's ``--verify`` then removes the throttles.
2. Replicas in the ISR are not throttled: with both rates set as cluster defaults by
   Kafka's ``kafka-configs --entity-default`` (through one broker; the others apply them
   from ZooKeeper's change notification, as DescribeConfigs on each shows) and every
   partition throttled (``*``), acks=all writes to a partition whose followers are in sync
   go several times faster than the throttle, and the followers keep up.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from cluster.conftest import producer
from compat.conftest import KafkaTools
from support.cluster import Cluster, wait_until
from support.kafka_jars import KAFKA_ZK_VERSION, kafka_libs

# Kafka 3.9's jars (scripts/kafka-jars.sh) run the tools
# serial: the throttled rates are measured (within 10 %); see `serial` in pyproject.toml
pytestmark = [pytest.mark.timeout(180), pytest.mark.downloads, pytest.mark.serial]

MiB = 1024 * 1024
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
CONFIGS = "kafka.admin.ConfigCommand"
SET = AlterConfigOpType.SET
SIDES = ("leader", "follower")


@pytest.fixture(scope="module")
def kafka39() -> KafkaTools:
    """Kafka 3.9's tools (the last release with ZooKeeper mode)."""
    return KafkaTools(kafka_libs(KAFKA_ZK_VERSION))


def log_size(cluster: Cluster, node_id: int, topic: str, partition: int) -> int:
    directory = cluster.brokers[node_id].data / f"{topic}-{partition}"
    return sum(p.stat().st_size for p in directory.glob("*.log")) if directory.is_dir() else 0


class SizeSampler(threading.Thread):
    """``(monotonic time, bytes)`` of broker ``node_id``'s copy of each of ``topic``'s
    ``partitions``, every ``interval_s``."""

    def __init__(
        self, cluster: Cluster, node_id: int, topic: str, partitions: int, interval_s: float = 0.1
    ) -> None:
        super().__init__(daemon=True)
        self.where = (cluster, node_id, topic)
        self.samples: dict[int, list[tuple[float, int]]] = {p: [] for p in range(partitions)}
        self.interval_s = interval_s
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            for partition, samples in self.samples.items():
                samples.append((time.monotonic(), log_size(*self.where, partition)))
            self._done.wait(self.interval_s)

    def stop(self) -> dict[int, list[tuple[float, int]]]:
        self._done.set()
        self.join()
        return self.samples


def slope(points: list[tuple[float, int]]) -> float:
    """Least-squares bytes per second."""
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_b = sum(b for _, b in points) / n
    num = sum((t - mean_t) * (b - mean_b) for t, b in points)
    den = sum((t - mean_t) ** 2 for t, _ in points)
    return num / den


def produce(
    cluster: Cluster, topic: str, total: int, partitions: int = 1, size: int = 100 * 1024
) -> float:
    """``total`` bytes of incompressible values into each partition, acks=all; the
    seconds it took."""
    p = producer(cluster, **{"linger.ms": 20, "queue.buffering.max.kbytes": 65536})
    value = os.urandom(size)
    start = time.monotonic()
    for i in range(total // size):
        for partition in range(partitions):
            while True:
                try:
                    p.produce(topic, value[i % 7 :] + value[: i % 7], partition=partition)
                    break
                except BufferError:
                    p.poll(0.05)
        p.poll(0)
    assert p.flush(60) == 0
    return time.monotonic() - start


def create(cluster: Cluster, topic: str, *assignment: list[int]) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    new = NewTopic(topic, len(assignment), -1, replica_assignment=list(assignment))
    admin.create_topics([new])[topic].result(30)
    for p, replicas in enumerate(assignment):
        cluster.wait_for_isr(topic, p, len(replicas))


def test_reassignment_moves_at_the_leader_and_follower_throttles(
    cluster: Cluster, kafka39: KafkaTools, tmp_path: Path
) -> None:
    try:
        _move_with_split_throttles(cluster, kafka39, tmp_path)
    finally:
        # the tool's --verify clears them; a failure before it must not leave them behind
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        for node, side in ((1, "leader"), (3, "follower")):
            entry = ConfigEntry(
                f"{side}.replication.throttled.rate",
                "",
                incremental_operation=AlterConfigOpType.DELETE,
            )
            broker = ConfigResource(
                ConfigResource.Type.BROKER, str(node), incremental_configs=[entry]
            )
            _alter(admin, broker)


def _move_with_split_throttles(cluster: Cluster, kafka39: KafkaTools, tmp_path: Path) -> None:
    throttle = 2 * MiB
    topic = "throttled"
    create(cluster, topic, [1, 2], [2, 1])
    amount = 16 * MiB
    produce(cluster, topic, amount, partitions=2)
    totals = {p: log_size(cluster, p + 1, topic, p) for p in (0, 1)}
    assert min(totals.values()) >= amount * 0.95
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    # partition 0: its leader's side only; partition 1: its follower's side only
    lists = {"leader": "0:1,0:2", "follower": "1:3"}
    _alter(
        admin,
        ConfigResource(
            ConfigResource.Type.TOPIC,
            topic,
            incremental_configs=[
                ConfigEntry(f"{side}.replication.throttled.replicas", v, incremental_operation=SET)
                for side, v in lists.items()
            ],
        ),
    )
    for node, side in ((1, "leader"), (3, "follower")):
        key = f"{side}.replication.throttled.rate"
        entry = ConfigEntry(key, str(throttle), incremental_operation=SET)
        broker = ConfigResource(ConfigResource.Type.BROKER, str(node), incremental_configs=[entry])
        _alter(admin, broker)
        assert _describe(cluster, node, ConfigResource.Type.BROKER, str(node), key) == str(throttle)
        wait_until(
            lambda node=node, side=side: (
                _describe(
                    cluster,
                    node,
                    ConfigResource.Type.TOPIC,
                    topic,
                    f"{side}.replication.throttled.replicas",
                )
                == lists[side]
            ),
            20,
            f"the throttled replicas of {topic} on broker {node}",
        )
    plan = tmp_path / "plan.json"
    moves = [
        {"topic": topic, "partition": 0, "replicas": [1, 2, 3]},
        {"topic": topic, "partition": 1, "replicas": [2, 1, 3]},
    ]
    plan.write_text(json.dumps({"version": 1, "partitions": moves}))
    b = ("--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan))
    sampler = SizeSampler(cluster, 3, topic, 2)
    sampler.start()
    try:
        kafka39.run(REASSIGN, *b, "--execute").check()
        wait_until(
            lambda: all(log_size(cluster, 3, topic, p) >= totals[p] for p in (0, 1)),
            60,
            f"broker 3's copies of {topic}",
        )
    finally:
        samples = sampler.stop()
    rates = {}
    for p, side in ((0, "leader"), (1, "follower")):
        steady = [(t, s) for t, s in samples[p] if 3 * MiB <= s <= totals[p] - 2 * MiB]
        moved = [(t, s) for t, s in samples[p] if 0 < s < totals[p]]
        assert len(steady) > 20, (
            f"{topic}-{p} ({side} throttle) moved too fast to be throttled: "
            f"{moved[-1][1] if moved else totals[p]} bytes in "
            f"{moved[-1][0] - moved[0][0] if moved else 0:.1f} s"
        )
        rates[side] = slope(steady)
        moving = [t for t, s in samples[p] if 0 < s < totals[p]]
        print(
            f"{topic}-{p}, {side} throttle {throttle} B/s: measured {rates[side]:.0f} B/s "
            f"({rates[side] / throttle:.3f}) over {steady[-1][0] - steady[0][0]:.1f} s; "
            f"{totals[p]} bytes moved in {moving[-1] - moving[0]:.1f} s"
        )
    for p in (0, 1):
        cluster.wait_for_isr(topic, p, 3)

    def completed() -> bool:
        znode = json.loads(cluster.zk.get(f"/brokers/topics/{topic}")[0])
        return not znode.get("adding_replicas") and znode["partitions"]["1"] == [2, 1, 3]

    wait_until(completed, 60, "the reassignment to complete")
    cluster.wait_for_replicas(topic, {0: [1, 2, 3], 1: [2, 1, 3]})
    out = kafka39.run(REASSIGN, *b, "--verify").check()
    assert out.stdout.count("is completed") == 2, out.stdout
    stored = json.loads(cluster.zk.get(f"/config/topics/{topic}")[0])["config"]
    assert not any(key.endswith(".replication.throttled.replicas") for key in stored)
    for node in (1, 3):
        configs = json.loads(cluster.zk.get(f"/config/brokers/{node}")[0])["config"]
        assert not any(key.endswith(".replication.throttled.rate") for key in configs)
    assert rates["leader"] == pytest.approx(throttle, rel=0.1)
    assert rates["follower"] == pytest.approx(throttle, rel=0.1)


def _describe(cluster: Cluster, node: int, kind: ConfigResource.Type, name: str, key: str) -> str:
    """``key`` of a resource as broker ``node`` describes it."""
    admin = AdminClient({"bootstrap.servers": cluster.brokers[node].bootstrap})
    resource = ConfigResource(kind, name)
    configs = admin.describe_configs([resource])[resource].result(10)
    return str(configs[key].value)


def _describe_rate(cluster: Cluster, node: int) -> str:
    return _describe(
        cluster, node, ConfigResource.Type.BROKER, str(node), "follower.replication.throttled.rate"
    )


def _alter(admin: AdminClient, resource: ConfigResource) -> None:
    admin.incremental_alter_configs([resource])[resource].result(30)


def test_in_sync_replicas_are_not_throttled(cluster: Cluster, kafka39: KafkaTools) -> None:
    throttle = 512 * 1024
    create(cluster, "insync", [1, 2, 3])
    admin = AdminClient({"bootstrap.servers": cluster.brokers[1].bootstrap})
    every = [
        ConfigEntry(f"{side}.replication.throttled.replicas", "*", incremental_operation=SET)
        for side in SIDES
    ]
    _alter(admin, ConfigResource(ConfigResource.Type.TOPIC, "insync", incremental_configs=every))
    rates = ",".join(f"{side}.replication.throttled.rate={throttle}" for side in SIDES)
    # kafka-configs --entity-default: one broker takes the request, the others the ZooKeeper
    # change notification
    configs = ("--bootstrap-server", cluster.brokers[1].bootstrap, "--entity-type", "brokers")
    kafka39.run(CONFIGS, *configs, "--entity-default", "--alter", "--add-config", rates).check()
    for node in cluster.brokers:
        wait_until(
            lambda node=node: _describe_rate(cluster, node) == str(throttle),
            20,
            f"the default rate in force on broker {node}",
        )
    amount = 8 * MiB
    seconds = produce(cluster, "insync", amount)
    print(f"throttle {throttle} B/s: {amount / seconds:.0f} B/s written in sync")
    # throttled, this would take about 15 s (8 MiB at 0.5 MiB/s)
    assert amount / seconds > 2 * throttle
    wait_until(
        lambda: len({log_size(cluster, n, "insync", 0) for n in cluster.brokers}) == 1,
        10,
        "every replica of insync-0 to be as long as the leader's",
    )
    state = cluster.partition_state("insync", 0)
    assert state is not None and sorted(state["isr"]) == [1, 2, 3]
