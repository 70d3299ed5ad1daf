"""Fetch v4-17 and ListOffsets v1-11.

Fetch: whole batches from each partition, at most ``partition_max_bytes`` each and
``max_bytes`` in all, except that the first batch of the first partition with data is
always returned whole (KIP-74). The records are a :class:`~kafkacore.server.network.FileRegion`
the transport sends from the segment file, read for Fetch < 10 only (a zstd batch there is
UNSUPPORTED_COMPRESSION_TYPE). With less than ``min_bytes`` the fetch waits in the
purgatory up to ``max_wait_ms``, woken by appends (a transaction marker's too, which moves
the last stable offset). read_uncommitted consumers read up to the high watermark,
read_committed ones up to the last stable offset (``FetchIsolation.TXN_COMMITTED``) and
get the ``AbortedTransactions`` overlapping [fetch offset, the offset after the last
batch returned) from the ``.txnindex`` files (read_uncommitted: null, as Kafka).

Topics are named (v4-12) or given by topic id (v13+: an id the metadata cache does not
know is UNKNOWN_TOPIC_ID for each of its partitions, the response carries the ids). A
partition of a known topic this broker does not host is NOT_LEADER_OR_FOLLOWER, of an
unknown one UNKNOWN_TOPIC_OR_PARTITION. v16+ (KIP-951): a partition answered
NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH carries the ``CurrentLeader`` this broker
knows, and the response the ``NodeEndpoints`` of those leaders on the request's listener.
v17's ``ReplicaDirectoryId`` (KIP-853) is read and ignored.

The handler authorizes, asks the replica manager
(:meth:`~kafkacore.server.replica_manager.ReplicaManager.fetch_messages`) and shapes its
answers, as Kafka's ``KafkaApis``. The replica manager and the partition
(:meth:`~kafkacore.server.partition.Partition.fetch_records`) decide, under the
partition's lock: ``current_leader_epoch`` (v9+) checked before leadership, as Kafka
(FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, then NOT_LEADER_OR_FOLLOWER); from a follower
(``ReplicaId`` >= 0 in the v4-14 body, ``ReplicaState.ReplicaId`` in the v15+ tagged field;
its ``ReplicaEpoch`` is not checked, as in ZooKeeper mode) that it is a replica, its v12+
``last_fetched_epoch`` against the leader's epoch cache (a ``DivergingEpoch`` and no
records when it diverged), its fetch state (its LEO, ISR expansion, the HW), and records
up to the log end offset. KIP-73: a throttled partition whose follower is not in the ISR
gets no records while the leader's replication quota is exceeded, and the records sent
for throttled partitions count against that quota.

Tiered storage (KIP-405): a consumer's partition below a tiered log's local start is
read from the remote tier by the replica manager (the first such partition of a request,
awaited up to ``remote.fetch.max.wait.ms``: Kafka's ``DelayedRemoteFetch``; its records
are bytes, not a file region); a follower's is answered OFFSET_MOVED_TO_TIERED_STORAGE and
it builds its state from the remote tier. ListOffsets v8 adds -4 (the local log start),
v9 -5 (the last tiered offset), v10 a ``TimeoutMs`` for the remote search of a timestamp,
v11 -6 (the first offset not tiered yet, KIP-1023).

Fetch sessions (KIP-227, :mod:`kafkacore.server.fetch_session`): the session cache gives
each request its context first (a session error is answered at once; an incremental
request reads the session's partitions) and sets the response's session id last,
keeping only the partitions an incremental response must carry.
"""

from __future__ import annotations

import struct
import uuid

from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.fetch import FetchRequest, FetchResponse
from kafkacore.protocol.messages.list_offsets import ListOffsetsRequest, ListOffsetsResponse
from kafkacore.protocol.requests import fetch_replica_id
from kafkacore.protocol.types import ZERO_UUID
from kafkacore.record import Compression
from kafkacore.record.layout import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.client_quotas import FETCH as FETCH_QUOTA
from kafkacore.server.network import FileRegion
from kafkacore.server.partition import FetchIsolation, FetchParams, FetchPartitionData
from kafkacore.server.replica_manager import ListOffsetsResult, LogReadResult, OffsetLookup
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_fetch", "handle_list_offsets"]

