"""Kafka 4.3.1's own CLI tools, run from its jars against a kafkacore broker:
kafka-topics (create/list/alter --partitions/delete), kafka-console-producer (the plain
Java producer: idempotent by default) with each codec and kafka-console-consumer
(--partition 0 --offset earliest --max-messages N), kafka-get-offsets (-1/-2/-3) and
kafka-broker-api-versions. Independent JVMs run in parallel."""

from __future__ import annotations

import json
import struct
import subprocess

import pytest

from compat.conftest import Broker, KafkaTools, batch_attributes

pytestmark = pytest.mark.timeout(180)

TOPICS = "org.apache.kafka.tools.TopicCommand"
PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
API_VERSIONS = "org.apache.kafka.tools.BrokerApiVersionsCommand"
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def kcat_metadata(broker: Broker) -> dict[str, list[int]]:
    out = subprocess.run(
        ["kcat", "-b", broker.bootstrap, "-L", "-J"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    return {
        t["topic"]: sorted(p["partition"] for p in t["partitions"])
        for t in json.loads(out)["topics"]
    }


def test_topics_create_list_alter_delete(
    kafka_tools: KafkaTools, broker: Broker, kcat: str
) -> None:
    b = ("--bootstrap-server", broker.bootstrap)
    created = kafka_tools.run_all(
        [
            (
                TOPICS,
                *b,
                "--create",
                "--topic",
                "jt-a",
                "--partitions",
                "2",
                "--config",
                "message.timestamp.type=LogAppendTime",
            ),
            (
                TOPICS,
                *b,
                "--create",
                "--topic",
                "jt-b",
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ),
        ]
    )
    assert "Created topic jt-a." in created[0].check().stdout
    assert "Created topic jt-b." in created[1].check().stdout
    again = kafka_tools.run(TOPICS, *b, "--create", "--topic", "jt-a", "--partitions", "1")
    assert again.returncode != 0 and "already exists" in again.stdout + again.stderr
    kafka_tools.run(TOPICS, *b, "--alter", "--topic", "jt-a", "--partitions", "3").check()
    listed = kafka_tools.run(TOPICS, *b, "--list").check().stdout.split()
    assert {"jt-a", "jt-b"} <= set(listed)
    meta = kcat_metadata(broker)
    assert meta["jt-a"] == [0, 1, 2] and meta["jt-b"] == [0]
    kafka_tools.run(TOPICS, *b, "--delete", "--topic", "jt-b").check()
    assert "jt-b" not in kafka_tools.run(TOPICS, *b, "--list").check().stdout.split()
    assert "jt-b" not in kcat_metadata(broker)


def test_console_producer_and_consumer_every_codec(kafka_tools: KafkaTools, broker: Broker) -> None:
    b = ("--bootstrap-server", broker.bootstrap)
    lines = "".join(f"key{i}:value {i}\n" for i in range(30))
    produced = [
        kafka_tools.run(
            PRODUCER,
            *b,
            "--topic",
            f"jc-{codec}",
            "--compression-codec",
            codec,
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "key.separator=:",
            "--producer-property",
            "linger.ms=100",
            stdin=lines,
        )
        for codec in CODECS
    ]
    for result in produced:
        result.check()
    consumed = kafka_tools.run_all(
        [
            (
                CONSUMER,
                *b,
                "--topic",
                f"jc-{codec}",
                "--partition",
                "0",
                "--offset",
                "earliest",
                "--max-messages",
                "30",
                "--timeout-ms",
                "20000",
                "--formatter-property",
                "print.key=true",
                "--formatter-property",
                "print.offset=true",
            )
            for codec in CODECS
        ]
    )
    for codec, result in zip(CODECS, consumed, strict=True):
        out = result.check().stdout.splitlines()
        assert out == [f"Offset:{i}\tkey{i}\tvalue {i}" for i in range(30)], (codec, out[:3])
        assert "Processed a total of 30 messages" in result.stderr
        partition = broker.data / f"jc-{codec}-0"
        assert {a & 7 for a in batch_attributes(partition)} == {CODECS[codec]}
        # The Java producer is idempotent by default: a producer id, epoch 0, sequence 0.
        pid, epoch, seq = struct.unpack_from(
            ">qhi", (partition / "00000000000000000000.log").read_bytes(), 43
        )
        assert pid >= 0 and epoch == 0 and seq == 0


def test_get_offsets_and_broker_api_versions(kafka_tools: KafkaTools, broker: Broker) -> None:
    b = ("--bootstrap-server", broker.bootstrap)
    kafka_tools.run(PRODUCER, *b, "--topic", "jo", stdin="a\nb\nc\nd\n").check()
    latest, earliest, max_ts, versions = kafka_tools.run_all(
        [
            (OFFSETS, *b, "--topic", "jo"),
            (OFFSETS, *b, "--topic", "jo", "--time", "-2"),
            (OFFSETS, *b, "--topic", "jo", "--time", "-3"),
            (API_VERSIONS, *b),
        ]
    )
    assert latest.check().stdout.split() == ["jo:0:4"]
    assert earliest.check().stdout.split() == ["jo:0:0"]
    (line,) = max_ts.check().stdout.split()
    assert line.startswith("jo:0:") and 0 <= int(line.rsplit(":", 1)[1]) <= 3
    out = versions.check().stdout
    assert out.startswith(f"{broker.bootstrap} (id: 1 rack: null")
    for api in ("Produce(0)", "Fetch(1)", "ListOffsets(2)", "Metadata(3)", "ApiVersions(18)"):
        assert api in out
    assert "UNSUPPORTED" not in out.split("ApiVersions(18)")[0].split("Produce(0)")[1]
