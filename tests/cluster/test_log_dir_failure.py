"""A full disk on one broker of a three-broker cluster (the fault campaign's disk fault):
broker 1 has ``log.dirs=normal,small`` where ``small`` is an 8 MB tmpfs that the test
fills. Broker 1 marks ``small`` offline and writes a log dir event notification; the
controller sends it LeaderAndIsr, learns from the KAFKA_STORAGE_ERROR answers which
replicas are offline, elects other leaders for the partitions it led there and takes it
out of their ISR (Kafka's onBrokerLogDirFailure). An acks=all idempotent producer with
``min.insync.replicas=2`` keeps going and no acknowledged record is lost; broker 1 keeps
running and serving the partitions in its other directory; once the space is freed and
it is restarted, it recovers the directory and its replicas there equal the others."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cluster.conftest import new_cluster
from cluster.test_cluster_failover import BackgroundProducer, check_delivery
from support.cluster import Cluster, wait_until
from support.tmpfs import fill, tmpfs
from support.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.timeout(240)

TOPIC = "disk"
PARTITIONS = 4


def _create(cluster: Cluster) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    # broker 1 leads every partition; its logs alternate between its two directories
    assignment = [[1, 2, 3], [1, 3, 2], [1, 2, 3], [1, 3, 2]]
    topic = NewTopic(
        TOPIC,
        PARTITIONS,
        replica_assignment=assignment,
        config={"min.insync.replicas": "2"},
    )
    admin.create_topics([topic], operation_timeout=30, request_timeout=40)[TOPIC].result(60)
    for p in range(PARTITIONS):
        cluster.wait_for_leader(TOPIC, p)


def _identical(cluster: Cluster, small: Path, partition: int) -> bool:
    """Broker 1's copy of the partition (in ``small``) and the others' are the same bytes."""
    copies = set()
    for node_id, broker in cluster.brokers.items():
        directory = (small if node_id == 1 else broker.data) / f"{TOPIC}-{partition}"
        copies.add(b"".join(p.read_bytes() for p in sorted(directory.glob("*.log"))))
    return len(copies) == 1


def test_a_full_log_dir_moves_its_leaderships_and_loses_nothing(
    zookeeper: ZooKeeperServer, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "small") as small:
        (tmp_path / "c").mkdir()
        cluster = new_cluster(zookeeper, tmp_path / "c")
        normal = tmp_path / "normal"
        cluster.brokers[1].overrides.append(f"log.dirs={normal},{small}")
        try:
            cluster.start()
            _create(cluster)
            on_small = sorted(
                int(d.name.rsplit("-", 1)[1]) for d in small.glob(f"{TOPIC}-*") if d.is_dir()
            )
            on_normal = sorted(
                int(d.name.rsplit("-", 1)[1]) for d in normal.glob(f"{TOPIC}-*") if d.is_dir()
            )
            assert on_small and on_normal, (on_small, on_normal)
            with BackgroundProducer(cluster, TOPIC, PARTITIONS) as background:
                wait_until(lambda: background.total() > 300, 30, "records flowing")
                fill(small)
                for p in on_small:
                    cluster.wait_for_leader(TOPIC, p, not_in=[1], timeout_s=20)
                for p in on_small:
                    wait_until(
                        lambda p=p: 1 not in cluster.partition_state(TOPIC, p)["isr"],  # type: ignore[index]
                        20,
                        f"broker 1 out of the ISR of {TOPIC}-{p}",
                    )
                before = {p: len(background.acked[p]) for p in on_small}
                wait_until(
                    lambda: all(len(background.acked[p]) > before[p] + 50 for p in on_small),
                    30,
                    "acks=all progress on the moved partitions",
                )
            assert cluster.brokers[1].running, "the broker with the full disk must not stop"
            assert "is now offline" in cluster.brokers[1].log_text()
            assert "wrote a log dir event notification" in cluster.brokers[1].log_text()
            zk = cluster.zk
            wait_until(
                lambda: not zk.get_children("/log_dir_event_notification"),
                20,
                "the log dir event notification deleted by the controller",
            )
            for p in on_normal:  # broker 1 still serves its other directory
                state = cluster.partition_state(TOPIC, p)
                assert state is not None and 1 in state["isr"], (p, state)
            check_delivery(cluster, TOPIC, background.acked)

            # space freed, broker 1 restarted (a clean stop, status 0): it recovers the
            # directory, catches up and rejoins every ISR with identical logs
            (small / "filler").unlink()
            cluster.brokers[1].stop()
            cluster.restart(1)
            assert f"from {small} since no clean shutdown file" in cluster.brokers[1].log_text()
            for p in range(PARTITIONS):
                cluster.wait_for_isr(TOPIC, p, 3, timeout_s=30)
            for p in on_small:
                wait_until(lambda p=p: _identical(cluster, small, p), 30, f"{TOPIC}-{p} equal")
        finally:
            cluster.stop()