_PartitionData = FetchResponse.PartitionData
_TopicResponse = FetchResponse.FetchableTopicResponse
_LENGTH = struct.Struct(">i")
_ATTRIBUTES = struct.Struct(">h")
_READ_COMMITTED = 1
_LEADER_ERRORS = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)
# the topics a fetch may not read, or True: none (a follower without CLUSTER_ACTION)
_Denied = frozenset[str] | bool | None


def _has_zstd(data: bytes) -> bool:
    position = 0
    while position + RECORD_BATCH_OVERHEAD <= len(data):
        (length,) = _LENGTH.unpack_from(data, position + LENGTH_OFFSET)
        (attributes,) = _ATTRIBUTES.unpack_from(data, position + ATTRIBUTES_OFFSET)
        if attributes & COMPRESSION_CODEC_MASK == Compression.ZSTD:
            return True
        position += LOG_OVERHEAD + length
    return False


def _topic_names(services: BrokerServices, version: int, request: FetchRequest) -> list[str | None]:
    """Each requested topic's name: v4-12 by name, v13+ by topic id (None: an id this
    broker does not know)."""
    if version <= 12:
        return [topic.topic for topic in request.topics]
    cache = services.metadata_cache
    names: list[str | None] = []
    for topic in request.topics:
        found = cache.topic_by_id(topic.topic_id)
        names.append(found.name if found is not None else None)
    return names


def _current_leader(
    services: BrokerServices,
    context: RequestContext,
    tp: TopicPartition,
    endpoints: dict[int, FetchResponse.NodeEndpoint],
) -> FetchResponse.LeaderIdAndEpoch:
    """KIP-951 (v16+, with NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH): the leader and
    epoch this broker knows (its replica, else the metadata cache, else -1/-1), and the
    leader's endpoint on the request's listener added to ``endpoints`` when it is alive."""
    partition = services.replica_manager.partition(tp.topic, tp.partition)
    if partition is not None:
        leader_id, leader_epoch = partition.leader_id, partition.leader_epoch
    else:
        state = services.metadata_cache.partition_state(tp)
        leader_id, leader_epoch = (state.leader, state.leader_epoch) if state else (-1, -1)
    broker = services.metadata_cache.broker(leader_id) if leader_id >= 0 else None
    if broker is not None:
        host, port = broker.endpoint(context.listener_name)
        endpoints[leader_id] = FetchResponse.NodeEndpoint(
            node_id=leader_id, host=host, port=port, rack=broker.rack
        )
    return FetchResponse.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch)


def _fetch_params(
    services: BrokerServices, context: RequestContext, request: FetchRequest
) -> FetchParams:
    """The request's :class:`FetchParams`; a consumer's ``max_bytes`` capped by what its
    quota window admits (Kafka's ``maxQuotaWindowBytes``)."""
    replica_id = fetch_replica_id(request, context.api_version)
    max_bytes = max(0, request.max_bytes)
    if replica_id >= 0:
        isolation = FetchIsolation.LOG_END
    else:
        client = (context.principal.name, context.header.client_id or "")
        max_bytes = min(max_bytes, services.client_quotas.max_fetch_bytes(*client))
        isolation = (
            FetchIsolation.TXN_COMMITTED
            if request.isolation_level == _READ_COMMITTED
            else FetchIsolation.HIGH_WATERMARK
        )
    return FetchParams(replica_id, request.max_wait_ms, request.min_bytes, max_bytes, isolation)


# one requested partition, in request order: (topic name, topic id, partition, the code it
# is refused with before reading, or None: read)
_Wanted = tuple[str | None, uuid.UUID, int, int | None]


