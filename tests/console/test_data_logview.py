"""The console's log computations (``kafkacore.console.logview``) against ``kafkacore
dump-log`` (and Apache Kafka's ``DumpLogSegments`` on the same files): exact record counts
of a plain, a compacted and a transactional partition, sizes on disk, segment facts,
seeks by offset and timestamp, newest-N, the complete key search (old segments, the
active segment after new appends, after compaction), filters and rendering, and the
"why not deleted / compacted" reports against what the log and the cleaner then do.

The logs are real directories written through :class:`kafkacore.log.Log`; scans run in
the calling thread, except in the test of the worker process."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.config import LogConfig
from kafkacore.console import logview
from kafkacore.console.logview import (
    Budget,
    DirectoryPartition,
    KeyIndex,
    LogPartition,
    RecordFilter,
    ScanCancelled,
    counts,
    keyindex,
)
from kafkacore.log import Log, MockScheduler, MockTime
from kafkacore.log.cleaner import CleanerConfig, LogCleaner, cleanable_offsets
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.native import backend
from kafkacore.tools.dump_log import DumpOptions, dump_files
from support.kafka_jars import JVM_FLAGS
from support.kafka_jars import kafka_libs as fetch_kafka_libs

T0 = 1_700_000_000_000
P_COMMIT, P_ABORT = 1000, 2000


@pytest.fixture(autouse=True)
def in_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KAFKACORE_CONSOLE_SCAN_PROCESS", "0")
    monkeypatch.setenv("KAFKACORE_CONSOLE_KEY_CACHE", str(tmp_path / "key-cache"))
    KeyIndex.forget()


def open_log(path: Path, clock: MockTime, **config: object) -> Log:
    overrides: dict[str, object] = {
        "internal.segment.bytes": 2048,
        "index.interval.bytes": 200,
        "file.delete.delay.ms": 0,
    }
    overrides.update({k.replace("_", "."): v for k, v in config.items()})
    return Log(
        path,
        LogConfig(overrides),
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(path),
    )


def append(log: Log, clock: MockTime, keys: list[bytes], *, value: bytes = b"v" * 40) -> None:
    stamp = clock.milliseconds()
    recs = [(i, stamp + i, k, value + k, [("h", b"x" + k)]) for i, k in enumerate(keys)]
    log.append_as_leader(backend.build_batch(recs), leader_epoch=0)
    clock.sleep(10)


def dump(files: list[str]) -> list[str]:
    out = io.StringIO()
    dump_files(files, DumpOptions(progress=False), out=out, err=io.StringIO())
    return out.getvalue().splitlines()


BATCH_LINE = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*isControl: (\w+)")


def dump_counts(lines: list[str]) -> tuple[int, int, int]:
    """``(data records, control records, batches)`` from dump-log's batch lines."""
    data = control = batches = 0
    for line in lines:
        m = BATCH_LINE.match(line)
        if m:
            batches += 1
            if m.group(4) == "true":
                control += int(m.group(3))
            else:
                data += int(m.group(3))
    return data, control, batches


def log_files(log: Log, suffix: str) -> list[str]:
    return sorted(str(Path(log.dir) / n) for n in os.listdir(log.dir) if n.endswith(suffix))


def consume_all(log: Log) -> list[tuple[int, bytes | None]]:
    source = LogPartition(log)
    got = logview.read_records(source, 0, max_records=1 << 30)
    assert got.complete
    return [(r.offset, r.key) for r in got.records]


# -- plain ------------------------------------------------------------------------------


