"""Incremental fetch sessions (KIP-227): Kafka's ``FetchManager``, ``FetchSession`` and
``FetchSessionCache`` for the Fetch handler.

A Fetch v7+ carries ``SessionId`` and ``SessionEpoch`` (Kafka's ``FetchMetadata``):

- **Full** (epoch 0, INITIAL_EPOCH): the request names every partition it wants. Any
  session the request names is closed first. The response carries every partition and,
  when the cache has (or can make, by eviction) a slot, the id of a new session at epoch
  1 caching those partitions with their fetch parameters and the high watermark and log
  start offset answered; else session id 0 (sessionless).
- **Final** (epoch -1, FINAL_EPOCH; Fetch < 7 always): the named session is closed and
  the request answered sessionless (session id 0).
- **Incremental** (epoch > 0, or < -1): the session must exist
  (FETCH_SESSION_ID_NOT_FOUND, 70) and expect that epoch (INVALID_FETCH_SESSION_EPOCH,
  71); a session made with topic ids (Fetch v13+) serves only v13+ and the other way
  round (FETCH_SESSION_TOPIC_ID_ERROR, 106). The request's partitions are added to the
  session or update their cached fetch parameters, ``ForgottenTopicsData`` removes
  partitions, and the broker reads every partition of the session, in the session's
  order. The response carries only the partitions that must be sent (Kafka's
  ``maybeUpdateResponseData``): records, a high watermark or log start offset other than
  the cached one, an error (which resets the cached high watermark to -1 so the partition
  is sent again once the error goes away), a preferred read replica, a diverging epoch.
  A partition that returned records moves to the end of the session (the next reads start
  with the others). The session's epoch then moves on (after ``2**31 - 1`` it wraps to 1).
  A session left with no partitions is closed and the request answered sessionless. A
  session whose epoch moved between the request and its response (a duplicate request
  answered first) answers INVALID_FETCH_SESSION_EPOCH with its id and no partitions.
- A throttled response (client quota) carries no partitions: sessionless for a full
  request (no session is made), the session's id for an incremental one (its cached
  state is not updated).

The cache (``max.incremental.fetch.session.cache.slots``, 1000 by default; 0 turns
sessions off) is split, as in Kafka 4, into 8 shards of ``slots // 8`` sessions each, new
sessions going to the shards in turn; shard ``n`` gives random ids in
``[max(1, n * R), (n + 1) * R)`` with ``R = (2**31 - 1) // 8``, unique on the broker, and
a session id finds its shard as ``id // R``. A full shard makes room (Kafka's
``tryEvict``) by evicting: the least recently used session when it has been unused for
more than ``min.incremental.fetch.session.eviction.ms`` (120000, Kafka's constant); else
the least valuable evictable session when the new one is worth more. Value orders
(privileged, partition count, id): sessions of followers (``ReplicaId`` >= 0) are
privileged. A follower's new session may evict any consumer session and any follower
session created more than 120 s ago; a consumer's new session only sessions created more
than 120 s ago, and only of strictly fewer partitions (never a follower's). Sessions live
in memory only, per broker; they are not tied to a connection.

Counters (Kafka's FetchSessionCache metrics): ``NumIncrementalFetchSessions``
(:attr:`FetchSessionCache.num_sessions`), ``NumIncrementalFetchPartitionsCached``
(:attr:`~FetchSessionCache.num_partitions`), evictions
(:attr:`~FetchSessionCache.evictions`), and the incremental fetches served
(:attr:`~FetchSessionCache.incremental_fetches`).

The fetcher's side, :class:`FetchSessionHandler` (Kafka's ``FetchSessionHandler``, used
by the replica fetcher): it sends a full request first, then, once the leader gave a
session, only the partitions whose fetch parameters changed (new ones included) and
forgets the ones it no longer fetches; a session error or a lost response starts over
with a full request that closes the old session.

Thread-safety: one lock guards the cache and its sessions; the Fetch handler calls in
from the event loop. A :class:`FetchSessionHandler` belongs to one fetcher task.
"""

from __future__ import annotations

import copy
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.fetch import FetchRequest, FetchResponse
from kafkacore.protocol.types import ZERO_UUID

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_SESSION_ID",
    "MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS",
    "NUM_SHARDS",
    "CachedPartition",
    "FetchContext",
    "FetchSession",
    "FetchSessionCache",
    "FetchSessionHandler",
    "next_epoch",
]

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NUM_SHARDS = 8  # Kafka's NumFetchSessionCacheShards
MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000
_MAX_INT = 2**31 - 1
_SESSION_ID_RANGE = _MAX_INT // NUM_SHARDS

