"""What request handlers are given (Kafka's ``KafkaApis`` constructor parameters): the
broker's services, built once by :mod:`kafkacore.server.assembly` and never patched
afterwards.

The one thing that changes at run time, the broker config (AlterConfigs on dynamic
configs), lives in a :class:`BrokerConfigHolder` inside the frozen services, which tells
its listeners (the replica manager re-derives topic configs) of each new config.

Blocking work (appends, metadata writes, Fetch reads that copy) runs on
:attr:`BrokerServices.io_executor`, a pool of ``num.io.threads`` threads (Kafka's request
handler pool), through :meth:`BrokerServices.run_io`.

Thread-safety: the services are immutable; each service states its own.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ParamSpec, Protocol, TypeVar

from kafkacore.config import BrokerConfig
from kafkacore.features import VersionRange, supported_features
from kafkacore.log import TopicPartition
from kafkacore.metadata import BrokerInfo, MetadataCache, MetadataStore
from kafkacore.security.acl import Authorizer
from kafkacore.security.credentials import ScramCredentialCache
from kafkacore.server.client_quotas import ClientQuotaManager
from kafkacore.server.fetch_session import FetchSessionCache
from kafkacore.server.group.coordinator import GroupCoordinator
from kafkacore.server.metrics import BrokerMetrics
from kafkacore.server.replica_manager import ReplicaManager
from kafkacore.server.request_quota import io_timed
from kafkacore.server.txn.coordinator import TransactionCoordinator

if TYPE_CHECKING:
    from kafkacore.controller.controller import KafkaController
    from kafkacore.features import FinalizedFeatures
    from kafkacore.protocol import KafkaStruct, RequestHeader
    from kafkacore.server.share.services import ShareServices

__all__ = ["BrokerConfigHolder", "BrokerServices", "FeatureSource", "Forwarder"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


class BrokerConfigHolder:
    """The broker config in force (Kafka's ``DynamicBrokerConfig.currentConfig``): the
    static config with the dynamic values applied. Read from any thread; :meth:`update`
    swaps it (one reference assignment) and then calls the listeners in order."""

    def __init__(self, config: BrokerConfig) -> None:
        self._current = config
        self._lock = threading.Lock()
        self._listeners: list[Callable[[BrokerConfig], None]] = []

    @property
    def current(self) -> BrokerConfig:
        return self._current

    def add_listener(self, listener: Callable[[BrokerConfig], None]) -> None:
        """Call ``listener(new_config)`` after every :meth:`update` (Kafka's
        ``BrokerReconfigurable.reconfigure``)."""
        with self._lock:
            self._listeners.append(listener)

    def update(self, config: BrokerConfig) -> None:
        with self._lock:
            self._current = config
            listeners = list(self._listeners)
        for listener in listeners:
            listener(config)


class Forwarder(Protocol):
    """Where a KRaft broker sends the requests the controller handles (the
    :class:`~kafkacore.server.kraft.forwarding.ForwardingManager`)."""

    async def forward(
        self,
        header: RequestHeader,
        request: KafkaStruct,
        principal_type: str,
        principal_name: str,
        client_address: str,
    ) -> KafkaStruct: ...


class FeatureSource(Protocol):
    """A KRaft broker's features for ApiVersions (KIP-584): the levels it supports, and
    the finalized levels with their epoch (the metadata offset that finalized them)."""

    def supported_features(self) -> dict[str, tuple[int, int]]: ...

    def finalized_features(self) -> FinalizedFeatures: ...


@dataclass(frozen=True, eq=False)
class BrokerServices:
    node_id: int
    configs: BrokerConfigHolder
    metadata_cache: MetadataCache
    metadata_store: MetadataStore
    replica_manager: ReplicaManager
    group_coordinator: GroupCoordinator
    txn_coordinator: TransactionCoordinator
    io_executor: ThreadPoolExecutor
    # the client quotas in force (fed by the metadata store) and their measured rates
    client_quotas: ClientQuotaManager = field(default_factory=ClientQuotaManager)
    # cluster mode: the controller this broker runs (active or not); None on a single node
    controller: KafkaController | None = None
    # ``authorizer.class.name`` set: every request is checked against the ACLs it holds;
    # None: no authorizer, everything is allowed (Kafka without one)
    authorizer: Authorizer | None = None
    # the SCRAM credentials SASL logins are checked against (fed by the metadata store)
    scram_credentials: ScramCredentialCache = field(default_factory=ScramCredentialCache)
    # the broker's own counters (bytes/records in and out, request latency): the console
    metrics: BrokerMetrics = field(default_factory=BrokerMetrics)
    # the incremental fetch sessions (KIP-227), max.incremental.fetch.session.cache.slots
    fetch_sessions: FetchSessionCache = field(default_factory=FetchSessionCache)
    # the finalized features this broker supports (ApiVersions' SupportedFeatures and the
    # ranges UpdateFeatures is checked against): the mode's (see assembly)
    supported_features: Mapping[str, VersionRange] = field(default_factory=supported_features)
    # KRaft: the requests the controller handles go there (Envelope); None otherwise
    forwarding: Forwarder | None = None
    # KRaft: the supported and finalized features ApiVersions shows; None otherwise
    features: FeatureSource | None = None
    # KIP-932 share groups: the share coordinator, its persister, the share partitions
    # led here and the group configs (None: a broker assembled without them)
    share: ShareServices | None = None

    @property
    def config(self) -> BrokerConfig:
        """The broker config in force now."""
        return self.configs.current

    def on_leadership_change(
        self, leaders: list[tuple[TopicPartition, int]], followers: list[tuple[TopicPartition, int]]
    ) -> None:
        """Kafka's ``KafkaApis.onLeadershipChange``: partitions of ``__consumer_offsets``
        and ``__transaction_state`` that became led here (with their leader epochs) are
        loaded by their coordinator, those that became followers dropped."""
        self.group_coordinator.on_leadership_change(leaders, followers)
        self.txn_coordinator.on_leadership_change(leaders, followers)
        if self.share is not None:
            self.share.coordinator.on_leadership_change(leaders, followers)
            self.share.manager.on_leadership_change(leaders, followers)

    @property
    def cluster_mode(self) -> bool:
        """One broker of a cluster (ZooKeeper or KRaft), not a single node: coordinators
        and partitions are where the controller put them."""
        return self.controller is not None or self.forwarding is not None

    @property
    def active_controller(self) -> KafkaController | None:
        """The controller this broker runs while it is the active one; else None."""
        controller = self.controller
        return controller if controller is not None and controller.is_active else None

    @property
    def cluster_id(self) -> str:
        return self.metadata_cache.cluster_id or ""

    @property
    def local_broker(self) -> BrokerInfo:
        """This broker as clients reach it (registered once its listeners are bound)."""
        broker = self.metadata_cache.broker(self.node_id)
        return broker if broker is not None else BrokerInfo(self.node_id, "", -1)

    async def run_io(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``fn(*args, **kwargs)`` on the I/O executor, awaited from the event loop."""
        loop = asyncio.get_running_loop()
        call = io_timed(functools.partial(fn, *args, **kwargs))  # the request quota's time
        return await loop.run_in_executor(self.io_executor, call)
