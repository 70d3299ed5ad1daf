"""Leadership and reassignment APIs of a single-node cluster (answers as Kafka's
controller gives them when this node is every partition's only replica):

* ElectLeaders v0-2: every partition already has its preferred (and only) leader ->
  ELECTION_NOT_NEEDED; unknown -> UNKNOWN_TOPIC_OR_PARTITION. ``topic_partitions`` null
  (all partitions) answers no partition, as Kafka leaves out those needing no election.
* AlterPartitionReassignments v0: ``[this node]`` is the current assignment -> NONE (a
  no-op); a cancellation (null replicas) -> NO_REASSIGNMENT_IN_PROGRESS; anything else ->
  INVALID_REPLICA_ASSIGNMENT (the other brokers are not registered).
* ListPartitionReassignments v0: no reassignment is ever in progress.

In a cluster (``zookeeper.connect``) the three go to the controller (Kafka's
``KafkaController.electLeaders`` / ``onPartitionReassignment``); a broker that is not
the active controller answers NOT_CONTROLLER and the client finds the controller again.
"""

from __future__ import annotations

from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)
from kafkacore.protocol.messages.elect_leaders import ElectLeadersRequest, ElectLeadersResponse
from kafkacore.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafkacore.security.acl import AclOperation
from kafkacore.server import authz
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "handle_alter_partition_reassignments",
    "handle_elect_leaders",
    "handle_list_partition_reassignments",
]


_PREFERRED, _UNCLEAN = 0, 1


def _partition_error(
    services: BrokerServices, topic: str, partition: int
) -> tuple[int, str] | None:
    count = services.metadata_cache.partition_count(topic)
    if count is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
    if not 0 <= partition < count:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
    return None


async def handle_elect_leaders(
    services: BrokerServices, context: RequestContext, request: ElectLeadersRequest
) -> ElectLeadersResponse:
    if not authz.authorize_cluster(services, context, AclOperation.ALTER):
        # ElectLeadersRequest.getErrorResponse: the error at the top and per partition
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return ElectLeadersResponse(
            throttle_time_ms=0,
            error_code=denied,
            replica_election_results=[
                ElectLeadersResponse.ReplicaElectionResult(
                    topic=t.topic,
                    partition_result=[
                        ElectLeadersResponse.PartitionResult(
                            partition_id=p, error_code=denied, error_message=None
                        )
                        for p in t.partitions
                    ],
                )
                for t in request.topic_partitions or []
            ],
        )
    if services.controller is not None:
        return await _elect_in_cluster(services, context, request)
    election_type = request.election_type if context.api_version >= 1 else _PREFERRED
    if election_type not in (_PREFERRED, _UNCLEAN):
        return ElectLeadersResponse(
            throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, replica_election_results=[]
        )
    results = []
    for t in request.topic_partitions or []:
        partitions = []
        for index in t.partitions:
            error = _partition_error(services, t.topic, index)
            code, message = error if error is not None else (ErrorCode.ELECTION_NOT_NEEDED, None)
            partitions.append(
                ElectLeadersResponse.PartitionResult(
                    partition_id=index, error_code=code, error_message=message
                )
            )
        results.append(
            ElectLeadersResponse.ReplicaElectionResult(topic=t.topic, partition_result=partitions)
        )
    return ElectLeadersResponse(throttle_time_ms=0, error_code=0, replica_election_results=results)


def _reassignment_error(
    services: BrokerServices, topic: str, partition: int, replicas: list[int] | None
) -> tuple[int, str | None]:
    error = _partition_error(services, topic, partition)
    if error is not None:
        return error
    if replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
    if not replicas:
        return (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica list.",
        )
    seen: set[int] = set()
    for replica in replicas:
        if replica in seen:
            return (
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes the broker {replica} more than once.",
            )
        seen.add(replica)
        if replica != services.node_id:
            return (
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {replica}, but no such "
                "broker is registered.",
            )
    return ErrorCode.NONE, None


async def _elect_in_cluster(
    services: BrokerServices, context: RequestContext, request: ElectLeadersRequest
) -> ElectLeadersResponse:
    election_type = request.election_type if context.api_version >= 1 else _PREFERRED
    controller = services.active_controller
    if controller is None or election_type not in (_PREFERRED, _UNCLEAN):
        code = ErrorCode.NOT_CONTROLLER if controller is None else ErrorCode.INVALID_REQUEST
        return ElectLeadersResponse(
            throttle_time_ms=0, error_code=code, replica_election_results=[]
        )
    if request.topic_partitions is None:  # every partition
        wanted = [
            (t.name, p) for t in services.metadata_cache.topics() for p in range(t.partition_count)
        ]
    else:
        wanted = [(t.topic, p) for t in request.topic_partitions for p in t.partitions]
    outcome = await controller.elect_leaders(wanted, unclean=election_type == _UNCLEAN)
    by_topic: dict[str, list[ElectLeadersResponse.PartitionResult]] = {}
    for (topic, partition), (result, message) in outcome.items():
        if request.topic_partitions is None and result == ErrorCode.ELECTION_NOT_NEEDED:
            continue  # Kafka leaves those out of an all-partitions answer
        by_topic.setdefault(topic, []).append(
            ElectLeadersResponse.PartitionResult(
                partition_id=partition, error_code=result, error_message=message
            )
        )
    results = [
        ElectLeadersResponse.ReplicaElectionResult(topic=t, partition_result=ps)
        for t, ps in by_topic.items()
    ]
    return ElectLeadersResponse(throttle_time_ms=0, error_code=0, replica_election_results=results)


