"""DeleteRecords v0-2 (Kafka's ``ReplicaManager.deleteRecords`` on the leader; one
replica, so no purgatory: the low watermark is the leader's log start offset).

Per partition: unknown -> UNKNOWN_TOPIC_OR_PARTITION; ``offset`` -1 means the high
watermark; a negative offset or one above the high watermark -> OFFSET_OUT_OF_RANGE; a
topic without the ``delete`` cleanup policy -> POLICY_VIOLATION. Otherwise the log start
offset advances (never backwards) and is checkpointed
(``log-start-offset-checkpoint``); the segments below it go at the next retention run.
"""

from __future__ import annotations

import logging

from kafkacore.errors import error_code_for
from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.delete_records import DeleteRecordsRequest, DeleteRecordsResponse
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["HIGH_WATERMARK", "handle_delete_records"]

logger = logging.getLogger("kafkacore.server")

HIGH_WATERMARK = -1


def _delete(services: BrokerServices, topic: str, partition: int, offset: int) -> tuple[int, int]:
    """``(error code, low watermark)`` for one partition."""
    found = services.replica_manager.partition(topic, partition)
    if found is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
    log = found.log
    if not log.config.delete:
        return ErrorCode.POLICY_VIOLATION, -1
    high_watermark = found.high_watermark
    target = high_watermark if offset == HIGH_WATERMARK else offset
    if target < 0 or target > high_watermark:
        return ErrorCode.OFFSET_OUT_OF_RANGE, -1
    try:
        log.delete_records_before(target)
    except Exception as exc:
        code = error_code_for(exc)
        if code == ErrorCode.UNKNOWN_SERVER_ERROR:
            logger.exception("Error deleting records of %s-%d", topic, partition)
        return code, -1
    return ErrorCode.NONE, log.log_start_offset


async def handle_delete_records(
    services: BrokerServices, context: RequestContext, request: DeleteRecordsRequest
) -> DeleteRecordsResponse:
    """Moves log start offsets and writes their checkpoint: on the I/O executor. Each
    topic needs DELETE (TOPIC_AUTHORIZATION_FAILED, before its existence)."""
    deletable = authz.allowed_topics(
        services, context, AclOperation.DELETE, (t.name for t in request.topics)
    )
    return await services.run_io(_delete_records, services, request, deletable)


def _delete_records(
    services: BrokerServices, request: DeleteRecordsRequest, deletable: set[str] | None
) -> DeleteRecordsResponse:
    response = DeleteRecordsResponse
    topics = []
    moved = False
    for topic in request.topics:
        results = []
        for p in topic.partitions:
            if deletable is not None and topic.name not in deletable:
                code, low_watermark = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), -1
            else:
                code, low_watermark = _delete(services, topic.name, p.partition_index, p.offset)
            moved = moved or code == ErrorCode.NONE
            results.append(
                response.DeleteRecordsPartitionResult(
                    partition_index=p.partition_index, low_watermark=low_watermark, error_code=code
                )
            )
        topics.append(
            DeleteRecordsResponse.DeleteRecordsTopicResult(name=topic.name, partitions=results)
        )
    if moved:
        try:
            services.replica_manager.logs.checkpoint_log_start_offsets()
        except Exception as exc:  # the periodic checkpoint retries; the answer stands
            logger.warning("Could not checkpoint log start offsets: %s", exc)
    return response(throttle_time_ms=0, topics=topics)
