"""Which replica a consumer should fetch from (KIP-392): Kafka's
``org.apache.kafka.common.replica`` package - :class:`ClientMetadata`,
:class:`ReplicaView`, :class:`PartitionView`, the :class:`ReplicaSelector` plug-in and
its one implementation, :class:`RackAwareReplicaSelector`.

The leader asks its selector (``replica.selector.class``) on every consumer Fetch v11+
(:meth:`~kafkacore.server.replica_manager.ReplicaManager.find_preferred_read_replica`);
the selector sees the leader and the in-sync followers that hold the fetch offset, and a
choice other than the leader becomes the answer's ``preferred_read_replica``. With no
selector configured (Kafka's default, ``replica.selector.class`` unset) the leader never
names another replica - though a follower still serves a v11+ consumer that comes to it.

``replica.selector.class`` takes Kafka's class name
``org.apache.kafka.common.replica.RackAwareReplicaSelector``; as a kafkacore extension it
also takes the dotted path of a Python class implementing :class:`ReplicaSelector`
(``package.module.ClassName``), made with no arguments and given the broker's configs
(:meth:`ReplicaSelector.configure`) once, as Kafka's ``CoreUtils.createObject`` and
``configure(config.originals())`` do.

Thread-safety: the views are immutable; a selector is called from the broker's event
loop and its I/O threads and must keep no per-call state (the rack-aware one keeps none).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kafkacore.config import ConfigError
from kafkacore.log import TopicPartition

__all__ = [
    "RACK_AWARE_REPLICA_SELECTOR",
    "ClientMetadata",
    "PartitionView",
    "RackAwareReplicaSelector",
    "ReplicaSelector",
    "ReplicaView",
    "create_replica_selector",
    "partition_view",
    "replica_view_key",
]

RACK_AWARE_REPLICA_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
"""Kafka's class name of :class:`RackAwareReplicaSelector`."""


@dataclass(frozen=True, slots=True)
class ClientMetadata:
    """Who fetches (Kafka's ``ClientMetadata.DefaultClientMetadata``): the Fetch's
    ``rack_id`` (v11+; empty: no rack), the client id, address and principal, and the
    listener the request came in on."""

    rack_id: str
    client_id: str
    client_address: str
    principal: str
    listener_name: str


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One replica as the selector sees it (Kafka's ``ReplicaView.DefaultReplicaView``):
    its broker id and rack (``node_id`` -1: a broker with no endpoint on the client's
    listener, Kafka's ``Node.noNode()``), its log end offset and how long ago it was last
    caught up with the leader (0 for the leader itself)."""

    node_id: int
    rack: str | None
    log_end_offset: int
    time_since_last_caught_up_ms: int

    @property
    def has_endpoint(self) -> bool:
        """Not Kafka's ``Node.noNode()`` (``Node.isEmpty``)."""
        return self.node_id >= 0


def replica_view_key(view: ReplicaView) -> tuple[int, int, int]:
    """Kafka's ``ReplicaView.comparator()`` as a sort key: the larger log end offset, then
    the shorter time since caught up, then the larger broker id is the greater."""
    return (view.log_end_offset, -view.time_since_last_caught_up_ms, view.node_id)


@dataclass(frozen=True, slots=True)
class PartitionView:
    """A partition's candidate replicas (Kafka's ``PartitionView.DefaultPartitionView``):
    the leader and the followers that may serve the fetch; the leader is among
    ``replicas``."""

    replicas: frozenset[ReplicaView]
    leader: ReplicaView


@runtime_checkable
class ReplicaSelector(Protocol):
    """Kafka's ``ReplicaSelector``: the preferred read replica of a partition for a client,
    or ``None`` when there is none (the leader then serves it)."""

    def configure(self, configs: Mapping[str, Any]) -> None: ...

    def select(
        self, topic_partition: TopicPartition, client: ClientMetadata, partition: PartitionView
    ) -> ReplicaView | None: ...


class RackAwareReplicaSelector:
    """Kafka's ``RackAwareReplicaSelector``: with a client rack, the leader if it is in that
    rack, else the most caught-up replica of that rack (:func:`replica_view_key`); the
    leader when the client has no rack or no replica is in its rack. Stateless."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Nothing to configure (Kafka's default ``configure``)."""

    def select(
        self, topic_partition: TopicPartition, client: ClientMetadata, partition: PartitionView
    ) -> ReplicaView | None:
        rack = client.rack_id
        if not rack:
            return partition.leader
        same_rack = [r for r in partition.replicas if r.rack == rack]
        if not same_rack or partition.leader in same_rack:
            return partition.leader
        return max(same_rack, key=replica_view_key)


def create_replica_selector(
    class_name: str | None, configs: Mapping[str, Any] | None = None
) -> ReplicaSelector | None:
    """The selector ``replica.selector.class`` names, configured with ``configs`` (Kafka's
    ``ReplicaManager.createReplicaSelector``); ``None`` when unset (leader only). Raises
    ``ConfigError`` for a name that is neither Kafka's rack-aware selector nor an
    importable Python class implementing :class:`ReplicaSelector` (Kafka fails to start
    on a class it cannot load)."""
    if class_name is None or not class_name.strip():
        return None
    name = class_name.strip()
    selector: Any
    if name == RACK_AWARE_REPLICA_SELECTOR:
        selector = RackAwareReplicaSelector()
    else:
        selector = _load_python_selector(name)
    selector.configure(dict(configs or {}))
    return selector  # type: ignore[no-any-return]


def _load_python_selector(name: str) -> ReplicaSelector:
    module_name, _, attribute = name.rpartition(".")
    try:
        if not module_name:
            raise ImportError(name)
        cls = getattr(importlib.import_module(module_name), attribute)
        selector = cls()
    except Exception as exc:
        raise ConfigError(
            "replica.selector.class", name, f"Class {name} cannot be found ({exc})"
        ) from None
    if not isinstance(selector, ReplicaSelector):
        raise ConfigError(
            "replica.selector.class",
            name,
            f"{name} is not an instance of org.apache.kafka.common.replica.ReplicaSelector",
        )
    return selector


def partition_view(
    replicas: Iterable[tuple[int, int, int]],
    racks: Mapping[int, str | None],
    leader: tuple[int, int],
) -> PartitionView:
    """A :class:`PartitionView` from ``(broker id, log end offset, ms since caught up)`` of
    the candidate followers and ``(leader id, leader log end offset)``; ``racks`` maps each
    broker with an endpoint on the client's listener to its rack (the others become
    ``Node.noNode()``: id -1, no rack)."""

    def view(broker: int, leo: int, since: int) -> ReplicaView:
        if broker in racks:
            return ReplicaView(broker, racks[broker], leo, since)
        return ReplicaView(-1, None, leo, since)

    leader_view = view(leader[0], leader[1], 0)
    followers = {view(b, leo, since) for b, leo, since in replicas}
    return PartitionView(frozenset(followers | {leader_view}), leader_view)
