"""The synchronous client: one blocking socket per broker, requests encoded and responses
decoded by :mod:`kafkacore.protocol` (the sans-IO codec the broker uses too).

Request versions (each implemented by kafkacore and by Apache Kafka 3.x/4.x): Metadata
v12, CreateTopics v7, ListOffsets v7, Fetch v12, Produce v9, InitProducerId v4; all
flexible. No ApiVersions negotiation: a broker that does not serve one of them answers
UNSUPPORTED_VERSION, raised as :class:`KafkaError`.

Thread-safety: none. A :class:`Client` holds its sockets and metadata cache unlocked; use
one per thread (one per Spark task).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

from kafkacore.errors import KafkaCoreError
from kafkacore.protocol import (
    APIS_BY_NAME,
    ErrorCode,
    ProtocolError,
    RequestHeader,
    decode_response,
)
from kafkacore.protocol import encode_request as _encode_request
from kafkacore.protocol import errors as _errors

__all__ = ["Client", "FetchResult", "KafkaError"]

_SIZE = struct.Struct(">i")

METADATA_VERSION = 12
CREATE_TOPICS_VERSION = 7
LIST_OFFSETS_VERSION = 7
# the ListOffsets version each special spec needs (KIP-405, KIP-1005, KIP-1023)
_LIST_OFFSETS_SPEC_VERSIONS = {-4: 8, -5: 9, -6: 11}
FETCH_VERSION = 12
PRODUCE_VERSION = 9
INIT_PRODUCER_ID_VERSION = 4

DEFAULT_MAX_RESPONSE_BYTES = 256 << 20
"""Largest response frame accepted; a larger declared size is refused before allocating."""

# Errors after which the partition's leader is looked up again and the request retried once.
_STALE_METADATA = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
    }
)
_RETRY_BACKOFF_S = 0.05


def _cls(api: str, direction: str = "request") -> Any:
    message = APIS_BY_NAME[api].request if direction == "request" else APIS_BY_NAME[api].response
    return message.cls


_METADATA: Any = _cls("Metadata")
_CREATE_TOPICS: Any = _cls("CreateTopics")
_LIST_OFFSETS: Any = _cls("ListOffsets")
_FETCH: Any = _cls("Fetch")
_PRODUCE: Any = _cls("Produce")
_INIT_PRODUCER_ID: Any = _cls("InitProducerId")


class KafkaError(KafkaCoreError):
    """An error code answered by the broker (or NETWORK_EXCEPTION for a broken connection):
    ``code`` is Kafka's number, ``name`` Kafka's name (``OFFSET_OUT_OF_RANGE``)."""

    def __init__(self, code: int, context: str = "", detail: str | None = None) -> None:
        self.code = int(code)
        try:
            self.name = ErrorCode(self.code).name
        except ValueError:
            self.name = f"UNKNOWN_ERROR_CODE_{self.code}"
        self.context = context
        self.detail = detail if detail is not None else _errors.message(self.code)
        text = f"{self.name} ({self.code})"
        if context:
            text += f" {context}"
        if self.detail:
            text += f": {self.detail}"
        super().__init__(text)


class FetchResult(NamedTuple):
    """One partition's Fetch answer. ``records`` are the stored batches as the broker sent
    them: the first may start before the offset asked, and (with Apache Kafka) the last
    may be partial; decoders skip both (``kafkacore.record.iter_batches``)."""

    records: bytes
    high_watermark: int
    log_start_offset: int
    last_stable_offset: int
    aborted_transactions: tuple[tuple[int, int], ...] = ()
    """``(producer id, first offset)`` of the aborted transactions the records overlap
    (a ``read_committed`` fetch; empty otherwise)."""


class _Connection:
    """A blocking socket to one broker: framed request out, framed response in."""

    def __init__(
        self, host: str, port: int, client_id: str, timeout_s: float, max_response_bytes: int
    ) -> None:
        self.address = f"{host}:{port}"
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self._correlation_id = 0
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise KafkaError(
                ErrorCode.NETWORK_EXCEPTION, f"connecting to {self.address}", str(exc)
            ) from exc
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def call(self, api: str, version: int, request: Any, *, extra_wait_s: float = 0.0) -> Any:
        """Send ``request``; its response (``None`` for a Produce with acks 0)."""
        entry = APIS_BY_NAME[api]
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        cid = self._correlation_id
        frame = _encode_request(RequestHeader(entry.key, version, cid, self.client_id), request)
        self._sock.settimeout(self.timeout_s + extra_wait_s)
        self._sock.sendall(frame)
        if api == "Produce" and request.acks == 0:
            return None
        try:
            got, response = decode_response(self._read_frame(api), entry.key, version)
        except ProtocolError as exc:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"from {self.address}", str(exc)) from exc
        if got != cid:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"from {self.address}",
                f"{api} response has correlation id {got}, expected {cid}",
            )
        return response

    def _read_frame(self, api: str) -> memoryview:
        (size,) = _SIZE.unpack(self._read_exactly(4))
        if size < 0 or size > self.max_response_bytes:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"from {self.address}",
                f"{api} response declares {size} bytes (limit {self.max_response_bytes})",
            )
        return memoryview(self._read_exactly(size))

    def _read_exactly(self, n: int) -> bytearray:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            read = self._sock.recv_into(view[got:])
            if read == 0:
                raise ConnectionError(f"{self.address} closed the connection")
            got += read
        return buf


class _PartitionInfo(NamedTuple):
    leader: int
    error: int


class Client:
    """A small synchronous Kafka client (see the module docstring).

    Requests for a partition go to its leader from Metadata. A broken connection is
    reopened and the request sent once more; NOT_LEADER_OR_FOLLOWER and
    UNKNOWN_TOPIC_OR_PARTITION refresh the metadata and retry once. A Produce retried
    after a broken connection may have been written twice unless the batch carries a
    producer id and sequence (then the broker drops the duplicate).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        client_id: str = "kafkacore",
        timeout_s: float = 30.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._bootstrap = [_parse_address(a) for a in bootstrap_servers.split(",") if a.strip()]
        if not self._bootstrap:
            raise ValueError("bootstrap_servers names no broker")
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self._brokers: dict[int, tuple[str, int]] = {}
        self._controller = -1
        self._connections: dict[int | tuple[str, int], _Connection] = {}
        self._topics: dict[str, dict[int, _PartitionInfo]] = {}
        self._topic_errors: dict[str, int] = {}

    # --- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- metadata -------------------------------------------------------------------------

    def topics(self) -> dict[str, int]:
        """Every non-internal topic with its partition count."""
        response = self._metadata(None)
        return {
            t.name: len(t.partitions)
            for t in response.topics
            if t.error_code == ErrorCode.NONE and not t.is_internal
        }

    def partitions(self, topic: str, *, auto_create: bool = False) -> list[int]:
        """The partition ids of ``topic``; KafkaError UNKNOWN_TOPIC_OR_PARTITION if none.
        ``auto_create``: let the broker create a missing topic with its defaults (when its
        ``auto.create.topics.enable`` allows, as Java producers do)."""
        self._metadata([topic], auto_create=auto_create)
        return sorted(self._known_topic(topic))

    def topic_id(self, topic: str) -> uuid.UUID:
        """``topic``'s id (Metadata v10+); KafkaError UNKNOWN_TOPIC_OR_PARTITION if none."""
        response = self._metadata([topic])
        for t in response.topics:
            if t.name == topic and t.error_code == ErrorCode.NONE:
                return uuid.UUID(bytes=t.topic_id.bytes)
        self._known_topic(topic)
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, f"topic {topic!r}")

    def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int = 1,
        configs: dict[str, str] | None = None,
        *,
        exist_ok: bool = True,
    ) -> None:
        """Create ``name`` and wait until every partition has a leader."""
        request = _CREATE_TOPICS(
            topics=[
                _CREATE_TOPICS.CreatableTopic(
                    name=name,
                    num_partitions=partitions,
                    replication_factor=replication_factor,
                    assignments=[],
                    configs=[
                        _CREATE_TOPICS.CreatableTopicConfig(name=k, value=v)
                        for k, v in (configs or {}).items()
                    ],
                )
            ],
            timeout_ms=int(self.timeout_s * 1000),
            validate_only=False,
        )
        response = self._call_any("CreateTopics", CREATE_TOPICS_VERSION, request, controller=True)
        for result in response.topics:
            code = result.error_code
            if code == ErrorCode.TOPIC_ALREADY_EXISTS and exist_ok:
                continue
            if code != ErrorCode.NONE:
                raise KafkaError(code, f"creating topic {name!r}", result.error_message)
        deadline = time.monotonic() + self.timeout_s
        while True:
            self._metadata([name])
            info = self._topics.get(name)
            if info and all(p.leader >= 0 for p in info.values()):
                return
            if time.monotonic() > deadline:
                raise KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"topic {name!r} after creation")
            time.sleep(_RETRY_BACKOFF_S)

    def _metadata(self, topics: list[str] | None, *, auto_create: bool = False) -> Any:
        request = _METADATA(
            topics=None
            if topics is None
            else [_METADATA.MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=auto_create,
            include_topic_authorized_operations=False,
        )
        response = self._call_any("Metadata", METADATA_VERSION, request)
        self._brokers = {b.node_id: (b.host, b.port) for b in response.brokers}
        self._controller = response.controller_id
        for topic in response.topics:
            if topic.error_code != ErrorCode.NONE:
                # e.g. LEADER_NOT_AVAILABLE while being created: raised on use, not here
                self._topics.pop(topic.name, None)
                self._topic_errors[topic.name] = topic.error_code
                continue
            self._topic_errors.pop(topic.name, None)
            self._topics[topic.name] = {
                p.partition_index: _PartitionInfo(p.leader_id, p.error_code)
                for p in topic.partitions
            }
        if topics is None:  # a full listing also forgets deleted topics
            listed = {t.name for t in response.topics}
            for gone in set(self._topics) - listed:
                del self._topics[gone]
        return response

    def _known_topic(self, topic: str) -> dict[int, _PartitionInfo]:
        info = self._topics.get(topic)
        if info is None:
            code = self._topic_errors.get(topic, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            raise KafkaError(code, f"topic {topic!r}")
        return info

    def _leader(self, topic: str, partition: int, refresh: bool) -> int:
        """The leader's node id; waits (up to the timeout) while the partition has none."""
        deadline = time.monotonic() + self.timeout_s
        if refresh or topic not in self._topics:
            self._metadata([topic])
        while True:
            known = self._topics.get(topic)
            waiting = self._topic_errors.get(topic) == ErrorCode.LEADER_NOT_AVAILABLE
            if known is None and not waiting:
                self._known_topic(topic)  # raises the topic's error
            info = None if known is None else known.get(partition)
            if known is not None and info is None:
                raise KafkaError(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"partition {topic}-{partition}"
                )
            if info is not None and info.leader >= 0 and info.leader in self._brokers:
                return info.leader
            if time.monotonic() > deadline:
                code = info.error if info is not None and info.error else None
                raise KafkaError(
                    code or ErrorCode.LEADER_NOT_AVAILABLE, f"partition {topic}-{partition}"
                )
            time.sleep(_RETRY_BACKOFF_S)
            self._metadata([topic])

    # --- transport ------------------------------------------------------------------------

    def _connection(self, node: int | tuple[str, int]) -> _Connection:
        connection = self._connections.get(node)
        if connection is None:
            host, port = node if isinstance(node, tuple) else self._brokers[node]
            connection = _Connection(
                host, port, self.client_id, self.timeout_s, self.max_response_bytes
            )
            self._connections[node] = connection
        return connection

    def _drop(self, node: int | tuple[str, int]) -> None:
        connection = self._connections.pop(node, None)
        if connection is not None:
            connection.close()

    def _call(
        self, node: int | tuple[str, int], api: str, version: int, request: Any, **kw: Any
    ) -> Any:
        """One request to ``node``; a broken connection is reopened and the request resent
        once."""
        for attempt in (0, 1):
            try:
                return self._connection(node).call(api, version, request, **kw)
            except (OSError, ConnectionError) as exc:
                self._drop(node)
                if attempt == 1:
                    raise KafkaError(
                        ErrorCode.NETWORK_EXCEPTION, f"{api} to {_describe(node)}", str(exc)
                    ) from exc
            except KafkaError:
                self._drop(node)
                raise
        raise AssertionError("unreachable")

    def _any_nodes(self, controller: bool) -> Iterator[int | tuple[str, int]]:
        if controller and self._controller in self._brokers:
            yield self._controller
        yield from self._brokers
        yield from self._bootstrap

    def _call_any(self, api: str, version: int, request: Any, *, controller: bool = False) -> Any:
        """``request`` to the controller (if asked and known) or any reachable broker."""
        error: KafkaError | None = None
        for node in self._any_nodes(controller):
            try:
                return self._call(node, api, version, request)
            except KafkaError as exc:
                if exc.code != ErrorCode.NETWORK_EXCEPTION:
                    raise
                error = exc
        assert error is not None
        raise error

    def _call_leader(
        self, topic: str, partition: int, api: str, version: int, request: Any, **kw: Any
    ) -> tuple[Any, int]:
        """``(response, leader)``: ``request`` sent to the partition's leader."""
        leader = self._leader(topic, partition, refresh=False)
        try:
            return self._call(leader, api, version, request, **kw), leader
        except KafkaError as exc:
            if exc.code != ErrorCode.NETWORK_EXCEPTION:
                raise
        leader = self._leader(topic, partition, refresh=True)  # the leader may have moved
        return self._call(leader, api, version, request, **kw), leader

    def _partition_call(
        self,
        topic: str,
        partition: int,
        api: str,
        version: int,
        request: Any,
        pick: Any,
        **kw: Any,
    ) -> Any:
        """The partition response (``pick(response)``), retried once with fresh metadata
        when the answer says the leader or the topic was stale."""
        for attempt in (0, 1):
            response, _ = self._call_leader(topic, partition, api, version, request, **kw)
            result = pick(response)
            if result.error_code in _STALE_METADATA and attempt == 0:
                self._metadata([topic])
                continue
            return result
        raise AssertionError("unreachable")

    # --- offsets and records --------------------------------------------------------------

    def list_offsets(
        self, specs: dict[tuple[str, int], int], *, isolation_level: int = 0
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """``(offset, timestamp)`` per partition for each spec: -2 earliest, -1 latest,
        -3 the record with the largest timestamp, -4 the local log start, -5 the last
        tiered offset and -6 the first offset not tiered yet of a tiered topic (asked at
        ListOffsets v8, v9 and v11, as Kafka's admin client asks them), >= 0 the first
        record with a timestamp at or after it (offset -1 when there is none).
        One request per leader; partitions whose leader moved are asked again once."""
        result: dict[tuple[str, int], tuple[int, int]] = {}
        remaining = dict(specs)
        for attempt in (0, 1):
            by_leader: dict[int, dict[str, dict[int, int]]] = {}
            for (topic, partition), spec in remaining.items():
                leader = self._leader(topic, partition, refresh=attempt == 1)
                by_leader.setdefault(leader, {}).setdefault(topic, {})[partition] = spec
            stale: dict[tuple[str, int], int] = {}
            for leader, topics in by_leader.items():
                request = _LIST_OFFSETS(
                    replica_id=-1,
                    isolation_level=isolation_level,
                    topics=[
                        _LIST_OFFSETS.ListOffsetsTopic(
                            name=topic,
                            partitions=[
                                _LIST_OFFSETS.ListOffsetsPartition(
                                    partition_index=partition, timestamp=spec
                                )
                                for partition, spec in partitions.items()
                            ],
                        )
                        for topic, partitions in topics.items()
                    ],
                )
                version = max(
                    [LIST_OFFSETS_VERSION]
                    + [
                        _LIST_OFFSETS_SPEC_VERSIONS.get(spec, 0)
                        for ps in topics.values()
                        for spec in ps.values()
                    ]
                )
                try:
                    response = self._call(leader, "ListOffsets", version, request)
                except KafkaError as exc:
                    if exc.code != ErrorCode.NETWORK_EXCEPTION or attempt == 1:
                        raise
                    stale.update(
                        ((t, p), spec) for t, ps in topics.items() for p, spec in ps.items()
                    )
                    continue
                for topic_answer in response.topics:
                    for answer in topic_answer.partitions:
                        tp = (topic_answer.name, answer.partition_index)
                        if tp not in remaining:
                            continue
                        code = answer.error_code
                        if code in _STALE_METADATA and attempt == 0:
                            stale[tp] = remaining[tp]
                        elif code != ErrorCode.NONE:
                            raise KafkaError(code, f"listing offsets of {tp[0]}-{tp[1]}")
                        else:
                            result[tp] = (answer.offset, answer.timestamp)
            remaining = stale
            if not remaining:
                break
        missing = set(specs) - set(result)
        if missing:
            topic, partition = min(missing)
            raise KafkaError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"listing offsets of {topic}-{partition}",
                "the broker's answer left the partition out",
            )
        return result

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        *,
        max_bytes: int = 8 << 20,
        max_wait_ms: int = 0,
        isolation_level: int = 0,
    ) -> FetchResult:
        """The stored batches from ``offset`` (at least one whole batch when there is one,
        KIP-74); waits up to ``max_wait_ms`` for a first byte. Raises KafkaError, e.g.
        OFFSET_OUT_OF_RANGE (code 1)."""
        request = _FETCH(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=max_bytes,
            isolation_level=isolation_level,
            session_id=0,
            session_epoch=-1,
            topics=[
                _FETCH.FetchTopic(
                    topic=topic,
                    partitions=[
                        _FETCH.FetchPartition(
                            partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes
                        )
                    ],
                )
            ],
            forgotten_topics_data=[],
        )

        def pick(response: Any) -> Any:
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(response.error_code, f"fetching {topic}-{partition}")
            return response.responses[0].partitions[0]

        answer = self._partition_call(
            topic,
            partition,
            "Fetch",
            FETCH_VERSION,
            request,
            pick,
            extra_wait_s=max_wait_ms / 1000,
        )
        if answer.error_code != ErrorCode.NONE:
            raise KafkaError(answer.error_code, f"fetching {topic}-{partition} at offset {offset}")
        records = answer.records
        return FetchResult(
            b"" if records is None else bytes(records),
            answer.high_watermark,
            answer.log_start_offset,
            answer.last_stable_offset,
            tuple((a.producer_id, a.first_offset) for a in answer.aborted_transactions or ()),
        )

    # --- producing ------------------------------------------------------------------------

    def init_producer_id(self) -> tuple[int, int]:
        """``(producer_id, producer_epoch)`` for an idempotent (non-transactional) producer."""
        request = _INIT_PRODUCER_ID(
            transactional_id=None, transaction_timeout_ms=-1, producer_id=-1, producer_epoch=-1
        )
        response = self._call_any("InitProducerId", INIT_PRODUCER_ID_VERSION, request)
        if response.error_code != ErrorCode.NONE:
            raise KafkaError(response.error_code, "InitProducerId")
        return response.producer_id, response.producer_epoch

    def produce(
        self, topic: str, partition: int, batch: bytes, *, acks: int = -1, timeout_ms: int = 30000
    ) -> int:
        """Append one RecordBatch v2 (base offset 0); its base offset in the log (-1 with
        acks 0). A retry of one of the producer's last batches is answered with its
        original offsets; DUPLICATE_SEQUENCE_NUMBER and OUT_OF_ORDER_SEQUENCE_NUMBER (and
        every other error) raise KafkaError with that code."""
        request = _PRODUCE(
            transactional_id=None,
            acks=acks,
            timeout_ms=timeout_ms,
            topic_data=[
                _PRODUCE.TopicProduceData(
                    name=topic,
                    partition_data=[_PRODUCE.PartitionProduceData(index=partition, records=batch)],
                )
            ],
        )
        if acks == 0:
            self._call_leader(topic, partition, "Produce", PRODUCE_VERSION, request)
            return -1

        def pick(response: Any) -> Any:
            return response.responses[0].partition_responses[0]

        answer = self._partition_call(
            topic,
            partition,
            "Produce",
            PRODUCE_VERSION,
            request,
            pick,
            extra_wait_s=timeout_ms / 1000,
        )
        if answer.error_code != ErrorCode.NONE:
            raise KafkaError(
                answer.error_code, f"producing to {topic}-{partition}", answer.error_message
            )
        return int(answer.base_offset)


def _parse_address(address: str) -> tuple[str, int]:
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bootstrap server {address.strip()!r} is not host:port")
    return host.strip("[]"), int(port)


def _describe(node: int | tuple[str, int]) -> str:
    return f"{node[0]}:{node[1]}" if isinstance(node, tuple) else f"broker {node}"