def _wanted(
    services: BrokerServices,
    version: int,
    request: FetchRequest,
    names: list[str | None],
    denied: _Denied,
) -> tuple[list[_Wanted], list[tuple[TopicPartition, FetchPartitionData]]]:
    """Every requested partition, and those the replica manager is to read, in request
    order: refused as Kafka's ``KafkaApis`` refuses before reading are a follower without
    CLUSTER_ACTION or a topic not readable (TOPIC_AUTHORIZATION_FAILED), an unknown topic
    id (UNKNOWN_TOPIC_ID), a partition neither hosted nor in the metadata
    (UNKNOWN_TOPIC_OR_PARTITION)."""
    replicas = services.replica_manager
    cache = services.metadata_cache
    wanted: list[_Wanted] = []
    to_read: list[tuple[TopicPartition, FetchPartitionData]] = []
    for topic, name in zip(request.topics, names, strict=True):
        topic_id = topic.topic_id if version >= 13 else ZERO_UUID
        for p in topic.partitions:
            code: int | None = None
            if denied is True or (name is not None and denied and name in denied):
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif name is None:
                code = ErrorCode.UNKNOWN_TOPIC_ID
            else:
                tp = TopicPartition(name, p.partition)
                if replicas.get_partition(tp) is None and cache.partition_state(tp) is None:
                    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    fetch = FetchPartitionData(
                        p.fetch_offset,
                        p.log_start_offset,
                        p.partition_max_bytes,
                        p.current_leader_epoch if version >= 9 else -1,
                        p.last_fetched_epoch if version >= 12 else -1,
                    )
                    to_read.append((tp, fetch))
            wanted.append((name, topic_id, p.partition, code))
    return wanted, to_read


def _partition_data(
    result: LogReadResult | None, index: int, read_committed: bool, code: int = ErrorCode.NONE
) -> FetchResponse.PartitionData:
    """A partition's answer from its read (records still a file region), or refused
    with ``code`` before reading (``result`` None)."""
    if result is None:
        return _PartitionData(
            partition_index=index,
            error_code=code,
            high_watermark=-1,
            last_stable_offset=-1,
            log_start_offset=-1,
            aborted_transactions=[] if read_committed else None,
            preferred_read_replica=-1,
            records=b"",
        )
    data = _PartitionData(
        partition_index=index,
        error_code=result.error_code,
        high_watermark=result.high_watermark,
        last_stable_offset=result.last_stable_offset,
        log_start_offset=result.log_start_offset,
        aborted_transactions=[] if read_committed else None,
        preferred_read_replica=-1,
        records=b"",
    )
    if result.diverging_epoch is not None:
        epoch, end_offset = result.diverging_epoch
        data.diverging_epoch = FetchResponse.EpochEndOffset(epoch=epoch, end_offset=end_offset)
    fetched = result.fetched
    records: bytes | FileRegion | None = result.remote_records or None  # the remote tier's
    if records is None and fetched is not None:
        records = FileRegion(fetched.file, fetched.position, fetched.length)
    if records is not None:
        data.records = records
        if read_committed:
            data.aborted_transactions = [
                FetchResponse.AbortedTransaction(
                    producer_id=a.producer_id, first_offset=a.first_offset
                )
                for a in result.aborted_transactions
            ]
    return data


def _copy_records(answers: list[FetchResponse.PartitionData]) -> None:
    """Fetch < 10 (no ``sendfile`` of regions there): the records as bytes, a zstd batch
    UNSUPPORTED_COMPRESSION_TYPE (Kafka's down-conversion check; records read from the
    remote tier too). Blocking: file reads."""
    for data in answers:
        records = data.records
        raw = records.read_bytes() if isinstance(records, FileRegion) else records
        if not isinstance(raw, bytes):
            continue  # no records
        if _has_zstd(raw):
            data.error_code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
            raw = b""
        data.records = raw


