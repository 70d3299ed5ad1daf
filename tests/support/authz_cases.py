"""The authorization table shared by ``tests/test_authz.py`` (kafkacore alone) and
``tests/interop/test_authz_vs_kafka.py`` (kafkacore against Apache Kafka): ACL sets, a
request per API, and :func:`flatten`, which turns a response into ``{path: error code}``
with list items keyed by what names them (topic, partition, group, resource...), so two
brokers' answers compare field by field whatever their order.

Resources: the topic ``az-t`` (one partition, exists), ``az-d`` (exists, deleted by the
last phase), ``az-missing`` (never exists), the group ``az-g``, the transactional id
``az-tx``. Every client is ``User:ANONYMOUS`` (PLAINTEXT listeners)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkacore.protocol import APIS_BY_NAME
from kafkacore.record import build_batch
from kafkacore.security.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

__all__ = [
    "AUTH_CODES",
    "CASES",
    "PHASES",
    "PRINCIPAL",
    "TOPIC",
    "Case",
    "decisions",
    "flatten",
]

PRINCIPAL = "User:ANONYMOUS"
TOPIC, DOOMED, MISSING, GROUP, TXN = "az-t", "az-d", "az-missing", "az-g", "az-tx"
AUTH_CODES = frozenset({29, 30, 31, 53})

T, G, C, X = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
)
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation


def _acl(
    rt: ResourceType,
    name: str,
    op: AclOperation,
    perm: AclPermissionType = ALLOW,
    pt: PatternType = LIT,
    principal: str = PRINCIPAL,
    host: str = "*",
) -> AclBinding:
    return AclBinding(ResourcePattern(rt, name, pt), AccessControlEntry(principal, host, op, perm))


CLIENT_HOST = "127.0.0.1"  # the tests connect from there
OTHER_HOST = "10.1.2.3"


# The ACL sets, applied in this order; each phase runs every case.
PHASES: dict[str, list[AclBinding]] = {
    # no ACL at all: allow.everyone.if.no.acl.found=false denies everything
    "none": [],
    # implications and DENY: READ implies DESCRIBE; a DENY WRITE; DESCRIBE only on the group
    # and the transactional id; DESCRIBE only on the cluster; prefixed DESCRIBE_CONFIGS
    "mixed": [
        _acl(T, TOPIC, Op.READ),
        _acl(T, TOPIC, Op.WRITE, DENY),
        _acl(T, "az-", Op.DESCRIBE_CONFIGS, pt=PRE),
        _acl(T, MISSING, Op.DESCRIBE),
        _acl(T, DOOMED, Op.DESCRIBE),
        _acl(G, GROUP, Op.DESCRIBE),
        _acl(X, TXN, Op.DESCRIBE),
        _acl(C, CLUSTER_NAME, Op.DESCRIBE),
    ],
    # producer/consumer rights by prefix, a wildcard group, cluster actions but no
    # DESCRIBE on the cluster; a DENY DESCRIBE that an ALLOW ALL does not beat
    "write": [
        _acl(T, "az-", Op.WRITE, pt=PRE),
        _acl(T, "az-", Op.READ, pt=PRE),
        _acl(T, MISSING, Op.ALL),
        _acl(T, MISSING, Op.DESCRIBE, DENY),
        _acl(T, "az-new", Op.CREATE),
        _acl(G, "*", Op.READ),
        _acl(X, TXN, Op.WRITE),
        _acl(C, CLUSTER_NAME, Op.CLUSTER_ACTION),
        _acl(C, CLUSTER_NAME, Op.ALTER_CONFIGS),
    ],
    # hosts and principals: an ACL for another host or principal does not apply, one
    # for the client's address or User:* does; DENY on a prefix beats a literal ALLOW;
    # IDEMPOTENT_WRITE on the cluster; the group (made by the "write" phase's OffsetCommit)
    # may be described from another host only (ListGroups hides it), az-other from here
    "hosts": [
        _acl(T, TOPIC, Op.ALL, host=OTHER_HOST),
        _acl(T, TOPIC, Op.DESCRIBE, principal="User:alice"),
        _acl(T, DOOMED, Op.READ, principal="User:*", host=CLIENT_HOST),
        _acl(T, MISSING, Op.DESCRIBE, host=CLIENT_HOST),
        _acl(T, MISSING, Op.DESCRIBE, DENY, host=OTHER_HOST),
        _acl(G, GROUP, Op.DESCRIBE, host=OTHER_HOST),
        _acl(G, "az-o", Op.DESCRIBE, pt=PRE, host=CLIENT_HOST),
        _acl(G, "az-", Op.READ, DENY, pt=PRE, host=OTHER_HOST),
        _acl(C, CLUSTER_NAME, Op.IDEMPOTENT_WRITE),
        _acl(X, TXN, Op.WRITE),
        _acl(X, "az-", Op.ALL, DENY, pt=PRE),
    ],
    # everything allowed (the last phase: its DeleteTopics deletes az-d)
    "all": [
        _acl(T, "*", Op.ALL),
        _acl(G, "*", Op.ALL),
        _acl(X, "*", Op.ALL),
        _acl(C, CLUSTER_NAME, Op.ALL),
    ],
}


def _r(name: str) -> Any:
    return APIS_BY_NAME[name].request.cls


def _records(transactional: bool = False) -> bytes:
    now = int(time.time() * 1000)
    if transactional:
        return build_batch(
            [(0, now, None, b"v", [])],
            producer_id=1000,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        )
    return build_batch([(0, now, None, b"v", [])])


def _produce(transactional_id: str | None, transactional: bool, topics: list[str]) -> Any:
    r = _r("Produce")
    return r(
        transactional_id=transactional_id,
        acks=1,
        timeout_ms=5000,
        topic_data=[
            r.TopicProduceData(
                name=t,
                partition_data=[r.PartitionProduceData(index=0, records=_records(transactional))],
            )
            for t in topics
        ],
    )


def _fetch(replica_id: int, topics: list[str]) -> Any:
    r = _r("Fetch")
    return r(
        replica_id=replica_id,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            r.FetchTopic(
                topic=t,
                partitions=[
                    r.FetchPartition(
                        partition=0,
                        current_leader_epoch=-1,
                        fetch_offset=0,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=1 << 16,
                    )
                ],
            )
            for t in topics
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


def _metadata(topics: list[str] | None, auto: bool = False, ops: bool = True) -> Any:
    r = _r("Metadata")
    return r(
        topics=None if topics is None else [r.MetadataRequestTopic(name=t) for t in topics],
        allow_auto_topic_creation=auto,
        include_cluster_authorized_operations=ops,
        include_topic_authorized_operations=ops,
    )


def _list_offsets(topics: list[str]) -> Any:
    r = _r("ListOffsets")
    return r(
        replica_id=-1,
        isolation_level=0,
        topics=[
            r.ListOffsetsTopic(
                name=t,
                partitions=[
                    r.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1)
                ],
            )
            for t in topics
        ],
    )


def _epochs(topics: list[str]) -> Any:
    r = _r("OffsetForLeaderEpoch")
    return r(
        replica_id=-1,
        topics=[
            r.OffsetForLeaderTopic(
                topic=t,
                partitions=[
                    r.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)
                ],
            )
            for t in topics
        ],
    )


def _offset_commit(topics: list[str]) -> Any:
    r = _r("OffsetCommit")
    return r(
        group_id=GROUP,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        retention_time_ms=-1,
        topics=[
            r.OffsetCommitRequestTopic(
                name=t,
                partitions=[
                    r.OffsetCommitRequestPartition(
                        partition_index=0,
                        committed_offset=0,
                        committed_leader_epoch=-1,
                        committed_metadata="",
                    )
                ],
            )
            for t in topics
        ],
    )


def _offset_fetch_v8(topics: list[str] | None) -> Any:
    r = _r("OffsetFetch")
    return r(
        groups=[
            r.OffsetFetchRequestGroup(
                group_id=GROUP,
                topics=None
                if topics is None
                else [r.OffsetFetchRequestTopics(name=t, partition_indexes=[0]) for t in topics],
            )
        ],
        require_stable=False,
    )


def _offset_fetch_v7(topics: list[str]) -> Any:
    r = _r("OffsetFetch")
    return r(
        group_id=GROUP,
        topics=[r.OffsetFetchRequestTopic(name=t, partition_indexes=[0]) for t in topics],
        require_stable=False,
    )


def _init_producer_id(transactional_id: str | None) -> Any:
    return _r("InitProducerId")(
        transactional_id=transactional_id,
        transaction_timeout_ms=60000,
        producer_id=-1,
        producer_epoch=-1,
    )


def _config_resources(cls: Any, alter: bool) -> list[Any]:
    out = []
    for kind, name in ((2, TOPIC), (2, MISSING), (4, "")):
        if alter:
            configs = [cls.AlterableConfig(name="retention.ms", value="86400000")]
            if kind == 4:
                configs = [cls.AlterableConfig(name="log.cleaner.threads", value="1")]
            out.append(
                cls.AlterConfigsResource(resource_type=kind, resource_name=name, configs=configs)
            )
        else:
            out.append(
                cls.DescribeConfigsResource(
                    resource_type=kind, resource_name=name, configuration_keys=None
                )
            )
    return out


def _incremental(r: Any) -> Any:
    resources = []
    for kind, name, key, value in (
        (2, TOPIC, "retention.ms", "86400000"),
        (4, "", "log.cleaner.threads", "1"),
    ):
        resources.append(
            r.AlterConfigsResource(
                resource_type=kind,
                resource_name=name,
                configs=[r.AlterableConfig(name=key, config_operation=0, value=value)],
            )
        )
    return r(resources=resources, validate_only=True)


@dataclass(frozen=True)
class Case:
    """One request; ``build(ids)`` makes it with the broker's topic ids (name -> id)."""

    name: str
    api: str
    version: int
    build: Callable[[dict[str, uuid.UUID]], Any]


