"""CreateTopics v2-7, DeleteTopics v1-6 and CreatePartitions v0-3.

Single node: every replica assignment must be ``[this node]``, replication factor 1.
Cluster mode: assignments are Kafka's (``AdminUtils``: rack-aware, round-robin from a
random start broker) over the live brokers of the metadata cache, explicit assignments are
checked against them, and the controller makes the partitions (the store waits until they
have leaders, as Kafka's ``DelayedCreatePartitions`` does)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from kafkacore.config import ConfigError, LogConfig
from kafkacore.log import TopicPartition
from kafkacore.placement import (
    BrokerMetadata,
    InvalidReplicationFactorError,
    assign_replicas_for_new_partitions,
    assign_replicas_to_brokers,
)
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.replica_manager import topic_name_error
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_create_partitions", "handle_create_topics", "handle_delete_topics"]

_CREATE: Any = APIS_BY_NAME["CreateTopics"].response.cls
_DELETE: Any = APIS_BY_NAME["DeleteTopics"].response.cls
_PARTITIONS: Any = APIS_BY_NAME["CreatePartitions"].response.cls
ZERO_UUID = uuid.UUID(int=0)


def _cluster_mode(services: BrokerServices) -> bool:
    return services.cluster_mode


def _live_brokers(services: BrokerServices) -> list[BrokerMetadata]:
    return sorted(
        (BrokerMetadata(b.node_id, b.rack) for b in services.metadata_cache.alive_brokers()),
        key=lambda b: b.id,
    )


def _explicit_assignment_error(services: BrokerServices, assignment: list[list[int]]) -> str | None:
    """Kafka's checks of a requested replica assignment (``validateReplicaAssignment``)."""
    live = {b.id for b in _live_brokers(services)}
    sizes = {len(replicas) for replicas in assignment}
    for index, replicas in enumerate(assignment):
        if not replicas:
            return f"Partition {index} has no replicas."
        if len(set(replicas)) != len(replicas):
            return f"Duplicate replica assignment found: {replicas}"
        unknown = sorted(set(replicas) - live)
        if unknown:
            return f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}."
    if len(sizes) > 1:
        return "All partitions should have the same number of replicas"
    return None


def _replication_error(services: BrokerServices, rf: int) -> tuple[ErrorCode, str] | None:
    if _cluster_mode(services):
        return None  # checked with the live brokers when assigning
    if rf == 1:
        return None
    if rf <= 0:
        return (
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        )
    return (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        f"Unable to replicate the partition {rf} time(s): The target replication factor of "
        f"{rf} cannot be reached because only 1 broker(s) are registered.",
    )


