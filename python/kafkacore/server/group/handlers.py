"""The group APIs' handlers: decode the request objects, ask the coordinator, build
the responses. No sockets. The handlers that write ``__consumer_offsets`` (OffsetCommit,
TxnOffsetCommit, DeleteGroups, OffsetDelete) and OffsetFetch (RequireStable waits for the
writes under way) are coroutines: the coordinator's append runs on the I/O
executor and is awaited. A group whose ``__consumer_offsets`` partition this broker does
not own (or is still loading) gets the coordinator's error (Kafka 3.9's
``validateGroupStatus``, per API)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Protocol, TypeVar

from kafkacore.log import TopicPartition
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.messages.delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from kafkacore.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from kafkacore.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from kafkacore.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from kafkacore.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from kafkacore.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from kafkacore.protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from kafkacore.protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from kafkacore.protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from kafkacore.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from kafkacore.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.group.coordinator import GroupCoordinator, TxnVerifier
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from kafkacore.server.request_context import ApiHandler, RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["GROUP_HANDLERS"]


def _coordinator(services: BrokerServices) -> GroupCoordinator:
    return services.group_coordinator


def _group_allowed(
    services: BrokerServices, context: RequestContext, operation: AclOperation, group_id: str
) -> bool:
    return authz.authorize(services, context, operation, ResourceType.GROUP, group_id)


def _topics_allowed(
    services: BrokerServices,
    context: RequestContext,
    operation: AclOperation,
    names: Iterable[str],
) -> set[str] | None:
    """The topics among ``names`` allowed ``operation``; None with no authorizer."""
    if not authz.enabled(services):
        return None
    return authz.filter_authorized(services, context, operation, ResourceType.TOPIC, names)


async def handle_join_group(
    services: BrokerServices, context: RequestContext, request: JoinGroupRequest
) -> JoinGroupResponse:
    cls = JoinGroupResponse
    if not _group_allowed(services, context, AclOperation.READ, request.group_id):
        # JoinGroupRequest.getErrorResponse
        return cls(
            throttle_time_ms=0,
            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
            generation_id=-1,
            protocol_type=None,
            protocol_name=None if context.api_version >= 7 else "",
            leader="",
            skip_assignment=False,
            member_id="",
            members=[],
        )
    code, generation, protocol, leader, member_id, members = await _coordinator(services).join(
        version=context.api_version,
        group_id=request.group_id,
        member_id=request.member_id,
        instance_id=request.group_instance_id,
        client_id=context.client_id or "",
        client_host="/" + context.client_address,
        session_timeout=request.session_timeout_ms,
        rebalance_timeout=request.rebalance_timeout_ms if context.api_version >= 1 else -1,
        protocol_type=request.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
    )
    return cls(
        throttle_time_ms=0,
        error_code=code,
        generation_id=generation,
        protocol_type=request.protocol_type if code == ErrorCode.NONE else None,
        protocol_name=protocol if context.api_version >= 7 or protocol is not None else "",
        leader=leader or "",
        skip_assignment=False,
        member_id=member_id,
        members=[
            cls.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=d)
            for m, i, d in members
        ],
    )


async def handle_sync_group(
    services: BrokerServices, context: RequestContext, request: SyncGroupRequest
) -> SyncGroupResponse:
    if not _group_allowed(services, context, AclOperation.READ, request.group_id):
        return SyncGroupResponse(
            throttle_time_ms=0,
            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
            protocol_type=None,
            protocol_name=None,
            assignment=b"",
        )
    code, pt, pn, assignment = await _coordinator(services).sync(
        request.group_id,
        request.generation_id,
        request.member_id,
        request.group_instance_id,
        request.protocol_type,
        request.protocol_name,
        {a.member_id: bytes(a.assignment) for a in request.assignments},
    )
    return SyncGroupResponse(
        throttle_time_ms=0,
        error_code=code,
        protocol_type=pt,
        protocol_name=pn,
        assignment=assignment,
    )


async def handle_heartbeat(
    services: BrokerServices, context: RequestContext, request: HeartbeatRequest
) -> HeartbeatResponse:
    if not _group_allowed(services, context, AclOperation.READ, request.group_id):
        return HeartbeatResponse(
            throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
        )
    code = await _coordinator(services).heartbeat(
        request.group_id, request.generation_id, request.member_id, request.group_instance_id
    )
    return HeartbeatResponse(throttle_time_ms=0, error_code=code)


async def handle_leave_group(
    services: BrokerServices, context: RequestContext, request: LeaveGroupRequest
) -> LeaveGroupResponse:
    cls = LeaveGroupResponse
    if not _group_allowed(services, context, AclOperation.READ, request.group_id):
        return cls(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, members=[])
    if context.api_version < 3:
        code, codes = await _coordinator(services).leave(
            request.group_id, [(request.member_id, None)]
        )
        return cls(throttle_time_ms=0, error_code=codes[0] if codes else code, members=[])
    items = [(m.member_id, m.group_instance_id) for m in request.members]
    code, codes = await _coordinator(services).leave(request.group_id, items)
    return cls(
        throttle_time_ms=0,
        error_code=code,
        members=[
            cls.MemberResponse(member_id=m, group_instance_id=i, error_code=c)
            for (m, i), c in zip(items, codes, strict=True)
        ],
    )


_NO_TOPIC_ID = uuid.UUID(int=0)


class _TopicById(Protocol):
    """A topic of an OffsetCommit or OffsetFetch request (v10 names it by id)."""

    name: str
    topic_id: uuid.UUID


_Topic = TypeVar("_Topic", bound=_TopicById)


def _named_topics(
    services: BrokerServices, topics: Iterable[_Topic]
) -> tuple[list[_Topic], list[_Topic]]:
    """OffsetCommit/OffsetFetch v10 name topics by id (KIP-848): ``(known, unknown)``, each
    known topic given its name; the unknown ids are answered UNKNOWN_TOPIC_ID."""
    known: list[_Topic] = []
    unknown: list[_Topic] = []
    for t in topics:
        topic = services.metadata_cache.topic_by_id(t.topic_id)
        if topic is None:
            unknown.append(t)
        else:
            t.name = topic.name
            known.append(t)
    return known, unknown


def _offsets_to_commit(
    topics: Iterable[
        OffsetCommitRequest.OffsetCommitRequestTopic
        | TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    ],
    readable: set[str] | None,
) -> list[tuple[str, int, int, int, str | None]]:
    """(topic, partition, offset, leader epoch, metadata) of an OffsetCommit's or a
    TxnOffsetCommit's topics the principal may read (all with no authorizer)."""
    return [
        (
            t.name,
            p.partition_index,
            p.committed_offset,
            p.committed_leader_epoch,
            p.committed_metadata,
        )
        for t in topics
        if readable is None or t.name in readable
        for p in t.partitions
    ]


