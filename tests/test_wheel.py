"""The x86_64 wheel as ``make wheel`` builds it: abi3, tagged manylinux2014 (glibc 2.17,
confirmed by auditwheel), with the metadata an index page shows; installed into a fresh
virtualenv of every CPython 3.10-3.13 on the machine, it imports (not the checkout's
sources), runs both backends, an embedded broker round trip, ``python -m kafkacore`` and
exposes the pytest plugin.

One wheel is built per session (or taken from ``KAFKACORE_WHEEL``); each virtualenv gets
it with ``--no-deps`` plus the three small runtime dependencies (pip's cache makes that
quick after the first run)."""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
RUNTIME_DEPS = (
    "lz4>=4.3",
    "zstandard>=0.22",
    "cramjam>=2.8",
    "kazoo>=2.9",
    "xxhash>=3.4",
    "google-re2>=1.1",
    "prometheus-client>=0.20",
)

CHECK = """
import kafkacore, subprocess, sys
from importlib.metadata import entry_points
from kafkacore.native import load_backend
native, pure = load_backend("native"), load_backend("pure")
assert kafkacore.backend_name == "native", kafkacore.backend_name
assert "site-packages" in kafkacore.__file__, kafkacore.__file__
batch = pure.build_batch([(0, 1, b"k", b"v", [("h", b"x")])])
assert native.build_batch([(0, 1, b"k", b"v", [("h", b"x")])]) == batch
assert native.batch_records(batch) == pure.batch_records(batch)
assert native.crc32c(b"123456789") == pure.crc32c(b"123456789") == 0xE3069283

# an embedded broker round trip through the Kafka protocol (kafkacore's own client)
from kafkacore import EmbeddedBroker
from kafkacore.client import Client
with EmbeddedBroker(topics={"orders": 2}) as broker:
    with Client(broker.bootstrap_servers) as client:
        assert client.topics() == {"orders": 2}
        assert client.produce("orders", 1, batch) == 0
        assert client.produce("orders", 1, batch) == 1
        fetched = client.fetch("orders", 1, 0)
        assert fetched.high_watermark == 2, fetched
        assert native.batch_records(fetched.records[: len(batch)])[0][2:4] == (b"k", b"v")
    data = broker.log_dir
assert not data.exists()

plugins = [e.value for e in entry_points(group="pytest11") if e.name == "kafkacore"]
assert plugins == ["kafkacore.pytest_plugin"], plugins
help = subprocess.run([sys.executable, "-m", "kafkacore", "--help"], capture_output=True,
                      text=True, check=True).stdout
assert help.startswith("usage: kafkacore "), help
print("OK", sys.version_info[:2], native.__file__)
"""


def _pythons() -> dict[str, Path]:
    """``{"3.10": interpreter, ...}``: pyenv's versions, else ``pythonX.Y`` on PATH."""
    found: dict[str, Path] = {}
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for version in PYTHONS:
        candidates = sorted(root.glob(f"{version}.*"), reverse=True) if root.is_dir() else []
        for candidate in candidates:
            exe = candidate / "bin" / "python3"
            if exe.exists():
                found[version] = exe
                break
        else:
            on_path = shutil.which(f"python{version}")
            if on_path:
                found[version] = Path(on_path)
    return found


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("KAFKACORE_WHEEL")
    if given:
        return Path(given)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "maturin",
            "build",
            "--release",
            "-q",
            "--zig",
            "--compatibility",
            "manylinux2014",
            "-o",
            str(dist),
        ],
        cwd=REPO,
        check=True,
        timeout=1200,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
    )
    (built,) = dist.glob("kafkacore-*.whl")
    return built


@pytest.mark.slow
def test_wheel_tag_and_contents(wheel: Path) -> None:
    assert wheel.name.endswith("-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"), (
        wheel.name
    )
    shown = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert re.search(
        r'consistent with the following platform tag:\s*"manylinux_2_17_x86_64"', shown
    )
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert "kafkacore/_native.pyi" in names and "kafkacore/py.typed" in names
    assert any(n.startswith("kafkacore/_native.") and n.endswith(".so") for n in names)
    assert "kafkacore/pytest_plugin.py" in names and "kafkacore/__main__.py" in names
    # PySpark registers `pyspark_*` packages' DefaultSource by itself: it must ship.
    assert "pyspark_kafkacore/__init__.py" in names
    assert "kafkacore/spark/source.py" in names
    info = next(n.rsplit("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert f"{info}/licenses/LICENSE" in names or f"{info}/LICENSE" in names
    entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert re.search(r"\[pytest11\]\s*kafkacore\s*=\s*kafkacore\.pytest_plugin", entry_points)
    assert re.search(r"\[console_scripts\]\s*kafkacore\s*=\s*kafkacore\.cli:main", entry_points)
    metadata = email.message_from_bytes(archive.read(f"{info}/METADATA"))
    assert metadata["Summary"].startswith("A Kafka-compatible log engine and broker")
    assert metadata["Requires-Python"] == ">=3.10"
    assert set(metadata.get_all("Provides-Extra") or []) >= {"spark", "cli"}
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("pyspark") and "extra == 'spark'" in r for r in requires)
    assert any(r.startswith("confluent-kafka") and "extra == 'cli'" in r for r in requires)
    # the runtime dependencies the install test adds are exactly the wheel's own
    unconditional = {r.replace(" ", "") for r in requires if "extra ==" not in r}
    assert unconditional == set(RUNTIME_DEPS)
    classifiers = metadata.get_all("Classifier") or []
    assert "Framework :: Pytest" in classifiers
    assert "License :: OSI Approved :: Apache Software License" in classifiers
    assert {f"Programming Language :: Python :: {v}" for v in PYTHONS} <= set(classifiers)


@pytest.mark.slow
@pytest.mark.parametrize("version", PYTHONS)
def test_wheel_installs_into_fresh_venv(wheel: Path, tmp_path: Path, version: str) -> None:
    python = _pythons().get(version)
    if python is None:
        pytest.fail(f"CPython {version} is not installed here (pyenv or python{version} on PATH)")
    venv = tmp_path / "venv"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    pip += ["--disable-pip-version-check"]
    subprocess.run([*pip, "--no-deps", str(wheel)], check=True, timeout=300)
    subprocess.run([*pip, *RUNTIME_DEPS], check=True, timeout=600)
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", CHECK],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KAFKACORE_BACKEND")},
    )
    assert out.returncode == 0, out.stderr[-4000:]
    major, minor = version.split(".")
    assert out.stdout.startswith(f"OK ({major}, {minor}) ") and str(venv) in out.stdout
