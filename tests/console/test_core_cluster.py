"""The Cluster view's computations: CMAK's spread and skew and Kafka's partition-state
counts on a made-up three-broker layout; the console's config keys and their Kafka-style
errors. (The page itself, in the browser: test_core_topics.py, on its seeded broker.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from kafkacore.config import BrokerConfig, ConfigError
from kafkacore.console.views.cluster import PartitionInfo, partition_health, spread


def test_spread_and_skew_as_cmak() -> None:
    parts = [
        PartitionInfo("t", 0, 1, (1, 2), (1, 2)),
        PartitionInfo("t", 1, 1, (1, 3), (1,)),  # under-replicated
        PartitionInfo("t", 2, 2, (1, 2), (2, 1)),
        PartitionInfo("u", 0, -1, (3,), ()),  # offline
    ]
    rows = {r.broker: r for r in spread([1, 2, 3], parts)}
    assert [(rows[b].replicas, rows[b].leaders) for b in (1, 2, 3)] == [(3, 2), (2, 1), (2, 0)]
    # average 7/3 replicas and 1 leader per broker
    assert round(rows[1].replica_skew_pct, 1) == 28.6
    assert round(rows[3].replica_skew_pct, 1) == -14.3
    assert [rows[b].leader_skew_pct for b in (1, 2, 3)] == [100.0, 0.0, -100.0]
    # t: 6 replicas over 3 brokers, fair share 2: broker 1 holds 3
    assert [rows[b].skewed_topics for b in (1, 2, 3)] == [["t"], [], []]
    health = partition_health(parts, {"t": 2, "u": 1})
    assert [(p.topic, p.partition) for p in health["under_replicated"]] == [("t", 1), ("u", 0)]
    assert [(p.topic, p.partition) for p in health["under_min_isr"]] == [("t", 1), ("u", 0)]
    assert [(p.topic, p.partition) for p in health["offline"]] == [("u", 0)]


def test_console_config_keys() -> None:
    config = BrokerConfig({"console.listeners": "http://:8080"})
    assert config.console_listeners == ["http://:8080"]
    assert config.console_read_only is False
    assert config.console_audit_topic == "__console_audit"
    assert BrokerConfig({}).console_listeners is None  # off by default
    with pytest.raises(ConfigError) as exc:
        BrokerConfig({"console.listeners": "https://:8443"})
    assert str(exc.value) == (
        "Invalid value https://:8443 for configuration console.listeners: only "
        "http://host:port listeners are supported (empty host: 127.0.0.1)"
    )
    with pytest.raises(ConfigError, match=r"console\.audit\.topic: String must be non-empty"):
        BrokerConfig({"console.audit.topic": ""})


def test_bad_console_listener_stops_server_start() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", "server-start",
         "--override", "console.listeners=ftp://x:1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Invalid value ftp://x:1 for configuration console.listeners" in proc.stderr


def test_kafkacore_console_login_from_command_config(tmp_path: Path) -> None:
    """SASL in --command-config without credentials: each user logs in; with them: the
    console acts as that one account."""
    from kafkacore.cli.web_console import console_context
    from kafkacore.console.context import Login

    bare = tmp_path / "bare.properties"
    bare.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n")
    args = argparse.Namespace(
        bootstrap_server="h:1", command_config=str(bare), read_only=True, audit_topic="audit"
    )
    ctx = console_context(args)
    try:
        assert ctx.login == Login("SCRAM-SHA-256", "SASL_PLAINTEXT")
        assert ctx.base_config == {"bootstrap.servers": "h:1"}
        assert ctx.credentials_config("u", "p")["sasl.username"] == "u"
        assert ctx.read_only and ctx.audit_topic == "audit" and ctx.broker is None
    finally:
        ctx.close()
    account = tmp_path / "account.properties"
    account.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" '
        'password="pw";\n'
    )
    ctx = console_context(argparse.Namespace(**{**vars(args), "command_config": str(account)}))
    try:
        assert ctx.login is None
        assert ctx.base_config["sasl.username"] == "svc"
        assert ctx.base_config["security.protocol"] == "SASL_PLAINTEXT"
    finally:
        ctx.close()
