"""WriteTxnMarkers (27, v0-1) and DescribeProducers (61, v0): the partition leader's side
of transactions.

WriteTxnMarkers (Kafka's ``handleWriteTxnMarkersRequest``): for each marker - a producer
id and epoch, COMMIT (``TransactionResult`` true) or ABORT, the coordinator epoch - and
each of its partitions, the leader appends the 78-byte control batch with
``AppendOrigin.COORDINATOR`` and ``acks=-1`` semantics, and answers once the high
watermark passed it (the ISR has it), as a Produce with ``acks=all``. Per partition:
UNKNOWN_TOPIC_OR_PARTITION when this broker hosts no such partition (Kafka's
``onlinePartition``; KAFKA_STORAGE_ERROR when its directory failed),
NOT_LEADER_OR_FOLLOWER when it does not lead it, NOT_ENOUGH_REPLICAS under
``min.insync.replicas``, INVALID_PRODUCER_EPOCH for a marker epoch below the producer's,
TRANSACTION_COORDINATOR_FENCED for a coordinator epoch below the one the partition
stored, then the replication wait's NOT_ENOUGH_REPLICAS_AFTER_APPEND /
NOT_LEADER_OR_FOLLOWER / REQUEST_TIMED_OUT (``request.timeout.ms``). Once a marker is in
``__consumer_offsets-N`` the group coordinator is told
(``on_transaction_completed(N, producer id, committed)``) so that the producer's
transactional offsets become visible or are dropped. The request as a whole needs
CLUSTER_ACTION on the cluster (else every partition is CLUSTER_AUTHORIZATION_FAILED, as
Kafka's error response). :func:`write_txn_markers` is the unchecked part, which the
transaction coordinator calls in-process for the partitions this broker leads.

DescribeProducers (Kafka's ``handleDescribeProducersRequest``, KIP-664): per partition
the active producers of the replica this broker hosts (the admin client asks the leader)
- id, epoch, last sequence, last timestamp, coordinator epoch and the first offset of the
open transaction (-1: none). READ on each topic (else TOPIC_AUTHORIZATION_FAILED);
UNKNOWN_TOPIC_OR_PARTITION for a partition the cluster does not have,
NOT_LEADER_OR_FOLLOWER for one this broker does not host.

Thread-safety: event loop; the appends run on the I/O executor.
"""

from __future__ import annotations

import logging
from typing import Any

from kafkacore.errors import error_code_for
from kafkacore.log import TopicPartition
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.api import APIS
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "describe_producers",
    "handle_describe_producers",
    "handle_write_txn_markers",
    "write_txn_markers",
]

logger = logging.getLogger("kafkacore.server")

_MARKERS: Any = APIS[ApiKey.WRITE_TXN_MARKERS].response.cls
_PRODUCERS: Any = APIS[ApiKey.DESCRIBE_PRODUCERS].response.cls
_GROUP_METADATA_TOPIC = "__consumer_offsets"