def test_plain_partition_counts_sizes_segments_and_seeks(tmp_path: Path) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "plain-0", clock)
    written: list[tuple[int, bytes, int]] = []
    for i in range(60):
        keys = [b"k%d" % ((i + j) % 7) for j in range(1 + i % 3)]
        start = log.log_end_offset
        stamp = clock.milliseconds()
        append(log, clock, keys)
        written += [(start + j, k, stamp + j) for j, k in enumerate(keys)]
    assert log.number_of_segments > 4
    source = LogPartition(log)

    counts = logview.partition_counts(source)
    files = ",".join(log_files(log, ".log"))
    cli = subprocess.run(  # the `kafkacore dump-log` command itself, once
        [sys.executable, "-m", "kafkacore.cli", "dump-log", "--files", files],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert cli.stdout.splitlines() == dump(log_files(log, ".log"))
    data, control, batches = dump_counts(cli.stdout.splitlines())
    assert (counts.records, counts.control_records, counts.batches) == (data, control, batches)
    assert counts.records == len(written) == counts.offset_span
    assert counts.aborted_records == 0
    for hw in (written[-2][0], written[-7][0], log.segments[-1].base_offset + 1):
        below = logview.partition_counts(LogPartition(log, high_watermark=hw))
        assert below.records == sum(1 for w in written if w[0] < hw), hw  # mid-batch too

    usage = logview.partition_disk_usage(log.dir)
    assert usage.log_bytes == log.size == sum(os.path.getsize(f) for f in log_files(log, ".log"))
    assert usage.offset_index_bytes == sum(os.path.getsize(f) for f in log_files(log, ".index"))
    assert usage.total_bytes == sum(os.path.getsize(Path(log.dir) / n) for n in os.listdir(log.dir))

    infos = logview.segment_infos(source)
    assert [i.base_offset for i in infos] == [s.base_offset for s in log.segments]
    assert sum(i.records for i in infos) == len(written)
    assert infos[-1].active and not any(i.active for i in infos[:-1])
    for info, index, timeindex in zip(
        infos, log_files(log, ".index"), log_files(log, ".timeindex"), strict=True
    ):
        entries = [line for line in dump([index]) if line.startswith("offset: ")]
        assert info.offset_index_entries == len(entries), index
        time_entries = [line for line in dump([timeindex]) if line.startswith("timestamp: ")]
        assert info.time_index_entries == len(time_entries), timeindex
        mine = [w for w in written if info.base_offset <= w[0] < info.next_offset]
        assert info.records == len(mine)
        assert (info.first_timestamp, info.max_timestamp) == (mine[0][2], mine[-1][2])

    # seek by offset, by timestamp, newest-N
    page = logview.read_records(source, 37, max_records=5)
    assert [r.offset for r in page.records] == [37, 38, 39, 40, 41]
    assert page.next_offset == 42 and not page.complete
    target = written[50]
    assert logview.offset_for_timestamp(source, target[2]) == target[0]
    for query in (T0 - 5, target[2] - 3, target[2] + 4, written[-1][2]):
        first = min(w[0] for w in written if w[2] >= query)
        assert logview.offset_for_timestamp(source, query) == first, query
    assert logview.offset_for_timestamp(source, T0 + 10**9) is None
    newest = logview.newest_records(source, 7)
    assert [r.offset for r in newest.records] == [w[0] for w in written[-7:]]

    # filters and rendering
    f = RecordFilter(key="k3", key_mode="equals")
    hits = logview.read_records(source, 0, max_records=1000, record_filter=f).records
    assert [r.offset for r in hits] == [w[0] for w in written if w[1] == b"k3"]
    f = RecordFilter(header_key="h", header_value="xk5", header_mode="equals")
    hits = logview.read_records(source, 0, max_records=1000, record_filter=f).records
    assert [r.offset for r in hits] == [w[0] for w in written if w[1] == b"k5"]
    f = RecordFilter(value="vk6")
    assert all(r.key == b"k6" for r in logview.read_records(source, 0, record_filter=f).records)
    assert logview.render_bytes(b'{"a": [1]}') == ('{\n  "a": [\n    1\n  ]\n}', "json")
    assert logview.render_bytes(b"caf\xc3\xa9") == ("café", "text")
    assert logview.render_bytes(b"\xff\x00") == ("ff 00", "hex")
    assert logview.render_bytes(b"abc", "hex") == ("61 62 63", "hex")
    assert logview.render_bytes(b"x" * 50, limit=10)[0].endswith("(50 bytes)")

    # the same answers from the directory, read-only, as the Spark source reads it
    log.close()
    directory = DirectoryPartition(str(tmp_path), ("plain", 0))
    again = logview.partition_counts(directory)
    assert (again.records, again.batches) == (counts.records, counts.batches)
    assert [r.offset for r in logview.read_records(directory, 37, max_records=5).records] == [
        37,
        38,
        39,
        40,
        41,
    ]
    assert logview.offset_for_timestamp(directory, target[2]) == target[0]


def test_key_search_is_complete_incremental_and_follows_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "users-0", clock, cleanup_policy="compact")
    for i in range(120):
        append(log, clock, [b"user-%d" % (i % 9), b"user-%d" % ((i * 7) % 13)])
    source = LogPartition(log)
    index = KeyIndex.of(source)
    every = consume_all(log)

    found = index.search(source, b"user-3")
    assert found.complete and found.indexed_bytes == found.total_bytes == log.size
    assert [r.offset for r in found.records] == [o for o, k in every if k == b"user-3"]
    assert found.total == len(found.records) > 10
    for r in found.records[:3]:  # the whole record, as a read by offset gives it
        assert [r] == logview.read_records(source, r.offset, max_records=1).records
    assert found.records[0].offset < log.segments[1].base_offset  # from the oldest segment
    assert index.entries == len(every) and index.memory_bytes >= 8 * index.entries

    # new appends land in the active segment: indexed from where the last scan stopped
    before = index.entries
    append(log, clock, [b"user-3", b"user-new"])
    found = index.search(source, b"user-3")
    assert found.records[-1].offset == log.log_end_offset - 2
    assert index.entries == before + 2
    assert index.search(source, b"user-new").total == 1
    assert index.search(source, b"nobody").total == 0

    # compaction replaces the segments: their entries are rebuilt, only survivors found
    cleaner = LogCleaner(lambda: [log], CleanerConfig(), clock)
    assert cleaner.clean(log) is not None
    survivors = consume_all(log)
    assert len(survivors) < len(every)
    found = index.search(source, b"user-3")
    assert found.complete
    assert [r.offset for r in found.records] == [o for o, k in survivors if k == b"user-3"]

    # a new index (a restarted broker) reads the closed segments' stored runs: only the
    # active segment is scanned again
    scans: list[int] = []
    real_task = keyindex._key_task

    def counted(path: str, *args: object) -> object:
        scans.append(int(os.path.basename(path).split(".")[0]))
        return real_task(path, *args)  # type: ignore[arg-type]

    KeyIndex.forget()
    monkeypatch.setattr(keyindex, "_key_task", counted)
    again = KeyIndex.of(source).search(source, b"user-3")
    assert [r.offset for r in again.records] == [r.offset for r in found.records]
    assert scans == [log.segments[-1].base_offset]
    monkeypatch.setattr(keyindex, "_key_task", real_task)
    index = KeyIndex.of(source)

    # over the memory cap, the least recently searched partition's index goes first
    other = open_log(tmp_path / "other-0", clock)
    append(other, clock, [b"user-3"])
    other_source = LogPartition(other)
    KeyIndex.of(other_source).search(other_source, b"user-3")
    KeyIndex.of(source)  # the first partition is now the most recently used
    monkeypatch.setattr(KeyIndex, "max_memory_bytes", index.memory_bytes)
    KeyIndex.of(source).search(source, b"user-3")
    assert KeyIndex.of(source) is index and KeyIndex.of(other_source).entries == 0

    # a budget that runs out leaves a resumable, incomplete answer
    KeyIndex.forget()
    cancel = Budget()
    cancel.cancel.set()
    partial = KeyIndex.of(source).search(source, b"user-3", budget=cancel)
    assert not partial.complete and partial.stopped


