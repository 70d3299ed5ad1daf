"""Leadership and reassignment APIs of a single-node cluster (answers as Kafka's
controller gives them when this node is every partition's only replica):

* ElectLeaders v0-2: every partition already has its preferred (and only) leader ->
  ELECTION_NOT_NEEDED; unknown -> UNKNOWN_TOPIC_OR_PARTITION. ``topic_partitions`` null
  (all partitions) answers no partition, as Kafka leaves out those needing no election.
* AlterPartitionReassignments v0: ``[this node]`` is the current assignment -> NONE (a
  no-op); a cancellation (null replicas) -> NO_REASSIGNMENT_IN_PROGRESS; anything else ->
  INVALID_REPLICA_ASSIGNMENT (the other brokers are not registered).
* ListPartitionReassignments v0: no reassignment is ever in progress.
"""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = [
    "handle_alter_partition_reassignments",
    "handle_elect_leaders",
    "handle_list_partition_reassignments",
]

_ELECT: Any = APIS_BY_NAME["ElectLeaders"].response.cls
_ALTER: Any = APIS_BY_NAME["AlterPartitionReassignments"].response.cls
_LIST: Any = APIS_BY_NAME["ListPartitionReassignments"].response.cls

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


def handle_elect_leaders(services: BrokerServices, context: RequestContext, request: Any) -> Any:
    election_type = request.election_type if context.api_version >= 1 else _PREFERRED
    if election_type not in (_PREFERRED, _UNCLEAN):
        return _ELECT(
            throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, replica_election_results=[]
        )
    results = []
    for t in request.topic_partitions or []:
        partitions = []
        for index in t.partitions:
            error = _partition_error(services, t.topic, index)
            code, message = error if error is not None else (ErrorCode.ELECTION_NOT_NEEDED, None)
            partitions.append(
                _ELECT.PartitionResult(partition_id=index, error_code=code, error_message=message)
            )
        results.append(_ELECT.ReplicaElectionResult(topic=t.topic, partition_result=partitions))
    return _ELECT(throttle_time_ms=0, error_code=0, replica_election_results=results)


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


def handle_alter_partition_reassignments(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    responses = []
    for t in request.topics:
        partitions = []
        for p in t.partitions:
            replicas = list(p.replicas) if p.replicas is not None else None
            code, message = _reassignment_error(services, t.name, p.partition_index, replicas)
            partitions.append(
                _ALTER.ReassignablePartitionResponse(
                    partition_index=p.partition_index, error_code=code, error_message=message
                )
            )
        responses.append(_ALTER.ReassignableTopicResponse(name=t.name, partitions=partitions))
    return _ALTER(throttle_time_ms=0, error_code=0, error_message=None, responses=responses)


def handle_list_partition_reassignments(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    return _LIST(throttle_time_ms=0, error_code=0, error_message=None, topics=[])
