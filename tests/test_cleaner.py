"""The log cleaner (``kafkacore.log.cleaner``) on both backends, as a user sees it: the
latest value of each key survives with its offset, tombstones go after
``delete.retention.ms``, the dirty ratio and compaction lags decide when, small segments
are grouped, the swap survives a crash at every rename, progress is checkpointed, and the
cleaner runs in background threads that can be paused.

Time is a ``MockTime``; file deletion runs on a ``MockScheduler``.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.errors import InvalidRecordError
from kafkacore.log import Log, MockScheduler, MockTime, OffsetCheckpointFile, TopicPartition
from kafkacore.log.cleaner import (
    CLEANER_TMP_DIR,
    CleanerConfig,
    LogCleaner,
    LogToClean,
    cleanable_offsets,
    group_segments_by_size,
)
from kafkacore.log.files import CLEANER_OFFSET_CHECKPOINT_FILE

T0 = 1_700_000_000_000
HOUR = 3600 * 1000
TP = TopicPartition("users", 0)

Row = tuple[int, bytes | None, bytes | None]


def log_config(**fields: Any) -> LogConfig:
    """A compacted topic; ``segment_bytes`` goes to ``internal.segment.bytes`` (no 1 MiB
    floor) and deleted files go at once."""
    overrides: dict[str, Any] = {
        "cleanup.policy": "compact",
        "file.delete.delay.ms": 0,
        "internal.segment.bytes": 1000,
    }
    for k, v in fields.items():
        overrides["internal.segment.bytes" if k == "segment_bytes" else k.replace("_", ".")] = v
    return LogConfig(overrides)


class Env:
    """A log directory, its clock and scheduler, and helpers over one backend."""

    def __init__(self, root: Path, backend: ModuleType) -> None:
        self.root = root
        self.backend = backend
        self.clock = MockTime(T0)
        self.scheduler = MockScheduler(self.clock)
        self.written: list[Row] = []

    @property
    def dir(self) -> Path:
        return self.root / str(TP)

    def open(self, config: LogConfig, **kwargs: Any) -> Log:
        return Log(
            self.dir,
            config,
            backend=self.backend,
            time=self.clock,
            scheduler=self.scheduler,
            **kwargs,
        )

    def append(self, log: Log, key: bytes, value: bytes | None, ts: int | None = None) -> int:
        stamp = self.clock.milliseconds() if ts is None else ts
        batch = self.backend.build_batch([(0, stamp, key, value, [])])
        offset = log.append_as_leader(batch, leader_epoch=0).first_offset
        self.written.append((offset, key, value))
        return offset

    def fill(self, log: Log, count: int, keys: int = 10, *, ts: int | None = None) -> None:
        for _ in range(count):
            i = len(self.written)
            self.append(log, f"key-{i % keys}".encode(), f"value-{i}".encode(), ts)

    def cleaner(self, logs: list[Log], **kwargs: Any) -> LogCleaner:
        return LogCleaner(lambda: logs, CleanerConfig(), self.clock, **kwargs)

    def checkpoint(self) -> dict[TopicPartition, int]:
        return OffsetCheckpointFile(str(self.root / CLEANER_OFFSET_CHECKPOINT_FILE)).read()


@pytest.fixture
def env(tmp_path: Path, backend: ModuleType) -> Env:
    return Env(tmp_path, backend)


def read_all(log: Log, backend: ModuleType) -> list[Row]:
    """Every record from the log start offset, through ``Log.read`` (file regions)."""
    out: list[Row] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 30).read_bytes()
        assert data, f"nothing to read at {offset}"
        pos = 0
        while pos < len(data):
            header = backend.batch_header(data, pos)
            out += [(r[0], r[2], r[3]) for r in backend.batch_records(data, pos) if r[0] >= offset]
            offset = header[0] + header[6] + 1
            pos += header[1] + 12
    return out


def compacted(rows: list[Row], end_offset: int) -> list[Row]:
    """What a round ending at ``end_offset`` keeps: below it, the last record of each key
    (tombstones included); from it on, everything."""
    latest = {key: offset for offset, key, _ in rows if offset < end_offset}
    return [r for r in rows if r[0] >= end_offset or latest[r[1]] == r[0]]


def segment_files(log: Log) -> list[str]:
    return sorted(os.listdir(log.dir))


# ------------------------------------------------------------------------------- basics


def test_latest_value_per_key_survives_with_its_offset(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 200)
    before_end, before_size = log.log_end_offset, log.size
    active_base = log.active_segment.base_offset
    stats = env.cleaner([log]).clean(log)
    assert stats is not None
    assert stats.first_dirty_offset == 0
    assert stats.end_offset == active_base
    assert stats.records_read == active_base
    assert stats.records_written == 10
    assert log.log_end_offset == before_end and log.log_start_offset == 0
    assert log.size < before_size
    assert read_all(log, env.backend) == compacted(env.written, active_base)
    assert env.checkpoint() == {TP: active_base}
    assert not any(
        n.endswith((".cleaned", ".swap")) or n == CLEANER_TMP_DIR for n in segment_files(log)
    )
    # The same after a restart (clean, then unclean).
    log.close()
    for recover_from in (None, 0):
        reopened = env.open(log_config(), recover_from=recover_from)
        assert reopened.log_end_offset == before_end
        assert read_all(reopened, env.backend) == compacted(env.written, active_base)
        reopened.close()


def test_reads_by_offset_land_on_the_next_surviving_record(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 100, keys=3)
    env.cleaner([log]).clean(log)
    survivors = [o for o, _, _ in read_all(log, env.backend)]
    gone = next(o for o in range(100) if o not in survivors)
    data = log.read(gone, 1 << 20).read_bytes()
    first = env.backend.batch_records(data, 0)
    assert min(r[0] for r in first if r[0] >= gone) == min(o for o in survivors if o >= gone)


def test_tombstones_are_removed_after_delete_retention(env: Env) -> None:
    config = log_config(delete_retention_ms=10_000)
    log = env.open(config)
    env.fill(log, 30, keys=3)
    env.append(log, b"key-1", None)  # delete key-1
    env.fill(log, 30, keys=1)  # key-0 only; rolls the tombstone out of the active segment
    cleaner = env.cleaner([log])
    assert cleaner.clean(log) is not None
    rows = read_all(log, env.backend)
    assert (b"key-1", None) in [(k, v) for _, k, v in rows]  # kept, with a delete horizon
    assert [v for _, k, v in rows if k == b"key-1"] == [None]

    env.clock.sleep(9_999)
    assert cleaner.clean(log, force=True) is not None
    assert [v for _, k, v in read_all(log, env.backend) if k == b"key-1"] == [None]

    env.clock.sleep(1)
    stats = cleaner.clean(log, force=True)
    assert stats is not None
    assert [k for _, k, _ in read_all(log, env.backend)].count(b"key-1") == 0
    assert {k for _, k, _ in read_all(log, env.backend)} == {b"key-0", b"key-2"}


def test_keyless_records_are_refused_on_a_compacted_topic(env: Env) -> None:
    from kafkacore.errors import RecordValidationError

    log = env.open(log_config())
    with pytest.raises(RecordValidationError, match="Compacted topic cannot accept message"):
        log.append_as_leader(env.backend.build_batch([(0, T0, None, b"v", [])]), 0)


# ------------------------------------------------------------------------------- when


def test_dirty_ratio_decides(env: Env) -> None:
    log = env.open(log_config(min_cleanable_dirty_ratio=0.5))
    env.fill(log, 200)
    cleaner = env.cleaner([log])
    assert cleaner.clean(log) is not None
    env.fill(log, 15)  # a little dirt over a small clean section
    [ltc] = cleaner.dirtiness()
    assert ltc.cleanable_ratio > 0
    dirty_enough = ltc.cleanable_ratio > 0.5
    assert (cleaner.clean(log) is not None) == dirty_enough
    log.update_config(log_config(min_cleanable_dirty_ratio=1.0))
    env.fill(log, 100)
    assert cleaner.clean(log) is None  # a ratio is never above 1.0
    assert cleaner.maybe_clean_logs() == {}
    log.update_config(log_config(min_cleanable_dirty_ratio=0.0))
    assert set(cleaner.maybe_clean_logs()) == {TP}


def test_min_compaction_lag_keeps_recent_segments_dirty(env: Env) -> None:
    log = env.open(log_config(min_compaction_lag_ms=HOUR))
    env.fill(log, 60, ts=T0 - 2 * HOUR)
    log.roll()
    first_recent = log.active_segment.base_offset
    env.fill(log, 60, ts=T0 - 10)
    stats = env.cleaner([log]).clean(log)
    assert stats is not None
    assert stats.end_offset == first_recent
    rows = read_all(log, env.backend)
    assert rows == compacted(env.written, first_recent)
    # An hour later the recent segments may go too.
    env.clock.sleep(HOUR)
    stats = env.cleaner([log]).clean(log, force=True)
    assert stats is not None and stats.end_offset == log.active_segment.base_offset


def test_max_compaction_lag_forces_cleaning(env: Env) -> None:
    log = env.open(log_config(min_cleanable_dirty_ratio=1.0, max_compaction_lag_ms=HOUR))
    env.fill(log, 60, ts=T0 - 10)
    cleaner = env.cleaner([log])
    assert cleaner.clean(log) is None  # ratio never passes 1.0; not old enough yet
    env.clock.sleep(HOUR)
    [ltc] = cleaner.dirtiness()
    assert ltc.need_compaction_now
    assert cleaner.clean(log) is not None
    assert read_all(log, env.backend) == compacted(env.written, ltc.first_uncleanable_offset)


def test_upper_bound_is_never_passed(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 200)
    segments = log.segments
    bound = segments[5].base_offset + 3  # inside the sixth segment
    stats = env.cleaner([log], upper_bound=lambda tp: bound).clean(log)
    assert stats is not None and stats.end_offset == segments[5].base_offset
    assert read_all(log, env.backend) == compacted(env.written, segments[5].base_offset)


# ------------------------------------------------------------------------------- grouping


def test_small_segments_are_grouped(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 300)
    cleaner = env.cleaner([log])
    first = cleaner.clean(log)
    assert first is not None and all(len(g) == 1 for g in first.groups)
    segments_after_first = log.number_of_segments
    env.fill(log, 30)
    second = cleaner.clean(log, force=True)
    assert second is not None
    assert any(len(g) > 1 for g in second.groups)
    assert log.number_of_segments < segments_after_first
    for segment in log.segments[:-1]:
        assert segment.size <= log.config.segment_bytes
    assert read_all(log, env.backend) == compacted(env.written, second.end_offset)


def test_group_segments_by_size_limits(env: Env) -> None:
    log = env.open(log_config(segment_bytes=400))
    env.fill(log, 100)
    segments = log.segments[:-1]
    sizes = [s.size for s in segments]
    for limit in (max(sizes), 2 * max(sizes) + 1, 10**9):
        groups = group_segments_by_size(segments, limit, 10 * 1024 * 1024, segments[-1].next_offset)
        assert [s for g in groups for s in g] == segments
        assert all(sum(s.size for s in g) <= limit or len(g) == 1 for g in groups)
    # The index limit: one segment's index fills it.
    index_size = os.stat(segments[0].segment.index_path).st_size
    if index_size:
        groups = group_segments_by_size(segments, 10**9, index_size, segments[-1].next_offset)
        assert all(len(g) == 1 for g in groups)


# ------------------------------------------------------------------------------- checkpoints


def test_checkpoint_is_where_the_next_round_starts(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 150)
    cleaner = env.cleaner([log])
    first = cleaner.clean(log)
    assert first is not None
    env.fill(log, 150)
    second = cleaner.clean(log)
    assert second is not None and second.first_dirty_offset == first.end_offset
    assert env.checkpoint() == {TP: second.end_offset}
    # An invalid checkpoint (past the log end) is reset to the log start offset.
    OffsetCheckpointFile(str(env.root / CLEANER_OFFSET_CHECKPOINT_FILE)).write({TP: 10**9})
    offsets = cleanable_offsets(log, 10**9, T0)
    assert offsets.first_dirty_offset == 0 and offsets.force_update_checkpoint
    [ltc] = cleaner.dirtiness()
    assert isinstance(ltc, LogToClean) and ltc.first_dirty_offset == 0
    assert env.checkpoint() == {TP: 0}


# ------------------------------------------------------------------------------- crashes


class Crash(BaseException):
    """A crash: not an ``Exception``, so no clean-up handler runs."""


def test_swap_is_crash_safe_at_every_rename(
    tmp_path: Path, backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crash the second cleaning round (which groups the small segments of the first) at
    each ``os.replace`` in turn; the reloaded log holds a consistent history, and a new
    round gives what an uninterrupted one gives."""
    seed = Env(tmp_path / "seed", backend)
    config = log_config()
    log = seed.open(config)
    seed.fill(log, 120)
    assert seed.cleaner([log]).clean(log) is not None
    seed.fill(log, 40)
    log.close()
    history = {offset: (key, value) for offset, key, value in seed.written}
    latest = {key: offset for offset, key, _ in seed.written}
    end = log.log_end_offset

    expected: list[Row] | None = None
    real_replace = os.replace
    crash_at = 0
    while True:
        run = Env(tmp_path / f"run-{crash_at}", backend)
        shutil.copytree(seed.dir, run.dir)
        shutil.copy(seed.root / CLEANER_OFFSET_CHECKPOINT_FILE, run.root)
        log = run.open(config)
        calls = 0

        def flaky(src: Any, dst: Any, *args: Any, crash_at: int = crash_at, **kwargs: Any) -> None:
            nonlocal calls
            if calls == crash_at:
                raise Crash
            calls += 1
            real_replace(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "replace", flaky)
        try:
            stats = run.cleaner([log]).clean(log, force=True)
            crashed = False
        except Crash:
            crashed = True
        finally:
            monkeypatch.setattr(os, "replace", real_replace)

        reloaded = run.open(config, recover_from=0)
        names = segment_files(reloaded)
        assert not any(n.endswith((".cleaned", ".swap", ".deleted")) for n in names), names
        rows = read_all(reloaded, backend)
        offsets = [o for o, _, _ in rows]
        assert offsets == sorted(set(offsets))
        assert all(history[o] == (k, v) for o, k, v in rows)
        assert {o for o, _, _ in rows} >= set(latest.values())
        assert reloaded.log_end_offset == end
        if not crashed:
            assert stats is not None
            expected = rows
            reloaded.close()
            break
        # Whatever was interrupted, the next round finishes the job.
        again = run.cleaner([reloaded]).clean(reloaded, force=True)
        assert again is not None
        assert not (run.dir / CLEANER_TMP_DIR).exists()
        assert read_all(reloaded, backend) == compacted(seed.written, again.end_offset)
        reloaded.close()
        crash_at += 1
    assert crash_at > 10  # .cleaned, .swap, .deleted and final renames of several groups
    assert expected is not None


