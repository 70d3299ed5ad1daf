"""Where the records come from: a broker (``kafka.bootstrap.servers``, through
:class:`kafkacore.client.Client`) or a log directory on disk (``kafkacore.path``, through
:class:`~kafkacore.log.reader.LogDirectory`). Both answer the questions Spark's
``KafkaOffsetReader`` asks on the driver (which partitions, earliest, latest, offset for a
timestamp) and read one offset range into Arrow record batches on an executor.

Under ``kafka.isolation.level=read_committed`` both answer as Kafka's consumer sees the
log: the latest offset is the last stable offset (LSO: below the first record of a
transaction still open), and the records of aborted transactions are left out (the
filter of :class:`kafkacore.log.reader.AbortedFilter`); transaction markers never give rows.

Data loss follows Spark's rules (``KafkaDataConsumer``): a range starting below the log
start offset, or reaching past the end of the log, fails with :class:`DataLossError`
naming the partition and the offsets, unless ``failOnDataLoss`` is false; then the missing
offsets are skipped with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from kafkacore.errors import KafkaCoreError
from kafkacore.log.files import TopicPartition
from kafkacore.log.reader import AbortedFilter, decode_committed
from kafkacore.spark.options import (
    EARLIEST,
    LATEST,
    OffsetLimit,
    ReadOptions,
    Subscription,
    tp_string,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "DataLossError",
    "PartitionAccess",
    "open_access",
    "read_range",
    "report_data_loss",
    "resolve_limit",
    "subscribed_partitions",
]

logger = logging.getLogger("kafkacore.spark")

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
"""Kafka's ``IsolationLevel`` ids, as Fetch and ListOffsets carry them."""

#: Kafka's internal topics and kafkacore's own are never matched by a pattern.
_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_INTERNAL_PREFIX = "__kafkacore_"

INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE = (
    "Some data may have been lost because they are not available in Kafka any more; either the "
    "data was aged out by Kafka or the topic may have been deleted before all the data in the "
    "topic was processed. If you don't want your streaming query to fail on such cases, set "
    'the source option "failOnDataLoss" to "false".'
)
INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE = (
    "There may have been some data loss because some data may have been aged out in Kafka or "
    "the topic may have been deleted before all the data in the topic was processed. If you "
    'want your streaming query to fail on such cases, set the source option "failOnDataLoss" '
    'to "true".'
)
_OFFSET_OUT_OF_RANGE = 1


class DataLossError(KafkaCoreError):
    """Records a query needs are gone (Spark's ``IllegalStateException`` for data loss)."""


def report_data_loss(fail_on_data_loss: bool, message: str) -> None:
    """Raise :class:`DataLossError` or log a warning, with Spark's instructions."""
    if fail_on_data_loss:
        raise DataLossError(f"{message} {INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE}")
    logger.warning("%s %s", message, INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_FALSE)


class PartitionAccess(Protocol):
    """What the source needs from a broker or a log directory."""

    def topics(self) -> dict[str, list[int]]: ...

    def offsets(self, tp: TopicPartition) -> tuple[int, int]:
        """``(log start offset, latest offset)``."""
        ...

    def earliest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]: ...

    def latest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]: ...

    def offset_for_timestamp(self, tp: TopicPartition, timestamp: int) -> int | None: ...

    def read(
        self, tp: TopicPartition, start: int, end: int, include_headers: bool
    ) -> Iterator[tuple[pa.RecordBatch, int]]:
        """``(batch, next offset)`` pairs over ``[start, end)``; may end early."""
        ...

    def close(self) -> None: ...


