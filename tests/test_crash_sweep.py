"""Crash-point sweep: a child process (``tests/support/crash_child.py``) appends, rolls, flushes,
checkpoints, applies retention, truncates, compacts and deletes/re-creates a partition
through a :class:`~kafkacore.log.LogManager`, and is killed with SIGKILL at a random point;
the directories are then reopened here and checked. Points are chained: each child starts
from what the previous kill (and check) left, so recovery itself is also interrupted.

Kill points (see ``crash_child.py``): every file-system call of the Python layer and every
operation boundary, reproducible (the point number is the kill): 60% drawn over a whole
run, 15% in the start-up (loading, recovery and swap completion interrupted), 25% inside
a compaction's swap sequence; plus "timed" kills from outside after a random delay, which
also land inside native calls (reproducible up to timing only, hence in chains of their
own).

After each kill, reopening must succeed, and then:

* every batch is CRC-valid (``validate_batch``), offsets strictly increase across the log
  (every batch present exactly once), and every record is one the child wrote, at the
  offset it was acknowledged at (no phantom, resurrected or torn data);
* every acknowledged record is present unless an operation was allowed to remove it
  (retention below a ``delete_records_before`` offset, truncation, compaction of a key
  superseded before the compaction's cut-off, deletion of the partition); SIGKILL keeps
  the page cache, so this is stronger than "every batch up to the last flush", which it
  implies;
* each offset-index entry names the last offset of the batch at its position, each
  time-index entry the last offset and max timestamp of a batch, and ``translate_offset``
  finds every batch; the log end offset follows the last batch; the leader epoch cache
  gives each batch's epoch;
* no ``.cleaned`` or ``.swap`` file is left after loading, and no ``.deleted`` file or
  ``-delete`` directory once ``file.delete.delay.ms`` has passed; every checkpoint parses.

Then the manager is shut down cleanly, and half of the time the clean shutdown markers are
removed so that the next start recovers.

Parameters: native: 6 event chains + 2 timed chains of 25 points (200 kills); pure: 2 event
chains of 25 points (50 kills); about 35 s for both on 2 idle cores. ``KAFKACORE_CRASH_SEED``
picks the master seed (default fixed; ``random`` draws one); a failure names the seed,
chain, point and kill point. Start-up kill points are reproducible up to the interleaving
of the parallel recovery threads.
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

from kafkacore.log import (
    LogManager,
    MockScheduler,
    MockTime,
    TopicPartition,
)
from kafkacore.native import load_backend
from support import crash_child, log_checks
from support.log_checks import check_log_structure

CHILD = crash_child.__file__
POINTS_PER_CHAIN = 25
#: Kill points are drawn in [1, MAX_KILL_POINT]: a start-up and about 450 operations.
MAX_KILL_POINT = {"native": 1500, "pure": 2500}
CHAINS = {"native": [("event", 6), ("timed", 2)], "pure": [("event", 2)]}
TIMED_DELAY_S = (0.0, 0.25)


def master_seed() -> int:
    value = os.environ.get("KAFKACORE_CRASH_SEED", "20250611")
    return random.SystemRandom().randrange(2**32) if value == "random" else int(value)


# -- what the log must, may and must not hold ------------------------------------------------


@dataclass
class PartitionModel:
    """Per partition: the records that may be on disk, which of them may be missing, and
    every key's offsets ever written (compaction keeps a record unless its key appears
    again before the compaction's cut-off)."""

    exists: str = "yes"  # "yes", "no", or "maybe" (a create or delete was interrupted)
    records: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    batch_base: dict[int, int] = field(default_factory=dict)  # offset -> its batch's base
    may_vanish: set[int] = field(default_factory=set)
    flushed: int = 0  # the last journaled flush point
    history: dict[bytes, set[int]] = field(default_factory=dict)

    def clear(self) -> None:
        self.records.clear()
        self.batch_base.clear()
        self.may_vanish.clear()
        self.history.clear()
        self.flushed = 0