async def handle_offset_commit(
    services: BrokerServices, context: RequestContext, request: OffsetCommitRequest
) -> OffsetCommitResponse:
    """READ on the group (else GROUP_AUTHORIZATION_FAILED for every partition), then
    READ on each topic (TOPIC_AUTHORIZATION_FAILED, listed first, as Kafka's builder).
    v10 names topics by id: an unknown id is UNKNOWN_TOPIC_ID, listed first too, and the
    answer names topics by id."""
    cls = OffsetCommitResponse
    by_id = context.api_version >= 10
    request_topics, unknown_ids = (
        _named_topics(services, request.topics) if by_id else (list(request.topics), [])
    )
    ids = {t.name: t.topic_id for t in request_topics} if by_id else {}
    if not _group_allowed(services, context, AclOperation.READ, request.group_id):
        return cls(
            throttle_time_ms=0,
            topics=[
                cls.OffsetCommitResponseTopic(
                    name=t.name,
                    topic_id=t.topic_id,
                    partitions=[
                        cls.OffsetCommitResponsePartition(
                            partition_index=p.partition_index,
                            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                        )
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ],
        )
    readable = _topics_allowed(
        services, context, AclOperation.READ, (t.name for t in request_topics)
    )
    refused: list[tuple[str, list[tuple[int, int]]]] = []
    if readable is not None:
        for t in request_topics:
            if t.name not in readable:
                refused.append(
                    (
                        t.name,
                        [
                            (p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                            for p in t.partitions
                        ],
                    )
                )
    flat = _offsets_to_commit(request_topics, readable)
    if refused and not flat:
        answer = refused
    else:
        answer = refused + await _coordinator(services).commit(
            request.group_id,
            request.generation_id_or_member_epoch,
            request.member_id,
            request.group_instance_id,
            flat,
            retention_time_ms=request.retention_time_ms,
            api_version=context.api_version,
        )
    unknown_by_key = {f"\0{t.topic_id}": t for t in unknown_ids}
    merged: dict[str, list[tuple[int, int]]] = {}
    for key, t in unknown_by_key.items():
        merged[key] = [(p.partition_index, ErrorCode.UNKNOWN_TOPIC_ID) for p in t.partitions]
    for name, partitions in answer:
        merged.setdefault(name, []).extend(partitions)
    topics = [
        cls.OffsetCommitResponseTopic(
            name="" if key in unknown_by_key else key,
            topic_id=(
                unknown_by_key[key].topic_id
                if key in unknown_by_key
                else ids.get(key, _NO_TOPIC_ID)
            ),
            partitions=[
                cls.OffsetCommitResponsePartition(partition_index=p, error_code=code)
                for p, code in partitions
            ],
        )
        for key, partitions in _builder_order(request.topics, merged, by_id)
    ]
    return cls(throttle_time_ms=0, topics=topics)


_EARLY_ERRORS = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
)


def _builder_order(
    request_topics: Iterable[_TopicById],
    merged: dict[str, list[tuple[int, int]]],
    by_id: bool,
) -> list[tuple[str, list[tuple[int, int]]]]:
    """The topics of an OffsetCommit answer in the order of Kafka's
    ``OffsetCommitResponse.Builder``: those refused before the coordinator (unknown id,
    not authorized, a partition that does not exist) in the request's order, then the
    coordinator's (each topic's own refused partitions ahead of its others)."""
    early = [k for k, ps in merged.items() if any(code in _EARLY_ERRORS for _, code in ps)]
    position = {
        (f"\0{t.topic_id}" if by_id and f"\0{t.topic_id}" in merged else t.name): i
        for i, t in enumerate(request_topics)
    }
    early.sort(key=lambda k: position.get(k, len(position)))
    rest = [k for k in merged if k not in early]
    return [(k, merged[k]) for k in [*early, *rest]]


_TXN_STATE_TOPIC = "__transaction_state"


def _offset_commit_error(code: int) -> int:
    """Kafka's ``GroupMetadataManager.maybeConvertOffsetCommitError`` of a failed
    verification."""
    if code == ErrorCode.NETWORK_EXCEPTION:
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS  # retried without a new lookup
    if code in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (
        ErrorCode.MESSAGE_TOO_LARGE,
        ErrorCode.RECORD_LIST_TOO_LARGE,
        ErrorCode.INVALID_FETCH_SIZE,
    ):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return code


def _txn_verifier(
    services: BrokerServices, context: RequestContext, request: TxnOffsetCommitRequest
) -> TxnVerifier | None:
    """KIP-890 part 1 for TxnOffsetCommit (``transaction.partition.verification.enable``,
    Kafka's ``maybeStartTransactionVerificationForPartition``): unless the producer already
    has a transaction open on the group's ``__consumer_offsets`` partition, the
    transaction coordinator is asked whether that partition is in the transaction
    (AddOffsetsToTxn put it there), so that a late commit cannot leave offsets no marker
    will decide: in-process when this broker leads the transactional id's
    ``__transaction_state`` partition, else AddPartitionsToTxn v4 ``VerifyOnly`` to its
    leader (:meth:`ReplicaManager.verify_transaction_remotely`; none known:
    COORDINATOR_NOT_AVAILABLE). A partition not in the transaction is
    TRANSACTION_ABORTABLE for v4, INVALID_TXN_STATE before (``AddPartitionsToTxnManager``);
    a fenced producer INVALID_PRODUCER_EPOCH; the rest through
    :func:`_offset_commit_error`. A verified write carries the guard taken before the
    question (a marker appended meanwhile refuses it).

    v5 (transaction version 2, KIP-890 part 2) adds the partition instead of asking,
    whatever the verification config: the client sends no AddOffsetsToTxn."""
    implicit_add = context.api_version >= 5
    if not (implicit_add or services.config.transaction_partition_verification_enable):
        return None
    coordinator = services.txn_coordinator
    if not request.transactional_id:
        return None
    transactional_id = request.transactional_id
    producer_id, epoch = request.producer_id, request.producer_epoch
    replicas = services.replica_manager

    async def verify(index: int) -> tuple[int, tuple[int, int] | None]:
        log = replicas.get_log(OFFSETS_TOPIC, index)  # None: created by the first write
        if log is not None and log.has_ongoing_transaction(producer_id, epoch):
            return ErrorCode.NONE, None
        guard = None if log is None else (producer_id, log.verification_guard(producer_id))
        tp = TopicPartition(OFFSETS_TOPIC, index)
        state_tp = TopicPartition(_TXN_STATE_TOPIC, coordinator.partition_for(transactional_id))
        state = services.metadata_cache.partition_state(state_tp)
        leader = state.leader if state is not None else -1
        if leader == services.node_id and implicit_add:
            added = await coordinator.add_partitions(
                transactional_id, producer_id, epoch, {tp}, client_transaction_version=2
            )
            answers = {tp: int(added)}
        elif leader == services.node_id:
            answers = coordinator.verify_partitions(transactional_id, producer_id, epoch, {tp})
        elif leader >= 0:
            answers = await replicas.verify_transaction_remotely(
                leader, transactional_id, producer_id, epoch, {tp}, add=implicit_add
            )
        else:
            answers = {tp: int(ErrorCode.COORDINATOR_NOT_AVAILABLE)}
        code = answers[tp]
        if code == ErrorCode.NONE:
            return ErrorCode.NONE, guard
        if code == ErrorCode.PRODUCER_FENCED:
            return ErrorCode.INVALID_PRODUCER_EPOCH, None
        if code == ErrorCode.TRANSACTION_ABORTABLE and context.api_version < 4:
            return ErrorCode.INVALID_TXN_STATE, None
        return _offset_commit_error(code), None

    return verify


async def handle_txn_offset_commit(
    services: BrokerServices, context: RequestContext, request: TxnOffsetCommitRequest
) -> TxnOffsetCommitResponse:
    """TxnOffsetCommit (Kafka 3.9's ``KafkaApis.handleTxnOffsetCommitRequest``): WRITE on
    the TransactionalId, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition;
    READ on the group, else GROUP_AUTHORIZATION_FAILED for every partition; READ on each
    topic, else TOPIC_AUTHORIZATION_FAILED for its partitions (listed first, as Kafka's
    builder); the coordinator's answer for the rest
    (:meth:`GroupCoordinator.commit_transactional`). Versions 0-1 get
    COORDINATOR_NOT_AVAILABLE in place of COORDINATOR_LOAD_IN_PROGRESS (clients before
    KAFKA-7296 did not expect it)."""
    cls = TxnOffsetCommitResponse

    def everywhere(code: int) -> list[tuple[str, list[tuple[int, int]]]]:
        return [(t.name, [(p.partition_index, code) for p in t.partitions]) for t in request.topics]

    if not authz.authorize(
        services,
        context,
        AclOperation.WRITE,
        ResourceType.TRANSACTIONAL_ID,
        request.transactional_id,
    ):
        answer = everywhere(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    elif not _group_allowed(services, context, AclOperation.READ, request.group_id):
        answer = everywhere(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    else:
        readable = _topics_allowed(
            services, context, AclOperation.READ, (t.name for t in request.topics)
        )
        answer = [
            (
                t.name,
                [(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in t.partitions],
            )
            for t in request.topics
            if readable is not None and t.name not in readable
        ]
        flat = _offsets_to_commit(request.topics, readable)
        if flat:
            answer += await _coordinator(services).commit_transactional(
                request.group_id,
                request.producer_id,
                request.producer_epoch,
                request.generation_id,
                request.member_id,
                request.group_instance_id,
                flat,
                api_version=context.api_version,
                verify=_txn_verifier(services, context, request),
            )
    merged: dict[str, list[tuple[int, int]]] = {}
    for name, partitions in answer:
        merged.setdefault(name, []).extend(partitions)
    old_client = context.api_version < 2
    return cls(
        throttle_time_ms=0,
        topics=[
            cls.TxnOffsetCommitResponseTopic(
                name=name,
                partitions=[
                    cls.TxnOffsetCommitResponsePartition(
                        partition_index=p,
                        error_code=(
                            ErrorCode.COORDINATOR_NOT_AVAILABLE
                            if old_client and code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
                            else code
                        ),
                    )
                    for p, code in partitions
                ],
            )
            for name, partitions in merged.items()
        ],
    )


_UNAUTHORIZED_ROW = -2  # a partition row of a topic the principal may not describe
_UNSTABLE_ROW = -3  # a partition row with offsets of an open transaction (RequireStable)


def _fetch_group(
    services: BrokerServices,
    context: RequestContext,
    group_id: str,
    topics: list[tuple[str, list[int]]] | None,
    require_stable: bool = False,
    ids: dict[str, uuid.UUID] | None = None,
) -> list[tuple[str, list[tuple[int, int, int, str]]]]:
    """The committed offsets; with an authorizer only of topics the principal may
    DESCRIBE: the others are left out of an all-topics answer, and answered
    TOPIC_AUTHORIZATION_FAILED (rows marked :data:`_UNAUTHORIZED_ROW`) after the rest
    when named (Kafka's ``fetchOffsetsForGroup``). ``require_stable``: a partition an
    open transaction committed an offset of is UNSTABLE_OFFSET_COMMIT (rows marked
    :data:`_UNSTABLE_ROW`; Kafka's ``OffsetMetadataManager.fetchOffsets``). ``ids``
    (v10): the topic ids asked for; an offset committed for another id of the same name
    is none (``isOffsetInvalid``)."""
    coordinator = _coordinator(services)
    offsets = coordinator.fetch(group_id)
    refused: list[tuple[str, list[int]]] = []
    if topics is None:
        by_topic: dict[str, list[int]] = {}
        for t, p in offsets:  # as Kafka's fetchAllOffsets iterates the group's offsets
            by_topic.setdefault(t, []).append(p)
        topics = list(by_topic.items())
        allowed = _topics_allowed(services, context, AclOperation.DESCRIBE, by_topic)
        if allowed is not None:
            topics = [(t, ps) for t, ps in topics if t in allowed]
    else:
        allowed = _topics_allowed(services, context, AclOperation.DESCRIBE, (t for t, _ in topics))
        if allowed is not None:
            refused = [(t, ps) for t, ps in topics if t not in allowed]
            topics = [(t, ps) for t, ps in topics if t in allowed]
    out = []
    for name, partitions in topics:
        rows = []
        for p in partitions:
            o = offsets.get((name, p))
            asked = None if ids is None else ids.get(name)
            if o is not None and asked is not None and o.topic_id not in (None, asked):
                o = None  # committed for a topic of that name since deleted
            if require_stable and coordinator.has_pending_txn(group_id, name, p):
                rows.append((p, _UNSTABLE_ROW, -1, ""))
            elif o is None:
                rows.append((p, -1, -1, ""))
            else:
                rows.append((p, o.offset, o.leader_epoch, o.metadata))
        out.append((name, rows))
    for name, partitions in refused:
        out.append((name, [(p, _UNAUTHORIZED_ROW, -1, "") for p in partitions]))
    return out


def _row_error(offset: int) -> tuple[int, int]:
    """(committed offset, error code) of a row of :func:`_fetch_group`."""
    if offset == _UNAUTHORIZED_ROW:
        return -1, ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if offset == _UNSTABLE_ROW:
        return -1, ErrorCode.UNSTABLE_OFFSET_COMMIT
    return offset, 0


_FetchedRow = TypeVar(
    "_FetchedRow",
    OffsetFetchResponse.OffsetFetchResponsePartition,
    OffsetFetchResponse.OffsetFetchResponsePartitions,
)
_FetchedRow_co = TypeVar("_FetchedRow_co", covariant=True)


class _FetchedRowClass(Protocol[_FetchedRow_co]):
    """The class of an OffsetFetch answer's partition row, as built here."""

    def __call__(
        self,
        *,
        partition_index: int,
        committed_offset: int,
        committed_leader_epoch: int,
        metadata: str | None,
        error_code: int,
    ) -> _FetchedRow_co: ...


def _fetched_rows(
    row: _FetchedRowClass[_FetchedRow], rows: Iterable[tuple[int, int, int, str]]
) -> list[_FetchedRow]:
    """The partition rows of an OffsetFetch answer, from :func:`_fetch_group`'s (one class
    for versions 0-7, another for 8+, the same fields)."""
    return [
        row(
            partition_index=p,
            committed_offset=_row_error(o)[0],
            committed_leader_epoch=e,
            metadata=m,
            error_code=_row_error(o)[1],
        )
        for p, o, e, m in rows
    ]


async def handle_offset_fetch(
    services: BrokerServices, context: RequestContext, request: OffsetFetchRequest
) -> OffsetFetchResponse:
    """A group not served here: its error at the group level (v8+), at the top level
    (v2-7), with no topics (Kafka 3.9: versions 0-1 have no field for it).

    v7+ ``RequireStable``: the answer waits for the group's writes under way, and a
    partition with offsets of an open transaction is answered UNSTABLE_OFFSET_COMMIT
    (offset -1) in its row, in every version (Kafka's ``fetchOffsets``/``fetchAllOffsets``;
    the client retries until the transaction is decided)."""
    cls = OffsetFetchResponse
    coordinator = _coordinator(services)
    stable = context.api_version >= 7 and bool(request.require_stable)
    if context.api_version < 8:
        wanted = (
            None
            if request.topics is None
            else [(t.name, list(t.partition_indexes)) for t in request.topics]
        )
        owner_error = coordinator.coordinator_error(request.group_id)
        if not _group_allowed(services, context, AclOperation.DESCRIBE, request.group_id):
            owner_error = ErrorCode.GROUP_AUTHORIZATION_FAILED
        if owner_error:
            return cls(throttle_time_ms=0, error_code=owner_error, topics=[])
        if stable:
            await coordinator.await_writes(request.group_id)
        return cls(
            throttle_time_ms=0,
            error_code=0,
            topics=[
                cls.OffsetFetchResponseTopic(
                    name=name,
                    partitions=_fetched_rows(cls.OffsetFetchResponsePartition, rows),
                )
                for name, rows in _fetch_group(services, context, request.group_id, wanted, stable)
            ],
        )
    groups = []
    by_id = context.api_version >= 10
    for g in request.groups:
        unknown_ids: list[OffsetFetchRequest.OffsetFetchRequestTopics] = []
        ids: dict[str, uuid.UUID] | None = None
        if g.topics is None:
            wanted = None
        else:
            listed, unknown_ids = _named_topics(services, g.topics) if by_id else (g.topics, [])
            wanted = [(t.name, list(t.partition_indexes)) for t in listed]
            ids = {t.name: t.topic_id for t in listed} if by_id else None
        owner_error = (
            ErrorCode.GROUP_AUTHORIZATION_FAILED
            if not _group_allowed(services, context, AclOperation.DESCRIBE, g.group_id)
            else coordinator.coordinator_error(g.group_id)
        )
        if not owner_error and context.api_version >= 9:
            # a consumer group member's fetch is checked against its epoch (KIP-848)
            owner_error = coordinator.fetch_error(g.group_id, g.member_id, g.member_epoch)
        if owner_error:
            groups.append(
                cls.OffsetFetchResponseGroup(group_id=g.group_id, error_code=owner_error, topics=[])
            )
            continue
        if stable:
            await coordinator.await_writes(g.group_id)
        rows_by_topic = _fetch_group(services, context, g.group_id, wanted, stable, ids)
        topics = []
        for name, rows in rows_by_topic:
            topic_id = _NO_TOPIC_ID
            if by_id:
                known = ids.get(name) if ids is not None else None
                if known is None:
                    found = services.metadata_cache.topic(name)
                    if found is None:
                        continue  # all offsets, by id: a topic gone has none to give
                    known = found.topic_id
                topic_id = known
            topics.append(
                cls.OffsetFetchResponseTopics(
                    name=name,
                    topic_id=topic_id,
                    partitions=_fetched_rows(cls.OffsetFetchResponsePartitions, rows),
                )
            )
        for t in unknown_ids:
            topics.append(
                cls.OffsetFetchResponseTopics(
                    name="",
                    topic_id=t.topic_id,
                    partitions=[
                        cls.OffsetFetchResponsePartitions(
                            partition_index=p,
                            committed_offset=-1,
                            committed_leader_epoch=-1,
                            metadata="",
                            error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                        )
                        for p in t.partition_indexes
                    ],
                )
            )
        groups.append(
            cls.OffsetFetchResponseGroup(group_id=g.group_id, error_code=0, topics=topics)
        )
    return cls(throttle_time_ms=0, groups=groups)


def handle_list_groups(
    services: BrokerServices, context: RequestContext, request: ListGroupsRequest
) -> ListGroupsResponse:
    """The groups of the partitions owned here; COORDINATOR_LOAD_IN_PROGRESS (with the
    groups already loaded) while some partition loads, as Kafka 3.9."""
    cls = ListGroupsResponse
    states = {s.lower().strip() for s in (request.states_filter or [])}
    # Group.GroupType.parse: case-insensitive; an unknown type matches no group
    types = {s.lower().strip() for s in (request.types_filter or [])}
    groups = [
        cls.ListedGroup(
            group_id=g.group_id,
            protocol_type=g.protocol_type or "",
            group_state=g.state,
            group_type="classic",
        )
        for g in _coordinator(services).groups.values()
        if (not states or g.state.lower() in states) and (not types or "classic" in types)
    ]
    groups += [
        cls.ListedGroup(
            group_id=g.group_id,
            protocol_type="consumer",
            group_state=str(g.state),
            group_type="consumer",
        )
        for g in _coordinator(services).consumer.all_groups()
        if (not states or str(g.state).lower() in states) and (not types or "consumer" in types)
    ]
    groups += [
        cls.ListedGroup(
            group_id=g.group_id,
            protocol_type="share",
            group_state=str(g.state),
            group_type="share",
        )
        for g in _coordinator(services).share.all_groups()
        if (not states or str(g.state).lower() in states) and (not types or "share" in types)
    ]
    # DESCRIBE on the cluster lists every group, else those the principal may DESCRIBE
    if authz.enabled(services) and not authz.authorize_cluster(
        services, context, AclOperation.DESCRIBE
    ):
        groups = [
            g
            for g in groups
            if _group_allowed(services, context, AclOperation.DESCRIBE, g.group_id)
        ]
    code = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if _coordinator(services).loading else 0
    return cls(throttle_time_ms=0, error_code=code, groups=groups)


def _no_group(
    group_id: str, error_code: int, state: str = ""
) -> DescribeGroupsResponse.DescribedGroup:
    """A DescribeGroups entry with no group behind it (refused, not here, or Dead)."""
    return DescribeGroupsResponse.DescribedGroup(
        error_code=error_code,
        group_id=group_id,
        group_state=state,
        protocol_type="",
        protocol_data="",
        members=[],
    )


def handle_describe_groups(
    services: BrokerServices, context: RequestContext, request: DescribeGroupsRequest
) -> DescribeGroupsResponse:
    """DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED (listed first, as Kafka);
    v3+ ``include_authorized_operations``: the group's bit set when answered NONE."""
    cls = DescribeGroupsResponse
    out = []
    refused = []
    for group_id in request.groups:
        if not _group_allowed(services, context, AclOperation.DESCRIBE, group_id):
            refused.append(_no_group(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED))
            continue
        owner_error = _coordinator(services).coordinator_error(group_id)
        if owner_error:  # Kafka's EmptyGroup summary with the error
            out.append(_no_group(group_id, owner_error))
            continue
        g = _coordinator(services).groups.get(group_id)
        if g is None:
            # Kafka 4.x: a group that is not a classic one (a consumer group, none) is
            # Dead, with GROUP_ID_NOT_FOUND and its reason from v6 (KIP-1043)
            dead = _no_group(group_id, 0, "Dead")
            if context.api_version >= 6:
                dead.error_code = ErrorCode.GROUP_ID_NOT_FOUND
                dead.error_message = (
                    f"Group {group_id} is not a classic group."
                    if _coordinator(services).consumer.group(group_id) is not None
                    or _coordinator(services).share.group(group_id) is not None
                    else f"Group {group_id} not found."
                )
            out.append(dead)
            continue
        stable = g.state in ("Stable", "CompletingRebalance")
        out.append(
            cls.DescribedGroup(
                error_code=0,
                group_id=group_id,
                group_state=g.state,
                protocol_type=g.protocol_type or "",
                protocol_data=(g.protocol or "") if stable else "",
                members=[
                    cls.DescribedGroupMember(
                        member_id=m.member_id,
                        group_instance_id=m.instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata_for(g.protocol) if stable else b"",
                        member_assignment=m.assignment if g.state == "Stable" else b"",
                    )
                    for m in g.members.values()
                ],
            )
        )
    if context.api_version >= 3 and request.include_authorized_operations:
        for described in out:
            if described.error_code == 0:
                described.authorized_operations = authz.authorized_operations(
                    services, context, ResourceType.GROUP, described.group_id
                )
    return cls(throttle_time_ms=0, groups=refused + out)


async def handle_delete_groups(
    services: BrokerServices, context: RequestContext, request: DeleteGroupsRequest
) -> DeleteGroupsResponse:
    """DELETE on each group, else GROUP_AUTHORIZATION_FAILED (after the others)."""
    cls = DeleteGroupsResponse
    results = []
    refused = []
    for g in request.groups_names:
        if not _group_allowed(services, context, AclOperation.DELETE, g):
            refused.append(
                cls.DeletableGroupResult(
                    group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
                )
            )
            continue
        code = await _coordinator(services).delete_group(g)
        results.append(cls.DeletableGroupResult(group_id=g, error_code=code))
    return cls(throttle_time_ms=0, results=results + refused)


async def handle_offset_delete(
    services: BrokerServices, context: RequestContext, request: OffsetDeleteRequest
) -> OffsetDeleteResponse:
    """DELETE on the group (else a top-level GROUP_AUTHORIZATION_FAILED), then READ on
    each topic (TOPIC_AUTHORIZATION_FAILED per partition)."""
    cls = OffsetDeleteResponse
    if not _group_allowed(services, context, AclOperation.DELETE, request.group_id):
        return cls(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0, topics=[])
    readable = _topics_allowed(
        services, context, AclOperation.READ, (t.name for t in request.topics)
    )
    flat = [
        (t.name, p.partition_index)
        for t in request.topics
        if readable is None or t.name in readable
        for p in t.partitions
    ]
    if flat or readable is None:
        code, codes = await _coordinator(services).delete_offsets(request.group_id, flat)
        if code:
            return cls(error_code=code, throttle_time_ms=0, topics=[])
    else:
        codes = []
    it = iter(codes)
    return cls(
        error_code=0,
        throttle_time_ms=0,
        topics=[
            cls.OffsetDeleteResponseTopic(
                name=t.name,
                partitions=[
                    cls.OffsetDeleteResponsePartition(
                        partition_index=p.partition_index,
                        error_code=(
                            next(it)
                            if readable is None or t.name in readable
                            else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                        ),
                    )
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


GROUP_HANDLERS: dict[ApiKey, ApiHandler] = {
    ApiKey.OFFSET_COMMIT: handle_offset_commit,
    ApiKey.OFFSET_FETCH: handle_offset_fetch,
    ApiKey.JOIN_GROUP: handle_join_group,
    ApiKey.HEARTBEAT: handle_heartbeat,
    ApiKey.LEAVE_GROUP: handle_leave_group,
    ApiKey.SYNC_GROUP: handle_sync_group,
    ApiKey.DESCRIBE_GROUPS: handle_describe_groups,
    ApiKey.LIST_GROUPS: handle_list_groups,
    ApiKey.DELETE_GROUPS: handle_delete_groups,
    ApiKey.OFFSET_DELETE: handle_offset_delete,
    ApiKey.TXN_OFFSET_COMMIT: handle_txn_offset_commit,
}