class BrokerAccess:
    """Metadata, ListOffsets and Fetch through one :class:`~kafkacore.client.Client`;
    ``read_committed``: ListOffsets and Fetch with Kafka's READ_COMMITTED isolation (the
    broker answers the LSO for the latest offset, and sends the aborted transactions
    with the records, which :class:`~kafkacore.log.reader.AbortedFilter` drops)."""

    def __init__(
        self, bootstrap_servers: str, fetch_max_bytes: int, read_committed: bool = False
    ) -> None:
        from kafkacore.client import Client

        self._client = Client(bootstrap_servers, client_id="kafkacore-spark")
        self._fetch_max_bytes = fetch_max_bytes
        self._isolation = READ_COMMITTED if read_committed else READ_UNCOMMITTED

    def close(self) -> None:
        self._client.close()

    def topics(self) -> dict[str, list[int]]:
        return {topic: list(range(count)) for topic, count in self._client.topics().items()}

    def _list(self, tps: Iterable[TopicPartition], spec: int) -> dict[TopicPartition, int]:
        answer = self._client.list_offsets(
            {(tp.topic, tp.partition): spec for tp in tps}, isolation_level=self._isolation
        )
        return {TopicPartition(t, p): offset for (t, p), (offset, _) in answer.items()}

    def earliest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._list(tps, EARLIEST)

    def latest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._list(tps, LATEST)

    def offsets(self, tp: TopicPartition) -> tuple[int, int]:
        return self.earliest([tp])[tp], self.latest([tp])[tp]

    def offset_for_timestamp(self, tp: TopicPartition, timestamp: int) -> int | None:
        offset = self._list([tp], timestamp)[tp]
        return None if offset < 0 else offset

    def read(
        self, tp: TopicPartition, start: int, end: int, include_headers: bool
    ) -> Iterator[tuple[pa.RecordBatch, int]]:
        from kafkacore.arrow import decode
        from kafkacore.client import KafkaError

        offset = start
        max_bytes = self._fetch_max_bytes
        while offset < end:
            try:
                fetched = self._client.fetch(
                    tp.topic,
                    tp.partition,
                    offset,
                    max_bytes=max_bytes,
                    isolation_level=self._isolation,
                )
            except KafkaError as exc:
                if exc.code == _OFFSET_OUT_OF_RANGE:
                    return  # the caller compares with the log's offsets
                raise
            if not fetched.records:
                return
            if self._isolation == READ_COMMITTED:
                records, next_offset = _decode_committed(
                    fetched.records,
                    fetched.aborted_transactions,
                    tp,
                    offset,
                    end,
                    include_headers,
                )
            else:
                records, next_offset = decode(
                    fetched.records, tp.topic, tp.partition, offset, end, include_headers
                )
            if next_offset <= offset:
                if max_bytes >= 1 << 30:
                    return
                max_bytes *= 2  # a first batch larger than max_bytes (older brokers)
                continue
            offset = next_offset
            yield records, offset


def _decode_committed(
    data: bytes,
    aborted: Iterable[tuple[int, int]],
    tp: TopicPartition,
    start: int,
    end: int,
    include_headers: bool,
) -> tuple[pa.RecordBatch, int]:
    """:func:`kafkacore.arrow.decode` of the batches of ``data`` a read_committed consumer
    sees (``aborted``: ``(producer id, first offset)`` of the aborted transactions they
    overlap); the next offset is past the last complete batch of ``data`` (or ``end``),
    whether that batch was kept or not."""
    return decode_committed(data, AbortedFilter(aborted), tp, start, end, include_headers)


class DirectAccess:
    """A log directory read in place (see :mod:`kafkacore.log.reader`); with
    ``read_committed``, up to each partition's last stable offset, without the records of
    aborted transactions (its ``.txnindex`` files)."""

    def __init__(self, path: str, chunk_bytes: int, read_committed: bool = False) -> None:
        from kafkacore.log.reader import LogDirectory

        self._dir = LogDirectory(path)
        self._chunk_bytes = chunk_bytes
        self._read_committed = read_committed

    def close(self) -> None:
        pass

    def topics(self) -> dict[str, list[int]]:
        return self._dir.topics()

    def offsets(self, tp: TopicPartition) -> tuple[int, int]:
        start, end = self._dir.offsets(tp)
        if self._read_committed:
            end = max(start, min(end, self._dir.last_stable_offset(tp)))
        return start, end

    def earliest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.offsets(tp)[0] for tp in tps}

    def latest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.offsets(tp)[1] for tp in tps}

    def offset_for_timestamp(self, tp: TopicPartition, timestamp: int) -> int | None:
        found = self._dir.offset_for_timestamp(tp, timestamp)
        if found is not None and self._read_committed and found >= self.offsets(tp)[1]:
            return None  # Kafka: a hit at or past the LSO is not found under read_committed
        return found

    def read(
        self, tp: TopicPartition, start: int, end: int, include_headers: bool
    ) -> Iterator[tuple[pa.RecordBatch, int]]:
        return self._dir.read(
            tp, start, end, include_headers, self._chunk_bytes, read_committed=self._read_committed
        )


def open_access(options: ReadOptions) -> PartitionAccess:
    if options.log_path:
        return DirectAccess(options.log_path, options.fetch_max_bytes, options.read_committed)
    assert options.bootstrap_servers is not None
    return BrokerAccess(options.bootstrap_servers, options.fetch_max_bytes, options.read_committed)


# -- the driver's questions ----------------------------------------------------------------------


