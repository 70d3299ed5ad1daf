"""How a KRaft broker joins and leaves its cluster (Kafka's ``BrokerServer.startup`` after
its listeners are bound, and ``BrokerServer.shutdown``'s controlled shutdown): the
:class:`~kafkacore.server.membership.Membership` of this mode.

Join: the metadata quorum is followed (the raft manager started in the assembly), the
replica fetchers and the AlterPartition manager start (AlterPartition to the quorum's
leader), the lifecycle manager registers (its broker epoch becomes the replica manager's)
and heartbeats; once the controller says the broker caught up and the first metadata
was published here (partitions made, caches filled), the broker asks to be unfenced and
waits for it. Leave: a controlled shutdown through the heartbeats (the controller moves
leaderships and ISR memberships off this broker; fetchers stop for partitions it no
longer is in sync for), bounded by ``broker.session.timeout.ms`` plus the controller's
answer time. Close: the lifecycle manager, the metadata quorum, the controller channels.

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Mapping

from kafkacore.config import BrokerConfig
from kafkacore.net import ControllerChannel
from kafkacore.server.kraft.lifecycle import BrokerLifecycleManager, listeners_of
from kafkacore.server.kraft.raft_manager import BrokerRaftManager
from kafkacore.server.services import BrokerServices

__all__ = ["KRaftMembership"]

logger = logging.getLogger("kafkacore.server")

_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
#: how long a controlled shutdown may take at most (Kafka waits up to 5 minutes; a broker
#: the controller does not answer is fenced after its session timeout anyway)
_CONTROLLED_SHUTDOWN_S = 300.0


class KRaftMembership:
    """A broker of a KRaft cluster (see the module docstring)."""

    def __init__(
        self,
        config: BrokerConfig,
        node_id: int,
        raft: BrokerRaftManager,
        lifecycle: BrokerLifecycleManager,
        controller_channel: ControllerChannel,
        channels: tuple[ControllerChannel, ...],
        first_publish: threading.Event,
        directory_ids: Mapping[str, uuid.UUID],
    ) -> None:
        self.config = config
        self.node_id = node_id
        self.raft = raft
        self.lifecycle = lifecycle
        self.controller_channel = controller_channel
        self._channels = channels
        self._first_publish = first_publish
        self._directory_ids = {os.path.abspath(d): i for d, i in directory_ids.items()}
        self._prefix = f"[BrokerServer id={node_id}]"

    async def join(self, services: BrokerServices, bound_ports: Mapping[str, int]) -> None:
        listener, _protocol = self.config.inter_broker_listener()
        replicas = services.replica_manager
        replicas.start_replication(
            listener=listener, run_io=services.run_io, controller_channel=self.controller_channel
        )
        lifecycle = self.lifecycle
        lifecycle.start(listeners_of(self.config, bound_ports, _PROTOCOL_IDS))
        await lifecycle.wait_registered()
        replicas.broker_epoch = lifecycle.broker_epoch
        logger.info("%s Waiting for the broker to catch up with the metadata log", self._prefix)
        await self._until(lifecycle.initial_catch_up.wait())
        logger.info("%s Waiting for the initial metadata to be published", self._prefix)
        while not self._first_publish.is_set():
            await self._until(asyncio.sleep(0.01))
        lifecycle.set_ready_to_unfence()
        logger.info("%s Waiting for the broker to be unfenced", self._prefix)
        await self._until(lifecycle.initial_unfence.wait())
        logger.info("%s Transition from STARTING to STARTED", self._prefix)

    async def _until(self, waiting: object) -> None:
        """``waiting`` (a coroutine), unless the metadata loading or the registration
        fails first."""
        task = asyncio.ensure_future(waiting)  # type: ignore[call-overload]
        try:
            while not task.done():
                failure = self.raft.failure or self.lifecycle.failure
                if failure is not None:
                    raise failure
                await asyncio.wait({task}, timeout=0.1)
            task.result()
        finally:
            task.cancel()

    async def leave(self, services: BrokerServices) -> None:
        """Kafka's controlled shutdown in KRaft: heartbeats with ``WantShutDown`` until the
        controller answers ``ShouldShutDown``."""
        if not self.config.controlled_shutdown_enable:
            return
        services.replica_manager.in_controlled_shutdown = True
        self.lifecycle.begin_controlled_shutdown()
        try:
            await asyncio.wait_for(
                self.lifecycle.controlled_shutdown_done.wait(), _CONTROLLED_SHUTDOWN_S
            )
        except asyncio.TimeoutError:
            logger.warning("%s controlled shutdown timed out", self._prefix)

    async def report_log_dir_failure(self, log_dir: str) -> None:
        """The next heartbeat lists the directory as offline (the controller moves the
        leaderships of its partitions)."""
        directory = self._directory_ids.get(os.path.abspath(log_dir))
        if directory is not None:
            self.lifecycle.report_offline_dir(directory)

    async def close(self) -> None:
        await self.lifecycle.close()
        await self.raft.shutdown()
        for channel in self._channels:
            await channel.close()

    def clean_shutdown_broker_epoch(self) -> int:
        """The epoch the clean shutdown marker keeps (KIP-966's PreviousBrokerEpoch)."""
        return self.lifecycle.broker_epoch
