"""The Jepsen-style transaction checker (``support.txn_checker``): crafted histories, one
per anomaly, must be flagged (and a clean one must not); crafted partition logs against
their ``.txnindex``; then the bounded seeded run against one kafkacore broker that is
SIGKILLed and restarted at least twice, whose history must show no anomaly. The longer runs (more
seeds, the three-broker cluster, Apache Kafka as the reference) are ``make chaos``
(``python -m txn_chaos.campaign``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from support.txn_checker import (
    ANOMALIES,
    AbortedEntry,
    LogBatch,
    check,
    check_copy,
    check_partition_log,
)
from txn_chaos.campaign import KafkacoreNode, run_once


class H:
    """A crafted history: ``txn(...)`` sends, acks and ends one transaction; ``poll(...)``
    records reads; times increase by one per event unless given."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.t = 0.0
        self.next_offset: dict[int, int] = {}

    def add(self, type_: str, t: float | None = None, **fields: Any) -> None:
        self.t = self.t + 1 if t is None else t
        self.events.append({"t": self.t, "type": type_, **fields})

    def txn(
        self, name: str, partitions: list[int], outcome: str | None = "committed"
    ) -> list[tuple[int, int, str]]:
        """Sends one value per entry of ``partitions``; acks them at the next offsets
        (skipping one offset for the marker); ends with ``outcome`` (None: left open).
        The (partition, offset, value) written."""
        written = []
        for i, p in enumerate(partitions):
            value = f"{name}#{i}"
            self.add("send", txn=name, value=value, partition=p)
            offset = self.next_offset.get(p, 0)
            self.next_offset[p] = offset + 1
            self.add("ack", value=value, partition=p, offset=offset)
            written.append((p, offset, value))
        for p in set(partitions):
            self.next_offset[p] += 1  # the marker
        if outcome is not None:
            self.add("end", txn=name, commit=outcome in ("committed", "unknown"))
            self.add("outcome", txn=name, outcome=outcome)
        return written

    def poll(self, consumer: str, reads: list[tuple[int, int, str]], final: bool = False) -> None:
        for p, offset, value in reads:
            self.add(
                "poll", consumer=consumer, partition=p, offset=offset, value=value, final=final
            )

    def final(self, reads: list[tuple[int, int, str]]) -> None:
        self.poll("final", sorted(reads), final=True)


def clean_history() -> tuple[H, list[tuple[int, int, str]]]:
    h = H()
    a = h.txn("w0.0", [0, 1, 2])
    h.txn("w0.1", [0, 1], outcome="aborted")
    c = h.txn("w1.0", [2, 3])
    h.txn("w1.1", [0], outcome="failed")
    d = h.txn("w1.2", [1, 3], outcome="unknown")  # committed after all: read
    h.txn("w1.3", [2, 2], outcome="unknown")  # aborted after all: never read
    h.poll("live", a[:2])
    committed = a + c + d
    return h, committed


def test_clean_history_has_no_anomaly() -> None:
    h, committed = clean_history()
    h.final(committed)
    result = check(h.events)
    assert result.ok, result.details()
    assert result.outcomes == {"committed": 2, "aborted": 1, "failed": 1, "unknown": 2}
    assert result.final_reads == 7 and result.reads == 9


def flagged(events: list[dict[str, Any]]) -> set[str]:
    return set(check(events).counts)


def test_aborted_read_g1a() -> None:
    h, committed = clean_history()
    aborted = [(0, 3, "w0.1#0")]  # w0.1 wrote w0.1#0 at partition 0 offset 1... read anyway
    h.final([*committed, (0, 9, "w0.1#0"), (1, 9, "w1.1#0")])
    assert "aborted_read" in flagged(h.events)
    h2, committed2 = clean_history()
    h2.poll("live", aborted)
    h2.final(committed2)
    assert flagged(h2.events) >= {"aborted_read"}


def test_uncommitted_read() -> None:
    # a value of a transaction that never asked to commit (left open)
    h, committed = clean_history()
    open_ = h.txn("w2.0", [0], outcome=None)
    h.final(committed + open_)
    assert flagged(h.events) == {"uncommitted_read"}
    # a read returned before commit_transaction was called
    h2 = H()
    h2.add("send", txn="w0.0", value="w0.0#0", partition=0)
    h2.add("poll", consumer="live", partition=0, offset=0, value="w0.0#0")
    h2.add("end", txn="w0.0", commit=True)
    h2.add("outcome", txn="w0.0", outcome="committed")
    h2.poll("final", [(0, 0, "w0.0#0")], final=True)
    result = check(h2.events)
    assert set(result.counts) == {"uncommitted_read"}
    assert result.anomalies["uncommitted_read"][0]["why"] == "read before commit_transaction"


