"""Kafka's own ``kafka-configs`` (its ConfigCommand, 4.3.1 and 3.9.1) managing SCRAM
credentials of users against a kafkacore broker and against Apache Kafka: the same
commands give byte-for-byte the same output and exit status on both (add with and
without iterations, describe one user and all users, with a quota of the same user,
delete, and the errors: too few iterations on the client side, a credential that does
not exist and too many iterations on the broker side)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import APIS_BY_NAME
from support.brokers import Broker
from support.cluster import wait_until
from support.kafka_jars import JVM_FLAGS, KraftNode, require
from support.zookeeper import unique_chroot

pytestmark = [pytest.mark.downloads, pytest.mark.slow]

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
    broker = KraftNode(
        kafka_libs,
        tmp_path_factory.mktemp("kafka"),
        "offsets.topic.num.partitions=1",
        "group.initial.rebalance.delay.ms=0",
    ).start()
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


# -- AlterUserScramCredentials against Kafka 3.9 in ZooKeeper mode ----------------------------


def _upsertion(name: str, mechanism: int, iterations: int, password: str = "pw") -> Any:
    from kafkacore.security.scram import ScramMechanism, salted_password

    cls: Any = APIS_BY_NAME["AlterUserScramCredentials"].request.cls
    mech = {1: ScramMechanism.SCRAM_SHA_256, 2: ScramMechanism.SCRAM_SHA_512}.get(
        mechanism, ScramMechanism.SCRAM_SHA_256
    )
    salt = f"salt-of-{name}".encode()
    return cls.ScramCredentialUpsertion(
        name=name,
        mechanism=mechanism,
        iterations=iterations,
        salt=salt,
        salted_password=salted_password(mech, password, salt, max(1, iterations)),
    )


def _deletion(name: str, mechanism: int) -> Any:
    cls: Any = APIS_BY_NAME["AlterUserScramCredentials"].request.cls
    return cls.ScramCredentialDeletion(name=name, mechanism=mechanism)


# (upsertions, deletions), sent in order to both brokers
ALTERATIONS: list[tuple[list[Any], list[Any]]] = [
    (
        [
            _upsertion("few", 1, 4095),
            _upsertion("many", 2, 16385),
            _upsertion("", 1, 4096),
            _upsertion("unknown", 3, 4096),
            _upsertion("a b", 1, 8192),
            _upsertion("a b", 2, 4096),
            _upsertion("dup", 1, 4096),
            _upsertion("dup", 1, 5000),
            _upsertion("c*d", 2, 16384),
        ],
        [_deletion("unknown-del", 0), _deletion("", 1)],
    ),
    ([_upsertion("e", 2, 4096)], [_deletion("a b", 2), _deletion("ghost", 1), _deletion("e", 1)]),
    ([_upsertion("a b", 1, 4096, "new")], [_deletion("c*d", 2)]),
    ([_upsertion("c*d", 1, 10000), _upsertion("dup", 2, 4096)], []),
]


def _call(bootstrap: str, name: str, request: Any) -> Any:
    from kafkacore.client import Client

    with Client(bootstrap, timeout_s=30) as client:
        return client._call_any(name, 0, request)


def _znodes(connect: str) -> dict[str, Any]:
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=connect)
    zk.start()
    try:
        users = {
            u: json.loads(zk.get(f"/config/users/{u}")[0])
            for u in sorted(zk.get_children("/config/users"))
        }
        changes = sorted(
            json.loads(zk.get(f"/config/changes/{c}")[0])["entity_path"]
            for c in zk.get_children("/config/changes")
        )
        return {"users": users, "changes": [c for c in changes if c.startswith("users/")]}
    finally:
        zk.stop()
        zk.close()


def test_alter_answers_and_stores_as_kafka_39_in_zookeeper_mode(
    zookeeper: Any, tmp_path: Path, kafka_zk_libs: Path
) -> None:
    """The same AlterUserScramCredentials requests (same salts and salted passwords) to
    Kafka 3.9.1 and to kafkacore, each a ZooKeeper-mode broker on its own chroot: the
    same per-user errors and messages, the same ``/config/users`` znodes byte for byte
    (Kafka's credential strings) and change notifications, the same descriptions."""
    from cluster.test_mixed_cluster import KafkaBroker

    kafka_zk = unique_chroot(zookeeper.connect_string, "kafka")
    ours_zk = unique_chroot(zookeeper.connect_string, "kafkacore")
    kafka = KafkaBroker(tmp_path / "kafka", kafka_zk)
    ours = Broker(tmp_path / "kafkacore", [f"zookeeper.connect={ours_zk}"])
    kafka.start()
    try:
        ours.start()
        try:
            wait_until(lambda: _reachable(kafka.bootstrap), 120, "Kafka 3.9 answers ApiVersions")
            cls: Any = APIS_BY_NAME["AlterUserScramCredentials"].request.cls
            for upsertions, deletions in ALTERATIONS:
                request = cls(deletions=deletions, upsertions=upsertions)
                answers = [
                    sorted(
                        (r.user, r.error_code, r.error_message)
                        for r in _call(bootstrap, "AlterUserScramCredentials", request).results
                    )
                    for bootstrap in (kafka.bootstrap, ours.bootstrap)
                ]
                assert answers[1] == answers[0], upsertions
                assert answers[0], "an answer per user"
            describe: Any = APIS_BY_NAME["DescribeUserScramCredentials"].request.cls
            described = []
            for bootstrap in (kafka.bootstrap, ours.bootstrap):
                for users in (None, ["a b", "nobody", "dup", "dup", ""]):
                    request = describe(
                        users=None if users is None else [describe.UserName(name=u) for u in users]
                    )
                    response = _call(bootstrap, "DescribeUserScramCredentials", request)
                    described.append(
                        (
                            response.error_code,
                            response.error_message,
                            [
                                (
                                    r.user,
                                    r.error_code,
                                    r.error_message,
                                    [(c.mechanism, c.iterations) for c in r.credential_infos],
                                )
                                for r in response.results
                            ],
                        )
                    )
            assert described[2:] == described[:2]
            assert [r[0] for r in described[0][2]] == ["a b", "c*d", "dup"], described[0]
        finally:
            ours.stop()
    finally:
        kafka.stop()
    theirs_stored, ours_stored = _znodes(kafka_zk), _znodes(ours_zk)
    assert ours_stored == theirs_stored
    assert sorted(theirs_stored["users"]) == ["a%20b", "c%2Ad", "dup"]
    assert theirs_stored["users"]["a%20b"]["config"]["SCRAM-SHA-256"].startswith("salt=")


def _reachable(bootstrap: str) -> bool:
    try:
        _call(bootstrap, "DescribeUserScramCredentials", _empty_describe())
        return True
    except Exception:
        return False


def _empty_describe() -> Any:
    return APIS_BY_NAME["DescribeUserScramCredentials"].request.cls(users=None)
