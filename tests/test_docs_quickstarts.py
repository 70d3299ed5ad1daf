"""The README's quickstarts run as shown (``support/snippets.py``): the single-node client
against a broker process, the pytest example as a test file under pytest, the embedded
broker and the embedded console in a fresh interpreter. The cluster and Spark quickstarts
run beside the tests that start those (``tests/cluster``, ``tests/spark``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.brokers import Broker
from support.snippets import SNIPPET_NAMES, pointed_at, snippets

pytestmark = pytest.mark.timeout(300)


def _run(code: str, cwd: Path) -> str:
    """``code`` in a new interpreter (this virtualenv's); its stdout. It must exit 0."""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_every_marked_snippet_is_run() -> None:
    assert set(snippets()) == SNIPPET_NAMES


def test_single_node(broker: Broker, tmp_path: Path) -> None:
    code = pointed_at(snippets()["single-node"], "localhost:9092", broker.bootstrap)
    assert _run(code, tmp_path).strip() == "b'order-1' b'{\"total\": 42}'"


def test_embedded_in_a_pytest_test(tmp_path: Path) -> None:
    (tmp_path / "test_quickstart.py").write_text(snippets()["pytest"])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_quickstart.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "1 passed" in proc.stdout


def test_embedded_broker(tmp_path: Path) -> None:
    _run(snippets()["embedded"], tmp_path)


def test_embedded_console(tmp_path: Path) -> None:
    _run(snippets()["console"], tmp_path)
