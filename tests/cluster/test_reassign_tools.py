"""Partition reassignment and leader election on a three-broker kafkacore cluster with
Apache Kafka 3.9.1's own tools (``ReassignPartitionsCommand``, ``LeaderElectionCommand``,
run from its jars) and with ``kafkacore reassign-partitions`` / ``kafkacore
leader-election``: the same JSON files, the same output, and the same effect in
ZooKeeper (topic znodes, throttle configs). Also the pre-2.4 way: writing
``/admin/reassign_partitions`` and ``/admin/preferred_replica_election`` directly."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from cluster.conftest import new_cluster
from kafkacore.cli import main as kafkacore_main
from support.cluster import Cluster, wait_until
from support.kafka_jars import JVM_FLAGS, KAFKA_ZK_VERSION, kafka_libs
from support.zookeeper import ZooKeeperServer

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
ELECT = "org.apache.kafka.tools.LeaderElectionCommand"
TOOL = {REASSIGN: "reassign-partitions", ELECT: "leader-election"}


@pytest.fixture(scope="module")
def cluster(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    # a long session: a SIGSTOPped broker stays registered (and so a valid target)
    c = new_cluster(
        zookeeper,
        tmp_path_factory.mktemp("c"),
        "zookeeper.session.timeout.ms=30000",
        "auto.leader.rebalance.enable=false",
    )
    try:
        yield c.start()
    finally:
        for b in c.brokers.values():
            if b.proc is not None:
                b.proc.send_signal(signal.SIGCONT)
        c.stop()


@pytest.fixture(scope="module")
def libs() -> Path:
    return kafka_libs(KAFKA_ZK_VERSION)


class Tools:
    def __init__(self, cluster: Cluster, libs: Path, directory: Path) -> None:
        self.cluster = cluster
        self.libs = libs
        self.directory = directory
        self.exclude: set[int] = set()  # brokers not to bootstrap from (SIGSTOPped)

    @property
    def bootstrap(self) -> str:
        return ",".join(
            b.bootstrap
            for i, b in self.cluster.brokers.items()
            if b.running and i not in self.exclude
        )

    def file(self, name: str, content: Any) -> str:
        path = self.directory / name
        path.write_text(json.dumps(content))
        return str(path)

    def kafka(self, main: str, *args: str) -> tuple[int, str]:
        proc = subprocess.run(
            [
                "java",
                *JVM_FLAGS,
                "-cp",
                f"{self.libs}/*",
                main,
                "--bootstrap-server",
                self.bootstrap,
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return proc.returncode, proc.stdout

    def ours(self, main: str, *args: str) -> tuple[int, str]:
        """Ours, in this process (no interpreter start-up): status and stdout."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = kafkacore_main([TOOL[main], "--bootstrap-server", self.bootstrap, *args])
        assert not err.getvalue() or code != 0, err.getvalue()
        return code, out.getvalue()

    def both(self, main: str, *args: str) -> str:
        """Kafka's tool then ours with the same arguments: the same status and output."""
        with ThreadPoolExecutor(2) as pool:
            kafka = pool.submit(self.kafka, main, *args)
            ours = self.ours(main, *args)
            theirs = kafka.result()
        if main == REASSIGN and theirs[0] == 1:  # Kafka adds the stack trace
            head, sep, _ = theirs[1].partition("\njava.util.concurrent.ExecutionException")
            theirs = (1, head + "\n" if sep else theirs[1])
        assert ours == theirs, f"kafka:\n{theirs[1]}\nours:\n{ours[1]}"
        return ours[1]


