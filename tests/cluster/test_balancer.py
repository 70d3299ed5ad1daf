"""The partition balancer on a real cluster (ZooKeeper mode, brokers as processes): a
fourth broker joins and the controller's balancer gives it its share of replicas and
preferred leaders, through Kafka's reassignment machinery, then removes its throttles;
``kafkacore balancer decommission`` drains a broker and ``recommission`` fills it again;
a broker holding more than its share of bytes gives some away; ``kafkacore balancer
status|plan|pause|resume`` and the console's Balancer page tell and steer it. One
cluster for the module: each test starts from where the last left it."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import re
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from cluster.conftest import create_topic
from support.cluster import Cluster, wait_until
from support.ports import free_port
from support.zookeeper import ZooKeeperServer, unique_chroot

pytestmark = pytest.mark.timeout(600)

BALANCER = (
    "auto.partition.balance.enable=true",
    "auto.partition.balance.interval.ms=500",
    "auto.partition.balance.cooldown.ms=1000",
    "auto.partition.balance.max.moves.in.flight=4",
    "auto.partition.balance.throttle.bytes.per.second=52428800",
    "min.insync.replicas=2",
    "offsets.topic.replication.factor=3",
)
TOPIC = "spread"


CONSOLE_PORT = free_port()
CONSOLE = f"http://127.0.0.1:{CONSOLE_PORT}"


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperServer, tmp_path_factory: Any) -> Iterator[Cluster]:
    c = Cluster(
        unique_chroot(zookeeper.connect_string, "balancer"),
        tmp_path_factory.mktemp("balancer"),
        overrides=BALANCER,
        broker_overrides={1: [f"console.listeners={CONSOLE}"]},
    )
    try:
        yield c.start()
    finally:
        c.stop()


def balancer(cluster: Cluster, *args: str) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkacore.cli",
            "balancer",
            "--bootstrap-server",
            cluster.bootstrap,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def cli(cluster: Cluster, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", *args, "--bootstrap-server", cluster.bootstrap],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def assignment(cluster: Cluster, topic: str = TOPIC) -> dict[str, Any]:
    data, _ = cluster.zk.get(f"/brokers/topics/{topic}")
    return json.loads(data)  # type: ignore[no-any-return]


def replica_counts(cluster: Cluster, topic: str = TOPIC) -> dict[int, int]:
    counts = dict.fromkeys(cluster.brokers, 0)
    for replicas in assignment(cluster, topic)["partitions"].values():
        for b in replicas:
            counts[b] += 1
    return counts


def state(cluster: Cluster) -> dict[str, Any]:
    """The controller's balancer state in ``/kafkacore/balancer``."""
    if not cluster.zk.exists("/kafkacore/balancer"):
        return {}
    data, _ = cluster.zk.get("/kafkacore/balancer")
    return json.loads(data)  # type: ignore[no-any-return]


def no_throttles(cluster: Cluster, topic: str = TOPIC) -> bool:
    keys = (
        "leader.replication.throttled.replicas",
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
    )
    paths = [f"/config/topics/{topic}"] + [f"/config/brokers/{b}" for b in cluster.brokers]
    for path in paths:
        if cluster.zk.exists(path):
            configs = json.loads(cluster.zk.get(path)[0])["config"]
            if any(k in configs for k in keys):
                return False
    return True


def settled(cluster: Cluster) -> dict[str, Any] | None:
    """The balancer's state once nothing moves (no reassignment, none of its moves)."""
    current = assignment(cluster)
    s = state(cluster)
    moving = current.get("adding_replicas") or current.get("removing_replicas")
    return s if s and not moving and not s.get("in_flight") else None


def test_a_new_broker_gets_its_share(cluster: Cluster) -> None:
    create_topic(cluster, TOPIC, 6)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(3000):
        producer.produce(TOPIC, b"x" * 300, partition=i % 6)
    assert producer.flush(60) == 0
    assert replica_counts(cluster) == {1: 6, 2: 6, 3: 6}
    (new,) = cluster.add_brokers(1)

    def balanced() -> dict[int, int] | None:
        counts = replica_counts(cluster)
        return counts if 4 <= counts[new] <= 5 and settled(cluster) else None

    counts = wait_until(balanced, 180, "broker 4 to get its share of replicas")
    assert sum(counts.values()) == 18 and all(4 <= n <= 5 for n in counts.values())
    s = state(cluster)
    assert s["completed"] >= 4 and s["in_flight"] == []
    assert all(h["outcome"] == "completed" for h in s["history"])
    wait_until(lambda: no_throttles(cluster), 30, "the balancer's throttles to be removed")
    # preferred leaders are spread too (18 / 4 brokers -> 1 or 2 of the 6 each)
    leaders = [r[0] for r in assignment(cluster)["partitions"].values()]
    assert all(1 <= leaders.count(b) <= 2 for b in cluster.brokers), leaders
    status = balancer(cluster, "status")
    assert "Balancer: balanced" in status and "Moves in flight: 0" in status
    assert "Planned moves: 0" in balancer(cluster, "plan")
    # the console's page says the same
    page = Console().get("/balancer")
    assert "State: <b>balanced</b>" in page and 'id="no-move"' in page and 'id="no-plan"' in page
    assert 'data-metric="replicas"' in page


