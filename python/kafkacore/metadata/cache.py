"""Each broker's read view of the cluster metadata (Kafka's ``MetadataCache``): topics
with their partitions' leader, leader epoch, replicas, ISR and partition epoch; topic and
dynamic broker configs; the live brokers and the controller; the finalized features
(:attr:`MetadataCache.features`, whose epoch never goes back). Request handlers read only
this, never the store.

It follows a :class:`~kafkacore.metadata.store.MetadataStore` as a
:class:`~kafkacore.metadata.store.MetadataListener` (:meth:`MetadataCache.follow`); a
ZooKeeper broker feeds it from UpdateMetadata requests (live brokers with their
endpoints, the controller, partition states: :meth:`MetadataCache.set_alive_brokers`,
:meth:`MetadataCache.update_partition_states`).

Thread-safety: updates may come from any thread (store writers, a ZooKeeper client);
each replaces an immutable snapshot under a lock, and reads see one snapshot or the next,
never a half-applied change.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from kafkacore.features import EMPTY as NO_FEATURES
from kafkacore.features import FinalizedFeatures
from kafkacore.log import TopicPartition
from kafkacore.metadata.store import (
    NO_LEADER,
    MetadataListener,
    MetadataStore,
    PartitionState,
    TopicMetadata,
)

__all__ = ["BrokerInfo", "MetadataCache"]

logger = logging.getLogger("kafkacore.server")

#: partitions an UpdateMetadata may leave undescribed below the ids it lists
MAX_PARTITION_GAP = 10_000


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A live broker as clients see it: its id and advertised endpoint."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    # every listener: (listener name, host, port, security protocol id) - UpdateMetadata
    endpoints: tuple[tuple[str, str, int, int], ...] = ()

    def endpoint(self, listener: str | None) -> tuple[str, int]:
        """``(host, port)`` of ``listener`` (default: the first one, or the client
        endpoint)."""
        for name, host, port, _protocol in self.endpoints:
            if listener is None or name == listener:
                return host, port
        return self.host, self.port


class MetadataCache(MetadataListener):
    def __init__(self, controller_id: int = -1) -> None:
        self._lock = threading.Lock()
        self._topics: dict[str, TopicMetadata] = {}
        self._by_id: dict[uuid.UUID, TopicMetadata] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._brokers: dict[int, BrokerInfo] = {}
        self._cluster_id: str | None = None
        self._controller_id = controller_id
        # cluster mode: topic config overrides from ZooKeeper (/config/topics/<t>), known
        # before (and apart from) the topic's partitions, which come with UpdateMetadata
        self._topic_configs: dict[str, dict[str, str]] = {}
        self._features = NO_FEATURES
        self._version = 0
        self.topics_generation = 0
        """Bumped whenever a topic appears or goes, or its partitions or their replicas
        change (what a KIP-848 group's metadata hash covers): its coordinator refreshes
        a group's metadata when it moved, as Kafka's ``onMetadataUpdate`` asks."""
        self.new_topic_ms = 0
        """When a topic name last appeared (wall-clock ms; Kafka's
        ``lastMetadataImageWithNewTopics``): regex subscriptions resolved before then are
        resolved again."""

    @property
    def version(self) -> int:
        """Goes up with every change of what a Metadata answer shows (topics, partition
        states, live brokers, controller, cluster id): an answer built at one version is
        good until it changes (the broker caches its encoded all-topics answer so)."""
        return self._version

    def _changed(self) -> None:
        self._version += 1

    def follow(self, store: MetadataStore, broker_config_entities: tuple[str, ...]) -> None:
        """Load ``store``'s current state and listen to its changes (the dynamic broker
        configs of ``broker_config_entities`` are loaded; later changes of any entity
        arrive through the listener)."""
        store.add_listener(self)
        topics = {t.name: t for t in store.topics()}
        configs = {e: store.broker_configs(e) for e in broker_config_entities}
        with self._lock:
            self._topics = topics
            self._by_id = {t.topic_id: t for t in topics.values()}
            self._broker_configs = {e: c for e, c in configs.items() if c}
            self._cluster_id = store.cluster_id
            self._changed()
            self._topics_moved(None, None if not topics else next(iter(topics.values())))
        self.on_features_changed(store.finalized_features())

    def follow_configs(
        self,
        store: MetadataStore,
        topic_configs: Mapping[str, Mapping[str, str]],
        broker_config_entities: tuple[str, ...],
    ) -> None:
        """Cluster mode: listen to ``store`` for config changes and cluster id only (the
        topics and brokers come with the controller's UpdateMetadata); start from
        ``topic_configs`` and the broker configs of ``broker_config_entities``."""
        store.add_listener(self)
        configs = {e: store.broker_configs(e) for e in broker_config_entities}
        with self._lock:
            self._topic_configs = {t: dict(c) for t, c in topic_configs.items()}
            self._broker_configs = {e: c for e, c in configs.items() if c}
            self._cluster_id = store.cluster_id
            self._changed()
        self.on_features_changed(store.finalized_features())

    def on_topic_configs_changed(self, name: str, configs: Mapping[str, str]) -> None:
        """A topic's config overrides changed (cluster mode: a ZooKeeper change
        notification, or a new topic's config read before its partitions are made)."""
        with self._lock:
            all_configs = dict(self._topic_configs)
            all_configs[name] = dict(configs)
            topics = self._topics
            old = topics.get(name)
            if old is not None:
                updated = TopicMetadata(old.name, old.topic_id, old.partitions, dict(configs))
                topics = {**topics, name: updated}
                self._by_id = {**self._by_id, old.topic_id: updated}
            self._topic_configs, self._topics = all_configs, topics
            self._changed()

    def knows_topic_configs(self, name: str) -> bool:
        return name in self._topic_configs or name in self._topics

    # -- MetadataListener ------------------------------------------------------------------

    def _topics_moved(self, old: TopicMetadata | None, new: TopicMetadata | None) -> None:
        """Note a topic's change (under the lock): a new name, or other partitions or
        replicas."""
        if new is not None and old is None:
            self.new_topic_ms = max(self.new_topic_ms + 1, int(time.time() * 1000))
        if old is None or new is None or _layout(old) != _layout(new):
            self.topics_generation += 1

    def on_topic_changed(self, topic: TopicMetadata) -> None:
        with self._lock:
            topics = dict(self._topics)
            old = topics.get(topic.name)
            self._topics_moved(old, topic)
            topics[topic.name] = topic
            by_id = dict(self._by_id)
            if old is not None:
                by_id.pop(old.topic_id, None)
            by_id[topic.topic_id] = topic
            self._topics, self._by_id = topics, by_id
            self._changed()

    def on_topic_deleted(self, name: str) -> None:
        with self._lock:
            topics = dict(self._topics)
            old = topics.pop(name, None)
            if old is None:
                return
            self._topics_moved(old, None)
            by_id = dict(self._by_id)
            by_id.pop(old.topic_id, None)
            self._topics, self._by_id = topics, by_id
            self._changed()

    def on_broker_configs_changed(self, entity: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            all_configs = dict(self._broker_configs)
            if configs:
                all_configs[entity] = dict(configs)
            else:
                all_configs.pop(entity, None)
            self._broker_configs = all_configs

    def on_cluster_id(self, cluster_id: str) -> None:
        with self._lock:
            self._cluster_id = cluster_id
            self._changed()

    def on_features_changed(self, features: FinalizedFeatures) -> None:
        """Newer finalized features (an older epoch is ignored: Kafka 4 clients trust the
        node with the highest one)."""
        with self._lock:
            if features.epoch >= self._features.epoch:
                self._features = features

    @property
    def features(self) -> FinalizedFeatures:
        """The finalized features in force (none, epoch -1, until the store says)."""
        return self._features

    # -- brokers ---------------------------------------------------------------------------

    def register_broker(self, broker: BrokerInfo) -> None:
        """A broker is alive at ``broker``'s endpoint (single node: itself, once its
        listeners are bound)."""
        with self._lock:
            self._brokers = {**self._brokers, broker.node_id: broker}
            self._changed()

    def set_controller(self, controller_id: int) -> None:
        with self._lock:
            self._controller_id = controller_id
            self._changed()

    def set_alive_brokers(self, brokers: list[BrokerInfo]) -> None:
        """Exactly ``brokers`` are alive (an UpdateMetadata's live brokers)."""
        with self._lock:
            self._brokers = {b.node_id: b for b in brokers}
            self._changed()

    def is_broker_alive(self, node_id: int) -> bool:
        return node_id in self._brokers

    def update_partition_states(
        self,
        topic: str,
        topic_id: uuid.UUID | None,
        states: Mapping[int, PartitionState | None],
    ) -> None:
        """Merge one UpdateMetadata topic: each listed partition takes its state
        (``None``: the partition is gone - Kafka's leader -2 for deletion; a topic left
        without partitions is dropped). Partitions not yet known in between are filled
        with leaderless states so that indexes stay partition ids; a partition id that
        would leave more than :data:`MAX_PARTITION_GAP` of them (a negative one, or
        2**31 - 1 from a broken or hostile peer: a list of that length, the event loop
        stuck building it) is ignored and logged."""
        with self._lock:
            topics = dict(self._topics)
            by_id = dict(self._by_id)
            old = topics.get(topic)
            partitions: list[PartitionState | None] = list(old.partitions) if old else []
            bound = len(partitions) + len(states) + MAX_PARTITION_GAP
            for index, state in states.items():
                if not 0 <= index < bound:
                    logger.warning(
                        "Ignoring the state of partition %d of %s: it would leave too many "
                        "partitions nobody described (%d known, %d described)",
                        index,
                        topic,
                        len(partitions),
                        len(states),
                    )
                    continue
                while len(partitions) <= index:
                    partitions.append(None)
                partitions[index] = state
            while partitions and partitions[-1] is None:
                partitions.pop()
            if old is not None:
                by_id.pop(old.topic_id, None)
            if not partitions:
                topics.pop(topic, None)
                if old is not None:
                    self._topics_moved(old, None)
            else:
                filled = tuple(
                    p if p is not None else PartitionState((), NO_LEADER, -1, (), -1)
                    for p in partitions
                )
                new_id = topic_id or (old.topic_id if old else uuid.UUID(int=0))
                configs = dict(old.configs) if old else dict(self._topic_configs.get(topic, {}))
                metadata = TopicMetadata(topic, new_id, filled, configs)
                self._topics_moved(old, metadata)
                topics[topic] = metadata
                by_id[new_id] = metadata
            self._topics, self._by_id = topics, by_id
            self._changed()

    def alive_brokers(self) -> list[BrokerInfo]:
        brokers = self._brokers
        return [brokers[n] for n in sorted(brokers)]

    def broker(self, node_id: int) -> BrokerInfo | None:
        return self._brokers.get(node_id)

    @property
    def controller_id(self) -> int:
        return self._controller_id

    @property
    def cluster_id(self) -> str | None:
        return self._cluster_id

    # -- topics ----------------------------------------------------------------------------

    def topics(self) -> list[TopicMetadata]:
        topics = self._topics
        return [topics[name] for name in sorted(topics)]

    def topic(self, name: str) -> TopicMetadata | None:
        return self._topics.get(name)

    def contains_topic(self, name: str) -> bool:
        return name in self._topics

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicMetadata | None:
        return self._by_id.get(topic_id)

    def topic_configs(self, name: str) -> dict[str, str] | None:
        topic = self._topics.get(name)
        if topic is not None:
            return dict(topic.configs)
        known = self._topic_configs.get(name)
        return dict(known) if known is not None else None

    def partition_count(self, name: str) -> int | None:
        topic = self._topics.get(name)
        return topic.partition_count if topic is not None else None

    def partition_state(self, tp: TopicPartition) -> PartitionState | None:
        topic = self._topics.get(tp.topic)
        if topic is None or not 0 <= tp.partition < topic.partition_count:
            return None
        return topic.partitions[tp.partition]

    # -- dynamic broker configs ------------------------------------------------------------

    def broker_configs(self, entity: str) -> dict[str, str]:
        """Dynamic broker configs of ``entity`` (a node id as a string, or ``"default"``)."""
        return dict(self._broker_configs.get(entity, {}))


def _layout(topic: TopicMetadata) -> tuple[uuid.UUID, tuple[tuple[int, ...], ...]]:
    """What a KIP-848 group's metadata hash covers of a topic: its id, and its partitions'
    replicas (whose racks it hashes)."""
    return topic.topic_id, tuple(tuple(p.replicas) for p in topic.partitions)
