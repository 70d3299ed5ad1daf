"""The admin command line (``kafkacore topics|configs|console-*|get-offsets|delete-records``)
against a broker subprocess: Kafka's output layout and exit codes. consumer-groups is not
tested: the broker has no group coordinator yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from brokers import Broker

pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    b = Broker(tmp_path_factory.mktemp("data")).start()
    try:
        yield b.bootstrap
    finally:
        b.stop()


def kc(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=45,
        env=os.environ.copy(),
    )


def test_topics(broker: str) -> None:
    b = ["--bootstrap-server", broker]
    r = kc(
        "topics",
        *b,
        "--create",
        "--topic",
        "tp",
        "--partitions",
        "2",
        "--config",
        "retention.ms=60000",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Created topic tp.\n"
    r = kc("topics", *b, "--create", "--topic", "tp")
    assert r.returncode == 1
    assert "already exists" in r.stderr
    assert kc("topics", *b, "--create", "--topic", "tp", "--if-not-exists").returncode == 0
    assert "tp" in kc("topics", *b, "--list").stdout.splitlines()
    r = kc("topics", *b, "--alter", "--topic", "tp", "--partitions", "3")
    assert r.returncode == 0, r.stderr
    lines = kc("topics", *b, "--describe", "--topic", "tp").stdout.splitlines()
    head = lines[0].split("\t")
    assert head[0] == "Topic: tp" and head[1].startswith("TopicId: ")
    assert head[2:] == ["PartitionCount: 3", "ReplicationFactor: 1", "Configs: retention.ms=60000"]
    assert (
        lines[1]
        == "\tTopic: tp\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: N/A\tLastKnownElr: N/A"
    )
    assert len(lines) == 4
    assert (
        kc("topics", *b, "--describe", "--topic", "tp", "--under-replicated-partitions").stdout
        == ""
    )
    r = kc("topics", *b, "--delete", "--topic", "tp")
    assert r.returncode == 0, r.stderr
    r = kc("topics", *b, "--delete", "--topic", "tp")
    assert r.returncode == 1 and "does not exist" in r.stderr
    assert kc("topics", *b, "--delete", "--topic", "tp", "--if-exists").returncode == 0
    r = kc("topics", *b)
    assert r.returncode == 1 and r.stderr.startswith(
        "kafkacore topics: error: Command must include"
    )
    assert kc("topics", "--list").returncode == 1


def test_configs(broker: str) -> None:
    b = ["--bootstrap-server", broker]
    assert kc("topics", *b, "--create", "--topic", "cf").returncode == 0
    r = kc(
        "configs",
        *b,
        "--entity-type",
        "topics",
        "--entity-name",
        "cf",
        "--alter",
        "--add-config",
        "retention.ms=7000,cleanup.policy=[compact,delete]",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Completed updating config for topic cf.\n"
    r = kc("configs", *b, "--entity-type", "topics", "--entity-name", "cf", "--describe")
    lines = r.stdout.splitlines()
    assert lines[0] == "Dynamic configs for topic cf are:"
    assert (
        "  cleanup.policy=compact,delete sensitive=false "
        "synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete" in lines[1]
    )
    assert lines[2].startswith(
        "  retention.ms=7000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=7000"
    )
    r = kc(
        "configs",
        *b,
        "--entity-type",
        "topics",
        "--entity-name",
        "cf",
        "--alter",
        "--delete-config",
        "retention.ms",
    )
    assert r.returncode == 0, r.stderr
    r = kc("configs", *b, "--entity-type", "topics", "--entity-name", "cf", "--describe")
    assert len(r.stdout.splitlines()) == 2
    r = kc("configs", *b, "--entity-type", "topics", "--entity-name", "cf", "--describe", "--all")
    assert (
        r.stdout.startswith("All configs for topic cf are:\n") and len(r.stdout.splitlines()) > 10
    )
    r = kc(
        "configs",
        *b,
        "--entity-type",
        "topics",
        "--entity-name",
        "cf",
        "--alter",
        "--add-config",
        "no.such.config=1",
    )
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    r = kc("configs", *b, "--entity-type", "clients", "--entity-default", "--describe")
    assert r.returncode == 1 and "not supported" in r.stderr
    assert kc("configs", *b, "--entity-type", "topics", "--describe").returncode == 1


def test_console_and_offsets(broker: str, tmp_path: Path) -> None:
    b = ["--bootstrap-server", broker]
    assert kc("topics", *b, "--create", "--topic", "cs").returncode == 0
    r = kc(
        "console-producer",
        *b,
        "--topic",
        "cs",
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        "--property",
        "parse.headers=true",
        "--compression-codec",
        "lz4",
        stdin="h1:v1,h2:v2\tk1:one\nNO_HEADERS\tk2:two\nNO_HEADERS\tk3:three\n",
    )
    assert r.returncode == 0, r.stderr
    r = kc(
        "console-consumer",
        *b,
        "--topic",
        "cs",
        "--from-beginning",
        "--max-messages",
        "3",
        "--property",
        "print.key=true",
        "--property",
        "print.timestamp=true",
        "--property",
        "print.headers=true",
        "--property",
        "key.separator=|",
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    ts, headers, key, value = lines[0].split("|")
    assert ts.startswith("CreateTime:") and int(ts[11:]) > 0
    assert (headers, key, value) == ("h1:v1,h2:v2", "k1", "one")
    assert lines[1].endswith("|NO_HEADERS|k2|two")
    assert "Processed a total of 3 messages" in r.stderr
    r = kc(
        "console-consumer",
        *b,
        "--topic",
        "cs",
        "--partition",
        "0",
        "--offset",
        "2",
        "--timeout-ms",
        "1500",
    )
    assert r.stdout == "three\n" and "Processed a total of 1 messages" in r.stderr
    r = kc("console-producer", *b, "--topic", "cs", "--property", "parse.key=true", stdin="nokey\n")
    assert r.returncode == 1 and "No key separator" in r.stderr
    assert kc("console-consumer", *b, "--topic", "cs", "--offset", "x").returncode == 1
    assert (
        kc(
            "console-producer", *b, "--topic", "cs", "--compression-codec", "bogus", stdin=""
        ).returncode
        == 1
    )

    r = kc("get-offsets", *b, "--topic", "cs")
    assert r.returncode == 0 and r.stdout == "cs:0:3\n", r.stderr
    assert kc("get-offsets", *b, "--topic", "cs", "--time", "-2").stdout == "cs:0:0\n"
    assert kc("get-offsets", *b, "--topic", "cs", "--time", "bad").returncode == 1

    spec = tmp_path / "offsets.json"
    spec.write_text(
        json.dumps({"partitions": [{"topic": "cs", "partition": 0, "offset": 2}], "version": 1})
    )
    r = kc("delete-records", *b, "--offset-json-file", str(spec))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-2:] == [
        "Records delete operation completed:",
        "partition: cs-0\tlow_watermark: 2",
    ]
    assert kc("get-offsets", *b, "--topic", "cs", "--time", "earliest").stdout == "cs:0:2\n"
    spec.write_text("{not json")
    r = kc("delete-records", *b, "--offset-json-file", str(spec))
    assert r.returncode == 1 and "expected format" in r.stderr
