"""The controller's requests to a broker (ZooKeeper mode): LeaderAndIsr, UpdateMetadata
and StopReplica, handed to the :class:`~kafkacore.server.replica_manager.ReplicaManager`
(Kafka's ``KafkaApis.handleLeaderAndIsrRequest`` and friends). The request-wide
controller and broker epoch checks and the per-partition rules live there."""

from __future__ import annotations

from kafkacore.controller.algorithms import LEADER_DURING_DELETE
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest, LeaderAndIsrResponse
from kafkacore.protocol.messages.stop_replica import StopReplicaRequest, StopReplicaResponse
from kafkacore.protocol.messages.update_metadata import (
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kafkacore.protocol.requests import stop_replica_partitions, update_metadata_partition_states
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_leader_and_isr", "handle_stop_replica", "handle_update_metadata"]


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_leader_and_isr(
    services: BrokerServices, context: RequestContext, request: LeaderAndIsrRequest
) -> LeaderAndIsrResponse:
    return await services.replica_manager.become_leader_or_follower(
        request, context.api_version, services.on_leadership_change
    )


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_update_metadata(
    services: BrokerServices, context: RequestContext, request: UpdateMetadataRequest
) -> UpdateMetadataResponse:
    deleting = {
        topic
        for topic, _id, state in update_metadata_partition_states(request)
        if state.leader == LEADER_DURING_DELETE
    }
    code = services.replica_manager.maybe_update_metadata_cache(request)
    if code == 0 and deleting:
        # KafkaApis: the deleted partitions' committed offsets go (handleDeletedPartitions)
        await services.group_coordinator.on_topics_deleted(sorted(deleting))
    return UpdateMetadataResponse(error_code=code)


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_stop_replica(
    services: BrokerServices, context: RequestContext, request: StopReplicaRequest
) -> StopReplicaResponse:
    response = await services.replica_manager.stop_replicas(request, context.api_version)
    # KafkaApis: a deleted __consumer_offsets partition resigns its groups here
    for p in stop_replica_partitions(request):
        if p.delete and p.topic == OFFSETS_TOPIC:
            services.group_coordinator.on_resigned(
                p.partition, p.leader_epoch if p.leader_epoch >= 0 else None
            )
    return response
