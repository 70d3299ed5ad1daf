"""Kafka's checkpoint files, byte for byte, and their validation on read."""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

import pytest

from kafkacore.errors import CorruptCheckpointError, StorageIOError
from kafkacore.log import (
    EpochEntry,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    TopicPartition,
    random_uuid,
    uuid_from_base64,
    uuid_to_base64,
)

# -- offset checkpoints -------------------------------------------------------------------


def test_offset_checkpoint_bytes(tmp_path: Path) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    cp = OffsetCheckpointFile(str(path))
    assert path.read_bytes() == b""  # created empty, as Kafka's CheckpointFile does
    assert cp.read() == {}
    cp.write({TopicPartition("foo", 1): 5, TopicPartition("my-topic.x", 12): 1234})
    assert path.read_bytes() == b"0\n2\nfoo 1 5\nmy-topic.x 12 1234\n"
    assert cp.read() == {TopicPartition("foo", 1): 5, TopicPartition("my-topic.x", 12): 1234}
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


def test_offset_checkpoint_overwrite_and_empty(tmp_path: Path) -> None:
    cp = OffsetCheckpointFile(str(tmp_path / "replication-offset-checkpoint"))
    cp.write({("foo", 1): 5, ("bar", 2): 10})  # type: ignore[dict-item]
    cp.write({TopicPartition("foo", 2): 15})
    assert cp.read() == {TopicPartition("foo", 2): 15}
    cp.write({})
    assert (tmp_path / "replication-offset-checkpoint").read_bytes() == b"0\n0\n"
    assert cp.read() == {}


