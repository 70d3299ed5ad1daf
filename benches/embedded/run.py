"""The embedded broker's start-up cost against a JVM Kafka broker's, on this machine.

    .venv/bin/python benches/embedded/run.py [--repeats 5] [--tests 100] [--no-kafka]

Measured, each ``--repeats`` times (medians reported):

* ``embedded``: a new Python process (confluent-kafka imported, kafkacore not yet) times
  ``EmbeddedBroker()`` -> ``start()`` -> the first produce acknowledged (acks=all) to a
  topic created at start; the same again in the same process (warm: the broker's modules
  are imported); the process's RSS before the broker and after the first produce.
* ``pytest``: a pytest session of ``--tests`` tests, each using ``kafkacore_broker`` and
  producing one acknowledged record to a topic of its own, with ``kafkacore_isolation =
  fresh`` (a new broker per test) and ``reset`` (one broker emptied between tests), the
  same tests on ``kafkacore_broker_session`` (no isolation: the cost of the produce
  itself), and the session with a plain no-op fixture (pytest's own cost).
* ``kafka``: Apache Kafka 4.3.1 (single-node KRaft from the jars in the cache, the JVM
  flags of kafka-server-start.sh, as ``make bench-broker`` starts it): ``kafka-storage
  format`` and then the JVM from spawn to the first acknowledged produce; its RSS then.

Written to ``benches/results/embedded.json`` and printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benches" / "results"
SOURCES = REPO / "python"

EMBEDDED = """
import json, os, resource, time
from confluent_kafka import Producer

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

def first_ack():
    t0 = time.perf_counter()
    from kafkacore import EmbeddedBroker
    broker = EmbeddedBroker(topics=["bench"]).start()
    started = time.perf_counter() - t0
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
    acked = []
    producer.produce("bench", b"v", on_delivery=lambda e, m, acked=acked: acked.append(e))
    producer.flush(30)
    assert acked == [None], acked
    total = time.perf_counter() - t0
    rss = rss_mib()
    del producer
    t1 = time.perf_counter()
    broker.close()
    return started, total, rss, time.perf_counter() - t1

before = rss_mib()
cold = first_ack()
warm = first_ack()
print(json.dumps({"rss_before_mib": before, "cold": cold, "warm": warm}))
"""

PYTEST_FILE = """
import pytest
from confluent_kafka import Producer

@pytest.mark.parametrize("i", range({tests}))
def test_produce(kafkacore_broker, i):
    producer = Producer({{"bootstrap.servers": kafkacore_broker.bootstrap_servers}})
    producer.produce("t%d" % i, b"v")
    assert producer.flush(30) == 0
"""

PYTEST_SESSION = PYTEST_FILE.replace("kafkacore_broker", "kafkacore_broker_session")

PYTEST_BASELINE = """
import pytest

@pytest.fixture
def kafkacore_broker():
    yield None

@pytest.mark.parametrize("i", range({tests}))
def test_nothing(kafkacore_broker, i):
    assert i >= 0
