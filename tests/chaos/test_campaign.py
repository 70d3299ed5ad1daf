"""The bounded chaos run of ``make test``: one seeded run (60 s of faults, under
3 minutes in all) whose checkers must all read 0. The 20-run campaign is ``make chaos``
(``python -m chaos.campaign``), outside the normal collection."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chaos.campaign import run_once
from chaos.check import check, read_history
from chaos.schedule import make_schedule
from support.zookeeper import ZooKeeperServer

SEED = 4  # kill, pause, disk-full, kill-controller
DURATION_S = 60.0


def test_schedule_is_seeded() -> None:
    assert make_schedule(3, 60) == make_schedule(3, 60)
    assert make_schedule(3, 60) != make_schedule(4, 60)
    assert make_schedule(3, 60)[0].kind == "kill"
    assert all(f.kind != "disk-full" for f in make_schedule(5, 300, disk_fault=False))


@pytest.mark.slow
def test_bounded_chaos_run(zookeeper: ZooKeeperServer, tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_once(zookeeper, tmp_path / f"seed-{SEED}", SEED, duration_s=DURATION_S)
    elapsed = time.monotonic() - started
    print(f"{result.summary()} wall={elapsed:.0f}s")
    history = tmp_path / f"seed-{SEED}" / "history.jsonl"
    assert check(read_history(history)).summary() == result.summary()
    assert result.faults >= 3, result.summary()
    assert result.acked > 1000, result.summary()
    assert result.recoveries, "no leadership recovery measured"
    assert result.ok, f"{result.summary()}\n{result.examples}"
    assert result.exited == 0, result.examples