# a partition's key in a session: (topic id, partition) with topic ids (Fetch v13+),
# else (topic name, partition)
_Key = tuple[str | uuid.UUID | None, int]


def next_epoch(epoch: int) -> int:
    """Kafka's ``FetchMetadata.nextEpoch``: -1 stays final, the maximum wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_INT else epoch + 1


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: the fetch parameters the fetcher last sent and the
    high watermark and log start offset last answered."""

    topic: str | None  # None: a topic id this broker did not know when it was added
    topic_id: uuid.UUID
    partition: int
    max_bytes: int
    fetch_offset: int
    current_leader_epoch: int
    fetcher_log_start_offset: int
    last_fetched_epoch: int
    high_watermark: int = -1
    local_log_start_offset: int = -1

    def update_request(self, p: FetchRequest.FetchPartition) -> None:
        self.max_bytes = p.partition_max_bytes
        self.fetch_offset = p.fetch_offset
        self.fetcher_log_start_offset = p.log_start_offset
        self.current_leader_epoch = p.current_leader_epoch
        self.last_fetched_epoch = p.last_fetched_epoch

    def must_respond(self, data: FetchResponse.PartitionData, update: bool) -> bool:
        """Kafka's ``maybeUpdateResponseData``: whether ``data`` must be sent (and the
        cached high watermark / log start offset brought up to it when ``update``)."""
        respond = data.records is not None and len(data.records) > 0
        if self.high_watermark != data.high_watermark:
            respond = True
            if update:
                self.high_watermark = data.high_watermark
        if self.local_log_start_offset != data.log_start_offset:
            respond = True
            if update:
                self.local_log_start_offset = data.log_start_offset
        if data.preferred_read_replica >= 0:
            respond = True
        if data.error_code != 0:
            if update:
                self.high_watermark = -1
            respond = True
        diverging = data.diverging_epoch
        if diverging is not None and (diverging.epoch >= 0 or diverging.end_offset >= 0):
            respond = True
        return respond


@dataclass(eq=False, slots=True)
class FetchSession:
    id: int
    privileged: bool
    partitions: dict[_Key, CachedPartition]  # in the session's order
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    cached_size: int = -1  # the size the cache last accounted for (-1: not in it)
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def evictable_key(self) -> tuple[bool, int, int]:
        return (self.privileged, self.cached_size, self.id)