def test_lost_write() -> None:
    h, committed = clean_history()
    h.final(committed[1:])  # w0.0#0 missing (also torn)
    assert flagged(h.events) == {"lost_write", "torn_transaction"}
    # an unknown transaction read during the run, then gone
    h2, committed2 = clean_history()
    gone = [r for r in committed2 if r[2].startswith("w1.2")]
    h2.poll("live", gone)
    h2.final([r for r in committed2 if r not in gone])
    result = check(h2.events)
    assert set(result.counts) == {"lost_write"}
    assert result.counts["lost_write"] == 2


def test_torn_transaction() -> None:
    # an unknown transaction half visible
    h, committed = clean_history()
    h.final([*committed, (2, 9, "w1.3#0")])
    assert flagged(h.events) == {"torn_transaction"}


def test_duplicate() -> None:
    h, committed = clean_history()
    h.final([*committed, (3, 20, committed[0][2])])
    found = flagged(h.events)
    assert "duplicate" in found and "aborted_read" not in found
    # one value at two offsets in two consumers' reads
    h2, committed2 = clean_history()
    p, _, value = committed2[0]
    h2.poll("other", [(p, 30, value)])
    h2.final(committed2)
    assert "duplicate" in flagged(h2.events)


def test_inconsistent_offsets() -> None:
    h, committed = clean_history()
    p, offset, _ = committed[0]
    _, _, other = committed[1]
    h.poll("other", [(p, offset, other)])  # another value at the same offset
    h.final(committed)
    assert "inconsistent_offsets" in flagged(h.events)
    # read in another partition than it was sent to
    h2, committed2 = clean_history()
    h2.final(
        [
            (3 if r[0] != 3 else 0, r[1] + 100, r[2]) if i == 0 else r
            for i, r in enumerate(committed2)
        ]
    )
    assert "inconsistent_offsets" in flagged(h2.events)


def test_phantom_read() -> None:
    h, committed = clean_history()
    h.final([*committed, (0, 50, "nobody#0")])
    assert flagged(h.events) == {"phantom_read"}


def test_nonmonotonic_poll_and_poll_skip() -> None:
    h, committed = clean_history()
    on_2 = sorted(r for r in committed if r[0] == 2)
    assert len(on_2) == 2
    h.poll("c1", [on_2[1], on_2[0]])  # backwards
    h.final(committed)
    assert flagged(h.events) == {"nonmonotonic_poll"}
    # a consumer stepping over a committed value
    h2, committed2 = clean_history()
    three = h2.txn("w2.0", [3, 3, 3])
    h2.poll("c3", [three[0], three[2]])
    h2.poll("c4", [three[0], three[1], three[2]])
    h2.final(committed2 + three)
    result = check(h2.events)
    assert set(result.counts) == {"poll_skip"}
    assert result.anomalies["poll_skip"][0]["skipped_value"] == "w2.0#1"


def test_every_anomaly_has_a_crafted_case() -> None:
    names = {name for name in ANOMALIES}
    tested = {
        "aborted_read",
        "uncommitted_read",
        "lost_write",
        "torn_transaction",
        "duplicate",
        "inconsistent_offsets",
        "phantom_read",
        "nonmonotonic_poll",
        "poll_skip",
    }
    assert names == tested


def test_copy_check() -> None:
    h = H()
    copies = h.txn("c.0", [0, 1])
    copies2 = h.txn("c.1", [0], outcome="aborted")
    for e in h.events:
        if e["type"] == "send":
            e["source"] = {"c.0#0": "s#0", "c.0#1": "s#1", "c.1#0": "s#2"}[e["value"]]
    clean = H()
    clean.events = list(h.events)
    clean.final(copies)
    assert check_copy(clean.events, ["s#0", "s#1"]).ok
    assert set(check_copy(clean.events, ["s#0", "s#1", "s#3"]).counts) == {"copy_lost"}
    assert set(check_copy(clean.events, ["s#0"]).counts) == {"copy_phantom"}
    twice = H()
    twice.events = list(h.events)
    twice.final(copies + copies2)  # the aborted copy of s#2 visible: s#2 not in the source
    assert set(check_copy(twice.events, ["s#0", "s#1"]).counts) == {"copy_phantom"}
    dup = H()
    dup.events = list(h.events)
    dup.add("send", txn="c.2", value="c.2#0", partition=1, source="s#1")
    dup.final([*copies, (1, 7, "c.2#0")])
    assert set(check_copy(dup.events, ["s#0", "s#1"]).counts) == {"copy_duplicate"}


# -- the log-level check ------------------------------------------------------------------


def data(base: int, pid: int, *values: str, txn: bool = True) -> LogBatch:
    return LogBatch(
        base,
        base + len(values) - 1,
        pid,
        txn,
        None,
        tuple((base + i, v) for i, v in enumerate(values)),
    )


