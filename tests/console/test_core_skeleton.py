"""The console served by the broker: the cluster page in a real browser (Debian's
chromium through Playwright), the console's config keys and their Kafka-style errors."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from console.conftest import ConsoleBroker, screenshot
from kafkacore.config import BrokerConfig, ConfigError


def test_cluster_page_in_the_browser(console_broker: ConsoleBroker, page: Any) -> None:
    page.goto(console_broker.console_url + "/")
    assert page.url == console_broker.console_url + "/cluster"
    assert page.title().startswith("Cluster")
    row = page.locator("#brokers tr[data-broker='1']")
    assert "controller" in row.inner_text()
    assert console_broker.bootstrap.split(":")[1] in row.inner_text()
    assert page.locator("#offline").inner_text() == "0"
    # the broker's one log directory, online
    assert str(console_broker.data_dir) in page.locator("#log-dirs").inner_text()
    screenshot(page, "cluster-empty")


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
