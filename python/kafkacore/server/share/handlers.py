"""The share group APIs' handlers, as Kafka 4.3.1's ``KafkaApis`` serves them:
ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge, the offsets APIs
(Describe/Alter/DeleteShareGroupOffsets) and the share-state RPCs the partition leaders
send to the share coordinator.

Every one answers UNSUPPORTED_VERSION while ``share.version`` is below 1 (KafkaApis'
``isShareGroupProtocolEnabled``), then authorizes as Kafka does: READ on the group
(heartbeat, fetch, acknowledge) or DESCRIBE (describe, describe offsets), ALTER / DELETE
for the offset changes, READ on the topics fetched or acknowledged, DESCRIBE on the
subscribed topics; the share-state RPCs need CLUSTER_ACTION. Handlers authorize, call the
share components, and shape the response. No sockets.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from kafkacore.coordinator.share_state import SharePartitionKey, StateBatch
from kafkacore.log import TopicPartition
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
)
from kafkacore.protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
)
from kafkacore.protocol.messages.delete_share_group_state import (
    DeleteShareGroupStateRequest,
    DeleteShareGroupStateResponse,
)
from kafkacore.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
)
from kafkacore.protocol.messages.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
    InitializeShareGroupStateResponse,
)
from kafkacore.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
    ReadShareGroupStateResponse,
)
from kafkacore.protocol.messages.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse,
)
from kafkacore.protocol.messages.share_acknowledge import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
)
from kafkacore.protocol.messages.share_fetch import (
    ShareFetchRequest,
    ShareFetchResponse,
)
from kafkacore.protocol.messages.share_group_describe import (
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
from kafkacore.protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from kafkacore.protocol.messages.write_share_group_state import (
    WriteShareGroupStateRequest,
    WriteShareGroupStateResponse,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.group.consumer import GroupError
from kafkacore.server.request_context import ApiHandler, RequestContext
from kafkacore.server.services import BrokerServices
from kafkacore.server.share.coordinator import ShareCoordinator, StateAnswer
from kafkacore.server.share.manager import FetchParams, PartitionFetch
from kafkacore.server.share.partition import AcknowledgementBatch, ShareAcquireMode
from kafkacore.server.share.services import ShareServices
from kafkacore.server.share.session import FINAL_EPOCH, INITIAL_EPOCH, SessionError

__all__ = ["SHARE_HANDLERS"]

TopicIdPartition = tuple[uuid.UUID, int]
# a leader's endpoint as the responses' NodeEndpoints carry it: id, host, port, rack
Endpoint = tuple[int, str, int, str | None]
# the acknowledgements of ShareFetch and of ShareAcknowledge (the same fields, two classes)
AckTopics = (
    Sequence[ShareFetchRequest.FetchTopic] | Sequence[ShareAcknowledgeRequest.AcknowledgeTopic]
)
AckBatches = Sequence[
    ShareFetchRequest.AcknowledgementBatch | ShareAcknowledgeRequest.AcknowledgementBatch
]


def _share(services: BrokerServices) -> ShareServices | None:
    return services.share


def _enabled(services: BrokerServices) -> bool:
    return services.share is not None and services.group_coordinator.share.enabled()


# -- ShareGroupHeartbeat / ShareGroupDescribe ----------------------------------------------


async def handle_share_group_heartbeat(
    services: BrokerServices, context: RequestContext, request: ShareGroupHeartbeatRequest
) -> ShareGroupHeartbeatResponse:
    cls = ShareGroupHeartbeatResponse

    def error(code: int, message: str | None = None) -> ShareGroupHeartbeatResponse:
        return cls(throttle_time_ms=0, error_code=code, error_message=message)

    if not _enabled(services):
        return error(ErrorCode.UNSUPPORTED_VERSION)
    if not authz.authorize(
        services, context, AclOperation.READ, ResourceType.GROUP, request.group_id
    ):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    names = request.subscribed_topic_names
    if names and authz.enabled(services):
        allowed = authz.filter_authorized(
            services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, names
        )
        refused = sorted(set(names) - allowed)
        if refused:
            return error(
                ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                f"The group has subscribed to topics that it doesn't have DESCRIBE access "
                f"to: {refused}",
            )
    answer = await services.group_coordinator.share.heartbeat(
        request, context.client_id or "", "/" + context.client_address
    )
    assignment = None
    if answer.assignment is not None:
        assignment = cls.Assignment(
            topic_partitions=[
                cls.TopicPartitions(topic_id=t, partitions=ps) for t, ps in answer.assignment
            ]
        )
    return cls(
        throttle_time_ms=0,
        error_code=answer.error_code,
        error_message=answer.error_message,
        member_id=answer.member_id,
        member_epoch=answer.member_epoch,
        heartbeat_interval_ms=answer.heartbeat_interval_ms,
        assignment=assignment,
    )


def handle_share_group_describe(
    services: BrokerServices, context: RequestContext, request: ShareGroupDescribeRequest
) -> ShareGroupDescribeResponse:
    cls = ShareGroupDescribeResponse
    if not _enabled(services):
        return cls(
            throttle_time_ms=0,
            groups=[
                cls.DescribedGroup(group_id=g, error_code=ErrorCode.UNSUPPORTED_VERSION)
                for g in request.group_ids
            ],
        )
    share = services.group_coordinator.share
    groups, refused = [], []
    for group_id in request.group_ids:
        if not authz.authorize(
            services, context, AclOperation.DESCRIBE, ResourceType.GROUP, group_id
        ):
            refused.append(
                cls.DescribedGroup(
                    group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
                )
            )
            continue
        described = share.describe(group_id)
        if described["error_code"]:
            groups.append(
                cls.DescribedGroup(
                    group_id=group_id,
                    error_code=described["error_code"],
                    error_message=described["error_message"],
                )
            )
            continue
        members = []
        for m in described["members"]:
            topics = []
            for topic_id, partitions in m.assigned.items():
                name = share.image.topic_name(topic_id)
                if name is not None and partitions:
                    topics.append(
                        cls.TopicPartitions(
                            topic_id=topic_id, topic_name=name, partitions=sorted(partitions)
                        )
                    )
            members.append(
                cls.Member(
                    member_id=m.member_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=sorted(m.subscribed_topic_names),
                    assignment=cls.Assignment(topic_partitions=topics),
                )
            )
        group = cls.DescribedGroup(
            group_id=group_id,
            error_code=0,
            group_state=described["group_state"],
            group_epoch=described["group_epoch"],
            assignment_epoch=described["assignment_epoch"],
            assignor_name=described["assignor_name"],
            members=members,
        )
        if request.include_authorized_operations:
            group.authorized_operations = authz.authorized_operations(
                services, context, ResourceType.GROUP, group_id
            )
        groups.append(group)
    return cls(throttle_time_ms=0, groups=groups + refused)


# -- ShareFetch / ShareAcknowledge ---------------------------------------------------------


def _current_leader(
    services: BrokerServices,
    context: RequestContext,
    tp: TopicPartition,
    endpoints: dict[int, Endpoint],
) -> tuple[int, int]:
    """The leader and epoch this broker knows, its endpoint added to ``endpoints``."""
    partition = services.replica_manager.partition(tp.topic, tp.partition)
    if partition is not None:
        leader_id, leader_epoch = partition.leader_id, partition.leader_epoch
    else:
        state = services.metadata_cache.partition_state(tp)
        leader_id, leader_epoch = (state.leader, state.leader_epoch) if state else (-1, -1)
    broker = services.metadata_cache.broker(leader_id) if leader_id >= 0 else None
    if broker is not None:
        host, port = broker.endpoint(context.listener_name)
        endpoints[leader_id] = (leader_id, host, port, broker.rack)
    return leader_id, leader_epoch


_LEADER_ERRORS = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)


def _validate_acks(
    batches: AckBatches, max_type: int
) -> tuple[int, list[AcknowledgementBatch] | None]:
    """``validateAcknowledgementBatches``: INVALID_REQUEST for a reversed, overlapping or
    empty batch, a type count that does not match the offsets, an unknown type."""
    out: list[AcknowledgementBatch] = []
    previous_end = -1
    for b in batches:
        types = list(b.acknowledge_types or [])
        if (
            b.first_offset > b.last_offset
            or b.first_offset < previous_end
            or not types
            or (len(types) > 1 and b.last_offset - b.first_offset != len(types) - 1)
            or any(t < 0 or t > max_type for t in types)
        ):
            return ErrorCode.INVALID_REQUEST, None
        previous_end = b.last_offset
        out.append(AcknowledgementBatch(b.first_offset, b.last_offset, tuple(types)))
    return ErrorCode.NONE, out


async def _acknowledge(
    services: BrokerServices,
    share: ShareServices,
    context: RequestContext,
    group_id: str,
    member_id: str,
    topics: AckTopics,
    max_type: int,
) -> dict[TopicIdPartition, tuple[int, str | None]]:
    """``handleAcknowledgements``: each partition's answer to its acknowledgements."""
    results: dict[TopicIdPartition, tuple[int, str | None]] = {}
    wanted: dict[TopicIdPartition, list[AcknowledgementBatch]] = {}
    names = {t.topic_id: share.manager.topic_name(t.topic_id) for t in topics}
    allowed = authz.filter_authorized(
        services,
        context,
        AclOperation.READ,
        ResourceType.TOPIC,
        [n for n in names.values() if n is not None],
    )
    for topic in topics:
        name = names[topic.topic_id]
        for p in topic.partitions:
            tp = (topic.topic_id, p.partition_index)
            if name is None:
                results[tp] = (ErrorCode.UNKNOWN_TOPIC_ID, None)
                continue
            code, batches = _validate_acks(list(p.acknowledgement_batches), max_type)
            if code or batches is None:
                results[tp] = (code, None)
                continue
            if name not in allowed:
                results[tp] = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
                continue
            if services.metadata_cache.partition_state(TopicPartition(name, tp[1])) is None:
                results[tp] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
                continue
            if not batches:
                results[tp] = (ErrorCode.NONE, None)
                continue
            wanted[tp] = batches
    if wanted:
        results.update(await share.manager.acknowledge(group_id, member_id, wanted))
    return results


