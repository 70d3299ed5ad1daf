"""Mixed KRaft clusters with Apache Kafka 4.3.1 (issue 27 part B): a Kafka 4.3.1 broker
registers with a kafkacore controller and replicates beside two kafkacore brokers, and
kafkacore brokers register with a Kafka 4.3.1 controller and replicate beside a Kafka
broker - RF3 topics whose replicas are byte-identical on both kinds, with leaders of both
kinds, consumer groups on both, partitions added and a topic deleted through either."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from kafkacore.net import send_once
from kafkacore.protocol import ApiKey
from kafkacore.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from support.cluster import wait_until
from support.kraft_cluster import KRaftCluster

pytestmark = [pytest.mark.interop, pytest.mark.slow]

KAFKA_BROKER, KAFKACORE_BROKERS = 1, (2, 3)
KAFKACORE_BROKER = KAFKACORE_BROKERS[0]


@pytest.fixture(scope="module")
def kafkacore_quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """A kafkacore controller, a Kafka 4.3.1 broker and two kafkacore brokers."""
    cluster = KRaftCluster(
        tmp_path_factory.mktemp("kc-quorum"),
        kafka_controllers=(),
        kafkacore_controllers=[3000],
        kafka_brokers=[KAFKA_BROKER],
        kafkacore_brokers=KAFKACORE_BROKERS,
    )
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def kafka_quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """A Kafka 4.3.1 controller, a Kafka 4.3.1 broker and two kafkacore brokers."""
    cluster = KRaftCluster(
        tmp_path_factory.mktemp("kafka-quorum"),
        kafka_controllers=[3000],
        kafka_brokers=[KAFKA_BROKER],
        kafkacore_brokers=KAFKACORE_BROKERS,
    )
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def _segment(data: Path, topic: str, partition: int) -> bytes:
    return (data / f"{topic}-{partition}" / "00000000000000000000.log").read_bytes()


def _replicate_byte_for_byte(cluster: KRaftCluster, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics(
        [NewTopic(topic, 6, 3, config={"min.insync.replicas": "2"})], operation_timeout=30
    )[topic].result(60)
    for node in cluster.brokers:  # the metadata reaches every broker (not at once)

        def leaders(node_bootstrap: str = node.bootstrap) -> set[int] | None:
            metadata = AdminClient({"bootstrap.servers": node_bootstrap}).list_topics(
                topic, timeout=10
            )
            partitions = metadata.topics[topic].partitions.values()
            found = {p.leader for p in partitions}
            return found if len(partitions) == 6 and -1 not in found else None

        found = wait_until(leaders, 60, f"{topic}'s leaders known to broker {node.node_id}")
        assert KAFKA_BROKER in found and found & set(KAFKACORE_BROKERS), found  # both lead

    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True, "acks": "all"}
    )
    failures: list[object] = []
    values = [bytes([i % 256]) * 512 + str(i).encode() for i in range(800)]
    for i, value in enumerate(values):
        producer.produce(
            topic,
            value,
            key=str(i).encode(),
            on_delivery=lambda err, _m: failures.append(err) if err else None,
        )
    assert producer.flush(60) == 0
    assert failures == []

    for partition in range(6):
        wait_until(
            lambda p=partition: len({_segment(n.data, topic, p) for n in cluster.brokers}) == 1,
            60,
            f"{topic}-{partition} identical on Kafka's broker and kafkacore's",
        )
        assert len(_segment(cluster.nodes[KAFKA_BROKER].data, topic, partition)) > 0

    for node_id in (KAFKA_BROKER, KAFKACORE_BROKER):  # a consumer group on each kind
        consumer = Consumer(
            {
                "bootstrap.servers": cluster.nodes[node_id].bootstrap,
                "group.id": f"{topic}-{node_id}",
                "auto.offset.reset": "earliest",
            }
        )
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        try:
            while len(got) < len(values) and time.monotonic() < deadline:
                message = consumer.poll(1.0)
                if message is not None and not message.error():
                    value = message.value()
                    assert value is not None
                    got.append(value)
        finally:
            consumer.close()
        assert sorted(got) == sorted(values)


def _grow_and_delete(cluster: KRaftCluster, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.nodes[KAFKACORE_BROKER].bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3)], operation_timeout=30)[topic].result(60)
    admin.create_partitions([NewPartitions(topic, 3)], operation_timeout=30)[topic].result(60)
    for node in cluster.brokers:
        wait_until(lambda node=node: (node.data / f"{topic}-2").exists(), 60, "the new partition")
    admin.delete_topics([topic], operation_timeout=30)[topic].result(60)
    wait_until(
        lambda: (
            not any((n.data / f"{topic}-{p}").exists() for n in cluster.brokers for p in range(3))
        ),
        60,
        "every replica deleted",
    )


def test_kafka_broker_joins_a_kafkacore_quorum(kafkacore_quorum: KRaftCluster) -> None:
    _replicate_byte_for_byte(kafkacore_quorum, "under-kafkacore")


def test_admin_through_a_kafkacore_quorum(kafkacore_quorum: KRaftCluster) -> None:
    _grow_and_delete(kafkacore_quorum, "admin-kc")


def test_kafkacore_broker_joins_a_kafka_quorum(kafka_quorum: KRaftCluster) -> None:
    _replicate_byte_for_byte(kafka_quorum, "under-kafka")


def test_admin_through_a_kafka_quorum(kafka_quorum: KRaftCluster) -> None:
    _grow_and_delete(kafka_quorum, "admin-kafka")


def _api_versions(node_bootstrap: str) -> ApiVersionsResponse:
    host, port = node_bootstrap.rsplit(":", 1)
    request = ApiVersionsRequest(
        client_software_name="kafkacore-test", client_software_version="1.0"
    )
    response = send_once(
        host, int(port), ApiKey.API_VERSIONS, 4, request, client_id="t", timeout_s=10
    )
    assert isinstance(response, ApiVersionsResponse)
    return response


def test_features_in_api_versions_as_kafkas_broker(kafka_quorum: KRaftCluster) -> None:
    """ApiVersions v4 of the Kafka broker and of a kafkacore broker of one cluster: the
    same finalized features (from the FeatureLevelRecords), and the same supported
    ranges except where kafkacore supports less (transaction.version 2, share and
    streams groups)."""
    kafka = _api_versions(kafka_quorum.nodes[KAFKA_BROKER].bootstrap)
    ours = _api_versions(kafka_quorum.nodes[KAFKACORE_BROKER].bootstrap)
    assert ours.error_code == kafka.error_code == 0

    def finalized(r: ApiVersionsResponse) -> list[tuple[str, int, int]]:
        return [(f.name, f.min_version_level, f.max_version_level) for f in r.finalized_features]

    # as sets: the order Kafka's broker lists them in is not yet kafkacore's
    # (kafkacore.features.FinalizedFeatures.in_kafka_order puts
    # eligible.leader.replicas.version before group.version, Kafka 4.3.1 after)
    assert sorted(finalized(ours)) == sorted(finalized(kafka))
    assert ours.finalized_features_epoch >= 0 and kafka.finalized_features_epoch >= 0
    supported_kafka = {f.name: (f.min_version, f.max_version) for f in kafka.supported_features}
    supported_ours = {f.name: (f.min_version, f.max_version) for f in ours.supported_features}
    capped = {"transaction.version", "share.version", "streams.version"}
    assert set(supported_ours) <= set(supported_kafka) | capped
    for name, levels in supported_ours.items():
        if name not in capped:
            assert levels == supported_kafka[name], name
