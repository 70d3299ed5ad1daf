"""A mixed KRaft quorum: two kafkacore voters (the Raft client over the asyncio driver,
``tests/raft/quorum_node.py``) and one Apache Kafka 4.3.1 controller (``kafka.Kafka``
with ``process.roles=controller``), static voters (kraft.version 0), one cluster id.

They elect a leader and replicate the metadata log (the kafkacore leader writes the
bootstrap feature levels and NoOpRecords, Kafka's writes its own records); the leader is
SIGKILLed - whichever kind it is - and the two others elect a new one in a higher epoch
and keep committing; after a second failover the other kind has led too. At the end the
three ``__cluster_metadata-0`` segments agree byte for byte on their common prefix.
"""

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

from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from kafkacore.raft.metadata_log import METADATA_LOG_DIR_NAME
from support.cluster import wait_until
from support.kafka_jars import JVM_FLAGS, require
from support.ports import free_port

pytestmark = [pytest.mark.interop, pytest.mark.downloads, pytest.mark.slow]

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
KAFKA_ID = 3
SERVER_JVM = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")


class Member:
    """One voter: a kafkacore process or Kafka's controller JVM."""

    def __init__(self, node_id: int, home: Path, voters: str, cluster_id: str, libs: Path):
        self.node_id = node_id
        self.home = home
        self.voters = voters
        self.cluster_id = cluster_id
        self.libs = libs
        self.process: subprocess.Popen[bytes] | None = None
        self.kind = "kafka" if node_id == KAFKA_ID else "kafkacore"

    @property
    def metadata_dir(self) -> Path:
        return self.home / "data" if self.kind == "kafka" else self.home

    def start(self) -> None:
        out = open(self.home.parent / f"node{self.node_id}.log", "ab")  # noqa: SIM115
        if self.kind == "kafka":
            cmd = [
                "java",
                *SERVER_JVM,
                *JVM_FLAGS,
                "-cp",
                f"{self.libs}/*",
                "kafka.Kafka",
                str(self.home / "server.properties"),
            ]
            env = None
        else:
            cmd = [
                sys.executable,
                "-m",
                "raft.quorum_node",
                "--id",
                str(self.node_id),
                "--dir",
                str(self.home),
                "--voters",
                self.voters,
                "--cluster-id",
                self.cluster_id,
                "--metadata",
                "--append-every-ms",
                "100",
            ]
            env = {**os.environ, "PYTHONPATH": f"{REPO / 'python'}{os.pathsep}{TESTS}"}
        self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def status(self) -> dict[str, Any] | None:
        if self.kind == "kafka" or self.process is None or self.process.poll() is not None:
            return None
        try:
            state: dict[str, Any] = json.loads((self.home / "status.json").read_text())
        except (FileNotFoundError, ValueError):
            return None
        return state if state.get("pid") == self.process.pid else None


def _format_kafka(member: Member, controller_port: int) -> None:
    member.home.mkdir()
    props = member.home / "server.properties"
    props.write_text(
        "\n".join(
            [
                "process.roles=controller",
                f"node.id={KAFKA_ID}",
                f"controller.quorum.voters={member.voters}",
                f"listeners=CONTROLLER://127.0.0.1:{controller_port}",
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
                f"log.dirs={member.metadata_dir}",
                "controller.quorum.election.timeout.ms=500",
                "controller.quorum.fetch.timeout.ms=1000",
                "controller.quorum.request.timeout.ms=1000",
                "",
            ]
        )
    )
    subprocess.run(
        [
            require("java"),
            *SERVER_JVM,
            "-cp",
            f"{member.libs}/*",
            "kafka.tools.StorageTool",
            "format",
            "-t",
            member.cluster_id,
            "-c",
            str(props),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def quorum(kafka_libs: Path, tmp_path: Path) -> Iterator[list[Member]]:
    ports = {i: free_port() for i in (1, 2, KAFKA_ID)}
    voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in ports.items())
    cluster_id = uuid_to_base64(random_uuid())
    members = [Member(i, tmp_path / f"node{i}", voters, cluster_id, kafka_libs) for i in ports]
    for member in members:
        if member.kind == "kafka":
            _format_kafka(member, ports[KAFKA_ID])
        else:
            member.home.mkdir()
        member.start()
    yield members
    for member in members:
        member.stop()


def _view(members: list[Member]) -> tuple[int, int, int] | None:
    """``(leader id, epoch, smallest HW)`` when every running kafkacore voter agrees on a
    leader and knows a high watermark."""
    states = [
        m.status()
        for m in members
        if m.kind == "kafkacore" and m.process and m.process.poll() is None
    ]
    if not states or any(s is None for s in states):
        return None
    leaders = {(s["leader"], s["epoch"]) for s in states if s is not None}
    if len(leaders) != 1:
        return None
    ((leader, epoch),) = leaders
    marks = [s["hw"] for s in states if s is not None]
    if leader is None or any(hw is None for hw in marks):
        return None
    return leader, epoch, min(marks)


def _progress(members: list[Member], *, above_epoch: int, past_hw: int) -> Callable[[], Any]:
    def check() -> Any:
        view = _view(members)
        if view is None or view[1] <= above_epoch or view[2] <= past_hw:
            return None
        return view

    return check


def test_two_kafkacore_voters_and_a_kafka_controller(quorum: list[Member]) -> None:
    by_id = {m.node_id: m for m in quorum}
    leader, epoch, hw = wait_until(_progress(quorum, above_epoch=0, past_hw=10), 120, "a leader")
    kinds_led = [by_id[leader].kind]
    failovers = 0
    while failovers < 2 or set(kinds_led) != {"kafka", "kafkacore"}:
        assert failovers < 6, f"the leaders were all of one kind: {kinds_led}"
        victim = by_id[leader]
        victim.kill()
        down = [victim]
        if victim.kind == "kafkacore" and "kafka" not in kinds_led:
            # let Kafka lead: the other kafkacore voter restarts too, later than Kafka's
            # fetch timeout runs out, so Kafka asks for votes first
            other = next(m for m in quorum if m.kind == "kafkacore" and m is not victim)
            other.kill()
            other.start()
        leader, epoch, hw = wait_until(
            _progress(quorum, above_epoch=epoch, past_hw=hw + 10),
            90,
            f"a new leader after killing node {victim.node_id} ({victim.kind})",
        )
        failovers += 1
        kinds_led.append(by_id[leader].kind)
        for member in down:
            member.start()
            wait_until(
                lambda m=member: m.kind == "kafka" or m.status(), 60, "the killed voter back"
            )

    time.sleep(3)  # let the restarted voter catch up
    for member in quorum:
        member.stop()
    segments = {
        m.node_id: (
            m.metadata_dir / METADATA_LOG_DIR_NAME / "00000000000000000000.log"
        ).read_bytes()
        for m in quorum
    }
    shortest = min(len(d) for d in segments.values())
    assert shortest > 1000
    reference = segments[1][:shortest]
    for node_id, data in segments.items():
        assert data[:shortest] == reference, f"node {node_id}'s segment diverges"
