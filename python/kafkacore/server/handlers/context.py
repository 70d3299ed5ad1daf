"""What handlers see of the broker: config, partitions, metadata and this node's address.
No sockets."""

from __future__ import annotations

from dataclasses import dataclass

from kafkacore.config import BrokerConfig
from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["BrokerContext"]


@dataclass
class BrokerContext:
    config: BrokerConfig
    replicas: ReplicaManager
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def cluster_id(self) -> str:
        return self.replicas.store.cluster_id or ""