def test_an_aborted_round_leaves_the_log_unchanged(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 200)
    before = read_all(log, env.backend)
    files_before = segment_files(log)
    cleaner: LogCleaner

    pausers: list[threading.Thread] = []

    def abort_from_another_thread(_: Log) -> dict[int, int]:
        if not pausers:  # mid-round, after the key map is built
            pausers.append(threading.Thread(target=cleaner.abort_and_pause_cleaning, args=(TP,)))
            pausers[0].start()
            time.sleep(0.3)
        return {}

    cleaner = env.cleaner([log], active_producers=abort_from_another_thread)
    assert cleaner.clean(log) is None
    pausers[0].join(5)
    assert not pausers[0].is_alive()
    assert cleaner.is_paused(TP)
    assert read_all(log, env.backend) == before
    assert segment_files(log) == files_before
    assert not env.checkpoint()
    assert cleaner.clean(log) is None  # paused
    cleaner.resume_cleaning([TP])
    assert cleaner.clean(log) is not None
    with pytest.raises(RuntimeError):
        cleaner.resume_cleaning([TP])


def test_legacy_segments_make_the_log_uncleanable(env: Env) -> None:
    env.dir.mkdir(parents=True)
    legacy = env.backend.build_legacy([(i, T0, b"k", f"v{i}".encode(), []) for i in range(5)], 1)
    first = env.dir / f"{0:020d}.log"
    first.write_bytes(legacy)
    log = env.open(log_config(), recover_from=0)
    log.roll()
    env.append(log, b"k", b"new")
    files = segment_files(log)
    cleaner = env.cleaner([log])
    with pytest.raises(InvalidRecordError):
        cleaner.clean(log)
    assert cleaner.maybe_clean_logs() == {}  # marked uncleanable, skipped
    assert first.read_bytes() == legacy
    assert segment_files(log) == files
    assert not env.checkpoint()


