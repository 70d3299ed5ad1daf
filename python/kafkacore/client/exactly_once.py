"""Exactly-once publication of micro-batches (Spark Structured Streaming's sink contract).

Spark runs each micro-batch ``batch_id`` as tasks on executors, may run a task several
times (retries, speculation), then calls the driver's commit once with the messages of the
successful attempts; after a crash the query restarts from its checkpoint and may run a
batch again, committed or not. The mechanism below makes every record of a committed
micro-batch appear exactly once in its target partitions, in staging order, across task
retries, driver crashes and broker restarts.

**1. Tasks stage, they never write to the targets.** :func:`stage` appends the task's
target record batches (RecordBatch v2, any codec, at most :data:`MAX_BATCH_BYTES` each) as
records of :data:`STAGING_TOPIC`: key ``"<sink id>/<batch id>/<task id>"``, headers
``topic`` and ``partition`` naming the target, value the batch bytes unchanged. It returns
the staging offset ranges it wrote (:class:`StagedRange`: staging partition, ``[start,
end)``, and the target partitions the range holds), which the task hands to the driver in
its commit message. Every attempt writes new ranges, so the data of a failed or superseded
attempt is never referenced (it expires with the staging topic's 7-day retention).

**2. The driver is the only writer of a sink.** :class:`ExactlyOnceSink` keeps one state
record per sink in :data:`SINKS_TOPIC` (one partition, compacted; key = sink id, value =
JSON)::

    {"version": 1, "producer_id": P, "producer_epoch": E, "committed": last batch id or -1,
     "sequences": {"<topic>": {"<partition>": next sequence}},
     "pending": null | {"batch_id": B, "staged": [[staging partition, start, end], ...],
                        "targets": {"<topic>": {"<partition>": log end offset}}}}

The producer id and epoch come from one InitProducerId, the first time the sink commits,
and are kept for the life of the sink id; ``sequences`` continue per target partition
from one micro-batch to the next, as one idempotent producer's would.

**3. Commit = intent, publish, done.** ``commit(batch_id, staged)``:

* ``batch_id <= committed``: a replayed batch; nothing is written, returns False;
* otherwise it reads the log end offset of every target partition of the staged ranges
  and writes the state with ``pending`` set (the *intent*: the batch id, the staged ranges
  in order, those log end offsets; while it is pending, ``sequences`` hold the base
  sequences of the publication); then it reads the staged ranges in order and produces
  each staged batch to its target partition with the sink's producer id and epoch and the
  next sequence of that partition (the batch header's base offset, producer fields and
  sequence rewritten, CRC-32C recomputed; the records are the staged bytes); then it
  writes the state with ``committed = batch_id``, the advanced sequences and no intent,
  and returns True.

**4. Recovery completes the intent without writing anything twice.** A new
:class:`ExactlyOnceSink` for the sink id reads :data:`SINKS_TOPIC` to its end (the last
value of the key wins). If an intent is pending, its publication runs again from the
recorded base sequences, so each staged batch gets the same producer id, epoch and
sequence as before, but first the sink reads every target partition from the log end
offset recorded in the intent and collects the sequences of the batches its producer id
wrote there: those batches are skipped. The others are produced; should the broker still
answer DUPLICATE_SEQUENCE_NUMBER or OUT_OF_ORDER_SEQUENCE_NUMBER (a batch the scan could
not see, e.g. removed by retention since), the batch counts as written, since the replay
goes in sequence order. Idempotent-producer deduplication alone is not enough: a broker
keeps a producer's state only for ``producer.id.expiration.ms`` after the batch's own
timestamp (records with old event times lose it at once, e.g. on a broker restart), and
after a restart it remembers only the producer's last batch. If the pending batch id
equals the batch being committed, completing the intent *is* the commit: the staged ranges
of the new attempt are ignored. The same completion runs when a commit failed half-way
and the same object is asked to commit again.

Result: each committed micro-batch's staged records land once, in staging order, in their
target partitions; the state record tells which batch ids are done.

Limits: one driver per sink id at a time (Spark's checkpoint directory guarantees it for
one query). The staged data must still be retained (7 days) when an intent is completed;
an intent that cannot be completed (staged data gone, target topic deleted) makes every
later commit of the sink fail rather than lose or duplicate data.

Thread-safety: none; each object uses one :class:`~kafkacore.client.Client`.
"""