async def _response_topics(
    services: BrokerServices,
    context: RequestContext,
    request: FetchRequest,
    wanted: list[_Wanted],
    results: list[LogReadResult],
    endpoints: dict[int, FetchResponse.NodeEndpoint],
) -> list[FetchResponse.FetchableTopicResponse]:
    """The response's topics: the partitions read in request order, then those refused
    before reading (as Kafka); consecutive partitions of one topic share its entry."""
    version = context.api_version
    read_committed = request.isolation_level == _READ_COMMITTED
    read = iter(results)
    answered: list[tuple[str | None, uuid.UUID, FetchResponse.PartitionData]] = []
    refused: list[tuple[str | None, uuid.UUID, FetchResponse.PartitionData]] = []
    for name, topic_id, index, code in wanted:
        if code is None:
            answered.append((name, topic_id, _partition_data(next(read), index, read_committed)))
        else:
            refused.append((name, topic_id, _partition_data(None, index, read_committed, code)))
    if version < 10 and any(d.records for _n, _i, d in answered):
        await services.run_io(_copy_records, [d for _n, _i, d in answered])
    topics: list[FetchResponse.FetchableTopicResponse] = []
    for name, topic_id, data in answered + refused:
        if data.error_code != ErrorCode.NONE:
            data.aborted_transactions = None
            if version >= 16 and name is not None and data.error_code in _LEADER_ERRORS:
                tp = TopicPartition(name, data.partition_index)
                data.current_leader = _current_leader(services, context, tp, endpoints)
        # a v13+ topic id this broker does not know has no name: Kafka's default, ""
        topic = name if name is not None else ""
        last = topics[-1] if topics else None
        if last is not None and (last.topic, last.topic_id) == (topic, topic_id):
            last.partitions.append(data)
        else:
            topics.append(_TopicResponse(topic=topic, topic_id=topic_id, partitions=[data]))
    return topics


def _fetch_denied(
    services: BrokerServices,
    context: RequestContext,
    request: FetchRequest,
    names: list[str | None],
) -> _Denied:
    """Kafka's ``handleFetchRequest`` checks: a follower fetch (replica id >= 0) needs
    CLUSTER_ACTION on the cluster, else every partition is TOPIC_AUTHORIZATION_FAILED
    (the CVE-2018-1288 fix); a consumer needs READ on each topic."""
    if not authz.enabled(services):
        return None
    if fetch_replica_id(request, context.api_version) >= 0:
        if authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION):
            return None
        return True
    wanted = {name for name in names if name is not None}
    readable = authz.filter_authorized(
        services, context, AclOperation.READ, ResourceType.TOPIC, wanted
    )
    return frozenset(wanted - readable) or None


async def handle_fetch(
    services: BrokerServices, context: RequestContext, request: FetchRequest
) -> FetchResponse:
    """Kafka's ``handleFetchRequest``: the session's context, authorization, the replica
    manager's read (waiting for ``min_bytes`` up to ``max_wait_ms``), then the answer
    shaped: v16+ leaders, Fetch < 10's copied records, quotas, the session."""
    version = context.api_version
    from_follower = fetch_replica_id(request, version) >= 0
    session = services.fetch_sessions.new_context(version, request, from_follower)
    if session.error:
        return FetchResponse(
            throttle_time_ms=0, error_code=session.error, session_id=0, responses=[]
        )
    request = session.request  # an incremental request's: the session's partitions
    names = _topic_names(services, version, request)
    denied = _fetch_denied(services, context, request, names)
    wanted, to_read = _wanted(services, version, request, names, denied)
    params = _fetch_params(services, context, request)
    results = await services.replica_manager.fetch_messages(params, to_read)
    endpoints: dict[int, FetchResponse.NodeEndpoint] = {}
    topics = await _response_topics(services, context, request, wanted, results, endpoints)
    if from_follower:
        _record_throttled_bytes(services, topics)
    response = FetchResponse(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=topics,
        node_endpoints=[endpoints[n] for n in sorted(endpoints)],
    )
    if not from_follower:
        _apply_fetch_quota(services, context, response)
    session.finish(response)
    services.metrics.record_fetch(response.responses, from_follower)
    return response


