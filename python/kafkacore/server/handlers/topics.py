"""CreateTopics v2-7, DeleteTopics v1-6 and CreatePartitions v0-3.

Single node: every replica assignment must be ``[this node]``, replication factor 1.
Cluster mode: assignments are Kafka's (``AdminUtils``: rack-aware, round-robin from a
random start broker) over the live brokers of the metadata cache, explicit assignments are
checked against them, and the controller makes the partitions (the store waits until they
have leaders, as Kafka's ``DelayedCreatePartitions`` does)."""

from __future__ import annotations

import asyncio
import uuid
from typing import NamedTuple

from kafkacore.config import ConfigError, LogConfig
from kafkacore.log import TopicPartition
from kafkacore.placement import (
    BrokerMetadata,
    InvalidReplicationFactorError,
    assign_replicas_for_new_partitions,
    assign_replicas_to_brokers,
)
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
)
from kafkacore.protocol.messages.create_topics import CreateTopicsRequest, CreateTopicsResponse
from kafkacore.protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicsResponse
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.replica_manager import topic_name_error
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_create_partitions", "handle_create_topics", "handle_delete_topics"]

ZERO_UUID = uuid.UUID(int=0)


def _cluster_mode(services: BrokerServices) -> bool:
    return services.controller is not None


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


class _TopicRefused(Exception):
    """One topic of a CreateTopics refused: its error code and message (Kafka's
    ``ApiException`` caught per topic by ``ZkAdminManager.createTopics``)."""

    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Placement(NamedTuple):
    """Where a new topic's partitions go: their count, the replication factor, and each
    partition's replicas (``None`` on a single node: this broker)."""

    partitions: int
    replication_factor: int
    assignment: list[list[int]] | None


