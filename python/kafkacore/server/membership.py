"""How a broker joins its cluster and leaves it, per mode (what Kafka's ``KafkaServer``
does around its listeners in ZooKeeper mode, and ``BrokerLifecycleManager`` in KRaft):

* :class:`SingleNode`: the broker registers its endpoints in its own metadata cache;
* :class:`ZooKeeperMembership`: the replica fetchers and the AlterPartition manager start,
  ``/brokers/ids/<id>`` is registered (its czxid is the broker epoch), the controller
  campaigns; at shutdown a controlled shutdown hands the leaderships over, and a failed
  log directory is reported in ``/log_dir_event_notification``.

A KRaft broker will be a third :class:`Membership`: registration and heartbeats to the
controller quorum, controlled shutdown through its heartbeat.

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Mapping
from typing import Protocol

from kafkacore.config import BrokerConfig
from kafkacore.metadata import BrokerInfo, MetadataCache
from kafkacore.metadata.zookeeper import ZooKeeperMetadataStore
from kafkacore.net import NodeClient, inter_broker_security
from kafkacore.protocol import APIS, ApiKey, ErrorCode
from kafkacore.server.services import BrokerServices
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import BrokerRegistration
from kafkacore.zk.data import Endpoint as ZkEndpoint

__all__ = ["Membership", "SingleNode", "ZooKeeperMembership"]

logger = logging.getLogger("kafkacore.server")

_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
_CONTROLLED_SHUTDOWN_VERSION = 3


class Membership(Protocol):
    """A broker's mode-specific steps around its listeners."""

    async def join(self, services: BrokerServices, bound_ports: Mapping[str, int]) -> None:
        """The listeners are bound (``bound_ports`` by listener name): make the broker
        known to the cluster and start what replicates."""
        ...

    async def leave(self, services: BrokerServices) -> None:
        """Before the listeners stop accepting: hand this broker's leaderships over."""
        ...

    async def report_log_dir_failure(self, log_dir: str) -> None:
        """``log_dir`` failed and its partitions are offline here: tell the controller."""
        ...

    async def close(self) -> None:
        """After the logs and the controller closed: the store and the sessions."""
        ...


def _advertised_port(bound_ports: Mapping[str, int], listener: str, configured: int) -> int:
    """The port of ``listener`` as bound where the config says 0 (else the first bound)."""
    if configured:
        return configured
    return bound_ports.get(listener, next(iter(bound_ports.values())))


class SingleNode:
    """One node: controller and broker in one process, nothing to join."""

    def __init__(self, config: BrokerConfig, node_id: int, cache: MetadataCache) -> None:
        self.config = config
        self.node_id = node_id
        self.cache = cache

    async def join(self, services: BrokerServices, bound_ports: Mapping[str, int]) -> None:
        """The broker registration (Kafka: ``/brokers/ids/<id>``), once the listeners are
        bound: every advertised listener, so that each request is answered with the
        endpoints of the listener it came through."""
        registered = tuple(
            (
                e.listener_name,
                e.host or socket.getfqdn(),
                _advertised_port(bound_ports, e.listener_name, e.port),
                _PROTOCOL_IDS[e.security_protocol],
            )
            for e in self.config.advertised_endpoints()
        )
        _, host, port, _ = registered[0]
        self.cache.register_broker(
            BrokerInfo(self.node_id, host, port, self.config.broker_rack, registered)
        )

    async def leave(self, services: BrokerServices) -> None:
        return None

    async def report_log_dir_failure(self, log_dir: str) -> None:
        return None

    async def close(self) -> None:
        return None


