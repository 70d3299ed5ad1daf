"""CreateAcls / DescribeAcls / DeleteAcls on a single-node broker (raw frames): Kafka's
answers without an authorizer, validation and per-item errors, CLUSTER ALTER/DESCRIBE,
filters, persistence across a restart, and the authorizer's config."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import BrokerConfig, ConfigError
from kafkacore.metadata.embedded import EmbeddedMetadataStore
from kafkacore.protocol import APIS_BY_NAME
from kafkacore.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkacore.server import KafkaServer
from kafkacore.server.acl_sync import AUTHORIZER_CLASS_NAMES, build_authorizer
from support.acl_requests import (
    ALLOW,
    ALTER,
    ANY,
    CLUSTER,
    DENY,
    DESCRIBE,
    GROUP,
    LITERAL,
    MATCH,
    PREFIXED,
    READ,
    TOPIC,
    WRITE,
    acl_row,
    acl_rows,
    creation,
    filter_fields,
)
from support.raw_client import RawClient, make_request, run_broker

AUTHZ = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
SUPER = {**AUTHZ, "super.users": "User:ANONYMOUS"}

_DeleteReq: Any = APIS_BY_NAME["DeleteAcls"].request.cls


async def create(c: RawClient, *creations: Any, version: int = 3) -> list[tuple[int, Any]]:
    r = await c.call("CreateAcls", version, make_request("CreateAcls", creations=list(creations)))
    return [(x.error_code, x.error_message) for x in r.results]


async def describe(c: RawClient, version: int = 3, **kw: Any) -> Any:
    return await c.call(
        "DescribeAcls", version, make_request("DescribeAcls", **filter_fields(**kw))
    )


async def delete(c: RawClient, *filters: dict[str, Any], version: int = 3) -> Any:
    request = make_request(
        "DeleteAcls", filters=[_DeleteReq.DeleteAclsFilter(**f) for f in filters]
    )
    return await c.call("DeleteAcls", version, request)


def test_without_an_authorizer_kafka_says_security_disabled(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        assert server.services is not None and server.services.authorizer is None
        c = await RawClient.connect(server.bound_port)
        d = await describe(c)
        assert (d.error_code, d.error_message) == (54, "No Authorizer is configured on the broker")
        assert (
            await create(c, creation(), creation(name="x"))
            == [
                (54, "No Authorizer is configured."),
            ]
            * 2
        )
        r = await delete(c, filter_fields(), filter_fields(rtype=TOPIC))
        assert [(f.error_code, f.error_message) for f in r.filter_results] == [
            (54, "No Authorizer is configured."),
        ] * 2
        c.close()

    run_broker(tmp_path, scenario)


def test_create_describe_delete_and_restart(tmp_path: Path) -> None:
    alice_read = (TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW)
    bob_prefixed = (TOPIC, "ord", PREFIXED, "User:bob", "10.0.0.1", WRITE, DENY)
    wildcard = (TOPIC, "*", LITERAL, "User:*", "*", DESCRIBE, ALLOW)
    group = (GROUP, "g1", LITERAL, "User:alice", "*", READ, ALLOW)
    cluster = (CLUSTER, "kafka-cluster", LITERAL, "User:alice", "*", ALTER, ALLOW)

    def c_of(t: tuple[Any, ...]) -> Any:
        return creation(*t)

    async def first(server: KafkaServer) -> None:
        c = await RawClient.connect(server.bound_port)
        everything = [alice_read, bob_prefixed, wildcard, group, cluster]
        assert await create(c, *map(c_of, everything)) == [(0, "")] * 5
        assert await create(c, c_of(alice_read), version=1) == [(0, "")]  # already there
        assert acl_rows(await describe(c)) == set(everything)
        for version in (1, 2, 3):
            assert acl_rows(await describe(c, version=version, rtype=GROUP)) == {group}
        # LITERAL exact; MATCH: what applies to topic "orders"; ANY: exact name, any type
        assert acl_rows(await describe(c, rtype=TOPIC, name="orders", pattern=LITERAL)) == {
            alice_read
        }
        assert acl_rows(await describe(c, rtype=TOPIC, name="orders", pattern=MATCH)) == {
            alice_read,
            bob_prefixed,
            wildcard,
        }
        assert acl_rows(await describe(c, name="ord", pattern=ANY)) == {bob_prefixed}
        assert acl_rows(await describe(c, principal="User:bob")) == {bob_prefixed}
        assert acl_rows(await describe(c, host="10.0.0.1", perm=DENY)) == {bob_prefixed}
        assert acl_rows(await describe(c, op=ALTER)) == {cluster}
        # resources grouped by pattern
        d = await describe(c)
        assert d.error_code == 0 and len(d.resources) == 5
        # delete: one filter matching nothing, one matching two, one matching the cluster ACL
        r = await delete(
            c,
            filter_fields(rtype=TOPIC, name="nope", pattern=LITERAL),
            filter_fields(principal="User:alice", rtype=TOPIC),
            filter_fields(rtype=CLUSTER),
        )
        got = [{acl_row(m, m) for m in f.matching_acls} for f in r.filter_results]
        assert [f.error_code for f in r.filter_results] == [0, 0, 0]
        assert got == [set(), {alice_read}, {cluster}]
        assert server.services is not None and server.services.authorizer is not None
        assert len(server.services.authorizer.store) == 3
        c.close()

    run_broker(tmp_path, first, **SUPER)

    async def second(server: KafkaServer) -> None:
        c = await RawClient.connect(server.bound_port)
        assert acl_rows(await describe(c)) == {bob_prefixed, wildcard, group}
        assert server.services is not None and server.services.authorizer is not None
        authorizer = server.services.authorizer
        assert authorizer.allowed(
            "User:x", "1.2.3.4", AclOperation.DESCRIBE, ResourceType.TOPIC, "t"
        )
        assert not authorizer.allowed(
            "User:bob", "10.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "orders"
        )
        c.close()

    run_broker(tmp_path, second, **SUPER)


def test_create_validation(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        c = await RawClient.connect(server.bound_port)
        assert await create(
            c,
            creation(),
            creation(rtype=CLUSTER, name="other", op=ALTER),
            creation(name=""),
            creation(rtype=0),
            creation(op=0),
            creation(name="a/b"),  # a single node is KRaft-like: '/' is fine
            creation(principal="alice"),
            creation(principal="alice", op=99),  # Kafka validates the binding first
        ) == [
            (0, ""),
            (42, "The only valid name for the CLUSTER resource is kafka-cluster"),
            (42, "Invalid empty resource name"),
            (42, "Invalid resourceType UNKNOWN"),
            (42, "Invalid operation UNKNOWN"),
            (0, ""),
            (
                42,
                "Could not parse principal from `alice` (no colon is present separating the "
                "principal type from the principal name)",
            ),
            (42, "Invalid operation UNKNOWN"),
        ]
        # unknown codes in a DescribeAcls filter match nothing; DeleteAcls refuses them
        d = await describe(c, rtype=99)
        assert (d.error_code, d.resources) == (0, [])
        r = await delete(
            c, filter_fields(pattern=99), filter_fields(op=99), filter_fields(name="x")
        )
        assert [(f.error_code, f.error_message) for f in r.filter_results] == [
            (42, "Unknown patternFilter."),
            (42, "Unknown entryFilter."),
            (0, None),
        ]
        # a binding Kafka cannot build fails the whole request (IllegalArgumentException)
        for bad in (
            creation(pattern=MATCH),
            creation(pattern=ANY),
            creation(op=1),
            creation(rtype=1),
        ):
            assert await create(c, creation(name="fine"), bad) == [(-1, None)] * 2
        assert acl_rows(await describe(c, name="fine")) == set()
        c.close()

    run_broker(tmp_path, scenario, **SUPER)


def test_cluster_alter_and_describe_are_required(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        c = await RawClient.connect(server.bound_port)
        assert (
            await create(c, creation(), creation(name="x"))
            == [(31, "Cluster authorization failed.")] * 2
        )
        d = await describe(c)
        assert (d.error_code, d.resources) == (31, [])
        r = await delete(c, filter_fields())
        assert [f.error_code for f in r.filter_results] == [31]
        # grant ALTER through the store (as another broker or a super user would)
        assert server.services is not None
        store = server.services.metadata_store
        cluster = ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL)
        alter = AccessControlEntry(
            "User:ANONYMOUS", "*", AclOperation.ALTER, AclPermissionType.ALLOW
        )
        await server.services.run_io(store.update_acls, cluster, lambda cur: cur | {alter})
        assert await create(c, creation()) == [(0, "")]
        d = await describe(c)  # ALTER implies DESCRIBE
        assert d.error_code == 0 and len(acl_rows(d)) == 2
        c.close()

    run_broker(tmp_path, scenario, **AUTHZ)


def test_allow_everyone_if_no_acl_found(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer) -> None:
        c = await RawClient.connect(server.bound_port)
        assert await create(c, creation()) == [(0, "")]
        # now the cluster has an ACL that does not grant ANONYMOUS: denied
        assert await create(c, creation(rtype=CLUSTER, name="kafka-cluster", op=ALTER)) == [(0, "")]
        assert await create(c, creation(name="more")) == [(31, "Cluster authorization failed.")]
        c.close()

    run_broker(tmp_path, scenario, **AUTHZ, **{"allow.everyone.if.no.acl.found": "true"})


def test_authorizer_config(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, 1)
    assert build_authorizer(BrokerConfig({}), store) is None
    for name in AUTHORIZER_CLASS_NAMES:
        config = BrokerConfig({"authorizer.class.name": name, "super.users": "User:a; User:b"})
        authorizer = build_authorizer(config, store)
        assert authorizer is not None
        assert authorizer.super_users == {"User:a", "User:b"}
        assert authorizer.allow_everyone_if_no_acl_found is False
    with pytest.raises(ConfigError) as err:
        build_authorizer(BrokerConfig({"authorizer.class.name": "com.example.Nope"}), store)
    text = str(err.value)
    assert "authorizer.class.name" in text and "com.example.Nope" in text
    assert "StandardAuthorizer" in text
    # known keys, never listed by DescribeConfigs
    config = BrokerConfig({"super.users": "User:a", "allow.everyone.if.no.acl.found": "true"})
    assert config.unknown == []
    with pytest.raises(ConfigError, match=r"allow\.everyone\.if\.no\.acl\.found"):
        BrokerConfig({"allow.everyone.if.no.acl.found": "perhaps"})


def test_authorizer_follows_the_store(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, 1)
    topic = ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL)
    entry = AccessControlEntry("User:a", "*", AclOperation.READ, AclPermissionType.ALLOW)
    store.update_acls(topic, lambda cur: cur | {entry})
    authorizer = build_authorizer(BrokerConfig(AUTHZ), store)
    assert authorizer is not None
    assert authorizer.allowed("User:a", "h", AclOperation.READ, ResourceType.TOPIC, "t")
    store.update_acls(topic, lambda cur: frozenset())
    assert not authorizer.allowed("User:a", "h", AclOperation.READ, ResourceType.TOPIC, "t")
    assert EmbeddedMetadataStore(tmp_path, 1).acls() == {}


def test_acl_store_snapshots_under_concurrent_writes() -> None:
    """A writer thread swapping ACLs in while readers authorize: every read sees a
    consistent snapshot (the pattern's two entries together, or neither)."""
    acls = AclStore()
    pattern = ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL)
    pair = frozenset(
        AccessControlEntry(f"User:{n}", "*", AclOperation.READ, AclPermissionType.ALLOW)
        for n in "ab"
    )
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            acls.set_entries(pattern, pair if i % 2 == 0 else ())
            acls.add(
                AclBinding(
                    ResourcePattern(ResourceType.GROUP, f"g{i % 50}", PatternType.LITERAL),
                    next(iter(pair)),
                )
            )
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(3000):
            seen = len(acls.matching_entries(ResourceType.TOPIC, "t"))
            assert seen in (0, 2)
            assert all(
                b.pattern.resource_type in (ResourceType.TOPIC, ResourceType.GROUP) for b in acls
            )
    finally:
        stop.set()
        thread.join()