def _check_request_level(
    topic: CreateTopicsRequest.CreatableTopic, names: list[str], creatable: set[str] | None
) -> None:
    """What Kafka's ``KafkaApis.handleCreateTopicsRequest`` refuses before the admin
    manager sees a topic: a name given twice, a topic the principal may not create."""
    if names.count(topic.name) > 1:
        raise _TopicRefused(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    if creatable is not None and topic.name not in creatable:
        raise _TopicRefused(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")


def _explicit_placement(
    services: BrokerServices, assignments: list[CreateTopicsRequest.CreatableReplicaAssignment]
) -> _Placement:
    """A requested assignment, checked (Kafka's ``validateReplicaAssignment``): partitions
    0..n-1, and on a single node every replica this broker."""
    indexes = sorted(a.partition_index for a in assignments)
    if indexes != list(range(len(assignments))):
        raise _TopicRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "Partitions should be a consecutive 0-based integer sequence",
        )
    ordered = sorted(assignments, key=lambda a: a.partition_index)
    assignment = [list(a.broker_ids) for a in ordered]
    if _cluster_mode(services):
        problem = _explicit_assignment_error(services, assignment)
    elif any(replicas != [services.node_id] for replicas in assignment):
        problem = f"Replica assignments must be partitions 0..n-1 on broker {services.node_id}."
    else:
        problem = None
    if problem is not None:
        raise _TopicRefused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
    return _Placement(len(assignment), len(assignment[0]), assignment)


def _placement(services: BrokerServices, topic: CreateTopicsRequest.CreatableTopic) -> _Placement:
    """Kafka's validation and placement of a new topic, in its order: the name, not an
    existing topic, an explicit assignment or a partition count and replication factor
    (-1: the broker's defaults), then in a cluster the replicas placed over the live
    brokers (``AdminUtils.assignReplicasToBrokers``). Raises :class:`_TopicRefused`."""
    name_error = topic_name_error(topic.name)
    if name_error is not None:
        raise _TopicRefused(ErrorCode.INVALID_TOPIC_EXCEPTION, name_error)
    if services.metadata_cache.contains_topic(topic.name):
        raise _TopicRefused(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
    assignments = list(topic.assignments or [])
    if assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise _TopicRefused(
                ErrorCode.INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time.",
            )
        placement = _explicit_placement(services, assignments)
    else:
        config = services.config
        placement = _Placement(
            config.num_partitions if topic.num_partitions == -1 else topic.num_partitions,
            config.default_replication_factor
            if topic.replication_factor == -1
            else topic.replication_factor,
            None,
        )
    if placement.partitions <= 0:
        raise _TopicRefused(
            ErrorCode.INVALID_PARTITIONS,
            "Number of partitions was set to an invalid non-positive value.",
        )
    rf_error = _replication_error(services, placement.replication_factor)
    if rf_error is not None:
        raise _TopicRefused(*rf_error)
    if placement.assignment is None and _cluster_mode(services):
        try:
            assigned = assign_replicas_to_brokers(
                _live_brokers(services), placement.partitions, placement.replication_factor
            )
        except InvalidReplicationFactorError as exc:
            raise _TopicRefused(ErrorCode.INVALID_REPLICATION_FACTOR, str(exc)) from None
        placement = placement._replace(
            assignment=[assigned[p] for p in range(placement.partitions)]
        )
    return placement


def _topic_config(
    services: BrokerServices, topic: CreateTopicsRequest.CreatableTopic
) -> tuple[LogConfig, dict[str, str]]:
    """The topic's config over the broker's (INVALID_CONFIG when refused) and the
    overrides to store."""
    overrides = {c.name: c.value for c in topic.configs}
    try:
        config = LogConfig(overrides, services.config)
    except ConfigError as exc:  # a null value among them, say
        raise _TopicRefused(ErrorCode.INVALID_CONFIG, str(exc)) from None
    return config, {name: value for name, value in overrides.items() if value is not None}


async def _create(
    services: BrokerServices, name: str, placement: _Placement, stored: dict[str, str]
) -> uuid.UUID:
    """The topic made (on the I/O executor; in a cluster, by the controller); its id."""
    try:
        created = await services.run_io(
            services.replica_manager.create_topic,
            name,
            placement.partitions,
            stored,
            assignment=placement.assignment,
        )
    except KeyError:  # created meanwhile by another request
        raise _TopicRefused(
            ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists."
        ) from None
    except Exception as exc:
        raise _TopicRefused(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)) from None
    return created.topic_id


def _created_result(
    result: CreateTopicsResponse.CreatableTopicResult,
    placement: _Placement,
    topic_id: uuid.UUID,
    config: LogConfig,
    configs_described: bool,
    version: int,
) -> None:
    """A created (or validated) topic's answer: its partitions, replication factor and id,
    and from v5 its configs - unless the principal may not describe them."""
    result.num_partitions = placement.partitions
    result.replication_factor = placement.replication_factor
    result.topic_id = topic_id
    if not configs_described:
        result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    elif version >= 5:
        result.configs = [
            CreateTopicsResponse.CreatableTopicConfigs(
                name=e.name,
                value=e.value,
                read_only=e.read_only,
                config_source=int(e.source),
                is_sensitive=e.is_sensitive,
            )
            for e in config.describe(include_synonyms=False)
        ]


async def handle_create_topics(
    services: BrokerServices, context: RequestContext, request: CreateTopicsRequest
) -> CreateTopicsResponse:
    """With an authorizer (Kafka's ``ControllerApis.createTopics``): CREATE on the cluster,
    else on each topic (TOPIC_AUTHORIZATION_FAILED "Authorization failed."); a topic
    created without DESCRIBE_CONFIGS on it gets no configs and ``topic_config_error_code``
    TOPIC_AUTHORIZATION_FAILED. Each topic is then validated and placed, its config
    checked, and it is created unless ``validate_only``; the first refusal is its answer."""
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
        result = CreateTopicsResponse.CreatableTopicResult(
            name=topic.name,
            topic_id=ZERO_UUID,
            error_code=0,
            error_message=None,
            num_partitions=-1,
            replication_factor=-1,
            configs=None if version >= 5 else [],
        )
        results.append(result)
        try:
            _check_request_level(topic, names, creatable)
            placement = _placement(services, topic)
            config, stored = _topic_config(services, topic)
            topic_id = (
                ZERO_UUID
                if request.validate_only
                else await _create(services, topic.name, placement, stored)
            )
        except _TopicRefused as refused:
            result.error_code = refused.code
            result.error_message = refused.message
            continue
        described = describable is None or topic.name in describable
        _created_result(result, placement, topic_id, config, described, version)
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


async def _wait_until_gone(services: BrokerServices, name: str, timeout_ms: int) -> bool:
    deadline = asyncio.get_running_loop().time() + max(0, timeout_ms) / 1000
    while services.metadata_cache.contains_topic(name):
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def handle_delete_topics(
    services: BrokerServices, context: RequestContext, request: DeleteTopicsRequest
) -> DeleteTopicsResponse:
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
        result = DeleteTopicsResponse.DeletableTopicResult(
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
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)


async def handle_create_partitions(
    services: BrokerServices, context: RequestContext, request: CreatePartitionsRequest
) -> CreatePartitionsResponse:
    """ALTER on each topic, else TOPIC_AUTHORIZATION_FAILED (before its existence)."""
    cache = services.metadata_cache
    alterable = authz.allowed_topics(
        services, context, AclOperation.ALTER, (t.name for t in request.topics)
    )
    results = []
    for topic in request.topics:
        result = CreatePartitionsResponse.CreatePartitionsTopicResult(
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
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)
