"""Automatic preferred leader election (Kafka's ``checkAndTriggerAutoLeaderRebalance``):
a broker's restart leaves it leading one of the two partitions it is the preferred
replica of (its controlled shutdown moved the replicated one away; the other has it as
its only replica): 50 % imbalance. Every ``leader.imbalance.check.interval.seconds``
the controller gives the partitions back to their preferred replicas when a broker's
share of them led by others is above ``leader.imbalance.per.broker.percentage`` (40: yes,
60: no) and ``auto.leader.rebalance.enable`` is on (test_rolling_restart.py checks that
nothing moves when it is off). Each case on its own three-broker cluster."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cluster.conftest import create_topic, new_cluster
from support.cluster import Cluster, wait_until
from support.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.timeout(180)

TOPIC = "balanced"
PARTITIONS = 3
INTERVAL_S = 1
# the controller's first check comes 5 s after its election (Kafka's delay), then one
# every interval
FIRST_CHECK_S = 5


@pytest.fixture
def started(
    zookeeper: ZooKeeperServer, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Cluster]:
    overrides: tuple[str, ...] = request.param
    c = new_cluster(
        zookeeper, tmp_path, f"leader.imbalance.check.interval.seconds={INTERVAL_S}", *overrides
    )
    try:
        yield c.start()
    finally:
        for broker in c.brokers.values():  # nothing to check in a clean shutdown here
            if broker.running:
                broker.kill()
        c.stop()


def preferred(cluster: Cluster) -> dict[int, int]:
    """``{partition: its first assigned replica}`` from the topic's znode."""
    import json

    data, _ = cluster.zk.get(f"/brokers/topics/{TOPIC}")
    return {int(p): r[0] for p, r in json.loads(data)["partitions"].items()}


def leaders(cluster: Cluster) -> dict[int, int]:
    return {p: cluster.leader(TOPIC, p) for p in range(PARTITIONS)}


def imbalance_by_restart(cluster: Cluster) -> tuple[int, dict[int, int]]:
    """Restart a broker that is not the controller (SIGTERM: a controlled shutdown moves
    its leaderships away), the only replica of the ``solo`` topic; once it is back in
    every ISR: it and the leaders then."""
    create_topic(cluster, TOPIC, PARTITIONS, 3)
    controller = wait_until(cluster.controller_id, 30, "a controller")
    assert leaders(cluster) == preferred(cluster)
    bounced = next(n for n in sorted(cluster.brokers) if n != controller)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("solo", 1, replica_assignment=[[bounced]])])["solo"].result(60)
    cluster.wait_for_leader("solo", 0)
    cluster.restart(bounced)
    assert cluster.wait_for_leader("solo", 0) == bounced
    for p in range(PARTITIONS):
        cluster.wait_for_isr(TOPIC, p, 3)
    return bounced, leaders(cluster)


@pytest.mark.parametrize("started", [("leader.imbalance.per.broker.percentage=40",)], indirect=True)
def test_preferred_leaders_come_back_within_the_interval(started: Cluster) -> None:
    bounced, _ = imbalance_by_restart(started)  # the check may have run already
    wait_until(
        lambda: leaders(started) == preferred(started),
        FIRST_CHECK_S + 2 * INTERVAL_S + 20,  # margin for a loaded machine
        "the preferred leaders back",
    )
    # led by the bounced broker again after it had moved away: epoch 0, 1 (away), 2 (back)
    own = [p for p, b in preferred(started).items() if b == bounced]
    for p in own:
        state = started.partition_state(TOPIC, p)
        assert state is not None and state["leader_epoch"] >= 2, state


@pytest.mark.parametrize(
    "started",
    # the bounced broker leads one of its two preferred partitions: 50 %, not above 60 %
    [("leader.imbalance.per.broker.percentage=60",)],
    indirect=True,
)
def test_nothing_moves_below_the_threshold(started: Cluster) -> None:
    start = time.monotonic()
    bounced, after = imbalance_by_restart(started)
    assert any(b == bounced and after[p] != bounced for p, b in preferred(started).items())
    # long enough for the controller's first check and two more
    time.sleep(max(3 * INTERVAL_S, FIRST_CHECK_S + 2 * INTERVAL_S - (time.monotonic() - start)))
    assert leaders(started) == after
