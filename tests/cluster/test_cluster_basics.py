"""A three-broker kafkacore cluster on a real ZooKeeper: the controller's election and
its znodes in Kafka's formats, topic creation with Kafka's replica assignment, acks=all
writes replicated to byte-identical logs on every replica, and what clients and Kafka's
own tools see (Metadata from each broker, kcat -L, kafka-topics --describe)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from cluster.conftest import consume_all, create_topic, producer
from compat.conftest import KafkaTools, kafka_tools  # noqa: F401  (fixture)
from support.cluster import Cluster, wait_until

pytestmark = pytest.mark.timeout(300)


def segment_bytes(cluster: Cluster, topic: str, partition: int) -> dict[int, bytes]:
    """Each broker's copy of the partition: its .log files concatenated."""
    copies = {}
    for node_id, broker in cluster.brokers.items():
        directory = broker.data / f"{topic}-{partition}"
        if directory.is_dir():
            copies[node_id] = b"".join(p.read_bytes() for p in sorted(directory.glob("*.log")))
    return copies


def wait_for_identical_replicas(
    cluster: Cluster, topic: str, partition: int, replicas: int = 3
) -> bytes:
    def same() -> bytes | None:
        copies = segment_bytes(cluster, topic, partition)
        values = set(copies.values())
        if len(copies) == replicas and len(values) == 1:
            return next(iter(values)) or b"\0"
        return None

    return wait_until(same, 60, f"identical replicas of {topic}-{partition}")


def test_controller_elected_with_kafka_znodes(cluster: Cluster) -> None:
    controller = wait_until(cluster.controller_id, 30, "a controller")
    assert controller in cluster.brokers
    data, stat = cluster.zk.get("/controller")
    assert stat.ephemeralOwner != 0
    record = json.loads(data)
    assert record["version"] in (1, 2) and record["brokerid"] == controller
    assert isinstance(record["timestamp"], str)
    assert (cluster.controller_epoch() or 0) >= 1
    for node_id in cluster.brokers:
        data, stat = cluster.zk.get(f"/brokers/ids/{node_id}")
        assert stat.ephemeralOwner != 0
        registration = json.loads(data)
        assert registration["version"] == 5
        assert registration["endpoints"] == [
            f"PLAINTEXT://localhost:{cluster.brokers[node_id].port}"
        ]
        assert registration["port"] == cluster.brokers[node_id].port
    cluster_id = json.loads(cluster.zk.get("/cluster/id")[0])
    assert cluster_id["version"] == "1" and cluster_id["id"]


def test_topic_created_replicated_and_readable_everywhere(cluster: Cluster, tmp_path: Path) -> None:
    create_topic(cluster, "orders", 3, 3, {"min.insync.replicas": "2"})
    topic = json.loads(cluster.zk.get("/brokers/topics/orders")[0])
    assert topic["version"] == 3 and len(topic["topic_id"]) == 22
    assert sorted(topic["partitions"]) == ["0", "1", "2"]
    leaders = set()
    for p in range(3):
        replicas = topic["partitions"][str(p)]
        assert sorted(replicas) == [1, 2, 3]
        state = cluster.partition_state("orders", p)
        assert state is not None
        assert state["leader"] == replicas[0]  # the preferred replica leads a new partition
        assert sorted(state["isr"]) == [1, 2, 3] and state["leader_epoch"] == 0
        assert state["controller_epoch"] == cluster.controller_epoch()
        leaders.add(state["leader"])
    assert len(leaders) == 3  # round-robin: one leader per broker

    p = producer(cluster)
    acked: list[bytes] = []

    def on_delivery(err: object, msg: object) -> None:
        assert err is None, err
        acked.append(msg.value())  # type: ignore[attr-defined]

    for i in range(600):
        p.produce("orders", f"v{i}".encode(), partition=i % 3, on_delivery=on_delivery)
    assert p.flush(60) == 0
    assert len(acked) == 600
    consumed = consume_all(cluster, "orders", 3)
    for part in range(3):
        assert consumed[part] == [f"v{i}".encode() for i in range(part, 600, 3)]
        wait_for_identical_replicas(cluster, "orders", part)

    # every broker's metadata names the same leaders, replicas and ISR
    views = []
    for broker in cluster.brokers.values():
        md = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics("orders", timeout=10)
        views.append(
            {
                pid: (pm.leader, sorted(pm.replicas), sorted(pm.isrs))
                for pid, pm in md.topics["orders"].partitions.items()
            }
        )
        assert sorted(b.id for b in md.brokers.values()) == [1, 2, 3]
    assert views[0] == views[1] == views[2]
    assert {pid: v[0] for pid, v in views[0].items()} == {
        p: cluster.leader("orders", p) for p in range(3)
    }


