"""The child process of the crash-point sweep (``tests/test_crash_sweep.py``).

Run as ``python tests/support/crash_child.py <workdir> <backend> <seed> <run> <kill>``: open a
:class:`~kafkacore.log.LogManager` over ``<workdir>/data0`` and ``<workdir>/data1`` (which
recovers whatever the previous run left), then run a seeded random workload - appends,
rolls, flushes, checkpoints, the passing of (mock) time that drives the manager's
background tasks, retention (``delete_records_before`` + ``cleanup_logs``), truncation,
compaction, and the deletion and re-creation of a partition - until it is killed.

Kill points: every file-system call the Python layer makes (``os.replace``/``rename``/
``remove``/``unlink``/``fsync``/``mkdir``/``rmdir``/``ftruncate``/``write``/``pwrite``,
which also covers the pure backend's writes) and the start of every workload operation
counts as a point; at the point ``<kill>`` names (:class:`KillSwitch`: the N-th of the run,
or the N-th since the M-th start of one operation) the process sends itself SIGKILL.
``<kill>`` 0: no self-kill, the parent kills it after a random delay (it prints ``ready``
on stdout once the manager is started); that reaches inside native calls too, but is only
reproducible up to timing. A run that passes 5000 operations kills itself.

Every operation is recorded in ``<workdir>/journal-<run>`` before (upper-case letter) and
after (lower-case) it happens, with what the checker needs to know what the log must, may
and must not contain (see ``test_crash_sweep.py``). Journal writes bypass the hooks.

Compaction: a forced round of the real cleaner (:class:`kafkacore.log.cleaner.LogCleaner`,
attached to the manager, its progress in the manager's ``cleaner-offset-checkpoint``),
whose swaps go through ``Log.replace_segments`` (Kafka's ``LocalLog.replaceSegments``:
``.cleaned`` -> ``.swap`` -> ``.log``, the old files renamed ``.deleted`` and removed
``file.delete.delay.ms`` later).
"""

from __future__ import annotations

import os
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.log import Log, LogManager, MockScheduler, MockTime, TopicPartition
from kafkacore.log.checkpoints import random_uuid
from kafkacore.log.cleaner import CleanerConfig, LogCleaner
from kafkacore.native import load_backend

T0 = 1_700_000_000_000
MAX_OPS = 5000

BROKER = {
    "node.id": 1,
    "log.initial.task.delay.ms": 500,
    "log.retention.check.interval.ms": 3000,
    "log.flush.scheduler.interval.ms": 2000,
    "log.flush.offset.checkpoint.interval.ms": 2500,
    "log.flush.start.offset.checkpoint.interval.ms": 3500,
    "log.segment.delete.delay.ms": 4000,
    "log.index.interval.bytes": 128,
    "log.index.size.max.bytes": 240,  # 30 offset entries, 20 time entries: indexes fill up
    "log.retention.ms": -1,
}
DELETE_DELAY_MS = 4000
TOPICS: dict[str, dict[str, object]] = {
    "orders": {"internal.segment.bytes": 3000, "flush.ms": 5000},
    "users": {"internal.segment.bytes": 2000, "cleanup.policy": "compact"},
    "tmp": {"internal.segment.bytes": 1500},
}
PARTITIONS = [TopicPartition("orders", 0), TopicPartition("orders", 1), TopicPartition("users", 0)]
TMP = TopicPartition("tmp", 0)
USER_KEYS = [b"u%d" % i for i in range(6)]


def broker_config() -> BrokerConfig:
    return BrokerConfig(BROKER)


def topic_configs() -> dict[str, LogConfig]:
    broker = broker_config()
    return {topic: LogConfig(overrides, broker) for topic, overrides in TOPICS.items()}


def manager_for(
    workdir: Path, backend: Any, time: MockTime, scheduler: MockScheduler
) -> LogManager:
    """The manager both the child and the checker open."""
    configs = topic_configs()
    return LogManager(
        [workdir / "data0", workdir / "data1"],
        broker_config(),
        default_config=configs["orders"],
        topic_configs=configs,
        backend=backend,
        time=time,
        scheduler=scheduler,
        recovery_threads_per_dir=2,
        progress=None,
    )


