"""The transaction APIs' handlers (Kafka's ``KafkaApis.handle*``): authorization, the
request's validation, the coordinator's answer, the version downgrades. No sockets.

Authorization: WRITE on the TransactionalId for InitProducerId (see
:func:`kafkacore.server.handlers.cluster.handle_init_producer_id`), AddPartitionsToTxn
v0-3, AddOffsetsToTxn and EndTxn (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); WRITE on each
topic for AddPartitionsToTxn v0-3 (an internal topic is never allowed there); READ on
the group for AddOffsetsToTxn (GROUP_AUTHORIZATION_FAILED); CLUSTER_ACTION for the
broker's AddPartitionsToTxn v4+ (top-level CLUSTER_AUTHORIZATION_FAILED); DESCRIBE on
the TransactionalId for DescribeTransactions (per id) and ListTransactions (the others
are left out).

AddPartitionsToTxn: a partition refused (TOPIC_AUTHORIZATION_FAILED) or unknown
(UNKNOWN_TOPIC_OR_PARTITION) fails the whole transaction's request, the other partitions
answering OPERATION_NOT_ATTEMPTED. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for
InitProducerId < 4, AddPartitionsToTxn < 2, AddOffsetsToTxn < 2 and EndTxn < 2."""

from __future__ import annotations

from kafkacore.coordinator.records import partition_for_group
from kafkacore.log import TopicPartition
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
from kafkacore.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)
from kafkacore.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from kafkacore.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from kafkacore.protocol.messages.init_producer_id import InitProducerIdRequest
from kafkacore.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafkacore.security.acl import AclOperation, ResourceType
from kafkacore.server import authz
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from kafkacore.server.replica_manager import INTERNAL_TOPICS
from kafkacore.server.request_context import ApiHandler, RequestContext
from kafkacore.server.services import BrokerServices
from kafkacore.server.txn.coordinator import InitProducerIdResult

__all__ = ["TXN_HANDLERS", "downgrade_fenced", "init_transactional_producer_id"]


def downgrade_fenced(code: int, version: int, first_fenced_version: int) -> int:
    """PRODUCER_FENCED (90) is INVALID_PRODUCER_EPOCH (47) below the version that knows it."""
    if code == ErrorCode.PRODUCER_FENCED and version < first_fenced_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code


def _may_write_txn(
    services: BrokerServices, context: RequestContext, transactional_id: str
) -> bool:
    return authz.authorize(
        services, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
    )


async def init_transactional_producer_id(
    services: BrokerServices,
    context: RequestContext,
    request: InitProducerIdRequest,
    transactional_id: str,
) -> InitProducerIdResult:
    """InitProducerId with ``transactional_id`` (the request's, authorized by the caller): Kafka's
    ``(producerId, producerEpoch)`` check (both -1: none; one of them -1:
    INVALID_REQUEST), the coordinator, PRODUCER_FENCED downgraded below v4."""
    version = context.api_version
    expected: tuple[int, int] | None = None
    if version >= 3:
        pid, epoch = request.producer_id, request.producer_epoch
        if pid == -1 and epoch == -1:
            expected = None
        elif pid == -1 or epoch == -1:
            return InitProducerIdResult(ErrorCode.INVALID_REQUEST)
        else:
            expected = (pid, epoch)
    if not services.txn_coordinator.cluster_mode:
        await services.txn_coordinator.state.ensure_topic()
    result = await services.txn_coordinator.init_producer_id(
        transactional_id, request.transaction_timeout_ms, expected
    )
    code = downgrade_fenced(result.error_code, version, 4)
    if code != result.error_code:
        return InitProducerIdResult(code)
    return result


# -- AddPartitionsToTxn ------------------------------------------------------------------


def _partition_results(
    errors: dict[TopicPartition, int],
) -> list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]:
    cls = AddPartitionsToTxnResponse
    by_topic: dict[str, list[AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult]] = {}
    for tp, code in errors.items():
        by_topic.setdefault(tp.topic, []).append(
            cls.AddPartitionsToTxnPartitionResult(
                partition_index=tp.partition, partition_error_code=code
            )
        )
    return [
        cls.AddPartitionsToTxnTopicResult(name=topic, results_by_partition=results)
        for topic, results in by_topic.items()
    ]