from __future__ import annotations

import itertools
import json
import struct
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from kafkacore.client._client import Client, KafkaError
from kafkacore.errors import CorruptRecordError
from kafkacore.log.producer_state import increment_sequence
from kafkacore.native import backend
from kafkacore.protocol import ErrorCode
from kafkacore.record import BatchHeader, Record, batch_header, build_batch, iter_batches, records

__all__ = [
    "MAX_BATCH_BYTES",
    "SINKS_TOPIC",
    "STAGING_TOPIC",
    "ExactlyOnceSink",
    "StagedRange",
    "stage",
]

STAGING_TOPIC = "__kafkacore_sink_staging"
SINKS_TOPIC = "__kafkacore_sinks"
STAGING_PARTITIONS = 8
STAGING_CONFIGS = {"cleanup.policy": "delete", "retention.ms": str(7 * 24 * 3600 * 1000)}
SINKS_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(1 << 20)}

MAX_BATCH_BYTES = 900 * 1024
"""Largest staged target batch: with the staging record around it, it still fits a
topic's default ``max.message.bytes`` (1 MiB) both in the staging and the target topic."""

_RECORD_OVERHEAD = 64  # staging record framing beyond key and value, generously
_STATE_VERSION = 1
_ALREADY_WRITTEN = frozenset(
    {ErrorCode.DUPLICATE_SEQUENCE_NUMBER, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER}
)

# RecordBatch v2 header fields rewritten on publication (big-endian, Kafka's offsets).
_BASE_OFFSET = struct.Struct(">q")  # at 0
_PARTITION_LEADER_EPOCH = struct.Struct(">i")  # at 12
_CRC = struct.Struct(">I")  # at 17, CRC-32C of bytes 21..end
_PRODUCER = struct.Struct(">qhi")  # at 43: producer id, producer epoch, base sequence
_LEADER_EPOCH_AT, _CRC_AT, _ATTRIBUTES_AT, _PRODUCER_AT = 12, 17, 21, 43
_TRANSACTIONAL_OR_CONTROL = 0x30


TopicPartition = tuple[str, int]


class StagedRange(NamedTuple):
    """Offsets ``[start, end)`` of :data:`STAGING_TOPIC` partition ``partition``, and the
    target partitions of the batches staged there (empty: not declared, then the sink reads
    the range once more to find them)."""

    partition: int
    start: int
    end: int
    targets: tuple[TopicPartition, ...] = ()


def _ensure_topic(client: Client, name: str, partitions: int, configs: dict[str, str]) -> list[int]:
    try:
        return client.partitions(name)
    except KafkaError as exc:
        if exc.code != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            raise
    client.create_topic(name, partitions, configs=configs, exist_ok=True)
    return client.partitions(name)


def _check_target_batch(topic: str, partition: int, batch: bytes) -> None:
    """ValueError unless ``batch`` is one whole, valid, non-transactional data batch v2."""
    if len(batch) > MAX_BATCH_BYTES:
        raise ValueError(
            f"batch for {topic}-{partition} has {len(batch)} bytes (limit {MAX_BATCH_BYTES})"
        )
    try:
        header = backend.validate_batch(batch, 0)
    except CorruptRecordError as exc:
        raise ValueError(
            f"batch for {topic}-{partition} is not a valid RecordBatch v2: {exc}"
        ) from None
    size, attributes = header[1] + 12, header[5]
    if size != len(batch):
        raise ValueError(f"batch for {topic}-{partition} is not exactly one record batch")
    if attributes & _TRANSACTIONAL_OR_CONTROL:
        raise ValueError(f"batch for {topic}-{partition} is transactional or a control batch")


