"""The controller's requests to a broker (ZooKeeper mode): LeaderAndIsr, UpdateMetadata
and StopReplica, handed to the :class:`~kafkacore.server.replica_manager.ReplicaManager`
(Kafka's ``KafkaApis.handleLeaderAndIsrRequest`` and friends). The request-wide
controller and broker epoch checks and the per-partition rules live there."""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import APIS_BY_NAME
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_leader_and_isr", "handle_stop_replica", "handle_update_metadata"]

_UPDATE_METADATA: Any = APIS_BY_NAME["UpdateMetadata"].response.cls


async def handle_leader_and_isr(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    return await services.replica_manager.become_leader_or_follower(request, context.api_version)


def handle_update_metadata(services: BrokerServices, context: RequestContext, request: Any) -> Any:
    code = services.replica_manager.maybe_update_metadata_cache(request)
    return _UPDATE_METADATA(error_code=code)


async def handle_stop_replica(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    return await services.replica_manager.stop_replicas(request, context.api_version)
