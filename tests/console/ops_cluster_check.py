"""The Operations view on a three-broker ZooKeeper cluster (the console served by broker
1): a decommission plan, a throttled reassignment executed in the browser whose outcome
Kafka 4.3.1's kafka-reassign-partitions --verify confirms, and a preferred leader
election scheduled in the browser that moves the leader (read back from ZooKeeper).

Not collected by ``make test`` (its name is not ``test_*.py``: a ZooKeeper server and
three brokers take longer than the console's budget there); run it with
``make test-console-cluster``.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from console.conftest import KafkaTools, screenshot, wait_http
from support.cluster import Cluster, wait_until
from support.ports import free_port
from support.zookeeper import ZooKeeperServer, unique_chroot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


@pytest.fixture(scope="module")
def cluster(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Cluster, str]]:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    port = free_port()
    cl = Cluster(
        unique_chroot(zookeeper.connect_string),
        tmp_path_factory.mktemp("ops-cluster"),
        size=3,
        broker_overrides={1: [f"console.listeners=http://127.0.0.1:{port}"]},
    ).start()
    try:
        wait_http(f"http://127.0.0.1:{port}/static/console.css")
        admin = AdminClient({"bootstrap.servers": cl.bootstrap})
        futures = admin.create_topics(
            [
                NewTopic("moving", 2, replica_assignment=[[2], [3]]),
                NewTopic("lead", 1, replica_assignment=[[2, 3]]),
            ]
        )
        for future in futures.values():
            future.result(30)
        cl.wait_for_leader("lead", 0)
        producer = Producer({"bootstrap.servers": cl.bootstrap, "acks": "all"})
        for i in range(400):
            producer.produce("moving", value=b"m" * 1000, partition=i % 2)
        assert producer.flush(30) == 0
        yield cl, f"http://127.0.0.1:{port}"
    finally:
        cl.stop()


def _throttled_replicas(cl: Cluster, topic: str) -> str:
    """The topic's ``leader.replication.throttled.replicas`` (DescribeConfigs)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": cl.bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, topic)
    entries = admin.describe_configs([resource])[resource].result(30)
    return str(entries["leader.replication.throttled.replicas"].value or "")