@pytest.fixture(scope="module")
def tools(cluster: Cluster, libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Tools:
    return Tools(cluster, libs, tmp_path_factory.mktemp("json"))


def make_topic(cluster: Cluster, name: str, assignment: list[list[int]]) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics(
        [NewTopic(name, len(assignment), replica_assignment=assignment)],
        request_timeout=40,
    )[name].result(60)
    for p in range(len(assignment)):
        cluster.wait_for_leader(name, p)


def assignment(cluster: Cluster, topic: str) -> dict[str, Any]:
    data, _ = cluster.zk.get(f"/brokers/topics/{topic}")
    return json.loads(data)


def replicas(cluster: Cluster, topic: str) -> dict[int, list[int]]:
    return {int(p): r for p, r in assignment(cluster, topic)["partitions"].items()}


def reassignment_json(parts: dict[tuple[str, int], list[int]]) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
            for (t, p), r in sorted(parts.items())
        ],
    }


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def wait_done(cluster: Cluster, topic: str, target: dict[int, list[int]]) -> None:
    def done() -> bool:
        a = assignment(cluster, topic)
        return (
            {int(p): r for p, r in a["partitions"].items()} == target
            and not a.get("adding_replicas")
            and not a.get("removing_replicas")
        )

    wait_until(done, 60, f"{topic} reassigned to {target}")
    cluster.wait_for_replicas(topic, target)


def configs(cluster: Cluster, kind: ResourceType, name: str) -> dict[str, str]:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    (future,) = admin.describe_configs([ConfigResource(kind, name)]).values()
    return {
        k: v.value
        for k, v in future.result(30).items()
        if "throttled" in k and v.value is not None and v.source != 5  # 5 = DEFAULT_CONFIG
    }


def wait_configs(cluster: Cluster, kind: ResourceType, name: str, wanted: dict[str, str]) -> None:
    """Until the answering broker has applied the change (it spreads via /config/changes)."""
    wait_until(lambda: configs(cluster, kind, name) == wanted, 30, f"throttles of {name}: {wanted}")


def test_generate_prints_the_current_assignment_as_kafka_does(
    cluster: Cluster, tools: Tools
) -> None:
    make_topic(cluster, "gen", [[1, 2], [2, 3], [3, 1], [1, 3]])
    topics = tools.file("topics.json", {"version": 1, "topics": [{"topic": "gen"}]})
    args = ("--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3")
    theirs, ours = tools.kafka(REASSIGN, *args), tools.ours(REASSIGN, *args)
    assert theirs[0] == ours[0] == 0, (theirs, ours)
    k_lines, o_lines = theirs[1].splitlines(), ours[1].splitlines()
    assert len(k_lines) == len(o_lines) == 5
    assert o_lines[:3] == k_lines[:3]  # the current assignment, identical
    assert o_lines[1] == compact(
        reassignment_json(
            {("gen", 0): [1, 2], ("gen", 1): [2, 3], ("gen", 2): [3, 1], ("gen", 3): [1, 3]}
        )
    )
    assert o_lines[3] == k_lines[3] == "Proposed partition reassignment configuration"
    for line in (k_lines[4], o_lines[4]):  # random placements: the same shape
        proposed = json.loads(line)
        assert [(e["topic"], e["partition"]) for e in proposed["partitions"]] == [
            ("gen", p) for p in range(4)
        ]
        for e in proposed["partitions"]:
            assert len(set(e["replicas"])) == 2 and set(e["replicas"]) <= {1, 2, 3}
            assert e["log_dirs"] == ["any", "any"]
        leaders = [e["replicas"][0] for e in proposed["partitions"]]
        assert max(leaders.count(b) for b in (1, 2, 3)) == 2  # round robin over 3 brokers
    # our proposal executes with Kafka's tool
    plan = tools.directory / "gen-plan.json"
    plan.write_text(o_lines[4])
    code, out = tools.kafka(REASSIGN, "--execute", "--reassignment-json-file", str(plan))
    assert code == 0, out
    target = {e["partition"]: e["replicas"] for e in json.loads(o_lines[4])["partitions"]}
    wait_done(cluster, "gen", target)
    # errors: as Kafka's
    bad = tools.file("dup.json", {"version": 1, "topics": [{"topic": "gen"}, {"topic": "gen"}]})
    args = ("--generate", "--topics-to-move-json-file", bad, "--broker-list", "1,2,3")
    theirs, ours = tools.kafka(REASSIGN, *args), tools.ours(REASSIGN, *args)
    assert theirs[0] == ours[0] == 1
    first = "Error: List of topics to reassign contains duplicate entries: [gen]"
    assert theirs[1].splitlines()[0] == ours[1].splitlines()[0] == first