def _c(name: str, api: str, version: int, build: Callable[[], Any]) -> Case:
    return Case(name, api, version, lambda ids: build())


# a topic id no broker knows, the same in every request
UNKNOWN_ID = uuid.UUID("00000000-0000-4000-8000-00000000a2a2")


def _fetch_by_id(replica_id: int, ids: dict[str, uuid.UUID]) -> Any:
    request = _fetch(replica_id, [TOPIC, "unknown"])
    for topic, topic_id in zip(request.topics, (ids[TOPIC], UNKNOWN_ID), strict=True):
        topic.topic, topic.topic_id = "", topic_id
    return request


def _id_cases() -> list[Case]:
    r = _r
    return [
        Case("fetch-ids", "Fetch", 13, lambda ids: _fetch_by_id(-1, ids)),
        Case("fetch-ids-replica", "Fetch", 13, lambda ids: _fetch_by_id(2, ids)),
        Case(
            "metadata-ids",
            "Metadata",
            12,
            lambda ids: r("Metadata")(
                topics=[
                    r("Metadata").MetadataRequestTopic(topic_id=i, name=None)
                    for i in (ids[TOPIC], ids[DOOMED], UNKNOWN_ID)
                ],
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=True,
            ),
        ),
        # the last request of the last phase deletes az-t: nothing after it needs it
        Case(
            "delete-topics-ids",
            "DeleteTopics",
            6,
            lambda ids: r("DeleteTopics")(
                topics=[
                    r("DeleteTopics").DeleteTopicState(name=None, topic_id=i)
                    for i in (ids[TOPIC], UNKNOWN_ID)
                ],
                timeout_ms=5000,
            ),
        ),
    ]


