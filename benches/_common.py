"""What the stand-alone benchmark scripts (``benches/broker/run.py``,
``benches/spark/run.py``, ``benches/scale/run.py``) share: writing their JSON report, the
``__main__`` wrapper that turns Ctrl-C into exit status 130, and the pieces of a side-by-side
run with Apache Kafka (its version, its JVM flags, its jars, free ports, log lines) and a
process's CPU seconds."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
KAFKA_VERSION = "4.3.1"
# kafka-server-start.sh's defaults.
KAFKA_JVM = (
    "-Xmx1g",
    "-Xms1g",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)
# Kafka's tools (kafka-storage format, ProducerPerformance...).
TOOL_JVM = ("-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


_CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user + system, all its threads), from
    ``/proc/<pid>/stat`` (fields 14 and 15, in clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def kafka_libs() -> Path:
    """The directory of Kafka's jars (KAFKA_VERSION), fetched by scripts/kafka-jars.sh."""
    out = subprocess.run(
        ["bash", str(REPO / "scripts" / "kafka-jars.sh")],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "KAFKA_VERSION": KAFKA_VERSION},
    ).stdout
    return Path(out.strip().splitlines()[-1])


def raise_fd_limit(wanted: int = 100_000) -> int:
    """The soft ``RLIMIT_NOFILE`` raised to the hard limit, or to ``wanted`` (the
    brokers inherit it) when this process may raise the hard limit too (root; Kafka's
    documentation asks for 100,000 descriptors)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


_CHILD_BROKER = """
import sys
from kafkacore import EmbeddedBroker
with EmbeddedBroker(topics={topics!r}) as broker:
    print(broker.bootstrap_servers, flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def child_broker(topics: dict[str, int] | None = None) -> Iterator[tuple[str, int]]:
    """A kafkacore ``EmbeddedBroker`` (with ``topics``) in a child process, measured from
    outside: its bootstrap servers and pid; it shuts down when the block ends."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD_BROKER.format(topics=topics or {})],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        yield child.stdout.readline().strip(), child.pid
        child.stdin.close()
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def write_report(out: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` as indented JSON to ``out`` and say where (relative to the repository
    when it is inside it)."""
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


def run_main(main: Callable[[], int]) -> NoReturn:
    """``sys.exit(main())``; an interrupt exits 130 (the scripts clean up their processes
    and temporary directories in ``finally`` blocks on the way out)."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted; processes and temp dirs cleaned up", file=sys.stderr)
        sys.exit(130)
