"""Kafka's ZooKeeper-mode metadata: the znode codecs (:mod:`kafkacore.zk.data`), the
asyncio ZooKeeper client (:mod:`kafkacore.zk.client`, needs ``kazoo``) and its errors."""

from __future__ import annotations

from kafkacore.zk.errors import (
    BadVersionError,
    ControllerMovedError,
    NodeExistsError,
    NoNodeError,
    TopicAlreadyMarkedForDeletion,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    ZkConnectionError,
    ZkError,
)

__all__ = [
    "BadVersionError",
    "ControllerMovedError",
    "NoNodeError",
    "NodeExistsError",
    "TopicAlreadyMarkedForDeletion",
    "TopicAlreadyMarkedForDeletionError",
    "TopicExistsError",
    "ZkConnectionError",
    "ZkError",
]
