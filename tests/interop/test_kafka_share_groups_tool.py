"""Kafka 4.3.1's own ``kafka-share-groups`` (``org.apache.kafka.tools.consumer.group.
ShareGroupCommand``) against kafkacore, and the same commands against Apache Kafka 4.3.1:
after the same share-consumer run (confluent-kafka's ``ShareConsumer``, explicit
acknowledgement, every record accepted once),
list, describe (offsets with lag, state), reset offsets (dry run and execute), delete
offsets and delete the group print the same (coordinator addresses aside)."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from support.brokers import Broker
from support.kafka_jars import JVM_FLAGS, require
from support.raw_brokers import KafkaNode, Raw
from support.share_raw import ShareBroker

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

OVERRIDES = [
    "offsets.topic.num.partitions=1",
    "share.coordinator.state.topic.num.partitions=1",
    "share.coordinator.state.topic.replication.factor=1",
    "share.coordinator.state.topic.min.isr=1",
]
RECORDS = {0: 30, 1: 70}  # per partition


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShareBroker]:
    node = KafkaNode(kafka_libs, tmp_path_factory.mktemp("kafka"), OVERRIDES).start()
    try:
        yield ShareBroker(Raw(node.port, node.home / "data"))
    finally:
        node.stop()


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShareBroker]:
    data = tmp_path_factory.mktemp("kafkacore") / "data"
    broker = Broker(data, OVERRIDES).start()
    try:
        yield ShareBroker(Raw(broker.port, data))
    finally:
        broker.stop()


def _consume(broker: ShareBroker, topic: str, group: str) -> None:
    """One share consumer takes and accepts every record. (Not a mix of accepted and
    released records: how far the stored start offset has moved then depends on how
    many redeliveries the consumer saw before closing, on Kafka as on kafkacore.)"""
    bootstrap = f"localhost:{broker.raw.port}"
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, count in RECORDS.items():
        for i in range(count):
            producer.produce(topic, value=str(i), partition=partition)
    producer.flush(30)
    assert broker.set_group_configs(group, {"share.auto.offset.reset": "earliest"}).error_code == 0
    consumer = ShareConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
        }
    )
    consumer.subscribe([topic])
    seen: set[tuple[int, int]] = set()
    deadline = time.monotonic() + 120
    try:
        while len(seen) < sum(RECORDS.values()) and time.monotonic() < deadline:
            for m in consumer.poll(0.5) or []:
                partition, offset = m.partition(), m.offset()
                assert partition is not None and offset is not None
                seen.add((partition, offset))
                consumer.acknowledge(m, AcknowledgeType.ACCEPT)
            consumer.commit_sync()
    finally:
        consumer.close()
    assert len(seen) == sum(RECORDS.values())


def _tool(java_libs: Path, broker: ShareBroker, *args: str) -> tuple[int, str]:
    cmd = [
        require("java"),
        *JVM_FLAGS,
        "-cp",
        f"{java_libs}/*",
        "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
        "--bootstrap-server",
        f"localhost:{broker.raw.port}",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _canonical(text: str, group: str, topic: str) -> list[str]:
    """The output's non-empty lines with the coordinator's address and the random names
    replaced, columns single-spaced, and sorted (rows come in map order)."""
    text = re.sub(r"localhost:\d+\s+\(\d+\)", "COORDINATOR", text)
    text = text.replace(group, "GROUP").replace(topic, "TOPIC")
    return sorted(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _session(java_libs: Path, broker: ShareBroker) -> list[tuple[str, int, list[str]]]:
    topic, group = f"tool-{uuid.uuid4().hex[:8]}", f"tool-g-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=len(RECORDS))
    _consume(broker, topic, group)
    to_latest = ["--reset-offsets", "--group", group, "--topic", f"{topic}:1", "--to-latest"]
    commands = [
        ["--list"],
        ["--describe", "--group", group],
        ["--describe", "--group", group, "--state"],
        ["--describe", "--group", group, "--members"],
        ["--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--dry-run"],
        [*to_latest, "--dry-run"],
        [*to_latest, "--execute"],
        ["--describe", "--group", group],
        ["--delete-offsets", "--group", group, "--topic", topic],
        ["--describe", "--group", group],
        ["--delete", "--group", group],
        ["--describe", "--group", group],
    ]
    out = []
    for args in commands:
        rc, text = _tool(java_libs, broker, *args)
        lines = _canonical(text, group, topic)
        if args == ["--list"]:  # other tests' groups may be there too
            lines = [line for line in lines if line == "GROUP"]
        out.append((" ".join(args).replace(group, "GROUP").replace(topic, "TOPIC"), rc, lines))
    return out


def test_kafka_share_groups_tool_agrees(
    kafka_libs: Path, kafka: ShareBroker, kafkacore: ShareBroker
) -> None:
    ours = _session(kafka_libs, kafkacore)
    theirs = _session(kafka_libs, kafka)
    for o, t in zip(ours, theirs, strict=True):
        assert o == t, f"kafka-share-groups {t[0]}:\n kafka     {t[1:]}\n kafkacore {o[1:]}"
    # every record accepted: no lag; after the execute, partition 1 starts at its end
    assert ours[1][0] == "--describe --group GROUP"
    rows = [line.split() for line in ours[1][2] if line.split()[2] in ("0", "1")]
    assert [(row[2], row[-1]) for row in rows] == [("0", "0"), ("1", "0")], ours[1]
    assert ours[5][1:] == (0, ["GROUP TOPIC 1 70", "GROUP TOPIC PARTITION NEW-OFFSET"]), ours[5]
    assert ours[7][0] == "--describe --group GROUP"
    assert "GROUP TOPIC 1 70 0" in ours[7][2], ours[7]
