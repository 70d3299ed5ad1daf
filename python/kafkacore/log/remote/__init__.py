"""Tiered storage (KIP-405): closed segments copied to an S3-compatible object store as
Kafka's own files, their metadata in ``__remote_log_metadata``, reads below the local log
start served from the bucket.

Layers (Kafka's ``RemoteLogManager`` and its plugins, bottom up):

* :mod:`~kafkacore.log.remote.model` - the metadata values (segment ids, states);
* :mod:`~kafkacore.log.remote.records` - ``__remote_log_metadata``'s records, byte for byte
  Kafka's (``RemoteLogMetadataSerde``) and its partitioner;
* :mod:`~kafkacore.log.remote.object_store` - one S3 bucket through obstore (timeouts,
  retries, ranged GETs, multipart puts);
* :mod:`~kafkacore.log.remote.layout` - the object keys: one object per Kafka file;
* :mod:`~kafkacore.log.remote.storage` - :class:`RemoteStorageManager` (Kafka's plugin
  interface): copy a segment's files, fetch a range of its log or one index, delete;
* :mod:`~kafkacore.log.remote.metadata` - the metadata cache and the topic-based remote
  log metadata manager;
* :mod:`~kafkacore.log.remote.index_cache` - the bounded cache of remote indexes;
* :mod:`~kafkacore.log.remote.quota` - the copy and fetch byte-rate throttles;
* :mod:`~kafkacore.log.remote.manager` - :class:`RemoteLogManager`: copy, expiration and
  follower tasks per partition, remote reads, offsets by time across tiers.
"""

from __future__ import annotations
