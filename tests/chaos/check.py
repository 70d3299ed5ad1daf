"""The checkers of a chaos run, over its history file (JSON lines), re-runnable by hand:

    PYTHONPATH=python:tests python -m chaos.check runs/seed-3/history.jsonl

History lines (every one has ``t``, seconds since the run started, and ``type``):

* ``meta`` (seed, topic, partitions), ``fault`` / ``heal`` (kind, target, ...),
  ``exited`` (a broker found dead that nobody killed), ``recovery`` (partition, seconds
  until a new leader after a leader was killed);
* ``send`` (producer, value, partition), ``ack`` (value, partition, offset), ``fail``
  (value, error: the send's outcome is unknown, never counted as lost);
* ``read`` (consumer, partition, offset, value) and ``commit`` (consumer, partition,
  offset) from the consumers of the group; ``committed`` (partition, offset) from an
  observer asking the group coordinator (OffsetFetch) every second;
* ``final`` (partition, offset, value): a fresh consumer reading every partition from
  offset 0 after the run; ``replica`` (broker, partition, batches: ``[base offset,
  last offset, crc]`` read from that broker's segment files once the ISR is full again).

Checks (each a count that must be 0):

* **lost**: an acknowledged value missing from the final read;
* **duplicated**: a value present more than once in the final read;
* **diverged**: a batch of one replica that another replica has differently (other
  offsets or another CRC) below their common end, plus final/acknowledged/consumed
  records that disagree on the value at an offset, plus final offsets that do not
  strictly increase;
* **commit_regressions**: a committed offset of the group lower than one seen before.

Figures: ``recovery`` - seconds from a SIGKILL of a leader until ZooKeeper names another
leader for each partition it led (p50/p99); ``write_recovery`` - until the first record sent
to such a partition after the kill is acknowledged.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Result:
    seed: int = -1
    faults: int = 0
    fault_kinds: dict[str, int] = field(default_factory=dict)
    sent: int = 0
    acked: int = 0
    failed: int = 0
    consumed: int = 0
    final_records: int = 0
    lost: int = 0
    duplicated: int = 0
    diverged: int = 0
    replica_batch_mismatches: int = 0
    inconsistent_offsets: int = 0
    nonmonotonic: int = 0
    commit_regressions: int = 0
    exited: int = 0
    recoveries: list[float] = field(default_factory=list)
    write_recoveries: list[float] = field(default_factory=list)
    examples: dict[str, list[Any]] = field(default_factory=dict)
    harness_error: str | None = None  # set by the campaign when a run could not complete

    @property
    def ok(self) -> bool:
        return (
            self.harness_error is None
            and self.lost == self.duplicated == self.diverged == self.commit_regressions == 0
        )

    def percentile(self, q: float, of: str = "recoveries") -> float | None:
        values: list[float] = getattr(self, of)
        if not values:
            return None
        ordered = sorted(values)
        index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
        return ordered[index]

    def summary(self) -> str:
        def secs(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}s"

        return (
            f"seed={self.seed} faults={self.faults} acked={self.acked} lost={self.lost} "
            f"duplicated={self.duplicated} diverged={self.diverged} "
            f"commit_regressions={self.commit_regressions} exited={self.exited} "
            f"recovery_p50={secs(self.percentile(0.5))} recovery_p99={secs(self.percentile(0.99))}"
            f" write_recovery_p50={secs(self.percentile(0.5, 'write_recoveries'))}"
            f" write_recovery_p99={secs(self.percentile(0.99, 'write_recoveries'))}"
            f" {'OK' if self.ok else 'FAILED'}"
        )

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["recovery_p50"] = self.percentile(0.5)
        out["recovery_p99"] = self.percentile(0.99)
        out["write_recovery_p50"] = self.percentile(0.5, "write_recoveries")
        out["write_recovery_p99"] = self.percentile(0.99, "write_recoveries")
        out["ok"] = self.ok
        return out


def read_history(path: Path) -> list[dict[str, Any]]:
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:  # a line cut by a crash of the harness
                    continue
    return events


def _example(result: Result, name: str, item: Any) -> None:
    bucket = result.examples.setdefault(name, [])
    if len(bucket) < 5:
        bucket.append(item)


def check(events: Iterable[dict[str, Any]]) -> Result:
    result = Result()
    acked: dict[str, tuple[int, int]] = {}
    final_at: dict[tuple[int, int], str] = {}
    final_values: Counter[str] = Counter()
    final_offsets: dict[int, list[int]] = defaultdict(list)
    reads: list[dict[str, Any]] = []
    replicas: dict[int, dict[int, list[list[int]]]] = defaultdict(dict)
    committed: dict[int, int] = {}
    fault_kinds: Counter[str] = Counter()
    sent_at: dict[str, float] = {}
    acked_at: dict[str, float] = {}
    leader_kills: list[tuple[float, list[int]]] = []
    for e in events:
        kind = e["type"]
        if kind == "meta":
            result.seed = int(e.get("seed", -1))
        elif kind == "fault":
            fault_kinds[e["kind"]] += 1
            if e.get("leads"):
                leader_kills.append((float(e["t"]), [int(p) for p in e["leads"]]))
        elif kind == "exited":
            result.exited += 1
            _example(result, "exited", e)
        elif kind == "recovery":
            result.recoveries.append(float(e["seconds"]))
        elif kind == "send":
            result.sent += 1
            sent_at[e["value"]] = float(e["t"])
        elif kind == "ack":
            acked[e["value"]] = (int(e["partition"]), int(e["offset"]))
            acked_at[e["value"]] = float(e["t"])
        elif kind == "fail":
            result.failed += 1
        elif kind == "read":
            reads.append(e)
        elif kind == "committed":
            p, offset = int(e["partition"]), int(e["offset"])
            if offset < committed.get(p, -1):
                result.commit_regressions += 1
                _example(result, "commit_regression", {**e, "before": committed[p]})
            committed[p] = max(offset, committed.get(p, -1))
        elif kind == "final":
            p, offset, value = int(e["partition"]), int(e["offset"]), e["value"]
            final_at[(p, offset)] = value
            final_values[value] += 1
            final_offsets[p].append(offset)
        elif kind == "replica":
            replicas[int(e["partition"])][int(e["broker"])] = e["batches"]
    result.faults = sum(fault_kinds.values())
    result.write_recoveries = _write_recoveries(leader_kills, acked, sent_at, acked_at)
    result.fault_kinds = dict(sorted(fault_kinds.items()))
    result.acked = len(acked)
    result.consumed = len(reads)
    result.final_records = sum(final_values.values())

    for value, (p, offset) in acked.items():
        if final_values[value] == 0:
            result.lost += 1
            _example(result, "lost", {"value": value, "partition": p, "offset": offset})
        elif final_at.get((p, offset)) != value:
            result.inconsistent_offsets += 1
            _example(
                result,
                "ack_offset_mismatch",
                {
                    "value": value,
                    "partition": p,
                    "offset": offset,
                    "final": final_at.get((p, offset)),
                },
            )
    for value, count in final_values.items():
        if count > 1:
            result.duplicated += count - 1
            _example(result, "duplicated", {"value": value, "count": count})
    for p, offsets in final_offsets.items():
        for before, after in itertools.pairwise(offsets):
            if after <= before:
                result.nonmonotonic += 1
                _example(result, "nonmonotonic", {"partition": p, "offsets": [before, after]})
    for e in reads:
        key = (int(e["partition"]), int(e["offset"]))
        if key in final_at and final_at[key] != e["value"]:
            result.inconsistent_offsets += 1
            _example(result, "read_offset_mismatch", {**e, "final": final_at[key]})
    for p, by_broker in sorted(replicas.items()):
        result.replica_batch_mismatches += _replica_mismatches(result, p, by_broker)
    result.diverged = (
        result.replica_batch_mismatches + result.inconsistent_offsets + result.nonmonotonic
    )
    return result


def _write_recoveries(
    leader_kills: list[tuple[float, list[int]]],
    acked: dict[str, tuple[int, int]],
    sent_at: dict[str, float],
    acked_at: dict[str, float],
) -> list[float]:
    """For each partition whose leader was killed: seconds from the kill until the first
    record sent after it to that partition was acknowledged (what a producer sees)."""
    out = []
    for killed_at, partitions in leader_kills:
        for p in partitions:
            first = min(
                (
                    acked_at[v]
                    for v, (partition, _) in acked.items()
                    if partition == p and sent_at.get(v, -1.0) >= killed_at
                ),
                default=None,
            )
            if first is not None:
                out.append(round(first - killed_at, 3))
    return out


def _replica_mismatches(
    result: Result, partition: int, by_broker: dict[int, list[list[int]]]
) -> int:
    """Batches (base offset, last offset, CRC) below the replicas' common end that not every
    replica has identically."""
    if len(by_broker) < 2:
        return 0
    common_end = min((b[-1][1] + 1 if b else 0) for b in by_broker.values())
    sets = {
        broker: {tuple(batch) for batch in batches if batch[1] < common_end}
        for broker, batches in by_broker.items()
    }
    union = set().union(*sets.values())
    everywhere = set.intersection(*sets.values())
    odd = union - everywhere
    if odd:
        _example(
            result,
            "replica_divergence",
            {"partition": partition, "batches": sorted(odd)[:10], "brokers": sorted(sets)},
        )
    return len(odd)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m chaos.check HISTORY.jsonl [...]", file=sys.stderr)
        return 2
    status = 0
    for name in args:
        result = check(read_history(Path(name)))
        print(result.summary())
        for what, items in result.examples.items():
            for item in items:
                print(f"  {what}: {json.dumps(item)}")
        status |= 0 if result.ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
