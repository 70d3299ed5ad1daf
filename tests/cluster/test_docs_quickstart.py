"""The README's cluster quickstart (``support/snippets.py``) against a three-broker
kafkacore cluster on ZooKeeper (what ``make cluster`` starts): the replicated topic is
created and the acks=all record lands on every replica."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from support.cluster import Cluster
from support.snippets import pointed_at, snippets

ADDRESS = "localhost:9092,localhost:9093,localhost:9094"


def test_cluster(cluster: Cluster) -> None:
    code = pointed_at(snippets()["cluster"], ADDRESS, cluster.bootstrap)
    exec(compile(code, "README.md#cluster", "exec"), {})
    for p in range(6):  # six partitions, each with its three replicas in the ISR
        cluster.wait_for_isr("payments", p, 3)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "docs"})
    try:
        found = []
        for p in range(6):
            consumer.assign([TopicPartition("payments", p, 0)])
            low, high = consumer.get_watermark_offsets(TopicPartition("payments", p), timeout=30)
            if high > low:
                message = consumer.poll(30)
                assert message is not None and message.error() is None
                found.append((message.key(), message.value()))
        assert found == [(b"p-1", b"paid")]
    finally:
        consumer.close()
