"""The Java client properties of ``--command-config`` files as confluent-kafka settings
(kafkacore.cli._client), and every tool reading them the same way."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kafkacore.cli import UsageError
from kafkacore.cli._client import librdkafka_config
from kafkacore.cli.topics import client_config

JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="alice" password="s e;cret";'
)


def test_sasl_ssl_properties_of_kafkas_docs() -> None:
    conf = librdkafka_config(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": JAAS,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": "ca.pem",
            "ssl.truststore.password": "unused",
            "client.id": "tool",
        }
    )
    assert conf == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "s e;cret",
        "ssl.ca.location": "ca.pem",
        "client.id": "tool",
    }


def test_plain_jaas_and_mtls_stores() -> None:
    conf = librdkafka_config(
        {
            "sasl.jaas.config": 'x.PlainLoginModule required username="u" password="p";',
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "client.pem",
            "ssl.key.password": "k",
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    assert conf == {
        "sasl.username": "u",
        "sasl.password": "p",
        "ssl.certificate.location": "client.pem",
        "ssl.key.location": "client.pem",
        "ssl.key.password": "k",
        "ssl.endpoint.identification.algorithm": "none",
    }
    inline = librdkafka_config(
        {
            "ssl.keystore.certificate.chain": "CHAIN",
            "ssl.keystore.key": "KEY",
            "ssl.truststore.certificates": "CA",
        }
    )
    assert inline == {"ssl.certificate.pem": "CHAIN", "ssl.key.pem": "KEY", "ssl.ca.pem": "CA"}


@pytest.mark.parametrize("key", ["ssl.truststore.type", "ssl.keystore.type"])
def test_java_key_stores_are_refused_by_name(key: str) -> None:
    with pytest.raises(ValueError, match=f"{key}=JKS: only PEM"):
        librdkafka_config({key: "JKS", "ssl.truststore.location": "x.jks"})


def test_tools_read_command_and_console_configs(tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text(f"security.protocol=SASL_SSL\nsasl.jaas.config={JAAS}\n")
    for option in ("command_config", "producer_config", "consumer_config"):
        args = argparse.Namespace(prog="t", bootstrap_server="h:1", **{option: str(props)})
        conf = client_config(args)
        assert conf["sasl.username"] == "alice" and conf["bootstrap.servers"] == "h:1"
    bad = tmp_path / "jks.properties"
    bad.write_text("ssl.truststore.type=JKS\n")
    with pytest.raises(UsageError, match="only PEM"):
        client_config(argparse.Namespace(prog="t", bootstrap_server="h:1", command_config=str(bad)))
