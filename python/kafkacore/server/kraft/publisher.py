"""Each metadata delta to the broker's parts (Kafka's ``BrokerMetadataPublisher`` with the
``KRaftMetadataCachePublisher``, ``DynamicConfigPublisher``,
``DynamicClientQuotaPublisher``, ``ScramPublisher`` and ``AclPublisher`` folded in), in
this order:

1. the :class:`~kafkacore.server.kraft.store.KRaftMetadataStore` takes the image and tells
   its listeners the changed topic and broker configs, client quotas, SCRAM credentials
   and ACLs (the logs' configs, the dynamic broker config, the quota manager, the
   credential cache, the authorizer - as ZooKeeper mode's change notifications do), so
   that a partition made next gets its topic's config;
2. the replica manager applies the topics delta (``apply_delta``: partitions deleted,
   then led or followed - the ``Partition`` code LeaderAndIsr drives in ZooKeeper mode);
3. the :class:`~kafkacore.metadata.MetadataCache` handlers read takes the changed topics
   and the live (unfenced) brokers, so a handler finding a topic finds its partitions;
4. the coordinators hear, on the event loop, of the ``__consumer_offsets`` and
   ``__transaction_state`` partitions elected here and of those resigned (followed now,
   or deleted).

A failure in one step is logged (Kafka's ``metadataPublishingFaultHandler`` on a broker)
and the next steps still run. The first publication sets :attr:`first_publish`.

Thread-safety: called on the metadata thread, one publication at a time; the event loop
is reached with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from kafkacore.log import TopicPartition
from kafkacore.metadata import BrokerInfo, MetadataCache
from kafkacore.metadata.image import (
    ClusterImage,
    LocalReplicaChanges,
    LogDeltaManifest,
    MetadataDelta,
    MetadataImage,
    SnapshotManifest,
)
from kafkacore.server.kraft.store import KRaftMetadataStore, topic_metadata
from kafkacore.server.replica_manager import INTERNAL_TOPICS, LeadershipChange, ReplicaManager

__all__ = ["BrokerMetadataPublisher", "alive_brokers"]

logger = logging.getLogger("kafkacore.server")


def alive_brokers(cluster: ClusterImage) -> list[BrokerInfo]:
    """The unfenced brokers as the metadata cache holds them: every listener with its
    security protocol; the first one is the default endpoint."""
    out = []
    for broker in cluster.unfenced_brokers():
        endpoints = tuple((e.name, e.host, e.port, e.security_protocol) for e in broker.listeners)
        host, port = (endpoints[0][1], endpoints[0][2]) if endpoints else ("", -1)
        out.append(BrokerInfo(broker.id, host, port, broker.rack, endpoints))
    return out


class BrokerMetadataPublisher:
    """See the module docstring. ``on_leadership_change`` is called on ``loop``."""

    name = "BrokerMetadataPublisher"

    def __init__(
        self,
        node_id: int,
        store: KRaftMetadataStore,
        cache: MetadataCache,
        replicas: ReplicaManager,
        on_leadership_change: LeadershipChange,
        loop: asyncio.AbstractEventLoop,
        *,
        on_image: Callable[[MetadataImage], None] | None = None,
    ) -> None:
        self.node_id = node_id
        self.store = store
        self.cache = cache
        self.replicas = replicas
        self._on_leadership_change = on_leadership_change
        self._loop = loop
        self._on_image = on_image
        #: set (thread-safe) once the first delta was published
        self.first_publish = threading.Event()

    def on_metadata_update(
        self,
        delta: MetadataDelta,
        image: MetadataImage,
        manifest: SnapshotManifest | LogDeltaManifest,
    ) -> None:
        if not self.first_publish.is_set():
            logger.info(
                "[BrokerMetadataPublisher id=%d] Publishing initial metadata at offset %d "
                "with metadata.version %s.",
                self.node_id,
                image.offset,
                image.features.metadata_version,
            )
        self._step("configs, quotas and ACLs", lambda: self.store.publish(delta, image))
        changes: list[LocalReplicaChanges] = []
        topics_delta = delta.topics_delta
        if topics_delta is not None:
            self._step(
                "the topics delta",
                lambda: changes.append(self.replicas.apply_delta(topics_delta, image)),
            )
        self._step("the metadata cache", lambda: self._update_cache(delta, image))
        if changes:
            self._step("the coordinators", lambda: self._update_coordinators(delta, changes[0]))
        if self._on_image is not None:
            self._step("the image", lambda: self._on_image(image))  # type: ignore[misc]
        self.first_publish.set()

    def _step(self, what: str, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception:
            logger.exception(
                "[BrokerMetadataPublisher id=%d] Error applying %s", self.node_id, what
            )

    def _update_cache(self, delta: MetadataDelta, image: MetadataImage) -> None:
        cache = self.cache
        topics_delta = delta.topics_delta
        if topics_delta is not None:
            for topic_id in topics_delta.deleted_topic_ids:
                cache.on_topic_deleted(topics_delta.image.by_id[topic_id].name)
            for topic_id in topics_delta.changed_topics:
                topic = image.topics.by_id[topic_id]
                configs = self.store._topic_configs(image, topic.name)
                cache.on_topic_changed(topic_metadata(topic, configs))
        if delta.cluster_delta is not None or not cache.alive_brokers():
            brokers = alive_brokers(image.cluster)
            cache.set_alive_brokers(brokers)
            # Kafka answers with an alive broker as the "controller" clients send admin
            # requests to (it forwards them); the lowest id, to be deterministic
            cache.set_controller(brokers[0].node_id if brokers else -1)

    def _update_coordinators(self, delta: MetadataDelta, changes: LocalReplicaChanges) -> None:
        """Kafka's ``updateCoordinator``: elected leaders load, followers and deleted
        partitions unload."""
        leaders = [
            (tp, info.partition.leader_epoch)
            for tp, info in changes.elected_leaders.items()
            if tp.topic in INTERNAL_TOPICS
        ]
        followers = [
            (tp, info.partition.leader_epoch)
            for tp, info in changes.followers.items()
            if tp.topic in INTERNAL_TOPICS
        ]
        topics_delta = delta.topics_delta
        before = topics_delta.image if topics_delta is not None else None
        for tp in changes.deletes:
            if tp.topic not in INTERNAL_TOPICS or before is None:
                continue
            partition = before.partition(tp.topic, tp.partition)
            if partition is not None and partition.leader == self.node_id:
                followers.append((TopicPartition(tp.topic, tp.partition), partition.leader_epoch))
        if leaders or followers:
            self._loop.call_soon_threadsafe(self._on_leadership_change, leaders, followers)