def subscribed_partitions(
    access: PartitionAccess, subscription: Subscription
) -> list[TopicPartition]:
    """The partitions a subscription covers now, sorted. A subscribed topic or an
    assigned partition that does not exist is an error, as in Spark's connector (its
    ``describeTopics`` fails with UnknownTopicOrPartitionException); a pattern matching
    nothing covers nothing."""
    topics = access.topics()
    if subscription.kind == "assign":
        missing = [
            tp for tp in subscription.assigned if tp.partition not in topics.get(tp.topic, [])
        ]
        if missing:
            raise ValueError(
                "assign: topic-partitions "
                + ", ".join(tp_string(tp) for tp in missing)
                + " do not exist"
            )
        return sorted(set(subscription.assigned))
    if subscription.kind == "subscribe":
        absent = sorted({t for t in subscription.topics if t not in topics})
        if absent:
            raise ValueError(
                "subscribe: topic(s) "
                + ", ".join(absent)
                + " do not exist (UNKNOWN_TOPIC_OR_PARTITION: This server does not host "
                "this topic-partition.)"
            )
        chosen = list(subscription.topics)
    else:
        chosen = [
            t
            for t in topics
            if t not in _INTERNAL_TOPICS
            and not t.startswith(_INTERNAL_PREFIX)
            and subscription.matches(t)
        ]
    return sorted(TopicPartition(t, p) for t in set(chosen) for p in topics[t])


def _scala_set(tps: Iterable[tuple[str, int]]) -> str:
    return "Set(" + ", ".join(tp_string(tp) for tp in sorted(tps)) + ")"


def resolve_limit(
    access: PartitionAccess,
    limit: OffsetLimit,
    partitions: list[TopicPartition],
    *,
    option: str,
    is_start: bool,
) -> dict[TopicPartition, int]:
    """Concrete offsets of ``partitions`` for a starting or ending ``limit`` (Spark's
    ``fetchPartitionOffsets``): -2/-1 in offset JSON become the earliest/latest offsets,
    a timestamp the first offset at or after it."""
    if limit.kind == "earliest":
        return access.earliest(partitions)
    if limit.kind == "latest":
        return access.latest(partitions)
    if limit.kind in ("offsets", "timestamps"):
        specified = limit.per_partition
        if set(specified) != set(partitions):
            what = option if limit.kind == "offsets" else f"{option} (by timestamp)"
            raise ValueError(
                f"If {what} contains specific offsets, you must specify all TopicPartitions.\n"
                "Use -1 for latest, -2 for earliest.\n"
                f"Specified: {_scala_set(specified)} Assigned: {_scala_set(partitions)}"
            )
    if limit.kind == "offsets":
        offsets = {TopicPartition(*tp): offset for tp, offset in limit.per_partition.items()}
        earliest = [tp for tp, o in offsets.items() if o == EARLIEST]
        latest = [tp for tp, o in offsets.items() if o == LATEST]
        offsets.update(access.earliest(earliest) if earliest else {})
        offsets.update(access.latest(latest) if latest else {})
        return offsets
    if limit.kind == "timestamp":
        wanted = {tp: limit.timestamp for tp in partitions}
    else:
        wanted = {TopicPartition(*tp): ts for tp, ts in limit.per_partition.items()}
    resolved: dict[TopicPartition, int] = {}
    unmatched: list[TopicPartition] = []
    for tp, timestamp in wanted.items():
        offset = access.offset_for_timestamp(tp, timestamp)
        if offset is not None:
            resolved[tp] = offset
        elif is_start and limit.strategy == "error":
            raise ValueError(
                f"No offset matched from request of topic-partition {tp_string(tp)} and "
                f"timestamp {timestamp}."
            )
        else:
            unmatched.append(tp)  # no record that recent: latest
    if unmatched:
        resolved.update(access.latest(unmatched))
    return resolved


# -- the executor's read -------------------------------------------------------------------------


def read_range(
    access: PartitionAccess,
    tp: TopicPartition,
    start: int,
    until: int,
    *,
    include_headers: bool,
    fail_on_data_loss: bool,
) -> Iterator[pa.RecordBatch]:
    """The records of ``[start, until)`` as Arrow batches, fetched until the next offset
    reaches ``until`` (offsets missing because of compaction or transaction markers are
    not data loss; offsets below the log start or past the log end are)."""
    offset = start
    stalled = 0
    while offset < until:
        log_start, log_end = access.offsets(tp)
        if offset < log_start or offset >= log_end:
            skip_to = log_start if offset < log_start and log_start < until else until
            report_data_loss(
                fail_on_data_loss,
                f"Cannot fetch offset {offset} (TopicPartition: {tp_string(tp)}): the available "
                f"offset range is [{log_start}, {log_end}); records in [{offset}, {skip_to}) "
                "are not available.",
            )
            offset = skip_to
            continue
        before = offset
        for batch, next_offset in access.read(tp, offset, until, include_headers):
            offset = next_offset
            if batch.num_rows:
                yield batch
        if offset == before:
            stalled += 1
            if stalled > 2:
                raise KafkaCoreError(
                    f"Cannot read {tp_string(tp)} at offset {offset}: no record batch there "
                    f"although the log holds offsets up to {log_end}"
                )
        else:
            stalled = 0