async def handle_share_fetch(
    services: BrokerServices, context: RequestContext, request: ShareFetchRequest
) -> ShareFetchResponse:
    cls = ShareFetchResponse
    share = _share(services)

    def error(code: int, message: str | None = None) -> ShareFetchResponse:
        return cls(throttle_time_ms=0, error_code=code, error_message=message, responses=[])

    if share is None or not _enabled(services):
        return error(ErrorCode.UNSUPPORTED_VERSION)
    # nullable on the wire; a null one names no group or member, as an empty one
    group_id, member_id = request.group_id or "", request.member_id or ""
    if not authz.authorize(services, context, AclOperation.READ, ResourceType.GROUP, group_id):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    settings = share.group_configs.share(group_id)
    version = context.api_version
    epoch = request.share_session_epoch
    fetch_tps = [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions]
    forget = [(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions]
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    sessions = share.manager.sessions
    try:
        if epoch == FINAL_EPOCH:
            if sessions.get(group_id, member_id) is None:
                raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND)
            session_partitions = fetch_tps
        elif epoch == INITIAL_EPOCH:
            if has_acks:
                raise SessionError(ErrorCode.INVALID_REQUEST)
            session = sessions.open(group_id, member_id, fetch_tps, context.connection_id)
            session_partitions = list(session.partitions)
        else:
            session = sessions.advance(group_id, member_id, epoch, fetch_tps, forget)
            session_partitions = list(session.partitions)
    except SessionError as exc:
        return error(exc.error_code, exc.message)

    max_type = 4 if version >= 2 and settings.renew_acknowledge_enable else 3
    ack_results: dict[TopicIdPartition, tuple[int, str | None]] = {}
    if has_acks:
        ack_results = await _acknowledge(
            services, share, context, group_id, member_id, request.topics, max_type
        )

    # the partitions to fetch: the session's (a final request fetches nothing)
    fetch_results: Mapping[TopicIdPartition, PartitionFetch] = {}
    errors: dict[TopicIdPartition, int] = {}
    to_fetch: list[TopicIdPartition] = []
    if epoch != FINAL_EPOCH and not (version >= 2 and request.is_renew_ack):
        names = {t: share.manager.topic_name(t) for t, _ in session_partitions}
        allowed = authz.filter_authorized(
            services,
            context,
            AclOperation.READ,
            ResourceType.TOPIC,
            [n for n in names.values() if n is not None],
        )
        for tp in session_partitions:
            name = names[tp[0]]
            if name is None:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_ID
            elif name not in allowed:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif services.metadata_cache.partition_state(TopicPartition(name, tp[1])) is None:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                to_fetch.append(tp)
        if to_fetch:
            mode = ShareAcquireMode(request.share_acquire_mode if version >= 2 else 0)
            max_bytes = min(request.max_bytes, services.config.fetch_max_bytes)
            fetch_results = await share.manager.fetch(
                group_id,
                member_id,
                to_fetch,
                FetchParams(
                    max_wait_ms=request.max_wait_ms,
                    min_bytes=request.min_bytes,
                    max_bytes=max_bytes,
                    max_records=request.max_records,
                    batch_size=request.batch_size,
                    mode=mode,
                ),
            )
    if epoch == FINAL_EPOCH:
        await share.manager.release_session(group_id, member_id)

    # the response: the session's partitions with something to say (all of them on a
    # session's first request), then the acknowledged partitions not fetched
    endpoints: dict[int, Endpoint] = {}
    full = epoch == INITIAL_EPOCH
    order: list[TopicIdPartition] = []
    for tp in [*session_partitions, *ack_results]:
        if tp not in order:
            order.append(tp)
    topics: dict[uuid.UUID, ShareFetchResponse.ShareFetchableTopicResponse] = {}
    for tp in order:
        result = fetch_results.get(tp)
        code = errors.get(tp, result.error_code if result is not None else ErrorCode.NONE)
        message = result.error_message if result is not None else None
        ack = ack_results.get(tp)
        has_records = result is not None and bool(result.acquired)
        if not (full or has_records or code or ack is not None):
            continue
        data = cls.PartitionData(
            partition_index=tp[1],
            error_code=code,
            error_message=message,
            acknowledge_error_code=ack[0] if ack is not None else 0,
            acknowledge_error_message=ack[1] if ack is not None else None,
            current_leader=cls.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
            records=result.records if has_records and result is not None else b"",
            acquired_records=[
                cls.AcquiredRecords(
                    first_offset=a.first_offset,
                    last_offset=a.last_offset,
                    delivery_count=a.delivery_count,
                )
                for a in (result.acquired if result is not None else [])
            ],
        )
        name = share.manager.topic_name(tp[0])
        if name is not None and (code in _LEADER_ERRORS or (ack and ack[0] in _LEADER_ERRORS)):
            leader_id, leader_epoch = _current_leader(
                services, context, TopicPartition(name, tp[1]), endpoints
            )
            data.current_leader = cls.LeaderIdAndEpoch(
                leader_id=leader_id, leader_epoch=leader_epoch
            )
        topic = topics.get(tp[0])
        if topic is None:
            topic = topics[tp[0]] = cls.ShareFetchableTopicResponse(topic_id=tp[0], partitions=[])
        topic.partitions.append(data)
    return cls(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        acquisition_lock_timeout_ms=settings.record_lock_duration_ms,
        responses=list(topics.values()),
        node_endpoints=[
            cls.NodeEndpoint(node_id=n, host=h, port=p, rack=r) for n, h, p, r in endpoints.values()
        ],
    )


