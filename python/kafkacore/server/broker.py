"""The single-node broker (Kafka's ``KafkaServer``/``BrokerServer`` with the controller
in the same process): log manager, embedded metadata store and the metadata cache that
follows it, replica manager, group and transaction coordinators, request channel and
socket server, started and stopped in order. A LeaderAndIsr's leadership changes go to
both coordinators (``__consumer_offsets`` and ``__transaction_state`` partitions).

Start-up: the metadata store is loaded from ``metadata.log.dir`` (else the first log
dir); the :class:`~kafkacore.log.LogManager` loads the logs (recovering after an unclean
shutdown) and agrees on the cluster id with ``meta.properties``; stored topics get their
logs and partitions; the :class:`~kafkacore.server.services.BrokerServices` are built
once; then the listeners open, the broker registers its endpoint in the cache and
``[KafkaServer id=N] started`` is logged.

Shutdown (:meth:`KafkaServer.shutdown`): stop accepting, let connections finish their
request (1 s), wait for the I/O threads, checkpoint high watermarks, then
``LogManager.shutdown()`` (flush, checkpoints, clean-shutdown marker).

A failed log directory (an I/O error: :mod:`kafkacore.log.dir_failure`) is handled on
the event loop, as Kafka's ``LogDirFailureHandler``: the replica manager stops serving
its partitions and the log manager drops its logs; in cluster mode the broker writes
``/log_dir_event_notification/log_dir_event_<seq>`` so that the controller moves the
leaderships (it learns which replicas are offline from the KAFKA_STORAGE_ERROR answers
to its LeaderAndIsr). When no log directory is left, the broker stops with exit status 1
(:attr:`KafkaServer.fatal` is set; Kafka halts).

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import ssl
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.config.listeners import parse_csv_map
from kafkacore.controller.controller import KafkaController
from kafkacore.log import LogManager, TopicPartition
from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from kafkacore.log.cleaner import CleanerConfig, LogCleaner
from kafkacore.log.dir_failure import LogDirFailureChannel
from kafkacore.metadata import BrokerInfo, EmbeddedMetadataStore, MetadataCache, MetadataStore
from kafkacore.metadata.zookeeper import ZooKeeperMetadataStore
from kafkacore.protocol.api import APIS, ApiKey
from kafkacore.protocol.errors import ErrorCode
from kafkacore.security import ssl as _ssl
from kafkacore.security.acl_sync import build_authorizer
from kafkacore.security.credential_sync import follow_scram_credentials
from kafkacore.security.ssl import (
    SslPrincipalMapper,
    listener_ssl_configs,
    peer_principal,
    server_context,
)
from kafkacore.server.channel import RequestChannel
from kafkacore.server.client_quotas import ClientQuotaManager
from kafkacore.server.fetch_session import FetchSessionCache
from kafkacore.server.group import GroupCoordinator
from kafkacore.server.handlers.configs import DEFAULT_ENTITY, with_stored_dynamic_configs
from kafkacore.server.inter_broker import NodeClient, inter_broker_security
from kafkacore.server.metrics import BrokerMetrics
from kafkacore.server.network import Limits, SocketServer, TlsListener
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.sasl import SaslListenerSettings, sasl_listener_settings
from kafkacore.server.services import BrokerConfigHolder, BrokerServices
from kafkacore.server.txn import TransactionCoordinator
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import BrokerRegistration
from kafkacore.zk.data import Endpoint as ZkEndpoint

__all__ = ["KafkaServer"]

ControlledShutdownRequest = APIS[ApiKey.CONTROLLED_SHUTDOWN].request.cls

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


_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def _certificate_principal(mapper: SslPrincipalMapper, ssl_object: Any) -> str:
    return peer_principal(ssl_object, mapper)


def _anonymous(ssl_object: Any) -> str:
    return "ANONYMOUS"


# Kafka loads these classes; kafkacore never loads a class named in a config, so any value
# other than Kafka's default is refused rather than silently ignored
_PLUGIN_CLASSES = {
    "principal.builder.class": (
        "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"
    ),
    "ssl.engine.factory.class": None,
    "sasl.server.callback.handler.class": None,
    "sasl.login.class": None,
    "sasl.login.callback.handler.class": None,
}


def _refuse_plugin_classes(config: BrokerConfig) -> None:
    for key, value in config.originals.items():
        base = key
        if key.startswith("listener.name."):
            base = next((c for c in _PLUGIN_CLASSES if key.endswith("." + c)), key)
        if base not in _PLUGIN_CLASSES or value in (None, ""):
            continue
        if str(value).strip() != (_PLUGIN_CLASSES[base] or ""):
            raise ConfigError(
                key, value, "kafkacore loads no plugin classes: only Kafka's default is accepted"
            )


def listener_security(
    config: BrokerConfig,
) -> tuple[dict[str, TlsListener], dict[str, SaslListenerSettings]]:
    """The TLS context of each SSL / SASL_SSL listener and the SASL settings of each SASL
    listener; raises ConfigError (key, value, constraint) for an unusable configuration.
    On SASL_SSL, ``ssl.client.auth`` applies only when set with the listener prefix (KIP-684)
    and the principal comes from SASL."""
    _refuse_plugin_classes(config)
    tls: dict[str, TlsListener] = {}
    sasl: dict[str, SaslListenerSettings] = {}
    for endpoint in config.listener_endpoints():
        name, protocol = endpoint.listener_name, endpoint.security_protocol
        if protocol in ("SSL", "SASL_SSL"):
            ssl_configs = listener_ssl_configs(config.originals, name)
            prefixed_client_auth = f"listener.name.{name.lower()}.ssl.client.auth"
            if protocol == "SASL_SSL" and prefixed_client_auth not in config.originals:
                ssl_configs.pop("ssl.client.auth", None)
            context = server_context(ssl_configs)
            if protocol == "SSL":
                mapper = SslPrincipalMapper.from_configs(ssl_configs)
                tls[name] = TlsListener(context, functools.partial(_certificate_principal, mapper))
            else:
                tls[name] = TlsListener(context, _anonymous)
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            sasl[name] = sasl_listener_settings(config, name)
    return tls, sasl


def reload_key_store(context: ssl.SSLContext, configs: dict[str, object]) -> None:
    """Replace ``context``'s certificate and key with the key store ``configs`` name,
    after checking that a whole new server context builds from them (ConfigError if not)."""
    server_context(configs)  # every check a listener's start-up makes
    store = _ssl._key_store(configs)
    assert store is not None
    where = _ssl.KEYSTORE_KEY if configs.get(_ssl.KEYSTORE_KEY) else _ssl.KEYSTORE_LOCATION
    _ssl._load_key_store(context, store, where)


_KEYSTORE_KEYS = (
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.key.password",
)


class _KeystoreReloader:
    """Kafka's dynamic keystore update: ``listener.name.<l>.ssl.keystore.*`` changed by
    AlterConfigs applies to the listener's new connections (the context's certificate and
    key are replaced in place; established connections keep theirs). A keystore that does
    not load is logged and the old one kept."""

    def __init__(self, config: BrokerConfig, tls: dict[str, TlsListener]) -> None:
        self._tls = tls
        self._applied = {name: self._keystore(config, name) for name in tls}

    @staticmethod
    def _keystore(config: BrokerConfig, listener: str) -> tuple[tuple[str, str], ...]:
        configs = listener_ssl_configs(config.originals, listener)
        return tuple((k, str(configs[k])) for k in _KEYSTORE_KEYS if configs.get(k) is not None)

    def __call__(self, config: BrokerConfig) -> None:
        for name, listener in self._tls.items():
            wanted = self._keystore(config, name)
            if wanted == self._applied[name]:
                continue
            try:
                reload_key_store(listener.context, listener_ssl_configs(config.originals, name))
            except Exception as exc:
                logger.error("Could not reload the keystore of listener %s: %s", name, exc)
                continue
            self._applied[name] = wanted
            logger.info("Reloaded the keystore of listener %s", name)


async def _run_on(executor: ThreadPoolExecutor, fn: Callable[[], int]) -> int:
    """``fn()`` on ``executor``, awaited (a producer id allocation writes the store)."""
    return await asyncio.get_running_loop().run_in_executor(executor, fn)


class KafkaServer:
    def __init__(self, config: BrokerConfig, **log_manager_options: Any) -> None:
        self.config = config
        self.node_id = config.node_id if config.node_id >= 0 else 1
        # the broker's logs keep producer state (idempotent producers, .snapshot files)
        self.failure_channel = LogDirFailureChannel()
        self._log_manager_options: dict[str, Any] = {
            "producer_state": True,
            "failure_channel": self.failure_channel,
            **log_manager_options,
        }
        self.logs: LogManager | None = None
        self.cleaner: LogCleaner | None = None
        self.services: BrokerServices | None = None
        self.socket_server: SocketServer | None = None
        self._prefix = f"[KafkaServer id={self.node_id}]"
        self.store: MetadataStore | None = None
        self.zk: KafkaZkClient | None = None
        self.controller: KafkaController | None = None
        #: set when the broker must stop on its own (every log directory failed); the
        #: process then exits with :attr:`exit_code`
        self.fatal = asyncio.Event()
        self.exit_code = 0
        self._dir_failure_tasks: set[asyncio.Task[None]] = set()

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

    @property
    def metrics(self) -> BrokerMetrics | None:
        """The broker's counters (the console's charts and ``/metrics``)."""
        return self.services.metrics if self.services is not None else None

    def _cleaner_upper_bound(self, tp: TopicPartition) -> int | None:
        """The high watermark of ``tp`` (``None``, the log end, before the replica
        manager knows the partition)."""
        replicas = self.replicas
        return replicas.high_watermark_of(tp) if replicas is not None else None

    @property
    def cluster_mode(self) -> bool:
        """``zookeeper.connect`` set: one broker of a cluster whose metadata lives in
        ZooKeeper, with a controller elected among the brokers."""
        return bool(self.config.zookeeper_connect)

    async def startup(self) -> None:
        config = self.config
        node_id = self.node_id
        logger.info("%s starting", self._prefix)
        # TLS contexts, SASL settings and the inter-broker login first: a bad security
        # config stops the start-up before anything is loaded
        tls, sasl = listener_security(config)
        inter_broker_security(config)
        cache = MetadataCache(controller_id=-1 if self.cluster_mode else node_id)
        store: MetadataStore
        cluster_id: str | None
        if self.cluster_mode:
            zk = await KafkaZkClient.connect(
                config.zookeeper_connect or "",
                session_timeout_ms=config.zookeeper_session_timeout_ms,
                connection_timeout_ms=(
                    config.zookeeper_connection_timeout_ms or config.zookeeper_session_timeout_ms
                ),
            )
            self.zk = zk
            zk_store = ZooKeeperMetadataStore(zk, asyncio.get_running_loop(), node_id, cache)
            # /cluster/id wins; meta.properties must agree with it (checked by the logs)
            cluster_id = await zk_store.start(uuid_to_base64(random_uuid()))
            store = zk_store
        else:
            metadata_dir = config.metadata_log_dir or config.log_dirs[0]
            os.makedirs(metadata_dir, exist_ok=True)
            store = EmbeddedMetadataStore(metadata_dir, node_id)
            cluster_id = store.cluster_id  # None: a new node
        self.store = store
        # dynamic broker configs stored by AlterConfigs apply from the start
        config = self.config = with_stored_dynamic_configs(config, store, node_id)
        configs = BrokerConfigHolder(config)
        logs = LogManager(
            broker_config=config,
            cluster_id=cluster_id,
            node_id=node_id,
            **self._log_manager_options,
        )
        logs.startup()
        self.logs = logs
        if config.log_cleaner_enable:
            # Compaction of `cleanup.policy=compact` topics, in background threads; the
            # manager pauses it around truncations and deletions.
            # Never past the high watermark; the log's first unstable offset bounds it too,
            # so the round stops at the last stable offset, as Kafka's cleaner does.
            cleaner = LogCleaner(
                logs.all_logs,
                CleanerConfig.from_broker(config),
                checkpoints=logs,
                upper_bound=self._cleaner_upper_bound,
            )
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

        def reload_dynamic_configs() -> None:
            # another broker or a tool changed this broker's dynamic configs in the store
            per_broker = store.broker_configs(str(node_id))
            default = store.broker_configs(DEFAULT_ENTITY)
            configs.update(configs.current.with_dynamic(per_broker, default, validate=False))

        replicas.dynamic_config_reloader = reload_dynamic_configs
        # the replica manager hears of a change before the cache shows it
        store.add_listener(replicas)
        if isinstance(store, ZooKeeperMetadataStore):
            cache.follow_configs(store, store.topic_configs(), (str(node_id), DEFAULT_ENTITY))
            replicas.topic_config_loader = store.load_topic_config
        else:
            cache.follow(store, (str(node_id), DEFAULT_ENTITY))
        if not self.cluster_mode:
            replicas.load()  # a cluster's partitions arrive with the controller's LeaderAndIsr
        # its __consumer_offsets appends run on the I/O threads, as the other writes
        groups = GroupCoordinator(config, replicas, io_executor=io_executor)
        if not self.cluster_mode:
            groups.load()  # synchronous: no COORDINATOR_LOAD_IN_PROGRESS window
        groups.start()
        # __transaction_state: new transactional ids take producer ids from the store
        txns = TransactionCoordinator(
            config,
            replicas,
            functools.partial(_run_on, io_executor, store.allocate_producer_id),
            io_executor=io_executor,
        )
        if not self.cluster_mode:
            txns.load()
        txns.start()

        def on_leadership_change(
            leaders: list[tuple[TopicPartition, int]], followers: list[tuple[TopicPartition, int]]
        ) -> None:  # KafkaApis' onLeadershipChange: both coordinators
            groups.on_leadership_change(leaders, followers)
            txns.on_leadership_change(leaders, followers)

        replicas.on_leadership_change = on_leadership_change
        quotas = ClientQuotaManager()
        store.add_listener(quotas)
        quotas.load(store.quota_configs())
        services = BrokerServices(
            node_id=node_id,
            configs=configs,
            metadata_cache=cache,
            metadata_store=store,
            replica_manager=replicas,
            group_coordinator=groups,
            txn_coordinator=txns,
            io_executor=io_executor,
            client_quotas=quotas,
            controller=(KafkaController(node_id, self.zk, config) if self.zk is not None else None),
            authorizer=build_authorizer(config, store),
            fetch_sessions=FetchSessionCache(config.max_incremental_fetch_session_cache_slots),
        )
        self.controller = services.controller
        self.services = services
        txns.markers.attach(services)
        follow_scram_credentials(store, services.scram_credentials)
        endpoints = config.listener_endpoints()
        if tls:
            configs.add_listener(_KeystoreReloader(config, tls))
        server = SocketServer(
            RequestChannel(services, sasl),
            [(e.listener_name, e.host, e.port) for e in endpoints],
            _limits(config),
            {e.listener_name: e.security_protocol for e in endpoints},
            tls,
        )
        server.on_request_done = services.metrics.record_request
        await server.start()
        self.socket_server = server
        loop = asyncio.get_running_loop()

        def on_failure(log_dir: str) -> None:  # any thread, maybe under a log's lock
            loop.call_soon_threadsafe(self._on_log_dir_failure, log_dir)

        self.failure_channel.add_listener(on_failure)
        if self.cluster_mode:
            await self._join_cluster(services)
        else:
            # the broker registration (Kafka: /brokers/ids/<id>), once the listeners are
            # bound: every advertised listener, so that each request is answered with the
            # endpoints of the listener it came through
            registered = tuple(
                (
                    e.listener_name,
                    e.host or socket.getfqdn(),
                    e.port or server.bound_ports.get(e.listener_name, self.bound_port),
                    _PROTOCOL_IDS[e.security_protocol],
                )
                for e in config.advertised_endpoints()
            )
            _, host, port, _ = registered[0]
            cache.register_broker(BrokerInfo(node_id, host, port, config.broker_rack, registered))
        logger.info("%s started (cluster id %s)", self._prefix, store.cluster_id)

    def _on_log_dir_failure(self, log_dir: str) -> None:
        task = asyncio.get_running_loop().create_task(
            self._handle_log_dir_failure(log_dir), name=f"log-dir-failure-{log_dir}"
        )
        self._dir_failure_tasks.add(task)
        task.add_done_callback(self._dir_failure_tasks.discard)

    async def _handle_log_dir_failure(self, log_dir: str) -> None:
        """Kafka's ``ReplicaManager.handleLogDirFailure`` for ``log_dir``, on the loop."""
        services, logs = self.services, self.logs
        if services is None or logs is None:
            return
        try:
            await services.run_io(services.replica_manager.handle_log_dir_failure, log_dir)
        except Exception:
            logger.exception("%s handling the failure of log dir %s failed", self._prefix, log_dir)
        if not logs.online_log_dirs:
            logger.error(
                "%s Shutdown broker because all log dirs in %s have failed",
                self._prefix,
                ", ".join(logs.log_dirs),
            )
            self.exit_code = 1
            self.fatal.set()
            return
        if self.zk is not None:
            try:
                await self.zk.create_log_dir_event_notification(self.node_id)
            except Exception:
                logger.exception("%s could not write the log dir event notification", self._prefix)
            else:
                logger.info("%s wrote a log dir event notification for %s", self._prefix, log_dir)

    def _registration(self) -> BrokerRegistration:
        """``/brokers/ids/<id>``: every advertised endpoint, with the port actually bound
        where the config says 0."""
        assert self.socket_server is not None
        bound = self.socket_server.bound_ports
        endpoints = tuple(
            ZkEndpoint(
                e.listener_name,
                e.host or socket.getfqdn(),
                e.port or bound.get(e.listener_name, self.bound_port),
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

    async def _join_cluster(self, services: BrokerServices) -> None:
        """Kafka's ZooKeeper-mode start-up after the listeners are bound: register
        ``/brokers/ids/<id>`` (its czxid is this broker's epoch), then start the
        controller (which campaigns for ``/controller``)."""
        zk = self.zk
        assert zk is not None
        listener, _protocol = self.config.inter_broker_listener()
        services.replica_manager.start_replication(listener=listener, run_io=services.run_io)
        _count_replication_in(services)
        security = inter_broker_security(self.config)
        for manager in (
            services.replica_manager.fetcher_manager,
            services.replica_manager.alter_partition_manager,
        ):
            if manager is not None and hasattr(manager, "security"):
                manager.security = security
        if self.logs is not None:  # retention never deletes above the high watermark
            self.logs.high_watermark = services.replica_manager.high_watermark_of
        epoch = await zk.register_broker(self._registration())
        services.replica_manager.broker_epoch = epoch
        logger.info("%s registered in ZooKeeper with broker epoch %d", self._prefix, epoch)
        assert services.controller is not None

        async def register_again() -> int:
            # a new ZooKeeper session: a new /brokers/ids/<id>, hence a new broker epoch
            new_epoch = await zk.register_broker(self._registration())
            services.replica_manager.broker_epoch = new_epoch
            return new_epoch

        services.controller.register_broker = register_again
        await services.controller.startup()

    async def _controlled_shutdown(self, services: BrokerServices) -> None:
        """Kafka's ``KafkaServer.controlledShutdown``: ask the controller to move this
        broker's leaderships away (ControlledShutdown v3 with the broker epoch) and retry
        until none remain, ``controlled.shutdown.max.retries`` times at most; then the
        shutdown goes on either way (a hard failure is what the cluster survives)."""
        config = self.config
        if not config.controlled_shutdown_enable:
            return
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
                    request = ControlledShutdownRequest(
                        broker_id=self.node_id, broker_epoch=broker_epoch
                    )
                    response = await client.send(ApiKey.CONTROLLED_SHUTDOWN, 3, request)
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

    async def shutdown(self) -> None:
        logger.info("%s shutting down", self._prefix)
        services = self.services
        if self.controller is not None and services is not None:
            await self._controlled_shutdown(services)
        if self.socket_server is not None:
            await self.socket_server.stop_accepting()
        if services is not None:
            await services.replica_manager.shutdown_replication()
            await services.group_coordinator.stop()
            await services.txn_coordinator.stop()
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
        if self.controller is not None:
            await self.controller.shutdown()
        if isinstance(self.store, ZooKeeperMetadataStore):
            self.store.stop()
        if self.zk is not None:
            await self.zk.close()  # the ephemeral /brokers/ids/<id> goes with the session
        logger.info("%s shut down completed", self._prefix)


def _count_replication_in(services: BrokerServices) -> None:
    """The replica fetchers' appends counted in the broker's metrics."""
    from kafkacore.server.replica_fetcher import ReplicaFetcherManager

    fetchers = services.replica_manager.fetcher_manager
    if isinstance(fetchers, ReplicaFetcherManager):
        fetchers.on_appended = services.metrics.record_replication_in