def test_offset_checkpoint_reads_kafka_variants(tmp_path: Path) -> None:
    path = tmp_path / "log-start-offset-checkpoint"
    # Kafka splits on any whitespace; trailing separators and \r\n line ends are fine
    path.write_bytes(b"0\r\n2\r\nfoo  1\t5 \r\nbar 0 -1\r\n")
    assert OffsetCheckpointFile(str(path)).read() == {
        TopicPartition("foo", 1): 5,
        TopicPartition("bar", 0): -1,
    }
    path.write_bytes(b"0\n")  # a version and nothing else: no entries
    assert OffsetCheckpointFile(str(path)).read() == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"1\n0\n", "Unrecognised version:1, expected version: 0 in checkpoint file at: "),
        (b"x\n0\n", "Malformed line in checkpoint file ["),
        (b"0\n1\nfoo 1\n", "]: foo 1"),
        (b"0\n1\nfoo x 5\n", "]: foo x 5"),
        (b"0\n1\n foo 1 5\n", "]:  foo 1 5"),  # a leading separator makes 4 fields
        (b"0\n2\nfoo 1 5\n", "Expected [2] entries in checkpoint file ["),
        (b"0\n1\nfoo 1 5\nbar 2 6\n", "but found only [2]"),
        (b"0\n1\nfoo 1 9223372036854775808\n", "Malformed line"),
    ],
)
def test_offset_checkpoint_rejects(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "cleaner-offset-checkpoint"
    path.write_bytes(content)
    with pytest.raises(CorruptCheckpointError) as err:
        OffsetCheckpointFile(str(path)).read()
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert isinstance(err.value, StorageIOError)


def test_checkpoint_write_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    cp = OffsetCheckpointFile(str(path))
    cp.write({TopicPartition("a", 0): 1})
    inode = path.stat().st_ino
    (tmp_path / "recovery-point-offset-checkpoint.tmp").write_bytes(b"garbage from a crash")
    cp.write({TopicPartition("a", 0): 2})
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert path.read_bytes() == b"0\n1\na 0 2\n"
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


# -- leader-epoch-checkpoint -------------------------------------------------------------


def test_leader_epoch_checkpoint_bytes(tmp_path: Path) -> None:
    cp = LeaderEpochCheckpointFile.in_dir(str(tmp_path))
    assert cp.path == str(tmp_path / "leader-epoch-checkpoint")
    cp.write([EpochEntry(0, 0), EpochEntry(3, 100)])
    assert (tmp_path / "leader-epoch-checkpoint").read_bytes() == b"0\n2\n0 0\n3 100\n"
    assert cp.read() == [EpochEntry(0, 0), EpochEntry(3, 100)]
    (tmp_path / "leader-epoch-checkpoint").write_bytes(b"0\n1\n0 0 7\n")
    with pytest.raises(CorruptCheckpointError, match=r"Malformed line .*: 0 0 7"):
        cp.read()


def test_leader_epoch_checkpoint_write_if_dir_exists(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    d.mkdir()
    cp = LeaderEpochCheckpointFile.in_dir(str(d))
    (d / "leader-epoch-checkpoint").unlink()
    d.rmdir()
    cp.write_if_dir_exists([EpochEntry(1, 1)])  # the partition is being deleted: no error
    with pytest.raises(StorageIOError):
        cp.write([EpochEntry(1, 1)])


# -- Uuid and partition.metadata -----------------------------------------------------------


def test_uuid_strings_are_kafkas() -> None:
    assert uuid_to_base64(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_to_base64(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"
    value = uuid_from_base64("UXyU9i5ARn6W00ON2taeWA")
    assert uuid_to_base64(value) == "UXyU9i5ARn6W00ON2taeWA"
    assert value.bytes[:4] == bytes([0x51, 0x7C, 0x94, 0xF6])
    with pytest.raises(ValueError, match="too long"):
        uuid_from_base64("A" * 25)
    with pytest.raises(ValueError, match="decoded as 12 bytes"):
        uuid_from_base64("AAAAAAAAAAAAAAAA")
    with pytest.raises(ValueError):
        uuid_from_base64("UXyU9i5ARn6W00ON2tae+A")  # not the URL-safe alphabet
    for _ in range(50):
        u = random_uuid()
        assert u.version == 4 and not uuid_to_base64(u).startswith("-")


def test_partition_metadata_bytes(tmp_path: Path) -> None:
    f = PartitionMetadataFile.in_dir(str(tmp_path))
    assert not f.exists()
    topic_id = uuid_from_base64("3Adc4FjfTeypRWROmQDNIQ")
    f.write(topic_id)
    raw = (tmp_path / "partition.metadata").read_bytes()
    assert raw == b"version: 0\ntopic_id: 3Adc4FjfTeypRWROmQDNIQ"
    meta = f.read()
    assert (meta.version, meta.topic_id) == (0, topic_id)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"version 0\ntopic_id: 3Adc4FjfTeypRWROmQDNIQ", "Malformed line"),
        (b"version: x\ntopic_id: 3Adc4FjfTeypRWROmQDNIQ", "Malformed line"),
        (b"version: -1\ntopic_id: 3Adc4FjfTeypRWROmQDNIQ", "Unrecognized version"),
        (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "Invalid topic ID"),
        (b"version: 0\ntopic_id: short", "Malformed line"),
        (b"version: 0\n", "Malformed line"),
    ],
)
def test_partition_metadata_rejects(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "partition.metadata").write_bytes(content)
    with pytest.raises(CorruptCheckpointError, match=message):
        PartitionMetadataFile.in_dir(str(tmp_path)).read()


def test_partition_metadata_future_version_is_read(tmp_path: Path) -> None:
    # Kafka accepts any version >= 0 for downgrade compatibility
    (tmp_path / "partition.metadata").write_bytes(b"version: 1\ntopic_id: 3Adc4FjfTeypRWROmQDNIQ")
    assert PartitionMetadataFile.in_dir(str(tmp_path)).read().version == 1


# -- meta.properties ------------------------------------------------------------------------


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("utc")
def test_meta_properties_bytes(tmp_path: Path) -> None:
    props = MetaProperties(
        version=1,
        cluster_id="MkU3OEVBNTcwNTJENDM2Qk",
        node_id=1,
        directory_id=uuid_from_base64("3Adc4FjfTeypRWROmQDNIQ"),
    )
    path = MetaProperties.path_in(str(tmp_path))
    props.write(path, timestamp=1_700_000_000)
    assert Path(path).read_bytes() == (
        b"#\n"
        b"#Tue Nov 14 22:13:20 UTC 2023\n"
        b"cluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"
        b"directory.id=3Adc4FjfTeypRWROmQDNIQ\n"
        b"node.id=1\n"
        b"version=1\n"
    )
    assert MetaProperties.read(path) == props
    assert not os.path.exists(path + ".tmp")


def test_meta_properties_reads_what_java_17_writes(tmp_path: Path) -> None:
    # JDK 17's Properties.store writes hash order; readers must not care
    path = tmp_path / "meta.properties"
    path.write_bytes(
        b"#\n#Thu Mar 14 10:31:20 CET 2024\nnode.id=3\ndirectory.id=UXyU9i5ARn6W00ON2taeWA\n"
        b"version=1\ncluster.id=J8qXRwI-Qyi2G0guFTiuYw\n"
    )
    assert MetaProperties.read(str(path)) == MetaProperties(
        1, "J8qXRwI-Qyi2G0guFTiuYw", 3, uuid_from_base64("UXyU9i5ARn6W00ON2taeWA")
    )


def test_meta_properties_v0_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    path.write_bytes(b"#\nversion=0\nbroker.id=5\ncluster.id=abc\n")
    assert MetaProperties.read(str(path)) == MetaProperties(0, "abc", 5, None)
    path.write_bytes(b"broker.id=5\n")  # no version: v0
    assert MetaProperties.read(str(path)) == MetaProperties(0, None, 5, None)
    assert MetaProperties(0, None, 7).to_properties() == {"version": "0", "broker.id": "7"}
    path.write_bytes(b"version=1\ncluster.id=abc\n")
    with pytest.raises(CorruptCheckpointError, match=re.escape("Failed to find node.id")):
        MetaProperties.read(str(path))
    path.write_bytes(b"version=2\n")
    with pytest.raises(
        CorruptCheckpointError, match=re.escape("Unknown meta.properties version number 2")
    ):
        MetaProperties.read(str(path))
    path.write_bytes(b"version=1\ncluster.id=abc\nnode.id=x\n")
    with pytest.raises(
        CorruptCheckpointError, match=re.escape("Unable to read node.id as a base-10")
    ):
        MetaProperties.read(str(path))
    path.write_bytes(b"version=1\ncluster.id=abc\nnode.id=1\ndirectory.id=nope\n")
    with pytest.raises(
        CorruptCheckpointError, match=re.escape("Unable to read directory.id as a Uuid")
    ):
        MetaProperties.read(str(path))
    with pytest.raises(ValueError, match=re.escape("cluster.id was not found.")):
        MetaProperties(1, None, 1)
    with pytest.raises(ValueError, match=re.escape("node.id was not found.")):
        MetaProperties(1, "c", None)
    with pytest.raises(FileNotFoundError):
        MetaProperties.read(str(tmp_path / "absent"))


def test_meta_properties_escapes_like_java(tmp_path: Path) -> None:
    props = MetaProperties(1, "a b=c:d#é", 1)
    text = props.encode(timestamp=0).decode("ascii")
    assert "cluster.id=a b\\=c\\:d\\#\\u00E9\n" in text
    path = tmp_path / "meta.properties"
    path.write_bytes(props.encode(timestamp=0))
    assert MetaProperties.read(str(path)) == props
