"""Loading a partition directory (Kafka's ``LogLoader``) over both backends: the leftovers
of an interrupted compaction swap at each of its crash points, ``.deleted`` files, the
shallow next-offset walk of ``.swap`` files, recovery progress and ``-delete``
directories; leader epochs across a crash. Plain reopen/recovery cases are in
``test_log.py``.

The cleaner's swap, as Kafka's ``LocalLog.replaceSegments`` does it: write
``<base>.log.cleaned`` (+ indexes), rename them ``.cleaned`` -> ``.swap``, rename the old
segments' files to ``.deleted``, rename ``.swap`` -> no suffix. ``swap_state`` builds the
directory as a crash left it after any number of those renames.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.errors import CorruptRecordError
from kafkacore.log import (
    EpochEntry,
    LeaderEpochCheckpointFile,
    Log,
    MockScheduler,
    MockTime,
    recovery_progress,
)
from kafkacore.log.loader import LogLoader, read_next_offset
from kafkacore.log.segments import LogSegment

T0 = 1_700_000_000_000
KEYS = [b"a", b"b", b"c", b"d"]


def config(**overrides: Any) -> LogConfig:
    return LogConfig({"internal.segment.bytes": 200, "index.interval.bytes": 1, **overrides})


def open_log(path: Path, backend: ModuleType, **kwargs: Any) -> Log:
    time = MockTime(T0)
    return Log(path, config(), backend=backend, time=time, scheduler=MockScheduler(time), **kwargs)


def record_batch(backend: ModuleType, offset: int, key: bytes, value: bytes) -> bytes:
    return bytes(backend.build_batch([(offset, T0 + offset, key, value, [])]))


def fill(path: Path, backend: ModuleType, count: int = 8) -> list[int]:
    """``count`` one-record batches, keys cycling a b c d, two batches per segment;
    returns the segment base offsets."""
    log = open_log(path, backend)
    for i in range(count):
        log.append_as_leader(record_batch(backend, 0, KEYS[i % 4], b"v%d" % i), 0)
    bases = [s.base_offset for s in log.segments]
    log.close()
    return bases


def records(backend: ModuleType, log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    """``(offset, key, value)`` of every record, read segment after segment."""
    out: list[tuple[int, bytes | None, bytes | None]] = []
    for segment in log.segments:
        data = segment.files.read_bytes(0, segment.size)
        position = 0
        while position < len(data):
            header = backend.batch_header(data, position)
            out.extend((r[0], r[2], r[3]) for r in backend.batch_records(data, position))
            position += 12 + header[1]
    return out


def compacted_segment(
    scratch: Path, backend: ModuleType, base: int, kept: list[tuple[int, bytes, bytes]]
) -> list[Path]:
    """A cleaned segment at ``base`` holding ``kept`` ``(offset, key, value)`` records."""
    scratch.mkdir(exist_ok=True)
    segment = backend.Segment(str(scratch), base, index_interval_bytes=1, max_index_size=4096)
    for offset, key, value in kept:
        segment.append(record_batch(backend, offset, key, value), assign_offsets=False)
    segment.close()
    name = f"{base:020d}"
    return [scratch / (name + kind) for kind in (".log", ".index", ".timeindex")]


KEPT = [(2, b"c", b"v2"), (3, b"d", b"v3")]  # segments 0 and 2 compacted against a later map


def swap_state(
    directory: Path,
    scratch: Path,
    backend: ModuleType,
    renamed_to_swap: int,
    old_deleted: int,
    swapped_in: int,
) -> None:
    """Segments 0 and 2 compacted into one segment at 0, interrupted after
    ``renamed_to_swap`` of its 3 files went ``.cleaned`` -> ``.swap``, ``old_deleted`` of the
    6 old files were renamed ``.deleted``, and ``swapped_in`` files went ``.swap`` -> none."""
    files = compacted_segment(scratch, backend, 0, KEPT)
    for i, source in enumerate(files):
        suffix = ".swap" if i < renamed_to_swap else ".cleaned"
        shutil.move(source, directory / (source.name + suffix))
    old = [
        directory / f"{b:020d}{kind}" for b in (0, 2) for kind in (".log", ".index", ".timeindex")
    ]
    for path in old[:old_deleted]:
        os.replace(path, str(path) + ".deleted")
    for source in files[:swapped_in]:
        os.replace(directory / (source.name + ".swap"), directory / source.name)


def leftovers(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith((".swap", ".cleaned", ".deleted")))


ORIGINAL = [(i, KEYS[i % 4], b"v%d" % i) for i in range(8)]
COMPACTED = [*KEPT, *ORIGINAL[4:]]


@pytest.mark.parametrize(
    ("renamed_to_swap", "old_deleted", "swapped_in", "expected"),
    [
        (0, 0, 0, ORIGINAL),  # only .cleaned files: discarded
        (1, 0, 0, ORIGINAL),  # .log.swap but .index.cleaned: the swap was not complete
        (2, 0, 0, ORIGINAL),
        (3, 0, 0, COMPACTED),  # every file .swap: the swap is durable, completed
        (3, 1, 0, COMPACTED),
        (3, 4, 0, COMPACTED),
        (3, 6, 0, COMPACTED),
        (3, 6, 1, COMPACTED),  # the .log is in, its indexes are still .swap
        (3, 6, 2, COMPACTED),
        (3, 6, 3, COMPACTED),  # finished, only the .deleted files were left
    ],
)
@pytest.mark.parametrize("clean", [True, False])
def test_interrupted_swap_is_rolled_back_or_completed(
    tmp_path: Path,
    backend: ModuleType,
    renamed_to_swap: int,
    old_deleted: int,
    swapped_in: int,
    expected: list[tuple[int, bytes, bytes]],
    clean: bool,
) -> None:
    directory = tmp_path / "t-0"
    assert fill(directory, backend) == [0, 2, 4, 6]
    swap_state(directory, tmp_path / "scratch", backend, renamed_to_swap, old_deleted, swapped_in)

    log = open_log(directory, backend, recover_from=None if clean else 8)
    assert records(backend, log) == expected
    assert leftovers(directory) == []
    assert log.log_end_offset == 8
    if expected == COMPACTED:
        assert [s.base_offset for s in log.segments] == [0, 4, 6]
        # the index entry names the batch it points at (the second one, at 71 bytes)
        assert log.segments[0].files.offset_index() == [(3, 71)]
        assert log.segments[0].files.translate_offset(3) == (3, 71, 71)
    # appends continue after the swapped-in segments
    assert log.append_as_leader(record_batch(backend, 0, b"e", b"new"), 0).first_offset == 8
    log.close()
    again = open_log(directory, backend)
    assert records(backend, again)[-1] == (8, b"e", b"new")


def test_swap_without_indexes_gets_them_rebuilt(tmp_path: Path, backend: ModuleType) -> None:
    directory = tmp_path / "t-0"
    fill(directory, backend)
    files = compacted_segment(tmp_path / "scratch", backend, 0, KEPT)
    expected_index = backend.Segment(str(tmp_path / "scratch"), 0).offset_index()
    shutil.move(files[0], directory / (files[0].name + ".swap"))  # the log only

    log = open_log(directory, backend)
    assert records(backend, log) == COMPACTED
    assert log.segments[0].files.offset_index() == expected_index
    assert leftovers(directory) == []


def test_kafka_6264_swaps_at_or_above_the_first_cleaned_offset_are_dropped(
    tmp_path: Path, backend: ModuleType
) -> None:
    """A split writes several ``.cleaned`` segments and renames them to ``.swap`` one by
    one: a ``.swap`` at or above the smallest remaining ``.cleaned`` offset is incomplete."""
    directory = tmp_path / "t-0"
    fill(directory, backend)
    later = compacted_segment(tmp_path / "s1", backend, 4, [(5, b"b", b"v5")])
    first = compacted_segment(tmp_path / "s2", backend, 0, KEPT)
    for path in later:
        shutil.move(path, directory / (path.name + ".swap"))
    for path in first:
        shutil.move(path, directory / (path.name + ".cleaned"))

    log = open_log(directory, backend)
    assert records(backend, log) == ORIGINAL
    assert leftovers(directory) == []

    # the other way round: the swap below the first .cleaned offset is complete
    log.close()
    below = compacted_segment(tmp_path / "s3", backend, 0, KEPT)
    above = compacted_segment(tmp_path / "s4", backend, 4, [(5, b"b", b"v5")])
    for path in below:
        shutil.move(path, directory / (path.name + ".swap"))
    for path in above:
        shutil.move(path, directory / (path.name + ".cleaned"))
    log = open_log(directory, backend)
    assert records(backend, log) == COMPACTED
    assert leftovers(directory) == []


def test_deleted_files_are_removed(tmp_path: Path, backend: ModuleType) -> None:
    directory = tmp_path / "t-0"
    fill(directory, backend)
    (directory / "00000000000000000002.log.deleted").write_bytes(b"stale")
    (directory / "00000000000000000099.timeindex.deleted").write_bytes(b"stale")
    log = open_log(directory, backend)
    assert leftovers(directory) == [] and records(backend, log) == ORIGINAL


# -- the shallow walk of swap files ------------------------------------------------------------


def test_read_next_offset_walks_whole_batches(tmp_path: Path, backend: ModuleType) -> None:
    files = compacted_segment(tmp_path, backend, 10, [(10, b"a", b"x"), (15, b"b", b"y")])
    log_path = str(files[0])
    assert read_next_offset(log_path, 10) == 16
    assert read_next_offset(log_path, 10, str(files[1])) == 16
    multi = bytes(backend.build_batch([(16, T0, b"k", b"v", []), (19, T0, b"k", b"v", [])]))
    with open(log_path, "ab") as f:
        f.write(multi)
        f.write(multi[:30])  # a torn tail is not a batch
    assert read_next_offset(log_path, 10) == 20
    # an index entry that does not name the batch at its position is ignored
    bogus = tmp_path / "bogus.index"
    bogus.write_bytes((3).to_bytes(4, "big") + (0).to_bytes(4, "big"))
    assert read_next_offset(log_path, 10, str(bogus)) == 20
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert read_next_offset(str(empty), 7) == 7


def test_read_next_offset_of_legacy_messages(tmp_path: Path, backend: ModuleType) -> None:
    path = tmp_path / "legacy.log"
    data = backend.build_legacy([(4, T0, b"k", b"v", []), (5, T0, b"k", b"v", [])], 1)
    path.write_bytes(bytes(data))
    assert read_next_offset(str(path), 4) == 6


# -- recovery progress, -delete directories ------------------------------------------------------


def test_recovery_reports_progress(tmp_path: Path, backend: ModuleType) -> None:
    directory = tmp_path / "t-0"
    fill(directory, backend)
    seen: list[tuple[int, int]] = []
    with recovery_progress(lambda done, total: seen.append((done, total))):
        open_log(directory, backend, recover_from=3).close()
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]  # segments 2, 4 and 6 hold offsets >= 3
    seen.clear()
    open_log(directory, backend, recover_from=3).close()  # outside the block: log lines
    assert seen == []


def test_recovery_progress_log_lines(
    tmp_path: Path, backend: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "orders-3"
    fill(directory, backend)
    with caplog.at_level(logging.INFO, logger="kafkacore.log"):
        open_log(directory, backend, recover_from=0).close()
    lines = [r.getMessage() for r in caplog.records if "ecover" in r.getMessage()]
    assert lines == [
        "Recovering segment 1/4 of orders-3 (0%)",
        "Recovering segment 2/4 of orders-3 (25%)",
        "Recovering segment 3/4 of orders-3 (50%)",
        "Recovering segment 4/4 of orders-3 (75%)",
        "Recovered 4 segments of orders-3 (100%)",
    ]


def test_a_directory_being_deleted_is_not_recovered(tmp_path: Path, backend: ModuleType) -> None:
    directory = tmp_path / "t-0.0123456789abcdef0123456789abcdef-delete"
    fill(directory, backend)
    last = directory / "00000000000000000006.log"
    with open(last, "ab") as f:
        f.write(b"\x00" * 40)  # garbage a recovery would cut
    size = last.stat().st_size
    log = open_log(directory, backend, recover_from=0)
    assert last.stat().st_size == size and log.log_end_offset == 8
    log.close()


# -- leader epochs across a crash ------------------------------------------------------------


def test_an_epoch_is_recorded_before_its_batch_is_written(
    tmp_path: Path, backend: ModuleType
) -> None:
    """As Kafka's ``UnifiedLog.append``: a crash between the two leaves an epoch entry past
    the log end (dropped on load), never a batch whose epoch the cache lacks. A write that
    fails takes its entry back."""
    directory = tmp_path / "t-0"
    log = open_log(directory, backend)
    log.append_as_leader(record_batch(backend, 0, b"a", b"x"), 3)
    checkpoint = LeaderEpochCheckpointFile.in_dir(str(directory))
    on_disk_at_write: list[list[EpochEntry]] = []

    class Spy:
        """The active segment, noting the epoch checkpoint when a batch is written."""

        def __init__(self, segment: Any) -> None:
            self._segment = segment

        def __getattr__(self, name: str) -> Any:
            return getattr(self._segment, name)

        def append(self, *args: Any, **kwargs: Any) -> Any:
            on_disk_at_write.append(checkpoint.read())
            return self._segment.append(*args, **kwargs)

    active = log.active_segment
    active.files = Spy(active.files)  # type: ignore[assignment]
    log.append_as_leader(record_batch(backend, 0, b"b", b"y"), 4)
    assert on_disk_at_write == [[EpochEntry(3, 0), EpochEntry(4, 1)]]

    corrupt = bytearray(record_batch(backend, 0, b"c", b"z"))
    corrupt[-1] ^= 0xFF  # the CRC no longer matches: the segment refuses it
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(bytes(corrupt), 5)
    assert log.leader_epoch_cache.entries() == [EpochEntry(3, 0), EpochEntry(4, 1)]
    assert checkpoint.read() == [EpochEntry(3, 0), EpochEntry(4, 1)]
    active.files = active.files._segment  # type: ignore[attr-defined]
    log.close()

    # what a kill between the epoch checkpoint and the write leaves behind
    checkpoint.write([EpochEntry(3, 0), EpochEntry(4, 1), EpochEntry(5, 2)])
    again = open_log(directory, backend, recover_from=0)
    assert again.leader_epoch_cache.entries() == [EpochEntry(3, 0), EpochEntry(4, 1)]


def test_a_crash_image_recovers_the_active_segment_once(
    tmp_path: Path, backend: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """The active segment's index is preallocated (zero entries at its end) while the log
    is open: after a crash it is left to the recovery of unflushed segments instead of
    failing the sanity check and being rebuilt twice."""
    live = tmp_path / "live" / "t-0"
    log = open_log(live, backend)
    for i in range(8):
        log.append_as_leader(record_batch(backend, 0, KEYS[i % 4], b"v%d" % i), 0)
    crashed = tmp_path / "crashed" / "t-0"
    shutil.copytree(live, crashed)  # the files as a SIGKILL leaves them
    log.close()
    assert (crashed / "00000000000000000006.index").stat().st_size > 8  # preallocated
    seen: list[tuple[int, int]] = []
    with (
        caplog.at_level(logging.WARNING, logger="kafkacore.log"),
        recovery_progress(lambda done, total: seen.append((done, total))),
    ):
        again = open_log(crashed, backend, recover_from=6)
    assert seen == [(0, 1), (1, 1)]
    assert not [r for r in caplog.records if "corrupted index" in r.getMessage()]
    assert records(backend, again) == ORIGINAL


# -- index sizes: only the active segment is preallocated ------------------------------------

MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes (the default)

# A process that loads the log after an unclean shutdown and is SIGKILLed when it starts
# recovering the first unflushed segment: every segment is open at that point.
_KILLED_IN_RECOVERY = """
import os, signal, sys
from kafkacore.config import LogConfig
from kafkacore.log import Log, MockScheduler, MockTime
from kafkacore.log.loader import LogLoader
from kafkacore.native import load_backend

