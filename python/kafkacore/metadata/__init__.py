"""Cluster metadata: topics with their ids, per-partition assignment and LeaderAndIsr
state, topic config overrides, dynamic broker configs, the cluster id and the producer id
block.

* :mod:`~kafkacore.metadata.store` - the :class:`MetadataStore` Protocol (a controller's
  writes plus change notifications) and its value types;
* :mod:`~kafkacore.metadata.embedded` - :class:`EmbeddedMetadataStore`, the single-node
  store, persisted as one JSON file under the metadata/log directory;
* :mod:`~kafkacore.metadata.cache` - :class:`MetadataCache`, each broker's read view
  (all that request handlers read), kept current by the store's notifications.
* :mod:`~kafkacore.metadata.records` - KRaft's ``__cluster_metadata`` records and their
  frame, as Kafka 4.3.1 writes them;
* :mod:`~kafkacore.metadata.versions` - finalized features: ``metadata.version`` levels
  and the other features, as Kafka 4.3.1 defines them;
* :mod:`~kafkacore.metadata.image` - KRaft's metadata image and deltas, replayed from
  those records, and the loader that publishes them.

The ZooKeeper-backed store (:mod:`~kafkacore.metadata.zookeeper`) implements the same
Protocol.
"""

from __future__ import annotations

from kafkacore.metadata.cache import BrokerInfo, MetadataCache
from kafkacore.metadata.embedded import METADATA_FILE, EmbeddedMetadataStore
from kafkacore.metadata.store import (
    NO_LEADER,
    MetadataListener,
    MetadataStore,
    PartitionState,
    TopicMetadata,
)

__all__ = [
    "METADATA_FILE",
    "NO_LEADER",
    "BrokerInfo",
    "EmbeddedMetadataStore",
    "MetadataCache",
    "MetadataListener",
    "MetadataStore",
    "PartitionState",
    "TopicMetadata",
]