def record_value(tag: str, i: int, size: int) -> bytes:
    """The value of record ``i`` of the append tagged ``tag`` (the checker rebuilds it)."""
    head = f"{tag}/{i}/".encode()
    return head + b"x" * max(size - len(head), 0)


# -- kill points ------------------------------------------------------------------------------


class KillSwitch:
    """Counts kill points and SIGKILLs the process at the one ``spec`` names: ``"N"``, the
    N-th point of the run (``"0"``: never); ``"<op>:M:N"``, the N-th point from the start of
    the M-th operation ``<op>`` (e.g. ``compact:1:12``)."""

    def __init__(self, spec: str) -> None:
        parts = spec.split(":")
        self.kill_at = int(parts[0]) if len(parts) == 1 else 0
        self.scope = parts[0] if len(parts) == 3 else None
        self.occurrence = int(parts[1]) if len(parts) == 3 else 0
        self.kill_after = int(parts[2]) if len(parts) == 3 else 0
        self.count = 0
        self.seen = 0
        self.armed = -1  # points counted since the targeted operation started

    def enter(self, op: str) -> None:
        if op == self.scope:
            self.seen += 1
            if self.seen == self.occurrence:
                self.armed = 0

    def point(self) -> None:
        self.count += 1
        if self.armed >= 0:
            self.armed += 1
        if self.count == self.kill_at or self.armed == self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    def install(self) -> None:
        for name in (
            "replace",
            "rename",
            "remove",
            "unlink",
            "fsync",
            "mkdir",
            "rmdir",
            "ftruncate",
            "write",
            "pwrite",
        ):
            setattr(os, name, self._wrap(getattr(os, name)))

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def hooked(*args: Any, **kwargs: Any) -> Any:
            self.point()
            return original(*args, **kwargs)

        return hooked


class Journal:
    def __init__(self, path: Path) -> None:
        self._write = os.write  # before the hooks
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def __call__(self, *fields: object) -> None:
        self._write(self._fd, (" ".join(map(str, fields)) + "\n").encode())


def tp_name(tp: TopicPartition) -> str:
    return f"{tp.topic}:{tp.partition}"


# -- the workload -------------------------------------------------------------------------------


