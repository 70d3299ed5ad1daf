"""Shared fixtures: both backends, and hypothesis profiles (CI runs the `ci` profile)."""

from __future__ import annotations

import os
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from kafkacore.native import load_backend

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
    {"test_clients", "kcat", "kafka_tools", "kafka_libs", "java", "spark", "spark_jars"}
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if DOWNLOADING_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.downloads)


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