def _apply_fetch_quota(
    services: BrokerServices, context: RequestContext, response: FetchResponse
) -> None:
    """A consumer's ``consumer_byte_rate`` (followers have replication quotas instead):
    the records sent are recorded; over the quota they are taken back and not sent, and
    the response carries only the throttle time (Kafka's ``getThrottledResponse``)."""
    size = sum(
        len(p.records) for t in response.responses for p in t.partitions if p.records is not None
    )
    quotas = services.client_quotas
    user, client_id = context.principal.name, context.header.client_id or ""
    throttle_ms = quotas.record(FETCH_QUOTA, user, client_id, size)
    if throttle_ms > 0:
        quotas.unrecord(FETCH_QUOTA, user, client_id, size)
        response.responses = []
        response.throttle_time_ms = throttle_ms


def _record_throttled_bytes(
    services: BrokerServices, topics: list[FetchResponse.FetchableTopicResponse]
) -> None:
    """KIP-73: the records a follower's fetch carries for partitions throttled here
    count against the leader's replication quota (Kafka's ``sizeOfThrottledPartitions``)."""
    quota = services.replica_manager.leader_quota
    size = 0
    for topic in topics:
        if not topic.topic:  # a topic id this broker does not know
            continue
        for data in topic.partitions:
            if data.records and quota.is_throttled(topic.topic, data.partition_index):
                size += len(data.records)
    quota.record(size)


async def handle_list_offsets(
    services: BrokerServices, context: RequestContext, request: ListOffsetsRequest
) -> ListOffsetsResponse:
    """Each topic needs DESCRIBE (also from a follower, as in Kafka); the refused ones
    are answered TOPIC_AUTHORIZATION_FAILED after the others. The replica manager answers
    the rest (:meth:`~kafkacore.server.replica_manager.ReplicaManager.fetch_offsets`: a
    special timestamp needs the version that introduced it, v4+ ``current_leader_epoch``
    and leadership checked, offsets bounded by what the isolation may see - the last
    stable offset under read_committed, the high watermark under read_uncommitted, the log
    end for a follower - not found: offset and timestamp -1; a timestamp on a tiered topic
    searched in both tiers within v10's ``TimeoutMs``, else
    ``remote.list.offsets.request.timeout.ms``)."""
    version = context.api_version
    describable = authz.allowed_topics(
        services, context, AclOperation.DESCRIBE, (t.name for t in request.topics)
    )
    allowed = [t for t in request.topics if describable is None or t.name in describable]
    lookups = [
        OffsetLookup(
            TopicPartition(topic.name, p.partition_index),
            p.timestamp,
            p.current_leader_epoch if version >= 4 else -1,
        )
        for topic in allowed
        for p in topic.partitions
    ]
    isolation = (
        FetchIsolation.LOG_END
        if request.replica_id >= 0
        else FetchIsolation.TXN_COMMITTED
        if request.isolation_level == _READ_COMMITTED
        else FetchIsolation.HIGH_WATERMARK
    )
    results = iter(
        await services.replica_manager.fetch_offsets(
            lookups, isolation, version, request.timeout_ms if version >= 10 else 0
        )
    )
    topics = [
        ListOffsetsResponse.ListOffsetsTopicResponse(
            name=topic.name,
            partitions=[_offset_answer(p.partition_index, next(results)) for p in topic.partitions],
        )
        for topic in allowed
    ]
    unauthorized = [
        ListOffsetsResponse.ListOffsetsTopicResponse(
            name=topic.name,
            partitions=[
                _offset_answer(
                    p.partition_index, ListOffsetsResult(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                )
                for p in topic.partitions
            ],
        )
        for topic in request.topics
        if describable is not None and topic.name not in describable
    ]
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics + unauthorized)


def _offset_answer(
    index: int, result: ListOffsetsResult
) -> ListOffsetsResponse.ListOffsetsPartitionResponse:
    """One partition's ListOffsets answer (not found or refused: offset, timestamp and
    leader epoch -1)."""
    found = result.found
    return ListOffsetsResponse.ListOffsetsPartitionResponse(
        partition_index=index,
        error_code=result.error_code,
        timestamp=-1 if found is None else found.timestamp,
        offset=-1 if found is None else found.offset,
        leader_epoch=-1 if found is None or found.leader_epoch is None else found.leader_epoch,
    )
