"""The quorum's own state kept in the log (Kafka's ``KRaftControlRecordStateMachine`` with
``VoterSetHistory``): the ``kraft.version`` and the voter set at every offset, read from
the latest snapshot and the KRaftVersionRecord/VotersRecord control records of the log.

The voter set in force is the *latest* one in the log, committed or not (KIP-853): a
leader writes one change at a time and waits for it to commit before the next. Entries
read from a snapshot count as written at the snapshot's end offset - 1 (-1 for the
bootstrap snapshot 0-0). Before any VotersRecord the static ``controller.quorum.voters``
apply.

The owner keeps it at the log end: :meth:`update` after appends, :meth:`truncate_new_entries`
after a truncation, :meth:`truncate_old_entries` when a snapshot replaces the log start.
Not thread-safe.
"""

from __future__ import annotations

import bisect

from kafkacore.protocol.messages.raft_records import ControlRecordType
from kafkacore.raft.log import RaftLog
from kafkacore.raft.records import iter_batches
from kafkacore.raft.snapshots import read_snapshot
from kafkacore.raft.voters import VoterSet

__all__ = ["KRaftControlRecordStateMachine"]

_READ_CHUNK = 8 << 20


class _History:
    """Values by the offset they were written at, ascending."""

    def __init__(self) -> None:
        self.offsets: list[int] = []
        self.values: list[object] = []

    def add(self, offset: int, value: object) -> None:
        if self.offsets and offset <= self.offsets[-1]:
            raise ValueError(f"history entry at {offset} not after {self.offsets[-1]}")
        self.offsets.append(offset)
        self.values.append(value)

    def last(self) -> tuple[int, object] | None:
        return (self.offsets[-1], self.values[-1]) if self.offsets else None

    def at(self, offset: int) -> object | None:
        index = bisect.bisect_right(self.offsets, offset) - 1
        return self.values[index] if index >= 0 else None

    def truncate_new(self, end_offset: int) -> None:
        index = bisect.bisect_left(self.offsets, end_offset)
        del self.offsets[index:]
        del self.values[index:]

    def truncate_old(self, start_offset: int) -> None:
        """Keep the last entry below ``start_offset`` (it is still in force) and what follows."""
        index = bisect.bisect_left(self.offsets, start_offset) - 1
        if index > 0:
            del self.offsets[:index]
            del self.values[:index]

    def clear(self) -> None:
        self.offsets.clear()
        self.values.clear()


class KRaftControlRecordStateMachine:
    def __init__(self, static_voters: VoterSet, log: RaftLog) -> None:
        self._static = static_voters
        self._log = log
        self._voters = _History()
        self._versions = _History()
        self._next_offset = -1  # nothing read: the snapshot first

    # -- queries ----------------------------------------------------------------------

    def last_voter_set(self) -> VoterSet:
        last = self._voters.last()
        return self._static if last is None else last[1]  # type: ignore[return-value]

    def last_voter_set_offset(self) -> int | None:
        """The offset of the voter set in force (``None``: the static voters)."""
        last = self._voters.last()
        return None if last is None else last[0]

    def voter_set_at_offset(self, offset: int) -> VoterSet | None:
        found = self._voters.at(offset)
        return found  # type: ignore[return-value]

    def last_kraft_version(self) -> int:
        last = self._versions.last()
        return 0 if last is None else last[1]  # type: ignore[return-value]

    def kraft_version_at_offset(self, offset: int) -> int:
        found = self._versions.at(offset)
        return 0 if found is None else found  # type: ignore[return-value]

    @property
    def next_offset(self) -> int:
        return self._next_offset

    # -- updates ----------------------------------------------------------------------

    def update(self) -> None:
        """Read what the log has beyond what was read (the latest snapshot first when the
        log starts past the read position)."""
        log = self._log
        if self._next_offset < log.start_offset or self._next_offset < 0:
            self._load_snapshot()
        while self._next_offset < log.end_offset:
            chunk = log.read(self._next_offset, _READ_CHUNK)
            if not chunk:
                break
            self.apply(chunk)

    def apply(self, records: bytes) -> None:
        """Take in batches just appended at the read position (the owner passes what it
        wrote, sparing a read)."""
        for batch in iter_batches(records, values=False):
            if batch.last_offset < self._next_offset:
                continue
            if batch.is_control:
                offset = batch.base_offset
                for record in batch.control:
                    if record.type is ControlRecordType.KRAFT_VERSION:
                        self._versions.add(offset, record.message.k_raft_version)
                    elif record.type is ControlRecordType.KRAFT_VOTERS:
                        self._voters.add(offset, VoterSet.from_voters_record(record.message))
                    offset += 1
            self._next_offset = batch.last_offset + 1

    def _load_snapshot(self) -> None:
        self._voters.clear()
        self._versions.clear()
        snapshot_id = self._log.latest_snapshot_id()
        if snapshot_id is None:
            self._next_offset = self._log.start_offset
            return
        data = self._log.read_snapshot(snapshot_id)
        assert data is not None
        snapshot = read_snapshot(data)
        at = snapshot_id.offset - 1
        if snapshot.kraft_version:
            self._versions.add(at, snapshot.kraft_version)
        if snapshot.voters is not None:
            self._voters.add(at, snapshot.voters)
        self._next_offset = snapshot_id.offset

    def truncate_new_entries(self, end_offset: int) -> None:
        self._voters.truncate_new(end_offset)
        self._versions.truncate_new(end_offset)
        self._next_offset = min(self._next_offset, end_offset)

    def truncate_old_entries(self, start_offset: int) -> None:
        self._voters.truncate_old(start_offset)
        self._versions.truncate_old(start_offset)
