"""Requests only the controller answers: AlterPartition (a leader's ISR change, KIP-497),
ControlledShutdown (a broker asking to have its leaderships moved away) and
AllocateProducerIds (a Kafka 3.x broker asking for a block of producer ids, KIP-730). A broker
that is not the active controller answers NOT_CONTROLLER, as Kafka's ``KafkaApis`` does;
the sender finds the controller again in its metadata and retries."""

from __future__ import annotations

from kafkacore.protocol.errors import ErrorCode
from kafkacore.protocol.messages.allocate_producer_ids import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
)
from kafkacore.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from kafkacore.protocol.messages.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "handle_allocate_producer_ids",
    "handle_alter_partition",
    "handle_controlled_shutdown",
]


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_alter_partition(
    services: BrokerServices, context: RequestContext, request: AlterPartitionRequest
) -> AlterPartitionResponse:
    controller = services.active_controller
    if controller is None:
        return AlterPartitionResponse(
            throttle_time_ms=0, error_code=ErrorCode.NOT_CONTROLLER, topics=[]
        )
    return await controller.alter_partition(request, context.header.api_version)


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_controlled_shutdown(
    services: BrokerServices, context: RequestContext, request: ControlledShutdownRequest
) -> ControlledShutdownResponse:
    controller = services.active_controller
    if controller is None:
        return ControlledShutdownResponse(
            error_code=ErrorCode.NOT_CONTROLLER, remaining_partitions=[]
        )
    error, remaining = await controller.controlled_shutdown(request.broker_id, request.broker_epoch)
    return ControlledShutdownResponse(
        error_code=error,
        remaining_partitions=[
            ControlledShutdownResponse.RemainingPartition(topic_name=t, partition_index=p)
            for t, p in remaining
        ],
    )


@authz.requires_cluster(AclOperation.CLUSTER_ACTION)
async def handle_allocate_producer_ids(
    services: BrokerServices, context: RequestContext, request: AllocateProducerIdsRequest
) -> AllocateProducerIdsResponse:
    controller = services.active_controller
    if controller is None:
        error, start, length = int(ErrorCode.NOT_CONTROLLER), -1, 0
    else:
        error, start, length = await controller.allocate_producer_ids(
            request.broker_id, request.broker_epoch
        )
    return AllocateProducerIdsResponse(
        throttle_time_ms=0, error_code=error, producer_id_start=start, producer_id_len=length
    )
