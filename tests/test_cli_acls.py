"""``kafkacore acls`` (Kafka's kafka-acls) against a kafkacore broker with an authorizer:
its argument checks, the ACLs each option combination creates, its output, --remove's
confirmation, --command-config. (Its output against Kafka's own tool and broker:
tests/interop/test_kafka_acls_tool.py.)"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kafkacore.cli import main
from kafkacore.cli.acls import _client_config
from support.brokers import Broker, BrokerFactory

AUTHZ = (
    "authorizer.class.name=kafkacore.security.acl.Authorizer",
    "super.users=User:ANONYMOUS",
)
ORDERS = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(*AUTHZ)


def acls(capsys: pytest.CaptureFixture[str], broker: Broker, *args: str) -> tuple[int, str, str]:
    code = main(["acls", "--bootstrap-server", broker.bootstrap, *args])
    out, err = capsys.readouterr()
    return code, out, err


def entry(principal: str, op: str, perm: str = "ALLOW", host: str = "*") -> str:
    return f"(principal={principal}, host={host}, operation={op}, permissionType={perm})"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Command must include exactly one action: --list, --add, --remove. "),
        (("--add", "--list"), "Command must include exactly one action"),
        (
            ("--add", "--producer", "--allow-principal", "User:a"),
            "With --producer you must specify a --topic",
        ),
        (
            ("--list", "--allow-principal", "User:a"),
            'Option "[list]" can\'t be used with option "[allow-principal]"',
        ),
        (
            ("--add", "--idempotent", "--topic", "t"),
            "The --idempotent option is only available if --producer is set",
        ),
        (
            ("--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"),
            "With --consumer you must specify a --topic and a --group",
        ),
        (
            ("--add", "--producer", "--operation", "Read", "--topic", "t"),
            'Option "[producer]" can\'t be used with option "[operation]"',
        ),
        (
            (
                "--add",
                "--topic",
                "t",
                "--resource-pattern-type",
                "match",
                "--allow-principal",
                "User:a",
            ),
            "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls.",
        ),
        (
            ("--list", "--resource-pattern-type", "sideways"),
            "Unknown resource-pattern-type: sideways",
        ),
        (
            ("--add", "--topic", "t"),
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.",
        ),
        (("--add", "--allow-principal", "User:a"), "You must provide at least one resource"),
        (
            ("--add", "--cluster", "--operation", "Read", "--allow-principal", "User:a"),
            "ResourceType CLUSTER only supports operations",
        ),
        (
            ("--remove", "--principal", "User:a", "--topic", "t"),
            "The --principal option is only available if --list is set",
        ),
    ],
)
def test_usage_errors(
    capsys: pytest.CaptureFixture[str], broker: Broker, args: tuple[str, ...], message: str
) -> None:
    code, out, err = acls(capsys, broker, *args)
    assert code == 1 and out == ""
    assert err.startswith("kafkacore acls: error: ") and message in err, err


def test_no_bootstrap_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["acls", "--list"]) == 1
    assert (
        "One of --bootstrap-server or --bootstrap-controller must be specified"
        in capsys.readouterr().err
    )


def test_failures_while_executing(capsys: pytest.CaptureFixture[str], broker: Broker) -> None:
    code, out, _ = acls(capsys, broker, "--add", "--allow-principal", "alice", "--topic", "t")
    assert (code, out) == (
        1,
        "Error while executing ACL command: expected a string in format "
        "principalType:principalName but got alice\n",
    )
    code, out, _ = acls(capsys, broker, "--list", "--delegation-token", "tok")
    assert code == 1 and "has no DELEGATION_TOKEN resource type" in out


def add_alice_reads_orders(operation: str) -> tuple[str, ...]:
    """--add alice's READ on the topic orders (``operation`` as the user spells it)."""
    return (
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        operation,
        "--topic",
        "orders",
    )


# BadBob may not write to orders from 198.51.100.3
BAD_BOB_DENIED_WRITE = (
    "--deny-principal",
    "User:BadBob",
    "--deny-host",
    "198.51.100.3",
    "--operation",
    "Write",
    "--topic",
    "orders",
)