def killed(self, segment):
    os.kill(os.getpid(), signal.SIGKILL)

LogLoader.recover_segment = killed
directory, backend, recover_from = sys.argv[1], sys.argv[2], int(sys.argv[3])
time = MockTime(0)
config = LogConfig({"internal.segment.bytes": 200, "index.interval.bytes": 1})
Log(directory, config, backend=load_backend(backend), time=time,
    scheduler=MockScheduler(time), recover_from=recover_from)
raise SystemExit("not killed")
"""


def segment_files(directory: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.iterdir())
        if p.suffix in (".log", ".index", ".timeindex")
    }


def index_sizes(segment: Any) -> tuple[int, int]:
    return (
        os.path.getsize(segment.files.index_path),
        os.path.getsize(segment.files.time_index_path),
    )


def test_a_crash_while_loading_leaves_flushed_segments_intact(
    tmp_path: Path,
    backend: ModuleType,
    backend_name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Segments are opened on their indexes as found (trimmed when they were rolled or
    closed): a SIGKILL while the loader holds them all open - here while it recovers the
    unflushed tail - leaves every file as it was, so the next load sanity-checks the
    segments below the recovery point successfully and recovers only the ones past it.
    (Had opening grown every index, each would be zero-padded on disk, fail the check and
    be rebuilt: a slow start after every crash.)"""
    directory = tmp_path / "t-0"
    bases = fill(directory, backend, count=16)  # 8 segments, two batches each
    assert len(bases) == 8
    before = segment_files(directory)
    recover_from = bases[5] + 1  # inside segment 5: segments 5, 6 and 7 are unflushed

    child = subprocess.run(
        [
            sys.executable,
            "-c",
            _KILLED_IN_RECOVERY,
            str(directory),
            backend_name,
            str(recover_from),
        ],
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert segment_files(directory) == before  # opening wrote nothing

    recovered: list[int] = []
    original = LogLoader.recover_segment

    def counting(self: LogLoader, segment: LogSegment) -> int:
        recovered.append(segment.base_offset)
        return original(self, segment)

    monkeypatch.setattr(LogLoader, "recover_segment", counting)
    with caplog.at_level(logging.WARNING, logger="kafkacore.log"):
        log = open_log(directory, backend, recover_from=recover_from)
    assert recovered == bases[5:]
    assert not [r for r in caplog.records if "corrupted index" in r.getMessage()]
    assert [(o, v) for o, _, v in records(backend, log)] == [(i, b"v%d" % i) for i in range(16)]
    after = segment_files(directory)
    flushed = [n for n in before if int(n.split(".")[0]) < bases[5]]
    assert {n: after[n] for n in flushed} == {n: before[n] for n in flushed}
    # the active segment, recovered (trimmed), is grown back for the appends to come
    assert index_sizes(log.active_segment) == (MAX_INDEX_SIZE, MAX_INDEX_SIZE // 12 * 12)
    assert not log.active_segment.files.index_is_full
    for segment in log.segments[:-1]:
        assert index_sizes(segment) == (
            8 * len(segment.files.offset_index()),
            12 * len(segment.files.time_index()),
        )
    log.close()


def test_a_clean_reopen_appends_to_the_active_segment_without_rolling(
    tmp_path: Path, backend: ModuleType
) -> None:
    """Closing trims every index; reopening maps them as found (full) and the loader
    grows the active segment's back (Kafka's ``resizeIndexes``), so the next append does
    not roll a new segment. The other segments keep their trimmed indexes."""
    directory = tmp_path / "t-0"
    settings = {"internal.segment.bytes": 400, "segment.index.bytes": 4096}
    time = MockTime(T0)
    log = Log(directory, config(**settings), backend=backend, time=time)
    for i in range(12):
        log.append_as_leader(record_batch(backend, 0, KEYS[i % 4], b"v%d" % i), 0)
    assert log.number_of_segments > 2
    log.close()
    before = segment_files(directory)
    log = Log(directory, config(**settings), backend=backend, time=time)
    segments = log.number_of_segments
    active = log.active_segment
    assert index_sizes(active) == (4096, 4092)
    assert not active.files.index_is_full
    log.append_as_leader(record_batch(backend, 0, b"k", b"after"), 0)
    assert log.number_of_segments == segments
    assert log.active_segment is active
    after = segment_files(directory)
    inactive = [n for n in before if int(n.split(".")[0]) < active.base_offset]
    assert {n: after[n] for n in inactive} == {n: before[n] for n in inactive}

    # truncating back into an older segment makes it the active one: preallocated too
    first = log.segments[0]
    log.truncate_to(first.base_offset + 1)
    assert log.active_segment is first
    assert index_sizes(first) == (4096, 4092)
    log.append_as_leader(record_batch(backend, 0, b"k", b"again"), 0)
    assert log.number_of_segments == 1
    log.close()
