"""One fetch-session (KIP-227) scenario over raw Fetch requests, run against kafkacore and
against Apache Kafka: a full request that makes a session, incremental ones that add,
update and forget partitions (a forgotten last partition closes the session), records
arriving on one partition and then the other (the session's order rotates), an unknown
topic's error repeated on every incremental response, a wrong epoch (71), an unknown
session (70), a topic-id session asked by name (106), a full request that closes the
session it names, the final epoch (sessionless), and Fetch v4 (no sessions).

:func:`run_scenario` returns each step's response normalised: session ids as labels
(``S1``, ``S2``... in order of appearance, ``0`` for none), topic ids as topic names,
records as their size, so that two brokers' answers compare equal field by field."""

from __future__ import annotations

import socket
import time
from typing import Any

from kafkacore import backend
from kafkacore.protocol import APIS_BY_NAME, ErrorCode, RequestHeader
from kafkacore.protocol.api import encode_request
from kafkacore.protocol.types import ZERO_UUID
from support.raw_client import receive_blocking

__all__ = ["TOPIC", "Raw", "prepare", "run_scenario"]

TOPIC = "sessions"
MISSING = "no-such-topic"
_FETCH: Any = APIS_BY_NAME["Fetch"].request.cls
_PRODUCE: Any = APIS_BY_NAME["Produce"].request.cls
_TIMESTAMP = 1_700_000_000_000  # fixed: the same batch bytes on both brokers


