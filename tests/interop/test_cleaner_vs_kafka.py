"""A log compacted by kafkacore's cleaner, read by Apache Kafka's ``DumpLogSegments``.

kafkacore writes a compacted partition (every codec, tombstones, keys rewritten across
segments, an idempotent producer, a transaction with its COMMIT marker), cleans it twice
(the first round stamps delete horizons on the batches that keep tombstones; the second,
past ``delete.retention.ms``, drops those tombstones and groups the small segments), and
after each round Kafka dumps every segment deeply, verifies the indexes and runs its
start-up index sanity check. Kafka must find every batch valid, report nothing but the
offset gaps compaction leaves, and see exactly the records kafkacore says survive, with
their offsets, keys, values and delete horizons.

Then transactions against Kafka's own cleaner: seeded transactional histories (three
producers, COMMIT and ABORT markers, epoch bumps, an open transaction) written through
kafkacore's ``Log``, copied, and cleaned round after round by kafkacore's cleaner and by
Kafka's ``Cleaner.doClean`` on a ``UnifiedLog`` (java/CleanTxn.java): the same end
offsets, and byte-identical ``.log`` and ``.txnindex`` files.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import AppendOrigin, Log, MockScheduler, MockTime, TopicPartition
from kafkacore.log.cleaner import CleanerConfig, LogCleaner
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.native import load_backend

native_backend = load_backend("native")

pytestmark = pytest.mark.interop

T0 = 1_700_000_000_000
RETENTION = 60_000
TP = TopicPartition("compacted", 0)
CODECS = (0, 1, 2, 3, 4)
RECORD_LINE = re.compile(rb"^\| offset: (\d+) ")
FIELD = re.compile(rb"(\w+): (\S*)")

Row = tuple[int, bytes | None, bytes | None]


def write_log(root: Path, backend: ModuleType) -> tuple[Log, MockTime, list[Row]]:
    clock = MockTime(T0)
    config = LogConfig(
        {
            "cleanup.policy": "compact",
            "internal.segment.bytes": 2500,
            "delete.retention.ms": RETENTION,
            "file.delete.delay.ms": 0,
            "index.interval.bytes": 300,
        }
    )
    log = Log(root / str(TP), config, backend=backend, time=clock, scheduler=MockScheduler(clock))
    written: list[Row] = []

    def append(records: list[tuple[bytes | None, bytes | None]], **opts: Any) -> None:
        origin = AppendOrigin.COORDINATOR if opts.get("control") else AppendOrigin.CLIENT
        batch = backend.build_batch(
            [
                (i, clock.milliseconds() + i, k, v, [("h", b"x")])
                for i, (k, v) in enumerate(records)
            ],
            **opts,
        )
        info = log.append_as_leader(batch, leader_epoch=3, origin=origin)
        written.extend(
            (info.first_offset + i, k, v)
            for i, (k, v) in enumerate(records)
            if not opts.get("control")
        )

    for round_ in range(6):
        for codec in CODECS:
            keys = [f"k{(round_ * 7 + codec * 3 + j) % 13}".encode() for j in range(4)]
            values: list[bytes | None] = [f"v{round_}-{codec}-{j}".encode() for j in range(4)]
            if (round_ + codec) % 5 == 0:  # a key written, then deleted
                keys[1] = f"gone-{round_}-{codec}".encode()
                append([(keys[1], b"alive")], compression=codec)
                values[1] = None
            append(list(zip(keys, values, strict=True)), compression=codec)
            clock.sleep(10)
        append(
            [(b"idem", f"i{round_}".encode())],
            producer_id=77,
            producer_epoch=1,
            base_sequence=round_,
        )
    append(
        [(b"txn-a", b"1"), (b"txn-b", b"2")],
        producer_id=88,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )
    commit = (struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 5))
    append([commit], producer_id=88, producer_epoch=0, transactional=True, control=True)
    log.roll()
    append([(b"k0", b"tail")])  # the active segment: never cleaned
    return log, clock, written


def reopen(log: Log, backend: ModuleType, clock: MockTime) -> Log:
    return Log(log.dir, log.config, backend=backend, time=clock, scheduler=MockScheduler(clock))


def kafkacore_view(
    log: Log, backend: ModuleType
) -> list[tuple[int, bytes | None, bytes | None, bool]]:
    """(offset, key, value, batch has a delete horizon) of every record, segment by segment."""
    rows = []
    for segment in log.segments:
        data = segment.segment.read_bytes(0, segment.size)
        pos = 0
        while pos < len(data):
            header = backend.batch_header(data, pos)
            horizon = bool(header[5] & 0x40)
            rows += [(r[0], r[2], r[3], horizon) for r in backend.batch_records(data, pos)]
            pos += header[1] + 12
    return rows


def dump(java: Any, log: Log) -> dict[str, Any]:
    directory = Path(log.dir)
    logs = sorted(directory.glob("*.log"))
    indexes = sorted([*directory.glob("*.index"), *directory.glob("*.timeindex")])
    cls = "org.apache.kafka.tools.DumpLogSegments"
    deep, verify, sanity = java.run_all(
        [
            (cls, "--deep-iteration", "--files", ",".join(map(str, logs))),
            (cls, "--verify-index-only", "--files", ",".join(map(str, indexes))),
            (cls, "--index-sanity-check", "--files", ",".join(map(str, indexes))),
        ]
    )
    for result in (deep, verify, sanity):
        result.check()
    batches: list[dict[str, str]] = []
    offsets: list[int] = []
    for line in deep.stdout.split(b"\n"):
        if line.startswith(b"baseOffset: "):
            batches.append({k.decode(): v.decode() for k, v in FIELD.findall(line)})
        elif m := RECORD_LINE.match(line):
            offsets.append(int(m.group(1)))
    return {
        "batches": batches,
        "offsets": offsets,
        "deep_stdout": deep.stdout.decode(),
        "deep_stderr": deep.stderr.decode(),
        "verify": (verify.stdout.decode(), verify.stderr.decode()),
        "sanity": (sanity.stdout.decode(), sanity.stderr.decode()),
        "indexes": indexes,
    }


def check_kafka_agrees(view: dict[str, Any], rows: list[Any]) -> None:
    assert view["offsets"] == [r[0] for r in rows]
    assert all(b["isvalid"] == "true" for b in view["batches"])
    assert "invalid bytes" not in view["deep_stdout"]
    # The only complaint: the offset gaps compaction leaves.
    for line in view["deep_stderr"].splitlines():
        assert line.startswith(("Non-consecutive offsets in ", "  ")), line
        if line.startswith("  "):
            assert re.fullmatch(r"  -?\d+ is followed by \d+", line), line
    verify_out, verify_err = view["verify"]
    assert verify_err == "" and "Mismatches" not in verify_out
    sanity_out, sanity_err = view["sanity"]
    assert sanity_err == ""
    for index in view["indexes"]:
        assert (
            f"{index} passed sanity check." in sanity_out or f"{index} is empty." in sanity_out
        ), index


def test_kafka_reads_the_compacted_log(
    backend: ModuleType, backend_name: str, java: Any, tmp_path: Path
) -> None:
    log, clock, written = write_log(tmp_path / backend_name, backend)

    def latest_before(end: int) -> dict[bytes | None, int]:
        return {key: offset for offset, key, _ in written if offset < end}

    logs = [log]
    cleaner = LogCleaner(lambda: logs, CleanerConfig(), clock)

    first = cleaner.clean(log)
    assert first is not None and first.end_offset == log.active_segment.base_offset
    rows = kafkacore_view(log, backend)
    # Below the end offset only the latest record of each key; tombstones kept, with a
    # delete horizon on their batches; the COMMIT marker kept.
    latest = latest_before(first.end_offset)
    cleaned = [r for r in rows if r[0] < first.end_offset]
    data = [r for r in cleaned if r[1] in latest]
    assert sorted(o for o, _, _, _ in data) == sorted(latest.values())
    assert all(latest[k] == o for o, k, _, _ in data)
    tombstones = [r for r in cleaned if r[2] is None]
    assert tombstones and all(r[3] for r in tombstones)
    log.close()  # trims the active segment's preallocated indexes, as Kafka's tools expect
    view = dump(java, log)
    check_kafka_agrees(view, rows)
    log = reopen(log, backend, clock)
    logs[0] = log
    horizon = f"OptionalLong[{clock.milliseconds() + RETENTION}]"
    assert any(b["deleteHorizonMs"] == horizon for b in view["batches"])
    assert any(b["isControl"] == "true" for b in view["batches"])

    clock.sleep(RETENTION)
    segments_before = log.number_of_segments
    second = cleaner.clean(log, force=True)
    assert second is not None and any(len(g) > 1 for g in second.groups)
    assert log.number_of_segments < segments_before
    rows = kafkacore_view(log, backend)
    latest = latest_before(second.end_offset)
    survivors = {o for o, k, v in written if latest.get(k) == o and v is not None}
    assert {r[0] for r in rows if r[0] < second.end_offset and r[1] in latest} == survivors
    assert not [r for r in rows if r[0] < second.end_offset and r[2] is None]
    log.close()
    check_kafka_agrees(dump(java, log), rows)


# ---------------------------------------------------------------- transactions, both cleaners

DAY = 86_400_000


def write_transactional_history(
    directory: Path, seed: int, config: dict[str, Any], compress: bool
) -> tuple[Log, MockTime]:
    """A seeded history of plain writes, transactions of three producers (every codec
    when ``compress``), COMMIT/ABORT markers (some bumping the epoch), rolls; one
    transaction may be left open. Closed (snapshot written)."""
    rng = random.Random(seed)
    clock = MockTime(T0)
    directory.mkdir(parents=True)
    log = Log(
        directory,
        LogConfig(config),
        backend=native_backend,
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(directory),
    )
    codecs = [0, 1, 2, 3, 4] if compress else [0]
    epochs = {1: 0, 2: 0, 3: 0}
    seqs = {1: 0, 2: 0, 3: 0}
    open_pids: set[int] = set()
    keys = [b"a", b"b", b"c", b"d", b"e"]
    for _ in range(rng.randint(25, 45)):
        clock.sleep(rng.choice([1, 10, 1000]))
        kind = rng.choice(["plain", "txn", "txn", "txn", "end", "end", "roll"])
        if kind == "plain":
            value = rng.choice([None, b"p1", b"p2"])
            batch = native_backend.build_batch(
                [(0, clock.milliseconds(), rng.choice(keys), value, [])]
            )
            log.append_as_leader(batch, leader_epoch=1)
        elif kind == "txn":
            pid = rng.choice([1, 2, 3])
            rows = [
                (
                    i,
                    clock.milliseconds(),
                    rng.choice(keys),
                    rng.choice([None, b"v%d" % pid, b"w"]),
                    [],
                )
                for i in range(rng.randint(1, 3))
            ]
            batch = native_backend.build_batch(
                rows,
                producer_id=pid,
                producer_epoch=epochs[pid],
                base_sequence=seqs[pid],
                transactional=True,
                compression=rng.choice(codecs),
            )
            log.append_as_leader(batch, leader_epoch=1)
            seqs[pid] += len(rows)
            open_pids.add(pid)
        elif kind == "end" and open_pids:
            pid = rng.choice(sorted(open_pids))
            commit = rng.random() < 0.5
            if not commit and rng.random() < 0.3:
                epochs[pid] += 1  # a timed-out transaction: aborted with the next epoch
                seqs[pid] = 0
            log.append_txn_marker(pid, epochs[pid], 2, commit, leader_epoch=1)
            log.update_high_watermark(log.log_end_offset)
            open_pids.discard(pid)
        elif kind == "roll":
            log.roll()
    for pid in sorted(open_pids)[1:]:  # at most one transaction stays open
        log.append_txn_marker(pid, epochs[pid], 2, rng.random() < 0.5, leader_epoch=1)
    log.update_high_watermark(log.log_end_offset)
    log.roll()
    tail = native_backend.build_batch([(0, clock.milliseconds(), b"tail", b"t", [])])
    log.append_as_leader(tail, leader_epoch=1)
    log.close()
    return log, clock


TXN_TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "internal.segment.bytes": 600,
    "delete.retention.ms": DAY,
    "file.delete.delay.ms": 0,
}


class _NoCheckpoints:
    """Every round from offset 0, as Kafka's doClean(LogToClean(log, 0, ...)) is run."""

    def read_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        return {}

    def update_cleaner_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        return None


