"""DescribeLogDirs v0-4 (Kafka's ``ReplicaManager.describeLogDirs``): every log
directory (absolute path) with the partitions it holds, their size on disk, the offset lag
Kafka's ``getLogEndOffsetLag`` reports (this replica's high watermark minus its log end
offset, at least 0; -1 when the partition is not online here) and ``is_future_key`` false;
v4 adds the directory's total and usable bytes. ``topics`` null: every partition;
otherwise only the listed partitions (unknown ones are left out, as Kafka does). A log
directory that failed (offline) is answered KAFKA_STORAGE_ERROR with no partitions."""

from __future__ import annotations

import logging
import os
import shutil

from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.describe_log_dirs import (
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_describe_log_dirs"]

logger = logging.getLogger("kafkacore.server")


def handle_describe_log_dirs(
    services: BrokerServices, context: RequestContext, request: DescribeLogDirsRequest
) -> DescribeLogDirsResponse:
    if not authz.authorize_cluster(services, context, AclOperation.DESCRIBE):
        return DescribeLogDirsResponse(
            throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results=[]
        )
    wanted: dict[str, set[int]] | None = None
    if request.topics is not None:
        wanted = {}
        for t in request.topics:
            wanted.setdefault(t.topic, set()).update(t.partitions)
    by_dir: dict[str, dict[str, list[DescribeLogDirsResponse.DescribeLogDirsPartition]]] = {
        d: {} for d in services.replica_manager.logs.log_dirs
    }
    for log in sorted(
        services.replica_manager.logs.all_logs(), key=lambda log: log.topic_partition
    ):
        tp = log.topic_partition
        if wanted is not None and tp.partition not in wanted.get(tp.topic, ()):
            continue
        try:
            size = log.size
        except Exception:  # deleted concurrently
            continue
        partition = services.replica_manager.get_partition(tp)
        lag = -1 if partition is None else max(partition.high_watermark - log.log_end_offset, 0)
        partitions = by_dir.setdefault(os.path.dirname(log.dir), {}).setdefault(tp.topic, [])
        partitions.append(
            DescribeLogDirsResponse.DescribeLogDirsPartition(
                partition_index=tp.partition,
                partition_size=size,
                offset_lag=lag,
                is_future_key=False,
            )
        )
    results = []
    offline = set(services.replica_manager.logs.offline_log_dirs)
    for log_dir, topics in by_dir.items():
        if log_dir in offline:
            # Kafka: an offline directory is listed with KAFKA_STORAGE_ERROR and no topics
            results.append(
                DescribeLogDirsResponse.DescribeLogDirsResult(
                    error_code=ErrorCode.KAFKA_STORAGE_ERROR,
                    log_dir=log_dir,
                    topics=[],
                    total_bytes=-1,
                    usable_bytes=-1,
                )
            )
            continue
        try:
            usage = shutil.disk_usage(log_dir)
            total, usable = usage.total, usage.free
        except OSError as exc:
            logger.warning("Could not read the disk usage of %s: %s", log_dir, exc)
            total = usable = -1
        results.append(
            DescribeLogDirsResponse.DescribeLogDirsResult(
                error_code=0,
                log_dir=log_dir,
                topics=[
                    DescribeLogDirsResponse.DescribeLogDirsTopic(name=name, partitions=parts)
                    for name, parts in topics.items()
                ],
                total_bytes=total,
                usable_bytes=usable,
            )
        )
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=results)
