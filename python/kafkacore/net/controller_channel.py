"""The channel from a broker to the active controller (Kafka's
``NodeToControllerChannelManager``): where AlterPartition, BrokerRegistration,
BrokerHeartbeat, AllocateProducerIds, CreateTopics for internal topics and the forwarded
Envelope requests go.

Which node is the active controller is asked of a :class:`ControllerNodeProvider` at
every attempt (Kafka's ``ControllerNodeProvider``): in ZooKeeper mode the controller the
metadata cache names, on its inter-broker listener; in KRaft the leader of the metadata
quorum on the first of ``controller.listener.names``. One connection is kept to it and
replaced when the controller moves. :meth:`ControllerChannel.send` retries - a transport
failure, no known controller, or a response whose top-level error is NOT_CONTROLLER -
until its retry timeout; then it raises :class:`TimeoutError` (Kafka's ``onTimeout``).

Thread-safety: one event loop; every method runs on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from kafkacore.net.connection import NodeClient, NodeClientFactory
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.schema import KafkaStruct

__all__ = ["ControllerChannel", "ControllerNode", "ControllerNodeProvider"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ControllerNode:
    """The active controller: its id and the endpoint brokers reach it at."""

    id: int
    host: str
    port: int


class ControllerNodeProvider(Protocol):
    """Who the active controller is now, if anyone knows (Kafka's
    ``ControllerNodeProvider.getControllerInfo``)."""

    def controller(self) -> ControllerNode | None: ...


class ControllerChannel:
    """See the module docstring. ``client_factory`` makes the connection to a controller
    (its security is the controller listener's); ``retry_backoff_s`` is the pause between
    attempts (Kafka's ``retry.backoff.ms``)."""

    def __init__(
        self,
        provider: ControllerNodeProvider,
        client_factory: NodeClientFactory,
        *,
        retry_backoff_s: float = 0.05,
        name: str = "controller-channel",
    ) -> None:
        self.provider = provider
        self._client_factory = client_factory
        self._retry_backoff_s = retry_backoff_s
        self.name = name
        self._client: NodeClient | None = None
        self._node: ControllerNode | None = None
        self._closed = False
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def active_controller(self) -> ControllerNode | None:
        """The controller the channel is connected to (None: not connected)."""
        return self._node if self._client is not None and not self._client.closed else None

    async def send(
        self, api_key: ApiKey, version: int, request: KafkaStruct, *, timeout_s: float
    ) -> Any:
        """``request`` to the active controller; its response (never NOT_CONTROLLER at the
        top level). Raises :class:`TimeoutError` once ``timeout_s`` passed without one,
        :class:`ConnectionError` if the channel is closed."""
        deadline = time.monotonic() + timeout_s
        reason = "no attempt"
        while True:
            if self._closed:
                raise ConnectionError(f"{self.name} is closed")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{self.name}: no answer to {ApiKey(api_key).name} within {timeout_s}s "
                    f"({reason})"
                )
            node = self.provider.controller()
            if node is None:
                reason = "no controller known"
            else:
                client = self._client_for(node)
                try:
                    response = await asyncio.wait_for(
                        client.send(api_key, version, request), remaining
                    )
                except (ConnectionError, OSError, TimeoutError, asyncio.TimeoutError) as exc:
                    reason = f"controller {node.id}: {exc}"
                    await self._drop(client)
                else:
                    # every API sent here has a top-level error code but CreateTopics,
                    # whose controller answers NOT_CONTROLLER per topic: not retried here
                    code = getattr(response, "error_code", ErrorCode.NONE)
                    if code != ErrorCode.NOT_CONTROLLER:
                        return response
                    reason = f"node {node.id} is not the controller"
                    await self._drop(client)
            await asyncio.sleep(min(self._retry_backoff_s, max(0.0, remaining)))

    def _client_for(self, node: ControllerNode) -> NodeClient:
        """The connection to ``node`` (made now if there is none, or one to another node;
        no await, so concurrent senders share one)."""
        client = self._client
        if client is None or client.closed or self._node != node:
            if client is not None:
                task = asyncio.get_running_loop().create_task(client.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
            client = self._client = self._client_factory(node.host, node.port)
            self._node = node
        return client

    async def _drop(self, client: NodeClient) -> None:
        """Close ``client`` after a failure (unless a newer one replaced it already)."""
        if self._client is client:
            self._client = None
        with contextlib.suppress(Exception):
            await client.close()

    async def close(self) -> None:
        self._closed = True
        if self._client is not None:
            await self._drop(self._client)
