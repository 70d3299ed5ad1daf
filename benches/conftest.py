"""Hot-path micro-benchmarks: both backends in one run. Each benchmark records in
``extra_info`` the operation, the backend and the bytes (or items) one call processes;
``report.py`` turns the medians into throughputs and native/pure ratios."""

from __future__ import annotations

from types import ModuleType

import pytest

from kafkacore.native import load_backend


@pytest.fixture(scope="session", params=["native", "pure"])
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def backend(backend_name: str) -> ModuleType:
    return load_backend(backend_name)