def stage(
    client: Client,
    sink_id: str,
    batch_id: int,
    task_id: int,
    batches: Iterable[tuple[str, int, bytes]],
) -> list[StagedRange]:
    """Write ``(target topic, target partition, RecordBatch v2)`` items to
    :data:`STAGING_TOPIC` for micro-batch ``batch_id`` of ``sink_id``; the ranges written,
    in order (what the task reports to the driver's :meth:`ExactlyOnceSink.commit`).

    Small target batches share a staging batch; each target batch must be a single data
    batch (not transactional) of at most :data:`MAX_BATCH_BYTES`. Its producer fields are
    ignored (the sink sets its own)."""
    if not sink_id:
        raise ValueError("sink id must not be empty")
    partitions = _ensure_topic(client, STAGING_TOPIC, STAGING_PARTITIONS, STAGING_CONFIGS)
    key = f"{sink_id}/{batch_id}/{task_id}".encode()
    partition = partitions[zlib.crc32(key) % len(partitions)]
    ranges: list[StagedRange] = []
    pending: list[tuple[bytes, list[tuple[str, bytes | None]]]] = []  # (value, headers)
    targets: dict[TopicPartition, None] = {}  # of the pending records, in order
    size = 0

    def flush() -> None:
        now = int(time.time() * 1000)
        batch = build_batch([(i, now, key, v, h) for i, (v, h) in enumerate(pending)])
        base = client.produce(STAGING_TOPIC, partition, batch, acks=-1)
        end = base + len(pending)
        if ranges and ranges[-1].end == base:
            last = ranges[-1]
            merged = tuple(dict.fromkeys(last.targets + tuple(targets)))
            ranges[-1] = last._replace(end=end, targets=merged)
        else:
            ranges.append(StagedRange(partition, base, end, tuple(targets)))
        pending.clear()
        targets.clear()

    for topic, target_partition, batch in batches:
        _check_target_batch(topic, target_partition, batch)
        cost = len(batch) + len(key) + len(topic) + _RECORD_OVERHEAD
        if pending and size + cost > MAX_BATCH_BYTES:
            flush()
            size = 0
        headers: list[tuple[str, bytes | None]] = [
            ("topic", topic.encode()),
            ("partition", str(target_partition).encode()),
        ]
        pending.append((bytes(batch), headers))
        targets[(topic, target_partition)] = None
        size += cost
    if pending:
        flush()
    return ranges


def _distinct_ranges(staged: Iterable[StagedRange]) -> tuple[StagedRange, ...]:
    """``staged`` in order, a range given twice once; ValueError for ranges that overlap."""
    merged: dict[tuple[int, int, int], tuple[TopicPartition, ...]] = {}
    for r in staged:
        key = (int(r[0]), int(r[1]), int(r[2]))
        targets = tuple(r[3]) if len(r) > 3 else ()
        merged[key] = tuple(dict.fromkeys(merged.get(key, ()) + targets))
    by_partition: dict[int, list[tuple[int, int]]] = {}
    for partition, start, end in merged:
        if start < end:
            by_partition.setdefault(partition, []).append((start, end))
    for partition, spans in by_partition.items():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            if start < end:
                raise ValueError(f"staged ranges overlap in {STAGING_TOPIC}-{partition}")
    return tuple(StagedRange(*key, targets) for key, targets in merged.items())


class _Intent(NamedTuple):
    batch_id: int
    staged: tuple[StagedRange, ...]  # without targets (they are in ``targets``)
    targets: dict[TopicPartition, int]  # target partition -> its log end offset before