async def handle_share_acknowledge(
    services: BrokerServices, context: RequestContext, request: ShareAcknowledgeRequest
) -> ShareAcknowledgeResponse:
    cls = ShareAcknowledgeResponse
    share = _share(services)

    def error(code: int, message: str | None = None) -> ShareAcknowledgeResponse:
        return cls(throttle_time_ms=0, error_code=code, error_message=message, responses=[])

    if share is None or not _enabled(services):
        return error(ErrorCode.UNSUPPORTED_VERSION)
    # nullable on the wire; a null one names no group or member, as an empty one
    group_id, member_id = request.group_id or "", request.member_id or ""
    if not authz.authorize(services, context, AclOperation.READ, ResourceType.GROUP, group_id):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    settings = share.group_configs.share(group_id)
    epoch = request.share_session_epoch
    sessions = share.manager.sessions
    try:  # acknowledgeSessionUpdate
        if epoch == INITIAL_EPOCH:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        if epoch == FINAL_EPOCH:
            if sessions.get(group_id, member_id) is None:
                raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND)
        else:
            sessions.advance(group_id, member_id, epoch)
    except SessionError as exc:
        return error(exc.error_code, exc.message)
    max_type = 4 if context.api_version >= 2 and settings.renew_acknowledge_enable else 3
    results = await _acknowledge(
        services, share, context, group_id, member_id, request.topics, max_type
    )
    if epoch == FINAL_EPOCH:
        await share.manager.release_session(group_id, member_id)
    endpoints: dict[int, Endpoint] = {}
    topics: dict[uuid.UUID, ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse] = {}
    for tp, (code, message) in results.items():
        data = cls.PartitionData(
            partition_index=tp[1],
            error_code=code,
            error_message=message,
            current_leader=cls.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
        )
        name = share.manager.topic_name(tp[0])
        if code in _LEADER_ERRORS and name is not None:
            leader_id, leader_epoch = _current_leader(
                services, context, TopicPartition(name, tp[1]), endpoints
            )
            data.current_leader = cls.LeaderIdAndEpoch(
                leader_id=leader_id, leader_epoch=leader_epoch
            )
        topic = topics.get(tp[0])
        if topic is None:
            topic = topics[tp[0]] = cls.ShareAcknowledgeTopicResponse(topic_id=tp[0], partitions=[])
        topic.partitions.append(data)
    return cls(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        acquisition_lock_timeout_ms=settings.record_lock_duration_ms,
        responses=list(topics.values()),
        node_endpoints=[
            cls.NodeEndpoint(node_id=n, host=h, port=p, rack=r) for n, h, p, r in endpoints.values()
        ],
    )


