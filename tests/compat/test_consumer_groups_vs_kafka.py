"""``kafkacore consumer-groups`` against Kafka 4.3.1's own ``kafka-consumer-groups``
(``ConsumerGroupCommand`` from its jars), both run against the same kafkacore broker: the
same stdout, byte for byte, for both group types.

The groups: a classic group (two confluent-kafka members, one static), a consumer group
(KIP-848: two confluent-kafka members with ``group.protocol=consumer``, on different
topics), a mixed consumer group (a consumer-protocol member and a classic member it
drives), and an empty group of each type with committed offsets. Every member has
consumed and committed everything before the tools run, and every consumer-group member
has reconciled to its target, so the tools see a group that does not move.

Kafka's tool runs every command of a test in one JVM (``ToolBatch``, compat/java), so
the comparison costs one JVM start, not one per command. Read-only commands run once per
tool and compare stdout; stderr too, except where Kafka
prints what kafkacore does not (log lines, a usage text after a bad argument, Java stack
traces). The commands that change a group run on twin groups (the same history, names of
the same length), one per tool, and compare the outputs with the names swapped.
Exit statuses are not compared: Kafka's tool exits 0 after printing an error, kafkacore's
exits 1 (docs/cli.md)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from compat.conftest import ToolBatch, ToolResult
from compat.test_groups import warm_coordinator
from support.brokers import Broker, BrokerFactory

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

GROUPS_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
OVERRIDES = (
    "group.initial.rebalance.delay.ms=0",
    "group.consumer.heartbeat.interval.ms=500",
    "group.consumer.min.heartbeat.interval.ms=500",
    "group.consumer.assignment.interval.ms=0",
    "offsets.topic.num.partitions=3",
)
TOPICS = {"cgt": 3, "other-topic": 2}
RECORDS = 30
# What Kafka's tool prints on stdout when it refuses a command (and kafkacore's exits 1)
ERROR_MARKS = ("Error:", "is invalid:")


@dataclass
class Running:
    """A subscribed consumer that polls until told to stop."""

    consumer: Any
    thread: threading.Thread
    stop: threading.Event


def _start(
    bootstrap: str, group: str, client_id: str, topics: Sequence[str], **extra: str
) -> Running:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": client_id,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **extra,
        }
    )
    consumer.subscribe(list(topics))
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                consumer.commit(msg, asynchronous=False)

    thread = threading.Thread(target=poll, name=f"{group}/{client_id}", daemon=True)
    thread.start()
    return Running(consumer, thread, stop)


def _drained(bootstrap: str, group: str, topics: Sequence[str]) -> bool:
    """Every record of ``topics`` committed by ``group``."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    admin = AdminClient({"bootstrap.servers": bootstrap})
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    offsets = {(tp.topic, tp.partition): tp.offset for tp in result.result(10).topic_partitions}
    want = {(t, p): RECORDS // TOPICS[t] for t in topics for p in range(TOPICS[t])}
    return all(offsets.get(tp) == n for tp, n in want.items())


def _settled(bootstrap: str, groups: Sequence[str]) -> bool:
    """Every group Stable, every consumer-group member at its target."""
    from kafkacore.admin import Admin
    from kafkacore.admin import groups as ops
    from kafkacore.cli.topics import wire_sender

    admin = Admin(AdminClient({"bootstrap.servers": bootstrap}), wire_sender("test"))
    for d in ops.describe_groups(admin, list(groups)):
        if d.state != "Stable":
            return False
        for m in d.members:
            if m.target_assignment is not None and (
                m.assignment != m.target_assignment or m.member_epoch != d.target_assignment_epoch
            ):
                return False
    return True


def _wait(what: str, check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def _consume_and_leave(bootstrap: str, group: str, topics: Sequence[str], **extra: str) -> None:
    """A member of ``group`` that commits every record of ``topics`` and leaves: an empty
    group with offsets."""
    member = _start(bootstrap, group, f"{group}-client", topics, **extra)
    try:
        _wait(f"{group} to commit everything", lambda: _drained(bootstrap, group, topics))
    finally:
        member.stop.set()
        member.thread.join(10)
        member.consumer.close()


@pytest.fixture(scope="module")
def groups(broker_factory: BrokerFactory) -> Iterator[Broker]:
    broker = broker_factory(*OVERRIDES, name="consumer-groups-tool")
    warm_coordinator(broker)
    b = broker.bootstrap
    admin = AdminClient({"bootstrap.servers": b})
    for f in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": b})
    for i in range(RECORDS):
        for topic, partitions in TOPICS.items():
            producer.produce(topic, str(i).encode(), partition=i % partitions)
    assert producer.flush(30) == 0

    consumer = {"group.protocol": "consumer"}
    both = list(TOPICS)
    for group in ("cl-empty", "cl-twin-k", "cl-twin-c"):
        _consume_and_leave(b, group, ["cgt"])
    for group in ("co-empty", "co-twin-k", "co-twin-c"):
        _consume_and_leave(b, group, ["cgt"], **consumer)
    running = [
        _start(b, "cl", "cl-a", both),
        _start(b, "cl", "cl-b", both, **{"group.instance.id": "static-b"}),
        _start(b, "co", "co-a", both, **consumer),
        _start(b, "co", "co-b", ["cgt"], **consumer),
        _start(b, "mx", "mx-new", both, **consumer),
    ]
    try:
        _wait("mx to be a consumer group", lambda: _settled(b, ["mx"]))
        running.append(_start(b, "mx", "mx-old", both))  # a classic member joins
        for group in ("cl", "co", "mx"):
            _wait(f"{group} to commit everything", lambda g=group: _drained(b, g, both))
        _wait("the groups to settle", lambda: _settled(b, ["cl", "co", "mx"]))
        yield broker
    finally:
        for r in running:
            r.stop.set()
        for r in running:
            r.thread.join(10)
            r.consumer.close()


def _kafkacore(bootstrap: str, args: Sequence[str]) -> ToolResult:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkacore.cli",
            "consumer-groups",
            "--bootstrap-server",
            bootstrap,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    return ToolResult(tuple(args), proc.returncode, proc.stdout, proc.stderr)


def _both(
    tool_batch: ToolBatch, bootstrap: str, commands: Sequence[Sequence[str]], workdir: Path
) -> list[tuple[ToolResult, ToolResult]]:
    """Each command by Kafka's tool (in one JVM) and by kafkacore's (a few at a time)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        ours = pool.map(lambda c: _kafkacore(bootstrap, c), commands)
        kafka = tool_batch.run(
            GROUPS_COMMAND, [["--bootstrap-server", bootstrap, *c] for c in commands], workdir
        )
        return list(zip(kafka, ours, strict=True))


def _kafka_messages(stderr: str) -> str | None:
    """What Kafka's tool says on stderr, or None when it printed what kafkacore's does not
    (log lines, a stack trace, a usage text)."""
    noise = ("[main] ", "\tat ", "java.", "Caused by", "Option ")
    if any(line.startswith(noise) for line in stderr.splitlines()):
        return None
    return stderr


def _compare(pairs: list[tuple[ToolResult, ToolResult]]) -> None:
    failures = []
    for kafka, ours in pairs:
        command = " ".join(ours.args)
        if kafka.stdout != ours.stdout:
            failures.append(
                f"{command}: stdout\n--- Kafka\n{kafka.stdout}--- kafkacore\n{ours.stdout}"
                f"--- kafkacore stderr\n{ours.stderr}"
            )
        expected = _kafka_messages(kafka.stderr)
        if expected is not None and expected != ours.stderr:
            failures.append(
                f"{command}: stderr\n--- Kafka\n{kafka.stderr}--- kafkacore\n{ours.stderr}"
            )
        refused = any(mark in kafka.stdout for mark in ERROR_MARKS)
        if not refused and expected is not None and ours.returncode != 0:
            failures.append(f"{command}: exited {ours.returncode}, Kafka's tool reported no error")
    assert not failures, "\n\n".join(failures)


def test_read_only_commands(groups: Broker, tool_batch: ToolBatch, tmp_path: Path) -> None:
    commands: list[list[str]] = [
        ["--list"],
        ["--list", "--type"],
        ["--list", "--state"],
        ["--list", "--type", "--state"],
        ["--list", "--type", "consumer"],
        ["--list", "--type", "classic", "--state", "empty"],
        ["--list", "--state", "Stable"],
        ["--describe", "--all-groups", "--state", "--verbose"],
        ["--describe", "--group", "co", "--group", "cl", "--members", "--verbose"],
        ["--validate-regex", "cg.*"],
        ["--validate-regex", "a(b"],
        ["--validate-regex", "\\Cx"],
    ]
    for group in ("cl", "co", "mx", "cl-empty", "co-empty", "missing"):
        for view in (
            [],
            ["--verbose"],
            ["--members"],
            ["--members", "--verbose"],
            ["--state"],
            ["--state", "--verbose"],
        ):
            commands.append(["--describe", "--group", group, *view])
    commands += [
        ["--delete-offsets", "--group", "co", "--topic", "cgt"],
        ["--delete-offsets", "--group", "cl", "--topic", "cgt:1", "--topic", "nosuch"],
        ["--delete-offsets", "--group", "missing", "--topic", "cgt"],
        ["--delete", "--group", "co"],
        ["--delete", "--group", "missing", "--group", "cl"],
        ["--reset-offsets", "--group", "mx", "--topic", "cgt", "--to-earliest"],
        ["--reset-offsets", "--group", "cl", "--all-topics", "--to-latest", "--dry-run"],
    ]
    for spec in (
        ["--to-earliest"],
        ["--to-latest"],
        ["--to-current"],
        ["--to-offset", "100"],
        ["--shift-by", "-4"],
        ["--to-datetime", "2000-01-01T00:00:00.000"],
        ["--to-datetime", "2100-01-01T00:00:00.000"],
        ["--by-duration", "PT1H"],
    ):
        commands.append(
            ["--reset-offsets", "--group", "co-empty", "--topic", "cgt", *spec, "--dry-run"]
        )
    commands += [
        ["--reset-offsets", "--group", "cl-empty", "--all-topics", "--shift-by", "-4", "--dry-run"],
        [
            "--reset-offsets",
            "--group",
            "co-empty",
            "--topic",
            "cgt:1",
            "--to-offset",
            "3",
            "--export",
        ],
        ["--reset-offsets", "--group", "missing", "--topic", "cgt", "--to-latest", "--dry-run"],
    ]
    _compare(_both(tool_batch, groups.bootstrap, commands, tmp_path))


def test_commands_that_change_groups(groups: Broker, tool_batch: ToolBatch, tmp_path: Path) -> None:
    """The same changes to twin groups, by Kafka's tool (``*-twin-k``) and by kafkacore's
    (``*-twin-c``), each followed by a describe."""
    steps = [
        ["--reset-offsets", "--group", "{g}", "--topic", "cgt", "--shift-by", "-3", "--execute"],
        ["--describe", "--group", "{g}", "--verbose"],
        ["--reset-offsets", "--group", "{g}", "--topic", "cgt:2", "--to-earliest", "--execute"],
        ["--describe", "--group", "{g}"],
        ["--delete-offsets", "--group", "{g}", "--topic", "cgt:0"],
        ["--describe", "--group", "{g}", "--state", "--verbose"],
        ["--delete", "--group", "{g}"],
        ["--describe", "--group", "{g}"],
        ["--delete", "--group", "{g}"],
    ]
    b = groups.bootstrap

    def ours(twin: str) -> list[ToolResult]:
        results = []
        for step in steps:
            result = _kafkacore(b, [a.format(g=f"{twin}-c") for a in step])
            results.append(
                ToolResult(
                    result.args,
                    result.returncode,
                    result.stdout.replace(f"{twin}-c", f"{twin}-k"),
                    result.stderr.replace(f"{twin}-c", f"{twin}-k"),
                )
            )
        return results

    twins = ("cl-twin", "co-twin")
    with ThreadPoolExecutor(max_workers=2) as pool:
        swapped = pool.map(ours, twins)
        kafka = tool_batch.run(
            GROUPS_COMMAND,
            [
                ["--bootstrap-server", b, *(a.format(g=f"{twin}-k") for a in step)]
                for twin in twins
                for step in steps
            ],
            tmp_path,
        )
        _compare(list(zip(kafka, [r for results in swapped for r in results], strict=True)))