async def write_txn_markers(services: BrokerServices, request: Any) -> Any:
    """Write every marker of a WriteTxnMarkers request on the partitions this broker
    leads and answer it (see the module docstring); no authorization check. Usable
    in-process with a request built from
    ``APIS[ApiKey.WRITE_TXN_MARKERS].request.cls``."""
    replicas = services.replica_manager
    results: list[Any] = []
    # (result partition, topic partition, offset the HW must reach)
    waiting: list[tuple[Any, TopicPartition, int]] = []
    # the __consumer_offsets partitions each marker landed on, per marker
    offsets_partitions: list[list[tuple[Any, int]]] = []
    for marker in request.markers:
        topics: list[Any] = []
        landed: list[tuple[Any, int]] = []
        for topic in marker.topics:
            partitions: list[Any] = []
            for index in topic.partition_indexes:
                result = _MARKERS.WritableTxnMarkerPartitionResult(
                    partition_index=index, error_code=ErrorCode.NONE
                )
                partitions.append(result)
                tp = TopicPartition(topic.name, index)
                partition = replicas.partition(topic.name, index)
                if partition is None:
                    result.error_code = (
                        ErrorCode.KAFKA_STORAGE_ERROR
                        if replicas.is_offline(tp)
                        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                    continue
                try:
                    info = await replicas.append_txn_marker(
                        partition,
                        marker.producer_id,
                        marker.producer_epoch,
                        marker.coordinator_epoch,
                        marker.transaction_result,
                    )
                except Exception as exc:
                    code = error_code_for(exc)
                    if code == ErrorCode.UNKNOWN_SERVER_ERROR:
                        logger.exception("Error writing a transaction marker to %s", tp)
                    else:
                        logger.debug("Transaction marker for %s refused: %s", tp, exc)
                    result.error_code = code
                    continue
                waiting.append((result, tp, info.last_offset + 1))
                if topic.name == _GROUP_METADATA_TOPIC:
                    landed.append((result, index))
            topics.append(
                _MARKERS.WritableTxnMarkerTopicResult(name=topic.name, partitions=partitions)
            )
        results.append(
            _MARKERS.WritableTxnMarkerResult(producer_id=marker.producer_id, topics=topics)
        )
        offsets_partitions.append(landed)
    if waiting:
        codes = await replicas.wait_for_replication(
            [(tp, offset) for _result, tp, offset in waiting],
            services.config.request_timeout_ms,
        )
        for (result, _tp, _offset), code in zip(waiting, codes, strict=True):
            result.error_code = code
    for marker, landed in zip(request.markers, offsets_partitions, strict=True):
        for result, index in landed:
            if result.error_code != ErrorCode.NONE:
                continue
            try:
                await services.group_coordinator.on_transaction_completed(
                    index, marker.producer_id, marker.transaction_result
                )
            except Exception:  # the marker is written: the answer stands
                logger.exception(
                    "The group coordinator failed to complete the transaction of producer "
                    "%d on %s-%d",
                    marker.producer_id,
                    _GROUP_METADATA_TOPIC,
                    index,
                )
    return _MARKERS(markers=results)


async def handle_write_txn_markers(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    """WriteTxnMarkers: CLUSTER_ACTION on the cluster (Kafka's ``authorizeClusterOperation``;
    refused, every partition answers CLUSTER_AUTHORIZATION_FAILED), then
    :func:`write_txn_markers`."""
    if not authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION):
        return _MARKERS(
            markers=[
                _MARKERS.WritableTxnMarkerResult(
                    producer_id=marker.producer_id,
                    topics=[
                        _MARKERS.WritableTxnMarkerTopicResult(
                            name=topic.name,
                            partitions=[
                                _MARKERS.WritableTxnMarkerPartitionResult(
                                    partition_index=index,
                                    error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                )
                                for index in topic.partition_indexes
                            ],
                        )
                        for topic in marker.topics
                    ],
                )
                for marker in request.markers
            ]
        )
    return await write_txn_markers(services, request)


def describe_producers(services: BrokerServices, topic: str, index: int) -> Any:
    """One partition's DescribeProducers answer, from the replica this broker hosts
    (Kafka's ``ReplicaManager.activeProducerState``: a follower answers too); no
    authorization check."""
    answer = _PRODUCERS.PartitionResponse(
        partition_index=index, error_code=ErrorCode.NONE, active_producers=[]
    )
    replicas = services.replica_manager
    tp = TopicPartition(topic, index)
    partition = replicas.partition(topic, index)
    if partition is None:
        if replicas.is_offline(tp):
            answer.error_code = ErrorCode.KAFKA_STORAGE_ERROR
        elif services.metadata_cache.partition_state(tp) is not None:
            answer.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        else:
            answer.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return answer
    for entry in partition.log.active_producers():
        first = entry.current_txn_first_offset
        answer.active_producers.append(
            _PRODUCERS.ProducerState(
                producer_id=entry.producer_id,
                producer_epoch=entry.producer_epoch,
                last_sequence=entry.last_seq,
                last_timestamp=entry.last_timestamp,
                coordinator_epoch=entry.coordinator_epoch,
                current_txn_start_offset=-1 if first is None else first,
            )
        )
    return answer


async def handle_describe_producers(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    """DescribeProducers (Kafka's ``handleDescribeProducersRequest``): a topic without READ
    is TOPIC_AUTHORIZATION_FAILED, one the cluster does not have
    UNKNOWN_TOPIC_OR_PARTITION, for each of its partitions; the others get
    :func:`describe_producers`."""
    readable = authz.allowed_topics(
        services, context, AclOperation.READ, (t.name for t in request.topics)
    )
    topics = []
    for topic in request.topics:
        code = None
        if readable is not None and topic.name not in readable:
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif not services.metadata_cache.contains_topic(topic.name):
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partitions = [
            describe_producers(services, topic.name, index)
            if code is None
            else _PRODUCERS.PartitionResponse(
                partition_index=index, error_code=code, active_producers=[]
            )
            for index in topic.partition_indexes
        ]
        topics.append(_PRODUCERS.TopicResponse(name=topic.name, partitions=partitions))
    return _PRODUCERS(throttle_time_ms=0, topics=topics)