async def handle_alter_partition_reassignments(
    services: BrokerServices, context: RequestContext, request: AlterPartitionReassignmentsRequest
) -> AlterPartitionReassignmentsResponse:
    if not authz.authorize_cluster(services, context, AclOperation.ALTER):
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return AlterPartitionReassignmentsResponse(
            throttle_time_ms=0,
            error_code=denied,
            error_message=None,
            responses=[
                AlterPartitionReassignmentsResponse.ReassignableTopicResponse(
                    name=t.name,
                    partitions=[
                        AlterPartitionReassignmentsResponse.ReassignablePartitionResponse(
                            partition_index=p.partition_index, error_code=denied, error_message=None
                        )
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ],
        )
    if services.controller is not None:
        controller = services.active_controller
        if controller is None:
            return AlterPartitionReassignmentsResponse(
                throttle_time_ms=0,
                error_code=ErrorCode.NOT_CONTROLLER,
                error_message=None,
                responses=[],
            )
        wanted = {
            (t.name, p.partition_index): (list(p.replicas) if p.replicas is not None else None)
            for t in request.topics
            for p in t.partitions
        }
        outcome = await controller.alter_partition_reassignments(wanted)
        by_name: dict[
            str, list[AlterPartitionReassignmentsResponse.ReassignablePartitionResponse]
        ] = {}
        for (topic, partition), (code, message) in outcome.items():
            by_name.setdefault(topic, []).append(
                AlterPartitionReassignmentsResponse.ReassignablePartitionResponse(
                    partition_index=partition, error_code=code, error_message=message
                )
            )
        return AlterPartitionReassignmentsResponse(
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            responses=[
                AlterPartitionReassignmentsResponse.ReassignableTopicResponse(name=n, partitions=ps)
                for n, ps in by_name.items()
            ],
        )
    responses = []
    for t in request.topics:
        partitions = []
        for p in t.partitions:
            replicas = list(p.replicas) if p.replicas is not None else None
            code, message = _reassignment_error(services, t.name, p.partition_index, replicas)
            partitions.append(
                AlterPartitionReassignmentsResponse.ReassignablePartitionResponse(
                    partition_index=p.partition_index, error_code=code, error_message=message
                )
            )
        responses.append(
            AlterPartitionReassignmentsResponse.ReassignableTopicResponse(
                name=t.name, partitions=partitions
            )
        )
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=0, error_message=None, responses=responses
    )


async def handle_list_partition_reassignments(
    services: BrokerServices, context: RequestContext, request: ListPartitionReassignmentsRequest
) -> ListPartitionReassignmentsResponse:
    if not authz.authorize_cluster(services, context, AclOperation.DESCRIBE):
        return ListPartitionReassignmentsResponse(
            throttle_time_ms=0,
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            error_message=None,
            topics=[],
        )
    if services.controller is None:
        return ListPartitionReassignmentsResponse(
            throttle_time_ms=0, error_code=0, error_message=None, topics=[]
        )
    controller = services.active_controller
    wanted = (
        None
        if request.topics is None
        else [(t.name, p) for t in request.topics for p in t.partition_indexes]
    )
    moving = await controller.list_partition_reassignments(wanted) if controller else None
    if moving is None:
        return ListPartitionReassignmentsResponse(
            throttle_time_ms=0, error_code=ErrorCode.NOT_CONTROLLER, error_message=None, topics=[]
        )
    topics: dict[str, list[ListPartitionReassignmentsResponse.OngoingPartitionReassignment]] = {}
    for (topic, partition), (replicas, adding, removing) in sorted(moving.items()):
        topics.setdefault(topic, []).append(
            ListPartitionReassignmentsResponse.OngoingPartitionReassignment(
                partition_index=partition,
                replicas=replicas,
                adding_replicas=adding,
                removing_replicas=removing,
            )
        )
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        topics=[
            ListPartitionReassignmentsResponse.OngoingTopicReassignment(name=n, partitions=ps)
            for n, ps in topics.items()
        ],
    )
