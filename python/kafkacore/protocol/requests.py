"""Version differences of requests, flattened once beside the schema.

A message class carries every field of every version; a field the version does not carry
keeps its default (an empty list, ``-1``, ...). Where a request moved data between
versions, these functions give the one shape the broker works with, as Kafka's request
classes do (``LeaderAndIsrRequest.partitionStates()``, ``UpdateMetadataRequest.
partitionStates()``, ``StopReplicaRequest.partitionStates()``), so no handler reads
``getattr(request, "...", None)``:

* LeaderAndIsr and UpdateMetadata v0-1 / v0-4 list partition states ungrouped, each with
  its topic name; later versions group them by topic (with a topic id from LeaderAndIsr v5
  and UpdateMetadata v7);
* StopReplica v0 lists partitions, v1-2 topics with partition indexes, both with one
  request-wide ``delete_partitions``; v3+ per partition with a leader epoch;
* Fetch carries the follower's id in ``replica_id`` up to v14, in ``replica_state`` from v15;
* most responses have a ``throttle_time_ms``, a few (the inter-broker ones) have none
  (Kafka's ``AbstractResponse.throttleTimeMs()`` and ``maybeSetThrottleTimeMs``).

Pure functions over decoded requests (they do not modify them): thread-safe.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import NamedTuple

from kafkacore.protocol.messages.fetch import FetchRequest
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from kafkacore.protocol.messages.stop_replica import StopReplicaRequest
from kafkacore.protocol.messages.update_metadata import UpdateMetadataRequest
from kafkacore.protocol.schema import KafkaStruct

__all__ = [
    "NO_EPOCH",
    "LeaderAndIsrPartition",
    "StopReplicaPartition",
    "UpdateMetadataPartition",
    "fetch_replica_id",
    "leader_and_isr_partition_states",
    "maybe_set_throttle_time_ms",
    "stop_replica_partitions",
    "throttle_time_ms",
    "update_metadata_partition_states",
]

NO_EPOCH = -1
"""StopReplica's leader epoch for v0-2, which carry none (Kafka's ``LeaderAndIsr.NoEpoch``)."""

_ZERO_UUID = uuid.UUID(int=0)
_THROTTLE = "throttle_time_ms"


class LeaderAndIsrPartition(NamedTuple):
    """One partition of a LeaderAndIsr request: its topic, the topic's id (``None`` before
    v5 or when the controller sent the zero id) and the partition's state."""

    topic: str
    topic_id: uuid.UUID | None
    state: LeaderAndIsrRequest.LeaderAndIsrPartitionState


class UpdateMetadataPartition(NamedTuple):
    """One partition of an UpdateMetadata request: topic, topic id (``None`` before v7 or
    zero) and state."""

    topic: str
    topic_id: uuid.UUID | None
    state: UpdateMetadataRequest.UpdateMetadataPartitionState


class StopReplicaPartition(NamedTuple):
    """One partition of a StopReplica request: the leader epoch (:data:`NO_EPOCH` before
    v3) and whether its log is deleted."""

    topic: str
    partition: int
    leader_epoch: int
    delete: bool


def _topic_id(topic_id: uuid.UUID) -> uuid.UUID | None:
    return None if topic_id == _ZERO_UUID else topic_id


def leader_and_isr_partition_states(
    request: LeaderAndIsrRequest,
) -> Iterator[LeaderAndIsrPartition]:
    """Every partition state of a LeaderAndIsr request, in request order (Kafka's
    ``LeaderAndIsrRequest.partitionStates()``): v0-1 ungrouped, v2+ per topic."""
    for ps in request.ungrouped_partition_states:
        yield LeaderAndIsrPartition(ps.topic_name, None, ps)
    for ts in request.topic_states:
        topic_id = _topic_id(ts.topic_id)
        for ps in ts.partition_states:
            yield LeaderAndIsrPartition(ts.topic_name, topic_id, ps)


def update_metadata_partition_states(
    request: UpdateMetadataRequest,
) -> Iterator[UpdateMetadataPartition]:
    """Every partition state of an UpdateMetadata request, in request order (Kafka's
    ``UpdateMetadataRequest.partitionStates()``): v0-4 ungrouped, v5+ per topic."""
    for ps in request.ungrouped_partition_states:
        yield UpdateMetadataPartition(ps.topic_name, None, ps)
    for ts in request.topic_states:
        topic_id = _topic_id(ts.topic_id)
        for ps in ts.partition_states:
            yield UpdateMetadataPartition(ts.topic_name, topic_id, ps)


def stop_replica_partitions(request: StopReplicaRequest) -> Iterator[StopReplicaPartition]:
    """Every partition of a StopReplica request, in request order (Kafka's
    ``StopReplicaRequest.partitionStates()``): v0 partitions and v1-2 topics take the
    request's ``delete_partitions`` and no epoch; v3+ carry both per partition."""
    delete = request.delete_partitions
    for p in request.ungrouped_partitions:
        yield StopReplicaPartition(p.topic_name, p.partition_index, NO_EPOCH, delete)
    for t in request.topics:
        for index in t.partition_indexes:
            yield StopReplicaPartition(t.name, index, NO_EPOCH, delete)
    for ts in request.topic_states:
        for ps in ts.partition_states:
            yield StopReplicaPartition(
                ts.topic_name, ps.partition_index, ps.leader_epoch, ps.delete_partition
            )


def fetch_replica_id(request: FetchRequest, version: int) -> int:
    """The fetching follower's broker id, -1 for a consumer (Kafka's
    ``FetchRequest.replicaId()``): ``replica_id`` up to v14, ``replica_state`` from v15."""
    return request.replica_id if version <= 14 else request.replica_state.replica_id


def throttle_time_ms(response: KafkaStruct) -> int:
    """The response's throttle time, 0 for one without the field (Kafka's
    ``AbstractResponse.throttleTimeMs()``)."""
    return int(getattr(response, _THROTTLE, 0) or 0)


def maybe_set_throttle_time_ms(response: KafkaStruct, throttle_ms: int) -> bool:
    """Sets the response's throttle time if it has the field (Kafka's
    ``maybeSetThrottleTimeMs``); whether it has."""
    if not hasattr(response, _THROTTLE):
        return False
    setattr(response, _THROTTLE, throttle_ms)
    return True
