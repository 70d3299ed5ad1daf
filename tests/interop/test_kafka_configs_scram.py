"""Kafka's own ``kafka-configs`` (its ConfigCommand, 4.3.1 and 3.9.1) managing SCRAM
credentials of users against a kafkacore broker and against Apache Kafka: the same
commands give byte-for-byte the same output and exit status on both (add with and
without iterations, describe one user and all users, with a quota of the same user,
delete, and the errors: too few iterations on the client side, a credential that does
not exist and too many iterations on the broker side)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interop.test_offset_commit_vs_kafka import Kafka
from support.brokers import Broker
from support.kafka_jars import JVM_FLAGS, require

pytestmark = [pytest.mark.downloads]

TOOL_43 = "kafka.admin.ConfigCommand"  # still in core (the Scala tool) in 4.3.1
TOOL_39 = "kafka.admin.ConfigCommand"

ALICE = ["--entity-type", "users", "--entity-name", "alice"]
# Two mechanisms of one user in one request: Kafka 3.9 in ZooKeeper mode, which kafkacore
# follows, refuses only the same (user, mechanism) twice; Kafka 4's controller refuses the
# same user twice (ScramControlManager): DUPLICATE_RESOURCE. Run apart from the scenario.
BOTH = [
    "--alter",
    "--add-config",
    "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-secret]",
    "--entity-type",
    "users",
    "--entity-name",
    "carol",
]
SCENARIO: list[list[str]] = [
    ["--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]", *ALICE],
    ["--alter", "--add-config", "SCRAM-SHA-512=[password=alice-secret]", *ALICE],
    ["--describe", *ALICE],
    [
        "--alter",
        "--add-config",
        "SCRAM-SHA-512=[password=bob-secret]",
        "--entity-type",
        "users",
        "--entity-name",
        "bob",
    ],
    ["--alter", "--add-config", "producer_byte_rate=1024", *ALICE],
    ["--describe", *ALICE],
    ["--describe", "--entity-type", "users"],
    ["--alter", "--delete-config", "SCRAM-SHA-512", *ALICE],
    ["--describe", *ALICE],
    ["--describe", "--entity-type", "users", "--entity-name", "nobody"],
    # refused by the tool itself
    ["--alter", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]", *ALICE],
    ["--alter", "--add-config", "SCRAM-SHA-256=[password=x],producer_byte_rate=1", *ALICE],
    # refused by the broker
    ["--alter", "--delete-config", "SCRAM-SHA-512", *ALICE],
    ["--alter", "--add-config", "SCRAM-SHA-256=[iterations=20000,password=x]", *ALICE],
    [
        "--alter",
        "--delete-config",
        "SCRAM-SHA-256",
        "--entity-type",
        "users",
        "--entity-name",
        "bob",
    ],
    ["--describe", "--entity-type", "users"],
]


def _run(libs: Path, main: str, bootstrap: str, args: list[str]) -> tuple[int, str, str]:
    cmd = [require("java"), *JVM_FLAGS, "-cp", f"{libs}/*", main]
    proc = subprocess.run(
        [*cmd, "--bootstrap-server", bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    # the tool echoes its arguments: the brokers' addresses differ
    stderr = proc.stderr.replace(bootstrap, "<bootstrap>")
    return proc.returncode, proc.stdout, _first_error_lines(stderr)


def _scram_order(stdout: str) -> str:
    """The ``SCRAM credential configs`` lines sorted, each with its credentials sorted by
    mechanism: Kafka 4 lists users and mechanisms in its ScramImage's HashMap order;
    Kafka 3.9 (ZooKeeper mode) and kafkacore sort the users (describing all) and list
    mechanisms in ScramMechanism order (SCRAM-SHA-256 first)."""
    other, scram = [], []
    for line in stdout.splitlines():
        head, sep, infos = line.partition(" are ")
        if head.startswith("SCRAM credential configs") and sep:
            scram.append(f"{head}{sep}{', '.join(sorted(infos.split(', ')))}")
        else:
            other.append(line)
    return "\n".join(other + sorted(scram))


def _first_error_lines(stderr: str) -> str:
    """What the tool says on stderr, without the stack frames and log lines (a Java stack
    trace's frames differ between brokers' answers only in line numbers of the tool)."""
    lines = [
        line
        for line in stderr.splitlines()
        if line and not line.startswith("\tat ") and not re.match(r"^\t\.\.\. \d+ more", line)
        and "SLF4J" not in line and " WARN " not in line and " INFO " not in line
        and not line.startswith("log4j:")
    ]  # fmt: skip
    return "\n".join(lines)


@pytest.fixture(scope="module")
def kafka(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    broker = Kafka(kafka_libs, tmp_path_factory.mktemp("kafka")).start()
    try:
        yield f"localhost:{broker.port}"
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def kafkacore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    broker = Broker(tmp_path_factory.mktemp("kafkacore") / "data", []).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def reference(kafka: str, kafka_libs: Path) -> list[tuple[int, str, str]]:
    """Kafka's tool against Kafka: what each step of the scenario should give."""
    return [_run(kafka_libs, TOOL_43, kafka, args) for args in SCENARIO]


