"""Fetch v4-17 and ListOffsets v1-7.

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

From a follower (``ReplicaId`` >= 0 in the v4-14 body, ``ReplicaState.ReplicaId`` in
the v15+ tagged field; its ``ReplicaEpoch`` is not checked, as in ZooKeeper mode): leader
only (NOT_LEADER_OR_FOLLOWER), ``current_leader_epoch`` fenced (FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH, as for clients), v12+ ``last_fetched_epoch`` checked against the
leader's epoch cache (a ``DivergingEpoch`` and no records when the follower diverged),
the follower's fetch state updated on the partition (its LEO, ISR expansion, the HW),
and records read up to the log end offset. KIP-73: a throttled partition whose follower
is not in the ISR gets no records while the leader's replication quota is exceeded, and
the records sent for throttled partitions count against that quota.

Fetch sessions (KIP-227, :mod:`kafkacore.server.fetch_session`): the session cache gives
each request its context first (a session error is answered at once; an incremental
request reads the session's partitions) and sets the response's session id last,
keeping only the partitions an incremental response must carry.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from kafkacore.errors import OffsetOutOfRangeError, error_code_for
from kafkacore.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    TopicPartition,
)
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
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
from kafkacore.server.partition import (
    FencedLeaderEpochError,
    NotLeaderOrFollowerError,
    UnknownLeaderEpochError,
)
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_fetch", "handle_list_offsets"]

_FETCH: Any = APIS_BY_NAME["Fetch"].response.cls
_LIST: Any = APIS_BY_NAME["ListOffsets"].response.cls
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


def _replica_id(version: int, request: Any) -> int:
    """The fetching follower's broker id (-1: a client): the v4-14 ``ReplicaId``, or the
    v15+ tagged ``ReplicaState``."""
    return int(request.replica_id if version <= 14 else request.replica_state.replica_id)


def _topic_names(services: BrokerServices, version: int, request: Any) -> list[str | None]:
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
    services: BrokerServices, context: RequestContext, tp: TopicPartition, endpoints: dict[int, Any]
) -> Any:
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
        endpoints[leader_id] = _FETCH.NodeEndpoint(
            node_id=leader_id, host=host, port=port, rack=broker.rack
        )
    return _FETCH.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch)


def _read_all(
    services: BrokerServices,
    context: RequestContext,
    request: Any,
    names: list[str | None],
    endpoints: dict[int, Any],
    denied: _Denied = None,
) -> tuple[Any, int, bool]:
    """The response topics, the bytes found, and whether a partition had an error;
    ``endpoints`` gets the v16+ ``NodeEndpoints``. ``denied``: the topics the principal
    may not read (TOPIC_AUTHORIZATION_FAILED), or ``True`` for a follower fetch without
    CLUSTER_ACTION (every partition refused so)."""
    version = context.api_version
    replicas = services.replica_manager
    total = 0
    failed = False
    read_committed = request.isolation_level == _READ_COMMITTED
    replica_id = _replica_id(version, request)
    from_follower = replica_id >= 0
    remaining = max(0, request.max_bytes)
    if not from_follower:  # Kafka: at most what the consumer's quota window admits
        client = (context.principal.name, context.header.client_id or "")
        remaining = min(remaining, services.client_quotas.max_fetch_bytes(*client))
    # (topic name, topic id, partition) in request order; the partitions refused before
    # reading (an unknown topic id or partition) go after the others, as in Kafka
    answered: list[tuple[str | None, Any, Any]] = []
    refused: list[tuple[str | None, Any, Any]] = []
    for topic, name in zip(request.topics, names, strict=True):
        topic_id = topic.topic_id if version >= 13 else ZERO_UUID
        partitions: list[Any] = []
        for p in topic.partitions:
            data = _FETCH.PartitionData(
                partition_index=p.partition,
                error_code=0,
                high_watermark=-1,
                last_stable_offset=-1,
                log_start_offset=-1,
                aborted_transactions=[] if read_committed else None,
                preferred_read_replica=-1,
                records=b"",
            )
            if denied is True:
                data.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                refused.append((name, topic_id, data))
                continue
            if name is None:
                data.error_code = ErrorCode.UNKNOWN_TOPIC_ID
                refused.append((None, topic_id, data))
                continue
            if denied and name in denied:
                data.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                refused.append((name, topic_id, data))
                continue
            tp = TopicPartition(name, p.partition)
            partition = replicas.partition(name, p.partition)
            if partition is None and services.metadata_cache.partition_state(tp) is None:
                data.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                refused.append((name, topic_id, data))
                continue
            partitions.append(data)
            if partition is None:
                # a partition of the cluster this broker does not host: not its leader;
                # one whose log directory failed: KAFKA_STORAGE_ERROR
                data.error_code = (
                    ErrorCode.KAFKA_STORAGE_ERROR
                    if replicas.is_offline(tp)
                    else ErrorCode.NOT_LEADER_OR_FOLLOWER
                )
                failed = True
                continue
            log = partition.log
            try:
                if not partition.is_leader:
                    raise NotLeaderOrFollowerError()
                if version >= 9:
                    partition.check_leader_epoch(p.current_leader_epoch)
            except (NotLeaderOrFollowerError, FencedLeaderEpochError) as exc:
                data.error_code = (
                    ErrorCode.FENCED_LEADER_EPOCH
                    if isinstance(exc, FencedLeaderEpochError)
                    else ErrorCode.NOT_LEADER_OR_FOLLOWER
                )
                failed = True
                continue
            except UnknownLeaderEpochError:
                data.error_code = ErrorCode.UNKNOWN_LEADER_EPOCH
                failed = True
                continue
            if from_follower:
                if version >= 12 and p.last_fetched_epoch >= 0:
                    diverging = _diverging_epoch(log, p.fetch_offset, p.last_fetched_epoch)
                    if diverging is not None:
                        data.diverging_epoch = _FETCH.EpochEndOffset(
                            epoch=diverging[0], end_offset=diverging[1]
                        )
                        data.high_watermark = partition.high_watermark
                        data.last_stable_offset = partition.last_stable_offset
                        data.log_start_offset = log.log_start_offset
                        continue
                if log.log_start_offset <= p.fetch_offset <= log.log_end_offset:
                    try:
                        partition.update_follower_fetch_state(
                            replica_id, p.fetch_offset, p.log_start_offset
                        )
                    except NotLeaderOrFollowerError:
                        data.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                        failed = True
                        continue
            hw = partition.high_watermark
            lso = partition.last_stable_offset
            data.high_watermark = hw
            data.last_stable_offset = lso
            data.log_start_offset = log.log_start_offset
            if from_follower and replicas.should_leader_throttle(partition, replica_id):
                continue  # KIP-73: no records while the leader's throttle is exceeded
            try:
                info = log.read(
                    p.fetch_offset,
                    max(0, min(p.partition_max_bytes, remaining)),
                    # followers read up to the log end, clients up to the HW (or LSO)
                    None if from_follower else lso if read_committed else hw,
                    min_one_batch=total == 0,
                )
            except Exception as exc:
                data.error_code = error_code_for(exc)
                if not isinstance(exc, OffsetOutOfRangeError):
                    data.high_watermark = data.last_stable_offset = -1
                failed = True
                continue
            if info.length == 0:
                continue
            if read_committed and not from_follower:
                data.aborted_transactions = [
                    _FETCH.AbortedTransaction(
                        producer_id=a.producer_id, first_offset=a.first_offset
                    )
                    for a in log.aborted_transactions_for(info)
                ]
            region = FileRegion(info.file, info.position, info.length)
            if version < 10:
                raw = region.read_bytes()
                if _has_zstd(raw):
                    data.error_code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
                    failed = True
                    continue
                data.records = raw
            else:
                data.records = region
            total += info.length
            remaining -= info.length
        for data in partitions:
            if version >= 16 and name is not None and data.error_code in _LEADER_ERRORS:
                tp = TopicPartition(name, data.partition_index)
                data.current_leader = _current_leader(services, context, tp, endpoints)
            answered.append((name, topic_id, data))
    topics: list[Any] = []
    for name, topic_id, data in answered + refused:
        if data.error_code != 0:
            data.aborted_transactions = None
        last = topics[-1] if topics else None
        if last is not None and (last.topic, last.topic_id) == (name, topic_id):
            last.partitions.append(data)
        else:
            topics.append(
                _FETCH.FetchableTopicResponse(topic=name, topic_id=topic_id, partitions=[data])
            )
    return topics, total, failed


def _diverging_epoch(
    log: Any, fetch_offset: int, last_fetched_epoch: int
) -> tuple[int, int] | None:
    """KIP-320/595 truncation on fetch: the leader's ``(epoch, end offset)`` for the
    follower's last fetched epoch when that epoch is not ours up to ``fetch_offset``."""
    found = log.end_offset_for_epoch(last_fetched_epoch)
    epoch, end_offset = found if found is not None else (-1, -1)
    if epoch < last_fetched_epoch or end_offset < fetch_offset:
        return epoch, end_offset
    return None


