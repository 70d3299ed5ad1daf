"""KAFKACORE_BACKEND picks the implementation; a missing extension falls back to pure
with exactly one clear warning."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = "import kafkacore; print(kafkacore.backend_name, kafkacore.backend.__name__)"
BLOCK_NATIVE = (
    "import sys, importlib.abc\n"
    "class Block(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        if name == 'kafkacore._native':\n"
    "            raise ImportError('No module named kafkacore._native (blocked by test)')\n"
    "sys.meta_path.insert(0, Block())\n"
)


def _run(code: str, backend: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KAFKACORE_BACKEND"}
    if backend is not None:
        env["KAFKACORE_BACKEND"] = backend
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_native_is_the_default() -> None:
    out = _run(PROBE, None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["native", "kafkacore._native"]
    assert "RuntimeWarning" not in out.stderr


def test_pure_on_request() -> None:
    out = _run(PROBE, "pure")
    assert out.stdout.split() == ["pure", "kafkacore.pure"]
    assert out.stderr == ""


def test_missing_extension_falls_back_with_one_warning() -> None:
    out = _run(BLOCK_NATIVE + PROBE, None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pure", "kafkacore.pure"]
    assert out.stderr.count("RuntimeWarning") == 1
    assert "falling back to the pure-Python backend" in out.stderr


def test_bad_backend_name_is_refused() -> None:
    out = _run(PROBE, "fortran")
    assert out.returncode != 0
    assert "KAFKACORE_BACKEND='fortran' is not valid: expected one of native, pure" in out.stderr
