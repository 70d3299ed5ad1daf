"""Fetch sessions (KIP-227): the raw scenario of ``support.fetch_session_scenario`` against
a kafkacore broker, with the answers Kafka 4.3.1 gives (checked against Kafka itself in
tests/interop/test_fetch_session_vs_kafka.py), and the session cache's slots, shards,
session ids and eviction rules (Kafka's ``FetchSessionCacheShard.tryEvict``) on a
clock the test moves."""

from __future__ import annotations

from typing import Any

import pytest

from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.server.fetch_session import (
    FINAL_EPOCH,
    MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
    NUM_SHARDS,
    FetchSessionCache,
    FetchSessionHandler,
    next_epoch,
)
from support.brokers import BrokerFactory
from support.fetch_session_scenario import run_scenario

_REQ: Any = APIS_BY_NAME["Fetch"].request.cls
_RESP: Any = APIS_BY_NAME["Fetch"].response.cls

T, M = "sessions", "no-such-topic"
# (step, error, session label, [(topic, partition, error, HW, LSO, log start, records
# size, preferred replica)]): what Kafka 4.3.1 answers
EXPECTED: list[tuple[str, int, str, list[tuple[Any, ...]]]] = [
    ("full", 0, "S1", [(T, 0, 0, 3, 3, 0, 88, -1), (T, 1, 0, 0, 0, 0, 0, -1)]),
    ("nothing new", 0, "S1", []),
    ("records on p1", 0, "S1", [(T, 1, 0, 2, 2, 0, 79, -1)]),
    ("records on p0", 0, "S1", [(T, 0, 0, 4, 4, 0, 70, -1)]),
    ("both, rotated", 0, "S1", [(T, 1, 0, 3, 3, 0, 70, -1), (T, 0, 0, 5, 5, 0, 70, -1)]),
    ("wrong epoch", 71, "0", []),
    ("unknown topic added", 0, "S1", [(M, 0, 3, -1, -1, -1, 0, -1)]),
    ("error again", 0, "S1", [(M, 0, 3, -1, -1, -1, 0, -1)]),
    ("forget two", 0, "S1", []),
    ("unknown session", 70, "0", []),
    ("forget the last", 0, "0", []),
    ("closed session", 70, "0", []),
    ("full by id", 0, "S2", [(T, 0, 0, 5, 5, 0, 228, -1)]),
    ("by name on an id session", 106, "0", []),
    ("incremental by id", 0, "S2", []),
    ("full closes its session", 0, "S3", [(T, 1, 0, 3, 3, 0, 149, -1)]),
    ("the closed one", 70, "0", []),
    ("final epoch", 0, "0", [(T, 0, 0, 5, 5, 0, 0, -1)]),
    ("after the final epoch", 70, "0", []),
    ("v4", 0, "0", [(T, 0, 0, 5, 5, -1, 228, -1)]),
]