# -- compacted and transactional -------------------------------------------------------------


def test_compacted_counts_are_exact_where_offsets_have_gaps(tmp_path: Path) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "compacted-0", clock, cleanup_policy="compact")
    for i in range(150):
        append(log, clock, [b"key-%d" % (i % 11)])
    cleaner = LogCleaner(lambda: [log], CleanerConfig(), clock)
    assert cleaner.clean(log) is not None
    source = LogPartition(log)
    counts = logview.partition_counts(source)
    data, _control, batches = dump_counts(dump(log_files(log, ".log")))
    assert counts.records == data == len(consume_all(log))
    assert counts.batches == batches
    assert counts.records < counts.offset_span == 150

    # DeleteRecords moves the log start into a segment: counted from it
    cut = consume_all(log)[-5][0]
    log.delete_records_before(cut)
    assert logview.partition_counts(source).records == len(consume_all(log)) == 5

    report = logview.compaction_report(log, checkpoint=None, now_ms=clock.milliseconds())
    offsets = cleanable_offsets(log, None, clock.milliseconds())
    assert report.first_dirty_offset == offsets.first_dirty_offset
    assert report.compacted and report.summary


def write_transactions(log: Log, clock: MockTime) -> tuple[int, int]:
    """P_COMMIT writes 3 batches of 2 and commits; P_ABORT 2 batches of 3 and aborts;
    plain batches between. ``(data records, aborted records)``."""

    def txn(pid: int, seq: int, n: int) -> None:
        recs = [(i, clock.milliseconds(), b"t%d" % i, b"v", []) for i in range(n)]
        batch = backend.build_batch(
            recs, producer_id=pid, producer_epoch=0, base_sequence=seq, transactional=True
        )
        log.append_as_leader(batch, leader_epoch=0)

    txn(P_COMMIT, 0, 2)
    txn(P_ABORT, 0, 3)
    append(log, clock, [b"plain"])
    txn(P_COMMIT, 2, 2)
    txn(P_ABORT, 3, 3)
    txn(P_COMMIT, 4, 2)
    log.append_txn_marker(P_ABORT, 0, 0, False, 0)
    append(log, clock, [b"plain", b"plain2"])
    log.append_txn_marker(P_COMMIT, 0, 0, True, 0)
    return 6 + 6 + 3, 6


