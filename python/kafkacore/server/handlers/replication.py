"""The controller's requests to a broker (ZooKeeper mode): LeaderAndIsr, UpdateMetadata
and StopReplica, handed to the :class:`~kafkacore.server.replica_manager.ReplicaManager`
(Kafka's ``KafkaApis.handleLeaderAndIsrRequest`` and friends). The request-wide
controller and broker epoch checks and the per-partition rules live there."""

from __future__ import annotations

from typing import Any

from kafkacore.controller.algorithms import LEADER_DURING_DELETE
from kafkacore.protocol import APIS_BY_NAME
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_leader_and_isr", "handle_stop_replica", "handle_update_metadata"]

_UPDATE_METADATA: Any = APIS_BY_NAME["UpdateMetadata"].response.cls


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_leader_and_isr(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    return await services.replica_manager.become_leader_or_follower(
        request, context.api_version, services.on_leadership_change
    )


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_update_metadata(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    deleting = _topics_being_deleted(request)
    code = services.replica_manager.maybe_update_metadata_cache(request)
    if code == 0 and deleting:
        # KafkaApis: the deleted partitions' committed offsets go (handleDeletedPartitions)
        await services.group_coordinator.on_topics_deleted(sorted(deleting))
    return _UPDATE_METADATA(error_code=code)


def _topics_being_deleted(request: Any) -> set[str]:
    """Topics whose partitions an UpdateMetadata marks with leader -2 (being deleted)."""
    states = list(getattr(request, "ungrouped_partition_states", None) or ())
    names = [ps.topic_name for ps in states if ps.leader == LEADER_DURING_DELETE]
    for ts in getattr(request, "topic_states", None) or ():
        if any(ps.leader == LEADER_DURING_DELETE for ps in ts.partition_states):
            names.append(ts.topic_name)
    return set(names)


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_stop_replica(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    response = await services.replica_manager.stop_replicas(request, context.api_version)
    # KafkaApis: a deleted __consumer_offsets partition resigns its groups here
    for topic, partition, leader_epoch in _deleted_partitions(request):
        if topic == OFFSETS_TOPIC:
            services.group_coordinator.on_resigned(
                partition, leader_epoch if leader_epoch >= 0 else None
            )
    return response


def _deleted_partitions(request: Any) -> list[tuple[str, int, int]]:
    """``(topic, partition, leader epoch)`` of the partitions a StopReplica deletes (v3+
    per partition; v0-2 for the whole request)."""
    out = []
    for ts in getattr(request, "topic_states", None) or ():
        for ps in ts.partition_states:
            if ps.delete_partition:
                out.append((ts.topic_name, ps.partition_index, ps.leader_epoch))
    if getattr(request, "delete_partitions", False):
        for ps in getattr(request, "ungrouped_partitions", None) or ():
            out.append((ps.topic_name, ps.partition_index, -1))
        for tp in getattr(request, "topics", None) or ():
            for index in tp.partition_indexes:
                out.append((tp.name, index, -1))
    return out