def test_scenario(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("offsets.topic.num.partitions=1")
    got = run_scenario(broker.port)
    assert [name for name, _ in got] == [e[0] for e in EXPECTED]
    for (name, answer), (_, error, session, partitions) in zip(got, EXPECTED, strict=True):
        assert answer["error"] == error, name
        assert answer["session"] == session, name
        assert answer["partitions"] == [tuple(p) for p in partitions], name


def test_no_sessions_with_zero_slots(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("max.incremental.fetch.session.cache.slots=0")
    got = dict(run_scenario(broker.port))
    assert got["full"]["session"] == "0"  # answered sessionless
    assert got["full"]["partitions"] == [tuple(p) for p in EXPECTED[0][3]]
    assert got["nothing new"]["error"] == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


# --- the cache on a clock the test moves ----------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def _request(partitions: int, session_id: int = 0, epoch: int = 0, follower: bool = False) -> Any:
    return _REQ(
        replica_id=1 if follower else -1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        session_id=session_id,
        session_epoch=epoch,
        topics=[
            _REQ.FetchTopic(
                topic="t",
                partitions=[
                    _REQ.FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=1024)
                    for p in range(partitions)
                ],
            )
        ],
        forgotten_topics_data=[],
    )


def _response(request: Any) -> Any:
    return _RESP(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[
            _RESP.FetchableTopicResponse(
                topic=t.topic,
                partitions=[
                    _RESP.PartitionData(
                        partition_index=p.partition,
                        high_watermark=0,
                        last_stable_offset=0,
                        log_start_offset=0,
                        records=b"",
                    )
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


def _open(cache: FetchSessionCache, partitions: int, follower: bool = False) -> int:
    """A full Fetch v12 through the cache; the session id answered (0: none)."""
    request = _request(partitions, follower=follower)
    context = cache.new_context(12, request, follower)
    response = _response(context.request)
    context.finish(response)
    return int(response.session_id)


def test_shards_ids_and_slots() -> None:
    clock = Clock()
    cache = FetchSessionCache(16, clock_ms=clock)  # 2 per shard
    ids = [_open(cache, 1) for _ in range(2 * NUM_SHARDS)]
    assert all(ids) and len(set(ids)) == 2 * NUM_SHARDS
    rng = (2**31 - 1) // NUM_SHARDS
    # the shards in turn, each giving ids in its own range
    assert [i // rng for i in ids] == [n % NUM_SHARDS for n in range(2 * NUM_SHARDS)]
    assert cache.num_sessions == 16 and cache.num_partitions == 16
    # full, and every session younger than 120 s: no room for a consumer's
    assert _open(cache, 5) == 0
    # fewer than 8 slots: every shard has 0, so no sessions at all (as in Kafka)
    assert _open(FetchSessionCache(7, clock_ms=clock), 1) == 0


def test_eviction_rules() -> None:
    clock = Clock()
    cache = FetchSessionCache(NUM_SHARDS, clock_ms=clock)  # 1 per shard, used in turn
    first = [_open(cache, 2) for _ in range(NUM_SHARDS)]  # shards 0-7, 2 partitions each
    assert all(first)
    # a follower's session evicts a consumer's, even a new one (shard 0)
    assert _open(cache, 1, follower=True)
    assert cache.session(first[0]) is None and cache.evictions == 1
    # a consumer's does not evict a session created 120 s ago or less (shard 1)
    assert _open(cache, 9) == 0
    clock.now += MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS + 1
    for sid in first[2:]:  # used now, so not stale, and created more than 120 s ago
        context = cache.new_context(12, _request(0, sid, 1), False)
        context.finish(_response(context.request))
    assert _open(cache, 1) == 0  # shard 2: fewer partitions do not evict
    assert _open(cache, 2) == 0  # shard 3: as many do not either
    assert _open(cache, 3)  # shard 4: more do
    assert cache.session(first[4]) is None and cache.evictions == 2
    # unused for more than 120 s: stale, evicted by anyone (shard 5)
    clock.now += MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS + 1
    assert _open(cache, 1)
    assert cache.session(first[5]) is None and cache.evictions == 3
    assert cache.num_sessions == NUM_SHARDS


def test_incremental_epochs() -> None:
    cache = FetchSessionCache()
    sid = _open(cache, 2)
    context = cache.new_context(12, _request(0, sid, 1), False)
    assert context.kind == context.INCREMENTAL
    assert [p.partition for t in context.request.topics for p in t.partitions] == [0, 1]
    # a duplicate of the same request, answered after the first: its epoch has moved
    assert cache.new_context(12, _request(0, sid, 1), False).error == 71
    duplicate = cache.new_context(12, _request(0, sid, 2), False)
    response = _response(context.request)
    context.finish(response)  # the first one's response: the epoch moved on since
    assert response.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert response.session_id == sid and response.responses == []
    duplicate.finish(response := _response(duplicate.request))
    assert response.error_code == 0 and response.responses == []  # nothing changed
    assert cache.incremental_fetches == 2


@pytest.mark.parametrize(
    ("epoch", "following"), [(0, 1), (1, 2), (2**31 - 1, 1), (FINAL_EPOCH, FINAL_EPOCH)]
)
def test_next_epoch(epoch: int, following: int) -> None:
    assert next_epoch(epoch) == following


# --- the fetcher's side (the replica fetcher's FetchSessionHandler) ------------------------


def _partition(partition: int, offset: int) -> Any:
    return _REQ.FetchPartition(
        partition=partition, fetch_offset=offset, log_start_offset=0, partition_max_bytes=1024
    )


def _round(
    handler: FetchSessionHandler, cache: FetchSessionCache, wanted: dict[int, int]
) -> tuple[Any, Any]:
    """One Fetch of ``wanted`` (partition -> offset of topic "t") through the handler and
    the leader's cache (every partition answered with HW 5); the request and response."""
    sid, epoch, topics, forgotten = handler.build(
        {("t", p): _partition(p, o) for p, o in wanted.items()}
    )
    request = _REQ(
        replica_id=2,
        max_bytes=1 << 20,
        session_id=sid,
        session_epoch=epoch,
        topics=topics,
        forgotten_topics_data=forgotten,
    )
    context = cache.new_context(12, request, True)
    if context.error:
        response = _RESP(error_code=context.error, session_id=0, responses=[])
    else:
        response = _response(context.request)
        for t in response.responses:
            for p in t.partitions:
                p.high_watermark = 5
        context.finish(response)
    assert handler.handle_response(response) == (response.error_code not in (70, 71, 106))
    return request, response


def test_fetcher_session_handler() -> None:
    cache = FetchSessionCache()
    handler = FetchSessionHandler()
    request, response = _round(handler, cache, {0: 0, 1: 0})
    assert (request.session_id, request.session_epoch) == (0, 0)
    assert response.session_id and handler.epoch == 1
    # nothing changed: nothing sent, nothing answered (the HW is the cached one)
    request, response = _round(handler, cache, {0: 0, 1: 0})
    assert request.session_epoch == 1 and request.topics == [] and response.responses == []
    # one offset moved, one partition added, one dropped
    request, response = _round(handler, cache, {0: 3, 2: 0})
    assert [(t.topic, [p.partition for p in t.partitions]) for t in request.topics] == [
        ("t", [0, 2])
    ]
    assert [(t.topic, t.partitions) for t in request.forgotten_topics_data] == [("t", [1])]
    assert [p.partition_index for t in response.responses for p in t.partitions] == [2]
    session = cache.session(response.session_id)
    assert session is not None and list(session.partitions) == [("t", 0), ("t", 2)]
    assert session.partitions[("t", 0)].fetch_offset == 3
    # the leader lost the session (evicted): 70, then a full request makes a new one
    cache.shards[response.session_id // ((2**31 - 1) // NUM_SHARDS)].sessions.clear()
    _, response = _round(handler, cache, {0: 3, 2: 0})
    assert response.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    request, response = _round(handler, cache, {0: 3, 2: 0})
    assert (request.session_id, request.session_epoch) == (0, 0)
    assert len(request.topics[0].partitions) == 2 and response.session_id
    # a request left unanswered (a lost connection): the next one is full, closing the
    # old session
    handler.build({("t", 0): _partition(0, 3)})
    request, response = _round(handler, cache, {0: 3})
    assert request.session_epoch == 0 and request.session_id != 0
    assert cache.num_sessions == 1
    assert (handler.full_requests, handler.incremental_requests) == (3, 4)