def test_execute_with_throttle_then_verify_with_either_tool(cluster: Cluster, tools: Tools) -> None:
    make_topic(cluster, "mv", [[1, 2], [2, 3]])
    forward = tools.file(
        "mv-forward.json", reassignment_json({("mv", 0): [2, 3], ("mv", 1): [2, 3]})
    )
    back = tools.file("mv-back.json", reassignment_json({("mv", 0): [1, 2], ("mv", 1): [2, 3]}))
    assert tools.both(REASSIGN, "--list") == "No partition reassignments found.\n"
    for run, path, before, after in (
        (tools.kafka, forward, [1, 2], [2, 3]),
        (tools.ours, back, [2, 3], [1, 2]),
    ):
        code, out = run(
            REASSIGN, "--execute", "--reassignment-json-file", path, "--throttle", "50000000"
        )
        assert code == 0, out
        current = compact(reassignment_json({("mv", 0): before, ("mv", 1): [2, 3]}))
        assert out == (
            f"Current partition replica assignment\n\n{current}\n\n"
            "Save this to use as the --reassignment-json-file option during rollback\n"
            "Warning: You must run --verify periodically, until the reassignment completes, "
            "to ensure the throttle is removed.\n"
            "The inter-broker throttle limit was set to 50000000 B/s\n"
            "Successfully started partition reassignments for mv-0,mv-1\n"
        )
        # throttled replicas: p:<each current replica> and p:<each added replica>
        moving = {*before, *after}
        added = sorted(set(after) - set(before))
        wanted = {
            "leader.replication.throttled.replicas": ",".join(
                sorted([f"0:{b}" for b in before] + ["1:2", "1:3"])
            ),
            "follower.replication.throttled.replicas": ",".join(f"0:{b}" for b in added),
        }
        wait_configs(cluster, ResourceType.TOPIC, "mv", wanted)
        rates = {
            "leader.replication.throttled.rate": "50000000",
            "follower.replication.throttled.rate": "50000000",
        }
        for b in sorted(moving):
            wait_configs(cluster, ResourceType.BROKER, str(b), rates)
        wait_done(cluster, "mv", {0: after, 1: [2, 3]})
        out = tools.both(
            REASSIGN, "--verify", "--reassignment-json-file", path, "--preserve-throttles"
        )
        assert out == (
            "Status of partition reassignment:\n"
            "Reassignment of partition mv-0 is completed.\n"
            "Reassignment of partition mv-1 is completed.\n\n"
        )
        assert configs(cluster, ResourceType.TOPIC, "mv")  # preserved
        code, out = run(REASSIGN, "--verify", "--reassignment-json-file", path)
        assert code == 0 and out.endswith(
            "\nClearing broker-level throttles on brokers 1,2,3\n"
            "Clearing topic-level throttles on topic mv\n"
        ), out
        wait_configs(cluster, ResourceType.TOPIC, "mv", {})
        for b in (1, 2, 3):
            wait_configs(cluster, ResourceType.BROKER, str(b), {})
    # the file of the other direction: the replica set differs
    out = tools.both(
        REASSIGN, "--verify", "--reassignment-json-file", forward, "--preserve-throttles"
    )
    assert (
        "There is no active reassignment of partition mv-0, but replica set is 1,2 rather than 2,3."
        in out
    )
    # several topics: the sets print in Java's HashSet order
    mixed = {("mv", 1): [2, 3], ("gen", 2): [3, 2], ("zz-other", 0): [1]}
    out = tools.both(
        REASSIGN,
        "--verify",
        "--reassignment-json-file",
        tools.file("mixed.json", reassignment_json(mixed)),
    )
    assert "Clearing topic-level throttles on topics gen,zz-other,mv\n" in out, out
    assert out.endswith(
        "\nError: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
        "The topic 'zz-other' does not exist.\n"
    )
    # bad input, as Kafka reports it
    unknown = tools.file("unknown.json", reassignment_json({("mv", 0): [1, 9]}))
    code, out = tools.ours(REASSIGN, "--execute", "--reassignment-json-file", unknown)
    assert code == 1 and out.startswith("Error: Unknown broker id 9"), out