def test_decommission_reassign_and_elect(
    cluster: tuple[Cluster, str], page: Any, kafka_tools: KafkaTools, tmp_path: Path
) -> None:
    cl, url = cluster
    page.goto(url + "/operations")
    assert page.locator("#no-reassignment").count() == 1

    # a plan over brokers 1 and 2 only (Kafka's --generate): moving's partitions land there
    page.select_option("#plan select[name=topic]", ["moving"])
    page.uncheck('#plan input[name=broker][value="3"]')
    page.click("#plan button")
    generated = json.loads(page.locator("#plan-json").input_value())["partitions"]
    assert sorted(p["partition"] for p in generated) == [0, 1]
    assert all(p["topic"] == "moving" and p["replicas"][0] in (1, 2) for p in generated)
    assert '"partition":1,"replicas":[3]' in page.locator("#current-plan").inner_text()

    # decommission broker 3: every partition with a replica there gets one elsewhere
    page.select_option("#decommission select[name=broker]", "3")
    page.click("#decommission button")
    plan = json.loads(page.locator("#plan-json").input_value())
    moved = {(p["topic"], p["partition"]): p["replicas"] for p in plan["partitions"]}
    assert moved[("moving", 1)] in ([1], [2])
    assert moved[("lead", 0)] in ([2, 1],)  # 3 replaced in place by the only free broker
    assert ("moving", 0) not in moved
    assert all(3 not in replicas for replicas in moved.values())
    screenshot(page, "ops-decommission")

    # a throttled reassignment: moving-0 from broker 2 to 1, lead-0's preferred leader to 3
    target = {
        "version": 1,
        "partitions": [
            {"topic": "moving", "partition": 0, "replicas": [1], "log_dirs": ["any"]},
            {"topic": "lead", "partition": 0, "replicas": [3, 2], "log_dirs": ["any", "any"]},
        ],
    }
    page.fill("#plan-json", json.dumps(target))
    page.fill("#execute input[name=throttle]", "50000000")
    page.click("#execute button.primary")
    result = page.locator("#result").inner_text()
    assert "The inter-broker throttle limit was set to 50000000 B/s" in result
    assert "Successfully started partition reassignments for lead-0,moving-0" in result
    page.wait_for_selector("#no-reassignment", timeout=90_000)  # the progress box polls
    screenshot(page, "ops-reassigned")
    assert _throttled_replicas(cl, "moving") != ""  # set by the execute
    page.click('#execute button[formaction="/operations/clear-throttles"]')
    cleared = page.locator("#result").inner_text()
    assert "Clearing broker-level throttles on brokers 1,2,3" in cleared
    assert "Clearing topic-level throttles on topics" in cleared
    assert _throttled_replicas(cl, "moving") == ""
    cl.wait_for_replicas("moving", {0: [1]})
    cl.wait_for_replicas("lead", {0: [3, 2]})
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(target))
    verified = kafka_tools.run(
        REASSIGN, "--bootstrap-server", cl.bootstrap, "--reassignment-json-file", str(plan_file),
        "--verify",
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert "Reassignment of partition moving-0 is completed." in verified.stdout
    assert "Reassignment of partition lead-0 is completed." in verified.stdout
    assert cl.leader("lead", 0) == 2  # a reassignment keeps a live leader
    # broker 1 (the console's) fetched moving-0 from broker 2: its replication bytes in
    # are what its copy holds on disk
    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        metrics = response.read().decode()
    copied = sum(f.stat().st_size for f in cl.brokers[1].data.glob("moving-0/*.log"))
    assert copied > 200 * 1000
    name = 'kafka_server_brokertopicmetrics_replicationbytesin_total{topic="moving"} '
    values = [float(line[len(name) :]) for line in metrics.splitlines() if line.startswith(name)]
    assert values == [copied]

    # a preferred election in 2 s: broker 3, now first in lead-0's replicas, leads
    at = (datetime.now(timezone.utc) + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%S")
    page.goto(url + "/operations")
    page.fill("#elect input[name=partitions]", "lead-0")
    page.fill("#elect input[name=at]", at)
    page.click("#elect button")
    assert "scheduled at" in page.locator("#result").inner_text()
    row = page.locator('#elections tr[data-election="1"]')
    assert row.locator("td.status").inner_text() in ("scheduled", "running", "done")

    def done() -> bool:
        page.goto(url + "/operations")
        return row.locator("td.status").inner_text() == "done"

    wait_until(done, 30, "the scheduled election")
    assert "Successfully completed leader election (PREFERRED) for partitions lead-0" in (
        row.inner_text()
    )
    wait_until(lambda: cl.leader("lead", 0) == 3, 30, "broker 3 to lead lead-0")
    screenshot(page, "ops-elections")

    # a move that cannot finish: moving-1's only replica (broker 3) is down, broker 2 is
    # to copy it; the progress shows both replicas, then the move is cancelled
    cl.kill(3)
    wait_until(lambda: cl.leader("moving", 1) == -1, 60, "moving-1 to go offline")
    # the console's admin client may first wait on the dead broker: pages can take longer
    page.set_default_timeout(60_000)
    page.goto(url + "/operations")
    screenshot(page, "ops-broker-down")
    stuck = {"version": 1, "partitions": [{"topic": "moving", "partition": 1, "replicas": [2]}]}
    page.fill("#plan-json", json.dumps(stuck))
    page.click("#execute button.primary")
    assert "Successfully started partition reassignment for moving-1" in (
        page.locator("#result").inner_text()
    )
    roles = {
        replica: page.locator(f'#progress tr[data-tp="moving-1"][data-replica="{replica}"] td')
        .nth(2)
        .inner_text()
        for replica in (2, 3)
    }
    assert roles == {2: "adding", 3: "removing"}
    screenshot(page, "ops-reassignment-stuck")
    page.click("#cancel-reassignments button")
    assert "Successfully cancelled partition reassignment for: moving-1" in (
        page.locator("#result").inner_text()
    )
    listed = kafka_tools.run(REASSIGN, "--bootstrap-server", cl.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    assert "No partition reassignments found." in listed.stdout