def test_compact_delete_also_applies_retention(env: Env) -> None:
    log = env.open(log_config(cleanup_policy="compact,delete", retention_ms=HOUR))
    env.fill(log, 100, ts=T0 - 2 * HOUR)
    # Those segments were written two hours ago (an emptied cleaned segment keeps the
    # modification time, which retention falls back on).
    for segment in log.segments:
        old = (T0 - 2 * HOUR) * 1_000_000
        os.utime(segment.log_path, ns=(old, old))
    log.roll()
    env.fill(log, 20)
    cleaner = env.cleaner([log])
    cleaned = cleaner.maybe_clean_logs()
    assert TP in cleaned
    assert log.log_start_offset > 0
    assert all(o >= log.log_start_offset for o, _, _ in read_all(log, env.backend))


# ------------------------------------------------------------------------------- threads


def test_background_threads_clean_and_shut_down(env: Env) -> None:
    logs = [env.open(log_config())]
    env.fill(logs[0], 200)
    size = logs[0].size
    cleaner = LogCleaner(lambda: logs, CleanerConfig(num_threads=2, backoff_ms=10), env.clock)
    with cleaner:
        assert cleaner.running
        deadline = time.monotonic() + 20
        while not env.checkpoint() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert not cleaner.running
    assert env.checkpoint() == {TP: logs[0].active_segment.base_offset}
    assert logs[0].size < size
    assert read_all(logs[0], env.backend) == compacted(
        env.written, logs[0].active_segment.base_offset
    )


