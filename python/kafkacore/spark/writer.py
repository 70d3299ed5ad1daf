"""The writers of the ``kafkacore`` data source (Spark's Kafka sink, ``KafkaWriter``).

Input columns, matched by name as Spark does: ``value`` (string or binary, required),
``key`` (string or binary), ``topic`` (string; the ``topic`` option overrides it),
``partition`` (int) and ``headers`` (``array<struct<key:string,value:binary>>``). A row
without a partition goes where Kafka's Java producer would put it: keyed rows to
``murmur2(key) % partitions`` (:func:`kafkacore.partitioner.partition_for_key`), rows
without a key round-robin from the task's partition number (deterministic, unlike the
producer's sticky choice).

* Batch writes (:class:`KafkaCoreBatchWriter`) produce the record batches straight to the
  partition leaders from the tasks: at-least-once, like Spark's sink (a retried task
  writes its rows again).
* Streaming writes (:class:`KafkaCoreStreamWriter`) are exactly-once
  (:mod:`kafkacore.client.exactly_once`): each task *stages* its batches in kafkacore's
  staging topic and returns the staged ranges; the driver's ``commit(messages, batchId)``
  hands them to the sink, which publishes a micro-batch once per (sink id, batch id) and
  skips a batch id it has already committed (a replay after a restart). Staged data of a
  failed or aborted batch is never published, so ``abort`` has nothing to undo.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from kafkacore.spark.options import WriteOptions

if TYPE_CHECKING:
    import pyarrow as pa

    from kafkacore.client import Client
    from kafkacore.client.exactly_once import ExactlyOnceSink, StagedRange

__all__ = [
    "BatchCommit",
    "KafkaCoreBatchWriter",
    "KafkaCoreStreamWriter",
    "StagedCommit",
    "validate_sink_schema",
]

logger = logging.getLogger("kafkacore.spark")

#: Uncompressed bytes per produced record batch: well under the broker's default
#: ``max.message.bytes`` (1 MiB) even once wrapped in a staging record.
MAX_BATCH_BYTES = 256 << 10
_RECORD_OVERHEAD = 24  # a generous bound of a record's varint framing in RecordBatch v2
_BATCH_ID_PROPERTY = "streaming.sql.batchId"  # set by Spark's MicroBatchExecution

HEADERS_TYPE = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def _column(schema: StructType, name: str) -> StructField | None:
    """The field called ``name``, case-insensitively (Spark's default resolver)."""
    for f in schema.fields:
        if f.name.lower() == name:
            return f
    return None


def _same_headers_type(data_type: DataType) -> bool:
    if not isinstance(data_type, ArrayType) or not isinstance(data_type.elementType, StructType):
        return False
    fields = data_type.elementType.fields
    return (
        len(fields) == 2
        and fields[0].name == "key"
        and isinstance(fields[0].dataType, StringType)
        and fields[1].name == "value"
        and isinstance(fields[1].dataType, BinaryType)
    )


def validate_sink_schema(schema: StructType, options: WriteOptions) -> None:
    """Spark's ``KafkaWriter.validateQuery``, with its messages."""
    topic = _column(schema, "topic")
    if options.topic is None and topic is None:
        raise ValueError(
            "topic option required when no 'topic' attribute is present. Use the topic option "
            "for setting a topic."
        )
    if topic is not None and not isinstance(topic.dataType, StringType):
        raise ValueError(
            f"topic attribute unsupported type {topic.dataType.simpleString()}. topic must be "
            "a string"
        )
    for name in ("key", "value"):
        f = _column(schema, name)
        if f is None:
            if name == "value":
                raise ValueError("Required attribute 'value' not found")
            continue
        if not isinstance(f.dataType, (StringType, BinaryType)):
            raise ValueError(
                f"{name} attribute unsupported type {f.dataType.simpleString()}. {name} must "
                "be a string or binary"
            )
    headers = _column(schema, "headers")
    if headers is not None and not _same_headers_type(headers.dataType):
        raise ValueError(
            f"headers attribute unsupported type {headers.dataType.simpleString()}. headers "
            f"must be a {HEADERS_TYPE.simpleString()}"
        )
    partition = _column(schema, "partition")
    if partition is not None and not isinstance(partition.dataType, IntegerType):
        raise ValueError(
            f"partition attribute unsupported type {partition.dataType.simpleString()}. "
            "partition must be a int"
        )


# -- rows to record batches ---------------------------------------------------------------------


def _as_bytes(value: object) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"expected string or binary, got {type(value).__name__}")


