"""OffsetForLeaderEpoch v2-4 (Kafka's ``Partition.lastOffsetForLeaderEpoch`` on the
leader): per partition the largest epoch <= the requested one and its end offset, from
the log's leader epoch cache, asked of the replica manager
(:meth:`~kafkacore.server.replica_manager.ReplicaManager.last_offset_for_leader_epoch`).

Under the partition's lock, in Kafka's order: ``current_leader_epoch`` (-1: not checked)
below the partition's leader epoch -> FENCED_LEADER_EPOCH, above it ->
UNKNOWN_LEADER_EPOCH; then not the leader -> NOT_LEADER_OR_FOLLOWER (a follower's
truncation request, ``replica_id`` >= 0, is answered like a consumer's). A partition this
broker does not host -> UNKNOWN_TOPIC_OR_PARTITION (KAFKA_STORAGE_ERROR when its log
directory failed). An epoch the cache cannot answer gives NONE with epoch and offset -1
(``UNDEFINED_EPOCH``/``UNDEFINED_EPOCH_OFFSET``), as Kafka does.
"""

from __future__ import annotations

from kafkacore.errors import error_code_for
from kafkacore.log import TopicPartition
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_offset_for_leader_epoch"]


def _end_offset(
    services: BrokerServices, topic: str, p: OffsetForLeaderEpochRequest.OffsetForLeaderPartition
) -> OffsetForLeaderEpochResponse.EpochEndOffset:
    result = OffsetForLeaderEpochResponse.EpochEndOffset(
        error_code=0, partition=p.partition, leader_epoch=-1, end_offset=-1
    )
    try:
        found = services.replica_manager.last_offset_for_leader_epoch(
            TopicPartition(topic, p.partition), p.current_leader_epoch, p.leader_epoch
        )
    except Exception as exc:
        result.error_code = error_code_for(exc)
        return result
    if found is not None:
        result.leader_epoch, result.end_offset = found
    return result


def handle_offset_for_leader_epoch(
    services: BrokerServices, context: RequestContext, request: OffsetForLeaderEpochRequest
) -> OffsetForLeaderEpochResponse:
    """Kafka (KIP-320): CLUSTER_ACTION on the cluster, else DESCRIBE on each topic; the
    refused topics are answered TOPIC_AUTHORIZATION_FAILED after the others."""
    allowed: set[str] | None = None
    if not authz.authorize_cluster(services, context, AclOperation.CLUSTER_ACTION):
        allowed = authz.allowed_topics(
            services, context, AclOperation.DESCRIBE, (t.topic for t in request.topics)
        )
    topics = [
        OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult(
            topic=t.topic, partitions=[_end_offset(services, t.topic, p) for p in t.partitions]
        )
        for t in request.topics
        if allowed is None or t.topic in allowed
    ]
    if allowed is not None:
        topics += [
            OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult(
                topic=t.topic,
                partitions=[
                    OffsetForLeaderEpochResponse.EpochEndOffset(
                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                        partition=p.partition,
                        leader_epoch=-1,
                        end_offset=-1,
                    )
                    for p in t.partitions
                ],
            )
            for t in request.topics
            if t.topic not in allowed
        ]
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)
