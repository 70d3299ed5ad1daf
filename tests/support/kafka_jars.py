"""Apache Kafka's jars for the tests that run Kafka's own code: fetched once by
``scripts/kafka-jars.sh`` into ``$KAFKACORE_CACHE`` (the script is quick when they are
there), and the JVM flags of the short-lived JVMs that run them. Used by the interop and
compat suites and the config oracle; nothing is skipped: without Java these fail loudly."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
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