async def _read(
    services: BrokerServices,
    context: RequestContext,
    request: Any,
    names: list[str | None],
    endpoints: dict[int, Any],
    denied: _Denied = None,
) -> tuple[Any, int, bool]:
    """:func:`_read_all`; Fetch < 10 copies the records (no ``sendfile``), so it reads on
    the I/O executor."""
    endpoints.clear()
    if context.api_version < 10:
        return await services.run_io(
            _read_all, services, context, request, names, endpoints, denied
        )
    return _read_all(services, context, request, names, endpoints, denied)


def _fetch_denied(
    services: BrokerServices, context: RequestContext, request: Any, names: list[str | None]
) -> _Denied:
    """Kafka's ``handleFetchRequest`` checks: a follower fetch (replica id >= 0) needs
    CLUSTER_ACTION on the cluster, else every partition is TOPIC_AUTHORIZATION_FAILED
    (the CVE-2018-1288 fix); a consumer needs READ on each topic."""
    if not authz.enabled(services):
        return None
    if _replica_id(context.api_version, request) >= 0:
        if authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION):
            return None
        return True
    wanted = {name for name in names if name is not None}
    readable = authz.filter_authorized(
        services, context, AclOperation.READ, ResourceType.TOPIC, wanted
    )
    return frozenset(wanted - readable) or None