def test_replication_factor_above_live_brokers_is_refused(cluster: Cluster) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic("too-many", 1, 4)], request_timeout=30)
    with pytest.raises(KafkaException) as raised:
        futures["too-many"].result(30)
    error = raised.value.args[0]
    assert error.name() == "INVALID_REPLICATION_FACTOR"
    assert "Replication factor: 4 larger than available brokers: 3." in error.str()


def test_kcat_and_kafka_topics_describe_show_the_leaders(
    cluster: Cluster,
    kafka_tools: KafkaTools,  # noqa: F811
) -> None:
    create_topic(cluster, "described", 2, 3)
    out = subprocess.run(
        ["kcat", "-b", cluster.bootstrap, "-L", "-J", "-t", "described"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    listed = json.loads(out)
    (topic,) = listed["topics"]
    for partition in topic["partitions"]:
        assert partition["leader"] == cluster.leader("described", partition["partition"])
        assert sorted(r["id"] for r in partition["replicas"]) == [1, 2, 3]
    assert sorted(b["id"] for b in listed["brokers"]) == [1, 2, 3]

    result = kafka_tools.run(
        "org.apache.kafka.tools.TopicCommand",
        "--bootstrap-server",
        cluster.bootstrap,
        "--describe",
        "--topic",
        "described",
    ).check()
    lines = [line for line in result.stdout.splitlines() if "\tPartition: " in line]
    assert len(lines) == 2, result.stdout
    for line in lines:
        fields = dict(
            part.strip().split(": ", 1) for part in line.strip().split("\t") if ": " in part
        )
        p = int(fields["Partition"])
        state = cluster.partition_state("described", p)
        assert state is not None
        assert int(fields["Leader"]) == state["leader"]
        assert sorted(int(r) for r in fields["Replicas"].split(",")) == [1, 2, 3]
        assert sorted(int(r) for r in fields["Isr"].split(",")) == sorted(state["isr"])


def test_reassignment_and_preferred_election_with_kafkas_tools(
    cluster: Cluster,
    kafka_tools: KafkaTools,  # noqa: F811
    tmp_path: Path,
) -> None:
    """kafka-reassign-partitions moves a partition from [1, 2] to [2, 3] through the
    controller (KIP-455): the data reaches broker 3, broker 1's copy goes, the topic
    znode ends as the target. kafka-leader-election then makes the preferred replica
    (the first of the new assignment) lead."""
    kafka_tools.run(
        "org.apache.kafka.tools.TopicCommand",
        "--bootstrap-server",
        cluster.bootstrap,
        "--create",
        "--topic",
        "moving",
        "--replica-assignment",
        "1:2",
    ).check()
    cluster.wait_for_leader("moving", 0)
    p = producer(cluster)
    for i in range(100):
        p.produce("moving", f"m{i}".encode())
    assert p.flush(30) == 0
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [2, 3]}]}
        )
    )
    tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
    b = ("--bootstrap-server", cluster.bootstrap)
    kafka_tools.run(tool, *b, "--reassignment-json-file", str(plan), "--execute").check()

    def done() -> bool:
        out = kafka_tools.run(tool, *b, "--reassignment-json-file", str(plan), "--verify")
        return out.returncode == 0 and "is completed" in out.stdout

    wait_until(done, 90, "the reassignment to complete")
    topic = json.loads(cluster.zk.get("/brokers/topics/moving")[0])
    assert topic["partitions"]["0"] == [2, 3]
    assert not topic.get("adding_replicas") and not topic.get("removing_replicas")
    copies = wait_until(
        lambda: (c := segment_bytes(cluster, "moving", 0)) and set(c) == {2, 3} and c,
        60,
        "the partition on brokers 2 and 3 only",
    )
    assert copies[2] == copies[3]
    assert consume_all(cluster, "moving", 1)[0] == [f"m{i}".encode() for i in range(100)]

    election = "org.apache.kafka.tools.LeaderElectionCommand"
    kafka_tools.run(
        election, *b, "--election-type", "preferred", "--topic", "moving", "--partition", "0"
    )
    assert cluster.wait_for_leader("moving", 0) in (2, 3)
    wait_until(lambda: cluster.leader("moving", 0) == 2, 60, "the preferred replica to lead")


