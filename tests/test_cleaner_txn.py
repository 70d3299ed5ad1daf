"""The log cleaner and transactions (Kafka's ``CleanedTransactionMetadata`` and the
cleaner's batch retention), on both backends: the batches of aborted transactions are
removed and never shadow a committed key, committed ones are compacted as any other,
COMMIT/ABORT markers stay while their transaction has batches, then carry a delete
horizon, then go; the ABORT entries of the markers kept move to the cleaned segment's
``.txnindex``; the cleaner never passes the first unstable offset; the batches holding a
producer's last sequence or last epoch survive as empty batches.

Hypothesis runs random transactional histories through both backends: identical files,
and the read_committed view (latest committed value of each key, as a consumer filtering
with the ``.txnindex`` sees it) unchanged by cleaning.

Time is a ``MockTime``; file deletion runs on a ``MockScheduler``.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.config import LogConfig
from kafkacore.log import Log, MockScheduler, MockTime, TopicPartition
from kafkacore.log.cleaner import CleanerConfig, LastRecord, LogCleaner
from kafkacore.log.files import transaction_index_file
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.log.txn_index import AbortedTxn, TransactionIndex
from kafkacore.native import load_backend
from support.budget import examples

T0 = 1_700_000_000_000
HOUR = 3600 * 1000
DAY = 24 * HOUR
TP = TopicPartition("txn", 0)
DELETE_HORIZON = 0x40
CONTROL = 0x20

Row = tuple[int, bytes | None, bytes | None]


def log_config(**fields: Any) -> LogConfig:
    overrides: dict[str, Any] = {
        "cleanup.policy": "compact",
        "file.delete.delay.ms": 0,
        "internal.segment.bytes": 600,
        "delete.retention.ms": DAY,
    }
    for k, v in fields.items():
        overrides["internal.segment.bytes" if k == "segment_bytes" else k.replace("_", ".")] = v
    return LogConfig(overrides)


class TxnEnv:
    """A log of one backend with a producer state, as a single-replica partition
    (the high watermark follows the log end): transactional data batches of producers,
    their COMMIT/ABORT markers (``Log.append_txn_marker``), plain writes."""

    def __init__(self, root: Path, backend: ModuleType, **config: Any) -> None:
        self.backend = backend
        self.clock = MockTime(T0)
        self.dir = root / str(TP)
        self.dir.mkdir(parents=True)
        self.log = Log(
            self.dir,
            log_config(**config),
            backend=backend,
            time=self.clock,
            scheduler=MockScheduler(self.clock),
            producer_state=ProducerStateManager(self.dir, producer_id_expiration_ms=HOUR),
        )
        self.open_txns: dict[int, int] = {}  # producer id -> first offset
        self.seqs: dict[int, int] = {}
        self.epochs: dict[int, int] = {}

    def plain(self, key: bytes, value: bytes | None) -> int:
        batch = self.backend.build_batch([(0, self.clock.milliseconds(), key, value, [])])
        return self.log.append_as_leader(batch, leader_epoch=0).first_offset

    def txn(self, producer_id: int, *rows: tuple[bytes, bytes | None]) -> int:
        ts = self.clock.milliseconds()
        seq = self.seqs.get(producer_id, 0)
        batch = self.backend.build_batch(
            [(i, ts, k, v, []) for i, (k, v) in enumerate(rows)],
            producer_id=producer_id,
            producer_epoch=self.epochs.get(producer_id, 0),
            base_sequence=seq,
            transactional=True,
        )
        self.seqs[producer_id] = seq + len(rows)
        first = self.log.append_as_leader(batch, leader_epoch=0).first_offset
        self.open_txns.setdefault(producer_id, first)
        return first

    def end(self, producer_id: int, commit: bool, *, bump: bool = False) -> int:
        """The marker ending ``producer_id``'s transaction (with the next epoch when
        ``bump``, as a coordinator aborting a timed-out transaction does)."""
        epoch = self.epochs.get(producer_id, 0) + (1 if bump else 0)
        self.epochs[producer_id] = epoch
        if bump:
            self.seqs[producer_id] = 0
        info = self.log.append_txn_marker(producer_id, epoch, 5, commit, leader_epoch=0)
        self.log.update_high_watermark(self.log.log_end_offset)
        self.open_txns.pop(producer_id, None)
        return info.first_offset

    def expire_producers(self) -> None:
        self.clock.sleep(HOUR)
        assert self.log.remove_expired_producers(self.clock.milliseconds())

    def cleaner(self) -> LogCleaner:
        return LogCleaner(lambda: [self.log], CleanerConfig(), self.clock)

    def clean(self, **kwargs: Any) -> Any:
        stats = self.cleaner().clean(self.log, force=True, **kwargs)
        assert stats is not None
        return stats

    def batches(self) -> list[tuple[tuple[int, ...], list[Any]]]:
        out = []
        for segment in self.log.segments:
            data = segment.segment.read_bytes(0, segment.size)
            pos = 0
            while pos < len(data):
                header = self.backend.batch_header(data, pos)
                out.append((tuple(header), self.backend.batch_records(data, pos)))
                pos += header[1] + 12
        return out

    def markers(self) -> list[tuple[int, int, int, int]]:
        """``(offset, producer id, attributes, baseTimestamp)`` of each control batch."""
        return [(h[0], h[9], h[5], h[7]) for h, _ in self.batches() if h[5] & CONTROL and h[12] > 0]

    def rows(self) -> list[Row]:
        return [
            (r[0], r[2], r[3]) for h, recs in self.batches() if not h[5] & CONTROL for r in recs
        ]

    def txn_indexes(self) -> dict[int, list[AbortedTxn]]:
        found = {}
        for segment in self.log.segments:
            path = transaction_index_file(str(self.dir), segment.base_offset)
            if os.path.exists(path):
                found[segment.base_offset] = TransactionIndex(
                    segment.base_offset, path
                ).all_aborted()
        return found

    def filler(self, count: int, key: bytes = b"filler") -> None:
        for i in range(count):
            self.plain(key, b"f%d" % i)


def read_committed(env: TxnEnv) -> dict[bytes, bytes | None]:
    """The latest value of each key as a read_committed consumer sees the log (Kafka's
    ``CompletedFetch`` filtering with the aborted transactions of the ``.txnindex``)."""
    aborted = sorted(
        env.log.collect_aborted_transactions(0, env.log.log_end_offset),
        key=lambda t: t.first_offset,
    )
    latest: dict[bytes, bytes | None] = {}
    aborting: set[int] = set()
    for header, records in env.batches():
        pid = header[9]
        last = header[0] + header[6]
        while aborted and aborted[0].first_offset <= last:
            aborting.add(aborted.pop(0).producer_id)
        if header[5] & CONTROL:
            if records and struct.unpack(">hh", records[0][2])[1] == 0:
                aborting.discard(pid)
            continue
        if header[5] & 0x10 and pid in aborting:
            continue
        for _, _, key, value, _ in records:
            if key is not None:
                latest[key] = value
    return {k: v for k, v in latest.items() if v is not None}


@pytest.fixture
def env(tmp_path: Path, backend: ModuleType) -> TxnEnv:
    return TxnEnv(tmp_path, backend)


def test_aborted_removed_committed_kept_and_not_shadowed(env: TxnEnv) -> None:
    env.plain(b"k", b"plain-1")
    env.txn(1, (b"a", b"committed-a"), (b"b", b"committed-b"))
    env.txn(2, (b"a", b"aborted-a"), (b"c", b"aborted-c"))
    env.txn(1, (b"k", b"committed-k"))
    env.end(1, commit=True)
    abort = env.end(2, commit=False)
    env.filler(30)
    env.log.roll()
    env.plain(b"tail", b"t")
    before = read_committed(env)
    assert before == {
        b"k": b"committed-k",
        b"a": b"committed-a",
        b"b": b"committed-b",
        b"filler": b"f29",
        b"tail": b"t",
    }
    env.clean()
    rows = env.rows()
    assert (b"a", b"aborted-a") not in [(k, v) for _, k, v in rows]
    assert (b"c", b"aborted-c") not in [(k, v) for _, k, v in rows]
    assert [(k, v) for _, k, v in rows if k in (b"a", b"b", b"k")] == [
        (b"a", b"committed-a"),
        (b"b", b"committed-b"),
        (b"k", b"committed-k"),
    ]
    assert read_committed(env) == before
    # Both markers stay: each transaction had batches in this round; the ABORT entry
    # moved with its marker into the cleaned segment's .txnindex.
    assert [(o, pid) for o, pid, _, _ in env.markers()] == [(abort - 1, 1), (abort, 2)]
    assert all(not attributes & DELETE_HORIZON for _, _, attributes, _ in env.markers())
    assert [t for ts in env.txn_indexes().values() for t in ts] == [
        AbortedTxn(2, 3, abort, abort + 1)
    ]


def test_markers_get_the_delete_horizon_then_go(env: TxnEnv) -> None:
    env.txn(1, (b"a", b"1"))
    commit = env.end(1, commit=True)
    env.txn(2, (b"b", b"1"))
    abort = env.end(2, commit=False)
    env.plain(b"a", b"2")  # supersedes the committed write
    env.filler(30)
    env.log.roll()
    env.plain(b"tail", b"t")

    env.clean()  # round 1: the producers are active: their last batches stay, empty
    assert [(o, a & DELETE_HORIZON) for o, _, a, _ in env.markers()] == [(commit, 0), (abort, 0)]
    assert [h[0] for h, recs in env.batches() if h[9] in (1, 2) and not recs] == [0, 2]
    assert len(env.txn_indexes()) == 1

    env.expire_producers()
    env.clean()  # round 2: the empty batches go; their markers were still needed
    assert [(o, a & DELETE_HORIZON) for o, _, a, _ in env.markers()] == [(commit, 0), (abort, 0)]
    assert [h[0] for h, _ in env.batches() if h[9] in (1, 2)] == [commit, abort]
    assert len(env.txn_indexes()) == 1

    env.clock.sleep(1000)
    env.clean()  # round 3: nothing of either transaction left: the horizon is stamped
    now = env.clock.milliseconds()
    assert [(o, a & DELETE_HORIZON, ts) for o, _, a, ts in env.markers()] == [
        (commit, DELETE_HORIZON, now + DAY),
        (abort, DELETE_HORIZON, now + DAY),
    ]
    assert env.txn_indexes() == {}  # the ABORT entry is not carried any more

    env.clock.sleep(DAY - 1)
    env.clean()  # before the horizon: kept as they are
    assert [(o, ts) for o, _, _, ts in env.markers()] == [(commit, now + DAY), (abort, now + DAY)]

    env.clock.sleep(1)
    env.clean()  # at the horizon: removed
    assert env.markers() == []
    assert [h for h, _ in env.batches() if h[9] in (1, 2)] == []
    assert read_committed(env) == {b"a": b"2", b"filler": b"f29", b"tail": b"t"}


def test_abort_marker_stays_while_its_batches_are_kept_empty(env: TxnEnv) -> None:
    """An aborted batch holding its producer's last sequence survives as an empty batch;
    as long as it is there, its ABORT marker and ``.txnindex`` entry stay too, round
    after round."""
    env.txn(3, (b"x", b"aborted"))
    abort = env.end(3, commit=False)
    env.filler(30)
    env.log.roll()
    env.plain(b"tail", b"t")
    cleaner = LogCleaner(
        lambda: [env.log], CleanerConfig(), env.clock, active_producers=lambda _: {3: 0}
    )
    for _ in range(3):
        assert cleaner.clean(env.log, force=True) is not None
        (header, records), (marker_header, marker_records) = env.batches()[:2]
        assert (header[0], header[6], header[9], header[12], records) == (0, 0, 3, 0, [])
        assert (marker_header[0], marker_header[5] & DELETE_HORIZON) == (abort, 0)
        assert len(marker_records) == 1
        assert env.txn_indexes() == {0: [AbortedTxn(3, 0, abort, abort + 1)]}
        assert read_committed(env) == {b"filler": b"f29", b"tail": b"t"}
        env.clock.sleep(2 * DAY)


def test_never_past_the_first_unstable_offset(env: TxnEnv) -> None:
    """An open transaction's records are not decided: the cleaner stops before them (the
    first unstable offset bounds the round), and goes on once it is decided."""
    env.filler(10, b"a")
    open_first = env.txn(7, (b"a", b"open"), (b"x", b"open"))
    env.filler(40, b"a")
    env.log.roll()
    env.plain(b"tail", b"t")
    assert env.log.first_unstable_offset == open_first
    stats = env.clean()
    assert stats.end_offset <= open_first
    assert (open_first, b"a", b"open") in env.rows()
    abort = env.end(7, commit=False)
    env.log.roll()
    env.plain(b"tail", b"t")
    assert env.log.first_unstable_offset is None
    stats = env.clean()
    assert stats.end_offset == abort + 1
    assert not any(v == b"open" for _, _, v in env.rows())
    assert read_committed(env) == {b"a": b"f39", b"tail": b"t"}


def test_a_marker_that_bumped_the_epoch_is_kept(env: TxnEnv) -> None:
    """A producer whose state holds no data batch (its epoch bumped by an ABORT of a
    timed-out transaction) keeps that marker as an empty batch once the marker may go:
    the epoch must survive for fencing (Kafka's ``lastRecordsOfActiveProducers``, case
    3); once the producer expired, the marker goes."""
    env.txn(4, (b"a", b"1"))
    marker = env.end(4, commit=False, bump=True)
    env.filler(30)
    env.log.roll()
    env.plain(b"tail", b"t")
    entry = env.log.producer_state.active_producers[4]  # type: ignore[union-attr]
    assert (entry.last_data_offset, entry.producer_epoch) == (-1, 1)
    for _ in range(3):
        env.clean()
        env.clock.sleep(2 * DAY)
        env.log.producer_state.active_producers[4].last_timestamp = env.clock.milliseconds()  # type: ignore[union-attr]
    kept = [h for h, _ in env.batches() if h[0] == marker]
    # Kafka's empty header: no records, no delete horizon, baseTimestamp -1
    assert [(h[5], h[7], h[9], h[10], h[12]) for h in kept] == [(0x10 | CONTROL, -1, 4, 1, 0)]
    assert env.txn_indexes() == {}
    env.expire_producers()
    env.clean()
    assert [h for h, _ in env.batches() if h[9] == 4] == []


@pytest.mark.parametrize("epoch_known", [True, False])
def test_a_producers_last_marker_keeps_its_epoch(env: TxnEnv, epoch_known: bool) -> None:
    """A producer whose state holds no data batch (only its epoch, bumped by a marker)
    keeps its last marker of that epoch as an empty batch once the marker may go
    (Kafka's ``lastRecordsOfActiveProducers``, case 3); without that, it goes."""
    env.txn(4, (b"a", b"1"))
    marker = env.end(4, commit=True)
    env.plain(b"a", b"2")
    env.filler(30)
    env.log.roll()
    env.plain(b"tail", b"t")
    last = {4: LastRecord(-1, 0 if epoch_known else 9)}
    cleaner = LogCleaner(
        lambda: [env.log], CleanerConfig(), env.clock, active_producers=lambda _: last
    )
    for _ in range(3):
        assert cleaner.clean(env.log, force=True) is not None
        env.clock.sleep(DAY)
    kept = [h for h, _ in env.batches() if h[0] == marker]
    if not epoch_known:
        assert kept == []
        return
    assert len(kept) == 1
    header = kept[0]
    # Kafka's empty header: no records, no delete horizon, baseTimestamp -1
    assert (header[5], header[7], header[9], header[10], header[12]) == (
        0x10 | CONTROL,
        -1,
        4,
        0,
        0,
    )


# ------------------------------------------------------------------------ random histories

Op = tuple[Any, ...]


@st.composite
def histories(draw: st.DrawFn) -> list[Op]:
    """Plain writes, transactional writes of three producers, their COMMIT/ABORT
    markers, rolls and cleaning rounds at advancing times; every transaction ends."""
    ops: list[Op] = []
    open_pids: set[int] = set()
    keys = st.sampled_from([b"a", b"b", b"c", b"d"])
    values = st.none() | st.sampled_from([b"1", b"2", b"3"])
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        kind = draw(st.sampled_from(["plain", "txn", "txn", "end", "roll", "clean"]))
        if kind == "plain":
            ops.append(("plain", draw(keys), draw(values)))
        elif kind == "txn":
            pid = draw(st.sampled_from([1, 2, 3]))
            rows = draw(st.lists(st.tuples(keys, values), min_size=1, max_size=3))
            ops.append(("txn", pid, tuple(rows)))
            open_pids.add(pid)
        elif kind == "end" and open_pids:
            pid = draw(st.sampled_from(sorted(open_pids)))
            ops.append(("end", pid, draw(st.booleans())))
            open_pids.discard(pid)
        elif kind in ("roll", "clean"):
            ops.append((kind, draw(st.sampled_from([0, 1000, DAY]))))
    for pid in sorted(open_pids):
        ops.append(("end", pid, draw(st.booleans())))
    ops.append(("roll", 0))
    ops += [("clean", draw(st.sampled_from([0, DAY, 2 * DAY]))) for _ in range(2)]
    return ops


def run_history(root: Path, backend: ModuleType, ops: list[Op]) -> TxnEnv:
    env = TxnEnv(root, backend, segment_bytes=400)
    for op in ops:
        if op[0] == "plain":
            env.plain(op[1], op[2])
        elif op[0] == "txn":
            env.txn(op[1], *op[2])
        elif op[0] == "end":
            env.end(op[1], op[2])
        elif op[0] == "roll":
            env.clock.sleep(op[1])
            env.log.roll()
        else:
            env.clock.sleep(op[1])
            before = read_committed(env)
            env.cleaner().clean(env.log, force=True)
            # open transactions included: the cleaner never reaches them
            assert read_committed(env) == before
    return env


def segment_files(env: TxnEnv) -> dict[str, bytes]:
    return {
        name: (env.dir / name).read_bytes()
        for name in sorted(os.listdir(env.dir))
        if name.endswith((".log", ".txnindex"))
    }


@settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=histories())
def test_random_histories_agree_and_keep_the_committed_view(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Op]
) -> None:
    """Both backends write the same files, and cleaning never changes what a
    read_committed consumer sees as the latest value of each key."""
    root = tmp_path_factory.mktemp("history")
    native = run_history(root / "native", load_backend("native"), ops)
    pure = run_history(root / "pure", load_backend("pure"), ops)
    assert segment_files(native) == segment_files(pure)
    assert read_committed(native) == read_committed(pure)
    native.log.close()
    pure.log.close()