async def handle_fetch(services: BrokerServices, context: RequestContext, request: Any) -> Any:
    version = context.api_version
    session = services.fetch_sessions.new_context(
        version, request, _replica_id(version, request) >= 0
    )
    if session.error:
        return _FETCH(throttle_time_ms=0, error_code=session.error, session_id=0, responses=[])
    request = session.request  # an incremental request's: the session's partitions
    names = _topic_names(services, version, request)
    denied = _fetch_denied(services, context, request, names)
    endpoints: dict[int, Any] = {}
    topics, total, failed = await _read(services, context, request, names, endpoints, denied)
    deadline = time.monotonic() + request.max_wait_ms / 1000
    # the partitions read (Kafka's "interesting" ones): none, and the answer is immediate
    # (only listed when the fetch may wait: a fetch with its bytes answers at once)
    cache = services.metadata_cache
    watched = (
        [
            tp
            for t, name in zip(request.topics, names, strict=True)
            if name is not None and not (denied is True or (denied and name in denied))
            for tp in (TopicPartition(name, p.partition) for p in t.partitions)
            if cache.partition_state(tp) is not None
            or services.replica_manager.partition(tp.topic, tp.partition) is not None
        ]
        if total < request.min_bytes and not failed
        else []
    )
    while total < request.min_bytes and not failed and watched:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        woken = await services.replica_manager.purgatory.wait(watched, remaining)
        topics, total, failed = await _read(services, context, request, names, endpoints, denied)
        if not woken:
            break
    if _replica_id(version, request) >= 0:
        _record_throttled_bytes(services, topics)
    response = _FETCH(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=topics,
        node_endpoints=[endpoints[n] for n in sorted(endpoints)],
    )
    if _replica_id(version, request) < 0:
        _apply_fetch_quota(services, context, response)
    session.finish(response)
    services.metrics.record_fetch(response.responses, _replica_id(version, request) >= 0)
    return response


def _apply_fetch_quota(services: BrokerServices, context: RequestContext, response: Any) -> None:
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