def _cases() -> list[Case]:
    r = _r
    both = [TOPIC, MISSING]
    return [
        # not az-missing: kafkacore auto-creates on Produce, Kafka never does
        _c("produce", "Produce", 9, lambda: _produce(None, False, [TOPIC, DOOMED])),
        _c("produce-txn", "Produce", 9, lambda: _produce(TXN, True, [TOPIC])),
        _c("produce-txn-no-id", "Produce", 9, lambda: _produce(None, True, [TOPIC])),
        _c("fetch", "Fetch", 12, lambda: _fetch(-1, both)),
        _c("fetch-replica", "Fetch", 12, lambda: _fetch(2, both)),
        _c("list-offsets", "ListOffsets", 7, lambda: _list_offsets(both)),
        _c("epochs", "OffsetForLeaderEpoch", 4, lambda: _epochs(both)),
        _c("metadata-named", "Metadata", 10, lambda: _metadata([TOPIC, MISSING, DOOMED])),
        _c("metadata-all", "Metadata", 12, lambda: _metadata(None)),
        _c("metadata-auto", "Metadata", 12, lambda: _metadata(["az-auto"], auto=True)),
        _c(
            "find-group",
            "FindCoordinator",
            4,
            lambda: r("FindCoordinator")(key_type=0, coordinator_keys=[GROUP]),
        ),
        _c(
            "find-txn",
            "FindCoordinator",
            4,
            lambda: r("FindCoordinator")(key_type=1, coordinator_keys=[TXN]),
        ),
        _c(
            "find-group-v3",
            "FindCoordinator",
            3,
            lambda: r("FindCoordinator")(key=GROUP, key_type=0),
        ),
        _c(
            "join",
            "JoinGroup",
            7,
            lambda: r("JoinGroup")(
                group_id=GROUP,
                session_timeout_ms=10000,
                rebalance_timeout_ms=10000,
                member_id="",
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[r("JoinGroup").JoinGroupRequestProtocol(name="range", metadata=b"")],
            ),
        ),
        _c(
            "sync",
            "SyncGroup",
            5,
            lambda: r("SyncGroup")(
                group_id=GROUP,
                generation_id=1,
                member_id="nobody",
                group_instance_id=None,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[],
            ),
        ),
        _c(
            "heartbeat",
            "Heartbeat",
            4,
            lambda: r("Heartbeat")(
                group_id=GROUP, generation_id=1, member_id="nobody", group_instance_id=None
            ),
        ),
        _c(
            "leave",
            "LeaveGroup",
            4,
            lambda: r("LeaveGroup")(
                group_id=GROUP,
                members=[
                    r("LeaveGroup").MemberIdentity(member_id="nobody", group_instance_id=None)
                ],
            ),
        ),
        _c("offset-commit", "OffsetCommit", 8, lambda: _offset_commit(both)),
        _c("offset-fetch", "OffsetFetch", 8, lambda: _offset_fetch_v8(both)),
        _c("offset-fetch-all", "OffsetFetch", 8, lambda: _offset_fetch_v8(None)),
        _c("offset-fetch-v7", "OffsetFetch", 7, lambda: _offset_fetch_v7(both)),
        _c(
            "describe-groups",
            "DescribeGroups",
            5,
            lambda: r("DescribeGroups")(
                groups=[GROUP, "az-other"], include_authorized_operations=True
            ),
        ),
        _c("list-groups", "ListGroups", 4, lambda: r("ListGroups")(states_filter=[])),
        _c(
            "offset-delete",
            "OffsetDelete",
            0,
            lambda: r("OffsetDelete")(
                group_id=GROUP,
                topics=[
                    r("OffsetDelete").OffsetDeleteRequestTopic(
                        name=t,
                        partitions=[
                            r("OffsetDelete").OffsetDeleteRequestPartition(partition_index=0)
                        ],
                    )
                    for t in both
                ],
            ),
        ),
        _c("init-pid", "InitProducerId", 4, lambda: _init_producer_id(None)),
        _c("init-pid-txn", "InitProducerId", 4, lambda: _init_producer_id(TXN)),
        _c(
            "create-topics",
            "CreateTopics",
            7,
            lambda: r("CreateTopics")(
                topics=[
                    r("CreateTopics").CreatableTopic(
                        name=name,
                        num_partitions=1,
                        replication_factor=1,
                        assignments=[],
                        configs=[],
                    )
                    for name in ("az-new", TOPIC)
                ],
                timeout_ms=5000,
                validate_only=True,
            ),
        ),
        _c(
            "create-partitions",
            "CreatePartitions",
            3,
            lambda: r("CreatePartitions")(
                topics=[
                    r("CreatePartitions").CreatePartitionsTopic(name=t, count=2, assignments=None)
                    for t in both
                ],
                timeout_ms=5000,
                validate_only=True,
            ),
        ),
        _c(
            "delete-records",
            "DeleteRecords",
            2,
            lambda: r("DeleteRecords")(
                topics=[
                    r("DeleteRecords").DeleteRecordsTopic(
                        name=t,
                        partitions=[
                            r("DeleteRecords").DeleteRecordsPartition(partition_index=0, offset=0)
                        ],
                    )
                    for t in both
                ],
                timeout_ms=5000,
            ),
        ),
        _c(
            "describe-configs",
            "DescribeConfigs",
            4,
            lambda: r("DescribeConfigs")(
                resources=_config_resources(r("DescribeConfigs"), alter=False),
                include_synonyms=False,
                include_documentation=False,
            ),
        ),
        _c(
            "alter-configs",
            "AlterConfigs",
            2,
            lambda: r("AlterConfigs")(
                resources=_config_resources(r("AlterConfigs"), alter=True), validate_only=True
            ),
        ),
        _c(
            "incremental-alter-configs",
            "IncrementalAlterConfigs",
            1,
            lambda: _incremental(r("IncrementalAlterConfigs")),
        ),
        _c("describe-log-dirs", "DescribeLogDirs", 4, lambda: r("DescribeLogDirs")(topics=None)),
        _c(
            "elect-leaders",
            "ElectLeaders",
            2,
            lambda: r("ElectLeaders")(
                election_type=0,
                topic_partitions=[r("ElectLeaders").TopicPartitions(topic=TOPIC, partitions=[0])],
                timeout_ms=5000,
            ),
        ),
        _c(
            "list-reassignments",
            "ListPartitionReassignments",
            0,
            lambda: r("ListPartitionReassignments")(timeout_ms=5000, topics=None),
        ),
        _c(
            "alter-reassignments",
            "AlterPartitionReassignments",
            0,
            lambda: r("AlterPartitionReassignments")(
                timeout_ms=5000,
                topics=[
                    r("AlterPartitionReassignments").ReassignableTopic(
                        name=TOPIC,
                        partitions=[
                            r("AlterPartitionReassignments").ReassignablePartition(
                                partition_index=0, replicas=None
                            )
                        ],
                    )
                ],
            ),
        ),
        _c(
            "describe-quotas",
            "DescribeClientQuotas",
            1,
            lambda: r("DescribeClientQuotas")(components=[], strict=False),
        ),
        _c(
            "alter-quotas",
            "AlterClientQuotas",
            1,
            lambda: r("AlterClientQuotas")(
                entries=[
                    r("AlterClientQuotas").EntryData(
                        entity=[
                            r("AlterClientQuotas").EntityData(
                                entity_type="client-id", entity_name="az-c"
                            )
                        ],
                        ops=[
                            r("AlterClientQuotas").OpData(
                                key="producer_byte_rate", value=1024.0, remove=False
                            )
                        ],
                    )
                ],
                validate_only=True,
            ),
        ),
        _c(
            "describe-scram",
            "DescribeUserScramCredentials",
            0,
            lambda: r("DescribeUserScramCredentials")(
                users=[r("DescribeUserScramCredentials").UserName(name="az-u")]
            ),
        ),
        _c(
            "describe-cluster",
            "DescribeCluster",
            1,
            lambda: r("DescribeCluster")(
                include_cluster_authorized_operations=True, endpoint_type=1
            ),
        ),
        _c("delete-groups", "DeleteGroups", 2, lambda: r("DeleteGroups")(groups_names=["az-gone"])),
        _c(
            "delete-topics",
            "DeleteTopics",
            5,
            lambda: r("DeleteTopics")(topic_names=[MISSING, DOOMED], timeout_ms=5000),
        ),
    ]