def test_kafkas_console_producer_and_consumer_on_the_cluster(
    cluster: Cluster,
    kafka_tools: KafkaTools,  # noqa: F811
) -> None:
    """The Java console producer (acks=all, idempotent by default) writes to a
    replication-factor-3 topic through any broker; the Java console consumer reads it
    back from the leaders."""
    create_topic(cluster, "console", 2, 3, {"min.insync.replicas": "2"})
    b = ("--bootstrap-server", cluster.bootstrap)
    lines = "".join(f"line-{i}\n" for i in range(40))
    kafka_tools.run(
        "org.apache.kafka.tools.ConsoleProducer",
        *b,
        "--topic",
        "console",
        "--producer-property",
        "acks=all",
        stdin=lines,
    ).check()
    out = kafka_tools.run(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        *b,
        "--topic",
        "console",
        "--from-beginning",
        "--max-messages",
        "40",
        "--timeout-ms",
        "30000",
    ).check()
    assert sorted(out.stdout.split()) == sorted(f"line-{i}" for i in range(40))
    for p in range(2):
        wait_for_identical_replicas(cluster, "console", p)


def test_topic_config_change_reaches_every_broker(cluster: Cluster) -> None:
    """AlterConfigs through one broker writes /config/topics/<t> and a change
    notification; every broker applies it (DescribeConfigs on each shows it)."""
    from confluent_kafka.admin import ConfigResource

    create_topic(cluster, "tuned", 1, 3)
    first = next(iter(cluster.brokers.values()))
    admin = AdminClient({"bootstrap.servers": first.bootstrap})
    resource = ConfigResource(
        ConfigResource.Type.TOPIC, "tuned", set_config={"retention.ms": "123456"}
    )
    admin.alter_configs([resource])[resource].result(30)
    stored = json.loads(cluster.zk.get("/config/topics/tuned")[0])
    assert stored == {"version": 1, "config": {"retention.ms": "123456"}}
    changes = cluster.zk.get_children("/config/changes")
    entity_paths = {
        json.loads(cluster.zk.get(f"/config/changes/{c}")[0])["entity_path"] for c in changes
    }
    assert "topics/tuned" in entity_paths
    for broker in cluster.brokers.values():
        each = AdminClient({"bootstrap.servers": broker.bootstrap})

        def applied(each: AdminClient = each, node: int = broker.node_id) -> bool:
            wanted = ConfigResource(ConfigResource.Type.TOPIC, "tuned")
            configs = each.describe_configs([wanted])[wanted].result(10)
            return configs["retention.ms"].value == "123456"

        wait_until(applied, 30, f"retention.ms on broker {broker.node_id}")
