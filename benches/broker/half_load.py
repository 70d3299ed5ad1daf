"""Latency below saturation of one or more kafkacore trees at the same fixed offered
rates, interleaved so that drift on a shared machine hits every tree alike.

    .venv/bin/python benches/broker/half_load.py OUT.json TREE [TREE ...] [--reps 3]

TREE is a checkout of kafkacore with its extension built (e.g. ``git worktree add
/tmp/before <rev>`` plus the ``_native`` module copied into its ``python/kafkacore``). For
each repetition (tree order alternating), a kafkacore broker is started from the tree, warmed
up, and Kafka's own ``ProducerPerformance`` is run for ``--seconds`` per case at the rates of
:data:`TARGETS`: half of Apache Kafka 4.3.1's peak for the case, measured by
``benches/broker/run.py`` on the 2-core machine. The p50/p99/p99.9 per repetition are
printed and written to OUT.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

TARGETS = {
    (1024, "1", 1): 26_500,
    (1024, "1", 6): 25_900,
    (1024, "all", 1): 20_900,
    (1024, "all", 6): 25_200,
    (100, "1", 1): 81_000,
    (100, "1", 6): 145_000,
    (100, "all", 1): 185_000,
    (100, "all", 6): 187_000,
}
RUN = Path("benches/broker/run.py")


def load_runner(tree: Path, tag: str) -> Any:
    """``benches/broker/run.py`` of ``tree``, whose brokers import ``tree``'s kafkacore."""
    os.environ["PYTHONPATH"] = str(tree / "python")
    spec = importlib.util.spec_from_file_location(f"half_load_run_{tag}", tree / RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measure(tree: Path, rep: int, seconds: float) -> dict[str, dict[str, Any]]:
    run = load_runner(tree, f"{rep}_{abs(hash(tree))}")
    libs = run.kafka_libs()
    out: dict[str, dict[str, Any]] = {}
    with run.cleaned_up():
        broker = run.start_kafkacore()
        run.wait_ready(broker)
        for size, records in ((1024, 60_000), (100, 200_000)):
            warm = run.Case(size, "1", 1)
            topic = warm.topic("kc", "-warm")
            run.create_topic(broker, topic, 1)
            run.producer_perf(libs, broker, topic, warm, records, -1)
        for (size, acks, partitions), rate in TARGETS.items():
            case = run.Case(size, acks, partitions)
            topic = case.topic("kc", f"-r{rep}")
            run.create_topic(broker, topic, partitions)
            result = run.producer_perf(libs, broker, topic, case, int(rate * seconds), rate)
            out[case.name] = result
            print(f"{tree} rep {rep} {case.name}: {result['latency_ms']}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    results: dict[str, dict[str, list[dict[str, Any]]]] = {str(t): {} for t in args.trees}
    for rep in range(args.reps):
        order = args.trees if rep % 2 == 0 else args.trees[::-1]
        for tree in order:
            for case, result in measure(tree.resolve(), rep, args.seconds).items():
                results[str(tree)].setdefault(case, []).append(result)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for tree, cases in results.items():
        print(tree)
        for case, runs in cases.items():
            p99 = sorted(r["latency_ms"]["p99"] for r in runs)
            print(f"  {case:18} p99 ms per run, sorted: {p99}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
