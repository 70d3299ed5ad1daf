"""Peak produce of one or more kafkacore trees, interleaved, with the broker's CPU per GiB
and its CPU per thread: what a change to the produce path does to throughput and cost.

    .venv/bin/python benches/broker/produce_ab.py OUT.json TREE [TREE ...] \\
        [--cases 1024:1:1,1024:1:6,100:all:1] [--reps 2] [--records 1000000]

TREE is a checkout of kafkacore with its extension built (see ``half_load.py``). For each
repetition (tree order alternating) and case (``size:acks:partitions``), a kafkacore broker
is started from the tree, warmed up with 200,000 records, and Kafka's own
``ProducerPerformance`` sends ``--records`` records (1 KiB; ten times as many of 100 B) at
full speed. The broker's threads are sampled from ``/proc/<pid>/task/*/stat`` over 8 s in
the middle of the run. Records/s, CPU s/GiB and the per-thread CPU are printed and written
to OUT.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from half_load import load_runner


def thread_ticks(pid: int) -> dict[str, int]:
    """CPU clock ticks (user + system) of each thread of ``pid``, by ``tid:name``."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except FileNotFoundError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[f"{tid}:{name}"] = int(fields[11]) + int(fields[12])
    return out


def measure(tree: Path, rep: int, case: tuple[int, str, int], records: int) -> dict[str, Any]:
    run = load_runner(tree, f"{rep}_{abs(hash(tree))}_{case}")
    libs = run.kafka_libs()
    size, acks, partitions = case
    with run.cleaned_up():
        broker = run.start_kafkacore()
        c = run.Case(size, acks, partitions)
        run.create_topic(broker, "ab", partitions)
        run.producer_perf(libs, broker, "ab", c, 200_000, -1)
        result: dict[str, Any] = {}

        def load() -> None:
            result["run"] = run.with_cpu(
                broker,
                lambda r: r["records"] * size,
                lambda: run.producer_perf(libs, broker, "ab", c, records, -1),
            )

        loader = threading.Thread(target=load)
        loader.start()
        time.sleep(4)
        hz = os.sysconf("SC_CLK_TCK")
        before, started = thread_ticks(broker.proc.pid), time.monotonic()
        time.sleep(8)
        after, elapsed = thread_ticks(broker.proc.pid), time.monotonic() - started
        loader.join()
        threads = {
            k: round(100 * (v - before.get(k, 0)) / hz / elapsed, 1)
            for k, v in after.items()
            if v > before.get(k, 0)
        }
    r = result["run"]
    return {
        "records_per_s": r["records_per_s"],
        "cpu_s_per_gib": r.get("broker_cpu_s_per_gib"),
        "latency_ms": r["latency_ms"],
        "thread_cpu_percent": dict(sorted(threads.items(), key=lambda kv: -kv[1])),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--cases", default="1024:1:1,1024:1:6,100:all:1")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--records", type=int, default=1_000_000, help="1 KiB records per run")
    args = ap.parse_args()
    cases = [(int(s), a, int(p)) for s, a, p in (c.split(":") for c in args.cases.split(","))]
    results: dict[str, dict[str, list[dict[str, Any]]]] = {str(t): {} for t in args.trees}
    for rep in range(args.reps):
        order = args.trees if rep % 2 == 0 else args.trees[::-1]
        for case in cases:
            records = args.records * (10 if case[0] < 1024 else 1)
            for tree in order:
                r = measure(tree.resolve(), rep, case, records)
                name = f"{case[0]}B acks={case[1]} p={case[2]}"
                results[str(tree)].setdefault(name, []).append(r)
                total = sum(r["thread_cpu_percent"].values())
                print(
                    f"{tree} rep {rep} {name}: {r['records_per_s']:,.0f} rec/s, "
                    f"{r['cpu_s_per_gib']} CPU s/GiB, broker {total:.0f}% of a core "
                    f"(threads: {list(r['thread_cpu_percent'].values())[:4]})",
                    flush=True,
                )
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
