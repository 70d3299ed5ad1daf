"""Retention of the ``delete`` policy (Kafka's ``deleteOldSegments``), over both backends:
by time (record timestamps, else file time), by size, by log start offset, bounded by the
high watermark; the active segment rolled when everything expired; delayed file deletion
on the scheduler."""

from __future__ import annotations

import os
import threading
import time as real_time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.log import Log, MockScheduler, MockTime, ThreadScheduler
from test_log import DAY, T0, bases, log_config, make_batch

OpenLog = Callable[..., Log]


@pytest.fixture
def mock_time() -> MockTime:
    return MockTime(T0)


@pytest.fixture
def scheduler(mock_time: MockTime) -> MockScheduler:
    return MockScheduler(mock_time)


@pytest.fixture
def open_log(
    tmp_path: Path, backend: ModuleType, mock_time: MockTime, scheduler: MockScheduler
) -> OpenLog:
    def _open(**settings: Any) -> Log:
        return Log(
            tmp_path / "topic-0",
            log_config(**settings),
            backend=backend,
            time=mock_time,
            scheduler=scheduler,
        )

    return _open


def one_batch_per_segment(
    open_log: OpenLog, backend: ModuleType, stamps: list[int], **settings: Any
) -> Log:
    batches = [make_batch(backend, ts=ts) for ts in stamps]
    log = open_log(segment_bytes=max(len(b) for b in batches), **settings)
    for b in batches:
        log.append_as_leader(b, 0)
    assert bases(log) == list(range(len(stamps)))
    return log


def deleted_files(tmp_path: Path) -> list[str]:
    return sorted(n for n in os.listdir(tmp_path / "topic-0") if n.endswith(".deleted"))


def test_retention_by_time(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime, tmp_path: Path
) -> None:
    stamps = [T0 - 5000, T0 - 3000, T0 - 500, T0]
    log = one_batch_per_segment(open_log, backend, stamps, retention_ms=1000)
    assert log.delete_old_segments() == 2
    assert bases(log) == [2, 3] and log.log_start_offset == 2
    assert deleted_files(tmp_path) == [
        "00000000000000000000.index.deleted",
        "00000000000000000000.log.deleted",
        "00000000000000000000.timeindex.deleted",
        "00000000000000000001.index.deleted",
        "00000000000000000001.log.deleted",
        "00000000000000000001.timeindex.deleted",
    ]
    mock_time.sleep(59_999)  # file.delete.delay.ms is 60 s
    assert len(deleted_files(tmp_path)) == 6
    mock_time.sleep(1)
    assert deleted_files(tmp_path) == []


def test_everything_expired_rolls_the_active_segment_first(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime
) -> None:
    log = one_batch_per_segment(open_log, backend, [T0 - 10, T0], retention_ms=1000)
    mock_time.sleep(5000)
    assert log.delete_old_segments() == 2
    assert bases(log) == [2] and log.active_segment.size == 0
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)
    assert log.delete_old_segments() == 0  # the empty active segment stays
    assert (
        log.append_as_leader(make_batch(backend, ts=mock_time.milliseconds()), 0).first_offset == 2
    )


def test_retention_by_file_time_without_timestamps(
    open_log: OpenLog, backend: ModuleType, tmp_path: Path
) -> None:
    log = one_batch_per_segment(open_log, backend, [-1, -1, -1], retention_ms=1000)
    for segment, age_ms in zip(log.segments, (5000, 1001, 0), strict=True):
        when_ns = (T0 - age_ms) * 1_000_000
        os.utime(segment.log_path, ns=(when_ns, when_ns))
    assert [s.largest_timestamp() for s in log.segments] == [T0 - 5000, T0 - 1001, T0]
    assert log.delete_old_segments() == 2
    assert bases(log) == [2]


def test_retention_by_time_after_reopen_uses_the_time_index(
    open_log: OpenLog, backend: ModuleType
) -> None:
    log = one_batch_per_segment(open_log, backend, [T0 - 5000, T0 - 4000, T0], retention_ms=1000)
    log.close()
    again = open_log(retention_ms=1000, segment_bytes=1 << 20)
    # the files are younger than the mock clock; only the timestamps make them expire
    assert [s.largest_timestamp() for s in again.segments] == [T0 - 5000, T0 - 4000, T0]
    assert again.delete_old_segments() == 2
    assert bases(again) == [2]


