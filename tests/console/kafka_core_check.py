"""`kafkacore console` as its own process against Apache Kafka 4.3.1 (KRaft, from the jars):
the same pages work over the Kafka protocol alone, with the broker-only facts (log end
offset, exact counts) left out and a notice saying why.

Not collected by `make test` (a Kafka JVM's start costs more than the console tests' share
of its time): `make console-kafka-test` runs it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.conftest import create_topics, produce, screenshot, wait_http
from support.kafka_jars import kafka_libs, kraft_single_node_props, start_kraft_node, stop_process
from support.ports import free_port

pytestmark = pytest.mark.interop

SEED = {0: 5, 1: 9}


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("kafka")
    port, controller = free_port(), free_port()
    props = home / "server.properties"
    props.write_text(kraft_single_node_props(home, port, controller))
    proc = start_kraft_node(kafka_libs(), props, home / "kafka.log")
    bootstrap = f"localhost:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                create_topics(bootstrap, ("kafka-orders", 2, {"retention.ms": "86400000"}))
                break
            except Exception:
                assert proc.poll() is None, (home / "kafka.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "Kafka did not start"
                time.sleep(0.5)
        produce(bootstrap, "kafka-orders", SEED)
        yield bootstrap
    finally:
        stop_process(proc)


@pytest.fixture(scope="module")
def console(kafka: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("console") / "console.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafkacore.cli", "console", "--bootstrap-server", kafka,
             "--listen", f"http://127.0.0.1:{port}"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/static/console.css")
        yield url
    finally:
        proc.terminate()
        assert proc.wait(20) == 0, Path(log).read_text()


def test_console_against_kafka(kafka: str, console: str, page: Any) -> None:
    page.goto(console + "/cluster")
    row = page.locator("#brokers tr[data-broker='1']")
    assert kafka.split(":")[1] in row.inner_text()
    log_dirs = page.locator("#log-dirs").inner_text()
    assert "online" in log_dirs and "DescribeLogDirs failed" not in log_dirs
    screenshot(page, "kafka-cluster")

    page.goto(console + "/topics?q=kafka-")
    assert page.locator("#topics tr[data-topic]").count() == 1

    page.goto(console + "/topics/kafka-orders")
    for partition, n in SEED.items():
        row = f"#partitions tr[data-partition='{partition}']"
        assert page.locator(f"{row} td.hw").inner_text() == str(n)
        assert page.locator(f"{row} td.start").inner_text() == "0"
        assert page.locator(f"{row} td.leo").inner_text() == "-"
        assert page.locator(f"{row} td.size").inner_text().endswith("B")
    assert "inside a kafkacore broker" in page.locator("main").inner_text()
    source = page.locator("#configs tr[data-config='retention.ms'] td.source")
    assert source.inner_text() == "DYNAMIC_TOPIC_CONFIG"
    screenshot(page, "kafka-topic-detail")
