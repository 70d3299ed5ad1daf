"""The bounded broker crash sweep of ``make test``: 10 seeded points (start-up kills,
timed kills, an injected kill point, clean checks, one DumpLogSegments JVM at the end) of
:mod:`broker_crash.sweep`, then proof that its checks bite: the same broker's data
verified against a model missing an acknowledged record (a phantom) and against one
with an acknowledged record that was never written (a loss) must both fail. The
1,000-point sweep is ``make crash-sweep``. Also: the injected kill point
(``broker_crash.launch``) kills the broker at the call it names, and only there."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest

from broker_crash.sweep import (
    Model,
    SweepBroker,
    Sweeper,
    SweepFailure,
    commit_loop,
    summary,
    unexpected_reports,
    verify,
    verify_commits,
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


def test_churn_records_carried_into_the_next_generation() -> None:
    """Point 855 of seed 20251125: 29 records sent to the churn topic without an answer
    before its deletion were written at the start of the topic created next (its producer
    retried them by name, as it would against Kafka). They may be in the next generation,
    not in one after the point that sent them."""
    model = Model(churn="exists", churn_generation=385)
    model.part("churn", 0).maybe.add("churn385|854|0|k1|")
    model.part("churn", 0).acked[0] = "churn385|854|1|k2|"
    model.churn_deleted()
    assert model.churn == "absent" and "churn-0" not in model.partitions
    assert model.churn_carried == ["churn385|854|0|k1|"]  # the acknowledged one is not
    model.churn_generation += 1
    model.churn_created()
    assert model.churn == "exists"
    assert model.part("churn", 0).maybe == {"churn385|854|0|k1|"}
    assert Model.from_json(model.to_json()).churn_carried == model.churn_carried
    # in the same point, it can still go to the generation after (nothing answered it)
    model.churn_deleted()
    model.churn_created()
    assert model.part("churn", 0).maybe == {"churn385|854|0|k1|"}
    # the next point: verify() resolved the sent records, the producer is gone
    model.part("churn", 0).maybe.clear()
    model.churn_carried.clear()
    model.churn_deleted()
    model.churn_created()
    assert model.part("churn", 0).maybe == set()


def test_a_commit_in_flight_at_the_kill_lands_before_it_is_checked(tmp_path: Path) -> None:
    """Point 3 of seed 1 in CI: a commit in flight when the broker was killed was not
    there at the next check (the model dropped it), then was at a later one. The killed
    point's consumer lives on while its close waits for the dead coordinator, and
    re-sends the commit once the broker is back. Here the commit is held in flight
    (the broker stopped with SIGSTOP, then killed); the sweep waits for that consumer to
    close before it checks, and a check after that still finds the same offset."""
    sweeper = Sweeper(tmp_path / "sweep", SEED, log=print)
    sweeper.start()
    try:
        sweeper.create_topics()
        model, stop = sweeper.model, threading.Event()
        loop = threading.Thread(
            target=commit_loop,
            args=(stop, sweeper.broker.bootstrap, model, sweeper.lock, random.Random(3)),
            kwargs={"closing": sweeper.closing},
        )
        loop.start()
        deadline = time.monotonic() + 30
        while len(model.commits_acked) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sweeper.broker.proc is not None
        os.kill(sweeper.broker.proc.pid, signal.SIGSTOP)
        while not any(model.commits_sent.values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the OffsetCommit is written to the stopped broker's socket
        sweeper.broker.kill()
        stop.set()
        loop.join(30)
        (partition, sent), *_ = ((p, s) for p, s in model.commits_sent.items() if s)
        assert sent == [model.next_commit - 1], model
        assert model.commits_acked.get(partition) != sent[0]
        assert len(sweeper.closing) == 1 and sweeper.closing[0].is_alive()

        sweeper.start()  # waits for the killed point's consumer to close
        assert sweeper.closing == []
        verify_commits(sweeper.broker.bootstrap, model)
        assert model.commits_acked[partition] == sent[0]  # librdkafka re-sent it
        time.sleep(1)
        verify_commits(sweeper.broker.bootstrap, model)  # and nothing lands after the check
    finally:
        sweeper.broker.kill()


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
