"""Errors of the ZooKeeper layer (Kafka's names where Kafka has one)."""

from __future__ import annotations

from kafkacore.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    KafkaCoreError,
)

__all__ = [
    "AdminOperationError",
    "BadVersionError",
    "ControllerMovedError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidTopicError",
    "NoNodeError",
    "NodeExistsError",
    "TopicAlreadyMarkedForDeletion",
    "TopicAlreadyMarkedForDeletionError",
    "TopicExistsError",
    "UnknownTopicError",
    "ZkConnectionError",
    "ZkError",
]


class ZkError(KafkaCoreError):
    """Base class of the errors raised by :class:`kafkacore.zk.client.KafkaZkClient`."""


class ZkConnectionError(ZkError, ConnectionError):
    """ZooKeeper stayed unreachable (or the client is closed) past the retry deadline."""


class ControllerMovedError(ZkError):
    """A fenced controller write found ``/controller_epoch`` at another zkVersion (or an
    election lost): this controller must resign (Kafka's ``ControllerMovedException``)."""


class NodeExistsError(ZkError):
    """A znode that had to be created exists (an ephemeral one owned by another session)."""

    def __init__(self, path: str, detail: str = "") -> None:
        super().__init__(f"znode {path} already exists{': ' + detail if detail else ''}")
        self.path = path


class NoNodeError(ZkError):
    def __init__(self, path: str) -> None:
        super().__init__(f"znode {path} does not exist")
        self.path = path


class BadVersionError(ZkError):
    """A conditional write found the znode at another version."""

    def __init__(self, path: str, expected_version: int) -> None:
        super().__init__(f"znode {path} is not at version {expected_version}")
        self.path = path
        self.expected_version = expected_version


class TopicExistsError(ZkError):
    """``/brokers/topics/<t>`` exists (Kafka's ``TopicExistsException``)."""

    def __init__(self, topic: str) -> None:
        super().__init__(f"Topic '{topic}' already exists.")
        self.topic = topic


class TopicAlreadyMarkedForDeletion(ZkError):
    """``/admin/delete_topics/<t>`` exists (Kafka's
    ``TopicAlreadyMarkedForDeletionException``)."""

    def __init__(self, topic: str) -> None:
        super().__init__(f"topic {topic} is already marked for deletion")
        self.topic = topic


TopicAlreadyMarkedForDeletionError = TopicAlreadyMarkedForDeletion


class InvalidReplicaAssignmentError(ZkError):
    """A manual assignment Kafka refuses (``InvalidReplicaAssignmentException``)."""


class UnknownTopicError(ZkError):
    """The topic has no ``/brokers/topics/<t>`` (``UnknownTopicOrPartitionException``)."""

    def __init__(self, topic: str) -> None:
        super().__init__(f"Topic `{topic}` to delete does not exist")
        self.topic = topic


class InvalidTopicError(ZkError):
    """An illegal topic name, or one colliding with an existing topic once '.' and '_'
    are treated alike (Kafka's ``InvalidTopicException``)."""
