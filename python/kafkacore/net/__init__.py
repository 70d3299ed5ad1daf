"""The Kafka network client: one connection class (Kafka's ``NetworkClient`` for one node,
aiokafka's ``AIOKafkaConnection``) that every part of kafkacore talking to a broker uses:
the controller's channel, the replica fetchers, the transaction marker channel,
AlterPartition, KIP-890 verification, controlled shutdown, the console and the tools.

* :mod:`~kafkacore.net.connection` - :class:`NodeClient` (asyncio, pipelined, TLS and
  SASL) and :func:`send_once` (one request from synchronous code);
* :mod:`~kafkacore.net.security` - :class:`ClientSecurity` from a client's properties or
  from a broker's inter-broker listener;
* :mod:`~kafkacore.net.controller_channel` - :class:`ControllerChannel`, a broker's
  requests to the active controller wherever it moves;
* :mod:`~kafkacore.net.timeouts` - ``asyncio.wait_for`` and task cancellation without
  lost cancellations.

Layering: ``net`` stands on ``protocol``, ``security`` and ``config`` and imports nothing
above them.
"""

from __future__ import annotations

from kafkacore.net.connection import (
    AuthenticationError,
    ConnectionClosed,
    NodeClient,
    NodeClientFactory,
    broker_client,
    node_client_factory,
    send_once,
)
from kafkacore.net.controller_channel import (
    ControllerChannel,
    ControllerNode,
    ControllerNodeProvider,
)
from kafkacore.net.security import (
    ClientSecurity,
    client_security,
    controller_security,
    inter_broker_security,
)
from kafkacore.net.timeouts import stop_task, within

__all__ = [
    "AuthenticationError",
    "ClientSecurity",
    "ConnectionClosed",
    "ControllerChannel",
    "ControllerNode",
    "ControllerNodeProvider",
    "NodeClient",
    "NodeClientFactory",
    "broker_client",
    "client_security",
    "controller_security",
    "inter_broker_security",
    "node_client_factory",
    "send_once",
    "stop_task",
    "within",
]
