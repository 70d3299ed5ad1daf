"""What handlers see of the broker: config, partitions, metadata and this node's address.
No sockets."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from kafkacore.config import BrokerConfig
from kafkacore.server.replica_manager import ReplicaManager

__all__ = ["CLIENT_HOST", "BrokerContext"]

# The peer address of the connection whose request is being handled (set by the channel).
CLIENT_HOST: ContextVar[str] = ContextVar("client_host", default="127.0.0.1")


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
