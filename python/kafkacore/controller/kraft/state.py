"""The quorum controller's state: the metadata image at some offset, the offset of each
broker's latest RegisterBrokerRecord (a broker is unfenced once it has caught up to it),
and the indexes Kafka's ``BrokersToIsrs`` and ``BrokersToElrs`` keep, computed once per
state on first use.

The state is immutable: the active controller moves to a new one with each write and
falls back to the committed one when it loses leadership (what Kafka's
``SnapshotRegistry`` reverts), which needs no copy.

Immutable (indexes are computed at most twice under a race, harmlessly): thread-safe.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from kafkacore.metadata.image import MetadataImage
from kafkacore.metadata.image.cluster import BrokerRegistration
from kafkacore.metadata.image.topics import (
    MIGRATING_DIRECTORY,
    NO_LEADER,
    UNASSIGNED_DIRECTORY,
    PartitionRegistration,
)

__all__ = ["ControllerState", "TopicIdPartition"]

TopicIdPartition = tuple[uuid.UUID, int]


@dataclass(frozen=True)
class ControllerState:
    image: MetadataImage
    register_offsets: Mapping[int, int] = field(default_factory=dict)

    @property
    def offset(self) -> int:
        return self.image.offset

    # -- brokers ----------------------------------------------------------------------

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return self.image.cluster.brokers.get(broker_id)

    def is_active(self, broker_id: int) -> bool:
        """Registered, unfenced and not in controlled shutdown (Kafka's ``isActive``)."""
        broker = self.broker(broker_id)
        return broker is not None and not broker.fenced and not broker.in_controlled_shutdown

    def usable_brokers(self) -> list[BrokerRegistration]:
        """Brokers new replicas may be placed on (active ones), by id."""
        return [b for _, b in sorted(self.image.cluster.brokers.items()) if self.is_active(b.id)]

    def default_dir(self, broker_id: int) -> uuid.UUID:
        """Kafka's ``defaultDir``: a broker's only log directory; MIGRATING if it has
        none, UNASSIGNED if it has several (it assigns them itself)."""
        broker = self.broker(broker_id)
        if broker is None or len(broker.directories) > 1:
            return UNASSIGNED_DIRECTORY
        if not broker.directories:
            return MIGRATING_DIRECTORY
        return broker.directories[0]

    def register_offset(self, broker_id: int) -> int:
        """The offset of the broker's latest RegisterBrokerRecord (-1: none)."""
        return self.register_offsets.get(broker_id, -1)

    # -- partitions by broker ---------------------------------------------------------

    @cached_property
    def _indexes(
        self,
    ) -> tuple[
        dict[int, list[TopicIdPartition]],
        dict[int, list[TopicIdPartition]],
        dict[int, int],
        list[TopicIdPartition],
    ]:
        in_isr: dict[int, list[TopicIdPartition]] = defaultdict(list)
        in_elr: dict[int, list[TopicIdPartition]] = defaultdict(list)
        leads: dict[int, int] = defaultdict(int)
        leaderless: list[TopicIdPartition] = []
        for topic_id, topic in self.image.topics.by_id.items():
            for pid, partition in sorted(topic.partitions.items()):
                key = (topic_id, pid)
                for replica in partition.isr:
                    in_isr[replica].append(key)
                for replica in partition.elr:
                    in_elr[replica].append(key)
                if partition.leader == NO_LEADER:
                    leaderless.append(key)
                else:
                    leads[partition.leader] += 1
        return in_isr, in_elr, leads, leaderless

    def partitions_with_broker_in_isr(self, broker_id: int) -> list[TopicIdPartition]:
        return list(self._indexes[0].get(broker_id, ()))

    def partitions_with_broker_in_elr(self, broker_id: int) -> list[TopicIdPartition]:
        return list(self._indexes[1].get(broker_id, ()))

    def partitions_with_no_leader(self) -> list[TopicIdPartition]:
        return list(self._indexes[3])

    def has_leaderships(self, broker_id: int) -> bool:
        return self._indexes[2].get(broker_id, 0) > 0

    def partition(self, key: TopicIdPartition) -> PartitionRegistration | None:
        topic = self.image.topics.by_id.get(key[0])
        return None if topic is None else topic.partitions.get(key[1])
