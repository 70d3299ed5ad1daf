"""Fixtures of the client compatibility suite: a kafkacore broker subprocess per test
module (``support.brokers.Broker`` from the ``broker_factory`` fixture), the
third-party clients installed by ``scripts/install-test-clients.sh`` (kcat from Debian,
kafka-python 2.x/3.x and aiokafka each in its own ``pip --target`` directory under
``$KAFKACORE_CACHE/pyclients``) and Kafka 4.3.1's own tools run from its jars
(``scripts/kafka-jars.sh``).

Nothing is skipped: a machine without a client fails loudly.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.brokers import Broker, BrokerFactory
from support.kafka_jars import JVM_FLAGS, compile_java, kafka_libs
from support.shared import build_once

REPO = Path(__file__).resolve().parents[2]


def start_broker(data: Path, *overrides: str) -> Broker:
    """A started broker on ``data`` (the caller stops it)."""
    return Broker(data, overrides).start()


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    """One broker per test module; must stop cleanly (status 0, clean-shutdown marker)."""
    return broker_factory(name="compat")


def batch_attributes(partition_dir: Path) -> list[int]:
    """The attributes of every batch in the first segment (RecordBatch v2 header)."""
    data = (partition_dir / "00000000000000000000.log").read_bytes()
    out, pos = [], 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        assert data[pos + 16] == 2, "magic"
        out.append(struct.unpack_from(">h", data, pos + 21)[0])
        pos += 12 + length
    return out


# --------------------------------------------------------------------------- clients


@pytest.fixture(scope="session")
def test_clients() -> dict[str, Path]:
    """Runs scripts/install-test-clients.sh (cached): ``{"kafka-python-3.0.12": dir, ...}``."""
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "install-test-clients.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"install-test-clients.sh failed:\n{proc.stderr[-4000:]}")
    dirs = {}
    for line in proc.stdout.splitlines():
        name, sep, path = line.partition("=")
        if sep:
            dirs[name] = Path(path)
    return dirs


@pytest.fixture(scope="session")
def kcat(test_clients: dict[str, Path]) -> str:
    path = shutil.which("kcat")
    assert path is not None, "kcat not on PATH after install-test-clients.sh"
    return path


CLIENT_SCRIPTS = Path(__file__).resolve().parent / "clients"


def run_python_client(target: Path, script: str, *args: str, timeout: float = 90) -> Any:
    """Run ``clients/<script>`` with only ``target`` (a pip --target dir) added to the
    path; the script prints one JSON document as its last stdout line, which is returned."""
    env = os.environ.copy()
    env["PYTHONPATH"] = str(target)
    env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.run(
        [sys.executable, str(CLIENT_SCRIPTS / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
        cwd=target.parent,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise AssertionError(
            f"client script exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\n"
            f"stderr:\n{proc.stderr[-5000:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- Java tools


@dataclass(frozen=True)
class ToolResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def check(self) -> ToolResult:
        if self.returncode != 0:
            raise AssertionError(
                f"java {' '.join(self.args)} exited {self.returncode}\n"
                f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-4000:]}"
            )
        return self


@dataclass(frozen=True)
class KafkaTools:
    """Runs main classes of Kafka's jars (``java -cp "<libs>/*" <class> ...``)."""

    libs: Path

    def run(
        self, main: str, *args: str, stdin: str | None = None, timeout: float = 90
    ) -> ToolResult:
        cmd = ["java", *JVM_FLAGS, "-cp", f"{self.libs}/*", main, *args]
        proc = subprocess.run(
            cmd,
            input=(stdin or "").encode(),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return ToolResult(
            (main, *args),
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    def run_all(self, jobs: Sequence[tuple[str, ...]]) -> list[ToolResult]:
        """Several JVMs at once (each ``(main, *args)``); results in order."""
        with ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
            return list(pool.map(lambda job: self.run(*job), jobs))


@dataclass(frozen=True)
class ToolBatch:
    """Many commands of one of Kafka's tools in one JVM (java/ToolBatch.java): one JVM
    start for a whole comparison instead of one per command."""

    tools: KafkaTools
    classes: Path

    def run(
        self, main: str, commands: Sequence[Sequence[str]], workdir: Path, timeout: float = 600
    ) -> list[ToolResult]:
        """Each of ``commands`` (arguments of ``main``) in turn; results in order."""
        assert all("\t" not in a and "\n" not in a for c in commands for a in c)
        workdir.mkdir(parents=True, exist_ok=True)
        listing = workdir / "commands.txt"
        listing.write_text("".join("\t".join(c) + "\n" for c in commands), encoding="utf-8")
        classpath = f"{self.classes}:{self.tools.libs}/*"
        cmd = ["java", *JVM_FLAGS, "-cp", classpath, "ToolBatch", main, str(listing), str(workdir)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"ToolBatch exited {proc.returncode}\n{proc.stderr[-4000:]}")

        def text(i: int, suffix: str) -> str:
            return (workdir / f"{i}.{suffix}").read_bytes().decode("utf-8", "replace")

        return [
            ToolResult((main, *c), int(text(i, "status")), text(i, "out"), text(i, "err"))
            for i, c in enumerate(commands)
        ]


@pytest.fixture(scope="session")
def tool_batch(kafka_tools: KafkaTools, tmp_path_factory: pytest.TempPathFactory) -> ToolBatch:
    """java/ToolBatch.java compiled against Kafka's jars, once for all the workers."""
    with build_once(tmp_path_factory, "compat-classes") as (classes, built):
        if not built:
            compile_java(kafka_tools.libs, classes, [REPO / "tests/compat/java/ToolBatch.java"])
    return ToolBatch(kafka_tools, classes)


@pytest.fixture(scope="session")
def kafka_tools() -> KafkaTools:
    """Kafka's jars, fetched once by scripts/kafka-jars.sh (cached)."""
    return KafkaTools(kafka_libs())
