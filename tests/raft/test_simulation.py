"""Raft safety by deterministic simulation (see ``sim.py``): seeded runs of 3 and 5 voters
with observers under message loss, delay and reordering, partitions, crashes with lost
unflushed data, restarts, resignations, snapshots (and FetchSnapshot) and - for
kraft.version 1 - voters added and removed; every run must keep election safety, leader
completeness, state-machine safety, a monotonic high watermark and log matching, and
converge once the faults stop.

Variants: every message through Kafka's wire format, and every replica on a real
metadata log directory. ``make test`` runs a bounded number of seeds; ``make raft-sim``
runs many more
(``RAFT_SIM_SEEDS``, ``RAFT_SIM_FIRST_SEED``). The last tests break a rule of the client on
purpose and require the checker to notice: a checker that cannot fail proves nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.raft import RaftClient
from kafkacore.raft.leader import LeaderState
from raft.sim import Faults, SafetyViolation, Simulation

FIRST_SEED = int(os.environ.get("RAFT_SIM_FIRST_SEED", "0"))
SEEDS = int(os.environ.get("RAFT_SIM_SEEDS", "0"))
RUN_MS = int(os.environ.get("RAFT_SIM_RUN_MS", "60000"))


def _seeds(default: int) -> list[int]:
    return list(range(FIRST_SEED, FIRST_SEED + (SEEDS or default)))


def _run(sim: Simulation, run_ms: int = RUN_MS) -> Simulation:
    sim.run(run_ms)
    sim.heal_and_settle(30_000)
    leaders = [n.node_id for n in sim.nodes.values() if n.client and n.client.is_leader()]
    assert len(leaders) == 1, f"seed {sim.seed}: no single leader after healing: {leaders}"
    marks = {n.node_id: n.client.high_watermark for n in sim.nodes.values() if n.client}
    assert len(set(marks.values())) == 1, f"seed {sim.seed}: replicas did not converge: {marks}"
    assert sim.checker.committed_end > 0, f"seed {sim.seed}: nothing was committed"
    return sim


@pytest.mark.parametrize("seed", _seeds(16))
def test_three_voters_and_an_observer(seed: int) -> None:
    sim = _run(Simulation(seed, voters=3, observers=1))
    assert sim.stats["elections"] >= 1 and sim.stats["crashes"] >= 1


@pytest.mark.parametrize("seed", _seeds(6))
def test_five_voters_and_two_observers(seed: int) -> None:
    _run(Simulation(seed, voters=5, observers=2))


@pytest.mark.parametrize("seed", _seeds(8))
def test_dynamic_voters_added_and_removed(seed: int) -> None:
    """kraft.version 1: the voters come from the bootstrap snapshot's VotersRecord, and an
    admin adds observers and removes voters through the leader while faults go on."""
    _run(Simulation(seed, voters=3, observers=2, dynamic=True))


@pytest.mark.parametrize("seed", _seeds(2))
def test_every_message_through_kafkas_wire_format(seed: int) -> None:
    """Each request and response encoded to Kafka's bytes (raft.wire at the latest
    versions) and decoded back on its way, the dynamic quorum's included."""
    _run(Simulation(seed, voters=3, observers=1, dynamic=bool(seed % 2), on_the_wire=True))


@pytest.mark.parametrize("seed", _seeds(1))
def test_on_disk_metadata_logs(seed: int, tmp_path: Path) -> None:
    """Every replica on a real ``__cluster_metadata-0`` directory (MetadataLog, 4 KiB
    segments, quorum-state files): a crash closes its files unflushed, a restart
    recovers the directory."""
    _run(Simulation(seed, voters=3, observers=1, storage=tmp_path), run_ms=min(RUN_MS, 30_000))


def test_the_simulation_is_deterministic() -> None:
    a = Simulation(7, voters=3, observers=1)
    b = Simulation(7, voters=3, observers=1)
    a.run(20_000)
    b.run(20_000)
    assert a.stats == b.stats
    assert a.checker.values == b.checker.values
    assert [n.log.end_offset for n in a.nodes.values()] == [
        n.log.end_offset for n in b.nodes.values()
    ]


def test_faults_exercise_every_path() -> None:
    """Over a few seeds the simulation reaches every path the checker is meant to watch:
    elections, crashes, partitions, snapshots and snapshot downloads, reconfigurations."""
    totals: dict[str, int] = {}
    for seed in range(3):
        sim = _run(Simulation(seed, voters=3, observers=2, dynamic=True))
        for key, value in sim.stats.items():
            totals[key] = totals.get(key, 0) + value
    for key in ("elections", "crashes", "partitions", "snapshots", "fetch_snapshots"):
        assert totals[key] > 0, (key, totals)
    assert totals["reconfigurations"] > 0, totals


# -- the checker can fail -----------------------------------------------------------------


def _violation(breakage: Callable[[RaftClient], None], seeds: int = 40, **kwargs: Any) -> str:
    """The first safety violation of ``seeds`` runs with ``breakage`` applied to every
    client (an assertion error if the checker noticed none)."""
    faults = Faults(snapshot_every=0, resign_every_ms=4_000)
    for seed in range(seeds):
        sim = Simulation(seed, faults=faults, broken=breakage, **kwargs)
        try:
            sim.run(40_000)
        except SafetyViolation as exc:
            return str(exc)
    raise AssertionError(f"the checker found no violation in {seeds} broken runs")


def test_checker_catches_votes_granted_to_stale_logs() -> None:
    """Voting for any candidate, whatever its log: a leader without committed entries."""

    def grant_always(client: RaftClient) -> None:
        quorum = client.quorum
        original = quorum.can_grant_vote
        quorum.can_grant_vote = lambda key, up_to_date, pre_vote: original(key, True, pre_vote)  # type: ignore[method-assign]

    text = _violation(grant_always)
    assert "leader completeness" in text or "safety" in text, text


def test_checker_catches_two_votes_in_one_epoch() -> None:
    """Forgetting the vote cast in an epoch: two leaders of one epoch."""

    def forget_votes(client: RaftClient) -> None:
        quorum = client.quorum
        quorum.can_grant_vote = lambda key, up_to_date, pre_vote: up_to_date  # type: ignore[method-assign]

    text = _violation(forget_votes, voters=5, observers=1)
    assert "election safety" in text or "safety" in text or "completeness" in text, text


@pytest.fixture
def commit_without_majority(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A leader whose high watermark is its own log end (no majority needed)."""

    def own_end(self: LeaderState) -> bool:
        local = self.voter_states.get(self.local.key.id)
        end = local.end_offset if local is not None else None
        if end is None or end <= self.epoch_start_offset:
            return False
        if self.high_watermark is not None and end <= self.high_watermark:
            return False
        self.high_watermark = end
        return True

    monkeypatch.setattr(LeaderState, "_maybe_update_high_watermark", own_end)
    yield


@pytest.mark.usefixtures("commit_without_majority")
def test_checker_catches_commits_without_a_majority() -> None:
    text = _violation(lambda client: None)
    assert "safety" in text or "completeness" in text or "HW" in text, text