@dataclass(eq=False)
class _Shard:
    """Kafka's ``FetchSessionCacheShard``. The sorted maps of Kafka are scans here: a
    shard holds at most ``slots // 8`` sessions and is only scanned when full."""

    max_entries: int
    eviction_ms: int
    number: int
    sessions: dict[int, FetchSession] = field(default_factory=dict)
    num_partitions: int = 0
    evictions: int = 0

    def new_session_id(self) -> int:
        low = max(1, self.number * _SESSION_ID_RANGE)
        high = (self.number + 1) * _SESSION_ID_RANGE
        while True:
            session_id = random.randrange(low, high)
            if session_id not in self.sessions and session_id != INVALID_SESSION_ID:
                return session_id

    def maybe_create(
        self,
        now: int,
        privileged: bool,
        partitions: dict[_Key, CachedPartition],
        uses_topic_ids: bool,
    ) -> int:
        key = (privileged, len(partitions), 0)
        if len(self.sessions) < self.max_entries or self._try_evict(privileged, key, now):
            session = FetchSession(
                self.new_session_id(),
                privileged,
                partitions,
                uses_topic_ids,
                now,
                now,
                next_epoch(INITIAL_EPOCH),
            )
            self.sessions[session.id] = session
            self.touch(session, now)
            return session.id
        return INVALID_SESSION_ID

    def _try_evict(self, privileged: bool, key: tuple[bool, int, int], now: int) -> bool:
        if not self.sessions:
            return False
        lru = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - lru.last_used_ms > self.eviction_ms:
            self.remove(lru)
            self.evictions += 1
            return True
        candidates = [
            s
            for s in self.sessions.values()
            if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        first = min(candidates, key=FetchSession.evictable_key)
        if key < first.evictable_key():
            return False
        self.remove(first)
        self.evictions += 1
        return True

    def remove(self, session: FetchSession) -> bool:
        if self.sessions.pop(session.id, None) is None:
            return False
        self.num_partitions -= session.cached_size
        session.evictable_by_all = session.evictable_by_privileged = False
        return True

    def touch(self, session: FetchSession, now: int) -> None:
        session.last_used_ms = now
        if session.cached_size != -1:
            self.num_partitions -= session.cached_size
        session.cached_size = len(session.partitions)
        old = now - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old
        self.num_partitions += session.cached_size


class FetchContext:
    """What one Fetch request does with the session cache (Kafka's ``FetchContext``):
    :attr:`request` is the request to read (an incremental one's is the session's
    partitions), :attr:`error` a session error to answer at once, and :meth:`finish`
    turns the response into the one to send."""

    FULL = "full"
    SESSIONLESS = "sessionless"
    INCREMENTAL = "incremental"
    ERROR = "error"

    def __init__(
        self,
        cache: FetchSessionCache,
        kind: str,
        request: FetchRequest,
        version: int,
        *,
        error: int = 0,
        session: FetchSession | None = None,
        from_follower: bool = False,
    ) -> None:
        self.cache = cache
        self.kind = kind
        self.request = request
        self.version = version
        self.error = error
        self.session = session
        self.from_follower = from_follower
        self._request_epoch = request.session_epoch if version >= 7 else FINAL_EPOCH

    def finish(self, response: FetchResponse) -> None:
        """Sets ``response``'s session id and error, and for an incremental request keeps
        only the partitions that must be sent (updating the session); a throttled
        response (``throttle_time_ms`` > 0, no partitions) only gets its session id."""
        throttled = response.throttle_time_ms > 0
        if self.kind == self.FULL:
            response.session_id = (
                INVALID_SESSION_ID
                if throttled
                else self.cache.create_session(
                    self.request, response, self.version, self.from_follower
                )
            )
        elif self.kind == self.INCREMENTAL:
            session = self.session
            assert session is not None
            with self.cache.lock:
                response.session_id = session.id
                if session.epoch != next_epoch(self._request_epoch):
                    response.error_code = ErrorCode.INVALID_FETCH_SESSION_EPOCH
                    response.responses = []
                    return
                if not throttled:
                    response.responses = _filtered(session, response.responses, self.version)
        else:
            response.session_id = INVALID_SESSION_ID


def _key(version: int, topic: str | None, topic_id: uuid.UUID, partition: int) -> _Key:
    return (topic_id, partition) if version >= 13 else (topic, partition)


def _filtered(
    session: FetchSession, topics: list[FetchResponse.FetchableTopicResponse], version: int
) -> list[FetchResponse.FetchableTopicResponse]:
    """The response topics of an incremental fetch with only the partitions to send,
    regrouped (consecutive partitions of one topic share an entry, as in Kafka's
    ``FetchResponse.of``)."""
    out: list[FetchResponse.FetchableTopicResponse] = []
    partitions = session.partitions
    for topic in topics:
        for data in topic.partitions:
            key = _key(version, topic.topic, topic.topic_id, data.partition_index)
            cached = partitions.get(key)
            if cached is None or not cached.must_respond(data, True):
                continue
            if data.records is not None and len(data.records) > 0:
                partitions[key] = partitions.pop(key)  # to the end of the session
            last = out[-1] if out else None
            if last is not None and (last.topic, last.topic_id) == (topic.topic, topic.topic_id):
                last.partitions.append(data)
            else:
                out.append(
                    FetchResponse.FetchableTopicResponse(
                        topic=topic.topic, topic_id=topic.topic_id, partitions=[data]
                    )
                )
    return out


class FetchSessionCache:
    """The broker's fetch sessions (Kafka's ``FetchManager`` over a sharded
    ``FetchSessionCache``); ``slots`` is ``max.incremental.fetch.session.cache.slots``."""

    def __init__(
        self,
        slots: int = 1000,
        eviction_ms: int = MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
        clock_ms: Callable[[], int] = _now_ms,
    ) -> None:
        self.lock = threading.RLock()
        self.shards = [_Shard(slots // NUM_SHARDS, eviction_ms, n) for n in range(NUM_SHARDS)]
        self._clock_ms = clock_ms
        self._next_shard = 0
        self.incremental_fetches = 0  # incremental requests served with a session

    @property
    def num_sessions(self) -> int:
        return sum(len(s.sessions) for s in self.shards)

    @property
    def num_partitions(self) -> int:
        return sum(s.num_partitions for s in self.shards)

    @property
    def evictions(self) -> int:
        return sum(s.evictions for s in self.shards)

    def session(self, session_id: int) -> FetchSession | None:
        shard = self._shard(session_id)
        return shard.sessions.get(session_id) if shard is not None else None

    def _shard(self, session_id: int) -> _Shard | None:
        index = session_id // _SESSION_ID_RANGE
        return self.shards[index] if 0 <= index < NUM_SHARDS else None

    def new_context(self, version: int, request: FetchRequest, from_follower: bool) -> FetchContext:
        """Kafka's ``FetchManager.newContext`` for a decoded Fetch ``request``."""
        session_id = request.session_id if version >= 7 else INVALID_SESSION_ID
        epoch = request.session_epoch if version >= 7 else FINAL_EPOCH
        with self.lock:
            if epoch in (INITIAL_EPOCH, FINAL_EPOCH):  # a full request
                if session_id != INVALID_SESSION_ID:
                    shard = self._shard(session_id)
                    found = self.session(session_id)
                    if shard is not None and found is not None:
                        shard.remove(found)  # a full request closes the session it names
                kind = FetchContext.SESSIONLESS if epoch == FINAL_EPOCH else FetchContext.FULL
                return FetchContext(self, kind, request, version, from_follower=from_follower)
            session = self.session(session_id)
            if session is None:
                return FetchContext(
                    self,
                    FetchContext.ERROR,
                    request,
                    version,
                    error=ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
                )
            if session.epoch != epoch:
                return FetchContext(
                    self,
                    FetchContext.ERROR,
                    request,
                    version,
                    error=ErrorCode.INVALID_FETCH_SESSION_EPOCH,
                )
            if session.uses_topic_ids != (version >= 13):
                return FetchContext(
                    self,
                    FetchContext.ERROR,
                    request,
                    version,
                    error=ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
                )
            _update(session, request, version)
            shard = self._shard(session.id)
            assert shard is not None
            if not session.partitions:
                shard.remove(session)
                return FetchContext(self, FetchContext.SESSIONLESS, request, version)
            shard.touch(session, self._clock_ms())
            session.epoch = next_epoch(session.epoch)
            self.incremental_fetches += 1
            return FetchContext(
                self,
                FetchContext.INCREMENTAL,
                _session_request(session, request, version),
                version,
                session=session,
                from_follower=from_follower,
            )

    def create_session(
        self, request: FetchRequest, response: FetchResponse, version: int, privileged: bool
    ) -> int:
        """A full request's session (Kafka's ``FullFetchContext``): the partitions of
        ``response`` with the request's fetch parameters; its id, or 0 without a slot."""
        wanted = {
            _key(version, t.topic, t.topic_id, p.partition): p
            for t in request.topics
            for p in t.partitions
        }
        partitions: dict[_Key, CachedPartition] = {}
        for topic in response.responses:
            for data in topic.partitions:
                key = _key(version, topic.topic, topic.topic_id, data.partition_index)
                p = wanted.get(key)
                if p is None:
                    continue
                partitions[key] = CachedPartition(
                    topic=topic.topic,
                    topic_id=topic.topic_id if version >= 13 else ZERO_UUID,
                    partition=data.partition_index,
                    max_bytes=p.partition_max_bytes,
                    fetch_offset=p.fetch_offset,
                    current_leader_epoch=p.current_leader_epoch,
                    fetcher_log_start_offset=p.log_start_offset,
                    last_fetched_epoch=p.last_fetched_epoch,
                    high_watermark=data.high_watermark,
                    local_log_start_offset=data.log_start_offset,
                )
        with self.lock:
            shard = self.shards[self._next_shard % NUM_SHARDS]
            self._next_shard += 1
            return shard.maybe_create(self._clock_ms(), privileged, partitions, version >= 13)


def _update(session: FetchSession, request: FetchRequest, version: int) -> None:
    """Kafka's ``FetchSession.update``: the request's partitions added or their cached
    fetch parameters updated, then the forgotten ones removed."""
    partitions = session.partitions
    for topic in request.topics:
        name = topic.topic if version <= 12 else None
        topic_id = topic.topic_id if version >= 13 else ZERO_UUID
        for p in topic.partitions:
            key = _key(version, name, topic_id, p.partition)
            cached = partitions.get(key)
            if cached is None:
                partitions[key] = CachedPartition(
                    topic=name,
                    topic_id=topic_id,
                    partition=p.partition,
                    max_bytes=p.partition_max_bytes,
                    fetch_offset=p.fetch_offset,
                    current_leader_epoch=p.current_leader_epoch,
                    fetcher_log_start_offset=p.log_start_offset,
                    last_fetched_epoch=p.last_fetched_epoch,
                )
            else:
                cached.update_request(p)
    for forgotten in request.forgotten_topics_data:
        name = forgotten.topic if version <= 12 else None
        topic_id = forgotten.topic_id if version >= 13 else ZERO_UUID
        for partition in forgotten.partitions:
            partitions.pop(_key(version, name, topic_id, partition), None)


def _session_request(session: FetchSession, request: FetchRequest, version: int) -> FetchRequest:
    """A copy of ``request`` asking for every partition of ``session`` in its order, with
    their cached fetch parameters (consecutive partitions of a topic in one entry; v13+
    topics by id, with the empty name a decoded v13 request has)."""
    topics: list[FetchRequest.FetchTopic] = []
    for cached in session.partitions.values():
        p = FetchRequest.FetchPartition(
            partition=cached.partition,
            current_leader_epoch=cached.current_leader_epoch,
            fetch_offset=cached.fetch_offset,
            last_fetched_epoch=cached.last_fetched_epoch,
            log_start_offset=cached.fetcher_log_start_offset,
            partition_max_bytes=cached.max_bytes,
        )
        last = topics[-1] if topics else None
        same = last is not None and (
            last.topic_id == cached.topic_id if version >= 13 else last.topic == cached.topic
        )
        if last is not None and same:
            last.partitions.append(p)
        else:
            topics.append(
                FetchRequest.FetchTopic(
                    topic=cached.topic or "", topic_id=cached.topic_id, partitions=[p]
                )
            )
    view = copy.copy(request)
    view.topics = topics
    view.forgotten_topics_data = []
    return view


_SESSION_ERRORS = (
    ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
    ErrorCode.INVALID_FETCH_SESSION_EPOCH,
    ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
)


class FetchSessionHandler:
    """One fetcher's session with one leader (Kafka's ``FetchSessionHandler``), for
    requests by topic name (Fetch v7-12)."""

    def __init__(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        # what the leader's session caches: (topic, partition) -> the fetch parameters
        self._sent: dict[tuple[str, int], tuple[int, ...]] = {}
        self._pending: dict[tuple[str, int], tuple[int, ...]] | None = None
        self.full_requests = 0
        self.incremental_requests = 0

    @staticmethod
    def _params(p: FetchRequest.FetchPartition) -> tuple[int, ...]:
        return (
            p.fetch_offset,
            p.log_start_offset,
            p.current_leader_epoch,
            p.last_fetched_epoch,
            p.partition_max_bytes,
        )

    def build(
        self, wanted: dict[tuple[str, int], FetchRequest.FetchPartition]
    ) -> tuple[int, int, list[FetchRequest.FetchTopic], list[FetchRequest.ForgottenTopic]]:
        """``(session id, epoch, topics, forgotten topics)`` for a Fetch of ``wanted``
        (``(topic, partition)`` -> its ``FetchPartition``)."""
        if self._pending is not None:  # the last request got no answer: start over
            self.epoch = INITIAL_EPOCH
        nxt = {key: self._params(p) for key, p in wanted.items()}
        self._pending = nxt
        if self.session_id == INVALID_SESSION_ID or self.epoch == INITIAL_EPOCH:
            self.full_requests += 1
            send = list(wanted)
            forget: list[tuple[str, int]] = []
        else:
            self.incremental_requests += 1
            send = [key for key, params in nxt.items() if self._sent.get(key) != params]
            forget = [key for key in self._sent if key not in nxt]
        topics: dict[str, list[FetchRequest.FetchPartition]] = {}
        for key in send:
            topics.setdefault(key[0], []).append(wanted[key])
        forgotten: dict[str, list[int]] = {}
        for topic, partition in forget:
            forgotten.setdefault(topic, []).append(partition)
        return (
            self.session_id,
            self.epoch,
            [FetchRequest.FetchTopic(topic=t, partitions=ps) for t, ps in topics.items()],
            [FetchRequest.ForgottenTopic(topic=t, partitions=ps) for t, ps in forgotten.items()],
        )

    def handle_response(self, response: FetchResponse) -> bool:
        """Takes the leader's answer to the last :meth:`build`; False on a session error
        (the next request is a full one; nothing else to do), True otherwise."""
        pending, self._pending = self._pending, None
        full = self.epoch == INITIAL_EPOCH or self.session_id == INVALID_SESSION_ID
        if response.error_code != ErrorCode.NONE:
            if response.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id = INVALID_SESSION_ID
            self.epoch = INITIAL_EPOCH
            return response.error_code not in _SESSION_ERRORS
        if full:
            self.session_id = response.session_id
            self.epoch = (
                next_epoch(INITIAL_EPOCH)
                if self.session_id != INVALID_SESSION_ID
                else INITIAL_EPOCH
            )
        else:
            self.epoch = next_epoch(self.epoch)
        self._sent = pending or {}
        return True
