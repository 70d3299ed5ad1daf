"""Consumer fetch throughput of one or more kafkacore trees, interleaved, with the broker's
CPU per GiB: what a change to the fetch path does to reading speed and cost.

    .venv/bin/python benches/broker/fetch_ab.py OUT.json TREE [TREE ...] \\
        [--reps 3] [--records 600000] [--partitions 6]

TREE is a checkout of kafkacore with its extension built (see ``half_load.py``). For each
repetition (tree order alternating), a kafkacore broker is started from the tree, a topic
of ``--partitions`` partitions is filled with ``--records`` 1 KiB records (confluent-kafka,
acks=1), then read back from offset 0 twice by a confluent-kafka consumer with
``assign()`` (no group): the second read is measured (records/s, MiB/s and the broker's
CPU seconds per GiB from ``/proc``). Printed and written to OUT.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from half_load import load_runner


def measure(tree: Path, rep: int, records: int, partitions: int) -> dict[str, Any]:
    run = load_runner(tree, f"fetch_{rep}_{abs(hash(tree))}")
    with run.cleaned_up():
        broker = run.start_kafkacore()
        run.wait_ready(broker)
        topic = f"fetch-ab-{rep}"
        run.create_topic(broker, topic, partitions)
        run.fill_topic(broker, topic, 1024, records)
        run.confluent_consume(broker, topic, partitions, records, 30)  # warm: page cache, JIT
        return run.with_cpu(
            broker,
            lambda r: r["bytes"],
            lambda: run.confluent_consume(broker, topic, partitions, records, 30),
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--records", type=int, default=600_000)
    ap.add_argument("--partitions", type=int, default=6)
    args = ap.parse_args()
    results: dict[str, list[dict[str, Any]]] = {str(t): [] for t in args.trees}
    for rep in range(args.reps):
        order = args.trees if rep % 2 == 0 else args.trees[::-1]
        for tree in order:
            r = measure(tree.resolve(), rep, args.records, args.partitions)
            results[str(tree)].append(r)
            print(
                f"{tree} rep {rep}: {r['records_per_s']:,.0f} rec/s, {r['mb_per_s']} MiB/s, "
                f"{r.get('broker_cpu_s_per_gib')} CPU s/GiB",
                flush=True,
            )
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
