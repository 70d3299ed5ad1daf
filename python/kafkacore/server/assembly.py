"""The broker assembled (Kafka's ``KafkaServer.startup``, ``BrokerServer.startup`` in
KRaft): every component built once, in the order of what it needs, and given its
collaborators in its constructor. One small function per mode:

* :func:`single_node` (the default): the embedded metadata store under the data
  directory; this node is the controller and leads every partition, loaded at start-up.
* :func:`zookeeper_cluster` (``zookeeper.connect`` set): the metadata in ZooKeeper at
  Kafka's paths, a :class:`~kafkacore.controller.KafkaController` that campaigns for
  ``/controller``; the partitions arrive with its LeaderAndIsr.
* :func:`kraft_controller` (``process.roles`` has ``controller``): the Raft replica of
  ``__cluster_metadata`` in ``metadata.log.dir`` (formatted by ``kafkacore storage
  format``), the :class:`~kafkacore.controller.kraft.QuorumController` over it and the
  controller listener's request processor; run by
  :class:`~kafkacore.server.controller_server.ControllerServer`.
* :func:`kraft_broker` (``process.roles`` has ``broker``): the broker follows
  ``__cluster_metadata`` as an observer of the controller quorum; its metadata store is
  the image replayed from that log (:mod:`kafkacore.server.kraft`), whose deltas go to the
  replica manager (``apply_delta``, the same partition code LeaderAndIsr drives), the
  metadata cache, the config, quota, ACL and SCRAM followers and the coordinators; it
  registers and heartbeats to the active controller
  (:class:`~kafkacore.server.kraft.membership.KRaftMembership`) and forwards the requests
  the controller handles. The controller of a combined node (``process.roles=broker,
  controller``) is assembled beside it by the controller's own function; the broker half
  is this one.

The socket server and the listeners' security stay with :class:`~kafkacore.server.KafkaServer`,
which runs what is assembled here: it binds the listeners, then calls the mode's
``membership.join``.

Thread-safety: event loop thread, at start-up.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.config.listeners import Endpoint
from kafkacore.controller import KafkaController
from kafkacore.controller.kraft import ControllerRegistrationInfo, QuorumController
from kafkacore.features import VersionRange, supported_features, zookeeper_supported_features
from kafkacore.log import LogManager
from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from kafkacore.log.cleaner import CleanerConfig, LogCleaner
from kafkacore.log.manager import CleanShutdownFile
from kafkacore.metadata import (
    EmbeddedMetadataStore,
    MetadataCache,
    MetadataListener,
    MetadataStore,
)
from kafkacore.metadata.image import MetadataLoader
from kafkacore.metadata.image.cluster import Endpoint as ImageEndpoint
from kafkacore.metadata.storage import BootstrapMetadata, read_formatted_directories
from kafkacore.metadata.zookeeper import ZooKeeperMetadataStore
from kafkacore.net import (
    ControllerChannel,
    NodeClient,
    broker_client,
    controller_security,
    node_client_factory,
)
from kafkacore.protocol import ApiKey, ErrorCode
from kafkacore.protocol.messages.controller_registration import (
    ControllerRegistrationResponse,
)
from kafkacore.raft import (
    Endpoints,
    FileQuorumStateStore,
    QuorumConfig,
    RaftClient,
    VoterSet,
    bootstrap_nodes,
    parse_voters,
)
from kafkacore.raft.driver import RaftDriver
from kafkacore.raft.metadata_log import MetadataLog
from kafkacore.raft.types import Endpoint as RaftEndpoint
from kafkacore.server.acl_sync import build_authorizer
from kafkacore.server.client_quotas import ClientQuotaManager
from kafkacore.server.controller_apis import ControllerApis
from kafkacore.server.coordinator_writer import CoordinatorPartitionWriter
from kafkacore.server.credential_sync import follow_scram_credentials
from kafkacore.server.fetch_session import FetchSessionCache
from kafkacore.server.group import GroupCoordinator
from kafkacore.server.group_configs import GroupConfigs
from kafkacore.server.handlers.configs import DEFAULT_ENTITY, with_stored_dynamic_configs
from kafkacore.server.kraft.controller_requests import ChannelControllerRequests
from kafkacore.server.kraft.features import ImageFeatures
from kafkacore.server.kraft.forwarding import ForwardingManager
from kafkacore.server.kraft.lifecycle import SUPPORTED_FEATURES, BrokerLifecycleManager
from kafkacore.server.kraft.membership import KRaftMembership
from kafkacore.server.kraft.publisher import BrokerMetadataPublisher
from kafkacore.server.kraft.raft_manager import BrokerRaftManager
from kafkacore.server.kraft.store import KRaftMetadataStore
from kafkacore.server.membership import Membership, SingleNode, ZooKeeperMembership
from kafkacore.server.metrics import BrokerMetrics
from kafkacore.server.replica_manager import ReplicaManager, TxnMarker
from kafkacore.server.services import BrokerConfigHolder, BrokerServices, FeatureSource, Forwarder
from kafkacore.server.share.coordinator import ShareCoordinator
from kafkacore.server.share.manager import SharePartitionManager
from kafkacore.server.share.persister import BrokerClients, SharePersister
from kafkacore.server.share.services import ShareServices
from kafkacore.server.tiering import TieredStorage
from kafkacore.server.txn import TransactionCoordinator
from kafkacore.server.txn.markers import TransactionMarkerChannelManager
from kafkacore.zk.client import KafkaZkClient

__all__ = [
    "AssembledBroker",
    "AssembledController",
    "BrokerConfigHandler",
    "LogManagerFactory",
    "kraft_broker",
    "kraft_controller",
    "single_node",
    "zookeeper_cluster",
]

logger = logging.getLogger("kafkacore.server")

LogManagerFactory = Callable[..., LogManager]
"""``LogManager`` with the broker's own options bound (producer state, the log directory
failure channel, a backend); called with ``broker_config``, ``cluster_id``, ``node_id``."""


@dataclass(frozen=True)
class AssembledBroker:
    """What :class:`~kafkacore.server.KafkaServer` runs: the config in force at start-up
    (with the stored dynamic configs), the logs, the cleaner, the services, and the mode's
    membership."""

    config: BrokerConfig
    logs: LogManager
    cleaner: LogCleaner | None
    services: BrokerServices
    membership: Membership


class BrokerConfigHandler(MetadataListener):
    """Kafka's ``BrokerConfigHandler``: this broker's dynamic configs changed in the store
    (its id or the cluster default, by another broker or a tool): they are read again and
    put in force through the :class:`BrokerConfigHolder` (whose listeners, the replica
    manager's ``reconfigure`` among them, see the new config)."""

    def __init__(self, store: MetadataStore, configs: BrokerConfigHolder, node_id: int) -> None:
        self.store = store
        self.configs = configs
        self.entity = str(node_id)

    def on_broker_configs_changed(self, entity: str, configs: Mapping[str, str]) -> None:
        if entity not in (self.entity, DEFAULT_ENTITY):
            return
        per_broker = self.store.broker_configs(self.entity)
        default = self.store.broker_configs(DEFAULT_ENTITY)
        self.configs.update(self.configs.current.with_dynamic(per_broker, default, validate=False))


def single_node(
    config: BrokerConfig, node_id: int, log_manager: LogManagerFactory
) -> AssembledBroker:
    """One node: metadata in ``metadata.log.dir`` (else the first log dir); the stored
    topics get their logs and partitions now, the coordinators load synchronously (no
    COORDINATOR_LOAD_IN_PROGRESS window)."""
    metadata_dir = config.metadata_log_dir or config.log_dirs[0]
    os.makedirs(metadata_dir, exist_ok=True)
    store = EmbeddedMetadataStore(metadata_dir, node_id)
    cache = MetadataCache(controller_id=node_id)
    # dynamic broker configs stored by AlterConfigs apply from the start
    config = with_stored_dynamic_configs(config, store, node_id)
    logs = _logs(config, store, store.cluster_id, node_id, log_manager)  # None: a new node
    configs = BrokerConfigHolder(config)
    replicas, io_executor, metrics = _replica_manager(configs, logs, store, cache, node_id)
    cleaner = _cleaner(config, logs, replicas)
    cache.follow(store, (str(node_id), DEFAULT_ENTITY))
    replicas.load()
    services = _services(
        configs,
        store,
        replicas,
        io_executor,
        metrics,
        controller=None,
        supported=supported_features(config.unstable_feature_versions_enable),
    )
    services.group_coordinator.load()
    services.txn_coordinator.load()
    if services.share is not None:
        services.share.coordinator.load()
    _start_coordinators(services)
    return AssembledBroker(config, logs, cleaner, services, SingleNode(config, node_id, cache))


async def zookeeper_cluster(
    config: BrokerConfig, node_id: int, log_manager: LogManagerFactory
) -> AssembledBroker:
    """One broker of a ZooKeeper-mode cluster: ``/cluster/id`` wins (``meta.properties``
    must agree, checked by the logs); the topic configs are read from ZooKeeper, the
    partitions come with the controller's LeaderAndIsr; the controller this broker runs
    (active or not) is one of the services."""
    zk = await KafkaZkClient.connect(
        config.zookeeper_connect or "",
        session_timeout_ms=config.zookeeper_session_timeout_ms,
        connection_timeout_ms=(
            config.zookeeper_connection_timeout_ms or config.zookeeper_session_timeout_ms
        ),
    )
    cache = MetadataCache(controller_id=-1)
    store = ZooKeeperMetadataStore(zk, asyncio.get_running_loop(), node_id, cache)
    try:
        cluster_id = await store.start(uuid_to_base64(random_uuid()))
        config = with_stored_dynamic_configs(config, store, node_id)
        logs = _logs(config, store, cluster_id, node_id, log_manager)
        configs = BrokerConfigHolder(config)
        replicas, io_executor, metrics = _replica_manager(
            configs, logs, store, cache, node_id, topic_config_loader=store.load_topic_config
        )
        cleaner = _cleaner(config, logs, replicas)
        cache.follow_configs(store, store.topic_configs(), (str(node_id), DEFAULT_ENTITY))
        logs.high_watermark = replicas.high_watermark_of  # retention stays below the HW
        membership = ZooKeeperMembership(config, node_id, zk, store)
        controller = KafkaController(node_id, zk, config, register_broker=membership.register_again)
        services = _services(
            configs,
            store,
            replicas,
            io_executor,
            metrics,
            controller,
            supported=zookeeper_supported_features(config.unstable_feature_versions_enable),
        )
    except BaseException:
        store.stop()
        await zk.close()
        raise
    _start_coordinators(services)
    return AssembledBroker(config, logs, cleaner, services, membership)


@dataclass(frozen=True)
class AssembledController:
    """What :class:`~kafkacore.server.controller_server.ControllerServer` runs: the
    metadata log, the Raft replica and its driver, the quorum controller, and the
    controller listener's request processor with the endpoints to bind."""

    config: BrokerConfig
    cluster_id: str
    metadata_log: MetadataLog
    raft: RaftDriver
    controller: QuorumController
    apis: ControllerApis
    endpoints: list[Endpoint]


def kraft_controller(
    config: BrokerConfig, *, rng: random.Random | None = None
) -> AssembledController:
    """The controller half of a KRaft node (Kafka's ``SharedServer`` Raft manager and
    ``ControllerServer``): ``meta.properties`` of every directory must agree (formatted
    with ``kafkacore storage format``, or Kafka's ``kafka-storage format``), the metadata
    directory's ``directory.id`` is this replica's, ``bootstrap.checkpoint`` holds what an
    empty log starts with. ``StorageError`` (Kafka's words) for an unformatted directory."""
    node_id = config.node_id
    metadata_dir = config.metadata_log_dir or config.log_dirs[0]
    cluster_id, directory_id = read_formatted_directories(config, metadata_dir)
    names = config.controller_listener_names or ["CONTROLLER"]
    listener = names[0]
    endpoints = [e for e in config.listener_endpoints() if e.listener_name in names]
    local = Endpoints.of(
        *(RaftEndpoint(e.listener_name, e.host or "localhost", e.port) for e in endpoints)
    )
    voters = parse_voters(config.controller_quorum_voters)
    static_voters = VoterSet.from_addresses(listener, voters)
    bootstrap = bootstrap_nodes(voters, config.controller_quorum_bootstrap_servers)
    metadata_log = MetadataLog(
        metadata_dir,
        segment_bytes=config.get("metadata.log.segment.bytes"),
        segment_ms=config.get("metadata.log.segment.ms"),
    )
    client = RaftClient(
        node_id=node_id,
        directory_id=directory_id,
        cluster_id=cluster_id,
        log=metadata_log,
        store=FileQuorumStateStore.in_dir(metadata_log.directory),
        config=QuorumConfig.from_props(config.originals),
        static_voters=static_voters,
        bootstrap_servers=bootstrap,
        listener=listener,
        local_listeners=local,
        rng=rng,
        can_become_voter=True,
    )
    raft = RaftDriver(client, host="", port=0, listen=False, client_id=f"raft-client-{node_id}")
    registration = ControllerRegistrationInfo(
        incarnation_id=uuid.uuid4(),
        listeners=tuple(
            ImageEndpoint(
                e.listener_name, e.host or "localhost", e.port, _protocol_id(e.security_protocol)
            )
            for e in endpoints
        ),
    )
    controller = QuorumController(
        node_id=node_id,
        cluster_id=cluster_id,
        config=config,
        raft=raft,
        bootstrap=BootstrapMetadata.read(metadata_dir).records,
        registration=registration,
        send_registration=functools.partial(_send_registration, config, raft),
    )
    return AssembledController(
        config,
        cluster_id,
        metadata_log,
        raft,
        controller,
        ControllerApis(controller, raft),
        endpoints,
    )


async def _send_registration(
    config: BrokerConfig, raft: RaftDriver, leader_id: int, request: Any
) -> None:
    """A standby controller's ControllerRegistration, sent to the active controller on
    the quorum's listener (Kafka's ``ControllerRegistrationManager``)."""
    address = raft.client.quorum.leader_endpoints.address(raft.listener)
    if address is None:
        return
    client = NodeClient(
        address[0],
        address[1],
        client_id=f"controller-{config.node_id}-registration",
        request_timeout_s=config.controller_socket_timeout_ms / 1000,
    )
    try:
        response = await client.send(ApiKey.CONTROLLER_REGISTRATION, 0, request)
        assert isinstance(response, ControllerRegistrationResponse)
        if response.error_code:
            logger.info(
                "ControllerRegistration answered %s: %s",
                ErrorCode(response.error_code).name,
                response.error_message,
            )
    except (ConnectionError, TimeoutError) as exc:
        logger.info("ControllerRegistration to controller %d failed: %s", leader_id, exc)
    finally:
        await client.close()


async def kraft_broker(
    config: BrokerConfig,
    node_id: int,
    log_manager: LogManagerFactory,
    *,
    shared_raft: RaftDriver | None = None,
) -> AssembledBroker:
    """The broker of a KRaft node (Kafka's ``BrokerServer.startup`` up to its listeners):
    the storage must be formatted (``meta.properties`` v1 with the cluster id, as
    ``kafka-storage format`` writes it); the metadata log is followed as an observer from
    now on; the logs load; the store, cache, replica manager and coordinators are built
    and the metadata publisher installed (it publishes once the broker caught up); the
    dynamic configs arrive with the first publication. What joins the cluster - the
    registration, the heartbeats, replication - is the membership's, after the listeners
    are bound. ``shared_raft``: a combined node's controller replica, which the broker
    reads instead of running an observer of its own (Kafka's ``SharedServer``)."""
    loop = asyncio.get_running_loop()
    loader = MetadataLoader(on_fault=_log_metadata_fault, require_metadata_version=True)
    raft = (
        BrokerRaftManager.observer(config, node_id, loader)
        if shared_raft is None
        else BrokerRaftManager.shared(config, shared_raft, loader)
    )
    timeout_s = config.request_timeout_ms / 1000
    security = controller_security(config)
    backoff_s = max(0.01, int(config.originals.get("retry.backoff.ms", 100)) / 1000)

    def channel(name: str) -> ControllerChannel:
        # Kafka's separate NodeToControllerChannelManagers: heartbeats never queue behind
        # a forwarded request
        client_id = f"broker-{node_id}-{name}"
        factory = node_client_factory(client_id, request_timeout_s=timeout_s, security=security)
        return ControllerChannel(raft, factory, retry_backoff_s=backoff_s, name=client_id)

    heartbeat_channel, alter_channel, forwarding_channel = (
        channel("heartbeat"),
        channel("alter-partition"),
        channel("forwarding"),
    )
    previous_epoch = _previous_broker_epoch(config)  # before the logs load (and drop it)
    cache = MetadataCache(controller_id=-1)
    requests = ChannelControllerRequests(
        forwarding_channel, loop, node_id, lambda: replicas.broker_epoch, timeout_s
    )
    store = KRaftMetadataStore(raft.cluster_id, requests)
    logs = _logs(config, store, raft.cluster_id, node_id, log_manager)
    configs = BrokerConfigHolder(config)
    replicas, io_executor, metrics = _replica_manager(configs, logs, store, cache, node_id)
    cleaner = _cleaner(config, logs, replicas)
    cache.follow_configs(store, {}, (str(node_id), DEFAULT_ENTITY))
    logs.high_watermark = replicas.high_watermark_of  # retention stays below the HW
    services = _services(
        configs,
        store,
        replicas,
        io_executor,
        metrics,
        controller=None,
        cluster_mode=True,
        supported={name: VersionRange(lo, hi) for name, (lo, hi) in SUPPORTED_FEATURES.items()},
        forwarding=ForwardingManager(forwarding_channel, timeout_s),
        features=ImageFeatures(store),
    )
    publisher = BrokerMetadataPublisher(
        node_id, store, cache, replicas, services.on_leadership_change, loop
    )
    loader.install_publisher(publisher)
    directory_ids = {d: i for d in logs.log_dirs if (i := logs.directory_id(d)) is not None}
    lifecycle = BrokerLifecycleManager(
        config,
        node_id,
        heartbeat_channel,
        cluster_id=raft.cluster_id,
        log_dirs=list(directory_ids.values()),
        highest_metadata_offset=lambda: loader.image.offset,
        previous_broker_epoch=previous_epoch,
    )
    membership = KRaftMembership(
        config,
        node_id,
        raft,
        lifecycle,
        alter_channel,
        (heartbeat_channel, alter_channel, forwarding_channel),
        publisher.first_publish,
        directory_ids,
    )
    await raft.start()
    _start_coordinators(services)
    return AssembledBroker(config, logs, cleaner, services, membership)


def _previous_broker_epoch(config: BrokerConfig) -> int:
    """The broker epoch of the last clean shutdown (KIP-966), -1 unless every log
    directory kept one (Kafka's ``readBrokerEpochFromCleanShutdownFiles``)."""
    epochs = [CleanShutdownFile(d).read() for d in config.log_dirs]
    return max(e for e in epochs if e is not None) if epochs and None not in epochs else -1


def _log_metadata_fault(what: str, exc: Exception) -> None:
    """A broker's metadata loading fault is not fatal (Kafka's
    ``metadataLoadingFaultHandler``): the record is skipped, the error logged."""
    logger.error("Metadata loading fault: %s: %s", what, exc)


def _protocol_id(protocol: str) -> int:
    return {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}[protocol]


# -- the steps every mode takes ----------------------------------------------------------------


def _logs(
    config: BrokerConfig,
    store: MetadataStore,
    cluster_id: str | None,
    node_id: int,
    log_manager: LogManagerFactory,
) -> LogManager:
    """The log manager, started (the logs loaded, recovered after an unclean shutdown,
    and ``meta.properties`` agreeing on the cluster id), and that id in the store."""
    logs = log_manager(broker_config=config, cluster_id=cluster_id, node_id=node_id)
    logs.startup()
    if logs.cluster_id is not None:
        store.set_cluster_id(logs.cluster_id)
    return logs


def _replica_manager(
    configs: BrokerConfigHolder,
    logs: LogManager,
    store: MetadataStore,
    cache: MetadataCache,
    node_id: int,
    *,
    topic_config_loader: Callable[[str], Awaitable[None]] | None = None,
) -> tuple[ReplicaManager, ThreadPoolExecutor, BrokerMetrics]:
    """The replica manager over the logs, with the I/O threads (``num.io.threads``) its
    writes and the coordinators' run on, the metrics its fetchers count in and the
    tiered storage when the broker has it; it
    follows the store before the cache does (a handler that finds a topic in the cache
    finds its partitions), and so do this broker's dynamic configs."""
    config = configs.current
    io_executor = ThreadPoolExecutor(
        max_workers=max(1, config.num_io_threads), thread_name_prefix="kafkacore-io"
    )
    metrics = BrokerMetrics()
    # tiered storage (KIP-405): None without remote.log.storage.system.enable; started by
    # the server once its listeners are bound (its metadata client connects to them)
    tiering = TieredStorage.build(
        config, logs, lambda tp: replicas.high_watermark_of(tp) or 0, node_id=node_id
    )
    replicas = ReplicaManager(
        lambda: configs.current,
        logs,
        store,
        cache,
        node_id,
        io_executor,
        topic_config_loader=topic_config_loader,
        metrics=metrics,
        tiering=tiering,
    )
    configs.add_listener(replicas.reconfigure)
    store.add_listener(replicas)
    store.add_listener(BrokerConfigHandler(store, configs, node_id))
    return replicas, io_executor, metrics


def _cleaner(config: BrokerConfig, logs: LogManager, replicas: ReplicaManager) -> LogCleaner | None:
    """Compaction of ``cleanup.policy=compact`` topics in background threads
    (``log.cleaner.enable``); the log manager pauses it around truncations and deletions.
    Never past the high watermark; the log's first unstable offset bounds it too, so a
    round stops at the last stable offset, as Kafka's cleaner does."""
    if not config.log_cleaner_enable:
        return None
    cleaner = LogCleaner(
        logs.all_logs,
        CleanerConfig.from_broker(config),
        checkpoints=logs,
        upper_bound=replicas.high_watermark_of,
    )
    logs.attach_cleaner(cleaner)
    cleaner.start()
    return cleaner


def _services(
    configs: BrokerConfigHolder,
    store: MetadataStore,
    replicas: ReplicaManager,
    io_executor: ThreadPoolExecutor,
    metrics: BrokerMetrics,
    controller: KafkaController | None,
    *,
    supported: Mapping[str, VersionRange],
    cluster_mode: bool | None = None,
    forwarding: Forwarder | None = None,
    features: FeatureSource | None = None,
) -> BrokerServices:
    """The coordinators (``__consumer_offsets`` and ``__transaction_state`` appends on the
    I/O threads; new transactional ids take producer ids from the store), the client
    quotas, the authorizer and the SCRAM credentials (both following the store), as the
    handlers' :class:`BrokerServices`."""
    config = configs.current
    node_id, cache = replicas.node_id, replicas.cache
    in_cluster = controller is not None if cluster_mode is None else cluster_mode
    share = _share_services(configs, store, replicas, io_executor, in_cluster)
    groups = GroupCoordinator(
        config,
        replicas,
        io_executor=io_executor,
        cluster_mode=cluster_mode,
        consumer_settings=share.group_configs.consumer,
        share_settings=share.group_configs.share,
        share_state=share.persister,
    )

    async def write_markers_here(marker: TxnMarker) -> list[int]:
        # the partitions led here, as the WriteTxnMarkers handler writes them
        [codes] = await replicas.append_txn_markers(
            [marker], configs.current.request_timeout_ms, groups.on_transaction_completed
        )
        return codes

    markers = TransactionMarkerChannelManager(
        node_id,
        cache,
        replicas,
        lambda broker: broker_client(
            configs.current, broker, f"broker-{node_id}-txn-marker-sender"
        ),
        local_writer=write_markers_here,
    )
    txns = TransactionCoordinator(
        config,
        replicas,
        functools.partial(_run_on, io_executor, store.allocate_producer_id),
        io_executor=io_executor,
        markers=markers,
        cluster_mode=cluster_mode,
    )
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
        controller=controller,
        authorizer=build_authorizer(config, store),
        metrics=metrics,
        fetch_sessions=FetchSessionCache(config.max_incremental_fetch_session_cache_slots),
        supported_features=supported,
        forwarding=forwarding,
        features=features,
        share=share,
    )
    follow_scram_credentials(store, services.scram_credentials)
    return services


