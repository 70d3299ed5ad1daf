"""The asyncio driver over real sockets: a three-voter KRaft quorum of local processes
elects a leader, replicates, survives the SIGKILL of its leader (a new leader in a higher
epoch, commits go on, the killed voter rejoins and catches up), and the three metadata
logs end byte-identical; bad requests on the wire get Kafka's errors or a closed
connection, and the quorum keeps serving."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import struct
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.protocol import headers as h
from kafkacore.protocol.errors import ErrorCode
from kafkacore.raft import (
    Endpoints,
    FileQuorumStateStore,
    QuorumConfig,
    RaftClient,
    ReplicaKey,
    VoterNode,
    VoterSet,
    wire,
)
from kafkacore.raft.driver import RaftDriver
from kafkacore.raft.messages import BeginQuorumEpochRequest, DescribeQuorumRequest, VoteRequest
from kafkacore.raft.metadata_log import METADATA_LOG_DIR_NAME, MetadataLog
from kafkacore.raft.records import iter_batches
from support.cluster import wait_until
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
    leader, state = wait_until(lambda: _leader(voters), 60, "a leader")
    first_epoch = state["epoch"]
    wait_until(lambda: _all_at_least(voters, 30), 60, "replication to every voter")
    killed_at = max(s["hw"] for s in (n.status() for n in voters) if s is not None)

    leader.kill()
    others = [n for n in voters if n is not leader]
    new_leader, new_state = wait_until(lambda: _leader(others), 30, "a new leader")
    assert new_leader is not leader and new_state["epoch"] > first_epoch
    wait_until(lambda: _all_at_least(others, killed_at + 30), 30, "commits after the failover")

    leader.start()  # the killed voter rejoins as a follower and catches up
    rejoined = new_state["hw"] + 30
    wait_until(lambda: _all_at_least(voters, rejoined), 60, "the killed voter catching up")

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


# -- bad input on the wire ----------------------------------------------------------------


async def _exchange(port: int, frame: bytes) -> bytes | None:
    """Send one frame; the response frame, or ``None`` if the connection was closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(frame)
        await writer.drain()
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        return await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    finally:
        writer.close()


def _request_frame(api_key: int, version: int, correlation_id: int, body: Any) -> bytes:
    parts: list[Any] = []
    flexible = version in wire.SCHEMAS[api_key][0].flexible
    h.write_request_header(
        h.RequestHeader(api_key, version, correlation_id, "tester"),
        h.request_header_version(flexible),
        parts,
    )
    wire.SCHEMAS[api_key][0].writer(version)(body, parts)
    data = b"".join(parts)
    return struct.pack(">i", len(data)) + data


def _response(api_key: int, version: int, frame: bytes) -> Any:
    flexible = version in wire.SCHEMAS[api_key][1].flexible
    _, pos = h.read_response_header(frame, h.response_header_version(api_key, flexible))
    return wire.SCHEMAS[api_key][1].reader(version)(memoryview(frame), pos, len(frame))[0]


def test_the_driver_answers_bad_requests_with_kafkas_errors_and_keeps_serving(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        listeners = Endpoints.single("CONTROLLER", "127.0.0.1", 0)
        client = RaftClient(
            node_id=1,
            directory_id=uuid.UUID(int=11),
            cluster_id="wire-test",
            log=MetadataLog(tmp_path),
            store=FileQuorumStateStore.in_dir(tmp_path),
            config=QuorumConfig(),
            static_voters=VoterSet.of([VoterNode(ReplicaKey(1), listeners)]),
            bootstrap_servers=[],
            listener="CONTROLLER",
            local_listeners=listeners,
        )
        driver = RaftDriver(client, host="127.0.0.1", port=0)
        await driver.start()
        try:
            while not client.is_leader():
                await driver.changed(0.1)
            port = driver.port
            epoch = client.epoch
            stale = BeginQuorumEpochRequest("wire-test", 2, epoch - 1)
            _, body = wire.request_to_wire(stale, 1)
            frame = _request_frame(53, 1, 7, body)
            answer = _response(53, 1, await _exchange(port, frame))  # type: ignore[arg-type]
            assert answer.topics[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH
            assert answer.topics[0].partitions[0].leader_id == 1
            future = VoteRequest("wire-test", ReplicaKey(2), epoch + 1, epoch, 0)
            _, body = wire.request_to_wire(future, 2)
            body.topics[0].topic_name = "not-the-metadata-topic"
            frame = _request_frame(52, 2, 8, body)
            answer = _response(52, 2, await _exchange(port, frame))  # type: ignore[arg-type]
            assert answer.error_code == ErrorCode.INVALID_REQUEST and answer.topics == []
            # an oversized frame, and bytes that are no request: the connection is closed
            assert await _exchange(port, struct.pack(">i", 200 << 20) + b"x" * 16) is None
            assert (
                await _exchange(port, struct.pack(">i", 12) + b"\x00\x34\x00\x02" + b"\xff" * 8)
                is None
            )
            # ApiVersions: the quorum APIs and kraft.version; an unknown version gets v0 + 35
            cls: Any = wire.SCHEMAS[18][0].cls
            frame = _request_frame(
                18, 3, 9, cls(client_software_name="t", client_software_version="1")
            )
            versions = _response(18, 3, await _exchange(port, frame))  # type: ignore[arg-type]
            keys = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
            assert keys[52] == (0, 2) and keys[59] == (0, 1) and keys[1][0] == 4
            assert [
                (f.name, f.min_version, f.max_version) for f in versions.supported_features
            ] == [("kraft.version", 0, 1)]
            unknown = struct.pack(">hhi", 18, 99, 10) + b"\x00\x01t\x00"
            answer = _response(
                18, 0, await _exchange(port, struct.pack(">i", len(unknown)) + unknown)
            )  # type: ignore[arg-type]
            assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION
            # still serving, still leading, nothing changed
            describe = _request_frame(
                55, 2, 11, wire.request_to_wire(DescribeQuorumRequest(), 2)[1]
            )
            answer = _response(55, 2, await _exchange(port, describe))  # type: ignore[arg-type]
            assert answer.topics[0].partitions[0].leader_id == 1
            assert client.is_leader() and client.epoch == epoch
        finally:
            await driver.stop()
            client.log.flush()

    asyncio.run(scenario())
