"""The KRaft broker (issue 27 part B) as real processes, no JVM: a combined node
(``process.roles=broker,controller``) serving confluent-kafka, and a three-node cluster
of combined kafkacore nodes (one per module) - topics created and deleted through the
controller, configs and SCRAM credentials published from the metadata log, RF3
replication byte for byte, the leader's SIGKILL and its restart, a controlled shutdown
that moves leaderships away."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from support.cluster import wait_until
from support.kraft_cluster import KRaftCluster

pytestmark = pytest.mark.slow

SINGLE_NODE = (
    "offsets.topic.replication.factor=1",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
)


@pytest.fixture(scope="module")
def combined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    cluster = KRaftCluster(
        tmp_path_factory.mktemp("combined"),
        kafka_controllers=(),
        kafkacore_combined=[1],
        overrides=SINGLE_NODE,
    )
    try:
        yield cluster.start(timeout_s=60)
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    cluster = KRaftCluster(
        tmp_path_factory.mktemp("three"), kafka_controllers=(), kafkacore_combined=[1, 2, 3]
    )
    try:
        yield cluster.start(timeout_s=90)
    finally:
        cluster.stop()


def _create(bootstrap: str, name: str, partitions: int, rf: int, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, partitions, rf, config=config)], operation_timeout=30
    )
    futures[name].result(60)


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
    failures: list[object] = []
    for i, value in enumerate(values):
        producer.produce(
            topic,
            value,
            key=str(i).encode(),
            on_delivery=lambda err, _msg: failures.append(err) if err else None,
        )
    assert producer.flush(60) == 0
    assert failures == []


def _consume(bootstrap: str, topic: str, count: int, group: str) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
        }
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None or message.error():
                continue
            value = message.value()
            assert value is not None
            values.append(value)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return values


def _leaders(bootstrap: str, topic: str) -> dict[int, int]:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    return {p: m.leader for p, m in metadata.topics[topic].partitions.items()}


def _segment(node_data: Path, topic: str, partition: int) -> bytes:
    return (node_data / f"{topic}-{partition}" / "00000000000000000000.log").read_bytes()


def test_combined_node_serves_produce_and_consume(combined: KRaftCluster) -> None:
    bootstrap = combined.bootstrap
    _create(bootstrap, "orders", 3, 1)
    values = [f"order-{i}".encode() for i in range(300)]
    _produce(bootstrap, "orders", values)
    got = _consume(bootstrap, "orders", len(values), "combined-group")
    assert sorted(got) == sorted(values)
    # the group's offsets were committed to __consumer_offsets, which the broker asked
    # the controller to create
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "combined-group"})
    try:
        committed = consumer.committed([TopicPartition("orders", p) for p in range(3)], timeout=20)
    finally:
        consumer.close()
    assert sum(tp.offset for tp in committed) == len(values)


def test_combined_node_rejects_what_the_controller_rejects(combined: KRaftCluster) -> None:
    bootstrap = combined.bootstrap
    _create(bootstrap, "dup", 1, 1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic("dup", 1, 1)], operation_timeout=30)
    with pytest.raises(Exception, match="TOPIC_ALREADY_EXISTS"):
        futures["dup"].result(30)
    # a replication factor above the broker count: the controller's error, forwarded
    futures = admin.create_topics([NewTopic("too-many", 1, 3)], operation_timeout=30)
    with pytest.raises(Exception, match="INVALID_REPLICATION_FACTOR"):
        futures["too-many"].result(30)


def test_three_nodes_replicate_byte_for_byte(three: KRaftCluster) -> None:
    bootstrap = three.bootstrap
    _create(bootstrap, "replicated", 3, 3, **{"min.insync.replicas": "2"})
    values = [bytes([i % 251]) * 1024 for i in range(600)]
    _produce(bootstrap, "replicated", values)
    leaders = _leaders(bootstrap, "replicated")
    assert set(leaders.values()) <= {1, 2, 3} and -1 not in leaders.values()
    for partition in range(3):

        def same(partition: int = partition) -> bool:
            segments = {_segment(n.data, "replicated", partition) for n in three.brokers}
            return len(segments) == 1

        wait_until(same, 30, f"replicas of partition {partition} identical")
    assert sorted(_consume(bootstrap, "replicated", len(values), "three-group")) == sorted(values)


def test_leader_sigkill_moves_leadership_and_restart_catches_up(
    three: KRaftCluster,
) -> None:
    bootstrap = three.bootstrap
    _create(bootstrap, "failover", 1, 3, **{"min.insync.replicas": "2"})
    _produce(bootstrap, "failover", [b"before-%d" % i for i in range(100)])
    victim = _leaders(bootstrap, "failover")[0]
    three.kill(victim)
    survivors = ",".join(n.bootstrap for n in three.brokers if n.node_id != victim)

    def new_leader() -> int | None:
        leader = _leaders(survivors, "failover")[0]
        return leader if leader not in (-1, victim) else None

    wait_until(new_leader, 60, "a new leader after the SIGKILL")
    _produce(survivors, "failover", [b"after-%d" % i for i in range(100)])
    three.restart(victim)
    node = three.nodes[victim]
    others = [n for n in three.brokers if n.node_id != victim]

    def caught_up() -> bool:
        return _segment(node.data, "failover", 0) == _segment(others[0].data, "failover", 0)

    wait_until(caught_up, 60, f"node {victim} caught up after its restart")
    got = _consume(three.bootstrap, "failover", 200, "failover-group")
    assert sorted(got) == sorted(
        [b"before-%d" % i for i in range(100)] + [b"after-%d" % i for i in range(100)]
    )


def test_delete_topic_removes_every_replica(three: KRaftCluster) -> None:
    bootstrap = three.bootstrap
    _create(bootstrap, "doomed", 2, 3)
    _produce(bootstrap, "doomed", [b"x"] * 10)
    for node in three.brokers:
        wait_until(lambda node=node: (node.data / "doomed-0").exists(), 30, "the replica")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics(["doomed"], operation_timeout=30)["doomed"].result(60)

    def gone() -> bool:
        return not any((n.data / f"doomed-{p}").exists() for n in three.brokers for p in (0, 1))

    wait_until(gone, 60, "every replica of the deleted topic gone")
    metadata = admin.list_topics(timeout=10)
    assert "doomed" not in metadata.topics


def test_configs_and_scram_reach_the_broker_through_the_log(combined: KRaftCluster) -> None:
    """Altered through the controller (forwarded), seen by the broker only once the
    metadata log brought the records: the topic config in DescribeConfigs (and the log's
    own config), the SCRAM credential in DescribeUserScramCredentials."""
    bootstrap = combined.bootstrap
    _create(bootstrap, "configured", 1, 1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(
        ConfigResource.Type.TOPIC,
        "configured",
        incremental_configs=[
            ConfigEntry("retention.ms", "123456", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)

    def retention() -> str | None:
        described = admin.describe_configs(
            [ConfigResource(ConfigResource.Type.TOPIC, "configured")]
        )
        configs = next(iter(described.values())).result(30)
        value = configs["retention.ms"].value
        return value if value == "123456" else None

    wait_until(retention, 30, "the topic config published")
    upsert = UserScramCredentialUpsertion(
        "alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"secret"
    )
    admin.alter_user_scram_credentials([upsert])["alice"].result(30)

    def credential() -> bool:
        described = admin.describe_user_scram_credentials(["alice"])["alice"].result(30)
        infos = described.scram_credential_infos
        return any(
            i.mechanism == ScramMechanism.SCRAM_SHA_256 and i.iterations == 8192 for i in infos
        )

    wait_until(credential, 30, "the SCRAM credential published")


def test_controlled_shutdown_moves_leadership_first(three: KRaftCluster) -> None:
    """SIGTERM on a leader: its heartbeats ask to shut down, the controller moves its
    leaderships away and lets it go; an acks=all producer sees no error throughout."""
    bootstrap = three.bootstrap
    _create(bootstrap, "handover", 3, 3, **{"min.insync.replicas": "2"})
    _produce(bootstrap, "handover", [b"a"] * 50)
    victim = _leaders(bootstrap, "handover")[0]
    node = three.nodes[victim]
    assert node.broker is not None
    before = len(node.broker.log_text())
    three.stop_node(victim)
    assert node.broker.returncode == 0
    log = node.broker.log_text()[before:]
    assert "The controller has asked us to exit controlled shutdown." in log
    survivors = ",".join(n.bootstrap for n in three.brokers if n.node_id != victim)
    leaders = _leaders(survivors, "handover")
    assert victim not in leaders.values() and -1 not in leaders.values(), leaders
    _produce(survivors, "handover", [b"b"] * 50)
    three.restart(victim)
    three.wait_for_brokers()
