"""The voters of the quorum (Kafka's ``VoterSet`` and ``VoterSet.VoterNode``).

kraft.version 0: the static ``controller.quorum.voters`` (ids and one address each, no
directory ids, supported kraft.version 0..0). kraft.version 1 (KIP-853): the latest
``VotersRecord`` of the snapshot and log, with directory ids, every listener and each
voter's supported kraft.version range.

Immutable: thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kafkacore.protocol.messages.raft_records import KRAFT_VOTERS
from kafkacore.raft.types import Endpoint, Endpoints, Node, ReplicaKey

__all__ = ["VoterNode", "VoterSet"]


@dataclass(frozen=True)
class VoterNode:
    """One voter: its key, its listeners and the kraft.version range it supports."""

    key: ReplicaKey
    listeners: Endpoints
    min_kraft_version: int = 0
    max_kraft_version: int = 0

    def is_voter(self, key: ReplicaKey) -> bool:
        """Kafka's ``VoterNode.isVoter``: the same id, and the same directory when the
        voter has one."""
        return self.key.matches(key)


@dataclass(frozen=True)
class VoterSet:
    """Voters by id. The majority is ``len // 2 + 1``."""

    voters: Mapping[int, VoterNode]

    @classmethod
    def empty(cls) -> VoterSet:
        return cls({})

    @classmethod
    def from_addresses(cls, listener: str, addresses: Mapping[int, tuple[str, int]]) -> VoterSet:
        """Kafka's ``VoterSet.fromInetSocketAddresses``: static voters (no directory id,
        kraft.version 0..0)."""
        return cls(
            {
                voter_id: VoterNode(ReplicaKey(voter_id), Endpoints.single(listener, host, port))
                for voter_id, (host, port) in sorted(addresses.items())
            }
        )

    @classmethod
    def of(cls, nodes: Iterable[VoterNode]) -> VoterSet:
        return cls({node.key.id: node for node in sorted(nodes, key=lambda n: n.key.id)})

    @classmethod
    def from_voters_record(cls, record: Any) -> VoterSet:
        """From a decoded ``VotersRecord``."""
        nodes = []
        for voter in record.voters:
            # Kafka normalises listener names (ListenerName.normalised: upper case)
            endpoints = Endpoints(
                tuple(Endpoint(e.name.upper(), e.host, e.port) for e in voter.endpoints)
            )
            feature = voter.k_raft_version_feature
            nodes.append(
                VoterNode(
                    ReplicaKey.of(voter.voter_id, voter.voter_directory_id),
                    endpoints,
                    feature.min_supported_version,
                    feature.max_supported_version,
                )
            )
        return cls.of(nodes)

    def to_voters_record(self, version: int = 0) -> Any:
        """Kafka's ``VoterSet.toVotersRecord``: voters in id order."""
        cls = KRAFT_VOTERS.cls
        voter_cls: Any = cls.Voter
        endpoint_cls: Any = cls.Endpoint
        feature_cls: Any = cls.KRaftVersionFeature
        return cls(
            version=version,
            voters=[
                voter_cls(
                    voter_id=node.key.id,
                    voter_directory_id=node.key.wire_directory_id,
                    endpoints=[
                        endpoint_cls(name=e.name, host=e.host, port=e.port)
                        for e in node.listeners.endpoints
                    ],
                    k_raft_version_feature=feature_cls(
                        min_supported_version=node.min_kraft_version,
                        max_supported_version=node.max_kraft_version,
                    ),
                )
                for _, node in sorted(self.voters.items())
            ],
        )

    # -- queries ---------------------------------------------------------------------------

    @property
    def voter_ids(self) -> frozenset[int]:
        return frozenset(self.voters)

    @property
    def voter_keys(self) -> frozenset[ReplicaKey]:
        return frozenset(node.key for node in self.voters.values())

    def __len__(self) -> int:
        return len(self.voters)

    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def is_voter(self, key: ReplicaKey) -> bool:
        node = self.voters.get(key.id)
        return node is not None and node.is_voter(key)

    def is_only_voter(self, key: ReplicaKey) -> bool:
        return len(self.voters) == 1 and self.is_voter(key)

    def voter_key(self, voter_id: int) -> ReplicaKey | None:
        node = self.voters.get(voter_id)
        return node.key if node is not None else None

    def listeners(self, voter_id: int) -> Endpoints:
        node = self.voters.get(voter_id)
        return node.listeners if node is not None else Endpoints()

    def voter_node(self, voter_id: int, listener: str) -> Node | None:
        """Where to send requests for ``voter_id`` on ``listener`` (Kafka's ``voterNode``)."""
        node = self.voters.get(voter_id)
        if node is None:
            return None
        address = node.listeners.address(listener)
        if address is None:
            return None
        return Node(voter_id, *address)

    def voter_node_needs_update(self, local: VoterNode) -> bool:
        """Kafka's ``voterNodeNeedsUpdate``: the local voter's listeners or kraft.version
        range differ from the set's entry for it."""
        node = self.voters.get(local.key.id)
        if node is None or not node.is_voter(local.key):
            return False
        return (
            node.listeners != local.listeners
            or node.min_kraft_version != local.min_kraft_version
            or node.max_kraft_version != local.max_kraft_version
        )

    def supports_kraft_version(self, version: int) -> bool:
        return all(
            node.min_kraft_version <= version <= node.max_kraft_version
            for node in self.voters.values()
        )

    # -- changes (each returns a new set, or None when Kafka refuses) ------------------------

    def add_voter(self, node: VoterNode) -> VoterSet | None:
        """``None`` when the id is already a voter (Kafka's ``VoterSet.addVoter``)."""
        if node.key.id in self.voters:
            return None
        return VoterSet.of([*self.voters.values(), node])

    def remove_voter(self, key: ReplicaKey) -> VoterSet | None:
        """``None`` when ``key`` is not a voter."""
        node = self.voters.get(key.id)
        if node is None or node.key != key:
            return None
        return VoterSet.of(n for n in self.voters.values() if n.key.id != key.id)

    def update_voter(self, node: VoterNode) -> VoterSet | None:
        """``None`` when ``node`` is not a voter of the set (same id and directory)."""
        current = self.voters.get(node.key.id)
        if current is None or current.key.directory_id != node.key.directory_id:
            return None
        return VoterSet.of([*(n for n in self.voters.values() if n.key.id != node.key.id), node])

    def update_voter_ignoring_directory(self, node: VoterNode) -> VoterSet | None:
        """Kafka's ``updateVoterIgnoringDirectoryId`` (kraft.version 0): keep the entry's
        key, take the node's listeners and range."""
        current = self.voters.get(node.key.id)
        if current is None:
            return None
        return self.update_voter(replace(node, key=current.key))