# -- the share-state RPCs (partition leaders -> share coordinator) ---------------------------


def _state_denied(services: BrokerServices, context: RequestContext) -> bool:
    return authz.enabled(services) and not authz.authorize_cluster(
        services, context, AclOperation.CLUSTER_ACTION
    )


async def handle_initialize_share_group_state(
    services: BrokerServices, context: RequestContext, request: InitializeShareGroupStateRequest
) -> InitializeShareGroupStateResponse:
    cls = InitializeShareGroupStateResponse
    coordinator = _state_coordinator(services, context)
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            answer = (
                coordinator
                if isinstance(coordinator, StateAnswer)
                else await coordinator.initialize_state(
                    SharePartitionKey(request.group_id, topic.topic_id, p.partition),
                    p.state_epoch,
                    p.start_offset,
                )
            )
            partitions.append(
                cls.PartitionResult(
                    partition=p.partition,
                    error_code=answer.error_code,
                    error_message=answer.error_message,
                )
            )
        results.append(cls.InitializeStateResult(topic_id=topic.topic_id, partitions=partitions))
    return cls(results=results)


def _state_coordinator(
    services: BrokerServices, context: RequestContext
) -> ShareCoordinator | StateAnswer:
    """The share coordinator to answer a share-state request, or the refusal of every
    partition in it: CLUSTER_AUTHORIZATION_FAILED without CLUSTER_ACTION,
    UNSUPPORTED_VERSION without share groups."""
    share = _share(services)
    if _state_denied(services, context):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return StateAnswer(code, default_message(code))
    if share is None:
        return StateAnswer(ErrorCode.UNSUPPORTED_VERSION, "Share coordinator is not enabled.")
    return share.coordinator


