"""The console's cost to the broker: produce latency with and without a full-topic key
search, and the key lookup latency once the topic is indexed.

    .venv/bin/python benches/console/run.py [--gib 1.0] [--seconds 20] [--rate 500]
                                            [--out benches/results/console.json]

1. A kafkacore broker (``console.listeners`` on) gets a topic of ``--gib`` GiB (4
   partitions, 1 KiB values, 100,000 distinct keys, 128 MiB segments), written by a
   confluent-kafka producer.
2. A paced producer (``--rate`` records/s, 1 KiB, acks=1, linger 0) sends to another topic
   and times each record from ``produce()`` to its delivery report: ``--seconds`` at rest
   (baseline), then while the console answers its first search of a key in the big topic
   (``GET /messages/big?search=KEY``: the key index is built over every segment, in the
   console's scan process), then at rest again.
3. The same search again, and searches of other keys: the console's own time (the page's
   "in N ms", :class:`~kafkacore.console.logview.KeyIndex` lookup plus the reads that
   check each candidate) and the HTTP round trip.

Printed and written as JSON: p50/p99/p99.9 of each phase, the p99 increase during the
search, the index build time, the lookup times, and the CPU seconds of the broker process
and of the console's scan process in each phase (from /proc: these do not depend on the
machine's load as latencies do).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parents[2]
BIG, LATENCY = "big", "latency"
KEYS = 100_000
VALUE = 1024
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (its own threads, not its children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        path = task / "children"
        if path.exists():
            found += [int(c) for c in path.read_text().split()]
    return found


def percentiles(values: list[float]) -> dict[str, float]:
    s = sorted(values)
    if not s:
        return {}

    def q(p: float) -> float:
        return round(s[min(len(s) - 1, int(p * len(s)))], 3)

    return {"n": len(s), "p50": q(0.5), "p99": q(0.99), "p99.9": q(0.999), "max": round(s[-1], 3)}


class Paced:
    """A producer sending ``rate`` records/s to LATENCY, timing each to its delivery."""

    def __init__(self, bootstrap: str, rate: int) -> None:
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 0, "batch.num.messages": 1}
        )
        self.rate = rate
        self.value = os.urandom(VALUE)

    def run(self, seconds: float, until: threading.Event | None = None) -> list[float]:
        latencies: list[float] = []
        interval = 1.0 / self.rate
        began = time.perf_counter()
        n = 0
        while True:
            now = time.perf_counter()
            if until is not None:
                if until.is_set():
                    break
            elif now - began >= seconds:
                break
            due = began + n * interval
            if now < due:
                self.producer.poll(min(due - now, 0.01))
                continue
            sent = time.perf_counter()

            def report(err: Any, _msg: Any, sent: float = sent) -> None:
                if err is None:
                    latencies.append((time.perf_counter() - sent) * 1000)

            self.producer.produce(LATENCY, self.value, b"k%d" % n, on_delivery=report)
            self.producer.poll(0)
            n += 1
        self.producer.flush(30)
        return latencies


def fill(bootstrap: str, gib: float) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1 << 20,
            "queue.buffering.max.kbytes": 1 << 20,
        }
    )
    value = os.urandom(VALUE)
    total = int(gib * (1 << 30) / (VALUE + 40))
    for i in range(total):
        while True:
            try:
                producer.produce(BIG, value, b"key-%d" % (i % KEYS), partition=i % 4)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(300) == 0


_IDLE = re.compile(
    r"(Condition\.wait|select \(|_worker \(concurrent/futures/thread.py:81\)|"
    r"Connection\._recv|_read_from_self|Event\.wait|_poll)"
)
_CONSOLE = re.compile(
    r"console|starlette|uvicorn|jinja2|concurrent/futures/process|multiprocessing"
)


def py_spy_shares(raw: Path) -> dict[str, int]:
    """Samples of ``py-spy record --subprocesses -f raw`` by where they were taken: the
    broker process running console code, the broker process otherwise, idle broker
    threads, and the console's scan process. Proportions, so the machine's load matters
    less than for latencies."""
    shares = {"broker_console": 0, "broker_other": 0, "broker_idle": 0, "scan_process": 0}
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or len(frames) < 2:
            continue
        if frames[1].startswith("process "):
            shares["scan_process"] += int(count)
        elif _IDLE.search(frames[-1]):
            shares["broker_idle"] += int(count)
        elif _CONSOLE.search(";".join(frames[1:])):
            shares["broker_console"] += int(count)
        else:
            shares["broker_other"] += int(count)
    return shares


def search(console: str, key: str) -> tuple[float, float, str]:
    """``(console's ms, HTTP round trip ms, summary)`` of a key search."""
    began = time.perf_counter()
    with urllib.request.urlopen(f"{console}/messages/{BIG}?search={key}", timeout=600) as r:
        html = r.read().decode()
    wall = (time.perf_counter() - began) * 1000
    m = re.search(r'id="search-summary"[^>]*>(.*?)</p>', html, re.S)
    summary = " ".join(m.group(1).split()) if m else "?"
    ms = re.search(r"in (\d+) ms", summary)
    return float(ms.group(1)) if ms else -1.0, wall, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rate", type=int, default=500)
    ap.add_argument("--out", type=Path, default=REPO / "benches" / "results" / "console.json")
    ap.add_argument(
        "--py-spy",
        action="store_true",
        help="sample the broker and its scan process with py-spy during the first search "
        "(its latencies are then not comparable)",
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kafkacore-bench-console-"))
    port, http = free_port(), free_port()
    bootstrap, console = f"localhost:{port}", f"http://127.0.0.1:{http}"
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    cmd = [sys.executable, "-m", "kafkacore.cli", "server-start"]
    for o in (
        f"listeners=PLAINTEXT://localhost:{port}",
        f"log.dirs={work / 'data'}",
        "node.id=1",
        f"console.listeners=http://127.0.0.1:{http}",
    ):
        cmd += ["--override", o]
    out = open(work / "broker.log", "wb")  # noqa: SIM115 - closed at the end
    broker = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    result: dict[str, Any] = {"gib": args.gib, "rate": args.rate, "seconds": args.seconds}
    try:
        deadline = time.time() + 60
        while b"started" not in (work / "broker.log").read_bytes():
            assert broker.poll() is None and time.time() < deadline, "broker did not start"
            time.sleep(0.1)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics(
            [
                NewTopic(BIG, 4, 1, config={"segment.bytes": str(128 << 20)}),
                NewTopic(LATENCY, 1, 1),
            ]
        ).values():
            f.result(30)
        log(f"filling {BIG} with {args.gib} GiB")
        began = time.monotonic()
        fill(bootstrap, args.gib)
        size = sum(p.stat().st_size for p in (work / "data").glob(f"{BIG}-*/*.log"))
        result["topic_bytes"] = size
        result["fill_s"] = round(time.monotonic() - began, 1)
        log(f"{size / (1 << 30):.2f} GiB in {result['fill_s']} s")
        paced = Paced(bootstrap, args.rate)
        paced.run(3)  # warm up

        def cpu_now() -> tuple[float, float, float]:
            scan = sum(cpu_seconds(c) for c in children(broker.pid))
            return cpu_seconds(broker.pid), scan, time.monotonic()

        def phase(name: str, latencies: list[float], cpu0: tuple[float, float, float]) -> None:
            cpu1 = cpu_now()
            wall = cpu1[2] - cpu0[2]
            broker_cpu = cpu1[0] - cpu0[0]
            result[name] = {
                "latency_ms": percentiles(latencies),
                "wall_s": round(wall, 2),
                "broker_cpu_s": round(broker_cpu, 2),
                "broker_cpu_ms_per_record": round(1000 * broker_cpu / max(1, len(latencies)), 3),
                "scan_process_cpu_s": round(cpu1[1] - cpu0[1], 2),
            }
            log(f"{name}: {result[name]}")

        c0 = cpu_now()
        phase("baseline", paced.run(args.seconds), c0)
        # the first search: the key index is built over the whole topic meanwhile
        done = threading.Event()
        first: dict[str, Any] = {}

        def first_search() -> None:
            began = time.perf_counter()
            summaries = []
            while True:  # resumable: a budget that runs out is continued by asking again
                _ms, _wall, summary = search(console, "key-4242")
                summaries.append(summary)
                if "not complete" not in summary:
                    break
            first["index_build_s"] = round(time.perf_counter() - began, 2)
            first["summaries"] = summaries
            done.set()

        c0 = cpu_now()
        spy = None
        if args.py_spy:
            # --nonblocking: the broker is not paused per sample (the latencies of a --py-spy
            # run are still not comparable: py-spy takes CPU from the same 2 cores)
            spy_cmd = [str(Path(sys.executable).parent / "py-spy"), "record", "--subprocesses"]
            spy_cmd += ["--nonblocking"]
            spy_cmd += ["-r", "200", "-f", "raw", "-o", str(work / "spy.txt"), "-p"]
            spy = subprocess.Popen([*spy_cmd, str(broker.pid)], stdout=subprocess.DEVNULL)
            time.sleep(1)
        thread = threading.Thread(target=first_search)
        thread.start()
        during = paced.run(0, until=done)
        thread.join()
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its samples and exits
            spy.wait(60)
            result["py_spy_samples"] = py_spy_shares(work / "spy.txt")
            log(f"py-spy: {result['py_spy_samples']}")
        phase("during_first_search", during, c0)
        result["first_search"] = first
        log(f"first search: {first}")
        c0 = cpu_now()
        phase("after", paced.run(args.seconds), c0)
        base = result["baseline"]["latency_ms"]["p99"]
        rest = max(base, result["after"]["latency_ms"]["p99"])
        result["p99_increase_pct"] = round(
            100 * (result["during_first_search"]["latency_ms"]["p99"] / rest - 1), 1
        )
        lookups = [search(console, f"key-{k}") for k in (4242, 17, 99_999, 50_000, 123, 77_777)]
        result["lookup_console_ms"] = [m for m, _w, _s in lookups]
        result["lookup_http_ms"] = [round(w, 1) for _m, w, _s in lookups]
        result["lookup_summary"] = lookups[0][2]
        log(f"lookups: console {result['lookup_console_ms']} ms, http {result['lookup_http_ms']}")
    finally:
        broker.send_signal(signal.SIGTERM)
        try:
            broker.wait(60)
        except subprocess.TimeoutExpired:
            broker.kill()
        out.close()
        shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
