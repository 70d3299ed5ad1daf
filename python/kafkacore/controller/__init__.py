"""The ZooKeeper-mode controller (Kafka's ``KafkaController``, cluster.md §2).

* :mod:`~kafkacore.controller.algorithms`: pure leader elections (replica placement is
  :mod:`kafkacore.placement`);
* :mod:`~kafkacore.controller.context`: the controller's cache of cluster state;
* :mod:`~kafkacore.controller.state_machines`: partition and replica state machines;
* :mod:`~kafkacore.controller.channel`: per-broker request queues and request batches;
* :mod:`~kafkacore.controller.events`: the events the controller processes, as types;
* :mod:`~kafkacore.controller.controller`: the single-task event loop."""

from kafkacore.controller.channel import ControllerBrokerRequestBatch, ControllerChannelManager
from kafkacore.controller.context import ControllerContext
from kafkacore.controller.controller import KafkaController

__all__ = [
    "ControllerBrokerRequestBatch",
    "ControllerChannelManager",
    "ControllerContext",
    "KafkaController",
]