class Model:
    def __init__(self) -> None:
        self.partitions: dict[TopicPartition, PartitionModel] = {}

    def get(self, tp: TopicPartition) -> PartitionModel:
        if tp not in self.partitions:
            self.partitions[tp] = PartitionModel(exists="no")
        return self.partitions[tp]

    def apply(self, lines: list[str]) -> None:
        """Replay one run's journal."""
        for line in lines:
            kind, name, *args = line.split()
            topic, partition = name.split(":")
            part = self.get(TopicPartition(topic, int(partition)))
            if kind == "A":
                base, tag, size = int(args[0]), args[1], int(args[2])
                keys = [k.encode() for k in args[3].split(",")]
                for i, key in enumerate(keys):
                    value = crash_child.record_value(tag, i, size)
                    part.records[base + i] = (key, value)
                    part.batch_base[base + i] = base
                    part.may_vanish.add(base + i)  # in flight until acknowledged
                    part.history.setdefault(key, set()).add(base + i)
            elif kind == "a":
                first, last = int(args[0]), int(args[1])
                part.may_vanish.difference_update(range(first, last + 1))
            elif kind == "F":
                part.flushed = max(part.flushed, int(args[0]))
            elif kind == "R":
                part.may_vanish.update(o for o in part.records if o < int(args[0]))
            elif kind == "T":
                # truncation removes the whole batch holding the target offset
                cut = part.batch_base.get(int(args[0]), int(args[0]))
                part.may_vanish.update(o for o in part.records if o >= cut)
            elif kind == "t":
                end = int(args[0])
                for o in [o for o in part.records if o >= end]:
                    del part.records[o]
                    part.batch_base.pop(o, None)
                    part.may_vanish.discard(o)
                for offsets in part.history.values():
                    offsets.difference_update({o for o in offsets if o >= end})
            elif kind == "C":
                start, end, cut = map(int, args)
                for o, (record_key, _) in part.records.items():
                    later = part.history.get(record_key, set())
                    if start <= o < end and any(o < h < cut for h in later):
                        part.may_vanish.add(o)
            elif kind == "D":
                part.exists = "maybe"
            elif kind == "d":
                part.exists = "no"
                part.clear()
            elif kind == "N":
                if part.exists == "no":
                    part.exists = "maybe"
                    part.clear()
            elif kind == "n":
                part.exists = "yes"
            # r, c: nothing more to learn

    def required(self, tp: TopicPartition) -> list[int]:
        part = self.partitions[tp]
        return sorted(o for o in part.records if o not in part.may_vanish)


# -- the checks -------------------------------------------------------------------------------


def leftover_files(workdir: Path) -> Iterator[Path]:
    for data in ("data0", "data1"):
        for partition in (workdir / data).iterdir():
            if partition.is_dir():
                yield from partition.iterdir()


def check_log_files(backend: ModuleType, manager: LogManager, model: Model) -> None:
    for log in manager.all_logs():
        tp = log.topic_partition
        part = model.get(tp)
        assert part.exists != "no", f"{tp} is back although its deletion completed"
        where = f"{tp}"
        batches = check_log_structure(backend, log)
        # content: everything on disk was written by the child, at that offset
        present: dict[int, tuple[bytes, bytes]] = {}
        for b in batches:
            for offset, key, value in b.records:
                expected = part.records.get(offset)
                assert expected == (key, value), (
                    f"{where}: offset {offset} holds {key!r}={value[:20]!r}..., expected "
                    f"{expected and expected[0]!r}: phantom, resurrected or misplaced data"
                )
                present[offset] = (key, value)
        # nothing acknowledged is missing unless an operation could remove it
        for offset in model.required(tp):
            flushed = "flushed" if offset < part.flushed else "acknowledged (not flushed)"
            assert offset in present, f"{where}: {flushed} offset {offset} is lost"
            assert offset >= log.log_start_offset, (
                f"{where}: log start offset {log.log_start_offset} passed required offset {offset}"
            )
        # resolve the model to what is on disk
        part.exists = "yes"
        part.records = dict(present)
        part.batch_base = {o: b.base for b in batches for o, _, _ in b.records}
        part.may_vanish = {o for o in present if o < log.log_start_offset}
        for offsets in part.history.values():
            offsets.difference_update({o for o in offsets if o >= log.log_end_offset})
    loaded = {log.topic_partition for log in manager.all_logs()}
    for tp, part in model.partitions.items():
        if tp in loaded:
            continue
        assert part.exists != "yes", f"{tp} is gone although its deletion never started"
        part.exists = "no"
        part.clear()


def check_checkpoints(workdir: Path) -> None:
    for data in ("data0", "data1"):
        log_checks.check_checkpoints(workdir / data)


