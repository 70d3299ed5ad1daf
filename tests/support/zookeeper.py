"""A real Apache ZooKeeper server for the cluster tests: the ``zookeeper-3.8.x`` jars that
ship in Kafka 3.9.1's libs (fetched once by ``scripts/kafka-jars.sh``), one standalone
server on a free loopback port with its data in a temporary directory.

    server = ZooKeeperServer(tmp_dir).start()   # waits until it answers `ruok` with `imok`
    server.connect_string                       # "127.0.0.1:<port>"
    server.kill(); server.start()               # SIGKILL, then again on the same port/data
    server.stop()

pytest fixtures: ``zookeeper`` (one server per session) and ``zk_chroot`` (a fresh
``127.0.0.1:<port>/test-<hex>`` per test, so tests never see each other's znodes).
Registered in ``tests/conftest.py``.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.kafka_jars import JVM_FLAGS, REPO, require
from support.ports import free_port
from support.server_process import ServerProcess

# Kafka 3.9 is the last line with ZooKeeper mode, and its libs carry ZooKeeper 3.8.
ZK_KAFKA_VERSION = "3.9.1"
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


@functools.cache
def zookeeper_libs() -> Path:
    """Kafka 3.9.1's libs directory (with zookeeper-3.8.x and its dependencies)."""
    require("java")
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "kafka-jars.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "KAFKA_VERSION": ZK_KAFKA_VERSION},
    )
    if proc.returncode != 0:
        raise AssertionError(f"scripts/kafka-jars.sh failed:\n{proc.stderr[-4000:]}")
    libs = Path(proc.stdout.strip().splitlines()[-1])
    assert (libs / ".complete").is_file(), libs
    assert any(libs.glob("zookeeper-3.*.jar")), f"no zookeeper jar in {libs}"
    return libs


def four_letter_word(port: int, word: str, timeout: float = 2.0) -> str:
    """Send a ZooKeeper four-letter command and return the whole answer ("" if none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(word.encode("ascii"))
        chunks = []
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


class ZooKeeperServer(ServerProcess):
    """One standalone ZooKeeper server (``QuorumPeerMain`` with a single-server config)."""

    name = "ZooKeeper"

    def __init__(
        self,
        directory: Path,
        *,
        port: int | None = None,
        tick_time_ms: int = 500,
        max_session_timeout_ms: int = 60000,
        libs: Path | None = None,
    ) -> None:
        super().__init__(directory, port if port is not None else free_port())
        self.tick_time_ms = tick_time_ms
        self.max_session_timeout_ms = max_session_timeout_ms
        self._libs = libs

    @property
    def connect_string(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    def _write_config(self) -> Path:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cfg = self.directory / "zoo.cfg"
        # A small tickTime lets tests use short session timeouts (min = 2 ticks).
        cfg.write_text(
            "\n".join(
                [
                    f"tickTime={self.tick_time_ms}",
                    f"dataDir={self.data_dir}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    "maxClientCnxns=0",
                    f"minSessionTimeout={2 * self.tick_time_ms}",
                    f"maxSessionTimeout={self.max_session_timeout_ms}",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=ruok,srvr,stat,mntr,cons",
                    "autopurge.purgeInterval=0",
                    # The tests crash ZooKeeper with SIGKILL, never the machine: a write()
                    # survives that, and an fsync on a disk busy with the other tests can
                    # stall a restarting server past its clients' session timeouts.
                    "forceSync=no",
                    "",
                ]
            ),
            encoding="utf-8",
        )
        return cfg

    def command(self) -> list[str]:
        libs = self._libs or zookeeper_libs()
        cfg = self._write_config()
        return [
            "java",
            "-Xms32m",
            "-Xmx128m",
            *JVM_FLAGS,
            "-Dzookeeper.admin.enableServer=false",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-cp",
            f"{libs}/*",
            MAIN_CLASS,
            str(cfg),
        ]

    def answers(self) -> bool:
        # `ruok` answers imok as soon as the server runs; `srvr` says "This ZooKeeper
        # instance is not currently serving requests" until it has loaded its database
        # and can take sessions.
        return four_letter_word(self.port, "ruok") == "imok" and (
            "Mode: standalone" in four_letter_word(self.port, "srvr")
        )


def unique_chroot(connect_string: str, prefix: str = "test") -> str:
    return f"{connect_string}/{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """One ZooKeeper server for the whole session (tests isolate with ``zk_chroot``)."""
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def zk_chroot(zookeeper: ZooKeeperServer) -> str:
    """A connect string with a fresh chroot, ``127.0.0.1:<port>/test-<hex>`` (the chroot
    node itself does not exist yet; KafkaZkClient.connect creates it)."""
    return unique_chroot(zookeeper.connect_string)
