"""What an operator sees of a three-broker kafkacore cluster with one broker down, through
``kafkacore topics --describe`` with Kafka's replication reports and ``kafkacore
log-dirs``, next to Apache Kafka 3.9.1's own TopicCommand and LogDirsCommand (run from
its jars) on the same cluster state: the same lines, byte for byte, and the partitions
each report must select. Topics: ``mirrored`` (replication factor 3,
``min.insync.replicas=2``), ``strict`` (3, min ISR 3) and ``single`` (1): with a broker
down, every replicated partition is under-replicated, ``strict`` is under its min ISR,
``mirrored`` is at it, and the ``single`` partition on the dead broker is unavailable."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from confluent_kafka import Producer

from cluster.conftest import create_topic
from compat.conftest import KafkaTools
from kafkacore.cli import main as kafkacore_cli
from support.cluster import Cluster, wait_until
from support.kafka_jars import KAFKA_ZK_VERSION, kafka_libs

pytestmark = pytest.mark.timeout(240)

TOPICS = "org.apache.kafka.tools.TopicCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
REPORTS = (
    "--under-replicated-partitions",
    "--under-min-isr-partitions",
    "--at-min-isr-partitions",
    "--unavailable-partitions",
)
PARTITIONS = 3


@pytest.fixture(scope="module")
def kafka_tools() -> KafkaTools:
    return KafkaTools(kafka_libs(KAFKA_ZK_VERSION))


@pytest.fixture(scope="module")
def topics(cluster: Cluster) -> dict[str, dict[int, list[int]]]:
    """The three topics with records in every partition: ``{topic: {partition: replicas}}``."""
    overrides = {
        "min.insync.replicas": "2",
        "retention.ms": "3600000",
        "max.message.bytes": "500000",
        "segment.jitter.ms": "10",
    }
    create_topic(cluster, "mirrored", PARTITIONS, 3, overrides)
    create_topic(cluster, "strict", PARTITIONS, 3, {"min.insync.replicas": "3"})
    create_topic(cluster, "single", PARTITIONS, 1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for topic in ("mirrored", "strict", "single"):
        for p in range(PARTITIONS):
            for i in range(20):
                producer.produce(topic, f"{topic}-{p}-{i}".encode() * 5, partition=p)
    assert producer.flush(60) == 0
    replicas = {}
    for topic in ("mirrored", "strict", "single"):
        data, _ = cluster.zk.get(f"/brokers/topics/{topic}")
        assignment = json.loads(data)["partitions"]
        replicas[topic] = {int(p): list(r) for p, r in assignment.items()}
    return replicas


def ours(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    status = kafkacore_cli(list(args))
    out, err = capsys.readouterr()
    assert status == 0, f"kafkacore {' '.join(args)} exited {status}: {err}"
    return out


def partitions_in(report: str) -> set[tuple[str, int]]:
    out = set()
    for line in report.splitlines():
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t"))
        out.add((fields["Topic"], int(fields["Partition"])))
    return out


def log_dirs_document(output: str) -> dict[int, dict[str, Any]]:
    """``{broker: {"t-p": partition entry}}`` from the tool's JSON line."""
    doc = json.loads(output.strip().splitlines()[-1])
    assert doc["version"] == 1
    out = {}
    for entry in doc["brokers"]:
        (log_dir,) = entry["logDirs"]
        assert log_dir["error"] is None
        out[entry["broker"]] = {p["partition"]: p for p in log_dir["partitions"]}
    return out


def check_log_dirs(output: str, replicas: dict[str, dict[int, list[int]]], live: set[int]) -> None:
    """Every live broker lists exactly the replicas assigned to it, each with a size and
    Kafka's offset lag (high watermark minus log end, never above 0 on a caught-up
    replica; the test waits for the ISR)."""
    brokers = log_dirs_document(output)
    assert set(brokers) == live
    for broker, parts in brokers.items():
        expected = {f"{t}-{p}" for t, ps in replicas.items() for p, r in ps.items() if broker in r}
        assert set(parts) == expected, broker
        for name, entry in parts.items():
            assert entry["size"] > 0, (broker, name)
            assert entry["offsetLag"] == 0, (broker, name)
            assert entry["isFuture"] is False