def _record_throttled_bytes(services: BrokerServices, topics: Any) -> None:
    """KIP-73: the records a follower's fetch carries for partitions throttled here
    count against the leader's replication quota (Kafka's ``sizeOfThrottledPartitions``)."""
    quota = services.replica_manager.leader_quota
    size = 0
    for topic in topics:
        if topic.topic is None:
            continue
        for data in topic.partitions:
            if data.records and quota.is_throttled(topic.topic, data.partition_index):
                size += len(data.records)
    quota.record(size)


def handle_list_offsets(services: BrokerServices, context: RequestContext, request: Any) -> Any:
    """Each topic needs DESCRIBE (also from a follower, as in Kafka); the refused ones
    are answered TOPIC_AUTHORIZATION_FAILED after the others. The isolation level bounds
    the answers (Kafka's ``fetchOffsetForTimestamp``): LATEST is the last stable offset
    under read_committed, the high watermark under read_uncommitted, the log end for a
    follower; a timestamp (or max-timestamp) hit at or past that bound is "not found"
    (offset and timestamp -1)."""
    replicas = services.replica_manager
    version = context.api_version
    topics = []
    unauthorized = []
    describable = authz.allowed_topics(
        services, context, AclOperation.DESCRIBE, (t.name for t in request.topics)
    )
    for topic in request.topics:
        if describable is not None and topic.name not in describable:
            unauthorized.append(
                _LIST.ListOffsetsTopicResponse(
                    name=topic.name,
                    partitions=[
                        _LIST.ListOffsetsPartitionResponse(
                            partition_index=p.partition_index,
                            error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                            timestamp=-1,
                            offset=-1,
                            leader_epoch=-1,
                        )
                        for p in topic.partitions
                    ],
                )
            )
            continue
        partitions = []
        for p in topic.partitions:
            answer = _LIST.ListOffsetsPartitionResponse(
                partition_index=p.partition_index,
                error_code=0,
                timestamp=-1,
                offset=-1,
                leader_epoch=-1,
            )
            partitions.append(answer)
            partition = replicas.partition(topic.name, p.partition_index)
            if partition is None:
                answer.error_code = (
                    ErrorCode.KAFKA_STORAGE_ERROR
                    if replicas.is_offline(TopicPartition(topic.name, p.partition_index))
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                )
                continue
            if not partition.is_leader:
                answer.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                continue
            if version >= 4:
                try:
                    partition.check_leader_epoch(p.current_leader_epoch)
                except FencedLeaderEpochError:
                    answer.error_code = ErrorCode.FENCED_LEADER_EPOCH
                    continue
                except UnknownLeaderEpochError:
                    answer.error_code = ErrorCode.UNKNOWN_LEADER_EPOCH
                    continue
            log = partition.log
            ts = p.timestamp
            try:
                # Kafka's lastFetchableOffset: a follower asks for the leader's log end,
                # read_committed consumers for the LSO, the others for the HW
                fetchable = (
                    log.log_end_offset
                    if request.replica_id >= 0
                    else partition.last_stable_offset
                    if request.isolation_level == _READ_COMMITTED
                    else partition.high_watermark
                )
                if ts == LATEST_TIMESTAMP:
                    answer.offset = fetchable
                    epoch = log.latest_epoch
                    answer.leader_epoch = -1 if epoch is None else epoch
                    continue
                if ts == MAX_TIMESTAMP and version < 7:
                    answer.error_code = ErrorCode.UNSUPPORTED_VERSION
                    continue
                found = log.offset_for_timestamp(ts)
            except Exception as exc:
                answer.error_code = error_code_for(exc)
                continue
            if found is None or (ts != EARLIEST_TIMESTAMP and found.offset < 0):
                continue
            if (
                ts not in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP)
                and found.offset >= fetchable
            ):
                continue  # not fetchable yet under the isolation level: -1, -1
            answer.timestamp = found.timestamp
            answer.offset = found.offset
            answer.leader_epoch = -1 if found.leader_epoch is None else found.leader_epoch
        topics.append(_LIST.ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    return _LIST(throttle_time_ms=0, topics=topics + unauthorized)
