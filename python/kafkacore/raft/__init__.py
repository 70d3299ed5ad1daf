"""KRaft: the Raft quorum of Kafka's metadata log (KIP-595, pre-vote KIP-996, dynamic
voters KIP-853), as Kafka 4.3's ``KafkaRaftClient`` behaves, written sans-IO.

Layers (bottom up):

* :mod:`~kafkacore.raft.types`, :mod:`~kafkacore.raft.config`,
  :mod:`~kafkacore.raft.voters` - replica keys, offsets and epochs, ``controller.quorum.*``,
  the voter set;
* :mod:`~kafkacore.raft.records`, :mod:`~kafkacore.raft.snapshots` - the batches of
  ``__cluster_metadata`` and its ``.checkpoint`` snapshots, byte for byte as Kafka writes
  them;
* :mod:`~kafkacore.raft.log` - the log as Raft sees it (Kafka's rules once; an in-memory
  log), :mod:`~kafkacore.raft.metadata_log` - the real ``__cluster_metadata-0`` directory
  over a kafkacore :class:`~kafkacore.log.Log`;
* :mod:`~kafkacore.raft.quorum_state` - the ``quorum-state`` file;
  :mod:`~kafkacore.raft.control` - kraft.version and voters read from the log;
* :mod:`~kafkacore.raft.states`, :mod:`~kafkacore.raft.leader`,
  :mod:`~kafkacore.raft.quorum` - the epoch states and their transitions;
* :mod:`~kafkacore.raft.messages` - the RPCs and events, typed;
  :mod:`~kafkacore.raft.requests` - requests in flight;
* :mod:`~kafkacore.raft.client` - :class:`RaftClient`, the state machine;
  :mod:`~kafkacore.raft.reconfig` - its voter changes (Add/Remove/UpdateRaftVoter);
* :mod:`~kafkacore.raft.wire` - the RPCs on Kafka's wire;
  :mod:`~kafkacore.raft.driver` - the client over asyncio sockets.
"""

from __future__ import annotations

from kafkacore.raft.client import NotLeaderError, RaftClient
from kafkacore.raft.config import (
    QuorumConfig,
    bootstrap_nodes,
    parse_bootstrap_servers,
    parse_voters,
)
from kafkacore.raft.log import MemoryRaftLog, RaftLog
from kafkacore.raft.quorum_state import (
    ElectionState,
    FileQuorumStateStore,
    MemoryQuorumStateStore,
)
from kafkacore.raft.types import (
    METADATA_TOPIC,
    METADATA_TOPIC_ID,
    Endpoint,
    Endpoints,
    LeaderAndEpoch,
    Node,
    OffsetAndEpoch,
    ReplicaKey,
)
from kafkacore.raft.voters import VoterNode, VoterSet

__all__ = [
    "METADATA_TOPIC",
    "METADATA_TOPIC_ID",
    "ElectionState",
    "Endpoint",
    "Endpoints",
    "FileQuorumStateStore",
    "LeaderAndEpoch",
    "MemoryQuorumStateStore",
    "MemoryRaftLog",
    "Node",
    "NotLeaderError",
    "OffsetAndEpoch",
    "QuorumConfig",
    "RaftClient",
    "RaftLog",
    "ReplicaKey",
    "VoterNode",
    "VoterSet",
    "bootstrap_nodes",
    "parse_bootstrap_servers",
    "parse_voters",
]
