"""Real clients against secured kafkacore listeners: confluent-kafka (librdkafka) producing
and consuming over SSL, SASL_PLAINTEXT and SASL_SSL with PLAIN and SCRAM-SHA-512, a wrong
password refused with Kafka's message, and Kafka 4.3.1's own console producer and consumer
(from its jars) over SASL_SSL with SCRAM-SHA-512 and a PEM trust store file.

The broker runs in-process (``support.secure.ThreadedBroker``) so that the test can give
SCRAM users their salted credentials directly; certificates come from ``support.certs``."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from compat.conftest import KafkaTools, ToolResult
from support.certs import make_pki
from support.secure import PemFiles, ThreadedBroker, plain_jaas, scram_jaas, write_pem_files

pytestmark = pytest.mark.timeout(240)

PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
USERS = {"admin": "admin-secret", "alice": "alice-secret"}


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> PemFiles:
    return write_pem_files(tmp_path_factory.mktemp("pki"), make_pki())


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, pem: PemFiles) -> Iterator[ThreadedBroker]:
    data = tmp_path_factory.mktemp("secure-broker")
    jaas = plain_jaas("admin", "admin-secret", USERS)
    broker = ThreadedBroker(
        {
            "node.id": 1,
            "log.dirs": str(data),
            "listeners": ("SSL://localhost:0,SASL_PLAINTEXT://localhost:0,SASL_SSL://localhost:0"),
            "inter.broker.listener.name": "SASL_SSL",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas,
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pem.server_keystore),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pem.ca),
            "listener.name.ssl.ssl.client.auth": "required",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
            "connection.failed.authentication.delay.ms": "50",
        }
    ).start()
    broker.add_scram_user("alice", "alice-secret")
    broker.add_scram_user("admin", "admin-secret")
    yield broker
    broker.stop()


def _client_config(
    broker: ThreadedBroker, pem: PemFiles, protocol: str, mechanism: str | None, password: str
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": f"localhost:{broker.port(protocol)}",
        "security.protocol": protocol.lower(),
    }
    if "SSL" in protocol:
        config["ssl.ca.location"] = str(pem.ca)
    if protocol == "SSL":
        config["ssl.certificate.location"] = str(pem.client_cert)
        config["ssl.key.location"] = str(pem.client_key)
    if mechanism is not None:
        config.update(
            {"sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": password}
        )
    return config


@pytest.mark.parametrize(
    ("protocol", "mechanism"),
    [
        ("SSL", None),
        ("SASL_PLAINTEXT", "PLAIN"),
        ("SASL_PLAINTEXT", "SCRAM-SHA-512"),
        ("SASL_SSL", "PLAIN"),
        ("SASL_SSL", "SCRAM-SHA-512"),
    ],
)
def test_confluent_kafka_produces_and_consumes(
    secured: ThreadedBroker, pem: PemFiles, protocol: str, mechanism: str | None
) -> None:
    config = _client_config(secured, pem, protocol, mechanism, "alice-secret")
    topic = f"sec-{protocol.lower()}-{(mechanism or 'tls').lower()}"
    errors: list[KafkaError] = []
    producer = Producer({**config, "acks": "all", "error_cb": errors.append})
    values = [f"{protocol}-{i}".encode() * 20 for i in range(200)]
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0, errors
    consumer = Consumer({**config, "group.id": f"g-{uuid.uuid4()}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < len(values) and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is None:
            continue
        assert message.error() is None, message.error()
        got.append(message.value())
    consumer.close()
    assert got == values
    assert not errors, errors


@pytest.mark.parametrize(
    ("mechanism", "message"),
    [
        ("PLAIN", "Authentication failed: Invalid username or password"),
        (
            "SCRAM-SHA-512",
            "Authentication failed during authentication due to invalid credentials with "
            "SASL mechanism SCRAM-SHA-512",
        ),
    ],
)
def test_confluent_kafka_wrong_password_gets_kafkas_message(
    secured: ThreadedBroker, pem: PemFiles, mechanism: str, message: str
) -> None:
    config = _client_config(secured, pem, "SASL_SSL", mechanism, "wrong-password")
    errors: list[KafkaError] = []
    producer = Producer({**config, "error_cb": errors.append, "message.timeout.ms": 3000})
    producer.produce("never", b"x")
    producer.flush(5)
    assert errors
    assert errors[0].code() == KafkaError._AUTHENTICATION
    assert message in errors[0].str()


def _java_client_properties(path: Path, pem: PemFiles, password: str) -> Path:
    path.write_text(
        "\n".join(
            [
                "security.protocol=SASL_SSL",
                "sasl.mechanism=SCRAM-SHA-512",
                f"sasl.jaas.config={scram_jaas('alice', password)}",
                "ssl.truststore.type=PEM",
                f"ssl.truststore.location={pem.ca}",
                "",
            ]
        )
    )
    return path


def _console_produce(
    tools: KafkaTools, bootstrap: str, topic: str, properties: Path, lines: list[str]
) -> ToolResult:
    """Kafka's ConsoleProducer: one record per line, the client settings of ``properties``."""
    return tools.run(
        PRODUCER,
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--command-config",
        str(properties),
        stdin="\n".join(lines) + "\n",
    )


