"""The :class:`~kafkacore.metadata.MetadataStore` of a KRaft broker: the metadata image,
seen through the interface the broker's followers already use (the dynamic broker
configs, the topic configs of the logs, the client quotas, the SCRAM credentials and the
authorizer's ACLs), as ZooKeeper mode shows them ZooKeeper.

* **Reads** come from the latest published image: topics with their partitions' states
  and configs, broker configs (``default`` is the cluster default, resource ``""``),
  client quotas and SCRAM credentials by ZooKeeper-style entity path (``users/<u>``,
  ``clients/<c>``, ``users/<u>/clients/<c>``, ``ips/<ip>``: a user's credentials beside
  its quotas, as Kafka kept them in ZooKeeper), ACLs by resource pattern.
* **Notifications** (:meth:`KRaftMetadataStore.publish`, per delta, on the metadata
  thread): each changed topic config, broker config, quota entity (credentials
  included) and ACL pattern is told to every listener, as the ZooKeeper store tells its
  change notifications.
* **Writes** belong to the controller: a KRaft broker forwards the requests that make them
  (:mod:`~kafkacore.server.kraft.forwarding`). The two a broker makes on its own go to the
  controller through :class:`ControllerRequests`: creating an internal topic (CreateTopics,
  then waiting until the topic is in the image) and producer ids (AllocateProducerIds, a
  block at a time: Kafka's ``RPCProducerIdManager``). Any other write raises
  :class:`ForwardedToController`.

Thread-safety: the image is replaced by one reference assignment; reads take whichever
image is current. Writes block (on an I/O thread, never the event loop).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Protocol

from kafkacore.features import FinalizedFeatures
from kafkacore.metadata import MetadataListener, PartitionState, TopicMetadata
from kafkacore.metadata.image import (
    ConfigResource,
    ConfigResourceType,
    MetadataDelta,
    MetadataImage,
    TopicImage,
)
from kafkacore.metadata.image.security import SCRAM_MECHANISMS
from kafkacore.metadata.store import FeaturesUpdate
from kafkacore.security.acl import AccessControlEntry, ResourcePattern
from kafkacore.security.scram import ScramCredential
from kafkacore.server.client_quotas import CLIENT_ID, DEFAULT_NAME, IP, USER, java_double, sanitize

__all__ = [
    "ControllerRequests",
    "ForwardedToController",
    "KRaftMetadataStore",
    "quota_entity_path",
    "topic_metadata",
]

logger = logging.getLogger("kafkacore.server")

#: the broker config resource of the cluster default, and the store's name for it
_CLUSTER_DEFAULT = ""
_DEFAULT_ENTITY = "default"
#: how long an internal topic's creation waits for the topic to reach this broker's image
_TOPIC_WAIT_S = 30.0


class ForwardedToController(RuntimeError):
    """A metadata write a KRaft broker does not make: the controller does, from the
    forwarded request."""


class ControllerRequests(Protocol):
    """What a KRaft broker asks the controller for itself (blocking calls, made from an
    I/O thread): CreateTopics with an explicit assignment (``KeyError`` when the topic
    exists, ``ValueError`` with the controller's message for another refusal) and
    AllocateProducerIds (``(first id, count)``)."""

    def create_topic(
        self, name: str, assignment: Sequence[Sequence[int]], configs: Mapping[str, str]
    ) -> None: ...

    def allocate_producer_ids(self) -> tuple[int, int]: ...


def topic_metadata(topic: TopicImage, configs: Mapping[str, str]) -> TopicMetadata:
    """A topic of the image as the metadata cache holds topics (partition ids in order)."""
    partitions = topic.partitions
    states = tuple(
        PartitionState(p.replicas, p.leader, p.leader_epoch, p.isr, p.partition_epoch)
        for _, p in sorted(partitions.items())
    )
    return TopicMetadata(topic.name, topic.id, states, dict(configs))


def quota_entity_path(entity: Sequence[tuple[str, str | None]]) -> str | None:
    """The ZooKeeper-style path of a client quota entity of the image (None for a
    combination ZooKeeper never held)."""
    parts = dict(entity)
    if set(parts) == {IP}:
        ip = parts[IP]
        return f"ips/{DEFAULT_NAME if ip is None else ip}"
    if set(parts) == {USER}:
        return f"users/{sanitize(parts[USER])}"
    if set(parts) == {CLIENT_ID}:
        return f"clients/{sanitize(parts[CLIENT_ID])}"
    if set(parts) == {USER, CLIENT_ID}:
        return f"users/{sanitize(parts[USER])}/clients/{sanitize(parts[CLIENT_ID])}"
    return None


def _quota_configs(image: MetadataImage) -> dict[str, dict[str, str]]:
    configs: dict[str, dict[str, str]] = {}
    for entity, quotas in image.client_quotas.entities.items():
        path = quota_entity_path(entity)
        if path is not None:
            configs[path] = {key: java_double(value) for key, value in quotas.items()}
    for mechanism, users in image.scram.mechanisms.items():
        name = SCRAM_MECHANISMS[mechanism]
        for user, data in users.items():
            credential = ScramCredential(
                data.salt, data.stored_key, data.server_key, data.iterations
            )
            configs.setdefault(f"users/{sanitize(user)}", {})[name] = credential.to_kafka_string()
    return configs


def _acls(image: MetadataImage) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
    by_pattern: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for binding in image.acls.acls.values():
        by_pattern.setdefault(binding.pattern, set()).add(binding.entry)
    return {pattern: frozenset(entries) for pattern, entries in by_pattern.items()}


class KRaftMetadataStore:
    """See the module docstring. ``controller`` makes the broker's own requests."""

    def __init__(self, cluster_id: str, controller: ControllerRequests) -> None:
        self._cluster_id = cluster_id
        self._controller = controller
        self._image = MetadataImage()
        self._listeners: list[MetadataListener] = []
        self._lock = threading.Lock()
        self._published = threading.Condition(self._lock)
        # the producer id block handed out (Kafka's RPCProducerIdManager): next, end
        self._pid_lock = threading.Lock()
        self._next_pid = 0
        self._pid_end = 0

    @property
    def image(self) -> MetadataImage:
        return self._image

    # -- MetadataStore: identity --------------------------------------------------------

    @property
    def cluster_id(self) -> str | None:
        return self._cluster_id

    def set_cluster_id(self, cluster_id: str) -> None:
        if cluster_id != self._cluster_id:
            raise ValueError(
                f"The cluster id {cluster_id} of the log directories is not the metadata "
                f"quorum's {self._cluster_id}"
            )

    # -- MetadataStore: reads -------------------------------------------------------------

    def topics(self) -> list[TopicMetadata]:
        image = self._image
        return [
            topic_metadata(t, self._topic_configs(image, t.name))
            for _, t in sorted(image.topics.by_name.items())
        ]

    def topic(self, name: str) -> TopicMetadata | None:
        image = self._image
        found = image.topics.by_name.get(name)
        return None if found is None else topic_metadata(found, self._topic_configs(image, name))

    @staticmethod
    def _topic_configs(image: MetadataImage, name: str) -> Mapping[str, str]:
        return image.configs.configs(ConfigResource(ConfigResourceType.TOPIC, name))

    def broker_configs(self, entity: str) -> dict[str, str]:
        name = _CLUSTER_DEFAULT if entity == _DEFAULT_ENTITY else entity
        return dict(self._image.configs.configs(ConfigResource(ConfigResourceType.BROKER, name)))

    def quota_configs(self) -> dict[str, dict[str, str]]:
        return _quota_configs(self._image)

    def group_configs(self) -> dict[str, dict[str, str]]:
        """Every group's dynamic configs: the image's GROUP config resources."""
        return {
            resource.name: dict(configs)
            for resource, configs in self._image.configs.data.items()
            if resource.type == ConfigResourceType.GROUP and configs
        }

    def set_group_configs(self, group: str, configs: Mapping[str, str]) -> None:
        raise self._forwarded("A group config change")

    def acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        return _acls(self._image)

    def add_listener(self, listener: MetadataListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    # -- MetadataStore: the broker's own writes -----------------------------------------

    def create_topic(
        self,
        name: str,
        assignment: Sequence[Sequence[int]],
        configs: Mapping[str, str] | None = None,
        topic_id: uuid.UUID | None = None,
    ) -> TopicMetadata:
        """CreateTopics to the controller (an internal topic), then wait until this
        broker's image has it (``TimeoutError`` after 30 s)."""
        if name in self._image.topics.by_name:
            raise KeyError(name)
        self._controller.create_topic(name, assignment, dict(configs or {}))
        deadline = time.monotonic() + _TOPIC_WAIT_S
        with self._published:
            while name not in self._image.topics.by_name:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"topic {name} did not reach the metadata of this broker")
                self._published.wait(remaining)
        found = self.topic(name)
        assert found is not None
        return found

    def allocate_producer_id(self) -> int:
        """The next id of the block the controller gave this broker; a new block once it
        is used up."""
        with self._pid_lock:
            if self._next_pid >= self._pid_end:
                start, length = self._controller.allocate_producer_ids()
                self._next_pid, self._pid_end = start, start + length
            pid = self._next_pid
            self._next_pid += 1
            return pid

    def _forwarded(self, what: str) -> ForwardedToController:
        return ForwardedToController(f"{what} is the controller's in KRaft mode")

    def set_partitions(self, name: str, assignment: Sequence[Sequence[int]]) -> TopicMetadata:
        raise self._forwarded("CreatePartitions")

    def set_partition_state(self, name: str, partition: int, state: PartitionState) -> None:
        raise self._forwarded("A partition state change")

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        raise self._forwarded("A topic config change")

    def delete_topic(self, name: str) -> TopicMetadata | None:
        raise self._forwarded("DeleteTopics")

    def set_broker_configs(self, entity: str, configs: Mapping[str, str]) -> None:
        raise self._forwarded("A broker config change")

    def set_quota_configs(self, path: str, configs: Mapping[str, str]) -> None:
        raise self._forwarded("A client quota change")

    def update_acls(
        self, pattern: ResourcePattern, update: object
    ) -> tuple[frozenset[AccessControlEntry], frozenset[AccessControlEntry]]:
        raise self._forwarded("An ACL change")

    def finalized_features(self) -> FinalizedFeatures:
        """The image's FeatureLevelRecords, at the image's offset as the epoch."""
        image = self._image
        return FinalizedFeatures(image.features.all_levels(), image.offset)

    def update_finalized_features(self, update: FeaturesUpdate) -> FinalizedFeatures:
        raise self._forwarded("UpdateFeatures")

    # -- publication ----------------------------------------------------------------------

    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        """``image`` is current: tell the listeners what ``delta`` changed (metadata
        thread)."""
        before = delta.image
        with self._published:
            self._image = image
            listeners = list(self._listeners)
            self._published.notify_all()
        if not listeners:
            return
        for resource, configs in self._changed_configs(delta, image):
            for listener in listeners:
                if resource.type == ConfigResourceType.TOPIC:
                    listener.on_topic_configs_changed(resource.name, configs)
                elif resource.type == ConfigResourceType.GROUP:
                    listener.on_group_configs_changed(resource.name, configs)
                else:
                    entity = _DEFAULT_ENTITY if resource.name == _CLUSTER_DEFAULT else resource.name
                    listener.on_broker_configs_changed(entity, configs)
        if delta.client_quotas_delta is not None or delta.scram_delta is not None:
            old, new = _quota_configs(before), _quota_configs(image)
            for path in sorted(set(old) | set(new)):
                if old.get(path) != new.get(path):
                    for listener in listeners:
                        listener.on_quota_configs_changed(path, dict(new.get(path, {})))
        if delta.acls_delta is not None:
            old_acls, new_acls = _acls(before), _acls(image)
            for pattern in set(old_acls) | set(new_acls):
                entries = new_acls.get(pattern, frozenset())
                if old_acls.get(pattern, frozenset()) != entries:
                    for listener in listeners:
                        listener.on_acls_changed(pattern, entries)

    @staticmethod
    def _changed_configs(
        delta: MetadataDelta, image: MetadataImage
    ) -> list[tuple[ConfigResource, dict[str, str]]]:
        """The topic, broker and group config resources ``delta`` changed, with their
        configs now (deleted topics' configs are empty)."""
        changed: set[ConfigResource] = set()
        if delta.configs_delta is not None:
            changed.update(delta.configs_delta.changes)
        return [
            (resource, dict(image.configs.configs(resource)))
            for resource in sorted(changed)
            if resource.type
            in (ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.GROUP)
        ]
