"""A three-voter KRaft quorum of local processes over real sockets (the asyncio driver):
it elects a leader, replicates, survives the SIGKILL of its leader (a new leader in a
higher epoch, commits go on, the killed voter rejoins and catches up), and the three
metadata logs end byte-identical."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.raft.metadata_log import METADATA_LOG_DIR_NAME, MetadataLog
from kafkacore.raft.records import iter_batches
from support.ports import free_port

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


class Voter:
    def __init__(self, node_id: int, directory: Path, voters: str) -> None:
        self.node_id = node_id
        self.directory = directory
        self.voters = voters
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": f"{REPO / 'python'}{os.pathsep}{TESTS}"}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "raft.quorum_node",
                "--id",
                str(self.node_id),
                "--dir",
                str(self.directory),
                "--voters",
                self.voters,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.directory.parent / f"node{self.node_id}.log", "ab"),  # noqa: SIM115
        )

    def status(self) -> dict[str, Any] | None:
        path = self.directory / "status.json"
        try:
            state: dict[str, Any] = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        if self.process is None or state.get("pid") != self.process.pid:
            return None  # an earlier process's
        return state

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        (self.directory / "status.json").unlink(missing_ok=True)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@pytest.fixture
def voters(tmp_path: Path) -> Iterator[list[Voter]]:
    ports = {i: free_port() for i in (1, 2, 3)}
    spec = ",".join(f"{i}@127.0.0.1:{p}" for i, p in ports.items())
    nodes = [Voter(i, tmp_path / f"node{i}", spec) for i in ports]
    for node in nodes:
        node.directory.mkdir()
        node.start()
    yield nodes
    for node in nodes:
        node.stop()


def _until(what: str, check: Callable[[], Any], timeout_s: float = 60) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _leader(nodes: list[Voter]) -> tuple[Voter, dict[str, Any]] | None:
    for node in nodes:
        state = node.status()
        if state is not None and state["state"] == "Leader" and state["hw"] is not None:
            return node, state
    return None


def _all_at_least(nodes: list[Voter], hw: int) -> bool:
    states = [n.status() for n in nodes]
    return all(s is not None and s["hw"] is not None and s["hw"] >= hw for s in states)


def _committed_entries(directory: Path) -> list[tuple[int, int, bytes]]:
    log = MetadataLog(directory)
    try:
        data = log.read(0, 1 << 30) if log.end_offset else b""
        return [
            (batch.base_offset + i, batch.epoch, value or b"")
            for batch in iter_batches(data)
            for i, value in enumerate(batch.values)
        ]
    finally:
        log.close()


def test_three_voters_elect_replicate_and_survive_sigkill_of_the_leader(
    voters: list[Voter],
) -> None:
    leader, state = _until("a leader", lambda: _leader(voters))
    first_epoch = state["epoch"]
    _until("replication to every voter", lambda: _all_at_least(voters, 30))
    killed_at = max(s["hw"] for s in (n.status() for n in voters) if s is not None)

    leader.kill()
    others = [n for n in voters if n is not leader]
    new_leader, new_state = _until("a new leader", lambda: _leader(others), timeout_s=30)
    assert new_leader is not leader and new_state["epoch"] > first_epoch
    _until("commits after the failover", lambda: _all_at_least(others, killed_at + 30), 30)

    leader.start()  # the killed voter rejoins as a follower and catches up
    rejoined = new_state["hw"] + 30
    _until("the killed voter catching up", lambda: _all_at_least(voters, rejoined), 60)

    for node in voters:
        node.stop()
    logs = {
        node.node_id: (
            node.directory / METADATA_LOG_DIR_NAME / "00000000000000000000.log"
        ).read_bytes()
        for node in voters
    }
    shortest = min(len(data) for data in logs.values())
    assert shortest > 0
    for node_id, data in logs.items():
        assert data[:shortest] == logs[voters[0].node_id][:shortest], f"node {node_id} diverges"
    entries = _committed_entries(voters[0].directory)
    epochs = {epoch for _offset, epoch, _value in entries}
    assert first_epoch in epochs and new_state["epoch"] in epochs
    values = [value for _offset, _epoch, value in entries]
    assert len(values) == len(set(values)), "a record was committed twice"
