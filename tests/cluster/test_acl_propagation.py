"""ACLs on a three-broker ZooKeeper cluster: created through one broker (confluent-kafka's
AdminClient), stored as Kafka 3.x stores them (``/kafka-acl/Topic/<name>``,
``/kafka-acl-extended/prefixed/Topic/<name>``, ``acl_changes_<seq>`` notifications), and
applied on every broker within a bound; deletions too; a restarted broker loads them; an
ACL written straight into ZooKeeper with its notification (as Kafka 3.9's AclAuthorizer
on a neighbouring broker writes it) applies everywhere."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from cluster.conftest import new_cluster
from kafkacore.protocol import APIS_BY_NAME
from support.acl_requests import acl_rows, filter_fields
from support.cluster import Cluster, wait_until
from support.raw_client import RawClient
from support.zookeeper import ZooKeeperServer

AUTHZ = (
    "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
    "super.users=User:ANONYMOUS",
)
# how long every broker may take to apply an ACL created through another one
PROPAGATION_BOUND_S = 5.0


@pytest.fixture(scope="module")
def acl_cluster(
    zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    c = new_cluster(zookeeper, tmp_path_factory.mktemp("acl"), *AUTHZ)
    try:
        yield c.start()
    finally:
        c.stop()


def describe_on(port: int) -> set[tuple[Any, ...]]:
    """Every ACL one broker answers DescribeAcls v3 with (raw frames, that broker only)."""

    async def call() -> Any:
        c = await RawClient.connect(port)
        try:
            request = APIS_BY_NAME["DescribeAcls"].request.cls(**filter_fields())
            return await c.call("DescribeAcls", 3, request)
        finally:
            c.close()

    response = asyncio.run(call())
    assert response.error_code == 0, response
    return acl_rows(response)


def on_every_broker(cluster: Cluster, expected: set[tuple[Any, ...]], what: str) -> float:
    """Seconds until every running broker answers ``expected`` (bounded)."""
    start = time.monotonic()
    for broker in cluster.brokers.values():
        if broker.running:
            wait_until(
                lambda b=broker: describe_on(b.port) == expected,
                PROPAGATION_BOUND_S,
                f"{what} on broker {broker.node_id}",
            )
    return time.monotonic() - start


READ_ORDERS = (2, "orders", 3, "User:alice", "*", 3, 3)
WRITE_PREFIX = (2, "ord", 4, "User:bob", "*", 4, 3)


def test_created_through_one_broker_applies_on_all(acl_cluster: Cluster) -> None:
    first = next(iter(acl_cluster.brokers.values()))
    admin = AdminClient({"bootstrap.servers": first.bootstrap})
    bindings = [
        AclBinding(
            ResourceType.TOPIC,
            "orders",
            ResourcePatternType.LITERAL,
            "User:alice",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.TOPIC,
            "ord",
            ResourcePatternType.PREFIXED,
            "User:bob",
            "*",
            AclOperation.WRITE,
            AclPermissionType.ALLOW,
        ),
    ]
    for future in admin.create_acls(bindings, request_timeout=30).values():
        future.result(30)
    on_every_broker(acl_cluster, {READ_ORDERS, WRITE_PREFIX}, "the new ACLs")

    # stored as Kafka 3.x stores them
    data, _ = acl_cluster.zk.get("/kafka-acl/Topic/orders")
    assert json.loads(data) == {
        "version": 1,
        "acls": [
            {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}
        ],
    }
    data, _ = acl_cluster.zk.get("/kafka-acl-extended/prefixed/Topic/ord")
    assert json.loads(data)["acls"][0]["operation"] == "Write"
    literal = acl_cluster.zk.get_children("/kafka-acl-changes")
    assert any(n.startswith("acl_changes_") for n in literal)
    payloads = {acl_cluster.zk.get(f"/kafka-acl-changes/{n}")[0] for n in literal}
    assert b"TOPIC:orders" in payloads
    extended = acl_cluster.zk.get_children("/kafka-acl-extended-changes")
    docs = [json.loads(acl_cluster.zk.get(f"/kafka-acl-extended-changes/{n}")[0]) for n in extended]
    assert {"version": 1, "resourceType": "TOPIC", "name": "ord", "patternType": "PREFIXED"} in docs

    # deleted through another broker: gone everywhere, the znode with it
    last = list(acl_cluster.brokers.values())[-1]
    admin = AdminClient({"bootstrap.servers": last.bootstrap})
    flt = AclBindingFilter(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    deleted = admin.delete_acls([flt], request_timeout=30)[flt].result(30)
    assert [(b.name, b.principal) for b in deleted] == [("orders", "User:alice")]
    on_every_broker(acl_cluster, {WRITE_PREFIX}, "the deletion")
    assert acl_cluster.zk.exists("/kafka-acl/Topic/orders") is None


def test_written_into_zookeeper_by_another_kafka_broker(acl_cluster: Cluster) -> None:
    """What Kafka 3.9's AclAuthorizer on another broker writes: the znode, then the
    notification; every kafkacore broker applies it."""
    zk = acl_cluster.zk
    entry = {
        "principal": "User:carol",
        "permissionType": "Deny",
        "operation": "Describe",
        "host": "10.1.2.3",
    }
    zk.create(
        "/kafka-acl/Group/g1", json.dumps({"version": 1, "acls": [entry]}).encode(), makepath=True
    )
    zk.create("/kafka-acl-changes/acl_changes_", b"Group:g1", sequence=True)
    expected = {WRITE_PREFIX, (3, "g1", 3, "User:carol", "10.1.2.3", 8, 2)}
    on_every_broker(acl_cluster, expected, "the ACL written by another broker")


def test_a_restarted_broker_loads_every_acl(acl_cluster: Cluster) -> None:
    node_id = list(acl_cluster.brokers)[1]
    broker = acl_cluster.brokers[node_id]
    expected = describe_on(broker.port)
    assert expected  # the earlier tests left ACLs behind
    broker.stop(check=False)
    # changed while it was down: it must see this too once back
    admin = AdminClient({"bootstrap.servers": next(iter(acl_cluster.brokers.values())).bootstrap})
    binding = AclBinding(
        ResourceType.TRANSACTIONAL_ID,
        "tx",
        ResourcePatternType.LITERAL,
        "User:dan",
        "*",
        AclOperation.WRITE,
        AclPermissionType.ALLOW,
    )
    admin.create_acls([binding], request_timeout=30)[binding].result(30)
    acl_cluster.restart(node_id)
    expected = expected | {(5, "tx", 3, "User:dan", "*", 4, 3)}
    on_every_broker(acl_cluster, expected, "the ACLs after a restart")


# -- the ZooKeeper store itself (two brokers' stores, no broker processes) -------------------


class _Leaders:
    def topic(self, name: str) -> None:
        return None


def test_zookeeper_store_read_modify_write_and_notifications(zookeeper: ZooKeeperServer) -> None:
    """Two stores (two brokers) adding to the same resource at once: the versioned
    read-modify-write keeps every entry; each store hears of the other's changes through
    the notifications; an emptied resource loses its znode; '/' cannot be stored."""
    from kafkacore.metadata import MetadataListener
    from kafkacore.metadata.zookeeper import ZooKeeperMetadataStore
    from kafkacore.security.acl import (
        AccessControlEntry,
        AclOperation,
        AclPermissionType,
        InvalidAclError,
        PatternType,
        ResourcePattern,
        ResourceType,
    )
    from kafkacore.zk.client import KafkaZkClient
    from support.zookeeper import unique_chroot

    connect = unique_chroot(zookeeper.connect_string, "aclstore")
    pattern = ResourcePattern(ResourceType.TOPIC, "shared", PatternType.PREFIXED)

    class Heard(MetadataListener):
        def __init__(self, log: list[Any]) -> None:
            self.log = log

        def on_acls_changed(
            self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry]
        ) -> None:
            self.log.append((pattern, entries))

    def entry(i: int) -> AccessControlEntry:
        return AccessControlEntry(f"User:u{i}", "*", AclOperation.READ, AclPermissionType.ALLOW)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        clients = [await KafkaZkClient.connect(connect) for _ in range(2)]
        stores = [
            ZooKeeperMetadataStore(zk, loop, i + 1, _Leaders()) for i, zk in enumerate(clients)
        ]
        heard: list[list[Any]] = [[], []]
        for store, log in zip(stores, heard, strict=True):
            await store.start("cluster-id")
            store.add_listener(Heard(log))
        try:
            # 20 concurrent additions, alternating stores, from I/O threads
            await asyncio.gather(
                *(
                    asyncio.to_thread(
                        stores[i % 2].update_acls, pattern, lambda cur, i=i: cur | {entry(i)}
                    )
                    for i in range(20)
                )
            )
            everything = frozenset(entry(i) for i in range(20))
            for store in stores:
                deadline = time.monotonic() + PROPAGATION_BOUND_S
                while store.acls().get(pattern) != everything and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert store.acls().get(pattern) == everything
            assert all(log and log[-1] == (pattern, everything) for log in heard)
            # emptied: the znode goes, both stores forget the pattern
            await asyncio.to_thread(stores[0].update_acls, pattern, lambda cur: frozenset())
            assert await clients[1].get_acls(pattern) == (frozenset(), -1)
            deadline = time.monotonic() + PROPAGATION_BOUND_S
            while pattern in stores[1].acls() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert pattern not in stores[1].acls()
            slash = ResourcePattern(ResourceType.TOPIC, "a/b", PatternType.LITERAL)
            with pytest.raises(InvalidAclError):
                await asyncio.to_thread(stores[0].update_acls, slash, lambda cur: cur | {entry(0)})
        finally:
            for store, zk in zip(stores, clients, strict=True):
                store.stop()
                await zk.close()

    asyncio.run(scenario())


# -- with Apache Kafka 3.9.1's AclAuthorizer on the same ZooKeeper ---------------------------


def test_shared_with_kafka_acl_authorizer(zookeeper: ZooKeeperServer, tmp_path: Path) -> None:
    """Two kafkacore brokers and one Kafka 3.9.1 broker (ZooKeeper mode, ``AclAuthorizer``)
    on one ZooKeeper: ACLs created or deleted through either kind apply on the other, so
    the znodes and notifications are Kafka's in both directions."""
    from cluster.test_mixed_cluster import KAFKA_ID, KafkaBroker

    cluster = new_cluster(zookeeper, tmp_path, *AUTHZ)
    cluster.brokers = {n: b for n, b in cluster.brokers.items() if n != KAFKA_ID}
    kafka = KafkaBroker(tmp_path / "kafka", cluster.zookeeper_connect)
    kafka.props.write_text(kafka.props.read_text() + "\n".join(AUTHZ) + "\n")
    try:
        kafka.start()
        for broker in cluster.brokers.values():
            broker.spawn()
        for broker in cluster.brokers.values():
            broker.wait_started(60)
        cluster.wait_for_brokers(3, 120)
        wait_until(lambda: _answers(kafka.port), 120, "Kafka answers DescribeAcls")
        cluster.wait_for_metadata(120, others={KAFKA_ID: kafka.bootstrap})
        ports = [kafka.port, *(b.port for b in cluster.brokers.values())]

        def everywhere(expected: set[tuple[Any, ...]], what: str) -> None:
            for port in ports:
                wait_until(lambda p=port: describe_on(p) == expected, 30, f"{what} on :{port}")

        # through Kafka: a literal and a prefixed ACL
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
        from_kafka = [
            AclBinding(
                ResourceType.TOPIC,
                "k-topic",
                ResourcePatternType.LITERAL,
                "User:kay",
                "*",
                AclOperation.READ,
                AclPermissionType.ALLOW,
            ),
            AclBinding(
                ResourceType.GROUP,
                "k-",
                ResourcePatternType.PREFIXED,
                "User:kay",
                "10.0.0.9",
                AclOperation.DESCRIBE,
                AclPermissionType.DENY,
            ),
        ]
        for future in admin.create_acls(from_kafka, request_timeout=30).values():
            future.result(30)
        kay = {(2, "k-topic", 3, "User:kay", "*", 3, 3), (3, "k-", 4, "User:kay", "10.0.0.9", 8, 2)}
        everywhere(kay, "ACLs created through Kafka")
        # through kafkacore: Kafka applies them
        first = next(iter(cluster.brokers.values()))
        admin_kc = AdminClient({"bootstrap.servers": first.bootstrap})
        from_kc = [
            AclBinding(
                ResourceType.TOPIC,
                "k-topic",
                ResourcePatternType.LITERAL,
                "User:cee",
                "*",
                AclOperation.WRITE,
                AclPermissionType.ALLOW,
            ),
            AclBinding(
                ResourceType.TRANSACTIONAL_ID,
                "t",
                ResourcePatternType.PREFIXED,
                "User:cee",
                "*",
                AclOperation.WRITE,
                AclPermissionType.ALLOW,
            ),
        ]
        for future in admin_kc.create_acls(from_kc, request_timeout=30).values():
            future.result(30)
        cee = {(2, "k-topic", 3, "User:cee", "*", 4, 3), (5, "t", 4, "User:cee", "*", 4, 3)}
        everywhere(kay | cee, "ACLs created through kafkacore")
        # deleted through Kafka
        flt = AclBindingFilter(
            ResourceType.ANY,
            None,
            ResourcePatternType.ANY,
            "User:kay",
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        assert len(admin.delete_acls([flt], request_timeout=30)[flt].result(30)) == 2
        everywhere(cee, "the deletion through Kafka")
    finally:
        kafka.stop()
        cluster.stop()


def _answers(port: int) -> bool:
    try:
        describe_on(port)
    except (OSError, AssertionError):
        return False
    return True