class ZooKeeperMembership:
    """A broker of a ZooKeeper-mode cluster (Kafka's ``KafkaServer`` around its
    listeners); :meth:`register_again` is the controller's ``register_broker``."""

    def __init__(
        self,
        config: BrokerConfig,
        node_id: int,
        zk: KafkaZkClient,
        store: ZooKeeperMetadataStore,
    ) -> None:
        self.config = config
        self.node_id = node_id
        self.zk = zk
        self.store = store
        self._prefix = f"[KafkaServer id={node_id}]"
        # known once joined: the endpoints to register, the services to update
        self._bound_ports: Mapping[str, int] = {}
        self._services: BrokerServices | None = None

    async def join(self, services: BrokerServices, bound_ports: Mapping[str, int]) -> None:
        """Kafka's ZooKeeper-mode start-up after the listeners are bound: replication
        starts, ``/brokers/ids/<id>`` is registered (its czxid is this broker's epoch),
        then the controller campaigns for ``/controller``."""
        self._services, self._bound_ports = services, dict(bound_ports)
        listener, _protocol = self.config.inter_broker_listener()
        services.replica_manager.start_replication(listener=listener, run_io=services.run_io)
        epoch = await self.zk.register_broker(self._registration())
        services.replica_manager.broker_epoch = epoch
        logger.info("%s registered in ZooKeeper with broker epoch %d", self._prefix, epoch)
        assert services.controller is not None
        await services.controller.startup()

    async def register_again(self) -> int:
        """A new ZooKeeper session: a new ``/brokers/ids/<id>``, hence a new broker epoch."""
        new_epoch = await self.zk.register_broker(self._registration())
        if self._services is not None:
            self._services.replica_manager.broker_epoch = new_epoch
        return new_epoch

    def _registration(self) -> BrokerRegistration:
        """``/brokers/ids/<id>``: every advertised endpoint, with the port actually bound
        where the config says 0."""
        endpoints = tuple(
            ZkEndpoint(
                e.listener_name,
                e.host or socket.getfqdn(),
                _advertised_port(self._bound_ports, e.listener_name, e.port),
                e.security_protocol,
            )
            for e in self.config.advertised_endpoints()
        )
        return BrokerRegistration(
            id=self.node_id,
            endpoints=endpoints,
            rack=self.config.broker_rack,
            listener_security_protocol_map=self.config.effective_listener_security_protocol_map(),
        )

    async def leave(self, services: BrokerServices) -> None:
        """Kafka's ``KafkaServer.controlledShutdown``: ask the controller to move this
        broker's leaderships away (ControlledShutdown v3 with the broker epoch) and retry
        until none remain, ``controlled.shutdown.max.retries`` times at most; then the
        shutdown goes on either way (a hard failure is what the cluster survives)."""
        config = self.config
        if not config.controlled_shutdown_enable:
            return
        api = APIS[ApiKey.CONTROLLED_SHUTDOWN]
        broker_epoch = services.replica_manager.broker_epoch
        for attempt in range(max(1, config.controlled_shutdown_max_retries)):
            controller = services.metadata_cache.broker(services.metadata_cache.controller_id)
            if controller is not None:
                client = NodeClient(
                    controller.host,
                    controller.port,
                    client_id=f"broker-{self.node_id}-controlled-shutdown",
                    request_timeout_s=config.request_timeout_ms / 1000,
                    security=inter_broker_security(config),
                )
                try:
                    request = api.request.cls(broker_id=self.node_id, broker_epoch=broker_epoch)
                    response = await client.send(api, _CONTROLLED_SHUTDOWN_VERSION, request)
                    if response.error_code == ErrorCode.NONE and not response.remaining_partitions:
                        logger.info("%s controlled shutdown succeeded", self._prefix)
                        return
                    logger.info(
                        "%s controlled shutdown: error %d, %d partition(s) remaining",
                        self._prefix,
                        response.error_code,
                        len(response.remaining_partitions),
                    )
                except (ConnectionError, TimeoutError, OSError) as exc:
                    logger.info("%s controlled shutdown attempt failed: %s", self._prefix, exc)
                finally:
                    await client.close()
            if attempt + 1 < config.controlled_shutdown_max_retries:
                await asyncio.sleep(config.controlled_shutdown_retry_backoff_ms / 1000)
        logger.warning("%s proceeding to do an unclean shutdown", self._prefix)

    async def report_log_dir_failure(self, log_dir: str) -> None:
        """``/log_dir_event_notification/log_dir_event_<seq>``: the controller moves the
        leaderships (it learns which replicas are offline from the KAFKA_STORAGE_ERROR
        answers to its LeaderAndIsr)."""
        try:
            await self.zk.create_log_dir_event_notification(self.node_id)
        except Exception:
            logger.exception("%s could not write the log dir event notification", self._prefix)
        else:
            logger.info("%s wrote a log dir event notification for %s", self._prefix, log_dir)

    async def close(self) -> None:
        """The store stops following ZooKeeper and the session ends (the ephemeral
        ``/brokers/ids/<id>`` goes with it)."""
        self.store.stop()
        await self.zk.close()
