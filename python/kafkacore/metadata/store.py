"""The metadata store interface: what a controller writes (Kafka's ``KafkaZkClient`` in
ZooKeeper mode) and the change notifications brokers' caches follow.

Two implementations: :class:`~kafkacore.metadata.embedded.EmbeddedMetadataStore` (one
node, a JSON file) and :class:`~kafkacore.metadata.zookeeper.ZooKeeperMetadataStore`
(Kafka's classic paths). Both tell every :class:`MetadataListener` of every change. Calls may be
slow (a file rewrite with fsync, a ZooKeeper round trip): the broker makes them off the
event loop. Reads here are the store's own view, for start-up and for the controller;
request handlers read the :class:`~kafkacore.metadata.cache.MetadataCache` instead.

The model is Kafka's: a topic has an id, config overrides and, per partition, its
replica assignment and LeaderAndIsr state (:class:`PartitionState`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kafkacore.security.acl import AccessControlEntry, ResourcePattern

__all__ = [
    "NO_LEADER",
    "AclUpdate",
    "MetadataListener",
    "MetadataStore",
    "PartitionState",
    "QuotaConfigListener",
    "TopicMetadata",
]

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition's assignment and LeaderAndIsr (Kafka's
    ``/brokers/topics/<t>/partitions/<p>/state`` plus the topic's assignment).

    ``leader_epoch`` grows with every leader change; ``partition_epoch`` with every
    change of this state (Kafka's znode version / KRaft partition epoch)."""

    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int = 0

    @classmethod
    def initial(cls, replicas: Sequence[int]) -> PartitionState:
        """A new partition: the first replica leads at epoch 0, every replica in sync."""
        assigned = tuple(replicas)
        return cls(assigned, assigned[0] if assigned else NO_LEADER, 0, assigned, 0)


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """One topic: its id, config overrides (Kafka names, string values) and its
    partitions' states, indexed by partition id. Immutable: a change makes a new one."""

    name: str
    topic_id: uuid.UUID
    partitions: tuple[PartitionState, ...]
    configs: Mapping[str, str] = field(default_factory=dict)

    @property
    def partition_count(self) -> int:
        return len(self.partitions)


AclUpdate = Callable[[frozenset[AccessControlEntry]], frozenset[AccessControlEntry]]
"""A read-modify-write of one resource pattern's ACLs: the current entries in, the new
ones out. It may be called more than once (a ZooKeeper store retries on a version
conflict), so it must not have effects beyond its result."""


class MetadataListener(Protocol):
    """Told of every change the store makes or learns of, on every broker of a cluster
    (Kafka's metadata publishers: the replica manager, the cache, the quota and credential
    managers, the authorizer). Every method has a no-op default: a listener subclasses this
    and overrides what it follows. A ZooKeeper store calls it from its own thread:
    implementations must be thread-safe."""

    # (``return None`` bodies: defaults, which mypy would take for abstract if empty)

    def on_topic_changed(self, topic: TopicMetadata) -> None:
        """A topic was created or changed (partitions, their states, its configs)."""
        return None

    def on_topic_deleted(self, name: str) -> None:
        return None

    def on_topic_configs_changed(self, name: str, configs: Mapping[str, str]) -> None:
        """Cluster mode: a topic's config overrides changed (or were read for a new
        topic); its partitions come with the controller's requests."""
        return None

    def on_broker_configs_changed(self, entity: str, configs: Mapping[str, str]) -> None:
        """The dynamic configs of a broker (its id) or of every broker (``"default"``)."""
        return None

    def on_quota_configs_changed(self, path: str, configs: Mapping[str, str]) -> None:
        """A client quota entity's configs (``users/<u>``, ``clients/<c>``,
        ``users/<u>/clients/<c>``, ``ips/<ip>``; sanitized names), SCRAM credentials
        included."""
        return None

    def on_acls_changed(
        self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry]
    ) -> None:
        """``pattern``'s ACLs are now ``entries`` (empty: none)."""
        return None

    def on_group_configs_changed(self, group: str, configs: Mapping[str, str]) -> None:
        """A group's dynamic configs (ConfigResource GROUP) are now ``configs``."""
        return None

    def on_cluster_id(self, cluster_id: str) -> None:
        return None


