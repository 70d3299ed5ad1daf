"""The embedded metadata store of a single-node cluster.

One JSON file, ``kafkacore-metadata.json``, in the metadata directory (``metadata.log.dir``,
else the first log directory), rewritten atomically (``.tmp`` + rename + fsync) on every
change::

    {"version": 0, "cluster_id": "...", "next_producer_id": 1000,
     "topics": {"orders": {"topic_id": "<uuid>", "partitions": 3, "leader_epoch": 0,
                           "configs": {"retention.ms": "1000"}}},
     "broker_configs": {"default": {...}, "1": {...}}}

Topic ids are the random UUIDs Kafka gives topics (also written to each partition's
``partition.metadata`` by the log layer). Producer ids are handed out in blocks of
:data:`PRODUCER_ID_BLOCK_SIZE` persisted ahead of use, so a restart never reuses one.

Thread-safety: every public method takes the store's lock.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkacore.log.checkpoints import write_atomically

__all__ = ["METADATA_FILE", "PRODUCER_ID_BLOCK_SIZE", "MetadataStore", "TopicMetadata"]

METADATA_FILE = "kafkacore-metadata.json"
PRODUCER_ID_BLOCK_SIZE = 1000
_VERSION = 0


@dataclass
class TopicMetadata:
    """One topic: its id, partition count, leader epoch (single node: 0 until a leader
    change) and config overrides (Kafka names, string values)."""

    name: str
    topic_id: uuid.UUID
    partitions: int
    leader_epoch: int = 0
    configs: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "topic_id": str(self.topic_id),
            "partitions": self.partitions,
            "leader_epoch": self.leader_epoch,
            "configs": dict(self.configs),
        }

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> TopicMetadata:
        return cls(
            name,
            uuid.UUID(data["topic_id"]),
            int(data["partitions"]),
            int(data.get("leader_epoch", 0)),
            {str(k): str(v) for k, v in dict(data.get("configs", {})).items()},
        )


class MetadataStore:
    """The single-node metadata, loaded from ``directory`` (created if missing)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._dir = os.fspath(directory)
        self._path = os.path.join(self._dir, METADATA_FILE)
        self._lock = threading.RLock()
        self._cluster_id: str | None = None
        self._topics: dict[str, TopicMetadata] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._next_producer_id = 0
        self._producer_id_limit = 0  # first id not yet reserved on disk
        self._load()

    @property
    def path(self) -> str:
        return self._path

    def _load(self) -> None:
        try:
            with open(self._path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return
        if data.get("version") != _VERSION:
            raise ValueError(f"{self._path}: unknown metadata version {data.get('version')!r}")
        self._cluster_id = data.get("cluster_id")
        self._topics = {
            name: TopicMetadata.from_json(name, t) for name, t in data.get("topics", {}).items()
        }
        self._broker_configs = {
            str(k): {str(n): str(v) for n, v in dict(c).items()}
            for k, c in dict(data.get("broker_configs", {})).items()
        }
        self._next_producer_id = int(data.get("next_producer_id", 0))
        self._producer_id_limit = self._next_producer_id

    def _save(self) -> None:
        data = {
            "version": _VERSION,
            "cluster_id": self._cluster_id,
            "next_producer_id": self._producer_id_limit,
            "topics": {name: t.to_json() for name, t in sorted(self._topics.items())},
            "broker_configs": self._broker_configs,
        }
        os.makedirs(self._dir, exist_ok=True)
        write_atomically(self._path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())

    # -- cluster ---------------------------------------------------------------------------

    @property
    def cluster_id(self) -> str | None:
        return self._cluster_id

    def set_cluster_id(self, cluster_id: str) -> None:
        with self._lock:
            if self._cluster_id not in (None, cluster_id):
                raise ValueError(
                    f"The cluster id {cluster_id} does not match the stored one "
                    f"{self._cluster_id} in {self._path}"
                )
            if self._cluster_id is None:
                self._cluster_id = cluster_id
                self._save()

    # -- topics ----------------------------------------------------------------------------

    def topics(self) -> list[TopicMetadata]:
        with self._lock:
            return [self._topics[name] for name in sorted(self._topics)]

    def topic(self, name: str) -> TopicMetadata | None:
        with self._lock:
            return self._topics.get(name)

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicMetadata | None:
        with self._lock:
            for t in self._topics.values():
                if t.topic_id == topic_id:
                    return t
            return None

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str] | None = None,
        topic_id: uuid.UUID | None = None,
    ) -> TopicMetadata:
        with self._lock:
            if name in self._topics:
                raise KeyError(name)
            topic = TopicMetadata(
                name, topic_id or uuid.uuid4(), partitions, 0, dict(configs or {})
            )
            self._topics[name] = topic
            self._save()
            return topic

    def set_partitions(self, name: str, partitions: int) -> None:
        with self._lock:
            self._topics[name].partitions = partitions
            self._save()

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            self._topics[name].configs = dict(configs)
            self._save()

    def delete_topic(self, name: str) -> TopicMetadata | None:
        with self._lock:
            topic = self._topics.pop(name, None)
            if topic is not None:
                self._save()
            return topic

    # -- dynamic broker configs ------------------------------------------------------------

    def broker_configs(self, entity: str) -> dict[str, str]:
        """Dynamic broker configs of ``entity``: a node id as a string, or ``"default"``."""
        with self._lock:
            return dict(self._broker_configs.get(entity, {}))

    def set_broker_configs(self, entity: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._broker_configs[entity] = dict(configs)
            else:
                self._broker_configs.pop(entity, None)
            self._save()

    # -- producer ids ----------------------------------------------------------------------

    def allocate_producer_id(self) -> int:
        """A producer id never handed out before (blocks reserved on disk ahead of use)."""
        with self._lock:
            if self._next_producer_id >= self._producer_id_limit:
                self._producer_id_limit = self._next_producer_id + PRODUCER_ID_BLOCK_SIZE
                self._save()
            pid = self._next_producer_id
            self._next_producer_id += 1
            return pid