class Raw:
    """Blocking raw requests over one connection."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("localhost", port), timeout=30)
        self.cid = 0

    def call(self, name: str, version: int, request: Any) -> Any:
        self.cid += 1
        header = RequestHeader(APIS_BY_NAME[name].key, version, self.cid, "sessions")
        self.sock.sendall(encode_request(header, request))
        cid, response = receive_blocking(self.sock, name, version)
        assert cid == self.cid
        return response

    def close(self) -> None:
        self.sock.close()


def _until(what: str, probe: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{what}: gave up")


def prepare(raw: Raw) -> Any:
    """Creates TOPIC (2 partitions) and waits for its leaders; its topic id."""
    create: Any = APIS_BY_NAME["CreateTopics"].request.cls
    created = raw.call(
        "CreateTopics",
        5,
        create(
            topics=[create.CreatableTopic(name=TOPIC, num_partitions=2, replication_factor=1)],
            timeout_ms=30_000,
        ),
    )
    assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)
    meta: Any = APIS_BY_NAME["Metadata"].request.cls

    def ready() -> Any:
        m = raw.call("Metadata", 12, meta(topics=[meta.MetadataRequestTopic(name=TOPIC)]))
        t = m.topics[0]
        parts = t.partitions
        ok = len(parts) == 2 and all(p.error_code == 0 and p.leader_id >= 0 for p in parts)
        return t.topic_id if ok else None

    return _until("the topic has leaders", ready)


def _produce(raw: Raw, partition: int, count: int) -> None:
    records = [(i, _TIMESTAMP, None, b"v%d" % i, []) for i in range(count)]
    batch = bytes(backend.build_batch(records))
    answer = raw.call(
        "Produce",
        9,
        _PRODUCE(
            acks=-1,
            timeout_ms=10_000,
            topic_data=[
                _PRODUCE.TopicProduceData(
                    name=TOPIC,
                    partition_data=[_PRODUCE.PartitionProduceData(index=partition, records=batch)],
                )
            ],
        ),
    )
    assert answer.responses[0].partition_responses[0].error_code == 0


def _fetch(
    session_id: int,
    epoch: int,
    wanted: list[tuple[str, int, int]],
    forgotten: list[tuple[str, int]] = (),  # type: ignore[assignment]
    ids: dict[str, Any] | None = None,
) -> Any:
    """A Fetch of ``wanted`` ``(topic, partition, offset)``; ``ids``: by topic id (v13+)."""
    ids = ids or {}
    topics: list[Any] = []
    for topic, partition, offset in wanted:
        p = _FETCH.FetchPartition(
            partition=partition,
            current_leader_epoch=-1,
            fetch_offset=offset,
            last_fetched_epoch=-1,
            log_start_offset=-1,
            partition_max_bytes=1 << 20,
        )
        if topics and topics[-1].topic == topic:
            topics[-1].partitions.append(p)
        else:
            topics.append(
                _FETCH.FetchTopic(topic=topic, topic_id=ids.get(topic, ZERO_UUID), partitions=[p])
            )
    forgot: dict[str, list[int]] = {}
    for topic, partition in forgotten:
        forgot.setdefault(topic, []).append(partition)
    return _FETCH(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=session_id,
        session_epoch=epoch,
        topics=topics,
        forgotten_topics_data=[
            _FETCH.ForgottenTopic(topic=t, topic_id=ids.get(t, ZERO_UUID), partitions=ps)
            for t, ps in forgot.items()
        ],
        rack_id="",
    )


class _Normaliser:
    def __init__(self, topic_id: Any) -> None:
        self.labels: dict[int, str] = {}
        self.names = {topic_id: TOPIC}

    def session(self, session_id: int) -> str:
        if session_id == 0:
            return "0"
        return self.labels.setdefault(session_id, f"S{len(self.labels) + 1}")

    def __call__(self, response: Any) -> dict[str, Any]:
        partitions = []
        for t in response.responses:
            name = t.topic if t.topic_id == ZERO_UUID else self.names.get(t.topic_id, "?")
            for p in t.partitions:
                partitions.append(
                    (
                        name,
                        p.partition_index,
                        p.error_code,
                        p.high_watermark,
                        p.last_stable_offset,
                        p.log_start_offset,
                        len(p.records) if p.records is not None else -1,
                        p.preferred_read_replica,
                    )
                )
        return {
            "error": response.error_code,
            "session": self.session(response.session_id),
            "topics": len(response.responses),
            "partitions": partitions,
        }


def run_scenario(port: int) -> list[tuple[str, dict[str, Any]]]:
    """The scenario against the broker on ``port`` (TOPIC is created); each step's
    normalised response."""
    raw = Raw(port)
    try:
        topic_id = prepare(raw)
        return _steps(raw, topic_id)
    finally:
        raw.close()


def _steps(raw: Raw, topic_id: Any) -> list[tuple[str, dict[str, Any]]]:
    norm = _Normaliser(topic_id)
    out: list[tuple[str, dict[str, Any]]] = []
    ids = {TOPIC: topic_id}

    def step(name: str, version: int, request: Any) -> Any:
        response = raw.call("Fetch", version, request)
        out.append((name, norm(response)))
        return response

    _produce(raw, 0, 3)
    first = step("full", 12, _fetch(0, 0, [(TOPIC, 0, 0), (TOPIC, 1, 0)]))
    s1 = first.session_id
    step("nothing new", 12, _fetch(s1, 1, [(TOPIC, 0, 3)]))
    _produce(raw, 1, 2)
    step("records on p1", 12, _fetch(s1, 2, []))
    _produce(raw, 0, 1)
    step("records on p0", 12, _fetch(s1, 3, [(TOPIC, 1, 2)]))
    _produce(raw, 0, 1)
    _produce(raw, 1, 1)
    step("both, rotated", 12, _fetch(s1, 4, [(TOPIC, 0, 4)]))
    step("wrong epoch", 12, _fetch(s1, 99, []))
    step("unknown topic added", 12, _fetch(s1, 5, [(TOPIC, 0, 5), (TOPIC, 1, 3), (MISSING, 0, 0)]))
    step("error again", 12, _fetch(s1, 6, []))
    step("forget two", 12, _fetch(s1, 7, [], [(MISSING, 0), (TOPIC, 1)]))
    step("unknown session", 12, _fetch(s1 + 1, 1, []))
    step("forget the last", 12, _fetch(s1, 8, [], [(TOPIC, 0)]))
    step("closed session", 12, _fetch(s1, 9, []))
    second = step("full by id", 13, _fetch(0, 0, [(TOPIC, 0, 0)], ids=ids))
    s2 = second.session_id
    step("by name on an id session", 12, _fetch(s2, 1, []))
    step("incremental by id", 13, _fetch(s2, 1, [(TOPIC, 0, 5)], ids=ids))
    third = step("full closes its session", 13, _fetch(s2, 0, [(TOPIC, 1, 0)], ids=ids))
    s3 = third.session_id
    step("the closed one", 13, _fetch(s2, 2, [], ids=ids))
    step("final epoch", 13, _fetch(s3, -1, [(TOPIC, 0, 5)], ids=ids))
    step("after the final epoch", 13, _fetch(s3, 1, [], ids=ids))
    step("v4", 4, _fetch(0, 0, [(TOPIC, 0, 0)]))
    return out
