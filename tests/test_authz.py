"""Authorization on kafkacore alone: every API under five ACL sets (the table of
``support/authz_cases.py``), each decision equal to what Apache Kafka 4.3.1 decided for
the same requests (:data:`KAFKA_DECISIONS`, ``support/kafka_authz_decisions.json`` as
``tests/interop/test_authz_vs_kafka.py`` records it with ``KAFKACORE_AUTHZ_DUMP=<file>``); the
inter-broker APIs (gone from Kafka 4) against ``KafkaApis``' CLUSTER_ACTION rule; the
helpers of ``server/authz.py``; and no authorizer = everything allowed.

The ACLs are given to the running broker's authorizer directly (``BrokerServices`` is
frozen: the test sets the field through ``object.__setattr__``), every client is
``User:ANONYMOUS`` from 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kafkacore.security.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    Authorizer,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkacore.server import authz
from kafkacore.server.request_context import ANONYMOUS
from support.authz_cases import (
    CASES,
    CLIENT_HOST,
    DOOMED,
    PHASES,
    PRINCIPAL,
    TOPIC,
    decisions,
    flatten,
)
from support.raw_client import RawClient, make_request, run_broker

# What Kafka 4.3.1 answered, by ACL set and request: the file is what
# tests/interop/test_authz_vs_kafka.py writes with KAFKACORE_AUTHZ_DUMP=<that file>.
KAFKA_DECISIONS: dict[str, dict[str, dict[str, Any]]] = json.loads(
    (Path(__file__).parent / "support" / "kafka_authz_decisions.json").read_text()
)


def _set_authorizer(server: Any, authorizer: Authorizer | None) -> None:
    object.__setattr__(server.services, "authorizer", authorizer)


async def _create_topics(port: int) -> dict[str, uuid.UUID]:
    cls = make_request("CreateTopics")
    response = await _call(
        port,
        "CreateTopics",
        7,
        make_request(
            "CreateTopics",
            topics=[
                cls.CreatableTopic(
                    name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[]
                )
                for name in (TOPIC, DOOMED)
            ],
            timeout_ms=5000,
            validate_only=False,
        ),
    )
    assert [t.error_code for t in response.topics] == [0, 0]
    return {t.name: t.topic_id for t in response.topics}


async def _call(port: int, api: str, version: int, request: Any) -> Any:
    client = RawClient(*await asyncio.open_connection(CLIENT_HOST, port))
    try:
        return await client.call(api, version, request)
    finally:
        client.close()


def test_every_api_decides_as_kafka_did(tmp_path: Path) -> None:
    wrong: list[str] = []

    async def scenario(server: Any) -> None:
        ids = await _create_topics(server.bound_port)
        names = {i: n for n, i in ids.items()}
        for phase, bindings in PHASES.items():
            _set_authorizer(server, Authorizer(AclStore(bindings)))
            for case in CASES:
                response = await _call(server.bound_port, case.api, case.version, case.build(ids))
                ours = decisions(flatten(response, names))
                expected = KAFKA_DECISIONS[phase][case.name]
                if ours != expected:
                    wrong.append(f"{phase}/{case.name}: kafkacore {ours}, Kafka {expected}")

    run_broker(tmp_path, scenario, **{"auto.create.topics.enable": "true"})
    assert not wrong, "\n".join(wrong)
    assert set(KAFKA_DECISIONS) == set(PHASES)
    assert all(set(v) == {c.name for c in CASES} for v in KAFKA_DECISIONS.values())


# -- the inter-broker APIs: CLUSTER_ACTION on the cluster (KafkaApis, Kafka 3.9) ------------

INTER_BROKER = [
    ("LeaderAndIsr", 7),
    ("UpdateMetadata", 8),
    ("StopReplica", 4),
    ("ControlledShutdown", 3),
    ("AlterPartition", 3),
    ("AllocateProducerIds", 0),
]


def _acl(rt: ResourceType, name: str, op: AclOperation, perm: AclPermissionType) -> AclBinding:
    return AclBinding(
        ResourcePattern(rt, name, PatternType.LITERAL),
        AccessControlEntry(PRINCIPAL, "*", op, perm),
    )


def test_inter_broker_apis_need_cluster_action(tmp_path: Path) -> None:
    async def scenario(server: Any) -> None:
        port = server.bound_port
        cluster = ResourceType.CLUSTER
        denied_sets = {
            "no ACL": [],
            "ALL but a DENY CLUSTER_ACTION": [
                _acl(cluster, CLUSTER_NAME, AclOperation.ALL, AclPermissionType.ALLOW),
                _acl(cluster, CLUSTER_NAME, AclOperation.CLUSTER_ACTION, AclPermissionType.DENY),
            ],
            "ALTER (no implication)": [
                _acl(cluster, CLUSTER_NAME, AclOperation.ALTER, AclPermissionType.ALLOW)
            ],
        }
        for label, bindings in denied_sets.items():
            _set_authorizer(server, Authorizer(AclStore(bindings)))
            for api, version in INTER_BROKER:
                response = await _call(port, api, version, make_request(api))
                assert response.error_code == 31, (label, api, response)
        allowed = [
            _acl(cluster, CLUSTER_NAME, AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW)
        ]
        for authorizer in (Authorizer(AclStore(allowed)), Authorizer(super_users=[PRINCIPAL])):
            _set_authorizer(server, authorizer)
            for api, version in INTER_BROKER:
                response = await _call(port, api, version, make_request(api))
                assert response.error_code != 31, (api, response)

    run_broker(tmp_path, scenario)


# -- no authorizer ---------------------------------------------------------------------------


def test_no_authorizer_allows_everything_and_reports_every_operation(tmp_path: Path) -> None:
    async def scenario(server: Any) -> None:
        port = server.bound_port
        ids = await _create_topics(port)
        names = {i: n for n, i in ids.items()}
        assert server.services.authorizer is None
        for case in CASES:
            response = await _call(port, case.api, case.version, case.build(ids))
            flat = flatten(response, names)
            codes = {
                k: v for k, v in flat.items() if k.endswith("error_code") and v in (29, 30, 31, 53)
            }
            if case.name == "produce-txn-no-id":
                # not an authorization matter: Kafka refuses transactional batches without
                # a transactional id with 53 even when no authorizer is configured
                assert codes == {"responses[az-t].partition_responses[0].error_code": 53}
                continue
            assert not codes, (case.name, codes)
            if case.name == "metadata-named":
                # Kafka's AuthHelper.authorizedOperations with no authorizer: every
                # operation the resource type supports
                assert flat["topics[az-t].topic_authorized_operations"] == 3576
                assert flat["cluster_authorized_operations"] == 8096
            if case.name == "describe-groups":
                assert flat["groups[az-g].authorized_operations"] == 3400

    run_broker(tmp_path, scenario, **{"auto.create.topics.enable": "true"})


# -- the helpers -------------------------------------------------------------------------------


def _context(principal: str = "User:alice", host: str = "10.0.0.1") -> Any:
    kind, _, name = principal.partition(":")
    return SimpleNamespace(principal=f"{kind}:{name}", client_address=host)


def _services(*bindings: AclBinding, super_users: tuple[str, ...] = ()) -> Any:
    return SimpleNamespace(authorizer=Authorizer(AclStore(bindings), super_users=super_users))


def _alice(
    rt: ResourceType,
    name: str,
    op: AclOperation,
    perm: str = "ALLOW",
    pt: str = "LITERAL",
    host: str = "*",
) -> AclBinding:
    return AclBinding(
        ResourcePattern(rt, name, PatternType[pt]),
        AccessControlEntry("User:alice", host, op, AclPermissionType[perm]),
    )


def test_no_authorizer_is_the_fast_path() -> None:
    services, context = SimpleNamespace(authorizer=None), _context()
    assert authz.authorize(services, context, AclOperation.WRITE, ResourceType.TOPIC, "t")
    assert authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION)
    assert authz.filter_authorized(
        services, context, AclOperation.READ, ResourceType.TOPIC, ["a", "b", "a"]
    ) == {"a", "b"}
    assert authz.authorize_by_resource_type(
        services, context, AclOperation.WRITE, ResourceType.TOPIC
    )
    assert authz.authorized_operations(services, context, ResourceType.TOPIC, "t") == 3576
    assert (
        authz.authorized_operations(services, context, ResourceType.CLUSTER, CLUSTER_NAME) == 8096
    )
    assert authz.cluster_authorized_operations(services, context) == 8096


def test_filter_and_implications() -> None:
    topic = ResourceType.TOPIC
    services = _services(
        _alice(topic, "pay", AclOperation.READ, pt="PREFIXED"),
        _alice(topic, "payroll", AclOperation.DESCRIBE, perm="DENY"),
        _alice(topic, "logs", AclOperation.ALTER_CONFIGS),
    )
    context = _context()
    names = ["payments", "payroll", "logs", "other"]
    # READ implies DESCRIBE, but a DENY DESCRIBE wins
    assert authz.filter_authorized(services, context, AclOperation.DESCRIBE, topic, names) == {
        "payments"
    }
    assert authz.filter_authorized(services, context, AclOperation.READ, topic, names) == {
        "payments",
        "payroll",
    }
    # ALTER_CONFIGS implies DESCRIBE_CONFIGS only
    assert authz.filter_authorized(
        services, context, AclOperation.DESCRIBE_CONFIGS, topic, names
    ) == {"logs"}
    # bits: READ 3 + DESCRIBE 8 for payments; READ only for payroll (DESCRIBE denied)
    assert authz.authorized_operations(services, context, topic, "payments") == (1 << 3) | (1 << 8)
    assert authz.authorized_operations(services, context, topic, "payroll") == 1 << 3
    assert authz.authorized_operations(services, context, topic, "logs") == (1 << 10) | (1 << 11)
    assert authz.authorized_operations(services, context, topic, "other") == 0
    # another principal or host: nothing
    assert (
        authz.filter_authorized(services, _context("User:bob"), AclOperation.READ, topic, names)
        == set()
    )


def test_hosts_super_users_and_by_resource_type() -> None:
    topic = ResourceType.TOPIC
    services = _services(
        _alice(topic, "t", AclOperation.WRITE, host="10.0.0.1"),
        super_users=("User:admin",),
    )
    assert authz.authorize(services, _context(), AclOperation.WRITE, topic, "t")
    assert not authz.authorize(services, _context(host="10.0.0.2"), AclOperation.WRITE, topic, "t")
    assert authz.authorize(
        services, _context("User:admin", "10.9.9.9"), AclOperation.DELETE, topic, "x"
    )
    # InitProducerId without a transactional id: WRITE on some topic
    assert authz.authorize_by_resource_type(services, _context(), AclOperation.WRITE, topic)
    assert not authz.authorize_by_resource_type(
        services, _context(host="10.0.0.2"), AclOperation.WRITE, topic
    )
    # the cluster bits need DESCRIBE first
    assert authz.cluster_authorized_operations(services, _context()) == 0
    described = _services(_alice(ResourceType.CLUSTER, CLUSTER_NAME, AclOperation.ALTER))
    assert authz.cluster_authorized_operations(described, _context()) == (1 << 7) | (1 << 8)


def test_request_context_principal_is_what_acls_name() -> None:
    assert str(ANONYMOUS) == PRINCIPAL


@pytest.mark.parametrize("phase", list(PHASES))
def test_table_is_consistent(phase: str) -> None:
    # every expected decision names a request of the table
    assert set(KAFKA_DECISIONS[phase]) == {c.name for c in CASES}


# -- real clients ------------------------------------------------------------------------------


def test_confluent_kafka_producer_and_consumer_with_kafka_acls_style_grants(
    tmp_path: Path,
) -> None:
    """What ``kafka-acls --producer --idempotent`` and ``--consumer`` grant is enough for
    librdkafka's idempotent producer and group consumer; a topic outside the grants
    fails with TOPIC_AUTHORIZATION_FAILED, a group outside them with
    GROUP_AUTHORIZATION_FAILED."""
    from confluent_kafka import Consumer, KafkaError, Producer

    topic, group = "az-cc", "az-cg"
    T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
    allow = AclPermissionType.ALLOW
    grants = [
        *(
            _acl(T, topic, op, allow)
            for op in (AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE)
        ),
        _acl(C, CLUSTER_NAME, AclOperation.IDEMPOTENT_WRITE, allow),
        _acl(T, topic, AclOperation.READ, allow),
        _acl(G, group, AclOperation.READ, allow),
    ]

    def clients(port: int) -> dict[str, Any]:
        conf = {"bootstrap.servers": f"{CLIENT_HOST}:{port}", "broker.address.family": "v4"}
        errors: list[Any] = []
        producer = Producer({**conf, "enable.idempotence": True, "linger.ms": 5})
        for i in range(10):
            producer.produce(topic, value=b"v%d" % i, on_delivery=lambda e, m: errors.append(e))
        producer.produce("az-denied", value=b"x", on_delivery=lambda e, m: errors.append(e))
        producer.flush(30)
        denied = [e for e in errors if e is not None]
        assert len(errors) == 11
        assert [e.code() for e in denied] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], denied

        consumer = Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        values = []
        deadline = time.monotonic() + 30
        while len(values) < 10 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
        consumer.commit(asynchronous=False)
        consumer.close()
        assert sorted(values) == sorted(b"v%d" % i for i in range(10))

        outsider = Consumer({**conf, "group.id": "az-other-group", "auto.offset.reset": "earliest"})
        outsider.subscribe([topic])
        seen = None
        deadline = time.monotonic() + 20
        while seen is None and time.monotonic() < deadline:
            msg = outsider.poll(0.5)
            if msg is not None and msg.error() is not None:
                seen = msg.error().code()
        outsider.close()
        return {"group_error": seen}

    async def scenario(server: Any) -> None:
        _set_authorizer(server, Authorizer(AclStore(grants)))
        got = await asyncio.to_thread(clients, server.bound_port)
        assert got["group_error"] == KafkaError.GROUP_AUTHORIZATION_FAILED, got

    run_broker(tmp_path, scenario, **{"auto.create.topics.enable": "true"})


@pytest.mark.parametrize(
    ("address", "java"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("::1", "0:0:0:0:0:0:0:1"),
        ("::ffff:10.0.0.7", "10.0.0.7"),
        ("fe80::1%eth0", "fe80:0:0:0:0:0:0:1%eth0"),
        ("2001:db8:0:0:0:0:2:1", "2001:db8:0:0:0:0:2:1"),
        ("2001:0DB8::00A1", "2001:db8:0:0:0:0:0:a1"),
    ],
)
def test_acl_hosts_compare_with_kafkas_address_text(address: str, java: str) -> None:
    """Kafka matches an ACL host against ``InetAddress.getHostAddress``; kafkacore
    writes the client's address the same way before asking."""
    assert authz.java_host_address(address) == java
    topic = ResourceType.TOPIC
    services = _services(_alice(topic, "t", AclOperation.READ, host=java))
    assert authz.authorize(services, _context(host=address), AclOperation.READ, topic, "t")
