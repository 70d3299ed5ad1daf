"""The small values the Raft layer is written in: replica keys, offsets with epochs,
endpoints, leaders (Kafka's ``ReplicaKey``, ``OffsetAndEpoch``, ``Endpoints``,
``LeaderAndEpoch``, ``ValidOffsetAndEpoch``).

All immutable: thread-safe.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkacore._java import java_hash_set_order

__all__ = [
    "METADATA_PARTITION",
    "METADATA_TOPIC",
    "METADATA_TOPIC_ID",
    "NO_DIRECTORY_ID",
    "Endpoint",
    "Endpoints",
    "LeaderAndEpoch",
    "Node",
    "OffsetAndEpoch",
    "ReplicaKey",
    "ValidKind",
    "ValidOffsetAndEpoch",
    "voter_id_order",
]

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
#: ``Uuid.METADATA_TOPIC_ID``: ``AAAAAAAAAAAAAAAAAAAAAQ``.
METADATA_TOPIC_ID = uuid.UUID(int=1)
#: ``ReplicaKey.NO_DIRECTORY_ID``: the zero uuid stands for "no directory id" on the wire.
NO_DIRECTORY_ID = uuid.UUID(int=0)


@dataclass(frozen=True)
class ReplicaKey:
    """A replica: its node id and, from kraft.version 1 (KIP-853), the id of its metadata
    log directory (``None`` when unknown, as with static ``controller.quorum.voters``)."""

    id: int
    directory_id: uuid.UUID | None = None

    @classmethod
    def of(cls, replica_id: int, directory_id: uuid.UUID | None) -> ReplicaKey:
        """Kafka's ``ReplicaKey.of``: the zero uuid means no directory id."""
        return cls(replica_id, None if directory_id in (None, NO_DIRECTORY_ID) else directory_id)

    @property
    def wire_directory_id(self) -> uuid.UUID:
        return self.directory_id if self.directory_id is not None else NO_DIRECTORY_ID

    def matches(self, other: ReplicaKey) -> bool:
        """Kafka's ``ReplicaState.matchesKey``/``VoterNode.isVoter``: same id, and the same
        directory when this key has one."""
        if self.id != other.id:
            return False
        return self.directory_id is None or self.directory_id == other.directory_id


class OffsetAndEpoch(NamedTuple):
    """An offset and the epoch of the record before it (a log end, a snapshot id).

    Ordered as Kafka's ``OffsetAndEpoch.compareTo``: by epoch, then by offset (a tuple of
    ``(epoch, offset)``; use :meth:`key`)."""

    offset: int
    epoch: int

    def key(self) -> tuple[int, int]:
        return (self.epoch, self.offset)

    def at_least(self, other: OffsetAndEpoch) -> bool:
        """``self.compareTo(other) >= 0``: the log ending here is at least as up to date."""
        return self.key() >= other.key()


class ValidKind(enum.Enum):
    VALID = "valid"
    DIVERGING = "diverging"
    SNAPSHOT = "snapshot"


class ValidOffsetAndEpoch(NamedTuple):
    """Kafka's ``ValidOffsetAndEpoch``: what the leader tells a fetch at ``(offset, epoch)``."""

    kind: ValidKind
    offset_and_epoch: OffsetAndEpoch


@dataclass(frozen=True)
class Endpoint:
    """One listener of a node: name (``CONTROLLER``), host and port."""

    name: str
    host: str
    port: int


@dataclass(frozen=True)
class Endpoints:
    """Kafka's ``Endpoints``: a node's listeners by name, in the order given."""

    endpoints: tuple[Endpoint, ...] = ()

    @classmethod
    def of(cls, *endpoints: Endpoint) -> Endpoints:
        return cls(tuple(endpoints))

    @classmethod
    def single(cls, name: str, host: str, port: int) -> Endpoints:
        return cls((Endpoint(name, host, port),))

    def address(self, listener: str) -> tuple[str, int] | None:
        for endpoint in self.endpoints:
            if endpoint.name == listener:
                return endpoint.host, endpoint.port
        return None

    def __len__(self) -> int:
        return len(self.endpoints)

    def __bool__(self) -> bool:
        return bool(self.endpoints)


EMPTY_ENDPOINTS = Endpoints()


@dataclass(frozen=True)
class Node:
    """Where a request goes: a node id and the address of the quorum's listener. Bootstrap
    servers of ``controller.quorum.bootstrap.servers`` get ids -2, -3, ... as in Kafka."""

    id: int
    host: str = ""
    port: int = 0


@dataclass(frozen=True)
class LeaderAndEpoch:
    """Kafka's ``LeaderAndEpoch``: the known leader (``None``: unknown) of ``epoch``."""

    leader_id: int | None
    epoch: int
    endpoints: Endpoints = field(default=EMPTY_ENDPOINTS, compare=False)

    def is_leader(self, node_id: int | None) -> bool:
        return node_id is not None and self.leader_id == node_id


def voter_id_order(ids: Iterable[int]) -> list[int]:
    """Kafka's order of a voter id set (a ``HashMap``'s key set of ``Integer``, filled in
    ascending order): the order of the ids Kafka writes in ``quorum-state`` and
    LeaderChangeMessage."""
    return java_hash_set_order(sorted(ids), int)
