"""Kafka's "Expanding your cluster" and "Decommissioning brokers" walk-throughs on
kafkacore, with ``kafkacore reassign-partitions`` only: three brokers with two topics
(replication factors 3 and 2) under idempotent acks=all producers; two more brokers
join, ``--generate`` over all five, ``--execute``, ``--verify`` until done; then every
replica moves back off brokers 4 and 5, which are stopped. No acknowledged record is
lost, no record is refused, the topic znodes equal the plans and nothing is left in
``/admin``."""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.conftest import create_topic, new_cluster
from cluster.test_cluster_failover import BackgroundProducer, check_delivery
from kafkacore.cli import main
from support.cluster import Cluster, wait_until
from support.zookeeper import ZooKeeperServer

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

TOPICS = {"grow-a": (4, 3), "grow-b": (3, 2)}  # name: (partitions, replication factor)


@pytest.fixture
def fresh(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[Cluster]:
    c = new_cluster(zookeeper, tmp_path, "auto.leader.rebalance.enable=false")
    try:
        yield c.start()
    finally:
        c.stop()


def reassign(cluster: Cluster, *args: str) -> str:
    """``kafkacore reassign-partitions`` (in this process); its output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["reassign-partitions", "--bootstrap-server", cluster.bootstrap, *args])
    assert code == 0, out.getvalue()
    return out.getvalue()


def move(cluster: Cluster, directory: Path, brokers: list[int], name: str) -> dict[str, Any]:
    """--generate over ``brokers``, --execute the proposal, --verify until complete."""
    topics = directory / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in TOPICS]}))
    out = reassign(
        cluster,
        "--generate",
        "--topics-to-move-json-file",
        str(topics),
        "--broker-list",
        ",".join(map(str, brokers)),
    )
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert lines[3] == "Proposed partition reassignment configuration"
    plan = json.loads(lines[4])
    path = directory / f"{name}.json"
    path.write_text(lines[4])
    out = reassign(
        cluster, "--execute", "--reassignment-json-file", str(path), "--throttle", "100000000"
    )
    assert out.splitlines()[-1].startswith("Successfully started partition reassignments for ")

    def verified() -> str | None:
        text = reassign(cluster, "--verify", "--reassignment-json-file", str(path))
        # "There is no active reassignment of partition …, but replica set is …": the
        # controller has ended the reassignment (ListPartitionReassignments answers from
        # its memory) but the broker that answered Metadata has not had the
        # UpdateMetadata yet, which comes after the controller's ZooKeeper writes. Kafka's
        # controller and tool have the same window; the next --verify sees the new set.
        if "still in progress" in text or "There is no active reassignment" in text:
            time.sleep(0.5)
            return None
        return text

    text = wait_until(verified, 90, f"the {name} reassignment to complete")
    assert text.count("is completed.") == sum(p for p, _ in TOPICS.values()), text
    assert "Clearing topic-level throttles on topics" in text
    return plan


def assert_znodes(cluster: Cluster, plan: dict[str, Any]) -> None:
    for topic in TOPICS:
        data, _ = cluster.zk.get(f"/brokers/topics/{topic}")
        got = json.loads(data)
        wanted = {
            str(e["partition"]): e["replicas"] for e in plan["partitions"] if e["topic"] == topic
        }
        assert got["partitions"] == wanted
        assert not got.get("adding_replicas") and not got.get("removing_replicas")


def test_expand_then_decommission_under_load(fresh: Cluster, tmp_path: Path) -> None:
    for topic, (partitions, rf) in TOPICS.items():
        create_topic(fresh, topic, partitions, rf, {"min.insync.replicas": "2"})
    with (
        BackgroundProducer(fresh, "grow-a", TOPICS["grow-a"][0]) as a,
        BackgroundProducer(fresh, "grow-b", TOPICS["grow-b"][0]) as b,
    ):
        wait_until(lambda: a.total() > 200 and b.total() > 200, 30, "records flowing")
        assert fresh.add_brokers(2) == [4, 5]
        plan = move(fresh, tmp_path, [1, 2, 3, 4, 5], "expand")
        assert_znodes(fresh, plan)
        used = {r for e in plan["partitions"] for r in e["replicas"]}
        assert {4, 5} <= used  # 17 replicas over 5 brokers: every broker gets some
        before = a.total() + b.total()
        wait_until(lambda: a.total() + b.total() > before + 200, 30, "progress")

        plan = move(fresh, tmp_path, [1, 2, 3], "decommission")
        assert_znodes(fresh, plan)
        for node in (4, 5):
            fresh.brokers[node].stop()
        fresh.wait_for_brokers(3)
        for topic, (partitions, rf) in TOPICS.items():
            for p in range(partitions):
                fresh.wait_for_isr(topic, p, rf)
        before = a.total() + b.total()
        wait_until(lambda: a.total() + b.total() > before + 200, 30, "progress after")
    assert a.failed == 0 and b.failed == 0
    check_delivery(fresh, "grow-a", a.acked)
    check_delivery(fresh, "grow-b", b.acked)
    assert not fresh.zk.exists("/admin/reassign_partitions")
    assert reassign(fresh, "--list") == "No partition reassignments found.\n"
