"""Cluster metadata: topics with their ids and partitions, topic config overrides, dynamic
broker configs, the cluster id and the producer id block.

* :mod:`~kafkacore.metadata.store` - :class:`MetadataStore`, the embedded (single node)
  store, persisted as one JSON file under the metadata/log directory.

The ZooKeeper-backed store (several brokers) will implement the same interface.
"""

from __future__ import annotations

from kafkacore.metadata.store import METADATA_FILE, MetadataStore, TopicMetadata

__all__ = ["METADATA_FILE", "MetadataStore", "TopicMetadata"]