@pytest.mark.parametrize(("extra", "expected"), [(1, 1), (0, 2), (None, 0)])
def test_retention_by_size(
    open_log: OpenLog, backend: ModuleType, extra: int | None, expected: int
) -> None:
    size = len(make_batch(backend, ts=T0))
    retention = -1 if extra is None else 2 * size + extra
    log = one_batch_per_segment(open_log, backend, [T0] * 4, retention_bytes=retention)
    assert log.size == 4 * size
    # oldest segments go while what is left stays at or above retention.bytes
    assert log.delete_old_segments() == expected
    assert bases(log) == list(range(expected, 4))
    assert log.delete_old_segments() == 0


def test_retention_stops_at_the_high_watermark(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime
) -> None:
    log = one_batch_per_segment(open_log, backend, [T0] * 4, retention_ms=1000)
    mock_time.sleep(10_000)
    assert log.delete_old_segments(high_watermark=0) == 0
    assert log.delete_old_segments(high_watermark=2) == 2  # segments wholly below offset 2
    assert bases(log) == [2, 3] and log.log_start_offset == 2
    assert log.delete_old_segments(high_watermark=3) == 1
    assert log.delete_old_segments() == 1  # default: the log end offset
    assert bases(log) == [4]


def test_compacted_topic_only_drops_below_log_start(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime
) -> None:
    log = one_batch_per_segment(
        open_log, backend, [T0] * 3, retention_ms=1000, retention_bytes=1, cleanup_policy="compact"
    )
    mock_time.sleep(DAY)
    assert log.delete_old_segments() == 0
    log.delete_records_before(2)
    assert log.delete_old_segments() == 2 and bases(log) == [2]


def test_compact_and_delete_applies_both(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime
) -> None:
    log = one_batch_per_segment(
        open_log, backend, [T0] * 3, retention_ms=1000, cleanup_policy="compact,delete"
    )
    mock_time.sleep(DAY)
    assert log.delete_old_segments() == 3 and bases(log) == [3]


def test_delete_with_a_thread_scheduler(backend: ModuleType, tmp_path: Path) -> None:
    scheduler = ThreadScheduler(name="test-log-scheduler")
    config = log_config(segment_bytes=len(make_batch(backend)), file_delete_delay_ms=0)
    log = Log(tmp_path / "topic-0", config, backend=backend, scheduler=scheduler)
    now = real_time.time_ns() // 1_000_000
    for _ in range(3):
        log.append_as_leader(make_batch(backend, ts=now), 0)
    log.delete_records_before(2)
    assert log.delete_old_segments() == 2
    deadline = real_time.monotonic() + 5
    while deleted_files(tmp_path) and real_time.monotonic() < deadline:
        real_time.sleep(0.01)
    assert deleted_files(tmp_path) == []
    log.close()
    scheduler.shutdown()


# -- the schedulers ------------------------------------------------------------------------


def test_mock_scheduler_runs_due_tasks_in_order() -> None:
    clock = MockTime(0)
    scheduler = MockScheduler(clock)
    ran: list[str] = []
    scheduler.schedule_once("b", lambda: ran.append("b"), 20)
    scheduler.schedule_once("a", lambda: ran.append("a"), 10)
    scheduler.schedule_once("a2", lambda: ran.append("a2"), 10)
    scheduler.schedule_once("boom", lambda: 1 / 0, 5)  # logged, not raised
    assert scheduler.pending == ["boom", "a", "a2", "b"]
    clock.sleep(9)
    assert ran == []
    clock.sleep(1)
    assert ran == ["a", "a2"]
    clock.set_milliseconds(25)
    assert ran == ["a", "a2", "b"] and scheduler.pending == []


def test_thread_scheduler_delay_and_shutdown() -> None:
    scheduler = ThreadScheduler(name="test-scheduler")
    done = threading.Event()
    started = real_time.monotonic()
    scheduler.schedule_once("later", done.set, 50)
    assert done.wait(5)
    assert real_time.monotonic() - started >= 0.045
    late: list[int] = []
    scheduler.schedule_once("pending", lambda: late.append(1), 60_000)
    scheduler.shutdown(run_pending=True)  # runs what is queued, due or not
    assert late == [1]
    with pytest.raises(RuntimeError):
        scheduler.schedule_once("after", lambda: None)