def test_decommission_drains_and_recommission_fills(cluster: Cluster) -> None:
    out = balancer(cluster, "decommission", "--broker-ids", "4")
    assert "Decommissioned brokers: 4" in out
    wait_until(
        lambda: replica_counts(cluster)[4] == 0 and settled(cluster), 180, "broker 4 drained"
    )
    # __consumer_offsets (made by no one here) aside, nothing of any topic stays on 4
    assert "to drain       0 replica(s)" in balancer(cluster, "status")
    # paused (from the console): recommissioning plans moves back, but none starts
    paused = Console().post("/balancer/pause", "/balancer")
    assert "The balancer is paused." in paused and "State: <b>paused</b>" in paused
    balancer(cluster, "recommission", "--broker-ids", "4")
    planned = balancer(cluster, "plan")
    assert "Balancer: paused" in planned and "Planned moves: 0" not in planned
    before = state(cluster)["completed"]
    wait_until(lambda: "paused" in str(_controller_status(cluster)), 30, "the pause to be seen")
    assert replica_counts(cluster)[4] == 0 and state(cluster)["completed"] == before
    balancer(cluster, "resume")
    wait_until(
        lambda: 4 <= replica_counts(cluster)[4] <= 5 and settled(cluster),
        180,
        "broker 4 filled again",
    )


def _controller_status(cluster: Cluster) -> str:
    """What the controller's balancer last said it does (its log line)."""
    controller = cluster.controller_id()
    assert controller is not None
    lines = [
        line for line in cluster.brokers[controller].log_text().splitlines() if "balancer: " in line
    ]
    return lines[-1] if lines else ""


class Console:
    """The console of broker 1 over HTTP, with a session (cookies) for its forms."""

    def __init__(self) -> None:
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def get(self, path: str) -> str:
        with self.opener.open(CONSOLE + path, timeout=60) as answer:
            return str(answer.read().decode())

    def post(self, path: str, form_page: str, **fields: str) -> str:
        found = re.search(r'name="csrf_token" value="([^"]+)"', self.get(form_page))
        assert found, "no CSRF token on the page"
        data = urllib.parse.urlencode({"csrf_token": found.group(1), **fields}).encode()
        with self.opener.open(CONSOLE + path, data=data, timeout=60) as answer:
            return str(answer.read().decode())


HEAVY = "heavy"
DEFAULT_ALTER = ("--entity-type", "brokers", "--entity-default", "--alter", "--add-config")
GOALS = "auto.partition.balance.goals"


def test_a_skewed_disk_evens_out(cluster: Cluster) -> None:
    """Eight single-replica partitions, two per broker (replica and leader counts stay
    as balanced as they were), but broker 1's two hold ~1 MB each, brokers 2's and 3's
    half that, broker 4's nothing: the disk goal moves a large one off broker 1, and every
    broker's bytes end within the band. The disk goal runs alone here: with the count
    goals first, whether single moves and swaps can even the bytes depends on where
    the earlier tests left the other replicas (the limit docs/balancing.md states)."""
    cli(cluster, "configs", *DEFAULT_ALTER, f"{GOALS}=disk.usage")
    balancer(cluster, "pause")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    layout = [[1], [1], [2], [2], [3], [3], [4], [4]]
    records = {0: 3300, 1: 3300, 2: 1650, 3: 1650, 4: 1650, 5: 1650}  # of 300 bytes
    single = NewTopic(
        HEAVY, len(layout), replica_assignment=layout, config={"min.insync.replicas": "1"}
    )
    admin.create_topics([single])[HEAVY].result(60)
    for p in range(len(layout)):
        cluster.wait_for_leader(HEAVY, p)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for p, count in records.items():
        for _ in range(count):
            producer.produce(HEAVY, b"h" * 300, partition=p)
        producer.poll(0)
    assert producer.flush(60) == 0

    def skew() -> dict[str, Any]:
        found: dict[str, Any] = json.loads(balancer(cluster, "status", "--json"))
        return found

    disk = wait_until(lambda: skew()["skew_before"]["disk_bytes"], 60, "the sizes sampled")
    assert not disk["balanced"], disk
    balancer(cluster, "resume")

    def even() -> dict[str, Any] | None:
        now = skew()
        disk = now["skew_before"]["disk_bytes"]
        return now if disk["balanced"] and now["state"] == "balanced" else None

    try:
        wait_until(even, 180, "the bytes per broker within the band")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{balancer(cluster, 'plan')}\n{state(cluster)}") from None
    wait_until(lambda: settled(cluster), 60, "the balancer's moves to end")
    heavy = [r for r in assignment(cluster, HEAVY)["partitions"].values()]
    assert sum(r == [1] for r in heavy) <= 1, heavy
    moved = [h for h in state(cluster)["history"] if h["topic"] == HEAVY]
    assert any(h["before"] == [1] and h["goal"] == "disk.usage" for h in moved), moved
    assert all(h["outcome"] == "completed" for h in moved), moved
    cli(cluster, "configs", *DEFAULT_ALTER[:-1], "--delete-config", GOALS)