def test_add_list_remove(capsys: pytest.CaptureFixture[str], broker: Broker) -> None:
    code, out, _ = acls(capsys, broker, *add_alice_reads_orders("Read"))
    assert code == 0
    assert out == f"Adding ACLs for resource `{ORDERS}`: \n \t{entry('User:alice', 'READ')}\n\n"
    code, out, _ = acls(capsys, broker, *add_alice_reads_orders("read"))
    binding = f"(pattern={ORDERS}, entry={entry('User:alice', 'READ')})"
    assert (code, out) == (0, f"Acl {binding} already exists.\n")
    code, out, _ = acls(capsys, broker, "--add", *BAD_BOB_DENIED_WRITE)
    assert code == 0
    code, out, _ = acls(capsys, broker, "--list", "--topic", "orders")
    assert out == (
        f"Current ACLs for resource `{ORDERS}`:\n"
        f"\t{entry('User:BadBob', 'WRITE', 'DENY', '198.51.100.3')}\n"
        f"\t{entry('User:alice', 'READ')}\n\n"
    )
    code, out, _ = acls(capsys, broker, "--list", "--principal", "User:alice")
    assert (
        out == f"ACLs for principal `User:alice`\nCurrent ACLs for resource `{ORDERS}`:\n"
        f"\t{entry('User:alice', 'READ')}\n\n"
    )
    # --remove asks first: "n" keeps them, "y" (or --force) removes them
    monkey = pytest.MonkeyPatch()
    try:
        monkey.setattr("sys.stdin", io.StringIO("n\n"))
        code, out, _ = acls(capsys, broker, "--remove", "--topic", "orders")
        assert (
            out
            == f"Are you sure you want to delete all ACLs for resource filter `{ORDERS}`? (y/n)\n"
        )
        assert acls(capsys, broker, "--list", "--topic", "orders")[1].count("\t(") == 2
        monkey.setattr("sys.stdin", io.StringIO("y\n"))
        code, out, _ = acls(capsys, broker, "--remove", *BAD_BOB_DENIED_WRITE)
        assert out == (
            "Are you sure you want to remove ACLs: \n "
            f"\t{entry('User:BadBob', 'WRITE', 'DENY', '198.51.100.3')}\n"
            f" from resource filter `{ORDERS}`? (y/n)\n"
        )
    finally:
        monkey.undo()
    code, out, _ = acls(capsys, broker, "--list", "--topic", "orders")
    assert out == f"Current ACLs for resource `{ORDERS}`:\n\t{entry('User:alice', 'READ')}\n\n"
    assert acls(capsys, broker, "--remove", "--force", "--topic", "orders")[:2] == (0, "")
    assert acls(capsys, broker, "--list", "--topic", "orders")[:2] == (0, "")


ADD_JANE_PRODUCER = ("--add", "--allow-principal", "User:jane", "--producer")


def test_producer_and_consumer(capsys: pytest.CaptureFixture[str], broker: Broker) -> None:
    code, _, _ = acls(
        capsys,
        broker,
        *ADD_JANE_PRODUCER,
        "--idempotent",
        "--topic",
        "p1",
        "--transactional-id",
        "tx",
    )
    assert code == 0
    code, _, _ = acls(
        capsys,
        broker,
        "--add",
        "--allow-principal",
        "User:carl",
        "--consumer",
        "--topic",
        "p1",
        "--group",
        "g",
    )
    assert code == 0
    resources = ("--topic", "p1", "--transactional-id", "tx", "--cluster", "--group", "g")
    code, out, _ = acls(capsys, broker, "--list", *resources)
    listed = set()
    for block in out.split("\n\n"):
        if block:
            head, *lines = block.splitlines()
            listed |= {(head.split("`")[1], line.strip()) for line in lines}
    topic = "ResourcePattern(resourceType=TOPIC, name=p1, patternType=LITERAL)"
    txn = "ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)"
    cluster = "ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)"
    group = "ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)"
    assert listed == {
        *((topic, entry("User:jane", op)) for op in ("WRITE", "DESCRIBE", "CREATE")),
        *((txn, entry("User:jane", op)) for op in ("WRITE", "DESCRIBE")),
        (cluster, entry("User:jane", "IDEMPOTENT_WRITE")),
        *((topic, entry("User:carl", op)) for op in ("READ", "DESCRIBE")),
        (group, entry("User:carl", "READ")),
    }
    # prefixed producer ACLs and a MATCH listing of a topic they apply to
    code, _, _ = acls(
        capsys,
        broker,
        *ADD_JANE_PRODUCER,
        "--topic",
        "Test-",
        "--resource-pattern-type",
        "prefixed",
    )
    code, out, _ = acls(
        capsys, broker, "--list", "--topic", "Test-orders", "--resource-pattern-type", "match"
    )
    assert out.startswith(
        "Current ACLs for resource "
        "`ResourcePattern(resourceType=TOPIC, name=Test-, patternType=PREFIXED)`:\n"
    )
    assert out.count("\t(") == 3


def test_command_config(tmp_path: Path, capsys: pytest.CaptureFixture[str], broker: Broker) -> None:
    plain = tmp_path / "plain.properties"
    plain.write_text("client.id=acl-tool\nsecurity.protocol=PLAINTEXT\n")
    code, out, _ = acls(capsys, broker, "--command-config", str(plain), "--list", "--topic", "none")
    assert (code, out) == (0, "")
    props = tmp_path / "client.properties"
    props.write_text(
        "client.id=acl-tool\n"
        "security.protocol=PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="s e;cret";\n'
        "ssl.truststore.type=PEM\n"
        "ssl.truststore.location=/etc/ca.pem\n"
    )
    import argparse

    conf = _client_config(argparse.Namespace(command_config=str(props), bootstrap_server="h:1"))
    assert conf["sasl.username"] == "alice" and conf["sasl.password"] == "s e;cret"
    assert conf["ssl.ca.location"] == "/etc/ca.pem" and "ssl.truststore.type" not in conf
    assert conf["sasl.mechanism"] == "SCRAM-SHA-512" and conf["client.id"] == "acl-tool"
