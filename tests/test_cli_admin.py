"""The admin command line (``kafkacore topics|configs|console-*|get-offsets|delete-records|
consumer-groups``) against a broker subprocess: Kafka's output layout and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support.brokers import BrokerFactory

pytestmark = pytest.mark.timeout(180)  # ~25 CLI subprocesses per test; slow on a loaded machine


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> str:
    return broker_factory().bootstrap


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
    # client quotas (DescribeClientQuotas / AlterClientQuotas)
    r = kc("configs", *b, "--entity-type", "clients", "--entity-default", "--describe")
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    quota = ("--entity-type", "clients", "--entity-default", "--alter", "--add-config")
    r = kc("configs", *b, *quota, "consumer_byte_rate=2048")
    assert r.stdout == "Completed updating default config for clients in the cluster.\n"
    r = kc("configs", *b, "--entity-type", "clients", "--entity-default", "--describe")
    assert r.stdout == "Quota configs for the default client-id are consumer_byte_rate=2048.0\n"
    r = kc("configs", *b, *quota, "segment.bytes=1")
    assert r.returncode == 1 and "Invalid configuration key segment.bytes" in r.stderr
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


@pytest.fixture(scope="module")
def group_broker(broker_factory: BrokerFactory) -> str:
    return broker_factory("group.initial.rebalance.delay.ms=0", name="groups").bootstrap


def _group_consumer(bootstrap: str, group: str, topic: str, count: int) -> Any:
    """A subscribed member of ``group`` that consumed and committed ``count`` records."""
    from confluent_kafka import Consumer

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": "cg-client",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + 20
    while seen < count:
        assert time.monotonic() < deadline, f"consumed {seen} of {count}"
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            seen += 1
    c.commit(asynchronous=False)
    return c


def _rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines() if line.strip()]


@pytest.mark.slow
def test_consumer_groups(group_broker: str) -> None:
    from confluent_kafka import Producer

    b = ["--bootstrap-server", group_broker]
    cg = ["consumer-groups", *b]
    assert kc("topics", *b, "--create", "--topic", "cgt", "--partitions", "2").returncode == 0
    p = Producer({"bootstrap.servers": group_broker})
    for i in range(10):
        p.produce("cgt", str(i).encode(), partition=i % 2)
    assert p.flush(10) == 0
    consumer = _group_consumer(group_broker, "g", "cgt", 10)
    try:
        r = kc(*cg, "--list")
        assert (r.returncode, r.stdout) == (0, "g\n"), r.stderr
        r = kc(*cg, "--list", "--state")
        assert _rows(r.stdout) == [["GROUP", "STATE"], ["g", "Stable"]]
        assert _rows(kc(*cg, "--list", "--state", "Empty").stdout) == [["GROUP", "STATE"]]

        r = kc(*cg, "--describe", "--group", "g")
        assert r.returncode == 0, r.stderr
        rows = _rows(r.stdout)
        assert rows[0] == [
            "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
            "CONSUMER-ID", "HOST", "CLIENT-ID",
        ]  # fmt: skip
        assert [row[:6] for row in rows[1:]] == [
            ["g", "cgt", "0", "5", "5", "0"],
            ["g", "cgt", "1", "5", "5", "0"],
        ]
        member = rows[1][6]
        assert member.startswith("cg-client-")
        assert rows[1][7].startswith("/") and rows[1][8] == "cg-client"
        r = kc(*cg, "--describe", "--group", "g", "--members")
        assert _rows(r.stdout) == [
            ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
            ["g", member, rows[1][7], "cg-client", "2"],
        ]
        r = kc(*cg, "--describe", "--group", "g", "--state")
        assert _rows(r.stdout) == [
            ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
            ["g", group_broker, "(1)", "range", "Stable", "1"],
        ]

        # An active member: the group cannot be deleted, nor its topic's offsets.
        r = kc(*cg, "--delete", "--group", "g")
        assert r.returncode == 1
        assert r.stdout == (
            "\nError: Deletion of some consumer groups failed:\n"
            "* Group 'g' could not be deleted due to: "
            "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n"
        )
        r = kc(*cg, "--delete-offsets", "--group", "g", "--topic", "cgt")
        assert r.returncode == 1
        assert "Encountered some partition-level error" in r.stdout
        assert "GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden" in (
            r.stdout
        )
    finally:
        consumer.close()

    r = kc(*cg, "--list", "--state")
    assert _rows(r.stdout) == [["GROUP", "STATE"], ["g", "Empty"]]
    r = kc(*cg, "--describe", "--group", "g")
    assert r.returncode == 0
    assert r.stderr == "\nConsumer group 'g' has no active members.\n"
    assert [row[3:] for row in _rows(r.stdout)[1:]] == [["5", "5", "0", "-", "-", "-"]] * 2
    r = kc(*cg, "--describe", "--group", "g", "--members")
    assert r.returncode == 0  # Kafka 4.3.1 prints the header of no members
    assert _rows(r.stdout) == [["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]]
    assert "Consumer group 'g' has no active members." in r.stderr

    # --reset-offsets: every specification as a dry run (prints the plan, changes nothing).
    reset = [*cg, "--reset-offsets", "--group", "g", "--topic", "cgt"]
    plans = {
        "--to-earliest": "0",
        "--to-latest": "5",
        "--to-offset=3": "3",
        "--shift-by=-2": "3",
        "--to-datetime=2000-01-01T00:00:00.000": "0",
        "--by-duration=P1D": "0",
        "--to-current": "5",
    }
    for spec, offset in plans.items():
        r = kc(*reset, spec, "--dry-run")
        assert r.returncode == 0, (spec, r.stderr)
        assert _rows(r.stdout) == [
            ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
            ["g", "cgt", "0", offset],
            ["g", "cgt", "1", offset],
        ], spec

    def current() -> list[str]:
        return [row[3] for row in _rows(kc(*cg, "--describe", "--group", "g").stdout)[1:]]

    assert current() == ["5", "5"]
    r = kc(*reset, "--to-earliest")  # neither --dry-run nor --execute: a warned dry run
    assert r.stderr.startswith("WARN: No action will be performed")
    assert current() == ["5", "5"]
    for spec, expected in [
        ("--to-earliest", "0"),
        ("--shift-by=2", "2"),
        ("--to-offset=4", "4"),
        ("--to-latest", "5"),
        ("--to-datetime=2000-01-01T00:00:00.000", "0"),
    ]:
        r = kc(*reset, spec, "--execute")
        assert r.returncode == 0, (spec, r.stderr)
        assert current() == [expected, expected], spec
    r = kc(*cg, "--reset-offsets", "--group", "g", "--all-topics", "--to-offset", "1", "--export")
    assert (r.returncode, r.stdout) == (0, "cgt,0,1\ncgt,1,1\n\n")
    assert current() == ["0", "0"]

    r = kc(*cg, "--delete-offsets", "--group", "g", "--topic", "cgt:0")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout) == [
        ["Request", "succeeded", "for", "deleting", "offsets", "from", "group", "g."],
        ["TOPIC", "PARTITION", "STATUS"],
        ["cgt", "0", "Successful"],
    ]
    assert [row[2] for row in _rows(kc(*cg, "--describe", "--group", "g").stdout)[1:]] == ["1"]

    r = kc(*cg, "--delete", "--group", "g")
    assert (r.returncode, r.stdout) == (
        0,
        "Deletion of requested consumer groups ('g') was successful.\n",
    )
    assert kc(*cg, "--list").stdout == ""
    r = kc(*cg, "--delete", "--group", "g")
    assert r.returncode == 1
    assert "GroupIdNotFoundException: The group id does not exist." in r.stdout


def test_consumer_groups_errors(group_broker: str) -> None:
    cg = ["consumer-groups", "--bootstrap-server", group_broker]
    r = kc(*cg, "--describe", "--group", "missing")
    assert r.returncode == 1
    assert r.stdout == (
        "\nError: Executing consumer group command failed due to "
        "org.apache.kafka.common.errors.GroupIdNotFoundException: Group missing not found.\n"
    )
    r = kc(*cg, "--describe")
    assert r.returncode == 1
    assert (
        r.stderr == "kafkacore consumer-groups: error: Option --group or --all-groups is required\n"
    )
    r = kc(*cg, "--list", "--describe", "--group", "g")
    assert r.returncode == 1
    assert "not allowed with argument --list" in r.stderr
    r = kc(*cg, "--group", "g")
    assert r.returncode == 1
    assert "Command must include exactly one action" in r.stderr
    r = kc(*cg, "--reset-offsets", "--group", "g", "--topic", "t")
    assert r.returncode == 1
    assert "One of the reset specifications must be defined" in r.stderr


def test_consumer_groups_list_broker_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broker's ListGroups error that is not retriable fails the command with Kafka's
    exception text, instead of listing nothing (no real broker answers ListGroups with
    one: a sender stands in for the connection)."""
    from types import SimpleNamespace

    from kafkacore.cli import consumer_groups, main
    from kafkacore.protocol import APIS_BY_NAME, ErrorCode

    class FakeAdmin:
        def list_topics(self, **_: Any) -> Any:
            return SimpleNamespace(brokers={1: SimpleNamespace(id=1, host="x", port=1)}, topics={})

    def send(host: str, port: int, api: str, version: int, request: Any) -> Any:
        assert api == "ListGroups"
        cls: Any = APIS_BY_NAME[api].response.cls
        return cls(throttle_time_ms=0, error_code=ErrorCode.UNKNOWN_SERVER_ERROR, groups=[])

    monkeypatch.setattr(consumer_groups, "admin_client", lambda args: FakeAdmin())
    monkeypatch.setattr(consumer_groups, "wire_sender", lambda client_id: send)
    for extra in ([], ["--state"]):
        assert main(["consumer-groups", "--bootstrap-server", "x:1", "--list", *extra]) == 1
        out, _ = capsys.readouterr()
        assert out.startswith("\nError: Executing consumer group command failed due to ")
        assert "UnknownServerException" in out