async def handle_create_topics(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    """With an authorizer (Kafka's ``ControllerApis.createTopics``): CREATE on the cluster,
    else on each topic (TOPIC_AUTHORIZATION_FAILED "Authorization failed."); a topic
    created without DESCRIBE_CONFIGS on it gets no configs and ``topic_config_error_code``
    TOPIC_AUTHORIZATION_FAILED."""
    version = context.api_version
    names = [t.name for t in request.topics]
    creatable: set[str] | None = None
    describable: set[str] | None = None
    if authz.enabled(services):
        if not authz.authorize_cluster(services, context, AclOperation.CREATE):
            creatable = authz.filter_authorized(
                services, context, AclOperation.CREATE, ResourceType.TOPIC, names
            )
        describable = authz.filter_authorized(
            services, context, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names
        )
    results = []
    for topic in request.topics:
        result = _CREATE.CreatableTopicResult(
            name=topic.name,
            topic_id=ZERO_UUID,
            error_code=0,
            error_message=None,
            num_partitions=-1,
            replication_factor=-1,
            configs=None if version >= 5 else [],
        )
        results.append(result)

        def fail(code: ErrorCode, message: str | None, result: Any = result) -> None:
            result.error_code = code
            result.error_message = message

        if names.count(topic.name) > 1:
            fail(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
            continue
        if creatable is not None and topic.name not in creatable:
            fail(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
            continue
        name_error = topic_name_error(topic.name)
        if name_error is not None:
            fail(ErrorCode.INVALID_TOPIC_EXCEPTION, name_error)
            continue
        if services.metadata_cache.contains_topic(topic.name):
            fail(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
            continue
        assignments = list(topic.assignments or [])
        if assignments:
            if topic.num_partitions != -1 or topic.replication_factor != -1:
                fail(
                    ErrorCode.INVALID_REQUEST,
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.",
                )
                continue
            indexes = sorted(a.partition_index for a in assignments)
            if indexes != list(range(len(assignments))):
                fail(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    "Partitions should be a consecutive 0-based integer sequence",
                )
                continue
            ordered = sorted(assignments, key=lambda a: a.partition_index)
            assignment = [list(a.broker_ids) for a in ordered]
            if _cluster_mode(services):
                problem = _explicit_assignment_error(services, assignment)
            elif any(replicas != [services.node_id] for replicas in assignment):
                problem = (
                    f"Replica assignments must be partitions 0..n-1 on broker {services.node_id}."
                )
            else:
                problem = None
            if problem is not None:
                fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
                continue
            partitions, rf = len(assignment), len(assignment[0])
        else:
            assignment = None
            partitions = (
                services.config.num_partitions
                if topic.num_partitions == -1
                else topic.num_partitions
            )
            rf = (
                services.config.default_replication_factor
                if topic.replication_factor == -1
                else topic.replication_factor
            )
        if partitions <= 0:
            fail(
                ErrorCode.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )
            continue
        rf_error = _replication_error(services, rf)
        if rf_error is not None:
            fail(*rf_error)
            continue
        if assignment is None and _cluster_mode(services):
            try:
                assigned = assign_replicas_to_brokers(_live_brokers(services), partitions, rf)
            except InvalidReplicationFactorError as exc:
                fail(ErrorCode.INVALID_REPLICATION_FACTOR, str(exc))
                continue
            assignment = [assigned[p] for p in range(partitions)]
        overrides = {c.name: c.value for c in topic.configs}
        try:
            config = LogConfig(overrides, services.config)
        except ConfigError as exc:
            fail(ErrorCode.INVALID_CONFIG, str(exc))
            continue
        if request.validate_only:
            topic_id = ZERO_UUID
        else:
            try:
                created = await services.run_io(
                    services.replica_manager.create_topic,
                    topic.name,
                    partitions,
                    overrides,
                    assignment=assignment,
                )
                topic_id = created.topic_id
            except KeyError:  # created meanwhile by another request
                fail(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
                continue
            except Exception as exc:
                fail(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))
                continue
        result.num_partitions = partitions
        result.replication_factor = rf
        result.topic_id = topic_id
        if describable is not None and topic.name not in describable:
            result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif version >= 5:
            result.configs = [
                _CREATE.CreatableTopicConfigs(
                    name=e.name,
                    value=e.value,
                    read_only=e.read_only,
                    config_source=int(e.source),
                    is_sensitive=e.is_sensitive,
                )
                for e in config.describe(include_synonyms=False)
            ]
    return _CREATE(throttle_time_ms=0, topics=results)


async def _wait_until_gone(services: BrokerServices, name: str, timeout_ms: int) -> bool:
    deadline = asyncio.get_running_loop().time() + max(0, timeout_ms) / 1000
    while services.metadata_cache.contains_topic(name):
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def handle_delete_topics(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    """With an authorizer (Kafka's ``ControllerApis.deleteTopics``): DELETE on the cluster
    allows every topic; else a topic named without DESCRIBE is TOPIC_AUTHORIZATION_FAILED
    before its existence is looked at, and one without DELETE too; a topic given by id
    without DELETE is TOPIC_AUTHORIZATION_FAILED with its name only if it may be
    described."""
    cache = services.metadata_cache
    if context.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in request.topic_names]
    check = authz.enabled(services) and not authz.authorize_cluster(
        services, context, AclOperation.DELETE
    )
    results = []
    for name, topic_id in wanted:
        result = _DELETE.DeletableTopicResult(
            name=name, topic_id=topic_id, error_code=0, error_message=None
        )
        results.append(result)
        if (
            check
            and name is not None
            and not authz.authorize(
                services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, name
            )
        ):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        topic = cache.topic(name) if name is not None else cache.topic_by_id(topic_id)
        if topic is None:
            result.error_code = (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if name is not None
                else ErrorCode.UNKNOWN_TOPIC_ID
            )
            continue
        if check and not authz.authorize(
            services, context, AclOperation.DELETE, ResourceType.TOPIC, topic.name
        ):
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            if name is None:
                result.name = (
                    topic.name
                    if authz.authorize(
                        services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name
                    )
                    else None
                )
            else:
                result.topic_id = ZERO_UUID
            continue
        result.name, result.topic_id = topic.name, topic.topic_id
        if not services.config.delete_topic_enable:
            result.error_code = ErrorCode.TOPIC_DELETION_DISABLED
            result.error_message = "Topic deletion is disabled."
            continue
        deleted = await services.run_io(services.replica_manager.delete_topic, topic.name)
        if _cluster_mode(services):
            # Kafka's DelayedDeleteTopics: done when the controller has removed it from
            # this broker's metadata (it waits while a replica is offline)
            if not await _wait_until_gone(services, topic.name, request.timeout_ms):
                result.error_code = ErrorCode.REQUEST_TIMED_OUT
            continue
        if deleted is not None:  # fetches waiting on it answer UNKNOWN_TOPIC_OR_PARTITION
            for index in range(deleted.partition_count):
                services.replica_manager.purgatory.wake(TopicPartition(deleted.name, index))
            # Kafka's GroupMetadataManager clean-up: the topic's committed offsets go too
            await services.group_coordinator.on_topics_deleted([deleted.name])
    return _DELETE(throttle_time_ms=0, responses=results)


async def handle_create_partitions(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    """ALTER on each topic, else TOPIC_AUTHORIZATION_FAILED (before its existence)."""
    cache = services.metadata_cache
    alterable = authz.allowed_topics(
        services, context, AclOperation.ALTER, (t.name for t in request.topics)
    )
    results = []
    for topic in request.topics:
        result = _PARTITIONS.CreatePartitionsTopicResult(
            name=topic.name, error_code=0, error_message=None
        )
        results.append(result)
        if alterable is not None and topic.name not in alterable:
            result.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        count = cache.partition_count(topic.name)
        if count is None:
            result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            result.error_message = f"The topic '{topic.name}' does not exist."
            continue
        if topic.count < count:
            result.error_code = ErrorCode.INVALID_PARTITIONS
            result.error_message = (
                f"Topic currently has {count} partitions, which is higher than the "
                f"requested {topic.count}."
            )
            continue
        if topic.count == count:
            result.error_code = ErrorCode.INVALID_PARTITIONS
            result.error_message = f"Topic already has {count} partitions."
            continue
        new_replicas: list[list[int]] | None = None
        if topic.assignments is not None:
            new_replicas = [list(a.broker_ids) for a in topic.assignments]
            if len(new_replicas) != topic.count - count:
                problem: str | None = (
                    f"Increasing the number of partitions by {topic.count - count} but "
                    f"{len(new_replicas)} assignments provided."
                )
            elif _cluster_mode(services):
                problem = _explicit_assignment_error(services, new_replicas)
            elif any(r != [services.node_id] for r in new_replicas):
                problem = "Replica assignments must name this broker once per new partition."
            else:
                problem = None
            if problem is not None:
                result.error_code = ErrorCode.INVALID_REPLICA_ASSIGNMENT
                result.error_message = problem
                continue
        elif _cluster_mode(services):
            current = cache.topic(topic.name)
            assert current is not None
            existing = {i: list(p.replicas) for i, p in enumerate(current.partitions)}
            try:
                added = assign_replicas_for_new_partitions(
                    _live_brokers(services), existing, topic.count
                )
            except InvalidReplicationFactorError as exc:
                result.error_code = ErrorCode.INVALID_REPLICATION_FACTOR
                result.error_message = str(exc)
                continue
            new_replicas = [added[p] for p in range(count, topic.count)]
        if not request.validate_only:
            await services.run_io(
                services.replica_manager.add_partitions,
                topic.name,
                topic.count,
                new_replicas=new_replicas,
            )
    return _PARTITIONS(throttle_time_ms=0, results=results)
