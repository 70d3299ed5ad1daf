"""Produce v3-11 (v0-2 are answered UNSUPPORTED_VERSION by the request channel, as Kafka 4).

Per partition, in Kafka's order: the topic exists (else UNKNOWN_TOPIC_OR_PARTITION, or
auto-created when ``auto.create.topics.enable``); then the replica manager
(:meth:`ReplicaManager.append_client_records`): exactly one magic-2 batch
(INVALID_RECORD; too short to be a batch: CORRUPT_MESSAGE), this broker leads
(NOT_LEADER_OR_FOLLOWER), ``acks=-1`` with ``min.insync.replicas`` above the ISR size ->
NOT_ENOUGH_REPLICAS, then the log's validator (:mod:`kafkacore.log.validator`: CreateTime
timestamps within ``message.timestamp.before/after.max.ms`` -> INVALID_TIMESTAMP,
``max.message.bytes`` -> MESSAGE_TOO_LARGE, ...) and the log's own checks (CRCs ->
CORRUPT_MESSAGE; a producer's checks: OUT_OF_ORDER_SEQUENCE_NUMBER,
INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE for a non-transactional batch while the producer
has a transaction open on the partition). Batches are stored compressed as sent. ``acks=-1``
then waits for the high watermark (the delayed produce, below); on a single node it is
already there. A transactional batch that would open a transaction on a partition is
first verified with the transaction coordinator (KIP-890, see
:func:`_verify_transactional_partitions`).
"""

from __future__ import annotations

import logging
import struct
import time
from dataclasses import dataclass, field

