"""Fixtures of the cluster tests: a three-broker kafkacore cluster on the session's
ZooKeeper server, in a fresh chroot per test module, plus the client helpers the tests
share (acks=all idempotent producing with the acknowledgements recorded, consuming a
partition to its end)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from support.cluster import PRODUCER_CONFIG, Cluster, wait_until
from support.zookeeper import ZooKeeperServer, unique_chroot


@pytest.fixture(scope="module")
def cluster(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    c = Cluster(unique_chroot(zookeeper.connect_string, "cluster"), tmp_path_factory.mktemp("c"))
    try:
        yield c.start()
    finally:
        c.stop()


def new_cluster(zookeeper: ZooKeeperServer, directory: Path, *overrides: str) -> Cluster:
    return Cluster(
        unique_chroot(zookeeper.connect_string, "cluster"), directory, overrides=overrides
    )


def create_topic(
    cluster: Cluster,
    name: str,
    partitions: int,
    replication_factor: int = 3,
    config: dict[str, str] | None = None,
) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for attempt in range(3):
        futures = admin.create_topics(
            [NewTopic(name, partitions, replication_factor, config=config or {})],
            operation_timeout=30,
            request_timeout=40,
        )
        try:
            futures[name].result(60)
            break
        except KafkaException as exc:
            # a client that found no controller in time (a busy machine, a controller
            # just elected) tries again; the topic may have been created meanwhile
            code = exc.args[0].code()
            if attempt > 0 and code == KafkaError.TOPIC_ALREADY_EXISTS:
                break
            if attempt == 2 or code != KafkaError._TIMED_OUT:
                raise
    for p in range(partitions):
        cluster.wait_for_leader(name, p)


def producer(cluster: Cluster, **extra: object) -> Producer:
    config: dict[str, object] = {"bootstrap.servers": cluster.bootstrap, **PRODUCER_CONFIG}
    config.update(extra)
    return Producer(config)


def consume_all(
    cluster: Cluster, topic: str, partitions: int, timeout_s: float = 60.0
) -> dict[int, list[bytes]]:
    """Every record of ``topic`` up to the current end of each partition (read
    committed), by partition, in offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": f"reader-{topic}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    try:
        ends = {}
        for p in range(partitions):

            def end(p: int = p) -> int | None:
                _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=5)
                return high + 1  # 0 is a valid end: shift so that it is truthy

            ends[p] = wait_until(end, timeout_s, f"the end offset of {topic}-{p}") - 1
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        positions = {p: 0 for p in range(partitions)}
        wait_until(
            lambda: _poll_until(consumer, out, positions, ends),
            timeout_s,
            f"all of {topic} consumed",
        )
        return out
    finally:
        consumer.close()


def _poll_until(
    consumer: Consumer,
    out: dict[int, list[bytes]],
    positions: dict[int, int],
    ends: dict[int, int],
) -> bool:
    for message in consumer.consume(500, 1.0):
        if message.error():
            continue
        p = message.partition()
        if message.offset() >= positions[p]:
            out[p].append(message.value())
            positions[p] = message.offset() + 1
    return all(positions[p] >= ends[p] for p in ends)
