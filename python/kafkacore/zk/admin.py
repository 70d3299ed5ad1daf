"""Topic administration through ZooKeeper, as Kafka's ``AdminZkClient`` does it from a
broker: create a topic (its config first, then ``/brokers/topics/<t>``, which the
controller's watch picks up), add partitions, change configs, mark for deletion. The
replicas are placed by :mod:`kafkacore.placement` (Kafka's ``AdminUtils``).
:class:`~kafkacore.metadata.zookeeper.ZooKeeperMetadataStore` creates topics through
:meth:`AdminZkClient.create_topic_with_assignment`, as Kafka's ``ZkAdminManager`` does.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Mapping, Sequence

from kafkacore.placement import BrokerMetadata, assign_replicas_to_brokers
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import TopicAssignment, topic_id_to_string
from kafkacore.zk.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    TopicExistsError,
    UnknownTopicError,
)

__all__ = ["AdminZkClient", "new_topic_id", "validate_topic_name"]

_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249


def validate_topic_name(topic: str) -> None:
    """Kafka's ``Topic.validate``."""
    if not topic:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(topic) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters"
        )
    if not _LEGAL_TOPIC.match(topic):
        raise InvalidTopicError(
            f'Topic name "{topic}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )


def new_topic_id(rng: random.Random | None = None) -> uuid.UUID:
    """A random topic id whose Kafka string does not start with '-' (Kafka's
    ``Uuid.randomUuid`` re-draws those, and the all-zero and metadata ids)."""
    while True:
        candidate = uuid.UUID(int=rng.getrandbits(128)) if rng else uuid.uuid4()
        if candidate.int in (0, 1):
            continue
        if not topic_id_to_string(candidate).startswith("-"):
            return candidate


class AdminZkClient:
    """Broker-side topic administration over a :class:`KafkaZkClient`."""

    def __init__(self, zk: KafkaZkClient, *, rng: random.Random | None = None) -> None:
        self.zk = zk
        self._rng = rng or random.Random()

    async def broker_metadatas(self) -> list[BrokerMetadata]:
        """The registered brokers and their racks, by id (Kafka's ``getBrokerMetadatas``)."""
        brokers = await self.zk.get_all_brokers()
        return [BrokerMetadata(b, reg.rack) for b, (reg, _) in sorted(brokers.items())]

    async def create_topic(
        self,
        topic: str,
        partitions: int,
        replication_factor: int,
        config: Mapping[str, str] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
    ) -> TopicAssignment:
        """Place the replicas on the live brokers and create the topic."""
        assignment = assign_replicas_to_brokers(
            await self.broker_metadatas(), partitions, replication_factor, rng=self._rng
        )
        return await self.create_topic_with_assignment(
            topic, config or {}, assignment, topic_id=topic_id
        )

    async def validate_topic_create(
        self, topic: str, assignment: Mapping[int, Sequence[int]]
    ) -> None:
        """Kafka's ``validateTopicCreate``: a legal, new, non-colliding name and a sane
        assignment (partitions 0..n-1, one replication factor, no duplicate replica)."""
        validate_topic_name(topic)
        existing = await self.zk.get_all_topics()
        if topic in existing:
            raise TopicExistsError(topic)
        unified = topic.replace(".", "_")
        for other in existing:
            if other.replace(".", "_") == unified:
                raise InvalidTopicError(f"Topic '{topic}' collides with existing topic: {other}")
        if not assignment:
            raise InvalidReplicaAssignmentError("no partitions")
        if any(len(set(r)) != len(r) for r in assignment.values()):
            raise InvalidReplicaAssignmentError("Duplicate replica assignment found")
        if len({len(r) for r in assignment.values()}) != 1:
            raise InvalidReplicaAssignmentError(
                "All partitions should have the same number of replicas"
            )
        if sorted(assignment) != list(range(len(assignment))):
            raise InvalidReplicaAssignmentError(
                "partitions should be a consecutive 0-based integer sequence"
            )

    async def create_topic_with_assignment(
        self,
        topic: str,
        config: Mapping[str, str],
        assignment: Mapping[int, Sequence[int]],
        *,
        validate: bool = True,
        topic_id: uuid.UUID | None = None,
    ) -> TopicAssignment:
        """Write ``/config/topics/<t>`` (no change notification), then
        ``/brokers/topics/<t>`` with a topic id: the controller's watch does the rest."""
        if validate:
            await self.validate_topic_create(topic, assignment)
        await self.zk.set_entity_config("topics", topic, dict(config), notify=False)
        created = TopicAssignment(
            topic,
            {p: tuple(r) for p, r in assignment.items()},
            topic_id=topic_id or new_topic_id(),
        )
        await self.zk.create_topic_assignment(created)
        return created

    async def add_partitions(
        self,
        topic: str,
        total: int,
        assignment: Mapping[int, Sequence[int]] | None = None,
    ) -> TopicAssignment:
        """Grow ``topic`` to ``total`` partitions (Kafka's ``addPartitions``): new ones are
        placed like the first ones (start index = partition 0's first replica) unless
        ``assignment`` gives them."""
        current = await self.zk.get_topic_assignment(topic)
        if current is None:
            raise UnknownTopicError(topic)
        existing = len(current.partitions)
        if total <= existing:
            raise InvalidPartitionsError(
                f"The number of partitions for a topic can only be increased. Topic {topic} "
                f"currently has {existing} partitions, {total} would not be an increase."
            )
        if assignment is None:
            brokers = await self.broker_metadatas()
            ids = [b.id for b in brokers]
            first = current.partitions[0][0]
            start = next((i for i, b in enumerate(ids) if b >= first), -1)
            rf = len(current.partitions[0])
            placed = assign_replicas_to_brokers(
                brokers,
                total - existing,
                rf,
                fixed_start_index=start,
                start_partition_id=existing,
                rng=self._rng,
            )
            new = {p: tuple(r) for p, r in placed.items()}
        else:
            new = {p: tuple(r) for p, r in assignment.items()}
            if sorted(new) != list(range(existing, total)):
                raise InvalidReplicaAssignmentError(
                    f"new partitions must be {existing}..{total - 1}"
                )
        grown = TopicAssignment(
            topic,
            {**current.partitions, **new},
            adding=current.adding,
            removing=current.removing,
            topic_id=current.topic_id,
        )
        await self.zk.set_topic_assignment(grown, controller_epoch_zk_version=None)
        return grown

    async def change_topic_config(self, topic: str, config: Mapping[str, str]) -> None:
        """Replace the topic's overrides and notify the brokers."""
        if not await self.zk.topic_exists(topic):
            raise UnknownTopicError(topic)
        await self.zk.set_entity_config("topics", topic, dict(config))

    async def delete_topic(self, topic: str) -> None:
        """Mark the topic for deletion (``/admin/delete_topics/<t>``); raises
        :class:`UnknownTopicError` / :class:`TopicAlreadyMarkedForDeletion`."""
        if not await self.zk.topic_exists(topic):
            raise UnknownTopicError(topic)
        await self.zk.mark_topic_for_deletion(topic)
