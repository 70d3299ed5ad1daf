"""Fixtures of the console tests (tests/console): a kafkacore broker serving the console
(``console_broker``), Playwright driving Debian's chromium (``browser``, ``page``, never a
downloaded browser) and :func:`screenshot`, which writes tests/artifacts/console/NAME.png
for a person to look at.

Each module shares one broker and one browser; ``page`` is a fresh browser context per
test (its own cookies) that fails the test on a JavaScript error or a failed request."""

from __future__ import annotations

import os
from collections.abc import Iterator
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


def start_console_broker(broker_factory: BrokerFactory, *overrides: str) -> ConsoleBroker:
    """A broker with ``console.listeners`` on a free loopback port, plus ``overrides``."""
    port = free_port()
    broker = broker_factory(f"console.listeners=http://127.0.0.1:{port}", *overrides)
    assert f"console at http://127.0.0.1:{port}/" in broker.log_text()
    return ConsoleBroker(broker, f"http://127.0.0.1:{port}")


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


def screenshot(page: Any, name: str) -> Path:
    """The whole page as tests/artifacts/console/NAME.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