CASES: list[Case] = _cases() + _id_cases()

# Fields that name a list item, in the order they are looked for.
_KEYS = (
    "name",
    "topic",
    "group_id",
    "key",
    "resource_name",
    "partition_index",
    "index",
    "partition",
    "partition_id",
    "user",
)


def flatten(obj: Any, names: dict[uuid.UUID, str] | None = None, path: str = "") -> dict[str, Any]:
    """``{path: value}`` of every error code and authorized-operations field of a
    response, list items keyed by their naming fields (``topics[az-t].partitions[0]``); an
    item named by topic id only is keyed by the name ``names`` gives that id (the ids
    differ between brokers), and its ``name`` field (null when hidden) is kept."""
    names = names or {}
    out: dict[str, Any] = {}
    for slot in getattr(type(obj), "__slots__", ()):
        if slot.startswith("_"):
            continue
        value = getattr(obj, slot, None)
        here = f"{path}.{slot}" if path else slot
        if slot.endswith("error_code") or slot.endswith("authorized_operations"):
            out[here] = value
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if not hasattr(type(item), "__slots__"):
                    continue
                key, by_id = _item_key(item, i, names)
                out[f"{here}[{key}]"] = "listed"  # items without an error code count too
                out.update(flatten(item, names, f"{here}[{key}]"))
                if by_id and "name" in type(item).__slots__:
                    out[f"{here}[{key}].name"] = item.name
    return out