async def handle_read_share_group_state(
    services: BrokerServices, context: RequestContext, request: ReadShareGroupStateRequest
) -> ReadShareGroupStateResponse:
    cls = ReadShareGroupStateResponse
    share = _share(services)
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            state = None
            code: int
            message: str | None
            if _state_denied(services, context):
                code, message = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), None
            elif share is None:
                code, message = ErrorCode.UNSUPPORTED_VERSION, "Share coordinator is not enabled."
            else:
                answer = await share.coordinator.read_state(
                    SharePartitionKey(request.group_id, topic.topic_id, p.partition),
                    p.leader_epoch,
                )
                code, message, state = answer.error_code, answer.error_message, answer.state
            partitions.append(
                cls.PartitionResult(
                    partition=p.partition,
                    error_code=code,
                    error_message=message,
                    state_epoch=state.state_epoch if state is not None else 0,
                    start_offset=state.start_offset if state is not None else 0,
                    state_batches=[
                        cls.StateBatch(
                            first_offset=b.first_offset,
                            last_offset=b.last_offset,
                            delivery_state=int(b.delivery_state),
                            delivery_count=b.delivery_count,
                        )
                        for b in (state.state_batches if state is not None else ())
                    ],
                )
            )
        results.append(cls.ReadStateResult(topic_id=topic.topic_id, partitions=partitions))
    return cls(results=results)