class _State(NamedTuple):
    producer_id: int = -1
    producer_epoch: int = -1
    committed: int = -1
    sequences: dict[TopicPartition, int] = {}
    pending: _Intent | None = None

    def to_json(self) -> bytes:
        pending = None
        if self.pending is not None:
            pending = {
                "batch_id": self.pending.batch_id,
                "staged": [list(r[:3]) for r in self.pending.staged],
                "targets": _nest(self.pending.targets),
            }
        value = {
            "version": _STATE_VERSION,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "committed": self.committed,
            "sequences": _nest(self.sequences),
            "pending": pending,
        }
        return json.dumps(value, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> _State:
        value: dict[str, Any] = json.loads(data)
        if value.get("version") != _STATE_VERSION:
            raise ValueError(f"unknown sink state version {value.get('version')!r}")
        pending = value["pending"]
        return cls(
            int(value["producer_id"]),
            int(value["producer_epoch"]),
            int(value["committed"]),
            _flat(value["sequences"]),
            None
            if pending is None
            else _Intent(
                int(pending["batch_id"]),
                tuple(StagedRange(int(p), int(s), int(e)) for p, s, e in pending["staged"]),
                _flat(pending["targets"]),
            ),
        )


def _nest(flat: dict[TopicPartition, int]) -> dict[str, dict[str, int]]:
    nested: dict[str, dict[str, int]] = {}
    for (topic, partition), number in sorted(flat.items()):
        nested.setdefault(topic, {})[str(partition)] = number
    return nested


def _flat(nested: dict[str, dict[str, Any]]) -> dict[TopicPartition, int]:
    return {(t, int(p)): int(n) for t, partitions in nested.items() for p, n in partitions.items()}


def _rewrite(batch: bytes, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
    """``batch`` as the sink's producer sends it: base offset 0, no leader epoch, the
    sink's producer id/epoch and ``base_sequence``, CRC-32C recomputed."""
    out = bytearray(batch)
    _BASE_OFFSET.pack_into(out, 0, 0)
    _PARTITION_LEADER_EPOCH.pack_into(out, _LEADER_EPOCH_AT, -1)
    _PRODUCER.pack_into(out, _PRODUCER_AT, producer_id, producer_epoch, base_sequence)
    _CRC.pack_into(out, _CRC_AT, backend.crc32c(bytes(out[_ATTRIBUTES_AT:])))
    return bytes(out)


class ExactlyOnceSink:
    """The driver side of one sink id (see the module docstring). Constructing it loads the
    sink's state and completes a publication left pending by an earlier instance."""

    def __init__(self, client: Client, sink_id: str) -> None:
        if not sink_id:
            raise ValueError("sink id must not be empty")
        self._client = client
        self.sink_id = sink_id
        self._key = sink_id.encode()
        _ensure_topic(client, SINKS_TOPIC, 1, SINKS_CONFIGS)
        self._state = self._load()
        if self._state.pending is not None:
            self._publish(replay=True)

    def last_committed(self) -> int:
        """The last committed batch id, -1 when none."""
        return self._state.committed

    def commit(self, batch_id: int, staged: Sequence[StagedRange]) -> bool:
        """Publish the staged ranges of micro-batch ``batch_id`` exactly once; False (and
        nothing written) when ``batch_id`` is already committed."""
        if self._state.pending is not None:  # a previous commit of this object failed
            completed = self._state.pending.batch_id
            self._publish(replay=True)
            if completed == batch_id:
                return True
        if batch_id <= self._state.committed:
            return False
        ranges = _distinct_ranges(staged)
        targets: dict[TopicPartition, None] = {}
        for r in ranges:
            if r.targets or r.start >= r.end:
                targets.update(dict.fromkeys(r.targets))
            else:  # not declared by the task: look
                for topic, partition, _ in self._staged_batches(batch_id, [r]):
                    targets[(topic, partition)] = None
        state = self._state
        if state.producer_id < 0:
            producer_id, producer_epoch = self._client.init_producer_id()
            state = state._replace(producer_id=producer_id, producer_epoch=producer_epoch)
        ends = self._client.list_offsets(dict.fromkeys(targets, -1)) if targets else {}
        intent = _Intent(batch_id, ranges, {tp: offset for tp, (offset, _) in ends.items()})
        self._save(state._replace(pending=intent))
        self._publish(replay=False)
        return True

    # --- state ----------------------------------------------------------------------------

    def _load(self) -> _State:
        """The last state record of the sink in :data:`SINKS_TOPIC` (read to its end)."""
        state = _State()
        for record in self._read_from(SINKS_TOPIC, 0, None):
            if record.key == self._key:
                state = _State() if record.value is None else _State.from_json(record.value)
        return state

    def _save(self, state: _State) -> None:
        batch = build_batch([(0, int(time.time() * 1000), self._key, state.to_json(), [])])
        self._client.produce(SINKS_TOPIC, 0, batch, acks=-1)
        self._state = state

    def _read_from(self, topic: str, partition: int, start: int | None) -> Iterator[Record]:
        """The records of ``topic``-``partition`` from ``start`` (None: the log start, also
        when ``start`` is below it) to the current log end."""
        earliest, end = (
            self._client.list_offsets({(topic, partition): spec})[(topic, partition)][0]
            for spec in (-2, -1)
        )
        offset = earliest if start is None else max(start, earliest)
        for header, data, position in self._batches(topic, partition, offset, end):
            if not header.is_control:
                yield from (r for r in records(data, position) if r.offset >= offset)

    def _batches(
        self, topic: str, partition: int, offset: int, end: int
    ) -> Iterator[tuple[BatchHeader, bytes, int]]:
        """``(header, data, position)`` of the batches holding offsets ``[offset, end)``."""
        while offset < end:
            data = self._client.fetch(topic, partition, offset).records
            progressed = False
            for position, magic, _ in iter_batches(data):
                if magic != 2:
                    raise KafkaError(
                        ErrorCode.CORRUPT_MESSAGE,
                        f"reading {topic}-{partition} at offset {offset}",
                        f"record batch magic {magic}: kafkacore's sink needs v2",
                    )
                header = batch_header(data, position)
                if header.last_offset < offset:
                    continue
                if header.base_offset >= end:
                    return
                yield header, data, position
                offset = header.last_offset + 1
                progressed = True
            if not progressed:
                raise KafkaError(
                    ErrorCode.OFFSET_OUT_OF_RANGE,
                    f"reading {topic}-{partition} at offset {offset}",
                    f"no complete record batch before offset {end}",
                )

    # --- publication ----------------------------------------------------------------------

    def _staged_batches(
        self, batch_id: int, staged: Iterable[StagedRange]
    ) -> Iterator[tuple[str, int, bytes]]:
        """``(topic, partition, batch)`` of every staged record, in range order."""
        for r in staged:
            for _, data, position in self._batches(STAGING_TOPIC, r.partition, r.start, r.end):
                for record in records(data, position):
                    if r.start <= record.offset < r.end:
                        yield self._target(record, batch_id)

    def _target(self, record: Record, batch_id: int) -> tuple[str, int, bytes]:
        parts = (record.key or b"").decode(errors="replace").rsplit("/", 2)
        fields = dict(record.headers)
        topic, partition = fields.get("topic"), fields.get("partition")
        if (
            len(parts) != 3
            or parts[0] != self.sink_id
            or parts[1] != str(batch_id)
            or topic is None
            or partition is None
            or record.value is None
        ):
            raise ValueError(
                f"staged record {record.key!r} at {STAGING_TOPIC} offset {record.offset} does "
                f"not belong to batch {batch_id} of sink {self.sink_id!r}"
            )
        return topic.decode(), int(partition), record.value

    def _written(self, intent: _Intent) -> dict[TopicPartition, set[int]]:
        """Per target partition, the base sequences of the batches this sink's producer
        wrote there since the intent was recorded."""
        state = self._state
        found: dict[TopicPartition, set[int]] = {}
        for (topic, partition), start in intent.targets.items():
            end = self._client.list_offsets({(topic, partition): -1})[(topic, partition)][0]
            earliest = self._client.list_offsets({(topic, partition): -2})[(topic, partition)][0]
            sequences = found[(topic, partition)] = set()
            for header, _, _ in self._batches(topic, partition, max(start, earliest), end):
                if (header.producer_id, header.producer_epoch) == (
                    state.producer_id,
                    state.producer_epoch,
                ) and header.base_offset >= start:
                    sequences.add(header.base_sequence)
        return found

    def _publish(self, *, replay: bool) -> None:
        """Produce the pending intent's batches, then record the batch as committed."""
        state = self._state
        intent = state.pending
        assert intent is not None
        written = self._written(intent) if replay else {}
        sequences = dict(state.sequences)
        for topic, partition, batch in self._staged_batches(intent.batch_id, intent.staged):
            tp = (topic, partition)
            if tp not in intent.targets:
                raise ValueError(
                    f"staged batch for {topic}-{partition} in batch {intent.batch_id} of sink "
                    f"{self.sink_id!r}: the partition was not declared in the staged ranges"
                )
            sequence = sequences.get(tp, 0)
            if sequence not in written.get(tp, ()):
                request = _rewrite(batch, state.producer_id, state.producer_epoch, sequence)
                try:
                    self._client.produce(topic, partition, request, acks=-1)
                except KafkaError as exc:
                    if not (replay and exc.code in _ALREADY_WRITTEN):
                        raise
            last_offset_delta = batch_header(batch).last_offset_delta
            sequences[tp] = increment_sequence(sequence, last_offset_delta + 1)
        self._save(state._replace(committed=intent.batch_id, sequences=sequences, pending=None))