def test_pause_blocks_and_resume_counts(env: Env) -> None:
    log = env.open(log_config())
    env.fill(log, 100)
    cleaner = env.cleaner([log])
    cleaner.abort_and_pause_cleaning(TP)
    cleaner.abort_and_pause_cleaning(TP)
    assert cleaner.clean(log) is None and cleaner.dirtiness() == []
    cleaner.resume_cleaning([TP])
    assert cleaner.is_paused(TP)
    cleaner.resume_cleaning([TP])
    assert not cleaner.is_paused(TP)
    cleaner.abort_cleaning(TP)  # nothing in progress: returns, not paused
    assert not cleaner.is_paused(TP)
    assert cleaner.clean(log) is not None


def test_config_from_broker() -> None:
    from kafkacore.config import BrokerConfig

    broker = BrokerConfig(
        {
            "log.dirs": "/tmp/x",
            "log.cleaner.threads": 2,
            "log.cleaner.dedupe.buffer.size": 48 * 1024 * 1024,
            "log.cleaner.backoff.ms": 500,
        }
    )
    config = CleanerConfig.from_broker(broker)
    assert (config.num_threads, config.backoff_ms) == (2, 500)
    assert config.key_map_capacity() == int(24 * 1024 * 1024 // 24 * 0.9)
    with pytest.raises(ValueError):
        CleanerConfig(dedupe_buffer_size=10)


# ------------------------------------------------------------------------------- producers


def test_an_active_producers_last_batch_survives_empty(env: Env) -> None:
    """Kafka's rule: the batch holding a producer's last sequence is kept (as an empty
    header) when compaction removes its records, so the producer state can be rebuilt."""
    from kafkacore.log.producer_state import ProducerStateManager

    env.dir.mkdir(parents=True)
    log = env.open(log_config(), producer_state=ProducerStateManager(env.dir))
    for seq in range(3):
        batch = env.backend.build_batch(
            [(0, T0, b"idem", f"v{seq}".encode(), [])],
            producer_id=42,
            producer_epoch=3,
            base_sequence=seq,
        )
        log.append_as_leader(batch, leader_epoch=0)
    last_of_producer = log.log_end_offset - 1
    env.fill(log, 40, keys=1)  # "key-0" only; then the idempotent key is rewritten:
    env.append(log, b"idem", b"plain")
    env.fill(log, 40, keys=1)
    stats = env.cleaner([log]).clean(log)
    assert stats is not None and stats.end_offset > last_of_producer
    kept = batch_headers(log, env.backend, producer_id=42)
    assert len(kept) == 1
    base_offset, _, _, _, _, _, delta, base_ts, _, pid, epoch, seq, count = kept[0]
    assert (base_offset + delta, pid, epoch, seq, count, base_ts) == (
        last_of_producer,
        42,
        3,
        2,
        0,
        -1,
    )
    # Without a producer state nothing says the producer is active: the batch goes.
    other = Env(env.root / "other", env.backend)
    plain = other.open(log_config())
    for seq in range(3):
        plain.append_as_leader(
            other.backend.build_batch(
                [(0, T0, b"idem", b"v", [])], producer_id=42, producer_epoch=3, base_sequence=seq
            ),
            leader_epoch=0,
        )
    other.fill(plain, 40, keys=1)
    other.append(plain, b"idem", b"plain")
    other.fill(plain, 40, keys=1)
    assert other.cleaner([plain]).clean(plain) is not None
    assert batch_headers(plain, other.backend, producer_id=42) == []


def batch_headers(log: Log, backend: ModuleType, *, producer_id: int) -> list[Any]:
    found = []
    for segment in log.segments:
        data = segment.segment.read_bytes(0, segment.size)
        pos = 0
        while pos < len(data):
            header = backend.batch_header(data, pos)
            if header[9] == producer_id:
                found.append(header)
            pos += header[1] + 12
    return found


# ------------------------------------------------------------------------------- LogManager


def test_with_a_log_manager(tmp_path: Path, backend: ModuleType) -> None:
    """The manager keeps the checkpoints (``cleaner-offset-checkpoint`` per log dir) and
    pauses the cleaner around truncations; the cleaner is its ``CleanerHooks``."""
    from kafkacore.config import BrokerConfig
    from kafkacore.log import LogManager

    clock = MockTime(T0)
    manager = LogManager(
        [tmp_path / "a"],
        BrokerConfig({"node.id": 1, "log.dirs": str(tmp_path / "a")}),
        default_config=log_config(),
        backend=backend,
        time=clock,
        scheduler=MockScheduler(clock),
        progress=None,
    )
    manager.startup()
    try:
        log = manager.get_or_create_log("users", 0)
        env = Env(tmp_path / "a", backend)
        env.fill(log, 200)
        cleaner = LogCleaner(manager.all_logs, CleanerConfig(), clock, checkpoints=manager)
        manager.attach_cleaner(cleaner)
        stats = cleaner.clean(log)
        assert stats is not None
        assert manager.read_cleaner_checkpoints() == {TP: stats.end_offset}
        assert (
            (tmp_path / "a" / CLEANER_OFFSET_CHECKPOINT_FILE)
            .read_text()
            .endswith(f"users 0 {stats.end_offset}\n")
        )
        manager.truncate_to({TP: 50})
        assert not cleaner.is_paused(TP)
        assert manager.read_cleaner_checkpoints()[TP] <= log.active_segment.base_offset
        env.fill(log, 100)
        again = cleaner.clean(log, force=True)
        assert again is not None and again.end_offset == log.active_segment.base_offset
        assert manager.read_cleaner_checkpoints() == {TP: again.end_offset}
    finally:
        manager.shutdown()


def test_batches_larger_than_the_read_buffer(env: Env) -> None:
    log = env.open(log_config(segment_bytes=2_000_000, max_message_bytes=2_000_000))
    big = b"x" * 300_000
    for i in range(6):
        env.append(log, f"key-{i % 2}".encode(), big + bytes([i]))
    log.roll()
    env.append(log, b"tail", b"t")
    cleaner = LogCleaner(lambda: [log], CleanerConfig(io_buffer_size=8192), env.clock)
    stats = cleaner.clean(log)
    assert stats is not None and stats.records_written == 2
    assert read_all(log, env.backend) == compacted(env.written, 6)