def test_list_and_cancel_a_running_reassignment(cluster: Cluster, tools: Tools) -> None:
    controller = cluster.controller_id()
    stopped = max(b for b in cluster.brokers if b != controller)
    a, b = (x for x in sorted(cluster.brokers) if x != stopped)
    make_topic(cluster, "cx", [[a, b]])
    path = tools.file("cx.json", reassignment_json({("cx", 0): [stopped, b]}))
    outputs = []
    for execute, inspect in ((tools.kafka, tools.ours), (tools.ours, tools.kafka)):
        # the new replica cannot catch up while its broker is stopped
        proc = cluster.brokers[stopped].proc
        assert proc is not None
        proc.send_signal(signal.SIGSTOP)
        tools.exclude = {stopped}
        try:
            code, out = execute(REASSIGN, "--execute", "--reassignment-json-file", path)
            assert code == 0, out
            code, listing = inspect(REASSIGN, "--list")
            assert listing == (
                "Current partition reassignments:\n"
                f"cx-0: replicas: {stopped},{b},{a}. adding: {stopped}. removing: {a}.\n"
            )
            code, again = execute(REASSIGN, "--execute", "--reassignment-json-file", path)
            assert code == 1 and again.startswith("Cannot execute because there is an existing"), (
                again
            )
            # (clearing the throttles would need the stopped broker)
            code, cancelled = inspect(
                REASSIGN, "--cancel", "--reassignment-json-file", path, "--preserve-throttles"
            )
            assert code == 0, cancelled
            outputs.append(cancelled)
        finally:
            proc.send_signal(signal.SIGCONT)
            tools.exclude = set()
        # Kafka's cancel reverts to the original replicas in the order they hold in
        # the full list (target first): [b, a]
        wait_done(cluster, "cx", {0: [b, a]})
    assert (
        outputs[0]
        == outputs[1]
        == (
            "Successfully cancelled partition reassignment for: cx-0\n"
            "None of the specified partition moves are active."
        )
    )
    out = tools.both(REASSIGN, "--cancel", "--reassignment-json-file", path)
    assert out == (
        "None of the specified partition reassignments are active.\n"
        "None of the specified partition moves are active."
        "Clearing broker-level throttles on brokers 1,2,3\n"
        "Clearing topic-level throttles on topic cx\n"
    )
    cluster.wait_for_isr("cx", 0, 2)


def test_reassignment_written_to_zookeeper(cluster: Cluster) -> None:
    make_topic(cluster, "zk", [[1, 2], [2, 3]])
    node = {
        "version": 1,
        "partitions": [
            {"topic": "zk", "partition": 0, "replicas": [3, 1]},
            {"topic": "zk", "partition": 1, "replicas": [2, 3]},  # already there
            {"topic": "nosuch", "partition": 0, "replicas": [1]},  # unknown
        ],
    }
    cluster.zk.create("/admin/reassign_partitions", json.dumps(node).encode(), makepath=True)
    wait_done(cluster, "zk", {0: [3, 1], 1: [2, 3]})
    wait_until(lambda: not cluster.zk.exists("/admin/reassign_partitions"), 30, "node deleted")
    cluster.wait_for_isr("zk", 0, 2)
    assert set(cluster.partition_state("zk", 0)["isr"]) == {1, 3}  # type: ignore[index]