def _batches_of(files: dict[str, bytes]) -> dict[str, Any]:
    """The files with each ``.log`` as its batches' headers (length and CRC aside) and
    records: what two cleaners agree on when codec outputs may differ."""
    out: dict[str, Any] = {}
    for name, data in files.items():
        if not name.endswith(".log"):
            out[name] = data
            continue
        batches, pos = [], 0
        while pos < len(data):
            header = native_backend.batch_header(data, pos)
            fields = header[:1] + header[2:4] + header[5:]
            batches.append((fields, native_backend.batch_records(data, pos)))
            pos += header[1] + 12
        out[name] = batches
    return out


def _segment_files(directory: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.iterdir())
        if p.suffix in (".log", ".txnindex") and p.stat().st_size > 0
    }


def test_transactions_cleaned_as_kafkas_cleaner_cleans_them(java: Any, tmp_path: Path) -> None:
    """The same transactional partitions, cleaned round after round (the first at once,
    the next after 1 s, then past ``delete.retention.ms`` twice) by kafkacore's cleaner
    and by Kafka's own (``Cleaner.doClean`` on a ``UnifiedLog``, java/CleanTxn.java):
    the ``.log`` and ``.txnindex`` files must be identical after the last round (for the
    compressed histories: the same batches and records, codec outputs aside), and the
    rounds must end at the same offsets."""
    specs = []
    ours_dirs = []
    for seed in range(9):
        compress = seed >= 6  # one group per round: compressed sizes may differ
        config = {**TXN_TOPIC_CONFIG, **({"internal.segment.bytes": 100_000} if compress else {})}
        ours_dir = tmp_path / "ours" / f"txn-{seed}"
        log, clock = write_transactional_history(ours_dir, seed, config, compress)
        kafka_dir = tmp_path / "kafka" / f"txn-{seed}"
        shutil.copytree(ours_dir, kafka_dir)
        now = clock.milliseconds()
        times = [now, now + 1000, now + DAY + 2000, now + 2 * DAY + 3000]
        words = " ".join(f"{k}={v}" for k, v in config.items())
        specs.append(f"{kafka_dir} {log.log_end_offset} {now} {','.join(map(str, times))} {words}")
        ours_dirs.append((ours_dir, times, config, compress))
    spec_file = tmp_path / "spec.txt"
    spec_file.write_text("\n".join(specs) + "\n")
    result = java.run("CleanTxn", str(spec_file)).check()
    kafka_ends = {
        line.split()[0]: [int(x) for x in line.split()[1:]]
        for line in result.stdout.decode().splitlines()
        if line.startswith("txn-")
    }
    seen = dict.fromkeys(
        ["txnindex", "stamped marker", "empty marker", "empty data batch", "compressed batch"],
        False,
    )
    for ours_dir, times, config, compress in ours_dirs:
        clock = MockTime(times[0])
        log = Log(
            ours_dir,
            LogConfig(config),
            backend=native_backend,
            time=clock,
            scheduler=MockScheduler(clock),
            producer_state=ProducerStateManager(ours_dir),
        )
        log.update_high_watermark(log.log_end_offset)
        cleaner = LogCleaner(
            lambda log=log: [log], CleanerConfig(), clock, checkpoints=_NoCheckpoints()
        )
        ends = []
        for t in times:
            clock.sleep(t - clock.milliseconds())
            stats = cleaner.clean(log, force=True)
            assert stats is not None
            ends.append(stats.end_offset)
        log.close()
        assert ends == kafka_ends[ours_dir.name], ours_dir.name
        kafka_dir = tmp_path / "kafka" / ours_dir.name
        files = _segment_files(ours_dir)
        if compress:
            assert _batches_of(files) == _batches_of(_segment_files(kafka_dir)), ours_dir.name
        else:
            assert files == _segment_files(kafka_dir), ours_dir.name
        for name, data in files.items():
            seen["txnindex"] |= name.endswith(".txnindex")
            pos = 0
            while name.endswith(".log") and pos < len(data):
                header = native_backend.batch_header(data, pos)
                control, horizon = header[5] & 0x20, header[5] & 0x40
                seen["stamped marker"] |= bool(control and horizon)
                seen["empty marker"] |= bool(control and header[12] == 0)
                seen["empty data batch"] |= bool(not control and header[12] == 0)
                seen["compressed batch"] |= bool(header[5] & 0x07)
                pos += header[1] + 12
    # what the histories exercise, in kafkacore's files as in Kafka's
    assert all(seen.values()), seen
