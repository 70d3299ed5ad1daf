"""The controller's events (Kafka's ``sealed trait ControllerEvent``, KafkaController.scala):
frozen dataclasses, one per thing that happens to the controller - a ZooKeeper watch
firing, a broker's request, a response from a broker, a timer - processed one at a time
by :meth:`KafkaController._process <kafkacore.controller.controller.KafkaController>`
with ``match``.

A :class:`ControllerRequest` is an event some caller awaits (the broker's handlers): its
type parameter is the answer's type; the controller answers it as Kafka does when it is
not (or no longer) the controller. Names are Kafka's where Kafka has the event.

Thread-safety: immutable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kafkacore.log import TopicPartition
from kafkacore.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from kafkacore.protocol.messages.leader_and_isr import LeaderAndIsrResponse
from kafkacore.protocol.messages.stop_replica import StopReplicaResponse

__all__ = [
    "AllocateProducerIds",
    "AlterPartitionReceived",
    "ApiPartitionReassignment",
    "AutoPreferredReplicaLeaderElection",
    "BrokerChange",
    "ControlledShutdown",
    "ControllerEvent",
    "ControllerRequest",
    "Expire",
    "IsrChangeNotification",
    "LeaderAndIsrResponseReceived",
    "ListPartitionReassignments",
    "LogDirEventNotification",
    "PartitionModifications",
    "Reelect",
    "RegisterBrokerAndReelect",
    "ReplicaLeaderElection",
    "Startup",
    "TopicChange",
    "TopicDeletion",
    "TopicDeletionStopReplicaResponseReceived",
    "WaitIdle",
    "ZkPartitionReassignment",
    "ZkPreferredReplicaElection",
]

_T = TypeVar("_T")

ElectionResults = dict[tuple[str, int], tuple[int, "str | None"]]
"""Per partition: ``(error code, message)``."""

Reassignments = dict[tuple[str, int], tuple[list[int], list[int], list[int]]]
"""Per partition being reassigned: ``(replicas, adding, removing)``."""


class ControllerRequest(Generic[_T]):
    """An event whose caller awaits an answer of type ``_T``."""

    __slots__ = ()


# -- election and the ZooKeeper session -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Startup:
    """The controller starts: campaign for ``/controller``."""


@dataclass(frozen=True, slots=True)
class Reelect:
    """``/controller`` was created, changed or deleted: resign if another broker holds it,
    campaign if no one does (Kafka's ``ControllerChange`` and ``Reelect``: the one-shot
    watch does not say which happened)."""


@dataclass(frozen=True, slots=True)
class Expire:
    """The ZooKeeper session is lost: resign."""


@dataclass(frozen=True, slots=True)
class RegisterBrokerAndReelect:
    """A new ZooKeeper session: register ``/brokers/ids/<id>`` again, then campaign."""


# -- watches on the cluster's znodes ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerChange:
    """The children of ``/brokers/ids`` changed."""


@dataclass(frozen=True, slots=True)
class TopicChange:
    """The children of ``/brokers/topics`` changed."""


@dataclass(frozen=True, slots=True)
class PartitionModifications:
    """``/brokers/topics/<topic>`` changed (partitions added)."""

    topic: str


@dataclass(frozen=True, slots=True)
class TopicDeletion:
    """The children of ``/admin/delete_topics`` changed."""


@dataclass(frozen=True, slots=True)
class IsrChangeNotification:
    """The children of ``/isr_change_notification`` changed."""


@dataclass(frozen=True, slots=True)
class LogDirEventNotification:
    """The children of ``/log_dir_event_notification`` changed."""


@dataclass(frozen=True, slots=True)
class ZkPartitionReassignment:
    """``/admin/reassign_partitions`` was created or changed."""


@dataclass(frozen=True, slots=True)
class ZkPreferredReplicaElection:
    """``/admin/preferred_replica_election`` was created (Kafka's ``ReplicaLeaderElection``
    with the ZooKeeper trigger)."""


# -- timers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AutoPreferredReplicaLeaderElection:
    """``leader.imbalance.check.interval.seconds`` passed."""


# -- answers from brokers --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponseReceived:
    """``broker`` answered a LeaderAndIsr (its replicas on offline log directories)."""

    broker: int
    response: LeaderAndIsrResponse


@dataclass(frozen=True, slots=True)
class TopicDeletionStopReplicaResponseReceived:
    """``broker`` answered a StopReplica that asked it to delete ``deleted``."""

    broker: int
    response: StopReplicaResponse
    deleted: frozenset[TopicPartition]


# -- requests from brokers and admins (awaited) ----------------------------------------------


@dataclass(frozen=True, slots=True)
class AlterPartitionReceived(ControllerRequest[AlterPartitionResponse]):
    """AlterPartition from a partition leader; the answer is the response."""

    request: AlterPartitionRequest
    version: int


@dataclass(frozen=True, slots=True)
class ControlledShutdown(ControllerRequest[tuple[int, list[tuple[str, int]]]]):
    """ControlledShutdown; the answer is ``(error code, partitions still led)``."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class AllocateProducerIds(ControllerRequest[tuple[int, int, int]]):
    """AllocateProducerIds (KIP-730); the answer is ``(error code, first id, count)``."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaLeaderElection(ControllerRequest[ElectionResults]):
    """ElectLeaders from an admin: PREFERRED, or UNCLEAN with ``unclean``."""

    partitions: tuple[tuple[str, int], ...]
    unclean: bool = False


@dataclass(frozen=True, slots=True)
class ApiPartitionReassignment(ControllerRequest[ElectionResults]):
    """AlterPartitionReassignments (KIP-455): per partition its target replicas, or None
    to cancel; the answer is ``(error code, message)`` per partition."""

    reassignments: tuple[tuple[tuple[str, int], tuple[int, ...] | None], ...]


@dataclass(frozen=True, slots=True)
class ListPartitionReassignments(ControllerRequest[Reassignments | None]):
    """ListPartitionReassignments (None: every partition); None when not the controller."""

    partitions: tuple[tuple[str, int], ...] | None


@dataclass(frozen=True, slots=True)
class WaitIdle(ControllerRequest[None]):
    """Answered once every event queued before it was processed (tests)."""


ControllerEvent = (
    Startup
    | Reelect
    | Expire
    | RegisterBrokerAndReelect
    | BrokerChange
    | TopicChange
    | PartitionModifications
    | TopicDeletion
    | IsrChangeNotification
    | LogDirEventNotification
    | ZkPartitionReassignment
    | ZkPreferredReplicaElection
    | AutoPreferredReplicaLeaderElection
    | LeaderAndIsrResponseReceived
    | TopicDeletionStopReplicaResponseReceived
    | AlterPartitionReceived
    | ControlledShutdown
    | AllocateProducerIds
    | ReplicaLeaderElection
    | ApiPartitionReassignment
    | ListPartitionReassignments
    | WaitIdle
)