def test_preferred_and_unclean_elections_with_either_tool(cluster: Cluster, tools: Tools) -> None:
    make_topic(cluster, "pe", [[1, 2], [2, 3], [3, 1], [1, 2]])
    # swap each preferred replica: the leaders stay, no longer preferred
    swapped = {("pe", 0): [2, 1], ("pe", 1): [3, 2], ("pe", 2): [1, 3], ("pe", 3): [2, 1]}
    code, out = tools.ours(
        REASSIGN,
        "--execute",
        "--reassignment-json-file",
        tools.file("pe.json", reassignment_json(swapped)),
    )
    assert code == 0, out
    wait_done(cluster, "pe", {p: r for (_, p), r in swapped.items()})
    assert [cluster.leader("pe", p) for p in range(4)] == [1, 2, 3, 1]

    code, out = tools.kafka(
        ELECT, "--election-type", "PREFERRED", "--topic", "pe", "--partition", "0"
    )
    assert (code, out) == (
        0,
        "Successfully completed leader election (PREFERRED) for partitions pe-0\n",
    )
    assert cluster.leader("pe", 0) == 2
    code, out = tools.ours(
        ELECT,
        "--election-type",
        "preferred",
        "--path-to-json-file",
        tools.file("e.json", {"partitions": [{"topic": "pe", "partition": 1}]}),
    )
    assert (code, out) == (
        0,
        "Successfully completed leader election (PREFERRED) for partitions pe-1\n",
    )
    assert cluster.leader("pe", 1) == 3
    both = tools.file(
        "e2.json",
        {
            "partitions": [
                {"topic": "pe", "partition": 0},
                {"topic": "pe", "partition": 1},
                {"topic": "nosuch", "partition": 0},
            ]
        },
    )
    out = tools.both(ELECT, "--election-type", "PREFERRED", "--path-to-json-file", both)
    assert out.startswith("Valid replica already elected for partitions ")
    assert (
        "Error completing leader election (PREFERRED) for partition: nosuch-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"
    ) in out
    out = tools.both(ELECT, "--election-type", "UNCLEAN", "--topic", "pe", "--partition", "2")
    assert out == "Valid replica already elected for partitions pe-2\n"

    # the ZooKeeper node: the election runs, the node goes
    cluster.zk.create(
        "/admin/preferred_replica_election",
        json.dumps({"version": 1, "partitions": [{"topic": "pe", "partition": 2}]}).encode(),
        makepath=True,
    )
    wait_until(lambda: cluster.leader("pe", 2) == 1, 30, "pe-2 led by its preferred replica")
    wait_until(
        lambda: not cluster.zk.exists("/admin/preferred_replica_election"), 30, "node deleted"
    )

    # --all-topic-partitions: pe-3 is the only one left
    code, out = tools.ours(ELECT, "--election-type", "PREFERRED", "--all-topic-partitions")
    head = "Successfully completed leader election (PREFERRED) for partitions "
    assert code == 0 and out.startswith(head) and out.count("\n") == 1, out
    assert "pe-3" in out[len(head) :].strip().split(", ")
    assert cluster.leader("pe", 3) == 2
    assert tools.both(ELECT, "--election-type", "PREFERRED", "--all-topic-partitions") == ""

    # UNCLEAN: both replicas down, the one outside the ISR comes back first
    controller = cluster.controller_id()
    x, y = (b for b in sorted(cluster.brokers) if b != controller)
    make_topic(cluster, "un", [[x, y]])
    cluster.brokers[y].stop()
    cluster.wait_for_isr("un", 0, 1)
    cluster.brokers[x].stop()
    wait_until(lambda: cluster.leader("un", 0) == -1, 30, "un-0 offline")
    cluster.restart(y)
    assert cluster.leader("un", 0) == -1  # unclean election is off
    code, out = tools.kafka(
        ELECT, "--election-type", "UNCLEAN", "--topic", "un", "--partition", "0"
    )
    assert (code, out) == (
        0,
        "Successfully completed leader election (UNCLEAN) for partitions un-0\n",
    )
    assert cluster.leader("un", 0) == y
    cluster.restart(x)
    out = tools.both(ELECT, "--election-type", "UNCLEAN", "--topic", "un", "--partition", "0")
    assert out == "Valid replica already elected for partitions un-0\n"
