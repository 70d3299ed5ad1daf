"""The metadata log on disk (``__cluster_metadata-0`` over kafkacore's Log, snapshots as
``.checkpoint`` files) and the rules of :class:`~kafkacore.raft.log.RaftLog` it shares with
the in-memory log: fetch validation, diverging truncation, snapshots replacing the log,
recovery of a corrupt tail and of partial snapshots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkacore.raft.log import MemoryRaftLog, RaftLog
from kafkacore.raft.metadata_log import METADATA_LOG_DIR_NAME, MetadataLog
from kafkacore.raft.records import build_data_batch, iter_batches
from kafkacore.raft.snapshots import build_snapshot, read_snapshot
from kafkacore.raft.types import OffsetAndEpoch, ValidKind
from raft.metadata_records import feature_level, no_op


@pytest.fixture(params=["memory", "file"])
def raft_log(request: pytest.FixtureRequest, tmp_path: Path) -> RaftLog:
    if request.param == "memory":
        return MemoryRaftLog()
    return MetadataLog(tmp_path, segment_bytes=1024)


def _leader_append(log: RaftLog, epoch: int, count: int) -> None:
    values = [no_op() for _ in range(count)]
    log.initialize_leader_epoch(epoch)
    log.append_as_leader(build_data_batch(log.end_offset, epoch, 1000, values), epoch)


def test_epochs_validation_and_diverging_truncation(raft_log: RaftLog) -> None:
    _leader_append(raft_log, 1, 3)  # 0..2 epoch 1
    _leader_append(raft_log, 2, 2)  # 3..4 epoch 2
    _leader_append(raft_log, 4, 2)  # 5..6 epoch 4
    assert raft_log.end_offset == 7 and raft_log.last_fetched_epoch == 4
    assert raft_log.end_offset_for_epoch(2) == OffsetAndEpoch(5, 2)
    assert raft_log.end_offset_for_epoch(3) == OffsetAndEpoch(5, 2)  # largest epoch <= 3
    assert raft_log.validate_offset_and_epoch(5, 2).kind is ValidKind.VALID
    assert raft_log.validate_offset_and_epoch(6, 2) == (ValidKind.DIVERGING, OffsetAndEpoch(5, 2))
    assert raft_log.validate_offset_and_epoch(4, 3) == (ValidKind.DIVERGING, OffsetAndEpoch(5, 2))
    # the leader ends epoch 2 at 5 and never had epoch 4: cut there
    assert raft_log.truncate_to_end_offset(OffsetAndEpoch(5, 2)) == 5
    assert raft_log.end_offset == 5 and raft_log.last_fetched_epoch == 2
    # a leader whose epoch 2 ended earlier than ours: min of both ends
    assert raft_log.truncate_to_end_offset(OffsetAndEpoch(3, 1)) == 3
    assert raft_log.end_offset == 3 and raft_log.last_fetched_epoch == 1
    raft_log.update_high_watermark(3)
    with pytest.raises(ValueError, match="below the current high watermark"):
        raft_log.truncate_to(2)


def test_follower_appends_keep_offsets_and_epochs(raft_log: RaftLog) -> None:
    leader = MemoryRaftLog()
    _leader_append(leader, 3, 4)
    raft_log.append_as_follower(leader.read(0, 1 << 20))
    assert raft_log.end_offset == 4 and raft_log.last_fetched_epoch == 3
    # a fetch that ends in a partial batch: only whole batches are appended
    _leader_append(leader, 3, 2)
    data = leader.read(4, 1 << 20)
    assert raft_log.append_as_follower(data[:-5]) is None
    assert raft_log.end_offset == 4
    with pytest.raises(ValueError):
        raft_log.append_as_follower(leader.read(0, 1 << 20))  # below the log end
    assert raft_log.read(0, 1 << 20) == leader.read(0, 1 << 20)[: len(raft_log.read(0, 1 << 20))]


def test_snapshots_move_the_log_start_and_answer_fetches(raft_log: RaftLog) -> None:
    _leader_append(raft_log, 1, 5)
    _leader_append(raft_log, 2, 5)
    raft_log.update_high_watermark(8)
    snapshot_id = OffsetAndEpoch(8, 2)
    writer = raft_log.create_snapshot(snapshot_id)
    assert writer is not None
    writer.append(
        build_snapshot(
            snapshot_id,
            [feature_level("metadata.version", 30)],
            timestamp_ms=5,
            last_contained_log_timestamp=4,
        )
    )
    writer.freeze()
    assert raft_log.latest_snapshot_id() == snapshot_id
    assert raft_log.delete_before_snapshot(snapshot_id)
    assert raft_log.start_offset == 8
    # a fetch below the log start is told to fetch the snapshot
    assert raft_log.validate_offset_and_epoch(3, 1) == (ValidKind.SNAPSHOT, snapshot_id)
    assert raft_log.validate_offset_and_epoch(8, 2).kind is ValidKind.VALID
    data = raft_log.read_snapshot(snapshot_id)
    assert data is not None and read_snapshot(data).values == (
        feature_level("metadata.version", 30),
    )


def test_a_downloaded_snapshot_replaces_a_shorter_log(raft_log: RaftLog) -> None:
    _leader_append(raft_log, 1, 2)
    snapshot_id = OffsetAndEpoch(50, 7)
    writer = raft_log.create_snapshot_unchecked(snapshot_id)
    assert writer is not None
    writer.append(build_snapshot(snapshot_id, [], timestamp_ms=1, last_contained_log_timestamp=1))
    writer.freeze()
    assert raft_log.truncate_to_latest_snapshot()
    assert (raft_log.start_offset, raft_log.end_offset) == (50, 50)
    assert raft_log.last_fetched_epoch == 7 and raft_log.high_watermark == 50


def test_reopen_recovers_log_snapshots_and_drops_partial_ones(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path, segment_bytes=1024)
    for epoch in (1, 2, 3):
        _leader_append(log, epoch, 40)  # several 1 KiB segments
    log.update_high_watermark(100)
    snapshot_id = OffsetAndEpoch(100, 3)
    writer = log.create_snapshot(snapshot_id)
    assert writer is not None
    writer.append(
        build_snapshot(snapshot_id, [no_op()], timestamp_ms=1, last_contained_log_timestamp=1)
    )
    writer.freeze()
    log.delete_before_snapshot(snapshot_id)
    log.flush()
    segments = len(log.log.segments)
    log.close()
    directory = tmp_path / METADATA_LOG_DIR_NAME
    (directory / "00000000000000000120-0000000003-99.checkpoint.part").write_bytes(b"half")
    assert (directory / "partition.metadata").read_text() == (
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    )
    reopened = MetadataLog(tmp_path, segment_bytes=1024)
    assert reopened.snapshot_ids() == [snapshot_id]
    # no log-start checkpoint for this log (Kafka's neither): it starts at its first
    # segment, which holds the snapshot's offset
    first = reopened.log.segments[0].base_offset
    assert reopened.start_offset == first <= 100 and reopened.end_offset == 120
    assert reopened.last_fetched_epoch == 3 and len(reopened.log.segments) == segments
    assert not list(directory.glob("*.part"))
    reopened.close()


def test_a_corrupt_tail_is_cut_on_recovery(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path)
    _leader_append(log, 1, 3)
    _leader_append(log, 1, 3)
    log.flush()
    segment = Path(log.log.active_segment.log_path)
    log.close()
    size = segment.stat().st_size
    with open(segment, "r+b") as f:  # flip a byte of the last batch's records
        f.seek(size - 3)
        byte = f.read(1)
        f.seek(size - 3)
        f.write(bytes([byte[0] ^ 0xFF]))
    reopened = MetadataLog(tmp_path)
    assert reopened.end_offset == 3
    batches = list(iter_batches(reopened.read(0, 1 << 20)))
    assert [(b.base_offset, b.last_offset, b.epoch) for b in batches] == [(0, 2, 1)]
    reopened.close()
    assert os.path.getsize(segment) < size