async def handle_write_share_group_state(
    services: BrokerServices, context: RequestContext, request: WriteShareGroupStateRequest
) -> WriteShareGroupStateResponse:
    cls = WriteShareGroupStateResponse
    coordinator = _state_coordinator(services, context)
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            batches = [
                StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                for b in p.state_batches
            ]
            answer = (
                coordinator
                if isinstance(coordinator, StateAnswer)
                else await coordinator.write_state(
                    SharePartitionKey(request.group_id, topic.topic_id, p.partition),
                    p.state_epoch,
                    p.leader_epoch,
                    p.start_offset,
                    p.delivery_complete_count if context.api_version >= 1 else -1,
                    batches,
                )
            )
            partitions.append(
                cls.PartitionResult(
                    partition=p.partition,
                    error_code=answer.error_code,
                    error_message=answer.error_message,
                )
            )
        results.append(cls.WriteStateResult(topic_id=topic.topic_id, partitions=partitions))
    return cls(results=results)


async def handle_delete_share_group_state(
    services: BrokerServices, context: RequestContext, request: DeleteShareGroupStateRequest
) -> DeleteShareGroupStateResponse:
    cls = DeleteShareGroupStateResponse
    coordinator = _state_coordinator(services, context)
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            answer = (
                coordinator
                if isinstance(coordinator, StateAnswer)
                else await coordinator.delete_state(
                    SharePartitionKey(request.group_id, topic.topic_id, p.partition)
                )
            )
            partitions.append(
                cls.PartitionResult(
                    partition=p.partition,
                    error_code=answer.error_code,
                    error_message=answer.error_message,
                )
            )
        results.append(cls.DeleteStateResult(topic_id=topic.topic_id, partitions=partitions))
    return cls(results=results)


async def handle_read_share_group_state_summary(
    services: BrokerServices, context: RequestContext, request: ReadShareGroupStateSummaryRequest
) -> ReadShareGroupStateSummaryResponse:
    cls = ReadShareGroupStateSummaryResponse
    share = _share(services)
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            state = None
            code: int
            message: str | None
            if _state_denied(services, context):
                code, message = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), None
            elif share is None:
                code, message = ErrorCode.UNSUPPORTED_VERSION, "Share coordinator is not enabled."
            else:
                answer = await share.coordinator.read_summary(
                    SharePartitionKey(request.group_id, topic.topic_id, p.partition)
                )
                code, message, state = answer.error_code, answer.error_message, answer.state
            partitions.append(
                cls.PartitionResult(
                    partition=p.partition,
                    error_code=code,
                    error_message=message,
                    state_epoch=state.state_epoch if state is not None else 0,
                    leader_epoch=state.leader_epoch if state is not None else 0,
                    start_offset=state.start_offset if state is not None else 0,
                    delivery_complete_count=(
                        state.delivery_complete_count if state is not None else -1
                    ),
                )
            )
        results.append(cls.ReadStateSummaryResult(topic_id=topic.topic_id, partitions=partitions))
    return cls(results=results)


# -- share group offsets (the admin's) -------------------------------------------------------


def _end_offset(services: BrokerServices, name: str, partition: int) -> int | None:
    """The partition's high watermark where this broker leads it (None: not here)."""
    local = services.replica_manager.partition(name, partition)
    return local.high_watermark if local is not None and local.is_leader else None


