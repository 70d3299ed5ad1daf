"""The security walk-through of docs/security.md, as a newcomer runs it:
``examples/secure_broker``'s certificates (openssl), its ``server.properties`` (SASL_SSL,
SCRAM-SHA-512 and PLAIN, the StandardAuthorizer name, ``super.users``) started with
``kafkacore server-start``, and
``walkthrough.sh`` (a SCRAM user, a topic, ``--producer``/``--consumer`` ACLs, alice's
console producer and consumer). Then what must be refused is: alice on a topic no ACL
gives her, alice in another group, a wrong password, anyone without TLS; and Kafka's own
console consumer reads the topic with alice's properties file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_STORED,
    Consumer,
    KafkaError,
    Producer,
    TopicPartition,
)

from compat.conftest import KafkaTools, ToolResult
from support.brokers import free_port

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "secure_broker"
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
CONFIG_COMMAND = "kafka.admin.ConfigCommand"


class Walkthrough:
    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.bootstrap = f"localhost:{port}"
        bin_dir = str(Path(sys.executable).parent)
        self.env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}

    def run(self, *cmd: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd,
            cwd=self.directory,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def java_properties(self, name: str) -> Path:
        """``<name>.properties`` with the trust store's path made absolute (for a JVM
        started elsewhere)."""
        path = self.directory / f"{name}-java.properties"
        text = (self.directory / f"{name}.properties").read_text()
        path.write_text(text.replace("location=ca.pem", f"location={self.directory / 'ca.pem'}"))
        return path

    def client(self, user: str, password: str, **extra: object) -> dict[str, object]:
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user,
            "sasl.password": password,
            "ssl.ca.location": str(self.directory / "ca.pem"),
            **extra,
        }


@pytest.fixture
def walkthrough(tmp_path: Path) -> Iterator[Walkthrough]:
    directory = tmp_path / "secure_broker"
    shutil.copytree(EXAMPLE, directory)
    port = free_port()
    props = directory / "server.properties"
    props.write_text(props.read_text().replace("localhost:9093", f"localhost:{port}"))
    w = Walkthrough(directory, port)
    made = w.run("./make-certs.sh")
    assert made.returncode == 0, made.stderr
    with open(directory / "broker.log", "wb") as log:
        broker = subprocess.Popen(
            [sys.executable, "-m", "kafkacore.cli", "server-start", "server.properties"],
            cwd=directory,
            env=w.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while b"started" not in (directory / "broker.log").read_bytes():
            assert broker.poll() is None, (directory / "broker.log").read_text()
            assert time.monotonic() < deadline, "the broker did not start"
            time.sleep(0.2)
        yield w
    finally:
        broker.terminate()
        broker.wait(30)


def test_the_readme_walkthrough_and_what_it_refuses(
    walkthrough: Walkthrough, kafka_tools: KafkaTools
) -> None:
    w = walkthrough
    done = w.run("./walkthrough.sh", BOOTSTRAP=w.bootstrap)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Completed updating config for user alice." in done.stdout
    assert "Created topic orders." in done.stdout
    assert "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)" in done.stdout
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("order-")) == [
        "order-1",
        "order-2",
        "order-3",
    ]
    assert "Processed a total of 3 messages" in done.stdout + done.stderr

    # the administrator (a super user) makes a topic alice has no ACL for
    made = w.run(
        "kafkacore",
        "topics",
        "--bootstrap-server",
        w.bootstrap,
        "--command-config",
        "admin.properties",
        "--create",
        "--topic",
        "payments",
    )
    assert made.returncode == 0, made.stderr

    # alice may not write it, nor read it, nor use another group
    errors: list[KafkaError] = []
    producer = Producer(w.client("alice", "alice-secret", **{"message.timeout.ms": 10000}))
    producer.produce("payments", b"x", on_delivery=lambda e, _m: errors.append(e))
    producer.flush(20)
    assert [e.code() for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]

    more = Producer(w.client("alice", "alice-secret"))
    for i in (4, 5):
        more.produce("orders", b"order-%d" % i, partition=0)
    assert more.flush(30) == 0

    def first_error(topic: str, group: str, offset: int = OFFSET_BEGINNING) -> int:
        consumer = Consumer(
            w.client("alice", "alice-secret", **{"group.id": group, "enable.auto.commit": False})
        )
        try:
            consumer.assign([TopicPartition(topic, 0, offset)])
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                msg = consumer.poll(1)
                if msg is not None and msg.error() is not None:
                    return int(msg.error().code())
                if msg is not None:
                    return 0
            return -1
        finally:
            consumer.close()

    # (from the group's committed offset: OffsetFetch answers the topic's error)
    assert (
        first_error("payments", "billing", OFFSET_STORED) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    )
    assert first_error("orders", "billing") == 0
    assert first_error("orders", "fraud") == KafkaError.GROUP_AUTHORIZATION_FAILED

    # a wrong password is refused with Kafka's message
    bad = Producer(w.client("alice", "wrong", **{"message.timeout.ms": 5000}))
    bad_errors: list[KafkaError] = []
    bad.produce("orders", b"x", on_delivery=lambda e, _m: bad_errors.append(e))
    bad.flush(15)
    assert bad_errors and bad_errors[0].code() in (
        KafkaError._AUTHENTICATION,
        KafkaError._MSG_TIMED_OUT,
    )

    # no TLS, no service: a plaintext client gets nothing from the port
    plain = Producer({"bootstrap.servers": w.bootstrap, "message.timeout.ms": 3000})
    plain_errors: list[KafkaError] = []
    plain.produce("orders", b"x", on_delivery=lambda e, _m: plain_errors.append(e))
    plain.flush(10)
    assert [e.code() for e in plain_errors] == [KafkaError._MSG_TIMED_OUT]

    # Kafka's own tools with the same properties files (paths made absolute for the JVM)
    alice, admin = (w.java_properties(name) for name in ("alice", "admin"))
    for tool, args in (
        (ACL_COMMAND, ("--list", "--principal", "User:alice")),
        (CONFIG_COMMAND, ("--describe", "--entity-type", "users", "--entity-name", "alice")),
    ):
        ours = w.run(
            "kafkacore",
            "acls" if tool == ACL_COMMAND else "configs",
            "--bootstrap-server",
            w.bootstrap,
            "--command-config",
            "admin.properties",
            *args,
        )
        theirs = kafka_tools.run(
            tool, "--bootstrap-server", w.bootstrap, "--command-config", str(admin), *args
        )
        assert ours.returncode == theirs.returncode == 0, theirs.stderr + ours.stderr
        assert "alice" in ours.stdout
        # Kafka prints HashMap order: the same lines, in any order
        assert sorted(ours.stdout.splitlines()) == sorted(theirs.stdout.splitlines())

    def alice_consumes(group: str, count: int, timeout_ms: int) -> ToolResult:
        return kafka_tools.run(
            CONSUMER,
            "--bootstrap-server",
            w.bootstrap,
            "--topic",
            "orders",
            "--group",
            group,
            "--from-beginning",
            "--max-messages",
            str(count),
            "--timeout-ms",
            str(timeout_ms),
            "--command-config",
            str(alice),
        )

    # group billing resumes after the walk-through's reads
    consumed = alice_consumes("billing", 2, 30000)
    assert sorted(consumed.stdout.split()) == ["order-4", "order-5"], consumed.stderr
    # a group alice may not use: refused by the broker's ACLs
    refused = alice_consumes("audit", 1, 15000)
    assert "GroupAuthorizationException" in refused.stdout + refused.stderr, refused.stderr
