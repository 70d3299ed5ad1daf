"""Share sessions (KIP-932; Kafka's ``ShareSessionCache``, ``ShareSession`` and
``ShareRequestMetadata``): what a share consumer fetches from this broker, kept between
ShareFetch requests so that each sends only what changed.

A session is keyed by (group, member id) and bound to the connection that opened it.
``ShareSessionEpoch`` 0 opens a session (a new one replaces the member's old one), -1
closes it, any other value must be the session's next epoch. A request naming no session
or the wrong epoch gets SHARE_SESSION_NOT_FOUND / INVALID_SHARE_SESSION_EPOCH; more than
``group.share.max.share.sessions`` sessions, SHARE_SESSION_LIMIT_REACHED. When the
connection closes, its session goes and the member's acquired records are released (Kafka
4.3's ``ConnectionDisconnectListener``).

Thread-safety: event loop only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkacore.protocol import ErrorCode

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "SessionError",
    "ShareSession",
    "ShareSessionCache",
    "next_epoch",
]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1

TopicIdPartition = tuple[uuid.UUID, int]


def next_epoch(epoch: int) -> int:
    """``ShareRequestMetadata.nextEpoch``: 0 -> 1, wrapping to 1 after Integer.MAX_VALUE."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == 2**31 - 1 else epoch + 1


class SessionError(Exception):
    """A session refused: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH,
    SHARE_SESSION_LIMIT_REACHED or INVALID_REQUEST."""

    def __init__(self, error_code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


@dataclass
class ShareSession:
    """One member's session: its partitions (in the order first fetched), the epoch the
    next request must carry, and the connection that owns it."""

    group_id: str
    member_id: str
    epoch: int
    connection_id: str
    partitions: dict[TopicIdPartition, None] = field(default_factory=dict)

    def update(self, fetch: Iterable[TopicIdPartition], forget: Iterable[TopicIdPartition]) -> None:
        for tp in fetch:
            self.partitions.setdefault(tp, None)
        for tp in forget:
            self.partitions.pop(tp, None)


class ShareSessionCache:
    """See the module documentation; ``max_sessions``: ``group.share.max.share.sessions``."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self._by_connection: dict[str, tuple[str, str]] = {}

    def __len__(self) -> int:
        return len(self.sessions)

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def open(
        self,
        group_id: str,
        member_id: str,
        partitions: Iterable[TopicIdPartition],
        connection_id: str,
    ) -> ShareSession:
        """Epoch 0: a new session (replacing the member's); raises
        SHARE_SESSION_LIMIT_REACHED when the cache is full."""
        self.remove(group_id, member_id)
        if len(self.sessions) >= self.max_sessions:
            raise SessionError(ErrorCode.SHARE_SESSION_LIMIT_REACHED)
        session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), connection_id)
        session.update(partitions, ())
        self.sessions[(group_id, member_id)] = session
        self._by_connection[connection_id] = (group_id, member_id)
        return session

    def advance(
        self,
        group_id: str,
        member_id: str,
        epoch: int,
        fetch: Iterable[TopicIdPartition] = (),
        forget: Iterable[TopicIdPartition] = (),
    ) -> ShareSession:
        """A subsequent request: the session moves to its next epoch."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND)
        if session.epoch != epoch:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        session.update(fetch, forget)
        session.epoch = next_epoch(session.epoch)
        return session

    def remove(self, group_id: str, member_id: str) -> ShareSession | None:
        session = self.sessions.pop((group_id, member_id), None)
        if session is not None and self._by_connection.get(session.connection_id) == (
            group_id,
            member_id,
        ):
            del self._by_connection[session.connection_id]
        return session

    def remove_connection(self, connection_id: str) -> ShareSession | None:
        """The connection closed: its session, removed (None: it had none)."""
        key = self._by_connection.pop(connection_id, None)
        if key is None:
            return None
        return self.sessions.pop(key, None)

    def remove_member(self, group_id: str, member_id: str) -> ShareSession | None:
        """The member left its group: its session, removed."""
        return self.remove(group_id, member_id)