def reopen_and_check(
    workdir: Path, backend: ModuleType, model: Model, run: int, rng: random.Random
) -> None:
    mock_time = MockTime(crash_child.T0 + run * 10_000_000 + 5_000_000)
    manager = crash_child.manager_for(workdir, backend, mock_time, MockScheduler(mock_time))
    manager.startup()
    try:
        stray = [p.name for p in leftover_files(workdir) if p.name.endswith((".cleaned", ".swap"))]
        assert not stray, f"left after loading: {stray}"
        check_log_files(backend, manager, model)
        mock_time.sleep(crash_child.DELETE_DELAY_MS + 1)
        stray = [p.name for p in leftover_files(workdir) if p.name.endswith(".deleted")]
        assert not stray, f"left after file.delete.delay.ms: {stray}"
        dirs = [p.name for d in ("data0", "data1") for p in (workdir / d).iterdir() if p.is_dir()]
        assert not [d for d in dirs if d.endswith("-delete")], f"-delete dirs left: {dirs}"
        check_checkpoints(workdir)
    finally:
        manager.shutdown()
    if rng.random() < 0.5:
        for data in ("data0", "data1"):
            (workdir / data / ".kafka_cleanshutdown").unlink()


# -- the sweep --------------------------------------------------------------------------------


@dataclass
class Chain:
    backend: str
    mode: str
    index: int
    seed: int

    @property
    def name(self) -> str:
        return f"{self.backend}-{self.mode}-{self.index}"


def run_child(chain: Chain, workdir: Path, run: int, kill: str, delay: float) -> str:
    args = [sys.executable, CHILD, str(workdir), chain.backend, str(chain.seed), str(run), kill]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if kill == "0":
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 30)
            if ready and process.stdout.readline() == b"ready\n":
                time.sleep(delay)
            process.kill()
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode != -9:
        raise AssertionError(
            f"the child ended with {process.returncode} instead of SIGKILL:\n{stderr.decode()}"
        )
    return stderr.decode()


def kill_spec(chain: Chain, rng: random.Random) -> tuple[str, float]:
    """Where the next child dies: ``(spec, delay)`` (see ``crash_child.KillSwitch``)."""
    if chain.mode == "timed":
        return "0", rng.uniform(*TIMED_DELAY_S)
    draw = rng.random()
    if draw < 0.15:  # start-up: loading, recovery, swap completion
        return str(rng.randint(1, 40)), 0.0
    if draw < 0.40:  # inside a compaction's file sequence
        return f"compact:{rng.randint(1, 2)}:{rng.randint(1, 40)}", 0.0
    return str(rng.randint(1, MAX_KILL_POINT[chain.backend])), 0.0


def run_chain(chain: Chain, base_dir: Path, backend: ModuleType) -> int:
    workdir = base_dir / chain.name
    workdir.mkdir()
    rng = random.Random(f"{chain.seed}/{chain.name}")
    model = Model()
    for run in range(POINTS_PER_CHAIN):
        kill, delay = kill_spec(chain, rng)
        point = f"seed {chain.seed}, chain {chain.name}, point {run}, " + (
            f"kill {kill}" if kill != "0" else f"timed kill after {delay:.3f}s"
        )
        try:
            run_child(chain, workdir, run, kill, delay)
            journal = workdir / f"journal-{run}"
            lines = journal.read_text().splitlines() if journal.exists() else []
            model.apply(lines)
            reopen_and_check(workdir, backend, model, run, rng)
        except Exception as exc:
            raise AssertionError(
                f"crash sweep failed at {point} (workdir {workdir}; reproduce with "
                f"KAFKACORE_CRASH_SEED={chain.seed}): {exc}"
            ) from exc
    return POINTS_PER_CHAIN


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend_under_test", ["native", "pure"])
def test_crash_sweep(tmp_path: Path, backend_under_test: str) -> None:
    seed = master_seed()
    print(f"crash sweep master seed: {seed} (KAFKACORE_CRASH_SEED)")
    backend = load_backend(backend_under_test)
    chains = [
        Chain(backend_under_test, mode, i, seed)
        for mode, count in CHAINS[backend_under_test]
        for i in range(count)
    ]
    start = time.monotonic()
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        kills = sum(pool.map(lambda c: run_chain(c, tmp_path, backend), chains))
    print(f"{kills} kills, {time.monotonic() - start:.1f}s")
    assert kills >= {"native": 200, "pure": 50}[backend_under_test]