async def handle_describe_share_group_offsets(
    services: BrokerServices, context: RequestContext, request: DescribeShareGroupOffsetsRequest
) -> DescribeShareGroupOffsetsResponse:
    """DescribeShareGroupOffsets: each share partition's start offset and leader epoch
    from the share coordinator (ReadShareGroupStateSummary), and (v1) its lag: the end
    offset less the start offset and the records already delivered past it; -1 when
    unknown. Without topics: every initialized share partition of the group."""
    cls = DescribeShareGroupOffsetsResponse
    share = _share(services)
    groups = []
    for g in request.groups:
        if share is None or not _enabled(services):
            groups.append(
                cls.DescribeShareGroupOffsetsResponseGroup(
                    group_id=g.group_id, topics=[], error_code=ErrorCode.UNSUPPORTED_VERSION
                )
            )
            continue
        if not authz.authorize(
            services, context, AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id
        ):
            groups.append(
                cls.DescribeShareGroupOffsetsResponseGroup(
                    group_id=g.group_id,
                    topics=[],
                    error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                    error_message=default_message(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                )
            )
            continue
        code = services.group_coordinator.coordinator_error(g.group_id)
        if code:
            groups.append(
                cls.DescribeShareGroupOffsetsResponseGroup(
                    group_id=g.group_id, topics=[], error_code=code, error_message=None
                )
            )
            continue
        wanted: list[tuple[str, list[int]]] = []
        if g.topics is None:
            initialized = services.group_coordinator.share.initialized_partitions(g.group_id)
            for topic_id, ids in initialized.items():
                name = share.manager.topic_name(topic_id)
                if name is not None:
                    wanted.append((name, sorted(ids)))
            wanted.sort()
        else:
            wanted = [(t.topic_name, list(t.partitions)) for t in g.topics]
        topics = []
        for name, indexes in wanted:
            topic = services.metadata_cache.topic(name)
            out = []
            for p in indexes:
                entry = cls.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=p, start_offset=-1, leader_epoch=-1, lag=-1, error_code=0
                )
                if topic is None or not 0 <= p < topic.partition_count:
                    entry.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    entry.error_message = default_message(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                elif not authz.authorize(
                    services, context, AclOperation.DESCRIBE, ResourceType.TOPIC, name
                ):
                    entry.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                    entry.error_message = default_message(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                else:
                    answer = await share.persister.read_summary(g.group_id, topic.topic_id, p)
                    if answer.error_code:
                        entry.error_code = answer.error_code
                        entry.error_message = answer.error_message
                    elif answer.state is not None:
                        state = answer.state
                        entry.start_offset = state.start_offset
                        entry.leader_epoch = state.leader_epoch
                        end = _end_offset(services, name, p)
                        if end is not None and state.start_offset >= 0:
                            done = max(0, state.delivery_complete_count)
                            entry.lag = max(0, end - state.start_offset - done)
                out.append(entry)
            topics.append(
                cls.DescribeShareGroupOffsetsResponseTopic(
                    topic_name=name,
                    topic_id=topic.topic_id if topic is not None else uuid.UUID(int=0),
                    partitions=out,
                )
            )
        groups.append(
            cls.DescribeShareGroupOffsetsResponseGroup(
                group_id=g.group_id, topics=topics, error_code=0, error_message=None
            )
        )
    return cls(throttle_time_ms=0, groups=groups)


async def handle_alter_share_group_offsets(
    services: BrokerServices, context: RequestContext, request: AlterShareGroupOffsetsRequest
) -> AlterShareGroupOffsetsResponse:
    """AlterShareGroupOffsets: the group must be empty (NON_EMPTY_GROUP); each partition's
    share state starts again at the given offset."""
    cls = AlterShareGroupOffsetsResponse
    share = _share(services)

    def error(code: int, message: str | None = None) -> AlterShareGroupOffsetsResponse:
        return cls(throttle_time_ms=0, error_code=code, error_message=message, responses=[])

    if share is None or not _enabled(services):
        return error(ErrorCode.UNSUPPORTED_VERSION)
    group_id = request.group_id
    if not authz.authorize(services, context, AclOperation.READ, ResourceType.GROUP, group_id):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    code = services.group_coordinator.coordinator_error(group_id)
    if code:
        return error(code)
    offsets: dict[uuid.UUID, dict[int, int]] = {}
    refused: dict[tuple[str, int], int] = {}
    ids: dict[str, uuid.UUID] = {}
    for t in request.topics:
        topic = services.metadata_cache.topic(t.topic_name)
        for p in t.partitions:
            if topic is None or not 0 <= p.partition_index < topic.partition_count:
                refused[(t.topic_name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif not authz.authorize(
                services, context, AclOperation.READ, ResourceType.TOPIC, t.topic_name
            ):
                refused[(t.topic_name, p.partition_index)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            else:
                ids[t.topic_name] = topic.topic_id
                offsets.setdefault(topic.topic_id, {})[p.partition_index] = p.start_offset
    try:
        results = await services.group_coordinator.share.alter_offsets(group_id, offsets)
    except GroupError as exc:
        return error(exc.code, exc.message)
    responses = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            key = (t.topic_name, p.partition_index)
            if key in refused:
                c, m = refused[key], default_message(refused[key])
            else:
                c, m = results.get((ids[t.topic_name], p.partition_index), (0, None))
            parts.append(
                cls.AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index, error_code=c, error_message=m
                )
            )
        responses.append(
            cls.AlterShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name,
                topic_id=ids.get(t.topic_name, uuid.UUID(int=0)),
                partitions=parts,
            )
        )
    return cls(throttle_time_ms=0, error_code=0, error_message=None, responses=responses)


async def handle_delete_share_group_offsets(
    services: BrokerServices, context: RequestContext, request: DeleteShareGroupOffsetsRequest
) -> DeleteShareGroupOffsetsResponse:
    """DeleteShareGroupOffsets: the group must be empty; the topics' share state goes."""
    cls = DeleteShareGroupOffsetsResponse
    share = _share(services)

    def error(code: int, message: str | None = None) -> DeleteShareGroupOffsetsResponse:
        return cls(throttle_time_ms=0, error_code=code, error_message=message, responses=[])

    if share is None or not _enabled(services):
        return error(ErrorCode.UNSUPPORTED_VERSION)
    group_id = request.group_id
    if not authz.authorize(services, context, AclOperation.DELETE, ResourceType.GROUP, group_id):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    code = services.group_coordinator.coordinator_error(group_id)
    if code:
        return error(code)
    wanted: list[uuid.UUID] = []
    refused: dict[str, int] = {}
    ids: dict[str, uuid.UUID] = {}
    for t in request.topics:
        topic = services.metadata_cache.topic(t.topic_name)
        if topic is None:
            refused[t.topic_name] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        elif not authz.authorize(
            services, context, AclOperation.READ, ResourceType.TOPIC, t.topic_name
        ):
            refused[t.topic_name] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        else:
            ids[t.topic_name] = topic.topic_id
            wanted.append(topic.topic_id)
    try:
        results = await services.group_coordinator.share.delete_offsets(group_id, wanted)
    except GroupError as exc:
        return error(exc.code, exc.message)
    responses = []
    for t in request.topics:
        if t.topic_name in refused:
            c, m = refused[t.topic_name], default_message(refused[t.topic_name])
        else:
            c, m = results.get(ids[t.topic_name], (0, None))
        responses.append(
            cls.DeleteShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name,
                topic_id=ids.get(t.topic_name, uuid.UUID(int=0)),
                error_code=c,
                error_message=m,
            )
        )
    return cls(throttle_time_ms=0, error_code=0, error_message=None, responses=responses)


SHARE_HANDLERS: dict[ApiKey, ApiHandler] = {
    ApiKey.SHARE_GROUP_HEARTBEAT: handle_share_group_heartbeat,
    ApiKey.SHARE_GROUP_DESCRIBE: handle_share_group_describe,
    ApiKey.SHARE_FETCH: handle_share_fetch,
    ApiKey.SHARE_ACKNOWLEDGE: handle_share_acknowledge,
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: handle_initialize_share_group_state,
    ApiKey.READ_SHARE_GROUP_STATE: handle_read_share_group_state,
    ApiKey.WRITE_SHARE_GROUP_STATE: handle_write_share_group_state,
    ApiKey.DELETE_SHARE_GROUP_STATE: handle_delete_share_group_state,
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: handle_read_share_group_state_summary,
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: handle_describe_share_group_offsets,
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: handle_alter_share_group_offsets,
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: handle_delete_share_group_offsets,
}
