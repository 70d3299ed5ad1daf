"""Tiered storage (KIP-405) through a client of the cluster: what a broker's remote log
metadata manager and the readers of a bucket ask of ``__remote_log_metadata`` and of the
brokers.

* :class:`ClientMetadataTopic` - ``__remote_log_metadata`` read and appended with
  kafkacore's synchronous client (the broker's metadata manager uses it on the broker's
  own listener, as Kafka's uses a producer and a consumer);
* :func:`committed_segments` - the tiered segments of a partition that
  ``__remote_log_metadata`` says are committed (``COPY_SEGMENT_FINISHED``), in offset
  order: only they count (a copy that died half-way left objects that must not be read);
  a few KiB, once per query on a Spark driver; the segments are then read straight from
  the bucket (:class:`kafkacore.log.remote.reader.TieredSegmentReader`);
* :func:`tiering_summary` - each partition's two tiers as tools show them.

Thread-safety: :class:`ClientMetadataTopic` locks its client; the functions open their own.
"""

from __future__ import annotations

import threading
import time
from typing import NamedTuple

from kafkacore.client._client import Client
from kafkacore.log.remote.metadata import TopicBasedRemoteLogMetadataManager
from kafkacore.log.remote.model import RemoteLogSegmentMetadata, TopicIdPartition
from kafkacore.log.remote.records import REMOTE_LOG_METADATA_TOPIC
from kafkacore.record import batch_header, build_batch, iter_batches, records

__all__ = ["ClientMetadataTopic", "PartitionTiering", "committed_segments", "tiering_summary"]


class ClientMetadataTopic:
    """:class:`MetadataTopic` through kafkacore's synchronous client (acks=all appends,
    read_uncommitted fetches up to the high watermark). Thread-safe (one lock around the
    client, which is not)."""

    def __init__(self, bootstrap_servers: str, *, client_id: str, timeout_s: float = 30.0) -> None:
        self._client = Client(bootstrap_servers, client_id=client_id, timeout_s=timeout_s)
        self._lock = threading.Lock()
        self.topic = REMOTE_LOG_METADATA_TOPIC

    def ensure_topic(self, partitions: int, replication_factor: int, retention_ms: int) -> None:
        with self._lock:
            self._client.create_topic(
                self.topic,
                partitions,
                replication_factor,
                {"retention.ms": str(retention_ms), "cleanup.policy": "delete"},
            )

    def append(self, partition: int, value: bytes) -> int:
        batch = build_batch([(0, int(time.time() * 1000), None, value, [])])
        with self._lock:
            return self._client.produce(self.topic, partition, batch, acks=-1)

    def read(self, partition: int, offset: int) -> tuple[list[tuple[int, bytes]], int]:
        with self._lock:
            result = self._client.fetch(self.topic, partition, offset, max_bytes=4 << 20)
        data = result.records
        out: list[tuple[int, bytes]] = []
        position = offset
        for pos, _magic, _size in iter_batches(data):
            for r in records(data, pos):
                if r.offset >= offset and r.value is not None:
                    out.append((r.offset, bytes(r.value)))
                position = max(position, r.offset + 1)
            # a batch of control records or an empty one still moves the position
            h = batch_header(data, pos)
            position = max(position, h.last_offset + 1)
        return out, position

    def end_offset(self, partition: int) -> int:
        with self._lock:
            found = self._client.list_offsets({(self.topic, partition): -1})
        return found[(self.topic, partition)][0]

    def close(self) -> None:
        with self._lock:
            self._client.close()


def committed_segments(
    bootstrap_servers: str,
    topic: str,
    partition: int,
    *,
    metadata_partitions: int = 50,
    timeout_s: float = 60.0,
) -> list[RemoteLogSegmentMetadata]:
    """The committed tiered segments of ``topic``-``partition``, by start offset, from
    ``__remote_log_metadata`` (``metadata_partitions``: the cluster's
    ``remote.log.metadata.topic.num.partitions``)."""
    with Client(bootstrap_servers, client_id="kafkacore-tiered-reader") as client:
        topic_id = client.topic_id(topic)
    tip = TopicIdPartition(topic_id, topic, partition)
    rlmm = TopicBasedRemoteLogMetadataManager(
        ClientMetadataTopic(bootstrap_servers, client_id="kafkacore-tiered-reader"),
        broker_id=-1,
        num_partitions=metadata_partitions,
        poll_interval_s=0.02,
    )
    try:
        rlmm.start(wait=False)
        rlmm.on_partition_leadership_changes([tip], [])
        if not rlmm.wait_ready(tip, timeout_s):
            raise TimeoutError(f"__remote_log_metadata of {tip} not read in {timeout_s} s")
        return rlmm.cache(tip).finished_segments()
    finally:
        rlmm.close()


class PartitionTiering(NamedTuple):
    """One partition's two tiers, as tools show them: the log start (-2), the local log
    start (-4), the highest tiered offset (-5, -1: none), the log end, the committed
    tiered segments and their bytes, and the copy lag (offsets neither tiered nor in the
    active segment's future: the log end minus the first offset not tiered)."""

    partition: int
    log_start_offset: int
    local_log_start_offset: int
    highest_tiered_offset: int
    log_end_offset: int
    remote_segments: int
    remote_bytes: int

    @property
    def copy_lag_offsets(self) -> int:
        return max(0, self.log_end_offset - (self.highest_tiered_offset + 1))


def tiering_summary(
    bootstrap_servers: str, topic: str, *, metadata_partitions: int = 50
) -> list[PartitionTiering]:
    """Every partition of ``topic``: ListOffsets -2, -4, -5 and -1 from its leader and its
    committed segments from ``__remote_log_metadata``."""
    with Client(bootstrap_servers, client_id="kafkacore-tiering") as client:
        partitions = client.partitions(topic)
        specs = {(topic, p): 0 for p in partitions}
        found = {spec: client.list_offsets({k: spec for k in specs}) for spec in (-2, -4, -5, -1)}
    out = []
    for p in partitions:
        segments = committed_segments(
            bootstrap_servers, topic, p, metadata_partitions=metadata_partitions
        )
        out.append(
            PartitionTiering(
                p,
                found[-2][(topic, p)][0],
                found[-4][(topic, p)][0],
                found[-5][(topic, p)][0],
                found[-1][(topic, p)][0],
                len(segments),
                sum(m.segment_size_in_bytes for m in segments),
            )
        )
    return out
