"""KIP-392 on three Apache Kafka 4.3.1 brokers (KRaft, one per rack, Kafka's
``RackAwareReplicaSelector``): the same choices kafkacore's cluster makes in
``tests/cluster/test_fetch_from_follower_clients.py`` - a confluent-kafka consumer with
``client.rack`` in a follower's rack is sent to that follower, one in the leader's rack
stays on the leader - seen from the client's own statistics (which broker it fetches
each partition from)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from support.cluster import wait_until
from support.kafka_jars import JVM_FLAGS, kafka_libs, require, stop_process
from support.ports import free_port

pytestmark = [pytest.mark.interop, pytest.mark.downloads, pytest.mark.timeout(400)]

SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
SERVER_JVM = ("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
NODES = (1, 2, 3)
TOPIC = "near"
RECORDS = 500


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Three combined KRaft nodes of Kafka 4.3.1; their bootstrap servers."""
    java = require("java")
    libs = kafka_libs()
    home = tmp_path_factory.mktemp("kafka3")
    ports = {n: (free_port(), free_port()) for n in NODES}
    voters = ",".join(f"{n}@localhost:{ports[n][1]}" for n in NODES)
    cluster_id = uuid_to_base64(random_uuid())
    processes = []
    try:
        for n in NODES:
            port, controller = ports[n]
            props = home / f"node{n}.properties"
            props.write_text(
                "\n".join(
                    [
                        "process.roles=broker,controller",
                        f"node.id={n}",
                        f"controller.quorum.voters={voters}",
                        f"listeners=PLAINTEXT://localhost:{port},"
                        f"CONTROLLER://localhost:{controller}",
                        f"advertised.listeners=PLAINTEXT://localhost:{port}",
                        "controller.listener.names=CONTROLLER",
                        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                        f"log.dirs={home / f'data{n}'}",
                        f"broker.rack=rack-{n}",
                        f"replica.selector.class={SELECTOR}",
                        "offsets.topic.replication.factor=1",
                        "transaction.state.log.replication.factor=1",
                        "share.coordinator.state.topic.replication.factor=1",
                        "",
                    ]
                )
            )
            storage = ("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props))
            subprocess.run(
                [java, *SERVER_JVM, "-cp", f"{libs}/*", *storage],
                check=True,
                capture_output=True,
                timeout=120,
            )
        for n in NODES:
            props = home / f"node{n}.properties"
            out = (home / f"node{n}.log").open("ab")
            processes.append(
                subprocess.Popen(
                    [java, *SERVER_JVM, *JVM_FLAGS, "-cp", f"{libs}/*", "kafka.Kafka", str(props)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
        bootstrap = ",".join(f"localhost:{ports[n][0]}" for n in NODES)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        wait_until(
            lambda: len(admin.list_topics(timeout=5).brokers) == 3, 180, "three Kafka brokers"
        )
        yield bootstrap
    finally:
        # all at once: a quorum stopped one by one leaves the last node waiting on it
        for p in processes:
            if p.poll() is None:
                p.terminate()
        for p in processes:
            stop_process(p, grace_s=20)


def fetched_from(stats: list[dict[str, Any]]) -> list[int]:
    """The broker librdkafka fetched partition 0 from, report by report."""
    seen = []
    for report in stats:
        p = report.get("topics", {}).get(TOPIC, {}).get("partitions", {}).get("0")
        if p is not None and p.get("broker", -1) >= 0:
            seen.append(int(p["broker"]))
    return seen


def read(bootstrap: str, rack: str) -> tuple[list[bytes], list[int]]:
    stats: list[dict[str, Any]] = []
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"near-{rack}",
            "enable.auto.commit": False,
            "client.rack": rack,
            "statistics.interval.ms": 200,
            "stats_cb": lambda text: stats.append(json.loads(text)),
        }
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < RECORDS and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
        for _ in range(3):  # statistics taken while it still fetches
            consumer.poll(0.3)
        return values, fetched_from(stats)
    finally:
        consumer.close()


def test_kafka_sends_a_rack_3_consumer_to_broker_3_and_keeps_rack_1_on_the_leader(
    kafka: str,
) -> None:
    admin = AdminClient({"bootstrap.servers": kafka})
    admin.create_topics([NewTopic(TOPIC, 1, replica_assignment=[[1, 2, 3]])])[TOPIC].result(60)

    def in_sync() -> bool:
        p = admin.list_topics(TOPIC, timeout=5).topics[TOPIC].partitions[0]
        return p.leader == 1 and sorted(p.isrs) == [1, 2, 3]

    wait_until(in_sync, 60, "leader 1 and ISR [1, 2, 3]")
    producer = Producer({"bootstrap.servers": kafka, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(TOPIC, f"r-{i}".encode(), partition=0)
    assert producer.flush(60) == 0
    expected = [f"r-{i}".encode() for i in range(RECORDS)]
    values, brokers = read(kafka, "rack-3")
    assert values == expected and brokers and brokers[-1] == 3, brokers
    values, brokers = read(kafka, "rack-1")
    assert values == expected and brokers and set(brokers) == {1}, brokers