@dataclass
class _Pending:
    records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = field(
        default_factory=list
    )
    size: int = 0


class _Batcher:
    """Turns Arrow batches of sink rows into Kafka record batches per target partition,
    in row order within each partition. Not thread-safe (one per task)."""

    def __init__(self, client: Client, options: WriteOptions, task: int) -> None:
        self._client = client
        self._options = options
        self._task = task
        self._partition_counts: dict[str, int] = {}
        self._round_robin: dict[str, int] = {}
        self._pending: dict[tuple[str, int], _Pending] = {}
        self.rows = 0

    def _partition_count(self, topic: str) -> int:
        count = self._partition_counts.get(topic)
        if count is None:
            from kafkacore.client import KafkaError

            try:
                # As Spark's Kafka sink: a missing topic is created by the broker when
                # its auto.create.topics.enable allows.
                count = len(self._client.partitions(topic, auto_create=True))
            except KafkaError as exc:
                raise ValueError(
                    f"Cannot write to topic {topic!r}: {exc}. Create the topic first "
                    "(the broker does not create topics: auto.create.topics.enable=false)."
                ) from exc
            self._partition_counts[topic] = count
        return count

    def _build(self, pending: _Pending) -> bytes:
        from kafkacore.record import build_batch

        now = int(time.time() * 1000)
        records = [
            (i, now, key, value, headers) for i, (key, value, headers) in enumerate(pending.records)
        ]
        return build_batch(records, compression=self._options.compression)

    def add(self, batch: pa.RecordBatch) -> Iterator[tuple[str, int, bytes]]:
        """Take the rows of ``batch``; yield the record batches that filled up."""
        from kafkacore.partitioner import partition_for_key

        names = {name.lower(): i for i, name in enumerate(batch.schema.names)}
        n = batch.num_rows

        def column(name: str) -> list[Any]:
            index = names.get(name)
            return [None] * n if index is None else batch.column(index).to_pylist()

        values = column("value")
        keys = column("key")
        partitions = column("partition")
        headers = column("headers")
        topics = [self._options.topic] * n if self._options.topic is not None else column("topic")
        for row in range(n):
            topic = topics[row]
            if topic is None:
                raise ValueError(
                    "null topic present in the data. Use the topic option for setting a "
                    "default topic."
                )
            key = _as_bytes(keys[row])
            value = _as_bytes(values[row])
            row_headers = [(str(h["key"]), _as_bytes(h["value"])) for h in (headers[row] or ())]
            partition = partitions[row]
            if partition is None:
                count = self._partition_count(topic)
                if key is not None:
                    partition = partition_for_key(key, count)
                else:
                    turn = self._round_robin.get(topic, self._task)
                    self._round_robin[topic] = turn + 1
                    partition = turn % count
            target = (topic, int(partition))
            pending = self._pending.setdefault(target, _Pending())
            size = (
                _RECORD_OVERHEAD
                + len(key or b"")
                + len(value or b"")
                + sum(len(k) + len(v or b"") + 8 for k, v in row_headers)
            )
            if pending.records and pending.size + size > MAX_BATCH_BYTES:
                yield (*target, self._build(pending))
                pending = self._pending[target] = _Pending()
            pending.records.append((key, value, row_headers))
            pending.size += size
            self.rows += 1

    def flush(self) -> Iterator[tuple[str, int, bytes]]:
        """The record batches of the rows still pending."""
        for target in sorted(self._pending):
            pending = self._pending[target]
            if pending.records:
                yield (*target, self._build(pending))
        self._pending.clear()


