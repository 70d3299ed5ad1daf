"""A checker of transactional histories in the style of Jepsen's Kafka workload
(``jepsen.tests.kafka``), for the transaction fault tests (``tests/txn_chaos``,
``tests/cluster/test_txn_cluster.py``). Pure Python over recorded events; it needs no
broker, so its own tests feed it crafted histories.

A history is a list of events (dicts, one JSON object per line in a file), each with
``t`` (seconds on one monotonic clock shared by every recorder of the run) and ``type``:

* ``send`` (txn, value, partition): a record handed to a transactional producer inside
  transaction ``txn``; values are unique strings ``"<txn>#<index>"``;
* ``ack`` (value, partition, offset): its delivery report (the offset it was written at);
* ``end`` (txn, commit): ``commit_transaction`` (true) or ``abort_transaction`` (false)
  is about to be called;
* ``outcome`` (txn, outcome): what the client learnt: ``committed`` (commit returned),
  ``aborted`` (an abort we asked for returned), ``failed`` (the transaction went wrong
  before it was committed and was then aborted: definitely not committed) or ``unknown``
  (the commit's answer was lost: either). A transaction without an outcome is ``open``
  (its producer died or was abandoned with it open);
* ``poll`` (consumer, partition, offset, value, final): a record returned to a
  read_committed consumer; ``final`` marks the reads, after the run, of every partition
  from offset 0 to its end, which every other read is compared with. A consumer name
  is one session: its offsets only move forward (a restarted consumer takes a new name).

Anomalies (each a list of examples; a valid history has none):

* ``aborted_read`` (Jepsen's G1a): a read value whose transaction was aborted or failed;
* ``uncommitted_read``: a read value whose transaction never asked to commit (open, or
  only an abort asked), or a read that returned before its ``commit_transaction`` call;
* ``lost_write``: a value known committed (its commit returned, or some consumer read
  it) that the final reads lack;
* ``torn_transaction``: a transaction of which the final reads hold some values, not all;
* ``duplicate``: a value the final reads hold twice, or read at two offsets;
* ``inconsistent_offsets``: two values at one (partition, offset), among the reads and
  the delivery reports, or a value read in another partition than the one it was sent to;
* ``phantom_read``: a read value nobody sent;
* ``nonmonotonic_poll``: one consumer reading a partition's offsets out of order;
* ``poll_skip``: one consumer stepping over an offset where the final reads hold a value.

:func:`check_copy` judges a consume-transform-produce copier (exactly one copy of each
committed source value).

Jepsen's Elle cycle analyses (G0, G1c) need write-read dependencies across keys that
this workload does not create; Kafka allows G0 anyway.

:func:`check_partition_log` is the log-level check: one partition's stored batches (as a
read_uncommitted Fetch returns them) and its aborted-transaction index (``.txnindex``
entries, or Fetch's ``aborted_transactions``), judged against each other, the client's
outcomes and what the final read_committed reads returned.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from chaos.check import read_history  # the same JSON-lines files, cut lines skipped

__all__ = [
    "ANOMALIES",
    "History",
    "LogBatch",
    "Result",
    "check",
    "check_copy",
    "check_partition_log",
    "read_history",
    "txn_of",
]

ANOMALIES = (
    "aborted_read",
    "uncommitted_read",
    "lost_write",
    "torn_transaction",
    "duplicate",
    "inconsistent_offsets",
    "phantom_read",
    "nonmonotonic_poll",
    "poll_skip",
)
LOG_ANOMALIES = (
    "txnindex_mismatch",
    "txn_split",
    "marker_outcome_mismatch",
    "view_mismatch",
)
OUTCOMES = ("committed", "aborted", "failed", "unknown", "open")
MAX_EXAMPLES = 5


def txn_of(value: str) -> str:
    """The transaction a value was sent in (values are ``"<txn>#<index>"``)."""
    return value.rsplit("#", 1)[0]


class History:
    """A run's history: events kept in memory and, with ``path``, appended to a JSON-lines
    file as they come. Thread-safe (producers' delivery callbacks, consumers and the
    nemesis write from their own threads); ``t`` is seconds since the history began."""

    def __init__(self, path: Path | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self._file = open(path, "w", encoding="utf-8") if path is not None else None  # noqa: SIM115
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def now(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def write(self, type_: str, **fields: Any) -> None:
        with self._lock:
            event = {"t": self.now(), "type": type_, **fields}
            self.events.append(event)
            if self._file is not None:
                self._file.write(json.dumps(event, separators=(",", ":")) + "\n")
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclass
class Result:
    """Counts and examples of each anomaly, plus the figures of the run."""

    anomalies: dict[str, list[Any]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    reads: int = 0
    final_reads: int = 0

    def flag(self, name: str, example: Any) -> None:
        self.counts[name] += 1
        bucket = self.anomalies.setdefault(name, [])
        if len(bucket) < MAX_EXAMPLES:
            bucket.append(example)

    def merge(self, other: Result, prefix: str = "") -> None:
        for name, examples in other.anomalies.items():
            for example in examples:
                self.flag(prefix + name, example)
            self.counts[prefix + name] += other.counts[name] - len(examples)

    @property
    def ok(self) -> bool:
        return not self.counts

    def summary(self) -> str:
        outcomes = " ".join(f"{k}={self.outcomes[k]}" for k in OUTCOMES if self.outcomes[k])
        found = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items())) or "no anomalies"
        return (
            f"sent={self.sent} reads={self.reads} final={self.final_reads} txns: {outcomes}; "
            f"{found}"
        )

    def details(self) -> str:
        return json.dumps(self.anomalies, indent=1, default=str)


@dataclass
class _Txn:
    values: dict[str, int] = field(default_factory=dict)  # value -> partition sent to
    commit_asked_at: float | None = None
    abort_asked: bool = False
    outcome: str = "open"


def check(events: Iterable[dict[str, Any]]) -> Result:
    """Judges a history (see the module docstring)."""
    result = Result()
    txns: dict[str, _Txn] = defaultdict(_Txn)
    acks: dict[str, tuple[int, int]] = {}
    reads: list[dict[str, Any]] = []
    for e in events:
        kind = e["type"]
        if kind == "send":
            txns[e["txn"]].values[e["value"]] = int(e["partition"])
            result.sent += 1
        elif kind == "ack":
            acks[e["value"]] = (int(e["partition"]), int(e["offset"]))
        elif kind == "end":
            txn = txns[e["txn"]]
            if e["commit"]:
                if txn.commit_asked_at is None:
                    txn.commit_asked_at = float(e["t"])
            else:
                txn.abort_asked = True
        elif kind == "outcome":
            txns[e["txn"]].outcome = e["outcome"]
        elif kind == "poll":
            reads.append(e)
    sent_in = {value: name for name, txn in txns.items() for value in txn.values}
    for txn in txns.values():
        if txn.values:
            result.outcomes[txn.outcome] += 1
    result.reads = len(reads)

    final: Counter[str] = Counter()
    at_offset: dict[tuple[int, int], set[str]] = defaultdict(set)
    offsets_of: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for value, where in acks.items():
        at_offset[where].add(value)
    read_values: set[str] = set()
    for r in reads:
        value, p, offset = r["value"], int(r["partition"]), int(r["offset"])
        read_values.add(value)
        at_offset[(p, offset)].add(value)
        offsets_of[value].add((p, offset))
        if r.get("final"):
            final[value] += 1
        name = sent_in.get(value)
        if name is None:
            result.flag("phantom_read", r)
            continue
        txn = txns[name]
        if txn.values[value] != p:
            result.flag("inconsistent_offsets", {**r, "sent_to": txn.values[value]})
        if txn.outcome in ("aborted", "failed"):
            result.flag("aborted_read", {**r, "outcome": txn.outcome})
        elif txn.commit_asked_at is None:
            result.flag("uncommitted_read", {**r, "outcome": txn.outcome, "why": "never committed"})
        elif float(r["t"]) < txn.commit_asked_at:
            result.flag(
                "uncommitted_read",
                {**r, "why": "read before commit_transaction", "commit_at": txn.commit_asked_at},
            )
    result.final_reads = sum(final.values())

    for (p, offset), values in sorted(at_offset.items()):
        if len(values) > 1:
            result.flag(
                "inconsistent_offsets", {"partition": p, "offset": offset, "values": sorted(values)}
            )
    for value, count in final.items():
        if count > 1:
            result.flag("duplicate", {"value": value, "final_reads": count})
        elif len(offsets_of[value]) > 1:
            result.flag("duplicate", {"value": value, "offsets": sorted(offsets_of[value])})

    for name, txn in sorted(txns.items()):
        if not txn.values:
            continue
        present = [v for v in txn.values if final[v]]
        if present and len(present) < len(txn.values):
            missing = sorted(set(txn.values) - set(present))
            result.flag(
                "torn_transaction",
                {
                    "txn": name,
                    "outcome": txn.outcome,
                    "present": len(present),
                    "missing": missing[:5],
                },
            )
        for value in txn.values:
            if final[value]:
                continue
            if txn.outcome == "committed" or value in read_values:
                result.flag(
                    "lost_write",
                    {
                        "value": value,
                        "outcome": txn.outcome,
                        "ack": acks.get(value),
                        "read_during_run": value in read_values,
                    },
                )

    final_at: dict[tuple[int, int], str] = {}
    for r in reads:
        if r.get("final"):
            final_at[(int(r["partition"]), int(r["offset"]))] = r["value"]
    final_offsets: dict[int, list[int]] = defaultdict(list)
    for p, offset in sorted(final_at):
        final_offsets[p].append(offset)
    last: dict[tuple[str, int], int] = {}
    for r in reads:
        key = (str(r["consumer"]), int(r["partition"]))
        offset = int(r["offset"])
        before = last.get(key)
        if before is not None:
            if offset <= before:
                result.flag("nonmonotonic_poll", {**r, "previous_offset": before})
            else:
                offsets = final_offsets.get(key[1], [])
                i = bisect.bisect_right(offsets, before)
                if i < len(offsets) and offsets[i] < offset:
                    result.flag(
                        "poll_skip",
                        {
                            **r,
                            "previous_offset": before,
                            "skipped": offsets[i],
                            "skipped_value": final_at[(key[1], offsets[i])],
                        },
                    )
        last[key] = offset if before is None else max(before, offset)
    return result


def check_copy(events: Iterable[dict[str, Any]], source_values: Iterable[str]) -> Result:
    """The consume-transform-produce check (Kafka's transactions system test): the final
    reads of the sink (``poll`` with ``final`` in ``events``, whose ``send`` events carry
    the ``source`` value each copy was made from) hold exactly one copy of every value of
    ``source_values`` (the final read of the source) and nothing else.

    * ``copy_duplicate``: a source value copied (visibly) more than once - exactly-once
      broken, e.g. offsets committed apart from the copies;
    * ``copy_lost``: a source value without a visible copy although the copier caught up;
    * ``copy_phantom``: a visible copy of a value the source does not hold (read from an
      aborted transaction, or from nowhere).
    """
    result = Result()
    source_of: dict[str, str] = {}
    copies: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for e in events:
        if e["type"] == "send" and "source" in e:
            source_of[e["value"]] = e["source"]
        elif e["type"] == "poll" and e.get("final"):
            source = source_of.get(e["value"])
            if source is None:
                result.flag("copy_phantom", {"copy": e["value"], "source": None})
                continue
            copies[source] += 1
            examples[source].append(e["value"])
    expected = set(source_values)
    for source, count in sorted(copies.items()):
        if source not in expected:
            result.flag("copy_phantom", {"copy": examples[source], "source": source})
        elif count > 1:
            result.flag("copy_duplicate", {"source": source, "copies": examples[source]})
    for source in sorted(expected - set(copies)):
        result.flag("copy_lost", {"source": source})
    result.final_reads = sum(copies.values())
    return result


# -- the log-level check ------------------------------------------------------------------


class LogBatch(NamedTuple):
    """A stored batch, reduced to what the check needs: ``control`` is ``"COMMIT"`` or
    ``"ABORT"`` for a marker, else None; ``values`` the records' values (decoded)."""

    base_offset: int
    last_offset: int
    producer_id: int
    transactional: bool
    control: str | None
    values: tuple[tuple[int, str], ...]  # (offset, value)


class AbortedEntry(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def check_partition_log(
    partition: int,
    batches: Sequence[LogBatch],
    aborted: Iterable[AbortedEntry] | None,
    outcomes: Mapping[str, str],
    committed_view: Sequence[tuple[int, str]] | None,
) -> tuple[Result, list[int]]:
    """One partition's log (every batch from offset 0, read_uncommitted) judged against
    its aborted-transaction index ``aborted`` (None: not checked), the client's
    ``outcomes`` (txn -> outcome, as :func:`check` derives them; missing: open) and the
    ``(offset, value)`` list a read_committed consumer returned (None: not checked).
    Returns the anomalies and the first offsets of transactions still open at the end
    (the LSO must not pass the smallest).

    * ``txnindex_mismatch``: the entries differ from those the log implies: one per
      ABORT marker that closes an open transaction of its producer, ``(producer,
      first offset of the transaction, marker offset, LSO then)``, the LSO being the
      first offset of the earliest transaction of another producer still open, else the
      marker's offset + 1;
    * ``txn_split``: the data between a producer's first transactional batch and its
      marker belongs to more than one client transaction;
    * ``marker_outcome_mismatch``: a COMMIT closing values of an aborted or failed
      transaction, or an ABORT closing values of a committed one;
    * ``view_mismatch``: the read_committed read is not the log without the aborted
      transactions' records, the open ones' and the markers, up to the first open one.
    """
    result = Result()
    open_txns: dict[int, list[tuple[int, str]]] = {}
    open_first: dict[int, int] = {}
    expected_index: list[AbortedEntry] = []
    visible: list[tuple[int, str]] = []
    where = f"partition {partition}"
    for b in batches:
        if b.control is not None:
            if b.producer_id not in open_first:
                continue  # a marker without an open transaction changes nothing
            first = open_first.pop(b.producer_id)
            values = open_txns.pop(b.producer_id)
            names = sorted({txn_of(v) for _, v in values})
            if len(names) > 1:
                result.flag(
                    "txn_split",
                    {
                        "partition": partition,
                        "producer_id": b.producer_id,
                        "first": first,
                        "marker": b.base_offset,
                        "txns": names,
                    },
                )
            for name in names:
                outcome = outcomes.get(name, "open")
                if (b.control == "COMMIT" and outcome in ("aborted", "failed")) or (
                    b.control == "ABORT" and outcome == "committed"
                ):
                    result.flag(
                        "marker_outcome_mismatch",
                        {
                            "partition": partition,
                            "txn": name,
                            "outcome": outcome,
                            "marker": b.control,
                            "at": b.base_offset,
                        },
                    )
            if b.control == "ABORT":
                others = [f for pid, f in open_first.items() if pid != b.producer_id]
                lso = min(others) if others else b.base_offset + 1
                expected_index.append(AbortedEntry(b.producer_id, first, b.base_offset, lso))
            else:
                visible.extend(values)
        elif b.transactional:
            if b.producer_id not in open_first:
                open_first[b.producer_id] = b.base_offset
                open_txns[b.producer_id] = []
            open_txns[b.producer_id].extend(b.values)
        else:
            visible.extend(b.values)
    open_at_end = sorted(open_first.values())
    if aborted is not None:
        got = sorted(AbortedEntry(*a[:4]) for a in aborted)
        want = sorted(expected_index)
        if got != want:
            result.flag(
                "txnindex_mismatch",
                {
                    "where": where,
                    "index": [tuple(a) for a in got][:10],
                    "log_implies": [tuple(a) for a in want][:10],
                },
            )
    if committed_view is not None:
        bound = open_at_end[0] if open_at_end else None
        want_view = sorted(v for v in visible if bound is None or v[0] < bound)
        got_view = sorted((int(o), str(v)) for o, v in committed_view)
        if got_view != want_view:
            extra = sorted(set(got_view) - set(want_view))
            missing = sorted(set(want_view) - set(got_view))
            result.flag(
                "view_mismatch",
                {
                    "where": where,
                    "read_but_not_committed": extra[:5],
                    "committed_but_not_read": missing[:5],
                },
            )
    return result, open_at_end