class QuotaConfigListener(MetadataListener):
    """A :class:`MetadataListener` that follows only the quota entity configs: a subclass
    implements ``on_quota_configs_changed``."""

    def on_quota_configs_changed(self, path: str, configs: Mapping[str, str]) -> None:
        raise NotImplementedError


class MetadataStore(Protocol):
    """The cluster metadata a controller writes. Every method may block (disk or
    network); none may be called while holding a broker lock the event loop needs."""

    @property
    def cluster_id(self) -> str | None: ...

    def set_cluster_id(self, cluster_id: str) -> None:
        """Record the cluster id; a different stored one is a ``ValueError``."""
        ...

    def topics(self) -> list[TopicMetadata]:
        """Every topic, by name."""
        ...

    def topic(self, name: str) -> TopicMetadata | None: ...

    def create_topic(
        self,
        name: str,
        assignment: Sequence[Sequence[int]],
        configs: Mapping[str, str] | None = None,
        topic_id: uuid.UUID | None = None,
    ) -> TopicMetadata:
        """Create ``name`` with one replica list per partition (``KeyError`` if it
        exists); each partition starts with :meth:`PartitionState.initial`."""
        ...

    def set_partitions(self, name: str, assignment: Sequence[Sequence[int]]) -> TopicMetadata:
        """Grow ``name`` to ``len(assignment)`` partitions (existing ones keep their
        state; the new ones start from their replica list)."""
        ...

    def set_partition_state(self, name: str, partition: int, state: PartitionState) -> None:
        """Write one partition's LeaderAndIsr (Kafka's ``updateLeaderAndIsr``)."""
        ...

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None: ...

    def delete_topic(self, name: str) -> TopicMetadata | None: ...

    def broker_configs(self, entity: str) -> dict[str, str]:
        """Dynamic broker configs of ``entity``: a node id as a string, or ``"default"``."""
        ...

    def set_broker_configs(self, entity: str, configs: Mapping[str, str]) -> None: ...

    def quota_configs(self) -> dict[str, dict[str, str]]:
        """Client quota configs by entity path below ``/config`` (``users/<u>``,
        ``clients/<c>``, ``users/<u>/clients/<c>``, ``ips/<ip>``; sanitized names)."""
        ...

    def set_quota_configs(self, path: str, configs: Mapping[str, str]) -> None:
        """Replace one quota entity's configs; the listeners hear of it (on every broker
        of a cluster)."""
        ...

    def group_configs(self) -> dict[str, dict[str, str]]:
        """Every group's dynamic configs (ConfigResource GROUP), by group id."""
        ...

    def set_group_configs(self, group: str, configs: Mapping[str, str]) -> None:
        """Replace one group's dynamic configs; the listeners hear of it (on every broker
        of a cluster)."""
        ...

    def allocate_producer_id(self) -> int:
        """A producer id never handed out before."""
        ...

    # -- ACLs (the authorizer's; ``on_acls_changed`` on every broker) ----------------------

    def acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        """Every stored ACL, by resource pattern (LITERAL and PREFIXED only)."""
        ...

    def update_acls(
        self, pattern: ResourcePattern, update: AclUpdate
    ) -> tuple[frozenset[AccessControlEntry], frozenset[AccessControlEntry]]:
        """Apply ``update`` to ``pattern``'s ACLs atomically; ``(before, after)``. A
        pattern the store cannot hold is an :class:`~kafkacore.security.acl.InvalidAclError`."""
        ...

    def add_listener(self, listener: MetadataListener) -> None:
        """Call ``listener`` after every change from now on."""
        ...
