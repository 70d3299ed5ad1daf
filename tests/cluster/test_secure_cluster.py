"""A three-broker cluster whose brokers talk to each other over SASL_SSL (PLAIN, the
credentials from the listener's JAAS ``username`` / ``password``): the controller's
requests, the replica fetchers and AlterPartition all go through TLS and SASL, so an RF3
topic written with acks=all through the SASL_SSL listener is only acknowledged once the
followers fetched it over the secured listener; the records are then consumed back.

The brokers also run the authorizer: their inter-broker requests (LeaderAndIsr,
UpdateMetadata, follower Fetch, AlterPartition) need CLUSTER_ACTION, which ``User:broker``
has as a super user, as in Kafka; the client, alice, only what her ACLs allow.

A PLAINTEXT listener stays on each broker for the test harness (start-up checks, and the
ACLs, as the super user ``User:ANONYMOUS``); the brokers never use it between themselves
(``inter.broker.listener.name=SASL_SSL``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from kafkacore.net import send_once
from kafkacore.protocol import APIS_BY_NAME, ApiKey
from support.certs import make_pki
from support.cluster import PRODUCER_CONFIG, Cluster, wait_until
from support.secure import free_port, plain_jaas, write_pem_files
from support.zookeeper import ZooKeeperServer, unique_chroot

pytestmark = pytest.mark.timeout(240)

USERS = {"broker": "broker-secret", "alice": "alice-secret"}


def _alice_acls(port: int) -> int:
    """How many ACLs of User:alice the broker at ``port`` holds (DescribeAcls v3 to it)."""
    api = APIS_BY_NAME["DescribeAcls"]
    request = api.request.cls(
        resource_type_filter=1,  # ANY
        resource_name_filter=None,
        pattern_type_filter=1,  # ANY
        principal_filter="User:alice",
        host_filter=None,
        operation=1,  # ANY
        permission_type=1,  # ANY
    )
    response = send_once(
        "localhost", port, ApiKey(api.key), 3, request, client_id="harness", timeout_s=10
    )
    return sum(len(r.acls) for r in response.resources)


@pytest.fixture(scope="module")
def secure_cluster(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Cluster, dict[int, int], Path, list[int]]]:
    directory = tmp_path_factory.mktemp("secure-cluster")
    pem = write_pem_files(directory / "pki", make_pki())
    plain_ports = [free_port() for _ in range(3)]
    sasl_ports = {node: free_port() for node in (1, 2, 3)}
    jaas = plain_jaas("broker", "broker-secret", USERS)
    overrides = [
        "inter.broker.listener.name=SASL_SSL",
        "sasl.enabled.mechanisms=PLAIN",
        "sasl.mechanism.inter.broker.protocol=PLAIN",
        f"listener.name.sasl_ssl.plain.sasl.jaas.config={jaas}",
        "ssl.keystore.type=PEM",
        f"ssl.keystore.location={pem.server_keystore}",
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={pem.ca}",
        "authorizer.class.name=kafkacore.security.acl.Authorizer",
        "super.users=User:broker;User:ANONYMOUS",
    ]
    per_broker = {
        node: [
            f"listeners=PLAINTEXT://localhost:{plain_ports[node - 1]},"
            f"SASL_SSL://localhost:{sasl_ports[node]}"
        ]
        for node in (1, 2, 3)
    }
    cluster = Cluster(
        unique_chroot(zookeeper.connect_string, "secure"),
        directory,
        overrides=overrides,
        ports=plain_ports,
        broker_overrides=per_broker,
    )
    try:
        yield cluster.start(), sasl_ports, pem.ca, plain_ports
    finally:
        cluster.stop()


def test_rf3_acks_all_replicates_over_sasl_ssl(
    secure_cluster: tuple[Cluster, dict[int, int], Path, list[int]],
) -> None:
    cluster, sasl_ports, ca, plain_ports = secure_cluster
    client = {
        "bootstrap.servers": ",".join(f"localhost:{p}" for p in sasl_ports.values()),
        "security.protocol": "sasl_ssl",
        "ssl.ca.location": str(ca),
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    }
    harness = AdminClient({"bootstrap.servers": cluster.bootstrap})  # PLAINTEXT, super user

    def allow(kind: ResourceType, name: str, op: AclOperation) -> AclBinding:
        return AclBinding(
            kind, name, ResourcePatternType.LITERAL, "User:alice", "*", op, AclPermissionType.ALLOW
        )

    acls = [
        allow(ResourceType.BROKER, "kafka-cluster", AclOperation.CREATE),
        allow(ResourceType.TOPIC, "secure", AclOperation.WRITE),
        allow(ResourceType.TOPIC, "secure", AclOperation.READ),
        allow(ResourceType.GROUP, "secure-reader", AclOperation.READ),
    ]
    for future in harness.create_acls(acls).values():
        future.result(30)
    admin = AdminClient(client)
    # ACLs reach every broker through ZooKeeper's change notifications
    for port in plain_ports:
        wait_until(lambda port=port: _alice_acls(port) == 4 or None, 30, f"alice's ACLs on {port}")
    admin.create_topics([NewTopic("secure", 1, 3)], operation_timeout=30)["secure"].result(60)
    cluster.wait_for_leader("secure", 0)
    wait_until(
        lambda: len(cluster.partition_state("secure", 0)["isr"]) == 3,  # type: ignore[index]
        60,
        "the ISR to hold the three brokers",
    )
    errors: list[KafkaError] = []
    producer = Producer({**client, **PRODUCER_CONFIG, "error_cb": errors.append})
    values = [f"secure-{i}".encode() for i in range(300)]
    acked: list[int] = []

    def on_delivery(err: KafkaError | None, message: object) -> None:
        if err is None:
            acked.append(1)

    for value in values:
        producer.produce("secure", value, partition=0, on_delivery=on_delivery)
    assert producer.flush(60) == 0
    assert len(acked) == len(values), errors
    # every follower fetched it over SASL_SSL: the high watermark (hence the acks) needs
    # all three in the ISR, which stays complete
    assert len(cluster.partition_state("secure", 0)["isr"]) == 3  # type: ignore[index]
    consumer = Consumer({**client, "group.id": "secure-reader", "enable.auto.commit": False})
    consumer.assign([TopicPartition("secure", 0, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(got) < len(values) and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            got.append(message.value())
    consumer.close()
    assert got == values
    for broker in cluster.brokers.values():
        log = broker.log_text()
        assert "Failed authentication" not in log, log[-3000:]
        assert "connect failed" not in log, log[-3000:]
