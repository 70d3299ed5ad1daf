"""The embedded metadata store of a single-node cluster (:class:`MetadataStore` on a
file).

One JSON file, ``kafkacore-metadata.json``, in the metadata directory (``metadata.log.dir``,
else the first log directory), rewritten atomically (``.tmp`` + rename + fsync) on every
change. Format version 1::

    {"version": 1, "cluster_id": "...", "next_producer_id": 1000,
     "topics": {"orders": {"topic_id": "<uuid>", "configs": {"retention.ms": "1000"},
                           "partitions": {"0": {"replicas": [1], "leader": 1,
                                                "leader_epoch": 0, "isr": [1],
                                                "partition_epoch": 0}, ...}}},
     "broker_configs": {"default": {...}, "1": {...}},
     "acls": [{"resourceType": "Topic", "name": "orders", "patternType": "LITERAL",
               "acls": [{"principal": "User:alice", "permissionType": "Allow",
                         "operation": "Read", "host": "*"}]}, ...]}

``acls`` (the authorizer's ACLs, entries as Kafka writes them to ZooKeeper) is absent
until an ACL is created.

Version 0 files (``"partitions": 3, "leader_epoch": 0`` per topic) are read and
converted: every partition replicated on this node only, led by it at the topic's epoch.
They are rewritten as version 1 at the next change.

Topic ids are the random UUIDs Kafka gives topics (also written to each partition's
``partition.metadata`` by the log layer). Producer ids are handed out in blocks of
:data:`PRODUCER_ID_BLOCK_SIZE` persisted ahead of use, so a restart never reuses one.

Thread-safety: every public method takes the store's lock; listeners are called on the
writer's thread, after the file is written and the store's lock released.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kafkacore.log.checkpoints import write_atomically
from kafkacore.metadata.store import (
    AclUpdate,
    MetadataListener,
    PartitionState,
    TopicMetadata,
)
from kafkacore.security.acl import (
    AccessControlEntry,
    PatternType,
    ResourcePattern,
    ResourceType,
    decode_acl_znode,
    encode_acl_znode,
)

__all__ = ["FORMAT_VERSION", "METADATA_FILE", "PRODUCER_ID_BLOCK_SIZE", "EmbeddedMetadataStore"]

logger = logging.getLogger("kafkacore.metadata")

METADATA_FILE = "kafkacore-metadata.json"
PRODUCER_ID_BLOCK_SIZE = 1000
FORMAT_VERSION = 1


def _partition_to_json(state: PartitionState) -> dict[str, Any]:
    return {
        "replicas": list(state.replicas),
        "leader": state.leader,
        "leader_epoch": state.leader_epoch,
        "isr": list(state.isr),
        "partition_epoch": state.partition_epoch,
    }


def _partition_from_json(data: Mapping[str, Any]) -> PartitionState:
    return PartitionState(
        replicas=tuple(int(r) for r in data["replicas"]),
        leader=int(data["leader"]),
        leader_epoch=int(data["leader_epoch"]),
        isr=tuple(int(r) for r in data["isr"]),
        partition_epoch=int(data.get("partition_epoch", 0)),
    )


def _configs(data: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(data.get("configs", {})).items()}


# where the topics go in the file's text (no topic name or config holds a NUL)
_TOPICS_MARK = "\x00topics\x00"


def _topic_to_json(topic: TopicMetadata) -> dict[str, Any]:
    return {
        "topic_id": str(topic.topic_id),
        "configs": dict(topic.configs),
        "partitions": {str(i): _partition_to_json(p) for i, p in enumerate(topic.partitions)},
    }


def _topic_from_json(name: str, data: Mapping[str, Any]) -> TopicMetadata:
    by_index = {int(i): _partition_from_json(p) for i, p in dict(data["partitions"]).items()}
    if sorted(by_index) != list(range(len(by_index))):
        raise ValueError(f"topic {name}: partitions are not 0..n-1: {sorted(by_index)}")
    partitions = tuple(by_index[i] for i in range(len(by_index)))
    return TopicMetadata(name, uuid.UUID(data["topic_id"]), partitions, _configs(data))


def _acls_to_json(
    acls: Mapping[ResourcePattern, frozenset[AccessControlEntry]],
) -> list[dict[str, Any]]:
    return [
        {
            "resourceType": pattern.resource_type.pascal,
            "name": pattern.name,
            "patternType": pattern.pattern_type.name,
            "acls": json.loads(encode_acl_znode(acls[pattern]))["acls"],
        }
        for pattern in sorted(acls)
    ]


def _acls_from_json(data: Sequence[Mapping[str, Any]]) -> dict[ResourcePattern, frozenset[Any]]:
    out: dict[ResourcePattern, frozenset[Any]] = {}
    for item in data:
        pattern = ResourcePattern(
            ResourceType.parse(item["resourceType"]),
            str(item["name"]),
            PatternType.parse(item["patternType"]),
        )
        pattern.validate()
        entries = decode_acl_znode(json.dumps({"version": 1, "acls": item["acls"]}).encode())
        if entries:
            out[pattern] = entries
    return out


def _topic_from_json_v0(name: str, data: Mapping[str, Any], node_id: int) -> TopicMetadata:
    """A version-0 topic (a partition count and one leader epoch): every partition on
    ``node_id``, which leads it at that epoch."""
    epoch = int(data.get("leader_epoch", 0))
    state = PartitionState((node_id,), node_id, epoch, (node_id,), 0)
    partitions = tuple(state for _ in range(int(data["partitions"])))
    return TopicMetadata(name, uuid.UUID(data["topic_id"]), partitions, _configs(data))


class EmbeddedMetadataStore:
    """The single-node metadata, loaded from ``directory`` (created if missing).
    ``node_id`` places the partitions of a version-0 file."""

    def __init__(self, directory: str | os.PathLike[str], node_id: int) -> None:
        self._dir = os.fspath(directory)
        self._path = os.path.join(self._dir, METADATA_FILE)
        self._node_id = node_id
        self._lock = threading.RLock()
        self._listeners: list[MetadataListener] = []
        self._cluster_id: str | None = None
        self._topics: dict[str, TopicMetadata] = {}
        # each topic's text in the file, while its (immutable) metadata is the same object
        self._topic_texts: dict[str, tuple[TopicMetadata, str]] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._quota_configs: dict[str, dict[str, str]] = {}  # by entity path, "users/alice"
        self._group_configs: dict[str, dict[str, str]] = {}
        self._acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        self._next_producer_id = 0
        self._producer_id_limit = 0  # first id not yet reserved on disk
        self.loaded_version: int | None = None
        """The format version of the file read at start-up (``None``: no file)."""
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
        version = data.get("version")
        if version == 0:
            self._topics = {
                name: _topic_from_json_v0(name, t, self._node_id)
                for name, t in data.get("topics", {}).items()
            }
            logger.info(
                "Read version-0 metadata %s (%d topics); it is rewritten as version %d at "
                "the next change",
                self._path,
                len(self._topics),
                FORMAT_VERSION,
            )
        elif version == FORMAT_VERSION:
            self._topics = {
                name: _topic_from_json(name, t) for name, t in data.get("topics", {}).items()
            }
        else:
            raise ValueError(f"{self._path}: unknown metadata version {version!r}")
        self.loaded_version = version
        self._cluster_id = data.get("cluster_id")
        self._broker_configs = {
            str(k): {str(n): str(v) for n, v in dict(c).items()}
            for k, c in dict(data.get("broker_configs", {})).items()
        }
        self._quota_configs = {
            str(k): {str(n): str(v) for n, v in dict(c).items()}
            for k, c in dict(data.get("quota_configs", {})).items()
        }
        self._group_configs = {
            str(k): {str(n): str(v) for n, v in dict(c).items()}
            for k, c in dict(data.get("group_configs", {})).items()
        }
        self._acls = _acls_from_json(data.get("acls", []))
        self._next_producer_id = int(data.get("next_producer_id", 0))
        self._producer_id_limit = self._next_producer_id

    def _save(self) -> None:
        data: dict[str, Any] = {
            "version": FORMAT_VERSION,
            "cluster_id": self._cluster_id,
            "next_producer_id": self._producer_id_limit,
            "topics": _TOPICS_MARK,  # replaced by _topics_text(): the same text
            "broker_configs": self._broker_configs,
        }
        if self._quota_configs:  # absent until used: older readers see the same file
            data["quota_configs"] = self._quota_configs
        if self._group_configs:
            data["group_configs"] = self._group_configs
        if self._acls:
            data["acls"] = _acls_to_json(self._acls)
        os.makedirs(self._dir, exist_ok=True)
        text = json.dumps(data, indent=1, sort_keys=True)
        text = text.replace(json.dumps(_TOPICS_MARK), self._topics_text(), 1)
        write_atomically(self._path, (text + "\n").encode())

    def _topics_text(self) -> str:
        """The ``"topics"`` object exactly as ``json.dumps(..., indent=1, sort_keys=True)``
        writes it at its depth in the file, from each topic's text, encoded again only when
        the topic changed (a save used to encode every topic: creating 1,000 topics one by
        one encoded half a million)."""
        texts = self._topic_texts
        for gone in texts.keys() - self._topics.keys():
            del texts[gone]
        if not self._topics:
            return "{}"
        lines = []
        for name in sorted(self._topics):
            topic = self._topics[name]
            cached = texts.get(name)
            if cached is None or cached[0] is not topic:
                encoded = json.dumps(_topic_to_json(topic), indent=1, sort_keys=True)
                cached = texts[name] = (topic, encoded.replace("\n", "\n  "))
            lines.append(f"  {json.dumps(name)}: {cached[1]}")
        return "{\n" + ",\n".join(lines) + "\n }"

    def add_listener(self, listener: MetadataListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def _listeners_now(self) -> list[MetadataListener]:
        with self._lock:
            return list(self._listeners)

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
            if self._cluster_id is not None:
                return
            self._cluster_id = cluster_id
            self._save()
        for listener in self._listeners_now():
            listener.on_cluster_id(cluster_id)

    # -- topics ----------------------------------------------------------------------------

    def topics(self) -> list[TopicMetadata]:
        with self._lock:
            return [self._topics[name] for name in sorted(self._topics)]

    def topic(self, name: str) -> TopicMetadata | None:
        with self._lock:
            return self._topics.get(name)

    def _put(self, topic: TopicMetadata) -> TopicMetadata:
        """Store and persist ``topic`` (caller holds the lock, then calls :meth:`_changed`)."""
        self._topics[topic.name] = topic
        self._save()
        return topic

    def _changed(self, topic: TopicMetadata) -> TopicMetadata:
        for listener in self._listeners_now():
            listener.on_topic_changed(topic)
        return topic

    def create_topic(
        self,
        name: str,
        assignment: Sequence[Sequence[int]],
        configs: Mapping[str, str] | None = None,
        topic_id: uuid.UUID | None = None,
    ) -> TopicMetadata:
        with self._lock:
            if name in self._topics:
                raise KeyError(name)
            topic = TopicMetadata(
                name,
                topic_id or uuid.uuid4(),
                tuple(PartitionState.initial(r) for r in assignment),
                dict(configs or {}),
            )
            self._put(topic)
        return self._changed(topic)

    def set_partitions(self, name: str, assignment: Sequence[Sequence[int]]) -> TopicMetadata:
        with self._lock:
            topic = self._topics[name]
            added = tuple(PartitionState.initial(r) for r in assignment[topic.partition_count :])
            topic = self._put(replace(topic, partitions=topic.partitions + added))
        return self._changed(topic)

    def set_partition_state(self, name: str, partition: int, state: PartitionState) -> None:
        with self._lock:
            topic = self._topics[name]
            partitions = list(topic.partitions)
            partitions[partition] = state
            topic = self._put(replace(topic, partitions=tuple(partitions)))
        self._changed(topic)

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            topic = self._put(replace(self._topics[name], configs=dict(configs)))
        self._changed(topic)

    def delete_topic(self, name: str) -> TopicMetadata | None:
        with self._lock:
            topic = self._topics.pop(name, None)
            if topic is None:
                return None
            self._save()
        for listener in self._listeners_now():
            listener.on_topic_deleted(name)
        return topic

    # -- dynamic broker configs ------------------------------------------------------------

    def broker_configs(self, entity: str) -> dict[str, str]:
        with self._lock:
            return dict(self._broker_configs.get(entity, {}))

    def set_broker_configs(self, entity: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._broker_configs[entity] = dict(configs)
            else:
                self._broker_configs.pop(entity, None)
            self._save()
        for listener in self._listeners_now():
            listener.on_broker_configs_changed(entity, dict(configs))

    # -- group configs ---------------------------------------------------------------------

    def group_configs(self) -> dict[str, dict[str, str]]:
        with self._lock:
            return {g: dict(c) for g, c in self._group_configs.items()}

    def set_group_configs(self, group: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._group_configs[group] = dict(configs)
            else:
                self._group_configs.pop(group, None)
            self._save()
        for listener in self._listeners_now():
            listener.on_group_configs_changed(group, dict(configs))

    # -- client quotas ---------------------------------------------------------------------

    def quota_configs(self) -> dict[str, dict[str, str]]:
        """Every client quota entity's configs, by entity path (``users/<u>``,
        ``clients/<c>``, ``users/<u>/clients/<c>``, ``ips/<ip>``; names sanitized)."""
        with self._lock:
            return {p: dict(c) for p, c in self._quota_configs.items()}

    def set_quota_configs(self, path: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._quota_configs[path] = dict(configs)
            else:
                self._quota_configs.pop(path, None)
            self._save()
        for listener in self._listeners_now():
            listener.on_quota_configs_changed(path, dict(configs))

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

    # -- ACLs ------------------------------------------------------------------------------

    def acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        with self._lock:
            return dict(self._acls)

    def update_acls(
        self, pattern: ResourcePattern, update: AclUpdate
    ) -> tuple[frozenset[AccessControlEntry], frozenset[AccessControlEntry]]:
        """Read-modify-write of one pattern's ACLs, persisted before the listeners
        (``on_acls_changed``) hear of it."""
        pattern.validate()
        with self._lock:
            before = self._acls.get(pattern, frozenset())
            after = frozenset(update(before))
            if after == before:
                return before, after
            for entry in after:
                entry.validate()
            if after:
                self._acls[pattern] = after
            else:
                self._acls.pop(pattern, None)
            self._save()
        for listener in self._listeners_now():
            listener.on_acls_changed(pattern, after)
        return before, after