def test_transactional_counts_leave_markers_and_aborts_apart(tmp_path: Path) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "txn-0", clock, internal_segment_bytes=300)
    data_records, aborted = write_transactions(log, clock)
    counts = logview.partition_counts(LogPartition(log))
    data, control, batches = dump_counts(dump(log_files(log, ".log")))
    assert (counts.records, counts.control_records, counts.batches) == (data, control, batches)
    assert (counts.records, counts.control_records) == (data_records, 2)
    assert counts.aborted_records == aborted
    assert counts.committed_records == data_records - aborted
    assert counts.offset_span == data_records + 2
    infos = logview.segment_infos(LogPartition(log))
    assert sum(i.txn_index_entries for i in infos) == 1


@pytest.fixture(scope="module")
def kafka_libs() -> Path:
    """Kafka 4.3.1's jars (fetched once by scripts/kafka-jars.sh; the fixture's name marks
    the test ``downloads``)."""
    return fetch_kafka_libs()


@pytest.mark.interop
def test_counts_match_kafkas_dump_log_segments(tmp_path: Path, kafka_libs: Path) -> None:
    """Kafka 4.3.1's DumpLogSegments over the plain, compacted and transactional logs'
    segments, in one JVM: its batch lines give the same counts."""
    clock = MockTime(T0)
    logs = []
    plain = open_log(tmp_path / "plain-0", clock)
    for i in range(30):
        append(plain, clock, [b"k%d" % (i % 5)] * (1 + i % 3))
    logs.append(plain)
    compacted = open_log(tmp_path / "compacted-0", clock, cleanup_policy="compact")
    for i in range(80):
        append(compacted, clock, [b"key-%d" % (i % 7)])
    assert LogCleaner(lambda: [compacted], CleanerConfig(), clock).clean(compacted) is not None
    logs.append(compacted)
    txn = open_log(tmp_path / "txn-0", clock, internal_segment_bytes=300)
    write_transactions(txn, clock)
    logs.append(txn)
    files = [f for log in logs for f in log_files(log, ".log")]
    proc = subprocess.run(
        [
            "java",
            *JVM_FLAGS,
            "-cp",
            f"{kafka_libs}/*",
            "org.apache.kafka.tools.DumpLogSegments",
            "--files",
            ",".join(files),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    per_file: dict[str, list[str]] = {}
    current = ""
    for line in proc.stdout.splitlines():
        if line.startswith("Dumping "):
            current = line.removeprefix("Dumping ")
        per_file.setdefault(current, []).append(line)
    for log in logs:
        kafka = [line for f in log_files(log, ".log") for line in per_file[f]]
        data, control, batches = dump_counts(kafka)
        counts = logview.partition_counts(LogPartition(log))
        assert (counts.records, counts.control_records, counts.batches) == (data, control, batches)


# -- retention, budgets, the worker process, dump-log ---------------------------------------


def test_retention_report_predicts_what_retention_deletes(tmp_path: Path) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "old-0", clock, retention_ms=60_000)
    for i in range(40):
        append(log, clock, [b"k%d" % i])
        if i == 25:
            clock.sleep(120_000)  # the segments before are past retention.ms
    report = logview.retention_report(log, now_ms=clock.milliseconds())
    expected = [r.base_offset for r in report.segments if not r.reasons]
    assert expected and len(expected) < len(report.segments)
    assert report.segments[-1].active and report.segments[-1].reasons
    kept = report.segments[len(expected)]
    assert "retention.ms" in kept.reasons[0] and kept.deletable_at_ms is not None
    assert log.delete_old_segments() == len(expected)
    assert log.log_start_offset == kept.base_offset
    assert "will be deleted" in report.summary


@given(
    batches=st.integers(1, 60),
    old=st.integers(0, 60),
    retention_ms=st.sampled_from([-1, 60_000]),
    retention_bytes=st.sampled_from([-1, 0, 1500, 4000]),
    delete_before=st.integers(0, 70),
    hw_back=st.integers(0, 10),
    compact=st.booleans(),
)
def test_retention_report_is_what_delete_old_segments_deletes(
    tmp_path_factory: pytest.TempPathFactory,
    batches: int,
    old: int,
    retention_ms: int,
    retention_bytes: int,
    delete_before: int,
    hw_back: int,
    compact: bool,
) -> None:
    """The report asks log/retention.py's predicates in the broker's order: the segments it
    calls deletable are exactly the ones ``Log.delete_old_segments`` then deletes, whatever
    the mix of retention.ms, retention.bytes, DeleteRecords and the high watermark."""
    clock = MockTime(T0)
    log = open_log(
        tmp_path_factory.mktemp("r") / "r-0",
        clock,
        retention_ms=retention_ms,
        retention_bytes=retention_bytes,
        cleanup_policy="compact,delete" if compact else "delete",
    )
    for i in range(batches):
        append(log, clock, [b"k%d" % i])
        if i == old:
            clock.sleep(120_000)  # the batches so far are past retention.ms
    log.delete_records_before(min(delete_before, log.log_end_offset))
    hw = max(log.log_start_offset, log.log_end_offset - hw_back)
    report = logview.retention_report(log, high_watermark=hw, now_ms=clock.milliseconds())
    predicted = [r for r in report.segments if not r.reasons]
    assert [r.base_offset for r in predicted] == [
        r.base_offset for r in report.segments[: len(predicted)]
    ]  # a prefix
    assert all(r.reasons for r in report.segments[len(predicted) :])
    assert log.delete_old_segments(high_watermark=hw) == len(predicted)
    if predicted and len(predicted) < len(report.segments):
        assert log.log_start_offset >= report.segments[len(predicted)].base_offset
    log.close()


def test_budgets_cancel_and_the_worker_process_answers_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "w-0", clock)
    for i in range(40):
        append(log, clock, [b"k%d" % (i % 4), b"k%d" % (i % 6)])
    txn = open_log(tmp_path / "t-0", clock, internal_segment_bytes=300)
    write_transactions(txn, clock)
    source, txn_source = LogPartition(log), LogPartition(txn)
    expected = logview.partition_counts(source)
    expected_txn = logview.partition_counts(txn_source)
    only = RecordFilter(value="vk5")
    expected_page = logview.read_records(source, 0, max_records=4, record_filter=only)
    KeyIndex.forget()
    counts._summaries.clear()
    with pytest.raises(ScanCancelled):
        logview.partition_counts(source, Budget(max_bytes=100))
    monkeypatch.setenv("KAFKACORE_CONSOLE_SCAN_PROCESS", "1")
    try:
        assert logview.partition_counts(source) == expected
        assert logview.partition_counts(txn_source) == expected_txn
        assert expected_txn.aborted_records == 6
        page = logview.read_records(source, 0, max_records=4, record_filter=only)
        assert page == expected_page and len(page.records) == 4 and not page.complete
        assert all(r.key == b"k5" for r in page.records)
        found = KeyIndex.of(source).search(source, b"k2")
        assert found.complete and found.total == 10 + 7
        # the scan process killed: the scan in flight stops, the next one gets a new process
        for pid in list(logview.scan_pool()._processes):
            os.kill(pid, signal.SIGKILL)
        counts._summaries.clear()
        with contextlib.suppress(ScanCancelled):
            logview.partition_counts(source)
        assert logview.partition_counts(source) == expected
    finally:
        logview.shutdown_scan_pool()


def test_dump_segment_is_dump_logs_output(tmp_path: Path) -> None:
    clock = MockTime(T0)
    log = open_log(tmp_path / "d-0", clock)
    append(log, clock, [b"a", b"b"])
    path = log_files(log, ".log")[0]
    out, err = logview.dump_segment(path, deep=True)
    expected = io.StringIO()
    dump_files([path], DumpOptions(deep_iteration=True, progress=False), out=expected)
    assert out == expected.getvalue()
    assert "| offset: 1 " in out and not err
