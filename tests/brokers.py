"""A kafkacore broker as a subprocess (``python -m kafkacore.cli server-start``) for tests
that drive it with real clients: a free port, its own data directory, stderr to a file
next to it (never a pipe that could fill up), restartable."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


class Broker:
    """``kafkacore.cli server-start`` on ``data`` with ``overrides`` (``key=value``)."""

    def __init__(self, data: Path, overrides: Iterable[str] = ()) -> None:
        self.data = data
        self.port = free_port()
        self.overrides = list(overrides)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"localhost:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.data.parent / f"{self.data.name}-broker.log"

    def start(self) -> Broker:
        seen = self.log_file.stat().st_size if self.log_file.exists() else 0
        args = [f"listeners=PLAINTEXT://localhost:{self.port}", f"log.dirs={self.data}"]
        args += ["node.id=1", *self.overrides]
        command = [sys.executable, "-m", "kafkacore.cli", "server-start"]
        for arg in args:
            command += ["--override", arg]
        with open(self.log_file, "ab") as err:
            self.proc = subprocess.Popen(command, stderr=err, env=os.environ.copy())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if b"[KafkaServer id=1] started" in self.log_file.read_bytes()[seen:]:
                return self
            assert self.proc.poll() is None, self.log_file.read_text(errors="replace")
            time.sleep(0.05)
        raise AssertionError("broker did not start")

    def stop(self) -> None:
        """SIGTERM: a clean shutdown must exit 0."""
        assert self.proc is not None
        self.proc.terminate()
        assert self.proc.wait(20) == 0, self.log_file.read_text(errors="replace")
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()
