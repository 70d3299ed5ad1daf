"""Topics and partitions in the image (Kafka's ``PartitionRegistration``, ``TopicImage``,
``TopicsImage``, ``TopicDelta``, ``TopicsDelta`` and ``LocalReplicaChanges``).

A partition carries its replicas and their log directories, ISR, the replicas being
added or removed by a reassignment, leader, leader epoch, partition epoch, leader
recovery state and - KIP-966 - its eligible leader replicas (ELR) and last known ELR.
A PartitionChangeRecord changes only what it names (``None`` / ``NO_LEADER_CHANGE``
keep a field); applying one bumps the partition epoch, and a leader change bumps the
leader epoch.

:meth:`TopicsDelta.local_changes` is what a broker does with a delta (part of Kafka's
``ReplicaManager.applyDelta``): the partitions it must delete, lead or follow.

Immutable values; a delta is built and applied by one thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkacore.log import TopicPartition
from kafkacore.metadata.image.cluster import MetadataReplayError
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.metadata.versions import MetadataVersion

__all__ = [
    "LOST_DIRECTORY",
    "MIGRATING_DIRECTORY",
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "UNASSIGNED_DIRECTORY",
    "LocalReplicaChanges",
    "PartitionInfo",
    "PartitionRegistration",
    "TopicDelta",
    "TopicImage",
    "TopicsDelta",
    "TopicsImage",
]

NO_LEADER = -1
NO_LEADER_CHANGE = -2
RECOVERED, RECOVERING = 0, 1  # LeaderRecoveryState
# Kafka's DirectoryId: reserved log directory ids
MIGRATING_DIRECTORY = uuid.UUID(int=0)
UNASSIGNED_DIRECTORY = uuid.UUID(int=1)
LOST_DIRECTORY = uuid.UUID(int=2)

_PARTITION: Any = RECORDS[MetadataRecordType.PARTITION_RECORD].cls
_TOPIC: Any = RECORDS[MetadataRecordType.TOPIC_RECORD].cls


def _directories(directories: Sequence[uuid.UUID] | None, replicas: int) -> tuple[uuid.UUID, ...]:
    """Kafka's ``defaultToMigrating``: no directories means every replica's is MIGRATING."""
    if not directories:
        return (MIGRATING_DIRECTORY,) * replicas
    return tuple(directories)


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    """One partition's state (Kafka's ``PartitionRegistration``)."""

    replicas: tuple[int, ...]
    directories: tuple[uuid.UUID, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = NO_LEADER
    leader_recovery_state: int = RECOVERED
    leader_epoch: int = 0
    partition_epoch: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()

    @classmethod
    def from_record(cls, record: Any) -> PartitionRegistration:
        return cls(
            replicas=tuple(record.replicas),
            directories=_directories(record.directories, len(record.replicas)),
            isr=tuple(record.isr),
            removing_replicas=tuple(record.removing_replicas),
            adding_replicas=tuple(record.adding_replicas),
            leader=record.leader,
            leader_recovery_state=record.leader_recovery_state,
            leader_epoch=record.leader_epoch,
            partition_epoch=record.partition_epoch,
            elr=tuple(record.eligible_leader_replicas or ()),
            last_known_elr=tuple(record.last_known_elr or ()),
        )

    def merge(self, record: Any) -> PartitionRegistration:
        """This partition after a PartitionChangeRecord (Kafka's ``merge``)."""
        replicas = self.replicas if record.replicas is None else tuple(record.replicas)
        if record.directories is None:
            directories = self.directories
        else:
            if len(record.directories) != len(replicas):
                raise MetadataReplayError("The lengths for replicas and directories do not match.")
            directories = tuple(record.directories)
        if record.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = record.leader, self.leader_epoch + 1
        recovery = self.leader_recovery_state
        if record.leader_recovery_state != -1:
            recovery = record.leader_recovery_state
        return PartitionRegistration(
            replicas=replicas,
            directories=_directories(directories, len(replicas)),
            isr=self.isr if record.isr is None else tuple(record.isr),
            removing_replicas=(
                self.removing_replicas
                if record.removing_replicas is None
                else tuple(record.removing_replicas)
            ),
            adding_replicas=(
                self.adding_replicas
                if record.adding_replicas is None
                else tuple(record.adding_replicas)
            ),
            leader=leader,
            leader_recovery_state=recovery,
            leader_epoch=leader_epoch,
            partition_epoch=self.partition_epoch + 1,
            elr=self.elr
            if record.eligible_leader_replicas is None
            else tuple(record.eligible_leader_replicas),
            last_known_elr=(
                self.last_known_elr
                if record.last_known_elr is None
                else tuple(record.last_known_elr)
            ),
        )

    def to_record(
        self, topic_id: uuid.UUID, partition_id: int, mv: MetadataVersion, elr: bool
    ) -> MetadataRecord:
        """Kafka's ``toRecord``: the PartitionRecord at ``mv``'s version; ELR only when
        ``elr`` (the eligible.leader.replicas.version feature is on) and non-empty,
        directories only where ``mv`` assigns them."""
        value = _PARTITION(
            partition_id=partition_id,
            topic_id=topic_id,
            replicas=list(self.replicas),
            isr=list(self.isr),
            removing_replicas=list(self.removing_replicas),
            adding_replicas=list(self.adding_replicas),
            leader=self.leader,
            leader_recovery_state=self.leader_recovery_state,
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
            directories=list(self.directories) if mv.is_directory_assignment_supported else [],
            eligible_leader_replicas=list(self.elr) if elr and self.elr else None,
            last_known_elr=list(self.last_known_elr) if elr and self.last_known_elr else None,
        )
        return MetadataRecord(
            MetadataRecordType.PARTITION_RECORD, mv.partition_record_version, value
        )

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    def has_same_assignment(self, other: PartitionRegistration) -> bool:
        return (self.replicas, self.adding_replicas, self.removing_replicas, self.directories) == (
            other.replicas,
            other.adding_replicas,
            other.removing_replicas,
            other.directories,
        )

    def directory(self, replica: int) -> uuid.UUID | None:
        """The log directory of ``replica``; ``None`` when it is not a replica."""
        try:
            return self.directories[self.replicas.index(replica)]
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class TopicImage:
    """A topic: name, id and partitions by id (Kafka's ``TopicImage``)."""

    name: str
    id: uuid.UUID
    partitions: Mapping[int, PartitionRegistration] = field(default_factory=dict)

    def records(self, mv: MetadataVersion, elr: bool) -> list[MetadataRecord]:
        out = [
            MetadataRecord(
                MetadataRecordType.TOPIC_RECORD, 0, _TOPIC(name=self.name, topic_id=self.id)
            )
        ]
        out.extend(p.to_record(self.id, i, mv, elr) for i, p in sorted(self.partitions.items()))
        return out


@dataclass(frozen=True, slots=True)
class TopicsImage:
    """Every topic by id and by name (Kafka's ``TopicsImage``)."""

    by_id: Mapping[uuid.UUID, TopicImage] = field(default_factory=dict)
    by_name: Mapping[str, TopicImage] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.by_id

    def topic(self, key: str | uuid.UUID) -> TopicImage | None:
        return self.by_id.get(key) if isinstance(key, uuid.UUID) else self.by_name.get(key)

    def partition(self, topic: str | uuid.UUID, partition: int) -> PartitionRegistration | None:
        image = self.topic(topic)
        return None if image is None else image.partitions.get(partition)

    def records(self, mv: MetadataVersion, elr: bool) -> list[MetadataRecord]:
        out: list[MetadataRecord] = []
        for _, topic in sorted(self.by_name.items()):
            out.extend(topic.records(mv, elr))
        return out


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """A partition that changed for a broker, with its topic id (Kafka's
    ``LocalReplicaChanges.PartitionInfo``)."""

    topic_id: uuid.UUID
    partition: PartitionRegistration


@dataclass(slots=True)
class LocalReplicaChanges:
    """What a delta means for one broker (Kafka's ``LocalReplicaChanges``): partitions it
    no longer hosts (``deletes``), now leads with a new leader epoch
    (``elected_leaders``), leads with a new partition epoch (``leaders``, a superset),
    follows with a new partition epoch (``followers``); topic ids of the changed topics;
    and per partition the log directory newly assigned to its replica here."""

    deletes: set[TopicPartition] = field(default_factory=set)
    elected_leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    followers: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    directory_ids: dict[tuple[uuid.UUID, TopicPartition], uuid.UUID] = field(default_factory=dict)


class TopicDelta:
    """Changes to one topic's partitions (Kafka's ``TopicDelta``)."""

    def __init__(self, image: TopicImage) -> None:
        self.image = image
        self.partition_changes: dict[int, PartitionRegistration] = {}

    @property
    def name(self) -> str:
        return self.image.name

    @property
    def id(self) -> uuid.UUID:
        return self.image.id

    def partition(self, partition_id: int) -> PartitionRegistration | None:
        changed = self.partition_changes.get(partition_id)
        return changed if changed is not None else self.image.partitions.get(partition_id)

    def new_partitions(self) -> dict[int, PartitionRegistration]:
        return {p: r for p, r in self.partition_changes.items() if p not in self.image.partitions}

    def replay_partition(self, record: Any) -> None:
        self.partition_changes[record.partition_id] = PartitionRegistration.from_record(record)

    def replay_partition_change(self, record: Any) -> None:
        partition = self.partition(record.partition_id)
        if partition is None:
            raise MetadataReplayError(
                f"Unable to find partition {record.topic_id}:{record.partition_id}"
            )
        self.partition_changes[record.partition_id] = partition.merge(record)

    def clear_elr(self) -> None:
        """A ClearElrRecord for this topic: every partition forgets its ELR and last known
        ELR (as an empty PartitionChangeRecord setting both would)."""
        for partition_id in sorted({*self.image.partitions, *self.partition_changes}):
            partition = self.partition(partition_id)
            if partition is not None and (partition.elr or partition.last_known_elr):
                record = RECORDS[MetadataRecordType.PARTITION_CHANGE_RECORD].cls(
                    partition_id=partition_id,
                    topic_id=self.id,
                    eligible_leader_replicas=[],
                    last_known_elr=[],
                )
                self.partition_changes[partition_id] = partition.merge(record)

    def apply(self) -> TopicImage:
        partitions = dict(self.image.partitions)
        partitions.update(self.partition_changes)
        return TopicImage(self.image.name, self.image.id, partitions)

    def local_changes(self, broker_id: int, changes: LocalReplicaChanges) -> None:
        """Add what this topic's changes mean for ``broker_id`` to ``changes``."""
        for partition_id, now in self.partition_changes.items():
            tp = TopicPartition(self.name, partition_id)
            before = self.image.partitions.get(partition_id)
            if broker_id not in now.replicas:
                if before is not None and broker_id in before.replicas:
                    changes.deletes.add(tp)
            elif before is None or before.partition_epoch != now.partition_epoch:
                info = PartitionInfo(self.id, now)
                if now.leader == broker_id:
                    changes.leaders[tp] = info
                    if before is None or before.leader_epoch != now.leader_epoch:
                        changes.elected_leaders[tp] = info
                else:
                    changes.followers[tp] = info
                changes.topic_ids.setdefault(self.name, self.id)
            directory = now.directory(broker_id)
            if directory is not None and (
                before is None or before.directory(broker_id) != directory
            ):
                changes.directory_ids[(self.id, tp)] = directory


class TopicsDelta:
    """Changes to the topics (Kafka's ``TopicsDelta``): changed topics by id, the ids of
    topics of the image that were deleted, and of those created."""

    def __init__(self, image: TopicsImage) -> None:
        self.image = image
        self.changed_topics: dict[uuid.UUID, TopicDelta] = {}
        self.deleted_topic_ids: set[uuid.UUID] = set()
        self.created_topic_ids: set[uuid.UUID] = set()

    def _topic_delta(self, topic_id: uuid.UUID) -> TopicDelta:
        delta = self.changed_topics.get(topic_id)
        if delta is None:
            topic = self.image.by_id.get(topic_id)
            if topic is None:
                raise MetadataReplayError(f"Unable to find topic {topic_id}")
            delta = self.changed_topics[topic_id] = TopicDelta(topic)
        return delta

    def topic(self, key: str | uuid.UUID) -> TopicImage | TopicDelta | None:
        """The topic as the delta now has it: its delta if changed, else its image."""
        if isinstance(key, uuid.UUID):
            if key in self.changed_topics:
                return self.changed_topics[key]
            return None if key in self.deleted_topic_ids else self.image.by_id.get(key)
        for delta in self.changed_topics.values():
            if delta.name == key:
                return delta
        image = self.image.by_name.get(key)
        return None if image is None or image.id in self.deleted_topic_ids else image

    def replay_topic(self, record: Any) -> None:
        self.changed_topics[record.topic_id] = TopicDelta(TopicImage(record.name, record.topic_id))
        self.created_topic_ids.add(record.topic_id)

    def replay_partition(self, record: Any) -> None:
        self._topic_delta(record.topic_id).replay_partition(record)

    def replay_partition_change(self, record: Any) -> None:
        self._topic_delta(record.topic_id).replay_partition_change(record)

    def replay_remove_topic(self, record: Any) -> str:
        """Remove the topic; returns its name (its configs go too)."""
        delta = self.changed_topics.pop(record.topic_id, None)
        if delta is not None:
            if record.topic_id in self.image.by_id:
                self.deleted_topic_ids.add(record.topic_id)
            self.created_topic_ids.discard(record.topic_id)
            return delta.name
        topic = self.image.by_id.get(record.topic_id)
        if topic is None:
            raise MetadataReplayError(
                f"Unable to delete topic with id {record.topic_id}: no such topic found."
            )
        self.deleted_topic_ids.add(record.topic_id)
        return topic.name

    def replay_clear_elr(self, record: Any) -> None:
        """ClearElrRecord: one topic by name, or every topic when the name is empty."""
        if not record.topic_name:
            ids = [i for i in self.image.by_id if i not in self.deleted_topic_ids]
            ids.extend(i for i in self.changed_topics if i not in self.image.by_id)
            for topic_id in ids:
                self._topic_delta(topic_id).clear_elr()
            return
        found = self.topic(record.topic_name)
        if found is None:
            raise MetadataReplayError(
                f"Unable to clear elr for topic with name {record.topic_name}: no such topic found."
            )
        self._topic_delta(found.id).clear_elr()

    def finish_snapshot(self) -> None:
        for topic_id in self.image.by_id:
            if topic_id not in self.changed_topics:
                self.deleted_topic_ids.add(topic_id)

    def apply(self) -> TopicsImage:
        by_id = dict(self.image.by_id)
        by_name = dict(self.image.by_name)
        for topic_id in self.deleted_topic_ids:
            deleted = by_id.pop(topic_id)
            if by_name.get(deleted.name) is deleted:
                del by_name[deleted.name]
        for topic_id, delta in self.changed_topics.items():
            topic = delta.apply()
            by_id[topic_id] = topic
            by_name[topic.name] = topic
        return TopicsImage(by_id, by_name)

    def topic_was_deleted(self, name: str) -> bool:
        topic = self.image.by_name.get(name)
        return topic is not None and topic.id in self.deleted_topic_ids

    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """What this delta means for ``broker_id`` (Kafka's ``localChanges``)."""
        changes = LocalReplicaChanges()
        for delta in self.changed_topics.values():
            delta.local_changes(broker_id, changes)
        for topic_id in self.deleted_topic_ids:
            topic = self.image.by_id[topic_id]
            for partition_id, partition in topic.partitions.items():
                if broker_id in partition.replicas:
                    changes.deletes.add(TopicPartition(topic.name, partition_id))
        return changes
