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
Kafka's error response). The writing is the replica manager's
(:meth:`~kafkacore.server.replica_manager.ReplicaManager.append_txn_markers`), which the
transaction coordinator's marker channel also calls in-process for the partitions this
broker leads; :func:`write_txn_markers` is the unchecked call and its answer.

DescribeProducers (Kafka's ``handleDescribeProducersRequest``, KIP-664): per partition
the active producers of the replica this broker hosts (the admin client asks the leader)
- id, epoch, last sequence, last timestamp, coordinator epoch and the first offset of the
open transaction (-1: none). READ on each topic (else TOPIC_AUTHORIZATION_FAILED);
UNKNOWN_TOPIC_OR_PARTITION for a partition the cluster does not have,
NOT_LEADER_OR_FOLLOWER for one this broker does not host.

Thread-safety: event loop; the appends run on the I/O executor.
"""

from __future__ import annotations

from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
)
from kafkacore.protocol.messages.write_txn_markers import (
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.replica_manager import TxnMarker
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "describe_producers",
    "handle_describe_producers",
    "handle_write_txn_markers",
    "write_txn_markers",
]


async def write_txn_markers(
    services: BrokerServices, request: WriteTxnMarkersRequest
) -> WriteTxnMarkersResponse:
    """Write every marker of a WriteTxnMarkers request on the partitions this broker
    leads (:meth:`ReplicaManager.append_txn_markers`, which also tells the group
    coordinator of markers in ``__consumer_offsets``) and answer it; no authorization
    check. Usable in-process with a :class:`WriteTxnMarkersRequest` built there."""
    markers = [
        TxnMarker(
            marker.producer_id,
            marker.producer_epoch,
            marker.coordinator_epoch,
            marker.transaction_result,
            [
                TopicPartition(topic.name, index)
                for topic in marker.topics
                for index in topic.partition_indexes
            ],
        )
        for marker in request.markers
    ]
    codes = await services.replica_manager.append_txn_markers(
        markers,
        services.config.request_timeout_ms,
        services.group_coordinator.on_transaction_completed,
    )
    results: list[WriteTxnMarkersResponse.WritableTxnMarkerResult] = []
    for marker, marker_codes in zip(request.markers, codes, strict=True):
        answers = iter(marker_codes)
        topics = [
            WriteTxnMarkersResponse.WritableTxnMarkerTopicResult(
                name=topic.name,
                partitions=[
                    WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult(
                        partition_index=index, error_code=next(answers)
                    )
                    for index in topic.partition_indexes
                ],
            )
            for topic in marker.topics
        ]
        results.append(
            WriteTxnMarkersResponse.WritableTxnMarkerResult(
                producer_id=marker.producer_id, topics=topics
            )
        )
    return WriteTxnMarkersResponse(markers=results)


async def handle_write_txn_markers(
    services: BrokerServices, context: RequestContext, request: WriteTxnMarkersRequest
) -> WriteTxnMarkersResponse:
    """WriteTxnMarkers: CLUSTER_ACTION on the cluster (Kafka's ``authorizeClusterOperation``;
    refused, every partition answers CLUSTER_AUTHORIZATION_FAILED), then
    :func:`write_txn_markers`."""
    if not authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION):
        return WriteTxnMarkersResponse(
            markers=[
                WriteTxnMarkersResponse.WritableTxnMarkerResult(
                    producer_id=marker.producer_id,
                    topics=[
                        WriteTxnMarkersResponse.WritableTxnMarkerTopicResult(
                            name=topic.name,
                            partitions=[
                                WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult(
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


def describe_producers(
    services: BrokerServices, topic: str, index: int
) -> DescribeProducersResponse.PartitionResponse:
    """One partition's DescribeProducers answer, from the replica this broker hosts
    (Kafka's ``ReplicaManager.activeProducerState``: a follower answers too); no
    authorization check."""
    answer = DescribeProducersResponse.PartitionResponse(
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
            DescribeProducersResponse.ProducerState(
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
    services: BrokerServices, context: RequestContext, request: DescribeProducersRequest
) -> DescribeProducersResponse:
    """DescribeProducers (Kafka's ``handleDescribeProducersRequest``): a topic without READ
    is TOPIC_AUTHORIZATION_FAILED, one the cluster does not have
    UNKNOWN_TOPIC_OR_PARTITION, for each of its partitions; the others get
    :func:`describe_producers`."""
    readable = authz.allowed_topics(
        services, context, AclOperation.READ, (t.name for t in request.topics)
    )
    topics: list[DescribeProducersResponse.TopicResponse] = []
    for topic in request.topics:
        code = None
        if readable is not None and topic.name not in readable:
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif not services.metadata_cache.contains_topic(topic.name):
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partitions = [
            describe_producers(services, topic.name, index)
            if code is None
            else DescribeProducersResponse.PartitionResponse(
                partition_index=index, error_code=code, active_producers=[]
            )
            for index in topic.partition_indexes
        ]
        topics.append(
            DescribeProducersResponse.TopicResponse(name=topic.name, partitions=partitions)
        )
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)
