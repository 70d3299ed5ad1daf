"""What a voter must remember across restarts: its epoch, the leader it knows and the
candidate it voted for (Kafka's ``ElectionState``), in the ``quorum-state`` file
(``FileQuorumStateStore``).

The file is one line of JSON, Kafka's ``QuorumStateDataJsonConverter`` form plus a
``data_version`` key, no trailing newline, written to ``quorum-state.tmp``, fsynced and
renamed over ``quorum-state``. ``data_version`` is ``kraft.version``'s quorum-state
version: 0 (kraft.version 0) carries ``clusterId`` (empty), ``appliedOffset`` (0) and
``currentVoters``; 1 carries ``votedDirectoryId`` instead::

    {"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,
     "currentVoters":[{"voterId":1},{"voterId":2}],"data_version":0}
    {"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ",
     "data_version":1}

Stores are used by one Raft client: not thread-safe.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kafkacore.log.checkpoints import fsync_dir, uuid_from_base64, uuid_to_base64
from kafkacore.raft.types import NO_DIRECTORY_ID, ReplicaKey, voter_id_order

__all__ = [
    "QUORUM_STATE_FILE",
    "ElectionState",
    "FileQuorumStateStore",
    "MemoryQuorumStateStore",
    "QuorumStateError",
    "QuorumStateStore",
]

QUORUM_STATE_FILE = "quorum-state"
_DATA_VERSION = "data_version"


class QuorumStateError(ValueError):
    """An unreadable ``quorum-state`` file."""


@dataclass(frozen=True)
class ElectionState:
    """The durable part of a replica's state in ``epoch``: the elected leader (if known),
    the candidate it voted for (if any), and the voter ids (written only by version 0)."""

    epoch: int
    leader_id: int | None = None
    voted_key: ReplicaKey | None = None
    voters: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def with_unknown_leader(cls, epoch: int, voters: frozenset[int]) -> ElectionState:
        return cls(epoch, None, None, voters)

    def is_leader(self, node_id: int) -> bool:
        return self.leader_id == node_id

    def is_voted_candidate(self, key: ReplicaKey) -> bool:
        return self.voted_key is not None and self.voted_key.matches(key)

    def to_json(self, version: int) -> str:
        """The file's line for quorum-state ``version`` (Kafka's field order)."""
        data: dict[str, Any] = {}
        if version == 0:
            data["clusterId"] = ""
        data["leaderId"] = -1 if self.leader_id is None else self.leader_id
        data["leaderEpoch"] = self.epoch
        data["votedId"] = -1 if self.voted_key is None else self.voted_key.id
        if version == 0:
            data["appliedOffset"] = 0
            data["currentVoters"] = [{"voterId": v} for v in voter_id_order(self.voters)]
        elif version == 1:
            directory = self.voted_key.wire_directory_id if self.voted_key else NO_DIRECTORY_ID
            data["votedDirectoryId"] = uuid_to_base64(directory)
        else:
            raise ValueError(f"File quorum state store doesn't handle supported version {version}")
        data[_DATA_VERSION] = version
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ElectionState:
        """Kafka's ``readStateFromFile`` + ``fromQuorumStateData``."""
        line = text.split("\n", 1)[0]
        if not line:
            raise QuorumStateError("File ended prematurely.")
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise QuorumStateError(f"quorum-state is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise QuorumStateError(f"Deserialized node {line} is not an object node")
        if _DATA_VERSION not in data:
            raise QuorumStateError(f"Deserialized node {line} does not have {_DATA_VERSION} field")
        version = data[_DATA_VERSION]
        if not isinstance(version, int) or not 0 <= version <= 1:
            raise QuorumStateError(
                f"data_version ({version}) is not within the min (0) and max (1) supported version"
            )
        try:
            epoch = int(data.get("leaderEpoch", -1))
            leader = int(data.get("leaderId", -1))
            voted = int(data.get("votedId", -1))
            directory = None
            if version >= 1 and data.get("votedDirectoryId") is not None:
                directory = uuid_from_base64(str(data["votedDirectoryId"]))
            voters = frozenset(int(v["voterId"]) for v in data.get("currentVoters") or [])
        except (TypeError, ValueError, KeyError) as exc:
            raise QuorumStateError(f"bad quorum-state field: {exc}") from None
        voted_key = None if voted == -1 else ReplicaKey.of(voted, directory)
        return cls(epoch, None if leader == -1 else leader, voted_key, voters)


class QuorumStateStore(Protocol):
    """Kafka's ``QuorumStateStore``."""

    def read(self) -> ElectionState | None: ...

    def write(self, state: ElectionState, kraft_version: int) -> None: ...

    def clear(self) -> None: ...


class MemoryQuorumStateStore:
    """Kafka's ``MockQuorumStateStore``: survives a simulated crash with its owner."""

    def __init__(self) -> None:
        self.state: ElectionState | None = None
        self.writes = 0

    def read(self) -> ElectionState | None:
        return self.state

    def write(self, state: ElectionState, kraft_version: int) -> None:
        self.state = state
        self.writes += 1

    def clear(self) -> None:
        self.state = None


class FileQuorumStateStore:
    """The ``quorum-state`` file of a metadata log directory (Kafka's
    ``FileQuorumStateStore``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @classmethod
    def in_dir(cls, directory: str | os.PathLike[str]) -> FileQuorumStateStore:
        return cls(Path(directory) / QUORUM_STATE_FILE)

    def read(self) -> ElectionState | None:
        if not self.path.exists():
            return None
        return ElectionState.from_json(self.path.read_text(encoding="utf-8"))

    def write(self, state: ElectionState, kraft_version: int) -> None:
        """Write atomically: ``.tmp``, fsync, rename, fsync the directory."""
        version = 1 if kraft_version >= 1 else 0
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.unlink(missing_ok=True)
        try:
            with open(temp, "w", encoding="utf-8") as out:
                out.write(state.to_json(version))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, self.path)
            fsync_dir(str(self.path.parent))
        finally:
            temp.unlink(missing_ok=True)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
        self.path.with_name(self.path.name + ".tmp").unlink(missing_ok=True)
