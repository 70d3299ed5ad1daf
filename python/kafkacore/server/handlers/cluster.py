"""ApiVersions, Metadata, FindCoordinator, InitProducerId and DescribeCluster."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Hashable

from kafkacore._java import JavaHashMap
from kafkacore.config import ConfigError
from kafkacore.coordinator.share_records import SHARE_GROUP_STATE_TOPIC
from kafkacore.coordinator.txn_records import TRANSACTION_STATE_TOPIC
from kafkacore.log import TopicPartition
from kafkacore.log.checkpoints import uuid_from_base64
from kafkacore.protocol import ApiKey, ErrorCode, api_versions_response
from kafkacore.protocol.errors import message as error_message
from kafkacore.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafkacore.protocol.messages.describe_cluster import (
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from kafkacore.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafkacore.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from kafkacore.protocol.messages.metadata import MetadataRequest, MetadataResponse
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from kafkacore.server.replica_manager import INTERNAL_TOPICS, topic_name_error
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices
from kafkacore.server.txn.handlers import init_transactional_producer_id

logger = logging.getLogger("kafkacore.server")

__all__ = [
    "handle_api_versions",
    "handle_describe_cluster",
    "handle_find_coordinator",
    "handle_init_producer_id",
    "handle_metadata",
    "shared_metadata_answer",
]

ZERO_UUID = uuid.UUID(int=0)

# Authorized operations with no authorizer: every operation the resource type supports
# (Kafka's AuthHelper.authorizedOperations and AclEntry.supportedOperations), as the
# 32-bit field of AclOperation codes. INT32_MIN means "not requested".
_NOT_REQUESTED = -(2**31)
# READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11
TOPIC_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
# CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
# IDEMPOTENT_WRITE 12
CLUSTER_AUTHORIZED_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


#: served only by a KRaft broker, which forwards them to the controller
_KRAFT_APIS = frozenset({ApiKey.DESCRIBE_QUORUM})


def handle_api_versions(
    services: BrokerServices, context: RequestContext, request: ApiVersionsRequest
) -> ApiVersionsResponse:
    """Every API this broker serves (the KRaft-only ones on a KRaft broker only); from v3
    the supported and finalized features and their epoch, as a Kafka 4.3.1 broker lists
    them (``ApiVersionsResponse``; v3 leaves out the supported features whose minimum
    level is 0, which older clients cannot parse: KAFKA-17011). The finalized ones are
    min = max = the level: a KRaft broker's from its metadata image, another's from its
    metadata store (through the cache)."""
    response = api_versions_response()
    source = services.features
    if source is None:
        response.api_keys = [k for k in response.api_keys if k.api_key not in _KRAFT_APIS]
    if context.api_version < 3:
        return response
    if source is None:
        ranges = {name: (r.min, r.max) for name, r in services.supported_features.items()}
        features = services.metadata_cache.features
    else:
        ranges = source.supported_features()
        features = source.finalized_features()
    supported = JavaHashMap[str, tuple[int, int]]()  # Kafka's HashMap: its iteration order
    for name, levels in ranges.items():
        supported[name] = levels
    response.supported_features = [
        ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=lo, max_version=hi)
        for name, (lo, hi) in supported.items()
        if context.api_version >= 4 or lo != 0
    ]
    response.finalized_features_epoch = features.epoch
    response.finalized_features = [
        ApiVersionsResponse.FinalizedFeatureKey(
            name=name, max_version_level=level, min_version_level=level
        )
        for name, level in features.in_kafka_order()
        if level > 0
    ]
    return response


def _topic_response(
    services: BrokerServices, name: str, version: int
) -> MetadataResponse.MetadataResponseTopic:
    topic = services.metadata_cache.topic(name)
    if topic is None:
        return MetadataResponse.MetadataResponseTopic(
            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            name=name,
            topic_id=ZERO_UUID,
            partitions=[],
        )
    partitions = [
        MetadataResponse.MetadataResponsePartition(
            error_code=0,
            partition_index=index,
            leader_id=state.leader,
            leader_epoch=state.leader_epoch,
            replica_nodes=state.replicas,  # tuples, never changed: no copy
            isr_nodes=state.isr,
            offline_replicas=(),
        )
        for index, state in enumerate(topic.partitions)
    ]
    return MetadataResponse.MetadataResponseTopic(
        error_code=0,
        name=name,
        topic_id=topic.topic_id,
        is_internal=name in INTERNAL_TOPICS,
        partitions=partitions,
    )


async def auto_create(services: BrokerServices, name: str) -> ErrorCode | None:
    """Create ``name`` with the broker defaults; the error to answer, if any."""
    if topic_name_error(name) is not None:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    if services.config.default_replication_factor != 1:
        return ErrorCode.INVALID_REPLICATION_FACTOR
    try:
        await services.run_io(
            services.replica_manager.create_topic, name, services.config.num_partitions
        )
    except ConfigError:
        return ErrorCode.INVALID_CONFIG
    except KeyError:  # created meanwhile by another request
        pass
    return None


def _unauthorized_topic(
    name: str | None, topic_id: uuid.UUID
) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        name=name,
        topic_id=topic_id,
        is_internal=False,
        partitions=[],
        topic_authorized_operations=_NOT_REQUESTED,
    )


def _invalid_request(
    requested: list[MetadataRequest.MetadataRequestTopic],
) -> MetadataResponse:
    """Kafka's error response to a Metadata below v12 naming a topic by id or with a null
    name (``InvalidRequestException``: "Topic IDs are not supported in requests for
    version 11", "Topic name can not be null ..."): every topic INVALID_REQUEST, a null
    name as "" (v10-11 answers cannot carry null)."""
    return MetadataResponse(
        brokers=[],
        topics=[
            MetadataResponse.MetadataResponseTopic(
                error_code=ErrorCode.INVALID_REQUEST,
                name=t.name or "",
                topic_id=t.topic_id or ZERO_UUID,
                is_internal=False,
                partitions=[],
            )
            for t in requested
        ],
    )


def _every_topic(
    services: BrokerServices, context: RequestContext, version: int, secured: bool
) -> list[MetadataResponse.MetadataResponseTopic]:
    """An all-topics request: every topic of the cache, without those the principal may
    not DESCRIBE (left out silently)."""
    listed = [t.name for t in services.metadata_cache.topics()]
    if secured:
        describable = authz.filter_authorized(
            services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, listed
        )
        listed = [name for name in listed if name in describable]
    return [_topic_response(services, name, version) for name in listed]


async def _requested_topics(
    services: BrokerServices,
    context: RequestContext,
    requested: list[MetadataRequest.MetadataRequestTopic],
    version: int,
    secured: bool,
    auto: bool,
) -> tuple[
    list[MetadataResponse.MetadataResponseTopic], list[MetadataResponse.MetadataResponseTopic]
]:
    """The named (or, v12+, identified) topics, and apart those refused (Kafka's
    ``getTopicMetadata``): an unknown id is UNKNOWN_TOPIC_ID; a topic without DESCRIBE is
    TOPIC_AUTHORIZATION_FAILED before its existence is looked at; a missing one is
    auto-created when ``auto`` (with an authorizer, given CREATE on the cluster or the
    topic, else TOPIC_AUTHORIZATION_FAILED)."""
    cache = services.metadata_cache
    topics: list[MetadataResponse.MetadataResponseTopic] = []
    refused: list[MetadataResponse.MetadataResponseTopic] = []
    may_create_all: bool | None = None
    for wanted in requested:
        name = wanted.name
        by_id = name is None
        if name is None:
            found = cache.topic_by_id(wanted.topic_id) if wanted.topic_id else None
            if found is None:
                topics.append(
                    MetadataResponse.MetadataResponseTopic(
                        error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                        name=None,
                        topic_id=wanted.topic_id,
                        partitions=[],
                    )
                )
                continue
            name = found.name
        if secured and not authz.authorize(
            services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, name
        ):
            refused.append(
                _unauthorized_topic(None, wanted.topic_id)
                if by_id
                else _unauthorized_topic(name, ZERO_UUID)
            )
            continue
        if not cache.contains_topic(name) and auto:
            if secured:
                if may_create_all is None:
                    may_create_all = authz.authorize_cluster(services, context, AclOperation.CREATE)
                if not may_create_all and not authz.authorize(
                    services, context, AclOperation.CREATE, ResourceType.TOPIC, name
                ):
                    refused.append(_unauthorized_topic(name, ZERO_UUID))
                    continue
            error = await auto_create(services, name)
            if error is not None:
                topics.append(
                    MetadataResponse.MetadataResponseTopic(
                        error_code=error, name=name, topic_id=ZERO_UUID, partitions=[]
                    )
                )
                continue
        topics.append(_topic_response(services, name, version))
    return topics, refused


def _set_topic_authorized_operations(
    services: BrokerServices,
    context: RequestContext,
    topics: list[MetadataResponse.MetadataResponseTopic],
    secured: bool,
) -> None:
    """v8+ ``include_topic_authorized_operations``: each answered topic's operations the
    principal may do (every one without an authorizer)."""
    for topic in topics:
        if topic.name is None:  # an unknown topic id: Kafka leaves the default
            continue
        topic.topic_authorized_operations = (
            authz.authorized_operations(services, context, ResourceType.TOPIC, topic.name)
            if secured
            else TOPIC_AUTHORIZED_OPERATIONS
        )


def _brokers(
    services: BrokerServices, context: RequestContext
) -> list[MetadataResponse.MetadataResponseBroker]:
    """The live brokers, each by its endpoint of the listener the request came through."""
    return [
        MetadataResponse.MetadataResponseBroker(
            node_id=b.node_id, host=host, port=port, rack=b.rack
        )
        for b in services.metadata_cache.alive_brokers()
        for host, port in (b.endpoint(context.listener_name),)
    ]


def shared_metadata_answer(
    services: BrokerServices, context: RequestContext, request: MetadataRequest
) -> tuple[Hashable, ...] | None:
    """The key under which the answer to ``request`` may be shared with other requests
    (``None``: answered for this request only): an all-topics Metadata without an
    authorizer is the same for every client of a listener at a version, until the
    metadata cache changes (the channel keeps its encoded bytes so; Kafka 4 likewise
    answers from one immutable ``MetadataImage``). The operations fields asked for are
    constants then (every supported operation), so they are part of the key."""
    version = context.api_version
    topics = request.topics
    if topics is not None and not (version == 0 and not topics):
        return None
    if authz.enabled(services):
        return None
    return (
        ApiKey.METADATA,
        context.listener_name,
        version,
        version >= 8 and bool(request.include_topic_authorized_operations),
        8 <= version <= 10 and bool(request.include_cluster_authorized_operations),
    )


async def handle_metadata(
    services: BrokerServices, context: RequestContext, request: MetadataRequest
) -> MetadataResponse:
    """With an authorizer (Kafka's ``handleTopicMetadataRequest``): an all-topics request
    silently leaves out the topics the principal may not DESCRIBE; a named one answers them
    TOPIC_AUTHORIZATION_FAILED with a zero topic id (by id: a null name and the id), without
    looking whether they exist; a missing topic is auto-created only with CREATE on the
    cluster or on the topic (else TOPIC_AUTHORIZATION_FAILED). The refused topics come
    after the others, and only the others carry ``topic_authorized_operations``."""
    version = context.api_version
    secured = authz.enabled(services)
    allow_auto = bool(request.allow_auto_topic_creation) if version >= 4 else True
    auto = allow_auto and services.config.auto_create_topics_enable
    requested = request.topics
    if requested is not None and version == 0 and not requested:
        requested = None  # v0: an empty list means every topic
    if (
        requested is not None
        and version < 12
        and any(t.name is None or (t.topic_id and t.topic_id != ZERO_UUID) for t in requested)
    ):
        return _invalid_request(requested)
    refused: list[MetadataResponse.MetadataResponseTopic] = []
    if requested is None:
        topics = _every_topic(services, context, version, secured)
    else:
        topics, refused = await _requested_topics(
            services, context, requested, version, secured, auto
        )
    if version >= 8 and request.include_topic_authorized_operations:
        _set_topic_authorized_operations(services, context, topics, secured)
    cluster_ops = _NOT_REQUESTED
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        cluster_ops = (
            authz.cluster_authorized_operations(services, context)
            if secured
            else CLUSTER_AUTHORIZED_OPERATIONS
        )
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=_brokers(services, context),
        cluster_id=services.cluster_id,
        controller_id=services.metadata_cache.controller_id,
        topics=topics + refused,
        cluster_authorized_operations=cluster_ops,
    )


async def handle_find_coordinator(
    services: BrokerServices, context: RequestContext, request: FindCoordinatorRequest
) -> FindCoordinatorResponse:
    """Group keys (type 0) on a single node: this node, the group coordinator;
    ``__consumer_offsets`` is created on the first such request, as Kafka does, so that
    the first group member's JoinGroup/SyncGroup are not held up by it. In a cluster:
    the leader of the group's ``__consumer_offsets`` partition, from the metadata cache;
    COORDINATOR_NOT_AVAILABLE while the topic does not exist (its creation starts in
    the background, as Kafka 3.9's auto-creation) or the partition has no live leader.
    Transaction keys (type 1) alike, with ``__transaction_state`` (the leader of the
    transactional id's partition is its coordinator). Share keys (type 2, v6, what
    partition leaders ask; ``group:topic id:partition``) need CLUSTER_ACTION and name a
    ``__share_group_state`` partition; INVALID_REQUEST without share groups or for a
    malformed key. Other key types INVALID_REQUEST."""

    async def answer(key_type: int, key: str) -> tuple[int, str | None, int, str, int]:
        # Kafka's getCoordinator: DESCRIBE on the group / the transactional id first
        if key_type == 0 and not authz.authorize(
            services, context, AclOperation.DESCRIBE, ResourceType.GROUP, key
        ):
            return ErrorCode.GROUP_AUTHORIZATION_FAILED, None, -1, "", -1
        if key_type == 1 and not authz.authorize(
            services, context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key
        ):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None, -1, "", -1
        if key_type == 2:
            return _share_coordinator(services, context, key)
        if key_type not in (0, 1):
            return ErrorCode.INVALID_REQUEST, None, -1, "", -1
        if services.cluster_mode:
            return _cluster_coordinator(services, key_type, key, context.listener_name)
        # Kafka creates the internal topic here; when its creation is refused (configs
        # below a topic config's minimum), Kafka logs it and answers COORDINATOR_NOT_AVAILABLE
        try:
            if key_type == 0:
                await services.run_io(services.group_coordinator.topic.ensure_created)
            else:
                await services.txn_coordinator.state.ensure_topic()
        except ConfigError as exc:
            topic = OFFSETS_TOPIC if key_type == 0 else TRANSACTION_STATE_TOPIC
            logger.warning(
                "Auto topic creation failed for %s with error 'INVALID_CONFIG': %s", topic, exc
            )
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1
        me = services.local_broker
        return ErrorCode.NONE, None, me.node_id, *me.endpoint(context.listener_name)

    if context.api_version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            code, message, node, host, port = await answer(request.key_type, key)
            coordinators.append(
                FindCoordinatorResponse.Coordinator(
                    key=key,
                    node_id=node,
                    host=host,
                    port=port,
                    error_code=code,
                    error_message=message,
                )
            )
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=coordinators)
    code, message, node, host, port = await answer(request.key_type, request.key)
    if (code == ErrorCode.COORDINATOR_NOT_AVAILABLE and services.cluster_mode) or (
        code
        in (ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    ):
        message = error_message(code)  # Kafka's v0-3 error response carries it
    return FindCoordinatorResponse(
        throttle_time_ms=0,
        error_code=code,
        error_message=message,
        node_id=node,
        host=host,
        port=port,
    )


def _share_coordinator(
    services: BrokerServices, context: RequestContext, key: str
) -> tuple[int, str | None, int, str, int]:
    """Kafka's ``getCoordinator`` for a share key: CLUSTER_ACTION on the cluster, then the
    leader of the key's ``__share_group_state`` partition (this node on a single node,
    where the share coordinator serves before the topic is created); the topic's
    creation starts on the first request."""
    if authz.enabled(services) and not authz.authorize_cluster(
        services, context, AclOperation.CLUSTER_ACTION
    ):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None, -1, "", -1
    share = services.share
    parts = key.rsplit(":", 2)  # SharePartitionKey.getInstance: group:topic id:partition
    if share is None or len(parts) != 3 or not parts[0]:
        return ErrorCode.INVALID_REQUEST, None, -1, "", -1
    try:
        uuid_from_base64(parts[1])
        int(parts[2])
    except ValueError:
        return ErrorCode.INVALID_REQUEST, None, -1, "", -1
    coordinator = share.coordinator
    if not coordinator.topic.exists():
        coordinator.create_topic()
    if services.controller is None:
        me = services.local_broker
        return ErrorCode.NONE, None, me.node_id, *me.endpoint(context.listener_name)
    partition = coordinator.partition_for_coordinator_key(key)
    return _leader_of(services, TopicPartition(SHARE_GROUP_STATE_TOPIC, partition), context)


def _leader_of(
    services: BrokerServices, tp: TopicPartition, context: RequestContext
) -> tuple[int, str | None, int, str, int]:
    cache = services.metadata_cache
    state = cache.partition_state(tp)
    leader = cache.broker(state.leader) if state is not None and state.leader >= 0 else None
    if leader is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1
    return ErrorCode.NONE, None, leader.node_id, *leader.endpoint(context.listener_name)


def _cluster_coordinator(
    services: BrokerServices, key_type: int, key: str, listener: str | None = None
) -> tuple[int, str | None, int, str, int]:
    """The leader of the key's partition of ``__consumer_offsets`` (groups) or
    ``__transaction_state`` (transactional ids)."""
    cache = services.metadata_cache
    unavailable = (ErrorCode.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1)
    if key_type == 0:
        groups = services.group_coordinator
        topic, partition = OFFSETS_TOPIC, groups.topic.partition_for(key)
        if not cache.contains_topic(topic):
            groups.create_offsets_topic()
            return unavailable
    else:
        txns = services.txn_coordinator.state
        topic, partition = TRANSACTION_STATE_TOPIC, txns.partition_for(key)
        if not cache.contains_topic(topic):
            txns.create_topic_in_background()
            return unavailable
    state = cache.partition_state(TopicPartition(topic, partition))
    if state is None or state.leader < 0:
        return unavailable
    leader = cache.broker(state.leader)
    if leader is None:
        return unavailable
    return ErrorCode.NONE, None, leader.node_id, *leader.endpoint(listener)


async def handle_init_producer_id(
    services: BrokerServices, context: RequestContext, request: InitProducerIdRequest
) -> InitProducerIdResponse:
    """Idempotent producers always get a fresh producer id with epoch 0: Kafka's
    coordinator ignores the ``producer_id``/``producer_epoch`` of a request without a
    transactional id (KIP-360's epoch bump applies to transactional producers only).
    A transactional id goes to the transaction coordinator
    (:func:`~kafkacore.server.txn.handlers.init_transactional_producer_id`).

    Authorization (Kafka's ``handleInitProducerIdRequest``): a transactional id needs WRITE
    on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without one, IDEMPOTENT_WRITE on the
    cluster or WRITE on some topic (``authorizeByResourceType``), else
    CLUSTER_AUTHORIZATION_FAILED."""
    denied: ErrorCode | None = None
    if authz.enabled(services):
        if request.transactional_id is not None:
            if not authz.authorize(
                services,
                context,
                AclOperation.WRITE,
                ResourceType.TRANSACTIONAL_ID,
                request.transactional_id,
            ):
                denied = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        elif not authz.authorize_cluster(
            services, context, AclOperation.IDEMPOTENT_WRITE
        ) and not authz.authorize_by_resource_type(
            services, context, AclOperation.WRITE, ResourceType.TOPIC
        ):
            denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    if denied is not None:
        return InitProducerIdResponse(
            throttle_time_ms=0, error_code=denied, producer_id=-1, producer_epoch=-1
        )
    if request.transactional_id is not None:
        result = await init_transactional_producer_id(
            services, context, request, request.transactional_id
        )
        return InitProducerIdResponse(
            throttle_time_ms=0,
            error_code=result.error_code,
            producer_id=result.producer_id,
            producer_epoch=result.producer_epoch,
        )
    new_pid = await services.run_io(services.metadata_store.allocate_producer_id)
    return InitProducerIdResponse(
        throttle_time_ms=0, error_code=0, producer_id=new_pid, producer_epoch=0
    )


def handle_describe_cluster(
    services: BrokerServices, context: RequestContext, request: DescribeClusterRequest
) -> DescribeClusterResponse:
    brokers = [
        DescribeClusterResponse.DescribeClusterBroker(
            broker_id=b.node_id, host=host, port=port, rack=b.rack
        )
        for b in services.metadata_cache.alive_brokers()
        for host, port in (b.endpoint(context.listener_name),)
    ]
    return DescribeClusterResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=1,
        cluster_id=services.cluster_id,
        controller_id=services.metadata_cache.controller_id,
        brokers=brokers,
        cluster_authorized_operations=(
            _NOT_REQUESTED
            if not request.include_cluster_authorized_operations
            else CLUSTER_AUTHORIZED_OPERATIONS
            if not authz.enabled(services)
            else authz.cluster_authorized_operations(services, context)
        ),
    )