def _task_context() -> tuple[int, int]:
    """``(partition id, streaming batch id or -1)`` of the running Spark task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return 0, -1
    batch_id = context.getLocalProperty(_BATCH_ID_PROPERTY)
    return context.partitionId(), int(batch_id) if batch_id else -1


def _open_client(options: WriteOptions) -> Client:
    from kafkacore.client import Client

    return Client(options.bootstrap_servers, client_id="kafkacore-spark-sink")


# -- batch ----------------------------------------------------------------------------------------


@dataclass
class BatchCommit(WriterCommitMessage):
    task: int
    rows: int
    batches: int


class KafkaCoreBatchWriter(DataSourceArrowWriter):
    """``df.write.format("kafkacore")``: each task produces its rows (at-least-once)."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> BatchCommit:
        task, _ = _task_context()
        client = _open_client(self.options)
        produced = 0
        try:
            batcher = _Batcher(client, self.options, task)

            def send(items: Iterable[tuple[str, int, bytes]]) -> None:
                nonlocal produced
                for topic, partition, data in items:
                    client.produce(topic, partition, data, acks=self.options.acks)
                    produced += 1

            for batch in iterator:
                send(batcher.add(batch))
            send(batcher.flush())
            return BatchCommit(task, batcher.rows, produced)
        finally:
            client.close()

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        rows = sum(m.rows for m in messages if isinstance(m, BatchCommit))
        logger.info("kafkacore sink: %d rows written", rows)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # What the successful tasks produced stays (at-least-once, as Spark's Kafka sink).
        logger.warning("kafkacore sink: write aborted; rows already produced remain")


# -- streaming ------------------------------------------------------------------------------------


@dataclass
class StagedCommit(WriterCommitMessage):
    task: int
    rows: int
    ranges: list[StagedRange]


class KafkaCoreStreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("kafkacore")``: exactly-once per (``kafkacore.sinkId``,
    micro-batch id), see the module docstring."""

    def __init__(self, options: WriteOptions) -> None:
        if options.sink_id is None:
            raise ValueError(
                "Option 'kafkacore.sinkId' is required for streaming writes: a stable name for "
                "this sink, the same across restarts of the query and different from every "
                "other query's. kafkacore records the last micro-batch committed under it to "
                "publish each micro-batch exactly once."
            )
        self.options = options
        self._sink: ExactlyOnceSink | None = None
        self._client: Client | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["options"])  # type: ignore[misc]

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedCommit:
        from kafkacore.client.exactly_once import stage

        assert self.options.sink_id is not None
        task, batch_id = _task_context()
        client = _open_client(self.options)
        try:
            batcher = _Batcher(client, self.options, task)

            def batches() -> Iterator[tuple[str, int, bytes]]:
                for batch in iterator:
                    yield from batcher.add(batch)
                yield from batcher.flush()

            ranges = stage(client, self.options.sink_id, batch_id, task, batches())
            return StagedCommit(task, batcher.rows, list(ranges))
        finally:
            client.close()

    def _get_sink(self) -> ExactlyOnceSink:
        if self._sink is None:
            from kafkacore.client.exactly_once import ExactlyOnceSink

            assert self.options.sink_id is not None
            self._client = _open_client(self.options)
            self._sink = ExactlyOnceSink(self._client, self.options.sink_id)
        return self._sink

    def commit(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        staged = sorted((m for m in messages if isinstance(m, StagedCommit)), key=lambda m: m.task)
        ranges = [r for m in staged for r in m.ranges]
        published = self._get_sink().commit(batchId, ranges)
        rows = sum(m.rows for m in staged)
        if published:
            logger.info(
                "kafkacore sink %s: batch %d published (%d rows)",
                self.options.sink_id,
                batchId,
                rows,
            )
        else:
            logger.warning(
                "kafkacore sink %s: batch %d was already committed, skipped (a replay). If "
                "this is a new query with a fresh checkpoint, its batch ids restart at 0: "
                "give it a new kafkacore.sinkId or nothing it writes will be published.",
                self.options.sink_id,
                batchId,
            )

    def abort(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        # Staged records are only published by commit(): nothing to undo.
        logger.warning("kafkacore sink %s: batch %d aborted", self.options.sink_id, batchId)
