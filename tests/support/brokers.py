"""A kafkacore broker as a subprocess (``python -m kafkacore.cli server-start``) for tests
that drive it with real clients: a free port, its own data directory, its output to a file
next to it (never a pipe that could fill up), restartable. ``broker_factory`` in
``tests/conftest.py`` starts them for a test module and checks their clean shutdown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from kafkacore.client import Client
from kafkacore.protocol import APIS_BY_NAME
from support.ports import free_port

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0


class Broker:
    """``kafkacore.cli server-start`` on ``data`` with ``overrides`` (``key=value``).
    ``module`` is what ``python -m`` runs (a wrapper of ``kafkacore.cli`` in the crash
    sweep), ``env`` what its environment adds."""

    module = "kafkacore.cli"

    def __init__(
        self,
        data: Path,
        overrides: Iterable[str] = (),
        *,
        node_id: int = 1,
        port: int | None = None,
    ) -> None:
        self.data = data
        self.node_id = node_id
        self.port = port if port is not None else free_port()
        self._port_chosen = port is None
        self.overrides = list(overrides)
        self.proc: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self._seen = 0
        self.env: dict[str, str] = {}

    @property
    def bootstrap(self) -> str:
        return f"localhost:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.data.parent / f"{self.data.name}-broker.log"

    def log_text(self) -> str:
        """Everything the broker printed so far (all its runs)."""
        if not self.log_file.exists():
            return ""
        return self.log_file.read_text(encoding="utf-8", errors="replace")

    def start(self) -> Broker:
        for attempt in range(3):
            try:
                return self.spawn().wait_started()
            except AssertionError as exc:
                # A port found free can still be taken before the broker binds it (by
                # another test session's server): a first start moves to another one.
                taken = "Address already in use" in str(exc) or "Errno 98" in str(exc)
                if not (taken and self._port_chosen and self.returncode and attempt < 2):
                    raise
                self.port = free_port()
        raise AssertionError("unreachable")

    def spawn(self) -> Broker:
        """Start the process without waiting for it (:meth:`wait_started` waits): brokers
        of a cluster start side by side."""
        self._seen = self.log_file.stat().st_size if self.log_file.exists() else 0
        args = [f"listeners=PLAINTEXT://localhost:{self.port}", f"log.dirs={self.data}"]
        args += [f"node.id={self.node_id}", *self.overrides]
        command = [sys.executable, "-m", self.module, "server-start"]
        for arg in args:
            command += ["--override", arg]
        with open(self.log_file, "ab") as out:
            proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **self.env}
            )
        self.proc, self.returncode = proc, None
        return self

    def wait_started(self, timeout_s: float = START_TIMEOUT_S) -> Broker:
        proc = self.proc
        assert proc is not None, "spawn() first"
        deadline = time.monotonic() + timeout_s
        started = f"[KafkaServer id={self.node_id}] started".encode()
        while started not in self.log_file.read_bytes()[self._seen :]:
            if proc.poll() is not None:
                self.proc, self.returncode = None, proc.returncode
                raise AssertionError(f"broker exited {proc.returncode}:\n{self.log_text()[-4000:]}")
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait(5)
                self.proc = None
                raise AssertionError(f"broker did not start:\n{self.log_text()[-4000:]}")
            time.sleep(0.05)
        self._port_chosen = False  # clients know this port now: restarts keep it
        return self

    def stop(self, *, check: bool = True) -> int:
        """SIGTERM and wait; the exit status, which must be 0 (a clean shutdown) unless
        ``check`` is false. Stopping a stopped broker returns its last status."""
        proc = self.proc
        if proc is None:
            assert self.returncode is not None, "the broker was never started"
            return self.returncode
        self.proc = None
        proc.terminate()
        try:
            code = proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)  # the broker logs its asyncio tasks' stacks
            time.sleep(1)
            proc.kill()
            proc.wait(5)
            raise AssertionError(
                f"broker did not stop within {STOP_TIMEOUT_S:g} s of SIGTERM:\n"
                f"{self.log_text()[-4000:]}"
            ) from None
        self.returncode = code
        if check:
            assert code == 0, f"broker exited {code}:\n{self.log_text()[-4000:]}"
        return code

    def kill(self) -> None:
        """SIGKILL (a hard failure: no clean-shutdown marker, no ZooKeeper goodbye)."""
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        proc.kill()
        self.returncode = proc.wait(STOP_TIMEOUT_S)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def restart(self) -> None:
        self.stop()
        self.start()


class BrokerFactory(Protocol):
    """The ``broker_factory`` fixture: ``broker_factory(*overrides, name="data")`` starts a
    broker on a fresh data directory; it is stopped (and its clean shutdown checked) when
    the test module ends."""

    def __call__(self, *overrides: str, name: str = "data") -> Broker: ...


def set_client_quota(broker: Broker, client_id: str, key: str, value: float) -> None:
    """AlterClientQuotas: quota ``key`` (``producer_byte_rate``, ``request_percentage``, ...)
    of the client id ``client_id`` set to ``value`` on ``broker``."""
    request: Any = APIS_BY_NAME["AlterClientQuotas"].request.cls
    entry = request.EntryData(
        entity=[request.EntityData(entity_type="client-id", entity_name=client_id)],
        ops=[request.OpData(key=key, value=value, remove=False)],
    )
    with Client(broker.bootstrap, timeout_s=10) as client:
        response = client._call_any(
            "AlterClientQuotas", 1, request(entries=[entry], validate_only=False)
        )
    assert [e.error_code for e in response.entries] == [0]
