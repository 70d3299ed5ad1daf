"""One server the tests run as a child process (ZooKeeper, S3Proxy): started in its own
session with its output appended to a log file, waited for until it answers, stopped
with SIGTERM (SIGKILL if it lingers) or killed, its log's tail quoted in failures.
Subclasses say how to start it (:meth:`command`) and when it is ready (:meth:`answers`)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import TypeVar

_S = TypeVar("_S", bound="ServerProcess")


class ServerProcess:
    """See the module docstring; ``name`` names it in failures."""

    name = "server"

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = Path(directory)
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        return self.directory / f"{self.name.lower()}.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    def answers(self) -> bool:
        """Whether the server serves requests (called until it does)."""
        raise NotImplementedError

    def start(self: _S, timeout: float = 60.0) -> _S:
        """Start the server (if not running) and wait until it :meth:`answers`."""
        if self.running:
            return self
        self.directory.mkdir(parents=True, exist_ok=True)
        cmd = self.command()
        log = self.log_path.open("ab")
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"{self.name} exited with status {self.proc.returncode} on start:\n"
                    f"{self.log_tail()}"
                )
            try:
                if self.answers():
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(
                    f"{self.name} on port {self.port} not ready after {timeout}s:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM and wait (SIGKILL if it lingers)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL (a crash); ``start()`` brings it back on the same port and data."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(20)
        self.proc = None

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