"""


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SOURCES), os.environ.get("PYTHONPATH", "")]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def bench_embedded(repeats: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", EMBEDDED],
            capture_output=True,
            text=True,
            env=env(),
            timeout=120,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))

    def med(key: str, index: int) -> float:
        return statistics.median(r[key][index] for r in runs)

    return {
        "cold_start_s": med("cold", 0),
        "cold_first_ack_s": med("cold", 1),
        "warm_start_s": med("warm", 0),
        "warm_first_ack_s": med("warm", 1),
        "close_s": med("warm", 3),
        "rss_before_mib": statistics.median(r["rss_before_mib"] for r in runs),
        "rss_after_first_ack_mib": med("cold", 2),
        "runs": runs,
    }


def bench_pytest(tests: int, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {"tests": tests}
    with tempfile.TemporaryDirectory(prefix="kafkacore-bench-pytest-") as tmp:
        root = Path(tmp)
        (root / "test_broker.py").write_text(PYTEST_FILE.format(tests=tests))
        (root / "baseline" / "test_baseline.py").parent.mkdir()
        (root / "baseline" / "test_baseline.py").write_text(PYTEST_BASELINE.format(tests=tests))
        (root / "test_session.py").write_text(PYTEST_SESSION.format(tests=tests))
        cases = {
            "baseline": (["baseline"], ""),
            "fresh": (["test_broker.py", "-p", "kafkacore.pytest_plugin"], "fresh"),
            "reset": (["test_broker.py", "-p", "kafkacore.pytest_plugin"], "reset"),
            # one broker, never reset: what the produce itself costs (the floor)
            "session": (["test_session.py", "-p", "kafkacore.pytest_plugin"], ""),
        }
        for name, (args, mode) in cases.items():
            (root / "pytest.ini").write_text(
                "[pytest]\n" + (f"kafkacore_isolation = {mode}\n" if mode else "")
            )
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                proc = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                    cwd=root,
                    capture_output=True,
                    text=True,
                    env=env(),
                    timeout=900,
                    check=False,
                )
                times.append(time.perf_counter() - t0)
                last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
                if proc.returncode != 0 or f"{tests} passed" not in last:
                    raise RuntimeError(f"pytest {name} failed:\n{proc.stdout[-3000:]}")
            out[name] = {"median_s": statistics.median(times), "runs_s": times}
    base = out["baseline"]["median_s"]
    for name in ("fresh", "reset", "session"):
        out[name]["per_test_ms"] = (out[name]["median_s"] - base) / tests * 1000
    return out


def bench_kafka(repeats: int) -> dict[str, Any]:
    from confluent_kafka import Producer

    spec = importlib.util.spec_from_file_location("bench_broker", REPO / "benches/broker/run.py")
    assert spec is not None and spec.loader is not None
    broker_bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_broker"] = broker_bench  # its dataclasses look themselves up there
    spec.loader.exec_module(broker_bench)
    libs = broker_bench.kafka_libs()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        # start_kafka: kafka-storage format (a JVM), then the broker's JVM, until Metadata
        # answers; the first produce below auto-creates its topic as the embedded one does
        broker = broker_bench.start_kafka(libs)
        try:
            ready = time.perf_counter() - t0
            producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
            acked: list[Any] = []
            producer.produce("bench", b"v", on_delivery=lambda e, m, acked=acked: acked.append(e))
            producer.flush(60)
            assert acked == [None], acked
            total = time.perf_counter() - t0
            status = Path(f"/proc/{broker.proc.pid}/status").read_text()
            rss = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS"))
            runs.append({"ready_s": ready, "first_ack_s": total, "rss_mib": rss / 1024})
        finally:
            broker_bench.stop(broker.proc)
            broker_bench.cleanup()
    return {
        "version": broker_bench.KAFKA_VERSION,
        "ready_s": statistics.median(r["ready_s"] for r in runs),
        "first_ack_s": statistics.median(r["first_ack_s"] for r in runs),
        "rss_mib": statistics.median(r["rss_mib"] for r in runs),
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tests", type=int, default=100)
    parser.add_argument("--pytest-repeats", type=int, default=3)
    parser.add_argument("--no-kafka", action="store_true")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_at_start": os.getloadavg(),
    }
    result["embedded"] = bench_embedded(args.repeats)
    result["pytest"] = bench_pytest(args.tests, args.pytest_repeats)
    if not args.no_kafka:
        result["kafka"] = bench_kafka(args.repeats)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "embedded.json").write_text(json.dumps(result, indent=2) + "\n")
    e, p = result["embedded"], result["pytest"]
    lines = [
        f"embedded: start {e['cold_start_s'] * 1000:.0f} ms cold / "
        f"{e['warm_start_s'] * 1000:.0f} ms warm; first ack {e['cold_first_ack_s'] * 1000:.0f} ms"
        f" cold / {e['warm_first_ack_s'] * 1000:.0f} ms warm; close {e['close_s'] * 1000:.0f} ms;"
        f" RSS {e['rss_before_mib']:.0f} -> {e['rss_after_first_ack_mib']:.0f} MiB",
        f"pytest, {p['tests']} tests: baseline {p['baseline']['median_s']:.2f} s, "
        f"fresh {p['fresh']['median_s']:.2f} s ({p['fresh']['per_test_ms']:.0f} ms/test), "
        f"reset {p['reset']['median_s']:.2f} s ({p['reset']['per_test_ms']:.0f} ms/test), "
        f"one shared broker {p['session']['median_s']:.2f} s "
        f"({p['session']['per_test_ms']:.0f} ms/test)",
    ]
    if "kafka" in result:
        k = result["kafka"]
        lines.append(
            f"Apache Kafka {k['version']} (JVM, KRaft): ready {k['ready_s']:.2f} s, first ack "
            f"{k['first_ack_s']:.2f} s, RSS {k['rss_mib']:.0f} MiB"
        )
    print(textwrap.indent("\n".join(lines), ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