def _share_services(
    configs: BrokerConfigHolder,
    store: MetadataStore,
    replicas: ReplicaManager,
    io_executor: ThreadPoolExecutor,
    cluster_mode: bool,
) -> ShareServices:
    """KIP-932: the share coordinator over ``__share_group_state``, the persister that
    reaches the coordinator of each share partition (here or over the inter-broker
    listener), the share partitions this broker leads, and the group configs."""
    config = configs.current
    node_id, cache = replicas.node_id, replicas.cache

    def topic_exists(topic_id: uuid.UUID, partition: int) -> bool:
        topic = cache.topic_by_id(topic_id)
        return topic is not None and 0 <= partition < topic.partition_count

    coordinator = ShareCoordinator(
        config,
        CoordinatorPartitionWriter(replicas),
        topic_exists,
        io_executor=io_executor,
        cluster_mode=cluster_mode,
    )
    remote = (
        BrokerClients(
            lambda broker: broker_client(configs.current, broker, f"broker-{node_id}-persister")
        )
        if cluster_mode
        else None
    )
    persister = SharePersister(coordinator, cache, node_id, remote)
    group_configs = GroupConfigs(store, lambda: configs.current)
    manager = SharePartitionManager(
        replicas,
        cache,
        persister,
        group_configs.share,
        io_executor=io_executor,
        max_sessions=config.group_share_max_share_sessions,
        fetch_max_bytes=config.fetch_max_bytes,
    )
    return ShareServices(coordinator, persister, manager, group_configs)


def _start_coordinators(services: BrokerServices) -> None:
    services.group_coordinator.start()
    services.txn_coordinator.start()
    if services.share is not None:
        services.share.coordinator.start()


async def _run_on(executor: ThreadPoolExecutor, fn: Callable[[], int]) -> int:
    """``fn()`` on ``executor``, awaited (a producer id allocation writes the store)."""
    return await asyncio.get_running_loop().run_in_executor(executor, fn)