def _item_key(item: Any, index: int, names: dict[uuid.UUID, str]) -> tuple[str, bool]:
    """The key of a list item, and whether it came from a topic id."""
    slots = type(item).__slots__
    fields = [f for f in _KEYS if f in slots and getattr(item, f) is not None]
    topic_id = getattr(item, "topic_id", None) if "topic_id" in slots else None
    if (
        topic_id is not None
        and topic_id.int != 0
        and not any(getattr(item, f, None) for f in ("name", "topic"))
    ):
        rest = [str(getattr(item, f)) for f in fields if f not in ("name", "topic")]
        return "/".join([names.get(topic_id, str(topic_id)), *rest]), True
    parts = [str(getattr(item, f)) for f in fields]
    return ("/".join(parts) if parts else str(index)), False


def decisions(flat: dict[str, Any]) -> dict[str, Any]:
    """What authorization decides in a flattened answer: the authorization error codes,
    the authorized-operations fields, topic names shown or hidden, and which test
    resources are listed (internal topics left out)."""
    return {
        key: value
        for key, value in flat.items()
        if "__" not in key
        and (
            value in AUTH_CODES
            or key.endswith(("authorized_operations", ".name"))
            or (value == "listed" and re.search(r"\[az-[^\]]*\]$", key) is not None)
        )
    }