class Workload:
    def __init__(self, workdir: Path, backend_name: str, seed: int, run: int, kill: KillSwitch):
        self.workdir = workdir
        self.backend = load_backend(backend_name)
        self.rng = random.Random(f"{seed}/{run}")
        self.run = run
        self.kill = kill
        self.journal = Journal(workdir / f"journal-{run}")
        self.time = MockTime(T0 + run * 10_000_000)
        self.scheduler = MockScheduler(self.time)
        self.manager = manager_for(workdir, self.backend, self.time, self.scheduler)
        self.epoch = run  # leader epochs only grow, one per run
        self.cleaner = LogCleaner(
            self.manager.all_logs,
            CleanerConfig(dedupe_buffer_size=1 << 20),
            self.time,
            checkpoints=self.manager,
        )
        self.manager.attach_cleaner(self.cleaner)

    def start(self) -> None:
        self.manager.startup()
        for tp in PARTITIONS:
            if self.manager.get_log(tp) is None:
                self.journal("N", tp_name(tp))
                self.manager.get_or_create_log(tp.topic, tp.partition)
                self.journal("n", tp_name(tp))

    def live(self) -> list[TopicPartition]:
        return [tp for tp in [*PARTITIONS, TMP] if self.manager.get_log(tp) is not None]

    def log(self, tp: TopicPartition) -> Log:
        log = self.manager.get_log(tp)
        assert log is not None
        return log

    def loop(self) -> None:
        ops: list[tuple[int, Callable[[], None]]] = [
            (55, self.append),
            (5, self.flush),
            (4, self.roll),
            (10, self.tick),
            (5, self.checkpoint),
            (3, self.retention),
            (2, self.truncate),
            (6, self.compact),
            (4, self.delete_or_create),
        ]
        weights = [w for w, _ in ops]
        for op_index in range(MAX_OPS):
            self.op_index = op_index
            self.kill.point()
            op = self.rng.choices(ops, weights)[0][1]
            self.kill.enter(op.__name__)
            op()
        os.kill(os.getpid(), signal.SIGKILL)

    # operations

    def append(self) -> None:
        tp = self.rng.choice(self.live())
        log = self.log(tp)
        n = self.rng.randint(1, 4)
        if tp.topic == "users":
            keys = [self.rng.choice(USER_KEYS) for _ in range(n)]
        else:
            keys = [b"k%d" % self.rng.randrange(1000) for _ in range(n)]
        size = self.rng.randint(10, 120)
        tag = f"{self.run}.{self.op_index}"
        ts = self.time.milliseconds()
        records: list[tuple[int, int, bytes, bytes, list[tuple[str, bytes | None]]]] = [
            (i, ts, keys[i], record_value(tag, i, size), []) for i in range(n)
        ]
        batch = bytes(self.backend.build_batch(records))
        base = log.log_end_offset
        self.journal("A", tp_name(tp), base, tag, size, ",".join(k.decode() for k in keys))
        info = log.append_as_leader(batch, self.epoch)
        self.journal("a", tp_name(tp), info.first_offset, info.last_offset)

    def flush(self) -> None:
        log = self.log(self.rng.choice(self.live()))
        log.flush()
        self.journal("F", tp_name(log.topic_partition), log.recovery_point)

    def roll(self) -> None:
        self.log(self.rng.choice(self.live())).roll()

    def tick(self) -> None:
        self.time.sleep(self.rng.randint(100, 3000))

    def checkpoint(self) -> None:
        choice = self.rng.randrange(3)
        if choice == 0:
            self.manager.checkpoint_recovery_offsets()
        elif choice == 1:
            self.manager.checkpoint_log_start_offsets()
        else:
            self.manager.checkpoint_high_watermarks(
                {log.topic_partition: log.log_end_offset for log in self.manager.all_logs()}
            )

    def retention(self) -> None:
        tp = TopicPartition("orders", self.rng.randrange(2))
        log = self.log(tp)
        start, end = log.log_start_offset, log.log_end_offset
        offset = self.rng.randint(start, start + (end - start) // 3)
        self.journal("R", tp_name(tp), offset)
        log.delete_records_before(offset)
        self.manager.cleanup_logs()
        if self.rng.random() < 0.5:
            self.manager.checkpoint_log_start_offsets()
        self.journal("r", tp_name(tp))

    def truncate(self) -> None:
        tp = TopicPartition("orders", self.rng.randrange(2))
        log = self.log(tp)
        low = max(log.log_start_offset, log.log_end_offset - 12)
        offset = self.rng.randint(low, log.log_end_offset)
        self.journal("T", tp_name(tp), offset)
        self.manager.truncate_to({tp: offset})
        self.journal("t", tp_name(tp), log.log_end_offset)

    def delete_or_create(self) -> None:
        if self.manager.get_log(TMP) is not None:
            self.journal("D", tp_name(TMP))
            self.manager.delete_log(TMP)
            self.journal("d", tp_name(TMP))
        else:
            self.journal("N", tp_name(TMP))
            self.manager.get_or_create_log(TMP.topic, TMP.partition, topic_id=random_uuid())
            self.journal("n", tp_name(TMP))

    def compact(self) -> None:
        tp = TopicPartition("users", 0)
        log = self.log(tp)
        segments = log.segments
        if len(segments) < 3:
            return
        # a round cleans [0, end) with a key map over offsets below the active segment
        cut = segments[-1].base_offset
        self.journal("C", tp_name(tp), 0, cut, cut)
        self.cleaner.clean(log, force=True)
        self.journal("c", tp_name(tp))


def main(argv: list[str]) -> None:
    workdir, backend_name, seed, run, kill_spec = (
        Path(argv[0]),
        argv[1],
        int(argv[2]),
        int(argv[3]),
        argv[4],
    )
    kill = KillSwitch(kill_spec)
    workload = Workload(workdir, backend_name, seed, run, kill)
    kill.install()
    workload.start()
    if kill_spec == "0":
        sys.stdout.write("ready\n")
        sys.stdout.flush()
    workload.loop()


if __name__ == "__main__":
    main(sys.argv[1:])
