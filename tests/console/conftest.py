"""Fixtures of the console tests (tests/console): a kafkacore broker serving the console
(``console_broker``), Playwright driving Debian's chromium (``browser``, ``page``, never a
downloaded browser) and :func:`screenshot`, which writes tests/artifacts/console/NAME.png
for a person to look at.

Each module shares one broker and one browser; ``page`` is a fresh browser context per
test (its own cookies) that fails the test on a JavaScript error or a failed request."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.brokers import Broker, BrokerFactory
from support.ports import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "console"


@dataclass
class ConsoleBroker:
    broker: Broker
    console_url: str

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    @property
    def data_dir(self) -> Path:
        return self.broker.data


def wait_console(broker: Broker, url: str, timeout_s: float = 30) -> ConsoleBroker:
    """``broker`` once its console (started beside it, after the broker's own "started"
    line) says it serves ``url``."""
    deadline = time.monotonic() + timeout_s
    while f"console at {url}/" not in broker.log_text():
        assert time.monotonic() < deadline, f"no console at {url}:\n{broker.log_text()[-4000:]}"
        time.sleep(0.05)
    return ConsoleBroker(broker, url)


def start_console_broker(broker_factory: BrokerFactory, *overrides: str) -> ConsoleBroker:
    """A broker with ``console.listeners`` on a free loopback port, plus ``overrides``."""
    port = free_port()
    broker = broker_factory(f"console.listeners=http://127.0.0.1:{port}", *overrides)
    return wait_console(broker, f"http://127.0.0.1:{port}")


@pytest.fixture(scope="module")
def console_broker(broker_factory: BrokerFactory) -> ConsoleBroker:
    return start_console_broker(broker_factory)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: apt-get install chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda msg: (
            errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
        ),
    )
    page.on("requestfailed", lambda req: errors.append(f"request failed: {req.url} {req.failure}"))
    page.errors = errors
    try:
        yield page
    finally:
        context.close()
    # expected HTTP errors (403, 401 pages) show up as console errors "Failed to load
    # resource": those are the tests' business, not failures here
    unexpected = [e for e in errors if "Failed to load resource" not in e]
    assert not unexpected, "\n".join(unexpected)


def wait_http(url: str, timeout_s: float = 30) -> None:
    """Until ``url`` answers 200."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.1)


def screenshot(page: Any, name: str) -> Path:
    """The whole page as tests/artifacts/console/NAME.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@dataclass(frozen=True)
class ToolResult:
    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class KafkaTools:
    """Runs Kafka 4.3.1's command-line tools from its jars (``java -cp libs/* Main ...``)."""

    libs: Path

    TOPICS = "org.apache.kafka.tools.TopicCommand"
    CONFIGS = "kafka.admin.ConfigCommand"  # still in core (Scala) in 4.3.1
    ACLS = "org.apache.kafka.tools.AclCommand"

    def run(self, main: str, *args: str, timeout: float = 90) -> ToolResult:
        from support.kafka_jars import JVM_FLAGS

        proc = subprocess.run(
            ["java", *JVM_FLAGS, "-cp", f"{self.libs}/*", main, *args],
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
        return ToolResult(proc.returncode, proc.stdout, proc.stderr)

    def run_all(self, *jobs: tuple[str, ...]) -> list[ToolResult]:
        """Several JVMs side by side (each job ``(main, *args)``), results in order."""
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            return list(pool.map(lambda job: self.run(*job), jobs))


@pytest.fixture(scope="session")
def kafka_tools() -> KafkaTools:
    from support.kafka_jars import kafka_libs

    return KafkaTools(kafka_libs())


def produce(bootstrap: str, topic: str, counts: dict[int, int], key_prefix: str = "k") -> None:
    """``counts[p]`` records into partition ``p`` of ``topic`` (acks=all), keys
    ``<key_prefix><p>-<i>``, values JSON."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for partition, n in counts.items():
        for i in range(n):
            producer.produce(
                topic,
                key=f"{key_prefix}{partition}-{i}".encode(),
                value=json.dumps({"p": partition, "i": i}).encode(),
                partition=partition,
            )
    assert producer.flush(30) == 0


def create_topics(bootstrap: str, *topics: tuple[str, int, dict[str, str]]) -> None:
    """Create ``(name, partitions, configs)`` topics (replication factor 1)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, partitions, 1, config=configs) for name, partitions, configs in topics]
    )
    for future in futures.values():
        future.result(30)
