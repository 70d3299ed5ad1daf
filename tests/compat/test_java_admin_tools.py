"""Kafka 4.3.1 admin tools that need APIs being implemented in parallel (ListPartition-
Reassignments for kafka-topics --describe, DescribeConfigs/IncrementalAlterConfigs for
kafka-configs, DeleteRecords for kafka-delete-records, DescribeLogDirs for kafka-log-dirs).
Kept in this separate module; see COMPAT.md for their status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.conftest import Broker, KafkaTools

pytestmark = pytest.mark.timeout(180)

TOPICS = "org.apache.kafka.tools.TopicCommand"
PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
CONFIGS = "kafka.admin.ConfigCommand"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"


@pytest.fixture(scope="module")
def topic(kafka_tools: KafkaTools, broker: Broker) -> str:
    b = ("--bootstrap-server", broker.bootstrap)
    kafka_tools.run(TOPICS, *b, "--create", "--topic", "ja", "--partitions", "2").check()
    lines = "".join(f"m{i}\n" for i in range(10))
    kafka_tools.run(
        PRODUCER,
        *b,
        "--topic",
        "ja",
        "--producer-property",
        "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
        stdin=lines,
    ).check()
    return "ja"


def test_topics_describe(kafka_tools: KafkaTools, broker: Broker, topic: str) -> None:
    # Needs ListPartitionReassignments (46): kafka-topics --describe lists reassignments.
    out = (
        kafka_tools.run(
            TOPICS, "--bootstrap-server", broker.bootstrap, "--describe", "--topic", topic
        )
        .check()
        .stdout
    )
    assert f"Topic: {topic}\tTopicId:" in out and "PartitionCount: 2" in out
    assert "Partition: 1\tLeader: 1\tReplicas: 1\tIsr: 1" in out


def test_configs_describe_and_alter(kafka_tools: KafkaTools, broker: Broker, topic: str) -> None:
    # Needs DescribeConfigs (32) and IncrementalAlterConfigs (44).
    b = ("--bootstrap-server", broker.bootstrap)
    kafka_tools.run(
        CONFIGS,
        *b,
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--add-config",
        "retention.ms=12345",
    ).check()
    out = (
        kafka_tools.run(
            CONFIGS, *b, "--describe", "--entity-type", "topics", "--entity-name", topic
        )
        .check()
        .stdout
    )
    assert "retention.ms=12345" in out
    brokers = (
        kafka_tools.run(
            CONFIGS, *b, "--describe", "--entity-type", "brokers", "--entity-name", "1", "--all"
        )
        .check()
        .stdout
    )
    assert "log.retention.hours=" in brokers


def test_delete_records(
    kafka_tools: KafkaTools, broker: Broker, topic: str, tmp_path: Path
) -> None:
    # Needs DeleteRecords (21).
    spec = tmp_path / "delete.json"
    spec.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": 2}]})
    )
    b = ("--bootstrap-server", broker.bootstrap)
    out = kafka_tools.run(DELETE_RECORDS, *b, "--offset-json-file", str(spec)).check().stdout
    assert "low_watermark: 2" in out
    earliest = kafka_tools.run(OFFSETS, *b, "--topic", topic, "--partitions", "0", "--time", "-2")
    assert earliest.check().stdout.split() == [f"{topic}:0:2"]


def test_log_dirs(kafka_tools: KafkaTools, broker: Broker, topic: str) -> None:
    # Needs DescribeLogDirs (35).
    out = (
        kafka_tools.run(
            LOG_DIRS, "--bootstrap-server", broker.bootstrap, "--describe", "--topic-list", topic
        )
        .check()
        .stdout
    )
    doc = json.loads(out.strip().splitlines()[-1])
    (entry,) = doc["brokers"]
    (log_dir,) = entry["logDirs"]
    assert log_dir["logDir"] == str(broker.data) and log_dir["error"] is None
    parts = {p["partition"]: p for p in log_dir["partitions"]}
    assert set(parts) == {f"{topic}-0", f"{topic}-1"}
    assert all(p["size"] > 0 for p in parts.values())