async def _add_partitions_one(
    services: BrokerServices,
    context: RequestContext,
    version: int,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    verify_only: bool,
    topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic],
) -> dict[TopicPartition, int]:
    """The per-partition errors of one transaction of the request."""
    partitions = [TopicPartition(t.name, p) for t in topics for p in t.partitions]
    partitions = list(dict.fromkeys(partitions))
    if version < 4 and not _may_write_txn(services, context, transactional_id):
        return dict.fromkeys(partitions, int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    if version < 4:
        allowed = authz.filter_authorized(
            services,
            context,
            AclOperation.WRITE,
            ResourceType.TOPIC,
            [tp.topic for tp in partitions if tp.topic not in INTERNAL_TOPICS],
        )
    else:
        allowed = {tp.topic for tp in partitions}
    cache = services.metadata_cache
    failed: dict[TopicPartition, int] = {}
    accepted: list[TopicPartition] = []
    for tp in partitions:
        if tp.topic not in allowed:
            failed[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif cache.partition_state(tp) is None:
            failed[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            accepted.append(tp)
    if failed:
        return {tp: failed.get(tp, int(ErrorCode.OPERATION_NOT_ATTEMPTED)) for tp in partitions}
    coordinator = services.txn_coordinator
    if verify_only:
        verified = coordinator.verify_partitions(
            transactional_id, producer_id, producer_epoch, set(accepted)
        )
        return {tp: verified[tp] for tp in partitions}  # in the request's order
    code = await coordinator.add_partitions(
        transactional_id, producer_id, producer_epoch, set(accepted)
    )
    return dict.fromkeys(partitions, downgrade_fenced(code, version, 2))


async def handle_add_partitions_to_txn(
    services: BrokerServices, context: RequestContext, request: AddPartitionsToTxnRequest
) -> AddPartitionsToTxnResponse:
    cls = AddPartitionsToTxnResponse
    version = context.api_version
    if version < 4:
        errors = await _add_partitions_one(
            services,
            context,
            version,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            False,
            request.v3_and_below_topics,
        )
        return cls(throttle_time_ms=0, results_by_topic_v3_and_below=_partition_results(errors))
    if not authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION):
        return cls(
            throttle_time_ms=0,
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            results_by_transaction=[],
        )
    results = []
    for txn in request.transactions:
        errors = await _add_partitions_one(
            services,
            context,
            version,
            txn.transactional_id,
            txn.producer_id,
            txn.producer_epoch,
            bool(txn.verify_only),
            txn.topics,
        )
        results.append(
            cls.AddPartitionsToTxnResult(
                transactional_id=txn.transactional_id,
                topic_results=_partition_results(errors),
            )
        )
    return cls(throttle_time_ms=0, error_code=ErrorCode.NONE, results_by_transaction=results)


# -- AddOffsetsToTxn / EndTxn ------------------------------------------------------------


async def handle_add_offsets_to_txn(
    services: BrokerServices, context: RequestContext, request: AddOffsetsToTxnRequest
) -> AddOffsetsToTxnResponse:
    """Adds ``__consumer_offsets-<partition of the group>`` to the transaction."""
    cls = AddOffsetsToTxnResponse
    if not _may_write_txn(services, context, request.transactional_id):
        return cls(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not authz.authorize(
        services, context, AclOperation.READ, ResourceType.GROUP, request.group_id
    ):
        return cls(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    groups = services.group_coordinator
    if not groups.cluster_mode:
        # a single node creates __consumer_offsets on the group's first use; the marker
        # for its partition then finds it
        await services.run_io(groups.topic.ensure_created)
    partition = TopicPartition(
        OFFSETS_TOPIC, partition_for_group(request.group_id, groups.topic.partitions)
    )
    code = await services.txn_coordinator.add_partitions(
        request.transactional_id, request.producer_id, request.producer_epoch, {partition}
    )
    return cls(throttle_time_ms=0, error_code=downgrade_fenced(code, context.api_version, 2))


async def handle_end_txn(
    services: BrokerServices, context: RequestContext, request: EndTxnRequest
) -> EndTxnResponse:
    cls = EndTxnResponse
    if not _may_write_txn(services, context, request.transactional_id):
        return cls(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    code = await services.txn_coordinator.end_transaction(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        bool(request.committed),
    )
    return cls(throttle_time_ms=0, error_code=downgrade_fenced(code, context.api_version, 2))


# -- DescribeTransactions / ListTransactions ---------------------------------------------


def handle_describe_transactions(
    services: BrokerServices, context: RequestContext, request: DescribeTransactionsRequest
) -> DescribeTransactionsResponse:
    cls = DescribeTransactionsResponse
    states = []
    for transactional_id in request.transactional_ids:
        if not authz.authorize(
            services,
            context,
            AclOperation.DESCRIBE,
            ResourceType.TRANSACTIONAL_ID,
            transactional_id,
        ):
            states.append(
                cls.TransactionState(
                    error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    transactional_id=transactional_id,
                    transaction_state="",
                    transaction_timeout_ms=0,
                    transaction_start_time_ms=0,
                    producer_id=0,
                    producer_epoch=0,
                    topics=[],
                )
            )
            continue
        d = services.txn_coordinator.describe(transactional_id)
        states.append(
            cls.TransactionState(
                error_code=d.error_code,
                transactional_id=transactional_id,
                transaction_state=d.state,
                transaction_timeout_ms=d.timeout_ms,
                transaction_start_time_ms=d.start_timestamp_ms,
                producer_id=d.producer_id,
                producer_epoch=d.producer_epoch,
                topics=[
                    cls.TopicData(topic=topic, partitions=list(ps)) for topic, ps in d.partitions
                ],
            )
        )
    return cls(throttle_time_ms=0, transaction_states=states)


def handle_list_transactions(
    services: BrokerServices, context: RequestContext, request: ListTransactionsRequest
) -> ListTransactionsResponse:
    cls = ListTransactionsResponse
    duration = request.duration_filter if context.api_version >= 1 else -1
    code, unknown, listed = services.txn_coordinator.list_transactions(
        list(request.state_filters), list(request.producer_id_filters), duration
    )
    if authz.enabled(services):
        describable = authz.filter_authorized(
            services,
            context,
            AclOperation.DESCRIBE,
            ResourceType.TRANSACTIONAL_ID,
            [t for t, _p, _s in listed],
        )
        listed = [entry for entry in listed if entry[0] in describable]
    return cls(
        throttle_time_ms=0,
        error_code=code,
        unknown_state_filters=unknown,
        transaction_states=[
            cls.TransactionState(transactional_id=t, producer_id=p, transaction_state=s)
            for t, p, s in listed
        ],
    )


TXN_HANDLERS: dict[ApiKey, ApiHandler] = {
    ApiKey.ADD_PARTITIONS_TO_TXN: handle_add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: handle_add_offsets_to_txn,
    ApiKey.END_TXN: handle_end_txn,
    ApiKey.DESCRIBE_TRANSACTIONS: handle_describe_transactions,
    ApiKey.LIST_TRANSACTIONS: handle_list_transactions,
}
"""The handlers of the transaction APIs (InitProducerId and FindCoordinator stay in
:mod:`kafkacore.server.handlers.cluster`)."""
