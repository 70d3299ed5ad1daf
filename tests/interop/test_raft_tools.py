"""Kafka 4.3.1's own tools on the metadata log kafkacore's Raft client writes: a single
voter elects itself, appends metadata records (FeatureLevel, Topic, NoOp) and snapshots;
``kafka-dump-log --cluster-metadata-decoder`` decodes its ``__cluster_metadata-0`` segment
and ``.checkpoint`` file, and ``kafka-metadata-shell`` loads the snapshot into its image.
"""

from __future__ import annotations

import random
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkacore.raft import (
    Endpoints,
    FileQuorumStateStore,
    OffsetAndEpoch,
    QuorumConfig,
    RaftClient,
    ReplicaKey,
    VoterNode,
    VoterSet,
)
from kafkacore.raft.metadata_log import MetadataLog
from kafkacore.raft.snapshots import snapshot_file_name
from raft.metadata_records import feature_level, no_op, topic
from support.kafka_jars import JVM_FLAGS

pytestmark = [pytest.mark.interop, pytest.mark.downloads]

METADATA_SHELL = "org.apache.kafka.shell.MetadataShell"
TOPIC_ID = uuid.UUID("6b1f25fc-33b5-4ba6-9d38-4b8b5ea8d9a1")


@pytest.fixture(scope="module")
def metadata_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A metadata log directory written by a one-voter quorum: its elections, records
    and a snapshot of the committed state."""
    root = tmp_path_factory.mktemp("kraft")
    log = MetadataLog(root)
    listeners = Endpoints.single("CONTROLLER", "localhost", 9093)
    client = RaftClient(
        node_id=1,
        directory_id=uuid.UUID(int=7),
        cluster_id="kafkacore-tools",
        log=log,
        store=FileQuorumStateStore.in_dir(root),
        config=QuorumConfig(),
        static_voters=VoterSet.of([VoterNode(ReplicaKey(1), listeners)]),
        bootstrap_servers=[],
        listener="CONTROLLER",
        local_listeners=listeners,
        rng=random.Random(1),
    )
    now = 1_800_000_000_000
    client.initialize(now)
    client.poll(now)
    assert client.is_leader()
    state = [feature_level("metadata.version", 30), topic("orders", TOPIC_ID)]
    client.append(state, now)
    client.append([no_op()], now + 1)
    now += 1000
    client.poll(now)
    assert client.high_watermark == log.end_offset == 4  # LeaderChange + 3 records
    snapshot_id = OffsetAndEpoch(4, client.epoch)
    assert client.create_snapshot(
        snapshot_id, state, last_contained_log_timestamp=now - 1000, now=now
    )
    log.close()
    return root


def test_dump_log_decodes_our_segment_and_snapshot(java: Any, metadata_dir: Path) -> None:
    partition = metadata_dir / "__cluster_metadata-0"
    segment = partition / "00000000000000000000.log"
    snapshot = partition / snapshot_file_name(OffsetAndEpoch(4, 1))
    result = java.dump_log_segments([segment, snapshot], "--cluster-metadata-decoder").check()
    out = result.stdout.decode()
    assert "isvalid: false" not in out
    batches = re.findall(
        r"^baseOffset: (\d+) .* partitionLeaderEpoch: (\d+) .* isControl: (\w+)", out, re.M
    )
    # the log: the LeaderChange batch, then the data batch, all of epoch 1
    assert batches[:2] == [("0", "1", "true"), ("1", "1", "false")]
    assert 'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],' in out
    assert (
        '"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":30}'
        in out
    )
    assert (
        f'"type":"TOPIC_RECORD","version":0,"data":{{"name":"orders","topicId":"{_b64(TOPIC_ID)}"}}'
        in out
    )
    assert '"type":"NO_OP_RECORD"' in out
    # the snapshot: header, the state, footer
    assert "Snapshot end offset: 4, epoch: 1" in out
    assert re.search(r'SnapshotHeader \{"version":0,"lastContainedLogTimestamp":\d+\}', out)
    assert 'SnapshotFooter {"version":0}' in out


def _shell(java: Any, snapshot: Path, *command: str) -> str:
    """One ``kafka-metadata-shell`` command, stdin closed.

    Kafka 4.3.1's shell can wait forever at start-up: ``waitUntilCaughtUp`` spins until
    its loader applied an offset, and the loader stays "catching up" for good when it
    handles the last data batch before ``SnapshotFileReader`` exposes the high watermark
    (two event queues racing). Kafka's own ``bootstrap.checkpoint`` from ``kafka-storage
    format`` hangs the same way (1 run in 12 here). So each attempt gets 30 s, and the
    command is run again after a hang, up to 4 times."""
    cmd = ["java", *JVM_FLAGS, "-cp", java.classpath, METADATA_SHELL, "--snapshot", str(snapshot)]
    for _ in range(4):
        try:
            proc = subprocess.run(
                [*cmd, *command],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except subprocess.TimeoutExpired:
            continue
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
        return proc.stdout.decode()
    raise AssertionError(f"kafka-metadata-shell hung 4 times on {snapshot}")


def test_metadata_shell_loads_our_snapshot(java: Any, metadata_dir: Path) -> None:
    snapshot = metadata_dir / "__cluster_metadata-0" / snapshot_file_name(OffsetAndEpoch(4, 1))
    version = _shell(java, snapshot, "cat", "/image/features/metadataVersion")
    topics = _shell(java, snapshot, "ls", "/image/topics/byName")
    assert version.strip() == "Optional[4.3-IV0]", version
    assert topics.split() == ["orders"], topics
    topic_id = _shell(java, snapshot, "cat", "/image/topics/byName/orders/id")
    assert topic_id.strip() == _b64(TOPIC_ID), topic_id


def test_quorum_state_written_by_the_client(metadata_dir: Path) -> None:
    """What the leader persisted: Kafka's version 0 file (kraft.version 0)."""
    text = (metadata_dir / "quorum-state").read_text()
    assert text == (
        '{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1}],"data_version":0}'
    )


def _b64(value: uuid.UUID) -> str:
    import base64

    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()
