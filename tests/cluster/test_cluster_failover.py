"""Failures of a three-broker kafkacore cluster, each on a fresh cluster: the leader
SIGKILLed and restarted five times under an idempotent acks=all producer with
``min.insync.replicas=2`` (every acknowledged record read exactly once and in order, the
replicas' logs equal at the end), the controller SIGKILLed (a new controller with a
higher epoch re-elects the leaders), the 2013 Jepsen case with unclean election off
(no acknowledged write is lost; the partition waits for its ISR), topic deletion with a
broker down, and committed offsets surviving the loss of the group coordinator."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from cluster.conftest import consume_all, create_topic, new_cluster, producer
from cluster.test_cluster_basics import wait_for_identical_replicas
from support.cluster import Cluster, wait_until
from support.zookeeper import ZooKeeperServer

pytestmark = [pytest.mark.timeout(420), pytest.mark.slow]

BOUNCES = 5


@pytest.fixture
def fresh(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[Cluster]:
    c = new_cluster(zookeeper, tmp_path)
    try:
        yield c.start()
    finally:
        c.stop()


class BackgroundProducer:
    """Sends ``key-seq`` values round-robin over ``partitions`` until stopped and keeps
    the acknowledged ones, per partition, in acknowledgement order."""

    def __init__(self, cluster: Cluster, topic: str, partitions: int) -> None:
        self.producer = producer(cluster)
        self.topic = topic
        self.partitions = partitions
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _on_delivery(self, err: object, msg: object) -> None:
        if err is None:
            self.acked[msg.partition()].append(msg.value())  # type: ignore[attr-defined]
        else:
            self.failed += 1

    def _run(self) -> None:
        seq = 0
        while not self._stop.is_set():
            self.producer.produce(
                self.topic,
                f"r{seq:07d}".encode(),
                partition=seq % self.partitions,
                on_delivery=self._on_delivery,
            )
            seq += 1
            self.producer.poll(0.002)
        self.producer.flush(60)

    def __enter__(self) -> BackgroundProducer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(90)

    def total(self) -> int:
        return sum(len(v) for v in self.acked.values())


def check_delivery(cluster: Cluster, topic: str, acked: dict[int, list[bytes]]) -> None:
    """Kafka's ``validate_delivery``: nothing acknowledged is missing; with idempotence
    no duplicates; per partition the acknowledged records in their order."""
    consumed = consume_all(cluster, topic, len(acked))
    for p, values in acked.items():
        got = consumed[p]
        assert len(got) == len(set(got)), f"duplicates in {topic}-{p}"
        missing = set(values) - set(got)
        assert not missing, f"{len(missing)} acknowledged records lost from {topic}-{p}"
        positions = [got.index(v) for v in values]
        assert positions == sorted(positions), f"{topic}-{p} out of order"


def test_leader_hard_bounce_loses_nothing(fresh: Cluster) -> None:
    create_topic(fresh, "bounce", 3, 3, {"min.insync.replicas": "2"})
    with BackgroundProducer(fresh, "bounce", 3) as background:
        wait_until(lambda: background.total() > 200, 30, "records flowing")
        for _ in range(BOUNCES):
            leader = fresh.leader("bounce", 0)
            before = background.total()
            fresh.kill(leader)
            fresh.wait_for_leader("bounce", 0, not_in=[leader])
            fresh.restart(leader)
            for p in range(3):
                fresh.wait_for_isr("bounce", p, 3)
            wait_until(lambda b=before: background.total() > b + 100, 60, "progress")
    assert background.total() > 1000
    check_delivery(fresh, "bounce", background.acked)
    for p in range(3):
        wait_for_identical_replicas(fresh, "bounce", p)


def test_controller_failover_elects_new_leaders(fresh: Cluster) -> None:
    create_topic(fresh, "ctl", 3, 3, {"min.insync.replicas": "2"})
    controller = wait_until(fresh.controller_id, 30, "a controller")
    epoch = fresh.controller_epoch() or 0
    led_by_controller = [p for p in range(3) if fresh.leader("ctl", p) == controller]
    assert led_by_controller  # round-robin gives every broker a leadership
    with BackgroundProducer(fresh, "ctl", 3) as background:
        wait_until(lambda: background.total() > 200, 30, "records flowing")
        fresh.kill(controller)
        new = wait_until(
            lambda: (c := fresh.controller_id()) is not None and c != controller and c,
            60,
            "a new controller",
        )
        assert (fresh.controller_epoch() or 0) > epoch
        for p in led_by_controller:
            assert fresh.wait_for_leader("ctl", p, not_in=[controller]) != controller
        before = background.total()
        wait_until(lambda: background.total() > before + 200, 60, "clients continue")
    assert new != controller
    check_delivery(fresh, "ctl", background.acked)
    fresh.restart(controller)
    for p in range(3):
        fresh.wait_for_isr("ctl", p, 3)


def test_jepsen_2013_isr_of_one_then_leader_dies_no_acked_write_lost(fresh: Cluster) -> None:
    """ISR shrinks to the leader alone, the leader takes acks=all writes (min ISR 1),
    then dies. Unclean election is off: the partition stays offline until the ISR member
    returns, and then every acknowledged write is there."""
    create_topic(fresh, "jepsen", 1, 3, {"min.insync.replicas": "1"})
    leader = fresh.leader("jepsen", 0)
    followers = [b for b in fresh.brokers if b != leader]
    for f in followers:
        fresh.kill(f)
    assert fresh.wait_for_isr("jepsen", 0, 1) == [leader]
    p = producer(fresh)
    acked = []
    for i in range(50):
        p.produce("jepsen", f"j{i}".encode(), on_delivery=lambda e, m: e or acked.append(m.value()))
    assert p.flush(30) == 0 and len(acked) == 50
    fresh.kill(leader)
    # as Kafka's hard_bounce: until the leader's ZooKeeper session has expired
    wait_until(lambda: leader not in fresh.registered(), 60, "the dead leader unregistered")
    for f in followers:
        fresh.restart(f)
    fresh.wait_for_brokers(2)
    time.sleep(3)  # the followers are back: no unclean election may happen meanwhile
    state = fresh.partition_state("jepsen", 0)
    assert state is not None and state["leader"] == -1 and state["isr"] == [leader]
    fresh.restart(leader)
    assert fresh.wait_for_leader("jepsen", 0) == leader
    assert consume_all(fresh, "jepsen", 1)[0][:50] == acked


def test_topic_deletion_completes_when_the_down_broker_returns(fresh: Cluster) -> None:
    create_topic(fresh, "doomed", 2, 3)
    controller = wait_until(fresh.controller_id, 30, "a controller")
    down = next(b for b in fresh.brokers if b != controller)
    fresh.kill(down)
    fresh.wait_for_brokers(2)
    admin = AdminClient({"bootstrap.servers": fresh.bootstrap})
    # as Kafka: the request times out while a replica is offline, the deletion goes on
    with pytest.raises(KafkaException) as raised:
        admin.delete_topics(["doomed"], operation_timeout=3)["doomed"].result(30)
    assert raised.value.args[0].name() == "REQUEST_TIMED_OUT"
    assert fresh.zk.exists("/admin/delete_topics/doomed")  # waits for the down broker
    assert fresh.zk.exists("/brokers/topics/doomed")
    fresh.restart(down)
    # the controller deletes the three nodes one after the other
    for path in ("/brokers/topics/doomed", "/config/topics/doomed", "/admin/delete_topics/doomed"):
        wait_until(lambda path=path: not fresh.zk.exists(path), 60, f"{path} deleted")
    for broker in fresh.brokers.values():
        wait_until(
            lambda b=broker: (
                not any(
                    d.name.startswith("doomed-") and not d.name.endswith("-delete")
                    for d in b.data.iterdir()
                )
            ),
            30,
            f"doomed partitions gone from broker {broker.node_id}",
        )


def test_committed_offsets_survive_the_coordinators_loss(fresh: Cluster) -> None:
    create_topic(fresh, "grp", 1, 3)
    consumer = Consumer(
        {
            "bootstrap.servers": fresh.bootstrap,
            "group.id": "survivors",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.commit(offsets=[TopicPartition("grp", 0, 42)], asynchronous=False)
    finally:
        consumer.close()
    # the coordinator is the leader of the group's __consumer_offsets partition
    offsets_partition = java_hash("survivors") % 3  # offsets.topic.num.partitions=3
    coordinator = fresh.leader("__consumer_offsets", offsets_partition)
    fresh.kill(coordinator)
    fresh.wait_for_leader("__consumer_offsets", offsets_partition, not_in=[coordinator])
    reader = Consumer({"bootstrap.servers": fresh.bootstrap, "group.id": "survivors"})
    try:
        committed = wait_until(
            lambda: reader.committed([TopicPartition("grp", 0)], timeout=10),
            60,
            "committed offsets from the new coordinator",
        )
        assert committed[0].offset == 42
    finally:
        reader.close()


def java_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return abs(h)