def test_a_controller_killed_mid_plan_hands_the_moves_over(cluster: Cluster) -> None:
    """A drain under a slow throttle; the controller is SIGKILLed while the balancer's
    moves run. The next controller resumes those reassignments (as Kafka's does), its
    balancer takes them as its own and, once the killed broker is back, finishes the
    drain: the reassignments it had started completed, no throttle left, and no partition
    of the replicated topic ever seen with an ISR below min.insync.replicas but for the
    killed broker's replicas."""
    throttle = "auto.partition.balance.throttle.bytes.per.second"
    cli(cluster, "configs", *DEFAULT_ALTER, f"{throttle}=100000")
    controller = cluster.controller_id()
    assert controller is not None
    drained = next(b for b in (2, 3, 4, 1) if b != controller)
    before = state(cluster)
    lowest: dict[tuple[str, int], int] = {}
    stop = threading.Event()

    def watch_isrs() -> None:
        # the ISR of every partition of the replicated topic the killed broker holds no
        # replica of (a SIGKILL takes a replica out; the balancer must not)
        while not stop.wait(0.2):
            with contextlib.suppress(Exception):
                for p, replicas in assignment(cluster)["partitions"].items():
                    found = cluster.partition_state(TOPIC, int(p))
                    if found is not None and controller not in replicas:
                        key = (TOPIC, int(p))
                        lowest[key] = min(lowest.get(key, 3), len(found["isr"]))

    watcher = threading.Thread(target=watch_isrs, daemon=True)
    watcher.start()
    try:
        balancer(cluster, "decommission", "--broker-ids", str(drained))
        started = wait_until(lambda: _reassigning(cluster), 60, "a move of the drain in ZooKeeper")
        cluster.kill(controller)
        wait_until(
            lambda: cluster.controller_id() not in (None, controller), 60, "a new controller"
        )
        cluster.restart(controller)

        def drained_and_settled() -> bool:
            replicas = [
                r for t in (TOPIC, HEAVY) for r in assignment(cluster, t)["partitions"].values()
            ]
            return all(drained not in r for r in replicas) and bool(settled(cluster))

        wait_until(drained_and_settled, 240, f"broker {drained} drained by the new controller")
    finally:
        stop.set()
        watcher.join()
    assert lowest and min(lowest.values()) >= 2, lowest
    after = state(cluster)
    new = after["history"][len(before["history"]) :] if before else after["history"]
    # the reassignments the killed controller had written are resumed and completed (a
    # move it had only decided on may be abandoned, as documented; the drain still ends)
    outcomes = {(h["topic"], h["partition"]): h["outcome"] for h in new}
    assert all(outcomes.get(tp) == "completed" for tp in started), (started, new)
    wait_until(lambda: no_throttles(cluster) and no_throttles(cluster, HEAVY), 30, "no throttle")
    cli(cluster, "configs", *DEFAULT_ALTER[:-1], "--delete-config", throttle)


def _reassigning(cluster: Cluster) -> set[tuple[str, int]]:
    """The partitions ZooKeeper shows being reassigned (KIP-455's adding replicas)."""
    return {
        (topic, int(p))
        for topic in (TOPIC, HEAVY)
        for p in (assignment(cluster, topic).get("adding_replicas") or {})
    }