def test_reports_and_log_dirs_match_kafkas_tools_with_a_broker_down(
    cluster: Cluster,
    kafka_tools: KafkaTools,
    topics: dict[str, dict[int, list[int]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    for topic, parts in topics.items():
        for p, r in parts.items():
            cluster.wait_for_isr(topic, p, len(r))
    b = ("--bootstrap-server", cluster.bootstrap)
    check_log_dirs(ours(capsys, "log-dirs", *b, "--describe"), topics, {1, 2, 3})
    only = ours(capsys, "log-dirs", *b, "--describe", "--topic-list", "mirrored,single")
    assert {p.split("-")[0] for ps in log_dirs_document(only).values() for p in ps} == {
        "mirrored",
        "single",
    }
    # nothing to report while every replica is in sync (single: ISR 1 = min ISR 1)
    for report in REPORTS[:2] + REPORTS[3:]:
        assert ours(capsys, "topics", *b, "--describe", report) == "", report

    controller = wait_until(cluster.controller_id, 30, "a controller")
    down = next(n for n in sorted(cluster.brokers, reverse=True) if n != controller)
    cluster.kill(down)
    wait_until(lambda: down not in cluster.registered(), 60, f"broker {down} unregistered")
    for topic, parts in topics.items():
        for p, r in parts.items():
            if down in r and len(r) > 1:
                cluster.wait_for_isr(topic, p, len(r) - 1)
    live = {n for n in cluster.brokers if n != down}
    b = ("--bootstrap-server", cluster.bootstrap)
    lost = {("single", p) for p, r in topics["single"].items() if r == [down]}
    replicated = {(t, p) for t in ("mirrored", "strict") for p in range(PARTITIONS)}
    wait_until(
        lambda: partitions_in(ours(capsys, "topics", *b, "--describe", REPORTS[3])) == lost,
        30,
        "the dead broker's partitions unavailable in the clients' metadata",
    )

    describes = [("--exclude-internal",), *((r,) for r in REPORTS), ("--topics-with-overrides",)]
    jobs = [(TOPICS, *b, "--describe", *extra) for extra in describes]
    jobs.append((LOG_DIRS, *b, "--describe"))
    results = kafka_tools.run_all(jobs)
    for extra, result in zip(describes, results[:-1], strict=True):
        assert ours(capsys, "topics", *b, "--describe", *extra) == result.check().stdout, extra
    assert ours(capsys, "log-dirs", *b, "--describe") == results[-1].check().stdout
    check_log_dirs(results[-1].stdout, topics, live)

    by_report = {r: partitions_in(results[1 + i].stdout) for i, r in enumerate(REPORTS)}
    assert by_report["--under-replicated-partitions"] == replicated
    assert (
        by_report["--under-min-isr-partitions"] == {("strict", p) for p in range(PARTITIONS)} | lost
    )
    at_min = by_report["--at-min-isr-partitions"]
    # ISR of 1 = min ISR of 1; the lost one's too, its ISR keeps the last leader (Kafka's)
    assert at_min == {("mirrored", p) for p in range(PARTITIONS)} | {
        ("single", p) for p in range(PARTITIONS)
    }
    assert by_report["--unavailable-partitions"] == lost and lost
    overrides = results[-2].stdout.splitlines()
    assert {line.split("\t")[0] for line in overrides} == {"Topic: mirrored", "Topic: strict"}

    # DescribeLogDirs v4: each directory's total and usable bytes
    for node_id in live:
        response = asyncio.run(describe_log_dirs(cluster.brokers[node_id].port))
        (result,) = response.results
        assert result.total_bytes > 0 and 0 < result.usable_bytes <= result.total_bytes


async def describe_log_dirs(port: int) -> Any:
    from kafkacore.net import NodeClient
    from kafkacore.protocol import APIS_BY_NAME, ApiKey

    client = NodeClient("localhost", port, client_id="test", request_timeout_s=30)
    try:
        request = APIS_BY_NAME["DescribeLogDirs"].request.cls(topics=None)
        return await client.send(ApiKey.DESCRIBE_LOG_DIRS, 4, request)
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--list", "--under-replicated-partitions"),
            'Option "[under-replicated-partitions]" can\'t be used with option "[list]"',
        ),
        (
            ("--describe", "--under-min-isr-partitions", "--topics-with-overrides"),
            'Option "[under-min-isr-partitions]" can\'t be used with option '
            '"[topics-with-overrides]"',
        ),
    ],
)
def test_report_options_refused_as_kafka_refuses_them(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka 3.9.1's messages (the reports go together, with --describe only)."""
    assert kafkacore_cli(["topics", "--bootstrap-server", "localhost:1", *args]) == 1
    assert capsys.readouterr().err == f"kafkacore topics: error: {message}\n"
