"""The broker (Kafka's ``KafkaServer``/``BrokerServer``): its components assembled for
its mode by :mod:`kafkacore.server.assembly` (a single node with the controller in the
same process, or a broker of a ZooKeeper cluster), then the listeners (TLS and SASL per
listener, the request channel over the socket server), started and stopped in order.

Start-up: the listeners' security is checked first (a bad config stops the start-up
before anything is loaded); the assembly loads the metadata, the logs (recovering after
an unclean shutdown) and builds the :class:`~kafkacore.server.services.BrokerServices`
once; then the listeners open, the broker joins (:mod:`kafkacore.server.membership`:
registers its endpoints, and in a cluster starts replicating and its controller) and
``[KafkaServer id=N] started`` is logged.

Shutdown (:meth:`KafkaServer.shutdown`): a cluster broker hands its leaderships over
(controlled shutdown); stop accepting, let connections finish their request (1 s), wait
for the I/O threads, checkpoint high watermarks, then ``LogManager.shutdown()`` (flush,
checkpoints, clean-shutdown marker); then the controller, the store and the sessions.

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
import ssl
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.config.defs import ConfigError
from kafkacore.config.listeners import parse_csv_map
from kafkacore.controller.controller import KafkaController
from kafkacore.log import LogManager
from kafkacore.log.cleaner import LogCleaner
from kafkacore.log.dir_failure import LogDirFailureChannel
from kafkacore.metadata import MetadataStore
from kafkacore.net import inter_broker_security
from kafkacore.security import ssl as _ssl
from kafkacore.security.ssl import (
    SslPrincipalMapper,
    listener_ssl_configs,
    peer_principal,
    server_context,
)
from kafkacore.server.assembly import single_node, zookeeper_cluster
from kafkacore.server.channel import RequestChannel
from kafkacore.server.group import GroupCoordinator
from kafkacore.server.membership import Membership
from kafkacore.server.metrics import BrokerMetrics
from kafkacore.server.network import Limits, SocketServer, TlsListener
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.sasl import SaslListenerSettings, sasl_listener_settings
from kafkacore.server.services import BrokerServices

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


def _certificate_principal(mapper: SslPrincipalMapper, ssl_object: ssl.SSLObject) -> str:
    return peer_principal(ssl_object, mapper)


def _anonymous(ssl_object: ssl.SSLObject) -> str:
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


class KafkaServer:
    """A kafkacore broker (Kafka's ``KafkaServer``): :meth:`startup` has the components
    assembled for its mode (:mod:`kafkacore.server.assembly`: a single node, or a broker
    of a ZooKeeper cluster when ``zookeeper.connect`` is set), binds the listeners and
    joins; :meth:`shutdown` stops them in order. Event loop thread only."""

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
        self.controller: KafkaController | None = None
        self.membership: Membership | None = None
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

    @property
    def cluster_mode(self) -> bool:
        """``zookeeper.connect`` set: one broker of a cluster whose metadata lives in
        ZooKeeper, with a controller elected among the brokers."""
        return bool(self.config.zookeeper_connect)

    async def startup(self) -> None:
        logger.info("%s starting", self._prefix)
        # TLS contexts, SASL settings and the inter-broker login first: a bad security
        # config stops the start-up before anything is loaded
        tls, sasl = listener_security(self.config)
        inter_broker_security(self.config)
        log_manager = functools.partial(LogManager, **self._log_manager_options)
        if self.cluster_mode:
            broker = await zookeeper_cluster(self.config, self.node_id, log_manager)
        else:
            broker = single_node(self.config, self.node_id, log_manager)
        config = self.config = broker.config
        services = self.services = broker.services
        store = self.store = services.metadata_store
        self.logs, self.cleaner, self.controller = broker.logs, broker.cleaner, services.controller
        self.membership = broker.membership
        endpoints = config.listener_endpoints()
        if tls:
            services.configs.add_listener(_KeystoreReloader(config, tls))
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
        await broker.membership.join(services, server.bound_ports)
        tiering = services.replica_manager.tiering
        if tiering is not None:  # its metadata client connects to this broker's listener
            tiering.start(self._tiering_bootstrap(tiering.metadata_listener()))
        logger.info("%s started (cluster id %s)", self._prefix, store.cluster_id)

    def _tiering_bootstrap(self, listener: str) -> str:
        """``host:port`` of this broker's own ``listener``."""
        assert self.socket_server is not None
        endpoint = next(
            (e for e in self.config.listener_endpoints() if e.listener_name == listener), None
        )
        port = self.socket_server.bound_ports.get(listener, self.bound_port)
        host = endpoint.host if endpoint is not None and endpoint.host else "127.0.0.1"
        return f"{host}:{port}"

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
            await services.run_io(
                services.replica_manager.handle_log_dir_failure,
                log_dir,
                services.on_leadership_change,
            )
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
        if self.membership is not None:
            await self.membership.report_log_dir_failure(log_dir)

    async def shutdown(self) -> None:
        logger.info("%s shutting down", self._prefix)
        services = self.services
        if self.membership is not None and services is not None:
            await self.membership.leave(services)
        if self.socket_server is not None:
            await self.socket_server.stop_accepting()
        if services is not None and services.replica_manager.tiering is not None:
            await asyncio.to_thread(services.replica_manager.tiering.close)
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
        if self.membership is not None:
            await self.membership.close()
        logger.info("%s shut down completed", self._prefix)