from kafkacore.errors import RecordValidationError, error_code_for
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.produce import ProduceRequest, ProduceResponse
from kafkacore.protocol.types import Buffer, memory_records
from kafkacore.record.layout import (
    ATTRIBUTES_OFFSET,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.client_quotas import PRODUCE as PRODUCE_QUOTA
from kafkacore.server.handlers.cluster import auto_create
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_produce"]

logger = logging.getLogger("kafkacore.server")

# an appended partition's answer and the offset its high watermark must reach for acks=-1
_Required = dict[TopicPartition, tuple[ProduceResponse.PartitionProduceResponse, int]]
_LENGTH = struct.Struct(">i")
_ATTRIBUTES = struct.Struct(">h")


def _produce_partition(
    services: BrokerServices,
    topic: str,
    index: int,
    records: Buffer | None,
    acks: int,
    appended: list[TopicPartition],
    required: _Required,
    guard: tuple[int, int] | None = None,
) -> ProduceResponse.PartitionProduceResponse:
    """One partition's answer; runs on an I/O thread when the append may block (a roll,
    an fsync for ``flush.messages``), else on the event loop (see ``_appends_quickly``).
    ``guard``: the KIP-890 verification guard of a verified transactional write."""
    replicas = services.replica_manager
    response = ProduceResponse.PartitionProduceResponse(
        index=index, error_code=0, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1
    )
    partition = replicas.partition(topic, index)
    if partition is None:
        # its log directory failed (Kafka's HostedPartition.Offline), or no such partition
        offline = replicas.is_offline(TopicPartition(topic, index))
        response.error_code = (
            ErrorCode.KAFKA_STORAGE_ERROR if offline else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
        return response
    try:
        info = replicas.append_client_records(
            partition, records, required_acks=acks, verification_guard=guard
        )
    except RecordValidationError as exc:
        response.error_code = ErrorCode.INVALID_RECORD
        response.error_message = str(exc)
        response.record_errors = [
            ProduceResponse.BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=m)
            for i, m in exc.record_errors
        ]
        return response
    except Exception as exc:
        code = error_code_for(exc)
        if code == ErrorCode.UNKNOWN_SERVER_ERROR:
            logger.exception("Error appending to %s-%d", topic, index)
        response.error_code = code
        response.error_message = str(exc) or default_message(code)
        return response
    appended.append(partition.topic_partition)
    required[partition.topic_partition] = (response, info.last_offset + 1)
    response.base_offset = info.first_offset
    response.log_append_time_ms = info.log_append_time
    response.log_start_offset = info.log_start_offset
    return response


# A Produce whose appends are at most this many bytes in all, to logs that can take them
# without a roll, an fsync or a lock someone holds (Partition.append_is_quick), is appended
# on the event loop: a copy into the page cache costs less than the two thread hand-offs
# of the I/O pool (measured: 1 KiB records over 6 partitions, 1.8x the records per second
# and 0.7x the broker CPU per GiB). Everything else - rolls, flush.messages fsyncs,
# larger requests, and every append for a while after one took long here
# (ReplicaManager.inline_appends) - runs on the I/O threads, so a slow disk still holds
# up only the request that meets it.
INLINE_APPEND_MAX_BYTES = 1 << 20


def _appends_quickly(
    services: BrokerServices, request: ProduceRequest, refused: dict[str, ErrorCode]
) -> bool:
    """Whether ``request``'s appends may run on the event loop (see above)."""
    replicas = services.replica_manager
    if not replicas.inline_appends.allowed():
        return False
    total = 0
    for topic_data in request.topic_data:
        if topic_data.name in refused:
            continue
        for pdata in topic_data.partition_data:
            size = len(pdata.records) if pdata.records is not None else 0
            total += size
            if total > INLINE_APPEND_MAX_BYTES:
                return False
            partition = replicas.partition(topic_data.name, pdata.index)
            if partition is not None and not partition.append_is_quick(size):
                return False
    return True


def _produce_all(
    services: BrokerServices,
    request: ProduceRequest,
    refused: dict[str, ErrorCode],
    required: _Required,
    verified: _Verified | None = None,
) -> tuple[ProduceResponse, list[TopicPartition]]:
    """The response and the partitions appended to, in request order (one job per
    request, on an I/O thread or the event loop: appends to one log stay in order);
    ``required`` gets each appended partition's response and the offset its high
    watermark must reach; ``verified``: the outcome of the transaction verification
    (refusals and guards)."""
    acks = request.acks
    appended: list[TopicPartition] = []
    results: list[ProduceResponse.TopicProduceResponse] = []
    for topic_data in request.topic_data:
        name = topic_data.name
        code = refused.get(name)
        partitions: list[ProduceResponse.PartitionProduceResponse] = []
        for pdata in topic_data.partition_data:
            key = (name, pdata.index)
            failed = verified.refused.get(key) if verified is not None else None
            if failed is not None:
                partitions.append(
                    ProduceResponse.PartitionProduceResponse(
                        index=pdata.index,
                        error_code=failed[0],
                        error_message=failed[1],
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                    )
                )
            elif code is not None:
                partitions.append(
                    ProduceResponse.PartitionProduceResponse(
                        index=pdata.index,
                        error_code=code,
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                    )
                )
            else:
                partitions.append(
                    _produce_partition(
                        services,
                        name,
                        pdata.index,
                        memory_records(pdata.records),
                        acks,
                        appended,
                        required,
                        verified.guards.get(key) if verified is not None else None,
                    )
                )
        results.append(
            ProduceResponse.TopicProduceResponse(name=name, partition_responses=partitions)
        )
    return ProduceResponse(responses=results, throttle_time_ms=0), appended


def _has_transactional_batches(request: ProduceRequest) -> bool:
    """Kafka's ``RequestUtils.hasTransactionalRecords``: some batch has the flag."""
    for topic_data in request.topic_data:
        for pdata in topic_data.partition_data:
            records = memory_records(pdata.records)
            if not records:
                continue
            data = memoryview(records)
            position = 0
            while position + RECORD_BATCH_OVERHEAD <= len(data):
                (attributes,) = _ATTRIBUTES.unpack_from(data, position + ATTRIBUTES_OFFSET)
                if attributes & TRANSACTIONAL_FLAG_MASK:
                    return True
                (length,) = _LENGTH.unpack_from(data, position + LENGTH_OFFSET)
                position += LOG_OVERHEAD + max(0, length)
    return False


def _refused_everywhere(request: ProduceRequest, code: ErrorCode) -> ProduceResponse:
    """Kafka's ``ProduceRequest.getErrorResponse``: ``code`` for every partition."""
    return ProduceResponse(
        responses=[
            ProduceResponse.TopicProduceResponse(
                name=t.name,
                partition_responses=[
                    ProduceResponse.PartitionProduceResponse(
                        index=p.index,
                        error_code=code,
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                    )
                    for p in t.partition_data
                ],
            )
            for t in request.topic_data
        ],
        throttle_time_ms=0,
    )


async def handle_produce(
    services: BrokerServices, context: RequestContext, request: ProduceRequest
) -> ProduceResponse:
    """The Produce response (the request channel drops it for ``acks=0``). Topics are
    auto-created first; the appends then run on the I/O executor, and delayed fetches of
    the partitions written are woken back on the event loop.

    Transactional batches need a transactional id (and, with an authorizer, WRITE on it),
    else every partition is answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED and nothing is
    appended (Kafka's ``handleProduceRequest``, CVE-2018-17196). With an authorizer, each
    topic then needs WRITE
    (TOPIC_AUTHORIZATION_FAILED, before its existence is looked at), and auto-creation
    CREATE on the cluster or the topic."""
    refused: dict[str, ErrorCode] = {}
    secured = authz.enabled(services)
    if _has_transactional_batches(request) and not (
        request.transactional_id is not None
        and (
            not secured
            or authz.authorize(
                services,
                context,
                AclOperation.WRITE,
                ResourceType.TRANSACTIONAL_ID,
                request.transactional_id,
            )
        )
    ):
        # Kafka checks this without an authorizer too: transactional batches without a
        # transactional id would open a transaction no coordinator knows of.
        return _refused_everywhere(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if secured:
        writable = authz.filter_authorized(
            services,
            context,
            AclOperation.WRITE,
            ResourceType.TOPIC,
            (t.name for t in request.topic_data),
        )
        for topic_data in request.topic_data:
            if topic_data.name not in writable:
                refused[topic_data.name] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    for topic_data in request.topic_data:
        name = topic_data.name
        if name in refused:
            continue
        if request.acks not in (0, 1, -1):
            refused[name] = ErrorCode.INVALID_REQUIRED_ACKS
        elif (
            not services.metadata_cache.contains_topic(name)
            and services.config.auto_create_topics_enable
            and (not secured or _may_create(services, context, name))
        ):
            code = await auto_create(services, name)
            if code is not None:
                refused[name] = code
    required: _Required = {}
    verified = await _verify_transactional_partitions(services, context, request, refused)
    if _appends_quickly(services, request, refused):
        started = time.perf_counter()
        response, appended = _produce_all(services, request, refused, required, verified)
        services.replica_manager.inline_appends.took(time.perf_counter() - started)
    else:
        response, appended = await services.run_io(
            _produce_all, services, request, refused, required, verified
        )
    services.metrics.record_produce(request, response)
    purgatory = services.replica_manager.purgatory
    for tp in appended:
        purgatory.wake(tp)
    if request.acks == -1 and required:
        await _await_replication(services, required, request.timeout_ms)
    response.throttle_time_ms = _produce_quota_throttle_ms(services, context, request)
    return response


_BATCH_PRODUCER = struct.Struct(">qh")  # producer id and epoch, adjacent in the header
_TXN_STATE_TOPIC = "__transaction_state"
# verification errors an older client does not retry: answered NOT_ENOUGH_REPLICAS, which
# it retries without a metadata refresh (Kafka's ReplicaManager)
_RETRIED_AS_NOT_ENOUGH_REPLICAS = frozenset(
    {
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)


@dataclass(slots=True)
class _Verified:
    """What the KIP-890 verification of a Produce decided, by (topic, partition): the
    partitions refused with their error and message, and the guard of each verified
    one (``(producer id, token)``, see :meth:`Partition.append_records_to_leader`)."""

    refused: dict[tuple[str, int], tuple[ErrorCode, str | None]] = field(default_factory=dict)
    guards: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)


async def _verify_transactional_partitions(
    services: BrokerServices,
    context: RequestContext,
    request: ProduceRequest,
    refused: dict[str, ErrorCode],
) -> _Verified:
    """KIP-890 part 1 (``transaction.partition.verification.enable``, Kafka's
    ``ReplicaManager.appendRecords`` with its ``AddPartitionsToTxnManager``): before a
    transactional batch of a producer that has no open transaction on a partition this
    broker leads is appended, the transaction coordinator is asked whether the partition
    is in the producer's transaction (AddPartitionsToTxn ``VerifyOnly``), so that a late
    write cannot open a transaction nobody will end: in-process when this broker leads
    the transactional id's ``__transaction_state`` partition, else AddPartitionsToTxn v4
    to its leader (:meth:`ReplicaManager.verify_transaction_remotely`; none known:
    COORDINATOR_NOT_AVAILABLE). Returns the partitions refused and what to answer:
    a partition not in the transaction INVALID_TXN_STATE ("Partition was not added to the
    transaction") for Produce <= 10, TRANSACTION_ABORTABLE for 11; a fenced producer
    INVALID_PRODUCER_EPOCH; the coordinator's retriable errors NOT_ENOUGH_REPLICAS; others
    as the coordinator answered. A verified partition gets a guard taken before the
    question: a marker of the producer appended before the write refuses it
    (INVALID_TXN_STATE; Kafka's ``VerificationGuard``)."""
    verified = _Verified()
    transactional_id = request.transactional_id
    if not transactional_id or not services.config.transaction_partition_verification_enable:
        return verified
    coordinator = services.txn_coordinator
    replicas = services.replica_manager
    # (producer id, epoch) -> the partitions to verify for it
    wanted: dict[tuple[int, int], set[TopicPartition]] = {}
    for topic_data in request.topic_data:
        if topic_data.name in refused:
            continue
        for pdata in topic_data.partition_data:
            records = memory_records(pdata.records)
            if not records or len(records) < RECORD_BATCH_OVERHEAD:
                continue
            (attributes,) = _ATTRIBUTES.unpack_from(records, ATTRIBUTES_OFFSET)
            if not attributes & TRANSACTIONAL_FLAG_MASK:
                continue
            producer_id, epoch = _BATCH_PRODUCER.unpack_from(records, PRODUCER_ID_OFFSET)
            partition = replicas.partition(topic_data.name, pdata.index)
            if producer_id < 0 or partition is None or not partition.is_leader:
                continue  # the append answers these
            if partition.log.has_ongoing_transaction(producer_id, epoch):
                continue
            tp = TopicPartition(topic_data.name, pdata.index)
            wanted.setdefault((producer_id, epoch), set()).add(tp)
            token = partition.log.verification_guard(producer_id)
            verified.guards[(tp.topic, tp.partition)] = (producer_id, token)
    if not wanted:
        return verified
    state_tp = TopicPartition(_TXN_STATE_TOPIC, coordinator.partition_for(transactional_id))
    state = services.metadata_cache.partition_state(state_tp)
    leader = state.leader if state is not None else -1
    for (producer_id, epoch), tps in wanted.items():
        if leader == services.node_id:
            answers = coordinator.verify_partitions(transactional_id, producer_id, epoch, tps)
        elif leader >= 0:
            answers = await replicas.verify_transaction_remotely(
                leader, transactional_id, producer_id, epoch, tps
            )
        else:
            answers = dict.fromkeys(tps, int(ErrorCode.COORDINATOR_NOT_AVAILABLE))
        for tp, raw in answers.items():
            code = ErrorCode(raw)
            if code == ErrorCode.NONE:
                continue
            verified.guards.pop((tp.topic, tp.partition), None)
            answer: tuple[ErrorCode, str | None]
            if code == ErrorCode.TRANSACTION_ABORTABLE and context.api_version <= 10:
                answer = (ErrorCode.INVALID_TXN_STATE, "Partition was not added to the transaction")
            elif code == ErrorCode.PRODUCER_FENCED:
                answer = (ErrorCode.INVALID_PRODUCER_EPOCH, default_message(code))
            elif code in _RETRIED_AS_NOT_ENOUGH_REPLICAS:
                answer = (
                    ErrorCode.NOT_ENOUGH_REPLICAS,
                    "Unable to verify the partition has been added to the transaction. "
                    f"Underlying error: {code.name}",
                )
            else:
                answer = (code, default_message(code))
            verified.refused[(tp.topic, tp.partition)] = answer
    return verified


def _may_create(services: BrokerServices, context: RequestContext, name: str) -> bool:
    return authz.authorize_cluster(services, context, AclOperation.CREATE) or authz.authorize(
        services, context, AclOperation.CREATE, ResourceType.TOPIC, name
    )


def _produce_quota_throttle_ms(
    services: BrokerServices, context: RequestContext, request: ProduceRequest
) -> int:
    """The request's records recorded against the client's ``producer_byte_rate`` (Kafka
    records the request size; the records are nearly all of it); the throttle time."""
    size = sum(len(p.records) for t in request.topic_data for p in t.partition_data if p.records)
    return services.client_quotas.record(
        PRODUCE_QUOTA, context.principal.name, context.header.client_id or "", size
    )


async def _await_replication(
    services: BrokerServices, required: _Required, timeout_ms: int
) -> None:
    """Kafka's ``DelayedProduce``: each appended partition waits until its high
    watermark reaches the batch's end (then NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND if
    the ISR shrank below the minimum), or the broker stops leading it
    (NOT_LEADER_OR_FOLLOWER); what is still waiting after ``timeout_ms`` is answered
    REQUEST_TIMED_OUT (:meth:`ReplicaManager.wait_for_replication`)."""
    pending = list(required.items())
    codes = await services.replica_manager.wait_for_replication(
        [(tp, offset) for tp, (_response, offset) in pending], timeout_ms
    )
    for (_tp, (response, _offset)), code in zip(pending, codes, strict=True):
        if code != ErrorCode.NONE:
            response.error_code = code
            response.error_message = default_message(code)
