"""LogManager over both backends: start-up loading and recovery, the clean shutdown marker,
meta.properties, partition creation and deletion, the four per-dir checkpoints, the
background tasks on a mock clock, and recovery progress.

Time is a ``MockTime``; background tasks run on a ``MockScheduler`` when it moves.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.errors import CorruptCheckpointError, InconsistentTopicIdError
from kafkacore.log import (
    CleanShutdownFile,
    LogDirError,
    LogManager,
    MetaProperties,
    MockScheduler,
    MockTime,
    OffsetCheckpointFile,
    RecoveryProgress,
    TopicPartition,
)

T0 = 1_700_000_000_000
TP = TopicPartition

BROKER = {
    "node.id": 7,
    "log.initial.task.delay.ms": 1000,
    "log.retention.check.interval.ms": 5000,
    "log.flush.scheduler.interval.ms": 2000,
    "log.flush.offset.checkpoint.interval.ms": 3000,
    "log.flush.start.offset.checkpoint.interval.ms": 4000,
    "log.segment.delete.delay.ms": 10_000,
}


def topic_config(**overrides: Any) -> LogConfig:
    return LogConfig({"internal.segment.bytes": 300, **overrides}, BrokerConfig(BROKER))


class Env:
    """Log dirs under ``tmp_path``, a mock clock and a factory of managers."""

    def __init__(self, tmp_path: Path, backend: ModuleType, n_dirs: int = 2) -> None:
        self.dirs = [tmp_path / f"data{i}" for i in range(n_dirs)]
        self.backend = backend
        self.time = MockTime(T0)
        self.scheduler = MockScheduler(self.time)

    def manager(self, start: bool = True, **kwargs: Any) -> LogManager:
        broker = BrokerConfig({**BROKER, **kwargs.pop("broker", {})})
        kwargs.setdefault("default_config", topic_config())
        kwargs.setdefault("progress", None)
        manager = LogManager(
            self.dirs,
            broker,
            backend=self.backend,
            time=self.time,
            scheduler=self.scheduler,
            **kwargs,
        )
        if start:
            manager.startup()
        return manager

    def batch(self, n: int = 1, key: bytes = b"k") -> bytes:
        records: list[tuple[int, int, bytes, bytes, list[tuple[str, bytes | None]]]] = [
            (i, T0, key, b"value-%d" % i, []) for i in range(n)
        ]
        return bytes(self.backend.build_batch(records))


@pytest.fixture
def env(tmp_path: Path, backend: ModuleType) -> Env:
    return Env(tmp_path, backend)


def read_checkpoint(path: Path) -> dict[TopicPartition, int]:
    return OffsetCheckpointFile(str(path)).read()


def fill(env: Env, manager: LogManager, tp: TopicPartition, batches: int) -> None:
    log = manager.get_or_create_log(tp.topic, tp.partition)
    for _ in range(batches):
        log.append_as_leader(env.batch(2), 0)


# -- start-up, meta.properties, locks ------------------------------------------------------


def test_health_names_the_dirs_the_manager_cannot_write(env: Env) -> None:
    manager = env.manager()
    manager.get_or_create_log("t", 0)
    health = manager.health()
    assert health.ok
    assert health.log_dirs == tuple(str(d) for d in env.dirs)
    assert health.partitions == 1
    shutil.rmtree(env.dirs[-1])  # a disk gone from under the broker
    health = manager.health()
    assert not health.ok and health.unwritable_dirs == (str(env.dirs[-1]),)


def test_startup_creates_and_locks_the_log_dirs(env: Env) -> None:
    manager = env.manager()
    for d in env.dirs:
        assert d.is_dir() and (d / ".lock").exists()
        props = MetaProperties.read(str(d / "meta.properties"))
        assert (props.version, props.node_id, props.cluster_id) == (1, 7, manager.cluster_id)
        assert props.directory_id == manager.directory_id(d)
        for name in (
            "recovery-point-offset-checkpoint",
            "log-start-offset-checkpoint",
            "replication-offset-checkpoint",
            "cleaner-offset-checkpoint",
        ):
            assert (d / name).exists()
    assert len({manager.directory_id(d) for d in env.dirs}) == 2
    assert manager.cluster_id is not None and len(manager.cluster_id) == 22

    with pytest.raises(LogDirError, match=r"Failed to acquire lock on file \.lock in .*data0"):
        env.manager()
    manager.shutdown()
    again = env.manager()  # the locks were released, the ids are kept
    assert again.cluster_id == manager.cluster_id and again.node_id == 7
    assert again.directory_id(env.dirs[1]) == manager.directory_id(env.dirs[1])
    again.shutdown()


def test_meta_properties_of_another_node_or_cluster_is_refused(env: Env) -> None:
    env.manager().shutdown()
    path = env.dirs[1] / "meta.properties"
    with pytest.raises(
        LogDirError,
        match=re.escape(
            f"Stored node id 7 doesn't match previous node id 8 in {env.dirs[0]}/meta.properties. "
            "If you moved your data, make sure your configured node id matches. If you intend "
            "to create a new node, you should remove all data in your data directories."
        ),
    ):
        env.manager(broker={"node.id": 8})
    # the refused start left the directories unlocked
    props = MetaProperties.read(str(path))
    MetaProperties(1, "otherclusteridAAAAAAAA", 7, props.directory_id).write(str(path))
    with pytest.raises(LogDirError, match=r"Invalid cluster.id in: .*data1/meta.properties"):
        env.manager()


def test_node_id_comes_from_meta_properties_when_not_configured(
    tmp_path: Path, backend: ModuleType
) -> None:
    d = tmp_path / "d"
    d.mkdir()
    MetaProperties(1, "Xy7iuGXfQhW0T2bOvvKrCw", 42).write(str(d / "meta.properties"))
    manager = LogManager([d], backend=backend, progress=None, scheduler=MockScheduler(MockTime()))
    manager.startup()
    assert (manager.node_id, manager.cluster_id) == (42, "Xy7iuGXfQhW0T2bOvvKrCw")
    assert MetaProperties.read(str(d / "meta.properties")).directory_id is not None
    manager.shutdown()


def test_a_directory_that_is_not_a_partition_fails_the_start(env: Env) -> None:
    (env.dirs[0] / "lost+found").mkdir(parents=True)
    (env.dirs[0] / "remote-log-index-cache").mkdir()
    with pytest.raises(ValueError, match="'lost\\+found' is not in the form of topic-partition"):
        env.manager()
    os.rmdir(env.dirs[0] / "lost+found")
    env.manager().shutdown()  # the tiered-storage cache directory is not a partition


def test_duplicate_partition_directories_are_refused(env: Env) -> None:
    manager = env.manager()
    fill(env, manager, TP("t", 0), 1)
    manager.shutdown()
    source = next(d / "t-0" for d in env.dirs if (d / "t-0").exists())
    other = next(d for d in env.dirs if not (d / "t-0").exists())
    (other / "t-0").mkdir()
    with pytest.raises(LogDirError, match="Duplicate log directories for t-0 are found in both"):
        env.manager()
    assert source.exists()


# -- clean shutdown marker and recovery ----------------------------------------------------


def test_clean_shutdown_marker_round_trip(env: Env) -> None:
    manager = env.manager()
    for p in range(4):
        fill(env, manager, TP("orders", p), 3)
    ends = {log.topic_partition: log.log_end_offset for log in manager.all_logs()}
    manager.shutdown(broker_epoch=12)
    for d in env.dirs:
        marker = d / ".kafka_cleanshutdown"
        assert json.loads(marker.read_bytes()) == {"version": 0, "brokerEpoch": 12}
        assert CleanShutdownFile(str(d)).read() == 12
        points = read_checkpoint(d / "recovery-point-offset-checkpoint")
        assert points == {tp: ends[tp] for tp in points} and points
    # every log was flushed and closed, partitions went to the emptier dir
    assert sorted(
        len(read_checkpoint(d / "recovery-point-offset-checkpoint")) for d in env.dirs
    ) == [2, 2]

    again = env.manager()
    assert all(again.had_clean_shutdown(d) for d in env.dirs)
    assert not any((d / ".kafka_cleanshutdown").exists() for d in env.dirs)  # removed at start
    assert {log.topic_partition: log.log_end_offset for log in again.all_logs()} == ends
    assert all(log.recovery_point == log.log_end_offset for log in again.all_logs())
    again.shutdown()


def test_unclean_shutdown_recovers_past_the_recovery_point(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    manager = env.manager()
    fill(env, manager, TP("orders", 0), 9)
    log = manager.get_log(TP("orders", 0))
    assert log is not None and log.number_of_segments == 3
    index_before = [s.files.offset_index() for s in log.segments]
    manager.shutdown()
    d = Path(log.dir)
    for parent in env.dirs:
        (parent / ".kafka_cleanshutdown").unlink()
    OffsetCheckpointFile(str(d.parent / "recovery-point-offset-checkpoint")).write({})
    last = sorted(d.glob("*.log"))[-1]
    size = last.stat().st_size
    with open(last, "ab") as f:
        f.write(b"\x00" * 30)  # a torn append
    os.remove(sorted(d.glob("*.index"))[1])  # and a missing index
    with caplog.at_level(logging.INFO, logger="kafkacore.log"):
        again = env.manager()
    recovered = again.get_log(TP("orders", 0))
    assert recovered is not None
    assert not any(again.had_clean_shutdown(p) for p in env.dirs)
    assert (recovered.log_end_offset, recovered.recovery_point) == (18, 0)
    assert last.stat().st_size == size
    assert [s.files.offset_index() for s in recovered.segments] == index_before
    messages = [r.getMessage() for r in caplog.records]
    progress = [m for m in messages if m.startswith("Recover") and "segment" in m]
    assert progress == [
        "Recovering segment 1/3 of orders-0 (0%)",
        "Recovering segment 2/3 of orders-0 (33%)",
        "Recovering segment 3/3 of orders-0 (66%)",
        "Recovered 3 segments of orders-0 (100%)",
    ]
    assert any(m.startswith("Recovering 1 logs from") for m in messages)
    assert any(m.startswith("Loaded 1 logs in") and "unclean log dirs" in m for m in messages)
    again.shutdown()


def test_recovery_point_checkpoint_limits_the_recovery(env: Env) -> None:
    manager = env.manager()
    fill(env, manager, TP("t", 0), 6)
    log = manager.get_log(TP("t", 0))
    assert log is not None
    log.flush(8)  # segments 0 and 4 are flushed, 8 is not
    manager.checkpoint_recovery_offsets()
    manager.shutdown()
    for parent in env.dirs:
        (parent / ".kafka_cleanshutdown").unlink()
    # the checkpoint is what shutdown wrote (12); lower it to 8 as a crash would have left it
    checkpoint = OffsetCheckpointFile(
        str(Path(log.dir).parent / "recovery-point-offset-checkpoint")
    )
    checkpoint.write({TP("t", 0): 8})
    seen: list[tuple[str, int, int]] = []

    class Progress(RecoveryProgress):
        def update(self, name: str, done: int, total: int) -> None:
            seen.append((name, done, total))

    again = env.manager(progress=Progress(io.StringIO()))
    assert seen == [("t-0", 0, 1), ("t-0", 1, 1)]  # only the segment at 8
    recovered = again.get_log(TP("t", 0))
    assert recovered is not None and recovered.recovery_point == 8
    again.shutdown()


def test_a_crash_while_loading_counts_as_unclean(env: Env) -> None:
    """KAFKA-10471: the marker goes as loading starts, not at the end."""
    manager = env.manager()
    fill(env, manager, TP("t", 0), 1)
    log_dir = Path(manager.get_log(TP("t", 0)).dir)  # type: ignore[union-attr]
    manager.shutdown()
    (log_dir / "partition.metadata").write_text("garbage")
    with pytest.raises(CorruptCheckpointError, match=r"partition\.metadata"):
        env.manager()
    assert not any((d / ".kafka_cleanshutdown").exists() for d in env.dirs)
    (log_dir / "partition.metadata").unlink()
    again = env.manager()
    assert not any(again.had_clean_shutdown(d) for d in env.dirs)
    again.shutdown()


def test_logs_are_loaded_in_parallel(env: Env) -> None:
    manager = env.manager()
    for p in range(8):
        fill(env, manager, TP("t", p), 1)
    manager.shutdown()
    threads: set[str] = set()
    for parent in env.dirs:
        (parent / ".kafka_cleanshutdown").unlink()

    class Progress(RecoveryProgress):
        def update(self, name: str, done: int, total: int) -> None:
            threads.add(threading.current_thread().name)

    again = env.manager(recovery_threads_per_dir=3, progress=Progress(io.StringIO()))
    assert len(again.all_logs()) == 8
    assert all(name.startswith("log-recovery-") for name in threads)
    assert {name.rsplit("_", 1)[0] for name in threads} == {f"log-recovery-{d}" for d in env.dirs}
    again.shutdown()


# -- creating and deleting partitions ------------------------------------------------------


def test_get_or_create_log(env: Env) -> None:
    manager = env.manager()
    topic_id = uuid.uuid4()
    log = manager.get_or_create_log("orders", 0, topic_config(**{"retention.ms": 1000}), topic_id)
    assert manager.get_or_create_log("orders", 0) is log
    assert manager.get_log(("orders", 0)) is log and manager.get_log(TP("x", 0)) is None
    assert log.config.retention_ms == 1000 and log.topic_id == topic_id
    assert manager.config_for("orders").retention_ms == 1000  # remembered for the topic
    with pytest.raises(InconsistentTopicIdError):
        manager.get_or_create_log("orders", 0, topic_id=uuid.uuid4())
    other = manager.get_or_create_log("orders", 1)
    # the second partition goes to the dir with fewer logs
    assert {Path(log.dir).parent, Path(other.dir).parent} == set(env.dirs)
    assert Path(log.dir).name == "orders-0"
    assert manager.logs_by_topic("orders") == [log, other]
    manager.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        manager.get_or_create_log("orders", 2)


def test_delete_log_renames_then_removes_the_directory(env: Env) -> None:
    manager = env.manager()
    fill(env, manager, TP("gone", 0), 3)
    fill(env, manager, TP("kept", 0), 3)
    log = manager.get_log(TP("gone", 0))
    assert log is not None
    parent = Path(log.dir).parent
    manager.update_cleaner_checkpoint(parent, (TP("gone", 0), 2))
    assert manager.delete_log(TP("gone", 0)) is log and log.closed
    assert manager.get_log(TP("gone", 0)) is None and manager.delete_log(TP("gone", 0)) is None
    [renamed] = [p for p in parent.iterdir() if p.name.endswith("-delete")]
    assert re.fullmatch(r"gone-0\.[0-9a-f]{32}-delete", renamed.name)
    assert manager.dirs_pending_deletion == [str(renamed)]
    assert TP("gone", 0) not in read_checkpoint(parent / "recovery-point-offset-checkpoint")
    assert TP("gone", 0) not in read_checkpoint(parent / "cleaner-offset-checkpoint")
    env.time.sleep(9_999)
    assert renamed.exists()
    env.time.sleep(1)  # file.delete.delay.ms
    assert not renamed.exists() and manager.dirs_pending_deletion == []
    manager.shutdown()


def test_a_delete_directory_found_at_startup_is_removed_not_loaded(env: Env) -> None:
    manager = env.manager()
    fill(env, manager, TP("gone", 0), 3)
    manager.delete_log(TP("gone", 0))
    manager.shutdown()
    env.time = MockTime(T0)  # a new process: the removal never ran
    env.scheduler = MockScheduler(env.time)
    [renamed] = [p for d in env.dirs for p in d.iterdir() if p.name.endswith("-delete")]
    assert renamed.exists()
    again = env.manager()
    assert again.all_logs() == [] and renamed.exists()
    env.time.sleep(10_000)
    assert not renamed.exists()
    again.shutdown()


# -- checkpoints ---------------------------------------------------------------------------


def test_log_start_offsets_are_checkpointed_only_above_the_first_segment(env: Env) -> None:
    manager = env.manager()
    fill(env, manager, TP("a", 0), 6)
    fill(env, manager, TP("b", 0), 6)
    a = manager.get_log(TP("a", 0))
    assert a is not None
    a.delete_records_before(5)
    manager.checkpoint_log_start_offsets()
    found: dict[TopicPartition, int] = {}
    for d in env.dirs:
        found.update(read_checkpoint(d / "log-start-offset-checkpoint"))
    assert found == {TP("a", 0): 5}
    manager.cleanup_logs()  # the segment wholly below 5 goes; 4.. stays
    manager.checkpoint_log_start_offsets()
    manager.shutdown()
    again = env.manager()
    reloaded = again.get_log(TP("a", 0))
    assert reloaded is not None and reloaded.log_start_offset == 5
    again.shutdown()


def test_high_watermarks_go_to_the_dir_of_their_log(env: Env) -> None:
    manager = env.manager()
    fill(env, manager, TP("t", 0), 2)
    fill(env, manager, TP("t", 1), 2)
    manager.checkpoint_high_watermarks({TP("t", 0): 3, TP("t", 1): 4, TP("unknown", 0): 9})
    by_dir = {Path(log.dir).parent: log.topic_partition for log in manager.all_logs()}
    for d, tp in by_dir.items():
        assert read_checkpoint(d / "replication-offset-checkpoint") == {tp: 3 + tp.partition}
    assert manager.read_high_watermarks() == {TP("t", 0): 3, TP("t", 1): 4}
    manager.shutdown()


def test_truncation_lowers_recovery_points_and_cleaner_checkpoints(env: Env) -> None:
    manager = env.manager()
    compacted = topic_config(**{"cleanup.policy": "compact"})
    log = manager.get_or_create_log("c", 0, compacted)
    for _ in range(6):
        log.append_as_leader(env.batch(2), 0)
    log.flush()
    parent = Path(log.dir).parent
    manager.update_cleaner_checkpoint(parent, (TP("c", 0), 8))
    paused: list[str] = []

    class Cleaner:
        def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
            paused.append(f"pause {tp}")

        def abort_cleaning(self, tp: TopicPartition) -> None:
            paused.append(f"abort {tp}")

        def resume_cleaning(self, tps: Iterable[TopicPartition]) -> None:
            paused.append(f"resume {','.join(map(str, tps))}")

    manager.attach_cleaner(Cleaner())
    manager.truncate_to({TP("c", 0): 5, TP("absent", 0): 1})
    assert log.log_end_offset == 4  # the batch holding 5 goes whole
    assert paused == ["pause c-0", "resume c-0"]
    assert read_checkpoint(parent / "recovery-point-offset-checkpoint") == {TP("c", 0): 4}
    assert read_checkpoint(parent / "cleaner-offset-checkpoint") == {
        TP("c", 0): log.active_segment.base_offset
    }
    manager.truncate_fully_and_start_at(TP("c", 0), 100)
    assert (log.log_start_offset, log.log_end_offset) == (100, 100)
    assert read_checkpoint(parent / "recovery-point-offset-checkpoint") == {TP("c", 0): 4}
    manager.delete_log(TP("c", 0))
    assert paused[-1] == "abort c-0"
    manager.shutdown()


# -- background work -----------------------------------------------------------------------


def test_background_retention_flush_and_checkpoints(env: Env) -> None:
    manager = env.manager(
        topic_configs={
            "timed": topic_config(**{"retention.ms": 10_000, "flush.ms": 1500}),
            "compacted": topic_config(
                **{"retention.ms": 10_000, "cleanup.policy": "compact", "flush.ms": 100_000}
            ),
        }
    )
    timed = manager.get_or_create_log("timed", 0)
    compacted = manager.get_or_create_log("compacted", 0)
    for log in (timed, compacted):
        for _ in range(6):
            log.append_as_leader(env.batch(2), 0)
    assert timed.recovery_point == 0
    parent = Path(timed.dir).parent
    assert read_checkpoint(parent / "recovery-point-offset-checkpoint") == {}

    env.time.sleep(1000)  # the initial delay: every task runs once
    assert timed.recovery_point == 6  # the rolled segment (flushed after the roll, at 1 s)
    assert read_checkpoint(parent / "recovery-point-offset-checkpoint")[TP("timed", 0)] == 6
    env.time.sleep(2000)  # the flusher, every 2 s: flush.ms (1.5 s) has elapsed since
    assert timed.recovery_point == 12
    assert compacted.recovery_point == 6  # its flush.ms has not elapsed
    env.time.sleep(1000)  # the recovery-point checkpoint, every 3 s
    assert read_checkpoint(parent / "recovery-point-offset-checkpoint")[TP("timed", 0)] == 12
    assert timed.number_of_segments == 2

    env.time.sleep(2000)  # 6 s: the retention task (every 5 s) finds nothing 10 s old
    assert timed.number_of_segments == 2
    env.time.sleep(5000)  # 11 s
    assert timed.log_start_offset == 12 and timed.number_of_segments == 1
    assert compacted.number_of_segments == 2  # retention of compacted logs is the cleaner's
    env.time.sleep(2000)  # 13 s: the log-start checkpoint (every 4 s)
    starts = read_checkpoint(Path(timed.dir).parent / "log-start-offset-checkpoint")
    assert TP("timed", 0) not in starts  # the start is the first segment's base now
    manager.shutdown()
    env.time.sleep(100_000)  # nothing scheduled runs after shutdown
    assert timed.closed


def test_retention_stops_at_the_high_watermark(env: Env) -> None:
    watermarks = {TP("t", 0): 5}
    manager = env.manager(
        default_config=topic_config(**{"retention.bytes": 0}), high_watermark=watermarks.get
    )
    fill(env, manager, TP("t", 0), 6)
    log = manager.get_log(TP("t", 0))
    assert log is not None
    assert log.number_of_segments == 2  # [0, 6) and [6, 12)
    assert manager.cleanup_logs() == 0 and log.log_start_offset == 0  # 5 is inside [0, 6)
    watermarks[TP("t", 0)] = 6
    assert manager.cleanup_logs() == 1 and log.log_start_offset == 6
    watermarks[TP("t", 0)] = 12
    assert manager.cleanup_logs() == 1 and log.log_start_offset == 12
    manager.shutdown()


def test_owned_thread_scheduler_is_shut_down(tmp_path: Path, backend: ModuleType) -> None:
    broker = BrokerConfig({"log.segment.delete.delay.ms": 3_600_000})
    manager = LogManager([tmp_path / "d"], broker, backend=backend, progress=None)
    with manager:
        log = manager.get_or_create_log("t", 0)
        log.append_as_leader(bytes(backend.build_batch([(0, T0, b"k", b"v", [])])), 0)
        manager.delete_log(TP("t", 0))
        pending = manager.dirs_pending_deletion
        assert len(pending) == 1 and os.path.exists(pending[0])
    # shutdown ran the pending removal instead of waiting an hour
    assert not os.path.exists(pending[0])
    assert (tmp_path / "d" / ".kafka_cleanshutdown").exists()


# -- progress display ----------------------------------------------------------------------


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_redraws_one_line() -> None:
    stream = Tty()
    progress = RecoveryProgress(stream, min_interval_s=0)
    first: Callable[[int, int], None] = progress.callback_for("orders-0")
    second = progress.callback_for("orders-1")
    first(0, 4)
    second(0, 4)
    first(2, 4)
    second(4, 4)
    progress.close()
    out = stream.getvalue()
    frames = out.split("\r")[1:]
    assert frames[0].startswith(
        "Recovering logs [------------------------------]   0% segment 1/4 of orders-0"
    )
    assert "[######################--------]  75% orders-1 recovered" in frames[-1]
    assert out.endswith("\n") and out.count("\n") == 1


def test_progress_is_throttled_but_always_shows_the_end() -> None:
    stream = Tty()
    progress = RecoveryProgress(stream, min_interval_s=3600)
    for done in range(100):
        progress.update("t-0", done, 100)
    progress.update("t-0", 100, 100)
    frames = stream.getvalue().split("\r")[1:]
    assert len(frames) == 2 and "100%" in frames[-1]


def test_progress_goes_to_log_lines_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert RecoveryProgress.for_stderr() is None
    monkeypatch.setattr("sys.stderr", Tty())
    assert isinstance(RecoveryProgress.for_stderr(), RecoveryProgress)


def test_idle_producers_expire_on_the_periodic_check(env: Env) -> None:
    """Kafka's PeriodicProducerExpirationCheck: every
    ``producer.id.expiration.check.interval.ms`` the producers whose last batch is
    ``producer.id.expiration.ms`` old or older are forgotten; active ones stay."""
    manager = env.manager(
        producer_state=True,
        broker={
            "producer.id.expiration.ms": 60_000,
            "producer.id.expiration.check.interval.ms": 10_000,
        },
    )
    log = manager.get_or_create_log("pids", 0)

    def append(pid: int, seq: int) -> None:
        record = (0, env.time.milliseconds(), b"k", b"v", [])
        batch = env.backend.build_batch(
            [record], producer_id=pid, producer_epoch=0, base_sequence=seq
        )
        log.append_as_leader(bytes(batch), 0)

    append(11, 0)
    append(12, 0)
    state = log.producer_state
    assert state is not None and set(state.active_producers) == {11, 12}
    env.time.sleep(50_000)  # checks at +10 s .. +50 s: nobody is a minute idle yet
    append(12, 1)
    assert set(state.active_producers) == {11, 12}
    env.time.sleep(10_000)  # the check at +60 s: 11 is a minute idle, 12 only 10 s
    assert set(state.active_producers) == {12}
    env.time.sleep(60_000)
    assert set(state.active_producers) == set()
    manager.shutdown()
