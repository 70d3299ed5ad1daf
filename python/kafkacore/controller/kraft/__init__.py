"""The KRaft controller (Kafka 4.3's ``QuorumController`` and its control managers): the
cluster's metadata written as records through the Raft leader of ``__cluster_metadata``
and applied when committed, on one event queue.

* :mod:`~kafkacore.controller.kraft.state` - the controller's state: an image and what
  Kafka's controller indexes beside it;
* :mod:`~kafkacore.controller.kraft.cluster_control` - broker and controller registration,
  broker sessions and states;
* :mod:`~kafkacore.controller.kraft.partition_change` - one partition's next state (leader
  election, ISR, ELR, reassignment);
* :mod:`~kafkacore.controller.kraft.replication_control` - topics, partitions, elections,
  reassignments, heartbeats;
* :mod:`~kafkacore.controller.kraft.config_control`,
  :mod:`~kafkacore.controller.kraft.security_control`,
  :mod:`~kafkacore.controller.kraft.feature_control` - configs and quotas, SCRAM and ACLs,
  features and producer ids;
* :mod:`~kafkacore.controller.kraft.events`, :mod:`~kafkacore.controller.kraft.controller` -
  the event queue and :class:`QuorumController`.
"""

from __future__ import annotations

from kafkacore.controller.kraft.controller import ControllerRegistrationInfo, QuorumController
from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.state import ControllerState

__all__ = [
    "ApiError",
    "ControllerError",
    "ControllerRegistrationInfo",
    "ControllerResult",
    "ControllerState",
    "QuorumController",
]
