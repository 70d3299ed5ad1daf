"""Kafka's ZooKeeper-mode metadata: the znode codecs (:mod:`kafkacore.zk.data`), the
asyncio ZooKeeper client (:mod:`kafkacore.zk.client`, needs ``kazoo``), topic
administration (:mod:`kafkacore.zk.admin`) and the errors they raise."""

from __future__ import annotations

from kafkacore.zk.errors import (
    AdminOperationError,
    BadVersionError,
    ControllerMovedError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    NodeExistsError,
    NoNodeError,
    TopicAlreadyMarkedForDeletion,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
    ZkConnectionError,
    ZkError,
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
