"""pytest fixtures for code that talks to Kafka: an in-process kafkacore broker, no JVM,
no Docker. Installed with kafkacore (entry point ``pytest11``), so it needs no setup::

    from confluent_kafka import Producer

    @pytest.mark.kafkacore_topics({"orders": 3})
    def test_send(kafkacore_broker):
        producer = Producer({"bootstrap.servers": kafkacore_broker.bootstrap_servers})
        producer.produce("orders", b"hello")
        assert producer.flush(10) == 0

Fixtures (each an :class:`~kafkacore.embedded.EmbeddedBroker`):

* ``kafkacore_broker`` (function scope): an empty broker for each test. By default it is
  one broker per session *reset* after each test (every non-internal topic and every
  consumer group deleted), which is cheaper than a new broker (see the README's figures);
  if the reset fails (a consumer left in a group) the broker is replaced by a new one.
  The ini option ``kafkacore_isolation = fresh`` gives each test a new broker instead.
* ``kafkacore_broker_session`` (session scope): one broker shared by the whole session,
  never reset (topics created by one test are seen by the next).

Markers:

* ``@pytest.mark.kafkacore_topics("a", "b")`` or ``(...({"orders": 3}))``: topics the
  ``kafkacore_broker`` fixture creates (CreateTopics) before the test.
* ``@pytest.mark.kafkacore_configs({"auto.create.topics.enable": "false"})``: broker
  configs for this test: it gets a new broker of its own, started with them.

The plugin imports nothing of kafkacore until a fixture is used, so it costs nothing in
sessions that do not use it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from kafkacore.embedded import EmbeddedBroker

__all__ = ["kafkacore_broker", "kafkacore_broker_session"]

ISOLATION_MODES = ("reset", "fresh")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "kafkacore_isolation",
        "kafkacore_broker between tests: 'reset' (one broker, emptied after each test; "
        "the default) or 'fresh' (a new broker per test)",
        default="reset",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafkacore_topics(*topics): topics the kafkacore_broker fixture creates before the "
        "test: names (one partition each) and/or {name: partitions} mappings",
    )
    config.addinivalue_line(
        "markers",
        "kafkacore_configs(configs): broker configs (Kafka names) for this test's "
        "kafkacore_broker, which is then a broker of its own",
    )


def _marked_topics(node: pytest.Item) -> dict[str, int]:
    topics: dict[str, int] = {}
    for mark in node.iter_markers("kafkacore_topics"):
        for arg in mark.args:
            if isinstance(arg, Mapping):
                topics.update({str(k): int(v) for k, v in arg.items()})
            elif isinstance(arg, str):
                topics.setdefault(arg, 1)
            else:
                raise pytest.UsageError(
                    f"kafkacore_topics takes topic names and {{name: partitions}} mappings, "
                    f"not {arg!r}"
                )
        topics.update({str(k): int(v) for k, v in mark.kwargs.items()})
    return topics


def _marked_configs(node: pytest.Item) -> dict[str, object] | None:
    marks = list(node.iter_markers("kafkacore_configs"))
    if not marks:
        return None
    configs: dict[str, object] = {}
    for mark in reversed(marks):  # the closest mark (the test's own) wins
        for arg in mark.args:
            configs.update(dict(arg))
        configs.update(mark.kwargs)
    return configs


class _Pool:
    """The broker that ``kafkacore_broker`` reuses in ``reset`` mode."""

    def __init__(self) -> None:
        self.broker: EmbeddedBroker | None = None

    def get(self) -> EmbeddedBroker:
        from kafkacore.embedded import EmbeddedBroker

        if self.broker is None:
            self.broker = EmbeddedBroker().start()
        return self.broker

    def release(self) -> None:
        """Empty the broker for the next test; replace it if it cannot be emptied."""
        broker = self.broker
        if broker is None:
            return
        try:
            if not broker.running:
                raise RuntimeError("stopped by the test")
            broker.reset()
        except Exception:
            self.broker = None
            broker.close()

    def close(self) -> None:
        if self.broker is not None:
            self.broker.close()
            self.broker = None


@pytest.fixture(scope="session")
def _kafkacore_pool() -> Iterator[_Pool]:
    pool = _Pool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="session")
def kafkacore_broker_session() -> Iterator[EmbeddedBroker]:
    """One in-process kafkacore broker for the whole session (never reset)."""
    from kafkacore.embedded import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def kafkacore_broker(
    request: pytest.FixtureRequest, _kafkacore_pool: _Pool
) -> Iterator[EmbeddedBroker]:
    """An empty in-process kafkacore broker for this test, with the topics of its
    ``kafkacore_topics`` markers (see the module docstring)."""
    from kafkacore.embedded import EmbeddedBroker

    mode = str(request.config.getini("kafkacore_isolation")).strip() or "reset"
    if mode not in ISOLATION_MODES:
        raise pytest.UsageError(
            f"kafkacore_isolation must be one of {', '.join(ISOLATION_MODES)}, not {mode!r}"
        )
    topics = _marked_topics(request.node)
    configs = _marked_configs(request.node)
    if mode == "fresh" or configs is not None:
        with EmbeddedBroker(configs, topics=topics) as broker:
            yield broker
        return
    broker = _kafkacore_pool.get()
    try:
        if topics:
            broker.create_topics(topics)
        yield broker
    finally:
        _kafkacore_pool.release()
