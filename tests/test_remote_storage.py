"""Tiered storage's library (kafkacore.log.remote) against a real S3-compatible store
(S3Proxy, one per module) and, for ``__remote_log_metadata``, a real kafkacore broker:

* the object store client: round trips, ranged reads, listing, deletion, errors and
  time-outs when the store is down or hung;
* the remote storage manager: a real segment's files copied under Kafka's names, read
  back byte-equal, a corrupted object refused by its CRC;
* the remote index cache: lookups equal the local indexes', the byte bound holds;
* the throttle;
* the remote log manager end to end on a real log: copy, local retention only after the
  copy, remote reads byte-equal to the local ones, offsets by time across tiers,
  retention across both tiers, orphans of a failed copy cleaned, a deleted partition's
  objects all gone, a follower rebuilt from remote state.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkacore.errors import OffsetOutOfRangeError
from kafkacore.log.remote.errors import (
    CorruptRemoteDataError,
    OffsetMovedToTieredStorageError,
    RemoteResourceNotFoundError,
    RetriableRemoteStorageError,
)
from kafkacore.log.remote.index_cache import RemoteIndexCache
from kafkacore.log.remote.layout import IndexType, object_key, partition_prefix
from kafkacore.log.remote.model import (
    RemoteLogSegmentState,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from kafkacore.log.remote.object_store import S3ObjectStore
from kafkacore.log.remote.quota import RLMQuotaManager
from kafkacore.log.remote.storage import RemoteStorageManager
from kafkacore.record import iter_batches, records
from support.brokers import Broker, BrokerFactory
from support.object_store import ObjectStoreServer, bucket_name
from support.ports import free_port
from support.tiering import Tiering, all_local_bytes, log_config, make_log


@pytest.fixture
def store(object_store: ObjectStoreServer) -> S3ObjectStore:
    bucket = object_store.create_bucket(bucket_name())
    return S3ObjectStore(object_store.storage_config(bucket))


# -- the object store ---------------------------------------------------------------------------


def test_object_store_round_trips(store: S3ObjectStore, tmp_path: Path) -> None:
    data = os.urandom(100_000)
    store.put("a/b/one", data)
    assert store.get("a/b/one") == data
    assert store.get_range("a/b/one", 1000, 5000) == data[1000:5000]
    assert store.get_range("a/b/one", 99_000, 200_000) == data[99_000:]
    assert store.size("a/b/one") == len(data)
    big = tmp_path / "big"
    big.write_bytes(os.urandom(20 << 20))  # multipart: above one 8 MiB part
    assert store.put_file("a/c/big", str(big)) == 20 << 20
    assert store.get("a/c/big") == big.read_bytes()
    assert [i.key for i in store.list("a/")] == ["a/b/one", "a/c/big"]
    store.delete(["a/b/one", "a/c/missing"])
    assert [i.key for i in store.list("a/")] == ["a/c/big"]
    with pytest.raises(RemoteResourceNotFoundError):
        store.get("a/b/one")


def test_an_unreachable_store_fails_within_its_time_out() -> None:
    store = S3ObjectStore(
        {
            "s3.bucket": "nowhere",
            "s3.endpoint": f"http://127.0.0.1:{free_port()}",
            "s3.access.key.id": "k",
            "s3.secret.access.key": "s",
            "s3.request.timeout.ms": "1000",
            "s3.connect.timeout.ms": "500",
            "s3.max.retries": "2",
            "s3.retry.timeout.ms": "3000",
        }
    )
    t0 = time.monotonic()
    with pytest.raises(RetriableRemoteStorageError):
        store.get("x")
    assert time.monotonic() - t0 < 10


def test_a_hung_store_fails_within_its_time_out(tmp_path: Path) -> None:
    server = ObjectStoreServer(tmp_path).start()
    try:
        bucket = server.create_bucket(bucket_name())
        config = {
            **server.storage_config(bucket),
            "s3.request.timeout.ms": "1000",
            "s3.max.retries": "1",
            "s3.retry.timeout.ms": "2500",
        }
        store = S3ObjectStore(config)
        store.put("k", b"v")
        server.pause()
        t0 = time.monotonic()
        with pytest.raises(RetriableRemoteStorageError):
            store.get("k")
        assert time.monotonic() - t0 < 10
        server.resume()
        assert store.get("k") == b"v"
    finally:
        server.stop()


def test_storage_manager_copies_kafkas_files(store: S3ObjectStore, tmp_path: Path) -> None:
    from kafkacore.log.checkpoints import LeaderEpochCheckpointFile
    from kafkacore.log.remote.model import RemoteLogSegmentId, RemoteLogSegmentMetadata
    from kafkacore.log.remote.storage import LogSegmentData

    log = make_log(tmp_path)
    segment, following = log.segments[0], log.segments[1]
    tip = TopicIdPartition(log.topic_id or uuid.uuid4(), "orders", 0)
    metadata = RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate(tip),
        segment.base_offset,
        following.base_offset - 1,
        segment.max_timestamp,
        1,
        0,
        segment.size,
        {0: 0},
    )
    paths = segment.file_paths()
    rsm = RemoteStorageManager(store)
    epochs = LeaderEpochCheckpointFile.encode(log.leader_epoch_cache.entries())
    custom = rsm.copy_log_segment_data(
        metadata,
        LogSegmentData(paths[0], paths[1], paths[2], None, None, epochs),
    )
    metadata = RemoteLogSegmentMetadata(**{**metadata.__dict__, "custom_metadata": custom})
    keys = [i.key for i in store.list(partition_prefix(tip))]
    assert sorted(k.rsplit("/", 1)[1] for k in keys) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "leader-epoch-checkpoint",
    ]
    assert rsm.fetch_log_segment(metadata, 0) == Path(paths[0]).read_bytes()
    assert rsm.fetch_log_segment(metadata, 100, 199) == Path(paths[0]).read_bytes()[100:200]
    assert rsm.fetch_index(metadata, IndexType.OFFSET) == Path(paths[1]).read_bytes()
    assert rsm.fetch_index(metadata, IndexType.TRANSACTION) == b""
    assert LeaderEpochCheckpointFile.decode(rsm.fetch_index(metadata, IndexType.LEADER_EPOCH)) == (
        log.leader_epoch_cache.entries()
    )
    # a corrupted object is refused, not served
    index = bytearray(Path(paths[1]).read_bytes())
    index[5] ^= 0xFF
    store.put(object_key(metadata, IndexType.OFFSET), bytes(index))
    with pytest.raises(CorruptRemoteDataError):
        rsm.fetch_index(metadata, IndexType.OFFSET)
    rsm.delete_log_segment_data(metadata)
    assert store.list(partition_prefix(tip)) == []


def test_quota_throttles_to_its_rate() -> None:
    now = [1000.0]
    quota = RLMQuotaManager(1000, window_num=11, window_size_s=1, clock=lambda: now[0])
    assert not quota.is_quota_exceeded()
    quota.record(5000)
    assert quota.is_quota_exceeded()
    wait_ms = quota.throttle_time_ms()
    assert 3900 <= wait_ms <= 5100
    now[0] += wait_ms / 1000
    assert not quota.is_quota_exceeded()
    assert RLMQuotaManager((1 << 63) - 1).throttle_time_ms() == 0


# -- the remote log manager on a real log, metadata in a real broker ------------------------


@pytest.fixture(scope="module")
def metadata_broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory("num.partitions=1")


@pytest.fixture
def tiering(metadata_broker: Broker, store: S3ObjectStore, tmp_path: Path) -> Iterator[Tiering]:
    t = Tiering(metadata_broker, store, make_log(tmp_path))
    try:
        yield t
    finally:
        t.close()
        t.log.close()


def test_copy_then_local_retention_then_remote_reads(tiering: Tiering) -> None:
    log = tiering.log
    expected = all_local_bytes(log, 0)
    closed = len(log.segments) - 1
    assert closed >= 3
    # KIP-1023: nothing uploaded yet, the earliest pending upload is the log start
    assert log.offset_for_timestamp(-6).offset == 0
    # local retention of 0 bytes deletes nothing before a copy
    log.update_config(log_config(log.config, local_retention_bytes=0))
    assert log.delete_old_segments() == 0
    copied = tiering.rlm.run_copy_task(tiering.tp)
    assert copied == closed
    assert tiering.rlm.run_copy_task(tiering.tp) == 0  # nothing copied twice
    finished = tiering.rlm.remote_segments(tiering.tp)
    assert [m.state for m in finished] == [RemoteLogSegmentState.COPY_SEGMENT_FINISHED] * closed
    assert log.highest_offset_in_remote_storage == log.active_segment.base_offset - 1
    # now local retention goes, the log start stays at 0
    assert log.delete_old_segments() == closed
    assert log.log_start_offset == 0
    assert log.local_log_start_offset == log.active_segment.base_offset
    with pytest.raises(OffsetMovedToTieredStorageError):
        log.read(0, 1 << 20)
    # every offset below the local start comes back from the bucket, byte-equal
    remote = []
    offset = 0
    while offset < log.local_log_start_offset:
        result = tiering.rlm.read(tiering.tp, offset, 4096)
        assert result.records
        remote.append(result.records)
        h_last = 0
        for pos, _m, _s in iter_batches(result.records):
            h_last = records(result.records, pos)[-1].offset
        offset = h_last + 1
    remote_bytes = b"".join(remote)
    assert remote_bytes == expected[: len(remote_bytes)]
    assert offset == log.local_log_start_offset
    # ListOffsets' special offsets
    assert log.offset_for_timestamp(-4).offset == log.local_log_start_offset
    assert log.offset_for_timestamp(-5).offset == log.local_log_start_offset - 1
    assert log.offset_for_timestamp(-6).offset == log.local_log_start_offset
    assert log.offset_for_timestamp(-2).offset == 0
    # offsets by time across tiers: a timestamp inside the tiered part
    first = records(expected, 0)[0]
    found = tiering.rlm.find_offset_by_timestamp(tiering.tp, first.timestamp + 5, 0)
    assert found is not None and found[1] == 50  # 10 records per batch, +1 ms per batch
    # the index cache served the lookups
    assert len(tiering.rlm.index_cache) >= 1


def test_a_corrupt_remote_batch_is_reported_never_served(tiering: Tiering) -> None:
    tiering.rlm.run_copy_task(tiering.tp)
    m = tiering.rlm.remote_segments(tiering.tp)[0]
    store = tiering.rlm.rsm.store
    key = object_key(m, IndexType.SEGMENT)
    data = bytearray(store.get(key))
    data[100] ^= 0x55  # inside the first batch's records
    store.put(key, bytes(data))
    tiering.log.update_config(log_config(tiering.log.config, local_retention_bytes=0))
    tiering.log.delete_old_segments()
    with pytest.raises(CorruptRemoteDataError):
        tiering.rlm.read(tiering.tp, 0, 4096)


def test_retention_across_both_tiers_and_orphans(tiering: Tiering, store: S3ObjectStore) -> None:
    log, rlm = tiering.log, tiering.rlm
    rlm.run_copy_task(tiering.tp)
    segments = rlm.remote_segments(tiering.tp)
    # an orphan: a copy that started and never finished (its leader died)
    from kafkacore.log.remote.model import RemoteLogSegmentId, RemoteLogSegmentMetadata

    orphan = RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate(tiering.tip), 0, 10, 0, 2, 0, 100, {0: 0}
    )
    tiering.rlmm.add_remote_log_segment_metadata(orphan)
    store.put(object_key(orphan, IndexType.SEGMENT), b"partial")
    # retention.bytes over both tiers: keep about two segments' worth
    keep = 2 * segments[0].segment_size_in_bytes
    log.update_config(log_config(log.config, retention_bytes=keep))
    deleted = rlm.run_expiration_task(tiering.tp)
    remaining = rlm.remote_segments(tiering.tp)
    assert deleted >= 2  # the orphan and at least one expired segment
    assert all(
        m.segment_id != orphan.segment_id for m in tiering.rlmm.cache(tiering.tip).segments()
    )
    assert not [
        i for i in store.list(partition_prefix(tiering.tip)) if orphan.segment_id.id.hex in i.key
    ]
    assert log.log_start_offset == remaining[0].start_offset
    local_only = sum(s.size for s in log.segments if s.base_offset > remaining[-1].end_offset)
    total = local_only + sum(m.segment_size_in_bytes for m in remaining)
    assert total - keep < remaining[0].segment_size_in_bytes  # no more could go
    with pytest.raises(OffsetOutOfRangeError) as below_start:  # gone from both tiers
        log.read(0, 100)
    assert not isinstance(below_start.value, OffsetMovedToTieredStorageError)


def test_deleting_a_partition_deletes_every_object(tiering: Tiering, store: S3ObjectStore) -> None:
    tiering.rlm.run_copy_task(tiering.tp)
    assert store.list(partition_prefix(tiering.tip))
    assert tiering.log.topic_id is not None
    futures = tiering.rlm.stop_partitions({tiering.tp: tiering.log.topic_id}, delete_remote=True)
    for f in futures:
        f.result(timeout=60)
    assert store.list(partition_prefix(tiering.tip)) == []
    assert (
        tiering.rlmm.delete_state(tiering.tip)
        is RemotePartitionDeleteState.DELETE_PARTITION_FINISHED
    )


def test_a_failed_partition_deletion_is_retried(tiering: Tiering, store: S3ObjectStore) -> None:
    """The store fails the deletion's final sweep once (as a store that is down for a
    while): the deletion is tried again after the back-off and leaves no object behind."""
    rlm = tiering.rlm
    rlm.run_copy_task(tiering.tp)
    assert store.list(partition_prefix(tiering.tip))
    original = rlm.rsm.delete_partition_data
    sweeps: list[int] = []

    def fail_once(tip: TopicIdPartition) -> int:
        sweeps.append(1)
        if len(sweeps) == 1:
            raise RetriableRemoteStorageError("the store is down")
        return original(tip)

    rlm.rsm.delete_partition_data = fail_once  # type: ignore[method-assign]
    assert tiering.log.topic_id is not None
    futures = rlm.stop_partitions({tiering.tp: tiering.log.topic_id}, delete_remote=True)
    for f in futures:
        f.result(timeout=60)
    assert len(sweeps) == 2
    assert store.list(partition_prefix(tiering.tip)) == []
    assert (
        tiering.rlmm.delete_state(tiering.tip)
        is RemotePartitionDeleteState.DELETE_PARTITION_FINISHED
    )


def test_a_lost_leadership_uploads_nothing_it_keeps(tiering: Tiering, store: S3ObjectStore) -> None:
    rlm = tiering.rlm
    started = threading.Event()
    original = rlm.rsm.copy_log_segment_data

    def copy_then_lose_leadership(metadata: Any, data: Any) -> bytes:
        out = original(metadata, data)
        started.set()
        assert tiering.log.topic_id is not None
        rlm.on_leadership_change({}, {tiering.tp: (tiering.log.topic_id, 1)})
        return out

    rlm.rsm.copy_log_segment_data = copy_then_lose_leadership  # type: ignore[method-assign]
    with pytest.raises(Exception, match="orders-0"):  # the task is cancelled
        rlm.run_copy_task(tiering.tp)
    assert started.is_set()
    assert tiering.rlmm.cache(tiering.tip).segments() == []  # DELETE_SEGMENT_FINISHED
    assert tiering.log.highest_offset_in_remote_storage == -1
    assert store.list(partition_prefix(tiering.tip)) == []


def test_a_follower_rebuilds_from_remote_state(
    metadata_broker: Broker, store: S3ObjectStore, tmp_path: Path
) -> None:
    leader_log = make_log(tmp_path / "leader")
    leader = Tiering(metadata_broker, store, leader_log)
    try:
        leader.rlm.run_copy_task(leader.tp)
        leader_log.update_config(log_config(leader_log.config, local_retention_bytes=0))
        leader_log.delete_old_segments()
        local_start = leader_log.local_log_start_offset
        follower_log = make_log(tmp_path / "follower", batches=0, topic_id=leader_log.topic_id)
        follower = Tiering(metadata_broker, store, follower_log)
        try:
            assert follower_log.topic_id is not None
            follower.rlm.on_leadership_change({}, {follower.tp: (follower_log.topic_id, 0)})
            epoch = leader_log.leader_epoch_cache.epoch_for_offset(local_start - 1)
            assert epoch is not None
            next_offset = follower.rlm.build_remote_log_aux_state(
                follower.tp, local_start, leader_log.log_start_offset, epoch
            )
            assert next_offset == local_start
            assert follower_log.log_end_offset == local_start
            assert follower_log.log_start_offset == 0
            assert (
                follower_log.leader_epoch_cache.entries() == leader_log.leader_epoch_cache.entries()
            )
            # the follower now reads the tiered part from the bucket as the leader does
            assert (
                follower.rlm.read(follower.tp, 0, 4096).records
                == leader.rlm.read(leader.tp, 0, 4096).records
            )
        finally:
            follower.close()
            follower_log.close()
    finally:
        leader.close()
        leader_log.close()


def test_index_cache_is_bounded(tiering: Tiering, tmp_path: Path) -> None:
    tiering.rlm.run_copy_task(tiering.tp)
    segments = tiering.rlm.remote_segments(tiering.tp)
    one = tiering.rlm.index_cache.get(segments[0]).size
    cache = RemoteIndexCache(str(tmp_path / "cache"), tiering.rlm.rsm, max_bytes=one * 2 + 1)
    by_base = {s.base_offset: s for s in tiering.log.segments}
    for m in segments:
        entry = cache.get(m)
        local = by_base[m.start_offset].files
        for offset in range(m.start_offset, m.end_offset + 1, 7):
            assert entry.position_for(offset) == local.lookup_index(offset)[1]
        ts = m.max_timestamp_ms - 1
        assert entry.offset_for_timestamp(ts) == local.lookup_time_index(ts)[1]
    assert cache.size_bytes <= one * 2 + 1
    assert len(cache) <= 2
    assert len(os.listdir(cache.directory)) == 3 * len(cache)
    cache.close()
