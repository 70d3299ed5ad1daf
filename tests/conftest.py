"""Shared fixtures: both backends, kafkacore brokers as subprocesses (`broker_factory`),
and hypothesis profiles (CI runs the `ci` profile)."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from kafkacore.client import Client
from kafkacore.native import load_backend
from support.brokers import Broker, BrokerFactory
from support.object_store import object_store  # noqa: F401  (fixture)
from support.zookeeper import zk_chroot, zookeeper  # noqa: F401  (fixtures)

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Fixtures that fetch something from the network on first use (scripts/install-test-clients.sh,
# scripts/kafka-jars.sh, scripts/spark-jars.sh): a test using any of them is marked
# `downloads`, which `make test-fast` deselects.
DOWNLOADING_FIXTURES = frozenset(
    {
        "test_clients",
        "kcat",
        "kafka_tools",
        "kafka_libs",
        "java",
        "spark",
        "spark_jars",
        "zookeeper",
        "zk_chroot",
        "object_store",
    }
)


# `make test` runs the suite on pytest-xdist workers (`--dist loadgroup`), then the tests
# marked `serial` alone. The scheduler below hands out whole groups: every test module is
# one, so its module-scoped brokers and clusters start once, on one worker; the Spark tests
# are one group, for the session's one SparkSession. (xdist's own loadgroup reads
# `xdist_group` markers by renaming node ids, which pytest 9.2 no longer allows.) Groups
# go out in the order of the items: the costly ones first (they would otherwise end the
# run alone on one worker), by what their fixtures start, the `slow` ones before all; the
# unit tests' modules last, in their order.
SPARK_GROUP = "spark"
FIXTURE_COST = {
    "cluster": 10,
    "spark": 10,
    "zookeeper": 5,
    "object_store": 3,
    "broker_factory": 2,
    "java": 2,
    "kafka_tools": 2,
    "kafka_libs": 1,
    "test_clients": 1,
    "broker": 1,
}
SLOW_COST = 100


def group_of(nodeid: str) -> str:
    """The scheduling group of the test ``nodeid``: its module's path, or ``spark`` for
    the tests under tests/spark."""
    module = nodeid.split("::", 1)[0]
    return SPARK_GROUP if module.startswith("spark/") or "/spark/" in module else module


def _cost(item: pytest.Item) -> int:
    cost = sum(FIXTURE_COST.get(f, 0) for f in getattr(item, "fixturenames", ()))
    return cost + (SLOW_COST if item.get_closest_marker("slow") else 0)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    for item in items:
        if DOWNLOADING_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.downloads)
    yield
    # after every other implementation (pytest's reordering for parametrized fixtures
    # among them): costly groups first, each group's items together and in their order
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(group_of(item.nodeid), []).append(item)
    ranked = sorted(groups.values(), key=lambda group: -sum(map(_cost, group)))
    items[:] = [item for group in ranked for item in group]


class _GroupScheduler:
    """pytest-xdist's ``--dist loadgroup`` with the groups of :func:`group_of`."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
            def _split_scope(self, nodeid: str) -> str:
                return group_of(nodeid)

        return GroupScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    # registered only with xdist there: its hook is unknown without it
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_GroupScheduler(), "kafkacore-group-scheduler")


@pytest.fixture(scope="session")
def native() -> ModuleType:
    return load_backend("native")


@pytest.fixture(scope="session")
def pure() -> ModuleType:
    return load_backend("pure")


@pytest.fixture(scope="session", params=["native", "pure"])
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def backend(backend_name: str) -> ModuleType:
    return load_backend(backend_name)


@pytest.fixture(scope="module")
def broker_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerFactory]:
    """Starts kafkacore brokers (``support.brokers.Broker``) for a test module, each on a
    fresh data directory; at the module's end each must stop cleanly: exit status 0 and
    the clean-shutdown marker in its data directory."""
    started: list[Broker] = []

    def start(*overrides: str, name: str = "data") -> Broker:
        broker = Broker(tmp_path_factory.mktemp(name) / "data", overrides).start()
        started.append(broker)
        return broker

    yield start
    failures = []
    for broker in started:
        try:
            broker.stop()
            assert (broker.data / ".kafka_cleanshutdown").exists(), "no clean-shutdown marker"
        except AssertionError as exc:
            failures.append(f"{broker.bootstrap}: {exc}")
    assert not failures, "\n".join(failures)


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    """The test module's broker (modules that need overrides define their own over
    ``broker_factory``)."""
    return broker_factory()


@pytest.fixture
def client(broker: Broker) -> Iterator[Client]:
    """A :class:`kafkacore.client.Client` connected to the module's broker."""
    with Client(broker.bootstrap, timeout_s=10) as c:
        yield c
