"""Tiered storage on a three-broker kafkacore cluster (ZooKeeper mode), one real S3
store (S3Proxy) and ``__remote_log_metadata`` replicated three ways:

* the leader SIGKILLed while it copies (throttled to about a segment a second): the next
  leader goes on; the committed segments cover the offsets from 0 with no gap (the next
  leader's segment boundaries are its own, so its first copy may overlap the last one,
  as in Kafka); the objects a dead copy left are cleaned (Kafka's orphan
  clean-up); a consumer reads every acknowledged record once, in order, from offset 0;
* a follower that fell behind the leader's local log start (its segments gone to the
  bucket meanwhile) catches up from remote state and rejoins the ISR.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.conftest import consume_all, create_topic, producer
from kafkacore.client.tiered import ClientMetadataTopic
from kafkacore.log.remote.layout import segment_prefix
from kafkacore.log.remote.metadata import TopicBasedRemoteLogMetadataManager
from kafkacore.log.remote.model import RemoteLogSegmentState, TopicIdPartition
from kafkacore.log.remote.object_store import S3ObjectStore
from support.cluster import Cluster, wait_until
from support.object_store import ObjectStoreServer, bucket_name
from support.zookeeper import ZooKeeperServer, unique_chroot

pytestmark = pytest.mark.slow

TOPIC_CONFIG = {
    "remote.storage.enable": "true",
    "segment.bytes": str(1 << 20),
    "local.retention.bytes": "1",
    "min.insync.replicas": "2",
}


@pytest.fixture(scope="module")
def store(object_store: ObjectStoreServer) -> tuple[S3ObjectStore, list[str]]:
    bucket = object_store.create_bucket(bucket_name())
    return S3ObjectStore(object_store.storage_config(bucket)), object_store.broker_overrides(bucket)


@pytest.fixture(scope="module")
def cluster(
    zookeeper: ZooKeeperServer,
    tmp_path_factory: pytest.TempPathFactory,
    store: tuple[S3ObjectStore, list[str]],
) -> Iterator[Cluster]:
    c = Cluster(
        unique_chroot(zookeeper.connect_string, "tiered"),
        tmp_path_factory.mktemp("tiered"),
        overrides=[
            *store[1],
            "rlmm.config.remote.log.metadata.topic.num.partitions=3",
            "remote.log.manager.task.interval.ms=300",
            "log.retention.check.interval.ms=500",
            "remote.log.manager.copy.max.bytes.per.second=1048576",
        ],
    )
    try:
        yield c.start()
    finally:
        c.stop()


def _produce(cluster: Cluster, topic: str, n: int, tag: str) -> list[bytes]:
    p = producer(cluster)
    acked: list[bytes] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acked.append(msg.value())

    for i in range(n):
        p.produce(topic, f"{tag}-{i}-".encode() + os.urandom(1000), on_delivery=on_delivery)
        if i % 200 == 0:
            p.poll(0)
    assert p.flush(120) == 0
    return acked


def _topic_id(cluster: Cluster, topic: str) -> TopicIdPartition:
    from kafkacore.client import Client

    with Client(cluster.bootstrap) as client:
        return TopicIdPartition(client.topic_id(topic), topic, 0)


def _metadata(cluster: Cluster, tip: TopicIdPartition) -> TopicBasedRemoteLogMetadataManager:
    """``__remote_log_metadata`` read back through a client, as a broker reads it."""
    rlmm = TopicBasedRemoteLogMetadataManager(
        ClientMetadataTopic(cluster.bootstrap, client_id="test-rlmm"),
        broker_id=-1,
        num_partitions=3,
        poll_interval_s=0.05,
    )
    rlmm.start(wait=False)
    rlmm.on_partition_leadership_changes([tip], [])
    assert rlmm.wait_ready(tip, 60)
    return rlmm


def _local_segments(cluster: Cluster, node: int, topic: str) -> list[int]:
    directory = cluster.brokers[node].data / f"{topic}-0"
    return sorted(int(p.stem) for p in Path(directory).glob("*.log"))


def test_leader_killed_during_copy_loses_and_duplicates_nothing(
    cluster: Cluster, store: tuple[S3ObjectStore, list[str]]
) -> None:
    bucket = store[0]
    topic = "tiers"
    create_topic(cluster, topic, 1, 3, TOPIC_CONFIG)
    acked = _produce(cluster, topic, 8000, "a")
    tip = _topic_id(cluster, topic)
    rlmm = _metadata(cluster, tip)
    try:
        wait_until(lambda: len(rlmm.cache(tip).finished_segments()) >= 2, 60, "two copies")
        leader = cluster.leader(topic, 0)
        cluster.kill(leader)  # mid-copy: the copies are throttled to ~1 segment/s
        new_leader = cluster.wait_for_leader(topic, 0, not_in=[leader])
        assert new_leader != leader
        acked += _produce(cluster, topic, 1000, "b")
        cluster.restart(leader)
        cluster.wait_for_isr(topic, 0, 3)

        def tiered_up_to_the_active_segment() -> bool:
            finished = rlmm.cache(tip).finished_segments()
            active = _local_segments(cluster, cluster.leader(topic, 0), topic)
            return bool(finished and active) and finished[-1].end_offset + 1 == active[-1]

        wait_until(tiered_up_to_the_active_segment, 120, "every closed segment tiered")
        finished = rlmm.cache(tip).finished_segments()
        assert finished[0].start_offset == 0
        # no gap: each offset tiered. The next leader's segments roll at offsets of their
        # own, so its first copy may start inside the last one of the dead leader (Kafka
        # copies that segment whole too: a gap would be lost to local retention); an
        # offset is then in two copies of the same replicated bytes, and read once
        covered = finished[0].end_offset
        for after in finished[1:]:
            assert after.start_offset <= covered + 1
            assert after.end_offset > covered
            covered = after.end_offset

        def no_orphans() -> bool:
            committed = {segment_prefix(m) for m in rlmm.cache(tip).finished_segments()}
            folders = {i.key.rsplit("/", 1)[0] + "/" for i in bucket.list(f"{topic}-0-")}
            others = [
                m
                for m in rlmm.cache(tip).segments()
                if m.state is not RemoteLogSegmentState.COPY_SEGMENT_FINISHED
            ]
            return folders == committed and not others

        wait_until(no_orphans, 60, "the objects of dead copies cleaned")
    finally:
        rlmm.close()
    got = consume_all(cluster, topic, 1, timeout_s=120)[0]
    assert got == acked  # every acknowledged record, once, in order


def test_a_follower_behind_the_local_start_catches_up_from_remote_state(
    cluster: Cluster, store: tuple[S3ObjectStore, list[str]]
) -> None:
    topic = "laggard"
    create_topic(cluster, topic, 1, 3, TOPIC_CONFIG)
    acked = _produce(cluster, topic, 500, "a")
    leader = cluster.leader(topic, 0)
    follower = next(n for n in cluster.brokers if n != leader)
    cluster.kill(follower)
    acked += _produce(cluster, topic, 6000, "b")
    # the leader tiers and deletes locally past what the follower has
    wait_until(
        lambda: _local_segments(cluster, leader, topic)[0] > 500, 120, "the leader's local start"
    )
    time.sleep(0.5)
    cluster.restart(follower)
    cluster.wait_for_isr(topic, 0, 3, timeout_s=120)
    ours = _local_segments(cluster, follower, topic)
    assert ours[0] > 0  # it restarted from remote state, not from offset 0
    got = consume_all(cluster, topic, 1, timeout_s=120)[0]
    assert got == acked
