"""The bounded broker crash sweep of ``make test``: 10 seeded points (start-up kills,
timed kills, an injected kill point, clean checks, one DumpLogSegments JVM at the end) of
:mod:`broker_crash.sweep`, then proof that its checks bite: the same broker's data
verified against a model missing an acknowledged record (a phantom) and against one
with an acknowledged record that was never written (a loss) must both fail. The
1,000-point sweep is ``make crash-sweep``. Also: the injected kill point
(``broker_crash.launch``) kills the broker at the call it names, and only there."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from broker_crash.sweep import (
    Model,
    SweepBroker,
    Sweeper,
    SweepFailure,
    summary,
    unexpected_reports,
    verify,
)

pytestmark = [pytest.mark.interop, pytest.mark.slow, pytest.mark.timeout(600)]

SEED = 1  # two start-up kills, an injected kill point, two clean checks, all workloads
POINTS = 10


def test_dump_reports_that_are_faults() -> None:
    sections = {
        "p1/compacted-0/00000000000000000000.log": [
            "baseOffset: 4 lastOffset: 7 count: 0 baseSequence: 4 lastSequence: 7 ... "
            "CreateTime: 1700 size: 61 magic: 2 compresscodec: none crc: 1 isvalid: true"
        ]
    }
    benign = [
        "Non-consecutive offsets in /s/p1/acks1-0/00000000000000000120.log",
        "  -1 is followed by 120",
        "Non-consecutive offsets in /s/p1/compacted-0/00000000000000000000.log",
        "  3 is followed by 9",
        "Found timestamp mismatch in :/s/p1/compacted-0/00000000000000000000.timeindex",
        "  Index timestamp: 1700, log timestamp: -1",
    ]
    assert unexpected_reports(benign, sections) == []
    faults = [
        "Non-consecutive offsets in /s/p1/acks1-0/00000000000000000120.log",
        "  125 is followed by 127",
        "Found timestamp mismatch in :/s/p1/compacted-0/00000000000000000000.timeindex",
        "  Index timestamp: 1800, log timestamp: -1",
        "Mismatches in :/s/p1/acks1-0/00000000000000000000.index",
        "  Index offset: 10, log offset: 9",
    ]
    assert len(unexpected_reports(faults, sections)) == 4


def test_injected_kill_point(tmp_path: Path) -> None:
    broker = SweepBroker(tmp_path / "data")
    broker.start()  # without the variable: the plain broker
    broker.stop()
    broker.env = {"KAFKACORE_CRASH_AT": "kafkacore.log.manager:LogManager.startup:1:after"}
    broker.spawn()
    with pytest.raises(AssertionError, match="broker exited -9"):
        broker.wait_started()
    # the next start recovers (no clean shutdown marker) and serves
    broker.env = {}
    broker.start()
    broker.stop()


def test_bounded_broker_crash_sweep(tmp_path: Path) -> None:
    started = time.monotonic()
    sweeper = Sweeper(tmp_path / "sweep", SEED, log=print)
    stats = sweeper.run(POINTS)
    print(summary(stats, SEED), f"wall {time.monotonic() - started:.0f}s")
    assert stats.points == POINTS
    assert stats.timed_kills + stats.injected_kills + stats.injected_missed >= 6, stats
    assert stats.startup_kills >= 1, stats
    assert stats.clean_checks >= 2 and stats.dump_runs >= 1 and stats.dumped_files > 0, stats
    assert stats.acked > 300 and stats.verified > 300, stats
    assert len(stats.workloads) >= 5, stats.workloads

    # The checks can fail: the broker's data against wrong models.
    sweeper.start()
    try:
        truth = sweeper.model.to_json()
        phantom = Model.from_json(truth)
        part = phantom.part("acks1", 0)
        dropped = max(part.acked)
        del part.acked[dropped]
        with pytest.raises(SweepFailure, match=f"offset {dropped} .*never sent there: phantom"):
            verify(sweeper.broker.bootstrap, phantom)
        lost = Model.from_json(truth)
        part = lost.part("acksall", 1)
        end = max(part.acked, default=-1) + 5
        part.acked[end] = "acksall|99|1|k1|"
        with pytest.raises(SweepFailure, match=f"acknowledged offset {end} .* lost"):
            verify(sweeper.broker.bootstrap, lost)
        verify(sweeper.broker.bootstrap, Model.from_json(truth))  # and the truth passes
    finally:
        sweeper.broker.stop()
