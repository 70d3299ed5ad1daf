"""The single-node broker (Kafka's ``KafkaServer``/``BrokerServer`` with the controller
in the same process): log manager, embedded metadata store and the metadata cache that
follows it, replica manager, group coordinator, request channel and socket server,
started and stopped in order.

Start-up: the metadata store is loaded from ``metadata.log.dir`` (else the first log
dir); the :class:`~kafkacore.log.LogManager` loads the logs (recovering after an unclean
shutdown) and agrees on the cluster id with ``meta.properties``; stored topics get their
logs and partitions; the :class:`~kafkacore.server.services.BrokerServices` are built
once; then the listeners open, the broker registers its endpoint in the cache and
``[KafkaServer id=N] started`` is logged.

Shutdown (:meth:`KafkaServer.shutdown`): stop accepting, let connections finish their
request (1 s), wait for the I/O threads, checkpoint high watermarks, then
``LogManager.shutdown()`` (flush, checkpoints, clean-shutdown marker).

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.config.listeners import parse_csv_map
from kafkacore.log import LogManager
from kafkacore.log.cleaner import CleanerConfig, LogCleaner
from kafkacore.metadata import BrokerInfo, EmbeddedMetadataStore, MetadataCache
from kafkacore.server.channel import RequestChannel
from kafkacore.server.group import GroupCoordinator
from kafkacore.server.handlers.configs import DEFAULT_ENTITY, with_stored_dynamic_configs
from kafkacore.server.network import Limits, SocketServer
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.services import BrokerConfigHolder, BrokerServices

__all__ = ["KafkaServer"]

logger = logging.getLogger("kafkacore.server")


def _limits(config: BrokerConfig) -> Limits:
    overrides = {
        ip: int(n) for ip, n in parse_csv_map(config.max_connections_per_ip_overrides).items()
    }
    return Limits(
        max_request_bytes=config.socket_request_max_bytes,
        idle_ms=config.connections_max_idle_ms,
        max_connections=config.max_connections,
        max_connections_per_ip=config.max_connections_per_ip,
        per_ip_overrides=overrides,
    )


class KafkaServer:
    def __init__(self, config: BrokerConfig, **log_manager_options: Any) -> None:
        self.config = config
        self.node_id = config.node_id if config.node_id >= 0 else 1
        # the broker's logs keep producer state (idempotent producers, .snapshot files)
        self._log_manager_options: dict[str, Any] = {"producer_state": True, **log_manager_options}
        self.logs: LogManager | None = None
        self.cleaner: LogCleaner | None = None
        self.services: BrokerServices | None = None
        self.socket_server: SocketServer | None = None
        self._prefix = f"[KafkaServer id={self.node_id}]"

    @property
    def bound_port(self) -> int:
        """The port of the first listener (useful with ``listeners=PLAINTEXT://:0``)."""
        assert self.socket_server is not None
        return next(iter(self.socket_server.bound_ports.values()))

    @property
    def groups(self) -> GroupCoordinator | None:
        return self.services.group_coordinator if self.services is not None else None

    @property
    def replicas(self) -> ReplicaManager | None:
        return self.services.replica_manager if self.services is not None else None

    async def startup(self) -> None:
        config = self.config
        node_id = self.node_id
        logger.info("%s starting", self._prefix)
        metadata_dir = config.metadata_log_dir or config.log_dirs[0]
        os.makedirs(metadata_dir, exist_ok=True)
        store = EmbeddedMetadataStore(metadata_dir, node_id)
        # dynamic broker configs stored by AlterConfigs apply from the start
        config = self.config = with_stored_dynamic_configs(config, store, node_id)
        configs = BrokerConfigHolder(config)
        cache = MetadataCache(controller_id=node_id)  # single node: its own controller
        logs = LogManager(
            broker_config=config,
            cluster_id=store.cluster_id,
            node_id=node_id,
            **self._log_manager_options,
        )
        logs.startup()
        self.logs = logs
        if config.log_cleaner_enable:
            # Compaction of `cleanup.policy=compact` topics, in background threads; the
            # manager pauses it around truncations and deletions.
            cleaner = LogCleaner(logs.all_logs, CleanerConfig.from_broker(config), checkpoints=logs)
            logs.attach_cleaner(cleaner)
            cleaner.start()
            self.cleaner = cleaner
        if logs.cluster_id is not None:
            store.set_cluster_id(logs.cluster_id)
        io_executor = ThreadPoolExecutor(
            max_workers=max(1, config.num_io_threads), thread_name_prefix="kafkacore-io"
        )
        replicas = ReplicaManager(lambda: configs.current, logs, store, cache, node_id, io_executor)
        configs.add_listener(replicas.reconfigure)
        # the replica manager hears of a change before the cache shows it
        store.add_listener(replicas)
        cache.follow(store, (str(node_id), DEFAULT_ENTITY))
        replicas.load()
        # its __consumer_offsets appends run on the I/O threads, as the other writes
        groups = GroupCoordinator(config, replicas, io_executor=io_executor)
        groups.load()  # synchronous: no COORDINATOR_LOAD_IN_PROGRESS window
        groups.start()
        services = BrokerServices(
            node_id=node_id,
            configs=configs,
            metadata_cache=cache,
            metadata_store=store,
            replica_manager=replicas,
            group_coordinator=groups,
            io_executor=io_executor,
        )
        self.services = services
        endpoints = config.listener_endpoints()
        server = SocketServer(
            RequestChannel(services),
            [(e.listener_name, e.host, e.port) for e in endpoints],
            _limits(config),
            {e.listener_name: e.security_protocol for e in endpoints},
        )
        await server.start()
        self.socket_server = server
        advertised = config.advertised_endpoints()[0]
        port = advertised.port or server.bound_ports.get(advertised.listener_name, self.bound_port)
        # the broker registration (Kafka: /brokers/ids/<id>), once the listeners are bound
        cache.register_broker(
            BrokerInfo(node_id, advertised.host or socket.getfqdn(), port, config.broker_rack)
        )
        logger.info("%s started (cluster id %s)", self._prefix, store.cluster_id)

    async def shutdown(self) -> None:
        logger.info("%s shutting down", self._prefix)
        services = self.services
        if self.socket_server is not None:
            await self.socket_server.stop_accepting()
        if services is not None:
            await services.group_coordinator.stop()
            services.replica_manager.purgatory.wake_all()
        if self.socket_server is not None:
            await self.socket_server.close_connections()
        if services is not None:
            # appends still running finish before the logs close
            await asyncio.to_thread(services.io_executor.shutdown, wait=True)
        if self.logs is not None:
            logs = self.logs
            if services is not None:
                try:
                    logs.checkpoint_high_watermarks(services.replica_manager.high_watermarks())
                except Exception as exc:
                    logger.warning("Could not checkpoint high watermarks: %s", exc)
            if self.cleaner is not None:
                # before the logs close: a cleaning round may be reading a segment
                await asyncio.to_thread(self.cleaner.shutdown)
            await asyncio.to_thread(logs.shutdown)
        logger.info("%s shut down completed", self._prefix)
