"""The controller's cache of cluster state (Kafka's ``ControllerContext``).

Only the controller's event task reads or writes it (CONVENTIONS 15), so it has no lock."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

from kafkacore.controller.algorithms import LeaderAndIsr
from kafkacore.log import TopicPartition
from kafkacore.zk.data import BrokerRegistration

__all__ = ["ControllerContext", "PartitionState", "ReplicaAssignment", "ReplicaState"]


class PartitionState(enum.Enum):
    NON_EXISTENT = 0
    NEW = 1
    ONLINE = 2
    OFFLINE = 3


class ReplicaState(enum.Enum):
    NON_EXISTENT = 0
    NEW = 1
    ONLINE = 2
    OFFLINE = 3
    DELETION_STARTED = 4
    DELETION_SUCCESSFUL = 5
    DELETION_INELIGIBLE = 6


@dataclass
class ReplicaAssignment:
    replicas: list[int]
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)


@dataclass
class ControllerContext:
    epoch: int = 0
    epoch_zk_version: int = -1
    # broker id -> registration, broker id -> epoch (czxid)
    live_brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    broker_epochs: dict[int, int] = field(default_factory=dict)
    shutting_down: set[int] = field(default_factory=set)
    assignments: dict[str, dict[int, ReplicaAssignment]] = field(default_factory=dict)
    topic_ids: dict[str, uuid.UUID | None] = field(default_factory=dict)
    leader_isr: dict[TopicPartition, LeaderAndIsr] = field(default_factory=dict)
    partition_states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    replica_states: dict[tuple[TopicPartition, int], ReplicaState] = field(default_factory=dict)
    topics_to_delete: set[str] = field(default_factory=set)
    topics_ineligible_for_deletion: set[str] = field(default_factory=set)
    # broker id -> its replicas in a failed log directory (Kafka's replicasOnOfflineDirs),
    # learned from KAFKA_STORAGE_ERROR answers to LeaderAndIsr
    replicas_on_offline_dirs: dict[int, set[TopicPartition]] = field(default_factory=dict)

    def reset(self) -> None:
        keep = (self.epoch, self.epoch_zk_version)
        self.__init__()  # type: ignore[misc]
        self.epoch, self.epoch_zk_version = keep

    # --- brokers -------------------------------------------------------------------------

    @property
    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self.live_brokers)

    @property
    def live_broker_ids(self) -> set[int]:
        """Registered and not shutting down (Kafka's ``liveBrokerIds``)."""
        return set(self.live_brokers) - self.shutting_down

    def is_replica_online(
        self, broker: int, include_shutting_down: bool = False, tp: TopicPartition | None = None
    ) -> bool:
        """``broker`` is live (and not shutting down unless ``include_shutting_down``);
        with ``tp``, its replica of ``tp`` is also not in a failed log directory."""
        if tp is not None and tp in self.replicas_on_offline_dirs.get(broker, ()):
            return False
        if include_shutting_down:
            return broker in self.live_brokers
        return broker in self.live_brokers and broker not in self.shutting_down

    def live_brokers_for(self, tp: TopicPartition, brokers: set[int]) -> set[int]:
        """``brokers`` without those whose replica of ``tp`` is in a failed log dir."""
        return {b for b in brokers if tp not in self.replicas_on_offline_dirs.get(b, ())}

    def add_live_broker(self, registration: BrokerRegistration, epoch: int) -> None:
        self.live_brokers[registration.id] = registration
        self.broker_epochs[registration.id] = epoch
        self.replicas_on_offline_dirs.pop(registration.id, None)  # a new start: asks again

    def remove_live_broker(self, broker: int) -> None:
        self.live_brokers.pop(broker, None)
        self.broker_epochs.pop(broker, None)
        self.shutting_down.discard(broker)
        self.replicas_on_offline_dirs.pop(broker, None)

    # --- topics and partitions -----------------------------------------------------------

    @property
    def all_topics(self) -> set[str]:
        return set(self.assignments)

    def all_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t, parts in self.assignments.items() for p in parts]

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in sorted(self.assignments.get(topic, {}))]

    def replicas(self, tp: TopicPartition) -> list[int]:
        a = self.assignments.get(tp.topic, {}).get(tp.partition)
        return list(a.replicas) if a else []

    def full_assignment(self, tp: TopicPartition) -> ReplicaAssignment | None:
        return self.assignments.get(tp.topic, {}).get(tp.partition)

    def set_assignment(self, tp: TopicPartition, a: ReplicaAssignment) -> None:
        self.assignments.setdefault(tp.topic, {})[tp.partition] = a

    def partitions_on_broker(self, broker: int) -> list[TopicPartition]:
        return [tp for tp in self.all_partitions() if broker in self.replicas(tp)]

    def partitions_led_by(self, broker: int) -> list[TopicPartition]:
        return [tp for tp, s in self.leader_isr.items() if s.leader == broker]

    def replicas_for_partitions(
        self, tps: list[TopicPartition]
    ) -> list[tuple[TopicPartition, int]]:
        return [(tp, r) for tp in tps for r in self.replicas(tp)]

    def is_topic_queued_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_delete

    def remove_topic(self, topic: str) -> None:
        for tp in self.partitions_for_topic(topic):
            self.leader_isr.pop(tp, None)
            self.partition_states.pop(tp, None)
        for key in [k for k in self.replica_states if k[0].topic == topic]:
            del self.replica_states[key]
        self.assignments.pop(topic, None)
        self.topic_ids.pop(topic, None)
        self.topics_to_delete.discard(topic)
        self.topics_ineligible_for_deletion.discard(topic)

    def offline_replicas(self, tp: TopicPartition) -> list[int]:
        return [r for r in self.replicas(tp) if not self.is_replica_online(r, True, tp)]