def _same(ours: tuple[int, str, str], theirs: tuple[int, str, str]) -> bool:
    return (ours[0], _scram_order(ours[1]), ours[2]) == (
        theirs[0],
        _scram_order(theirs[1]),
        theirs[2],
    )


def test_kafka_configs_scram_same_output(
    reference: list[tuple[int, str, str]],
    kafka: str,
    kafkacore: Broker,
    kafka_libs: Path,
    kafka_zk_libs: Path,
) -> None:
    by_step = [_run(kafka_libs, TOOL_43, kafkacore.bootstrap, args) for args in SCENARIO]
    for args, theirs, ours in zip(SCENARIO, reference, by_step, strict=True):
        assert _same(ours, theirs), (args, ours, theirs)
    # what the scenario shows, so that the comparison cannot pass on two empty outputs
    assert by_step[0] == (0, "Completed updating config for user alice.\n", "")
    assert by_step[5][1] == (
        "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"
        "SCRAM credential configs for user-principal 'alice' are "
        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"
    )
    assert by_step[8][1].endswith(
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"
    )
    code, _, err = by_step[12]
    assert code == 1 and "Attempt to delete a user credential that does not exist" in err
    code, _, err = by_step[13]
    assert code == 1 and "Too many iterations" in err
    # Kafka 3.9's ConfigCommand (ZooKeeper-era tool) reads the same from kafkacore
    described = _run(kafka_zk_libs, TOOL_39, kafkacore.bootstrap, ["--describe", *ALICE])
    assert described == by_step[8]
    # both mechanisms at once: kafkacore as Kafka 3.9 (ZooKeeper mode), Kafka 4 refuses
    assert _run(kafka_zk_libs, TOOL_39, kafkacore.bootstrap, BOTH) == (
        0,
        "Completed updating config for user carol.\n",
        "",
    )
    code, _, err = _run(kafka_libs, TOOL_43, kafka, BOTH)
    assert code == 1 and "A user credential cannot be altered twice in the same request" in err


def _kafkacore_configs(bootstrap: str, args: list[str]) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore", "configs", "--bootstrap-server", bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_kafkacore_configs_prints_what_kafka_configs_prints(
    reference: list[tuple[int, str, str]], broker_factory: Any
) -> None:
    """``kafkacore configs`` (confluent-kafka's AdminClient) against a fresh kafkacore
    broker: the same exit status and standard output as Kafka's tool against Kafka at
    every step; an error names what Kafka's names (our stderr carries no Java trace)."""
    broker = broker_factory(name="cli")
    for args, theirs in zip(SCENARIO, reference, strict=True):
        code, out, err = _kafkacore_configs(broker.bootstrap, args)
        assert _same((code, out, ""), (theirs[0], theirs[1], "")), (args, out, err, theirs)
        if theirs[0] != 0:
            # Kafka's message: its whole stderr for a tool-side refusal, the exception's
            # message for a broker's error
            message = theirs[2].splitlines()[-1].rpartition("Exception: ")[2]
            assert message in err, (args, err, theirs[2])
    # and the two mechanisms at once, as Kafka 3.9's tool does against kafkacore
    assert _kafkacore_configs(broker.bootstrap, BOTH) == (
        0,
        "Completed updating config for user carol.\n",
        "",
    )
