"""Fixtures that run Apache Kafka's own code: its jars (fetched once by
``scripts/kafka-jars.sh`` into ``$KAFKACORE_CACHE``), the Java helpers of
``tests/interop/java`` compiled against them, and a runner for Kafka's tools.

Needs Java 17+ and Maven; the first run downloads about 55 MB of jars, later runs reuse
them. Nothing here is skipped: a machine without Java fails these tests, loudly.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.kafka_jars import JVM_FLAGS, KAFKA_ZK_VERSION, compile_java
from support.kafka_jars import kafka_libs as fetch_kafka_libs
from support.shared import build_once

JAVA_SOURCES = Path(__file__).resolve().parent / "java"
# Helpers compiled by their own tests, not with the others: those that need Kafka 3.9's
# ZooKeeper-mode classes (kafka.zk, gone in 4.x), and the ACL oracles (test_acl_vs_kafka
# builds them against 3.9.1 and against the default version).
KAFKA_39_ONLY_SOURCES = frozenset({"ZkRead.java", "AclDecisions.java", "AclZkCodec.java"})
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"


@dataclass(frozen=True)
class JavaResult:
    args: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes

    def check(self) -> JavaResult:
        if self.returncode != 0:
            raise AssertionError(
                f"java {' '.join(self.args)} exited {self.returncode}\n"
                f"stderr:\n{self.stderr.decode(errors='replace')[-4000:]}"
            )
        return self


class JavaServer:
    """One JVM running a helper's line mode (``<main> -``): :meth:`ask` sends one line and
    returns the one line it answers. Not thread-safe: one caller at a time."""

    def __init__(self, cmd: Sequence[str], timeout: float = 60) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr
        )
        self._timeout = timeout
        self._pending = b""

    def _failure(self, what: str) -> AssertionError:
        self._stderr.seek(0)
        err = self._stderr.read().decode(errors="replace")[-4000:]
        return AssertionError(f"{what}\nstderr:\n{err}")

    def ask(self, line: str) -> str:
        assert "\n" not in line
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(line.encode("utf-8") + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:
            raise self._failure("the JVM exited") from None
        fd = proc.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], self._timeout)
            if not ready:
                raise self._failure(f"no answer within {self._timeout} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._failure("the JVM exited")
            self._pending += chunk
        answer, _, self._pending = self._pending.partition(b"\n")
        return answer.decode("utf-8")

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        assert self._proc.stdout is not None
        self._proc.stdout.close()
        self._stderr.close()


@dataclass(frozen=True)
class Java:
    """Runs main classes from Kafka's jars and the compiled helpers."""

    libs: Path
    classes: Path
    version: str

    @property
    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.libs}/*"

    def run(self, main: str, *args: str, timeout: float = 120) -> JavaResult:
        cmd = ["java", *JVM_FLAGS, "-cp", self.classpath, main, *args]
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
        return JavaResult((main, *args), proc.returncode, proc.stdout, proc.stderr)

    def run_all(self, jobs: Sequence[tuple[str, ...]]) -> list[JavaResult]:
        """Run several JVMs at once (each ``(main, *args)``); results in order."""
        with ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
            return list(pool.map(lambda job: self.run(*job), jobs))

    @contextlib.contextmanager
    def serve(self, main: str, *args: str) -> Iterator[JavaServer]:
        """A helper in its line mode (``main *args -``), stopped on exit."""
        server = JavaServer(["java", *JVM_FLAGS, "-cp", self.classpath, main, *args, "-"])
        try:
            yield server
        finally:
            server.close()

    def dump_log_segments(self, files: Sequence[Path], *options: str) -> JavaResult:
        """Kafka's DumpLogSegments over ``files`` in one JVM."""
        return self.run(DUMP_LOG_SEGMENTS, *options, "--files", ",".join(map(str, files)))


@pytest.fixture(scope="session")
def kafka_libs() -> Path:
    """The directory of Kafka's jars, fetched by scripts/kafka-jars.sh (cached)."""
    return fetch_kafka_libs()


def _compile_helpers(
    libs: Path, tmp_path_factory: pytest.TempPathFactory, name: str, sources: Sequence[str]
) -> Java:
    """``sources`` compiled against ``libs`` into the run's directory ``name``, once for
    all the xdist workers of the run (see ``support.shared``)."""
    with build_once(tmp_path_factory, name) as (classes, built):
        if not built:
            compile_java(libs, classes, sources)
    version = libs.parent.name.removeprefix("kafka-")
    return Java(libs=libs, classes=classes, version=version)


@pytest.fixture(scope="session")
def java(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Java:
    """The Java helpers compiled against Kafka's jars, in a temporary directory."""
    sources = sorted(
        str(p) for p in JAVA_SOURCES.glob("*.java") if p.name not in KAFKA_39_ONLY_SOURCES
    )
    return _compile_helpers(kafka_libs, tmp_path_factory, "interop-classes", sources)


@pytest.fixture(scope="session")
def kafka_zk_libs() -> Path:
    """Kafka 3.9's jars (the last release with ZooKeeper mode and its inter-broker
    APIs), fetched by scripts/kafka-jars.sh (cached)."""
    return fetch_kafka_libs(KAFKA_ZK_VERSION)


@pytest.fixture(scope="session")
def java_zk(kafka_zk_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Java:
    """ProtocolMessages.java (and its LineServer) compiled against Kafka 3.9's jars."""
    sources = [str(JAVA_SOURCES / "ProtocolMessages.java"), str(JAVA_SOURCES / "LineServer.java")]
    return _compile_helpers(kafka_zk_libs, tmp_path_factory, "interop-zk-classes", sources)


@dataclass(frozen=True)
class JavaBatches:
    """The files written by BuildBatches.java and its manifest."""

    directory: Path
    kafka_version: str
    cases: list[dict[str, Any]]

    def data(self, case: dict[str, Any]) -> bytes:
        return (self.directory / case["file"]).read_bytes()


@pytest.fixture(scope="session")
def java_batches(java: Java, tmp_path_factory: pytest.TempPathFactory) -> JavaBatches:
    with build_once(tmp_path_factory, "java-batches") as (out, built):
        if not built:  # once for all the xdist workers of the run
            java.run("BuildBatches", str(out)).check()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return JavaBatches(out, manifest["kafka_version"], manifest["cases"])