def _console_consume(
    tools: KafkaTools, bootstrap: str, topic: str, properties: Path, count: int, *more: str
) -> ToolResult:
    """Kafka's ConsoleConsumer: up to ``count`` records of partition 0 from the start."""
    return tools.run(
        CONSUMER,
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--partition",
        "0",
        "--offset",
        "earliest",
        "--max-messages",
        str(count),
        *more,
        "--command-config",
        str(properties),
    )


def test_kafka_console_tools_over_sasl_ssl_scram(
    secured: ThreadedBroker, pem: PemFiles, kafka_tools: KafkaTools, tmp_path: Path
) -> None:
    properties = _java_client_properties(tmp_path / "client.properties", pem, "alice-secret")
    bootstrap = f"localhost:{secured.port('SASL_SSL')}"
    lines = [f"console-{i}" for i in range(50)]
    _console_produce(kafka_tools, bootstrap, "sec-console", properties, lines).check()
    consumed = _console_consume(
        kafka_tools, bootstrap, "sec-console", properties, len(lines)
    ).check()
    assert consumed.stdout.split() == lines
    # a wrong password: the tool gets Kafka's message
    bad = _java_client_properties(tmp_path / "bad.properties", pem, "wrong")
    refused = _console_consume(
        kafka_tools, bootstrap, "sec-console", bad, 1, "--timeout-ms", "10000"
    )
    # ConsoleConsumer reports the SaslAuthenticationException and consumes nothing
    assert "Processed a total of 0 messages" in refused.stdout + refused.stderr
    assert (
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-512" in refused.stdout + refused.stderr
    )


def test_kafka_console_tools_over_mtls(
    secured: ThreadedBroker, pem: PemFiles, kafka_tools: KafkaTools, tmp_path: Path
) -> None:
    """Java's TLS (JSSE) with a PEM key store as client certificate, against the SSL listener
    that requires one."""
    keystore = tmp_path / "client-keystore.pem"
    keystore.write_text(pem.client_key.read_text() + pem.client_cert.read_text())
    properties = tmp_path / "mtls.properties"
    properties.write_text(
        "security.protocol=SSL\n"
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={pem.ca}\n"
        "ssl.keystore.type=PEM\n"
        f"ssl.keystore.location={keystore}\n"
    )
    bootstrap = f"localhost:{secured.port('SSL')}"
    lines = [f"mtls-{i}" for i in range(20)]
    _console_produce(kafka_tools, bootstrap, "sec-mtls", properties, lines).check()
    consumed = _console_consume(kafka_tools, bootstrap, "sec-mtls", properties, len(lines)).check()
    assert consumed.stdout.split() == lines


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def reauth_broker(tmp_path: Path) -> Iterator[tuple[ThreadedBroker, _Records]]:
    """SASL_PLAINTEXT with sessions of 1.5 s (KIP-368): clients must re-authenticate."""
    records = _Records()
    loggers = [logging.getLogger("kafkacore.sasl"), logging.getLogger("kafkacore.server")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(records)
    loggers[0].setLevel(logging.DEBUG)
    broker = ThreadedBroker(
        {
            "node.id": 1,
            "log.dirs": str(tmp_path / "data"),
            "listeners": "SASL_PLAINTEXT://localhost:0",
            "security.inter.broker.protocol": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain_jaas(
                "admin", "admin-secret", USERS
            ),
            "connections.max.reauth.ms": "1500",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
        }
    ).start()
    broker.add_scram_user("alice", "alice-secret")
    try:
        yield broker, records
    finally:
        broker.stop()
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(records)
            lg.setLevel(level)


def _reauthentications(records: _Records) -> int:
    return sum("re-authenticated as User:alice" in m for m in records.messages)


def _expired(records: _Records) -> list[str]:
    return [m for m in records.messages if "SASL session expired" in m]


def test_clients_reauthenticate_kip_368(
    reauth_broker: tuple[ThreadedBroker, _Records], kafka_tools: KafkaTools, tmp_path: Path
) -> None:
    broker, records = reauth_broker
    bootstrap = f"localhost:{broker.port('SASL_PLAINTEXT')}"
    # librdkafka: produce for 4 s over SCRAM-SHA-512; every connection re-authenticates
    errors: list[KafkaError] = []
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "security.protocol": "sasl_plaintext",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "alice",
            "sasl.password": "alice-secret",
            "error_cb": errors.append,
        }
    )
    deadline = time.monotonic() + 4
    sent = 0
    while time.monotonic() < deadline:
        producer.produce("reauth", f"r-{sent}".encode(), partition=0)
        sent += 1
        producer.poll(0.05)
    assert producer.flush(30) == 0
    assert not errors, errors
    after_librdkafka = _reauthentications(records)
    assert after_librdkafka >= 2, records.messages[-20:]
    # Kafka's Java consumer (PLAIN): reads them, then idles past several session lifetimes
    properties = tmp_path / "reauth.properties"
    properties.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="alice" password="alice-secret";\n'
    )
    consumed = kafka_tools.run(
        CONSUMER,
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "reauth",
        "--partition",
        "0",
        "--offset",
        "earliest",
        "--max-messages",
        str(sent + 1),
        "--timeout-ms",
        "5000",
        "--command-config",
        str(properties),
    )
    assert f"Processed a total of {sent} messages" in consumed.stdout + consumed.stderr
    assert _reauthentications(records) >= after_librdkafka + 2
    assert not _expired(records), _expired(records)
