"""The quorum controller's events (Kafka's ``QuorumController`` event queue:
``ControllerReadEvent``, ``ControllerWriteEvent`` and the Raft listener's callbacks):
frozen dataclasses processed one at a time by
:meth:`QuorumController._process <kafkacore.controller.kraft.controller.QuorumController>`
with ``match``.

A :class:`ControllerRequest` is an event some caller awaits (the controller listener's
handlers); its type parameter is the answer's type. Write requests are answered once
their records are committed; reads from the committed state.

Thread-safety: immutable.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kafkacore.controller.kraft.result import ApiError
from kafkacore.controller.kraft.state import ControllerState
from kafkacore.raft.listener import ListenerEvent
from kafkacore.security.acl import AclBindingFilter

__all__ = [
    "AllocateProducerIds",
    "AlterClientQuotas",
    "AlterConfigs",
    "AlterPartition",
    "AlterPartitionReassignments",
    "AlterScramCredentials",
    "AssignReplicasToDirs",
    "BalanceLeaders",
    "BrokerHeartbeat",
    "CreateAcls",
    "CreatePartitions",
    "CreateTopics",
    "DeleteAcls",
    "DeleteTopics",
    "ElectLeaders",
    "FenceStaleBrokers",
    "ListPartitionReassignments",
    "MaybeSnapshot",
    "RaftEvents",
    "ReadState",
    "RegisterBroker",
    "RegisterController",
    "RegisterSelf",
    "UnregisterBroker",
    "UpdateFeatures",
    "WriteNoOp",
]

_T = TypeVar("_T")


class ControllerRequest(Generic[_T]):
    """An event whose caller awaits an answer of type ``_T``."""

    __slots__ = ()


# -- from the Raft layer ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RaftEvents:
    """What the committed log and the leadership brought (a snapshot to load, committed
    batches, a new leader)."""

    events: Sequence[ListenerEvent]


# -- timers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteNoOp:
    """``metadata.max.idle.interval.ms`` passed without a write: a NoOpRecord keeps the
    high watermark, and the brokers' metadata offsets, moving."""


@dataclass(frozen=True, slots=True)
class FenceStaleBrokers:
    """Fence a broker whose session expired (``broker.session.timeout.ms``)."""


@dataclass(frozen=True, slots=True)
class BalanceLeaders:
    """``leader.imbalance.check.interval.seconds``: preferred and unclean elections."""


@dataclass(frozen=True, slots=True)
class MaybeSnapshot:
    """Snapshot the committed state if enough was written or enough time passed."""


@dataclass(frozen=True, slots=True)
class RegisterSelf:
    """This controller's own registration (KIP-919) is due."""


# -- requests (answered once committed) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegisterBroker(ControllerRequest[Any]):
    request: Any
    version: int


@dataclass(frozen=True, slots=True)
class BrokerHeartbeat(ControllerRequest[Any]):
    request: Any
    version: int


@dataclass(frozen=True, slots=True)
class UnregisterBroker(ControllerRequest[ApiError]):
    broker_id: int


@dataclass(frozen=True, slots=True)
class RegisterController(ControllerRequest[ApiError]):
    request: Any


@dataclass(frozen=True, slots=True)
class CreateTopics(ControllerRequest[Any]):
    request: Any
    version: int
    describable: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class DeleteTopics(ControllerRequest[dict[uuid.UUID, ApiError]]):
    topic_ids: tuple[uuid.UUID, ...]


@dataclass(frozen=True, slots=True)
class CreatePartitions(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class AlterPartition(ControllerRequest[Any]):
    request: Any
    version: int


@dataclass(frozen=True, slots=True)
class ElectLeaders(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignments(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class AlterConfigs(ControllerRequest[Any]):
    request: Any
    incremental: bool


@dataclass(frozen=True, slots=True)
class AlterClientQuotas(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class AlterScramCredentials(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class CreateAcls(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class DeleteAcls(ControllerRequest[Any]):
    filters: tuple[AclBindingFilter | ApiError, ...]


@dataclass(frozen=True, slots=True)
class UpdateFeatures(ControllerRequest[tuple[str | None, ApiError]]):
    updates: tuple[tuple[str, int], ...]
    upgrade_types: tuple[tuple[str, int], ...]
    validate_only: bool


@dataclass(frozen=True, slots=True)
class AllocateProducerIds(ControllerRequest[tuple[int, int]]):
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class AssignReplicasToDirs(ControllerRequest[Any]):
    request: Any


# -- reads (answered from the committed state) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListPartitionReassignments(ControllerRequest[Any]):
    request: Any


@dataclass(frozen=True, slots=True)
class ReadState(ControllerRequest[ControllerState]):
    """The committed state, once every event queued before is processed."""


ControllerEvent = (
    RaftEvents
    | WriteNoOp
    | FenceStaleBrokers
    | BalanceLeaders
    | MaybeSnapshot
    | RegisterSelf
    | RegisterBroker
    | BrokerHeartbeat
    | UnregisterBroker
    | RegisterController
    | CreateTopics
    | DeleteTopics
    | CreatePartitions
    | AlterPartition
    | ElectLeaders
    | AlterPartitionReassignments
    | AlterConfigs
    | AlterClientQuotas
    | AlterScramCredentials
    | CreateAcls
    | DeleteAcls
    | UpdateFeatures
    | AllocateProducerIds
    | AssignReplicasToDirs
    | ListPartitionReassignments
    | ReadState
)
