"""What a Raft replica's state machine is told (Kafka's ``RaftClient.Listener`` and the
client's ``ListenerContext``): the committed log, in order, and who leads.

:meth:`CommittedReader.poll` looks at the client after it ran and returns what is new
for its listener, as typed events:

* :class:`LoadSnapshot` - the listener is behind the log start (a fresh replica, or one
  that downloaded a snapshot): it must replace its state with the latest snapshot;
* :class:`Commit` - whole batches below the high watermark, from where the listener is;
* :class:`LeaderChange` - the leader or epoch changed. When this replica is the new
  leader, only once the listener has read everything before the epoch's start offset
  (Kafka's rule: a controller begins writing only with the whole committed state in
  hand).

Not thread-safe: polled by the client's owner, after each round of the client.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkacore.raft.client import RaftClient
from kafkacore.raft.leader import LeaderState
from kafkacore.raft.records import RaftBatch, iter_batches
from kafkacore.raft.snapshots import Snapshot, read_snapshot
from kafkacore.raft.types import LeaderAndEpoch, OffsetAndEpoch

__all__ = ["Commit", "CommittedReader", "LeaderChange", "ListenerEvent", "LoadSnapshot"]

#: How many bytes of committed log one poll hands over at most.
MAX_READ_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LoadSnapshot:
    """Replace the state with the snapshot ``snapshot_id`` (``snapshot`` its content)."""

    snapshot_id: OffsetAndEpoch
    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class Commit:
    """Committed batches, in offset order, contiguous with what came before."""

    batches: tuple[RaftBatch, ...]

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset


@dataclass(frozen=True, slots=True)
class LeaderChange:
    leader: LeaderAndEpoch


ListenerEvent = LoadSnapshot | Commit | LeaderChange


class CommittedReader:
    """One listener's position in the committed log (see the module docstring)."""

    def __init__(self, client: RaftClient, *, max_read_bytes: int = MAX_READ_BYTES) -> None:
        self.client = client
        self.next_offset = 0
        self.max_read_bytes = max_read_bytes
        self._fired_leader: LeaderAndEpoch | None = None

    def poll(self) -> list[ListenerEvent]:
        events: list[ListenerEvent] = []
        log = self.client.log
        hw = self.client.high_watermark
        latest = log.latest_snapshot_id()
        if latest is not None and self.next_offset < log.start_offset:
            data = log.read_snapshot(latest)
            if data is not None:
                events.append(LoadSnapshot(latest, read_snapshot(data)))
                self.next_offset = latest.offset
        if hw is not None and self.next_offset < hw:
            batches: list[RaftBatch] = []
            while self.next_offset < hw:
                data = log.read(self.next_offset, self.max_read_bytes)
                read = [b for b in iter_batches(data) if b.last_offset < hw]
                read = [b for b in read if b.last_offset >= self.next_offset]
                if not read:
                    break
                batches.extend(read)
                self.next_offset = read[-1].last_offset + 1
                if sum(b.header.size_in_bytes for b in batches) >= self.max_read_bytes:
                    break
            if batches:
                events.append(Commit(tuple(batches)))
        leader = self.client.leader_and_epoch
        if leader != self._fired_leader:
            state = self.client.quorum.state
            if not isinstance(state, LeaderState) or self.next_offset >= state.epoch_start_offset:
                self._fired_leader = leader
                events.append(LeaderChange(leader))
        return events
