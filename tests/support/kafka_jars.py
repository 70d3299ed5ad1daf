"""Apache Kafka's jars for the tests that run Kafka's own code: fetched once by
``scripts/kafka-jars.sh`` into ``$KAFKACORE_CACHE`` (the script is quick when they are
there), and the JVM flags of the short-lived JVMs that run them. Used by the interop and
compat suites and the config oracle; nothing is skipped: without Java these fail loudly."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Short-lived JVMs: skip the optimising JIT and use the serial collector (start-up ~0.2 s).
# stdout/stderr in UTF-8 so record payloads and header keys come back exactly. No
# hsperfdata file: several JVMs started at once can find one locked and then print
# "[warning][perf,memops] Cannot use file ..." on stdout, into the output under test.
JVM_FLAGS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-XX:-UsePerfData",
    "-Dfile.encoding=UTF-8",
    "-Dsun.stdout.encoding=UTF-8",
    "-Dsun.stderr.encoding=UTF-8",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
)


def require(tool: str) -> str:
    """The path of ``tool`` (``java``, ``javac``), or a failure naming what is missing."""
    path = shutil.which(tool)
    if path is None:
        raise AssertionError(f"these tests need `{tool}` on PATH (Java 17+ and Maven)")
    return path


def compile_java(libs: Path, classes: Path, sources: Iterable[str | Path]) -> None:
    """``javac`` the ``sources`` against the jars in ``libs`` into ``classes``; a failure
    shows javac's output."""
    proc = subprocess.run(
        [
            require("javac"),
            "-Xlint:all",
            "-cp",
            f"{libs}/*",
            "-d",
            str(classes),
            *map(str, sources),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")


# The last Kafka release with ZooKeeper mode: the reference for the inter-broker APIs
# (LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown) Kafka 4 removed.
KAFKA_ZK_VERSION = "3.9.1"


@functools.cache
def kafka_libs(version: str | None = None) -> Path:
    """The directory of Kafka's jars (``.../kafka-<version>/libs``), fetched if needed:
    ``version``, else scripts/kafka-jars.sh's default (or ``$KAFKA_VERSION``)."""
    require("java")
    env = None if version is None else {**os.environ, "KAFKA_VERSION": version}
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "kafka-jars.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        raise AssertionError(f"scripts/kafka-jars.sh failed:\n{proc.stderr[-4000:]}")
    libs = Path(proc.stdout.strip().splitlines()[-1])
    assert (libs / ".complete").is_file(), libs
    return libs


# A Kafka server's JVM (KRaft, from the jars): a bounded heap and a quick start.
_SERVER_JVM_FLAGS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
_QUIET_LOGGER = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"


def kraft_single_node_props(home: Path, port: int, controller_port: int, *extra: str) -> str:
    """server.properties of one PLAINTEXT KRaft node (broker and controller) on ``port``
    (its controller on ``controller_port``), data under ``home/data``, internal topics
    of one replica; ``extra`` lines last."""
    lines = [
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.voters=1@localhost:{controller_port}",
        f"listeners=PLAINTEXT://localhost:{port},CONTROLLER://localhost:{controller_port}",
        f"advertised.listeners=PLAINTEXT://localhost:{port}",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        f"log.dirs={home / 'data'}",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        *extra,
        "",
    ]
    return "\n".join(lines)


def start_kraft_node(libs: Path, props: Path, log: Path) -> subprocess.Popen[bytes]:
    """Formats the storage of the KRaft node ``props`` describes (a fresh cluster id) and
    starts ``kafka.Kafka`` on it, its output appended to ``log``."""
    from kafkacore.log.checkpoints import random_uuid, uuid_to_base64

    java = require("java")
    cp = ["-cp", f"{libs}/*"]
    cluster_id = uuid_to_base64(random_uuid())  # never starts with "-", as Kafka's
    format_storage = ["kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)]
    subprocess.run(
        [java, *_SERVER_JVM_FLAGS, *cp, *format_storage],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with log.open("ab") as out:
        return subprocess.Popen(
            [java, *_SERVER_JVM_FLAGS, _QUIET_LOGGER, *cp, "kafka.Kafka", str(props)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )


class KraftNode:
    """One Kafka KRaft node from the jars (:func:`kraft_single_node_props` under ``home``,
    ``extra`` server properties last) on a free port, for side-by-side comparisons."""

    def __init__(self, libs: Path, home: Path, *extra: str) -> None:
        from support.ports import free_port

        self.libs, self.home, self.extra = libs, home, extra
        self.port = free_port()
        self._controller_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 120) -> KraftNode:
        """Starts the node and waits until its listener accepts connections."""
        props = self.home / "server.properties"
        props.write_text(
            kraft_single_node_props(self.home, self.port, self._controller_port, *self.extra)
        )
        log = self.home / "kafka.log"
        self.proc = start_kraft_node(self.libs, props, log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("localhost", self.port), timeout=5).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    raise AssertionError(log.read_text()[-3000:]) from None
                time.sleep(0.2)
        raise AssertionError("Kafka did not start")

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen[bytes] | None, grace_s: float = 60) -> None:
    """Terminates ``proc`` if it still runs; killed if it has not exited after ``grace_s``."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
