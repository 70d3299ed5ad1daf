"""`make wheel` builds an abi3 manylinux wheel; installed into a fresh virtualenv, it
imports and runs both backends (and not the checkout's sources)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CHECK = """
import kafkacore, sys
from kafkacore.native import load_backend
native, pure = load_backend("native"), load_backend("pure")
assert kafkacore.backend_name == "native", kafkacore.backend_name
assert "site-packages" in kafkacore.__file__, kafkacore.__file__
batch = pure.build_batch([(0, 1, b"k", b"v", [("h", b"x")])])
assert native.build_batch([(0, 1, b"k", b"v", [("h", b"x")])]) == batch
assert native.batch_records(batch) == pure.batch_records(batch)
assert native.crc32c(b"123456789") == pure.crc32c(b"123456789") == 0xE3069283
print("OK", native.__file__)
"""


@pytest.mark.slow
def test_wheel_installs_into_fresh_venv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--release", "-q", "-o", str(dist)],
        cwd=REPO,
        check=True,
        timeout=900,
    )
    (wheel,) = dist.glob("kafkacore-*.whl")
    assert "abi3" in wheel.name and "manylinux" in wheel.name, wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "kafkacore/_native.pyi" in names and "kafkacore/py.typed" in names
    assert any(n.startswith("kafkacore/_native.") and n.endswith(".so") for n in names)
    # PySpark registers `pyspark_*` packages' DefaultSource by itself: it must ship.
    assert "pyspark_kafkacore/__init__.py" in names
    assert "kafkacore/spark/source.py" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, timeout=600
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", CHECK],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OK ") and str(venv) in out.stdout