def marker(offset: int, pid: int, kind: str) -> LogBatch:
    return LogBatch(offset, offset, pid, True, kind, ())


# producer 7 aborts a.0 while producer 8's b.0 is open (LSO then = 8's first offset 2),
# 8 commits b.0, 7 commits a.1; one plain record
LOG = [
    data(0, 7, "a.0#0", "a.0#1"),
    data(2, 8, "b.0#0"),
    marker(3, 7, "ABORT"),
    data(4, -1, "plain#0", txn=False),
    marker(5, 8, "COMMIT"),
    data(6, 7, "a.1#0"),
    marker(7, 7, "COMMIT"),
    marker(8, 7, "COMMIT"),  # a retried marker: no open transaction, no effect
]
OUTCOMES = {"a.0": "aborted", "b.0": "committed", "a.1": "committed"}
VIEW = [(2, "b.0#0"), (4, "plain#0"), (6, "a.1#0")]


def test_log_check_clean() -> None:
    result, open_at_end = check_partition_log(0, LOG, [AbortedEntry(7, 0, 3, 2)], OUTCOMES, VIEW)
    assert result.ok, result.details()
    assert open_at_end == []


def test_log_check_flags() -> None:
    # a missing index entry, a wrong LSO, a spurious entry
    for index in (
        [],
        [AbortedEntry(7, 0, 3, 4)],
        [AbortedEntry(7, 0, 3, 2), AbortedEntry(8, 2, 5, 6)],
    ):
        result, _ = check_partition_log(0, LOG, index, OUTCOMES, VIEW)
        assert set(result.counts) == {"txnindex_mismatch"}, index
    # the consumer saw the aborted records / missed a committed one
    result, _ = check_partition_log(0, LOG, None, OUTCOMES, [*VIEW, (0, "a.0#0")])
    assert set(result.counts) == {"view_mismatch"}
    result, _ = check_partition_log(0, LOG, None, OUTCOMES, VIEW[1:])
    assert set(result.counts) == {"view_mismatch"}
    # markers deciding against the client's outcome
    result, _ = check_partition_log(0, LOG, None, {**OUTCOMES, "b.0": "aborted"}, None)
    assert set(result.counts) == {"marker_outcome_mismatch"}
    result, _ = check_partition_log(0, LOG, None, {**OUTCOMES, "a.0": "committed"}, None)
    assert set(result.counts) == {"marker_outcome_mismatch"}
    # two client transactions under one marker (a lost marker)
    split = [data(0, 7, "a.0#0"), data(1, 7, "a.1#0"), marker(2, 7, "COMMIT")]
    result, _ = check_partition_log(0, split, None, {"a.0": "committed", "a.1": "committed"}, None)
    assert set(result.counts) == {"txn_split"}


def test_log_check_open_transaction_bounds_the_view() -> None:
    log = [*LOG, data(9, 9, "c.0#0"), data(10, 7, "a.2#0"), marker(11, 7, "COMMIT")]
    result, open_at_end = check_partition_log(0, log, [AbortedEntry(7, 0, 3, 2)], OUTCOMES, VIEW)
    assert result.ok, result.details()
    assert open_at_end == [9]


# -- the bounded run against kafkacore ------------------------------------------------------

SEED = 3
DURATION_S = 12.0


@pytest.mark.timeout(120)
def test_bounded_run_against_kafkacore(tmp_path: Path) -> None:
    """Two transactional producers (a quarter of their transactions aborted), a copier
    (consume-transform-produce) and a live read_committed reader while the broker is
    SIGKILLed and restarted at seeded moments;
    then LSO = HW everywhere, a final read, the raw logs and ``.txnindex`` files: no
    anomaly, and the faults and both kinds of transaction really happened."""
    started = time.monotonic()
    target = KafkacoreNode(tmp_path)
    target.start()
    try:
        result = run_once(target, tmp_path / "run", SEED, duration_s=DURATION_S, gap_s=(4.0, 5.0))
    finally:
        target.stop()
    elapsed = time.monotonic() - started
    print(f"{result.summary()} wall={elapsed:.0f}s")
    assert result.ok, f"{result.summary()}\n{result.details()}\n{target.log_text()[-3000:]}"
    assert result.outcomes["committed"] >= 20, result.summary()
    assert result.outcomes["aborted"] >= 5, result.summary()
    assert result.final_reads > 50, result.summary()
    faults = [
        e for e in (tmp_path / "run" / "history.jsonl").read_text().splitlines() if '"fault"' in e
    ]
    assert len(faults) >= 2, faults
    copies = (tmp_path / "run" / "copy-history.jsonl").read_text().count('"final":true')
    assert copies == result.final_reads, "the copier did not copy every committed value"
