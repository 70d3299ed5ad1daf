"""Fixtures of the client compatibility suite: a kafkacore broker subprocess per test
module (``python -m kafkacore.cli server-start`` on a free port, data in a temp dir), the
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
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafka_jars import JVM_FLAGS, kafka_libs

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


@dataclass
class Broker:
    """A running ``kafkacore server-start`` subprocess."""

    bootstrap: str
    data: Path
    log: Path
    proc: subprocess.Popen[bytes]
    stopped: bool = field(default=False)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> int:
        """SIGTERM, wait; the exit status."""
        if not self.stopped:
            self.stopped = True
            self.proc.terminate()
            try:
                return self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                raise AssertionError("broker did not stop within 20 s of SIGTERM") from None
        return int(self.proc.returncode)


def start_broker(data: Path, *overrides: str) -> Broker:
    port = free_port()
    log = data.parent / f"{data.name}.broker.log"
    args = [
        sys.executable,
        "-m",
        "kafkacore.cli",
        "server-start",
        "--override",
        f"listeners=PLAINTEXT://localhost:{port}",
        "--override",
        f"log.dirs={data}",
        "--override",
        "node.id=1",
    ]
    for item in overrides:
        args += ["--override", item]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=data.parent)
    broker = Broker(f"localhost:{port}", data, log, proc)
    deadline = time.monotonic() + 30
    while "[KafkaServer id=1] started" not in broker.log_text():
        if proc.poll() is not None:
            raise AssertionError(f"broker exited {proc.returncode}:\n{broker.log_text()[-4000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"broker did not start:\n{broker.log_text()[-4000:]}")
        time.sleep(0.05)
    return broker


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """One broker per test module; must stop cleanly (status 0, clean-shutdown marker)."""
    data = tmp_path_factory.mktemp("compat") / "data"
    data.mkdir()
    b = start_broker(data)
    try:
        yield b
    finally:
        code = b.stop()
        assert code == 0, f"broker exited {code}:\n{b.log_text()[-4000:]}"
        assert (data / ".kafka_cleanshutdown").exists()


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


@pytest.fixture(scope="session")
def kafka_tools() -> KafkaTools:
    """Kafka's jars, fetched once by scripts/kafka-jars.sh (cached)."""
    return KafkaTools(kafka_libs())
