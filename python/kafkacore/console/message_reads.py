"""Where the Messages view's records come from, and the reads every page shares:

* :class:`Source` - one partition's records from the broker's own log (its
  :class:`~kafkacore.console.logview.LogPartition`, exact, complete) when the console runs
  beside the broker that hosts it, else through a consumer (``assign`` + ``seek``, bounded
  by records and time: :data:`CONSUMER_SCAN_RECORDS`, :data:`CONSUMER_SECONDS`);
* :func:`search_key` - every record with a key, across a topic's partitions (the
  :class:`~kafkacore.console.logview.KeyIndex` beside the broker);
* :func:`run_scan` - a read on the console's pool that stops when the browser leaves;
* :func:`require_topic_access` - the cluster's ACLs applied to reads of the files;
* :class:`Row` - a record as a page shows it (:func:`row_of`: rendered and cut on the
  server).

Thread-safety: :class:`Source` and the search block (run them through ``ctx.run_io``);
:func:`run_scan` and :func:`require_topic_access` run on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.exceptions import HTTPException
from starlette.requests import Request

from kafkacore.console import logview
from kafkacore.console.logview import Budget, KeyIndex, LogPartition, RecordFilter, ScanCancelled
from kafkacore.log.files import TopicPartition
from kafkacore.record import Record

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = [
    "CONSUMER_SCAN_RECORDS",
    "CONSUMER_SECONDS",
    "PAGE_MAX",
    "Row",
    "SearchOutcome",
    "Source",
    "ck_tp",
    "require_topic_access",
    "row_of",
    "run_scan",
    "search_key",
]

PAGE_MAX = 1000
CONSUMER_SCAN_RECORDS = 100_000
"""Separate-process mode: how many records a filter or key search reads at most."""


CONSUMER_SECONDS = 10.0


RENDER_LIMIT = 4096


_T = TypeVar("_T")


@dataclass(frozen=True)
class Row:
    """One record as the page shows it."""

    partition: int
    offset: int
    timestamp: int
    time: str
    key: str
    key_mode: str
    value: str
    value_mode: str
    headers: list[tuple[str, str]]
    key_size: int
    value_size: int

    def as_json(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "offset": self.offset,
            "timestamp": self.timestamp,
            "key": self.key,
            "value": self.value,
            "headers": dict(self.headers),
            "key_encoding": self.key_mode,
            "value_encoding": self.value_mode,
        }


def _iso(ms: int) -> str:
    if ms < 0:
        return ""
    stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def row_of(partition: int, r: Record, decode: logview.DecodeMode) -> Row:
    key, key_mode = logview.render_bytes(r.key, decode, RENDER_LIMIT)
    value, value_mode = logview.render_bytes(r.value, decode, RENDER_LIMIT)
    headers = [(k, logview.render_bytes(v, "auto", 256)[0]) for k, v in r.headers]
    return Row(
        partition,
        r.offset,
        r.timestamp,
        _iso(r.timestamp),
        key,
        key_mode,
        value,
        value_mode,
        headers,
        -1 if r.key is None else len(r.key),
        -1 if r.value is None else len(r.value),
    )


class Source:
    """One partition's records, from the broker's log or through a consumer."""

    def __init__(self, ctx: ConsoleContext, request: Request, tp: TopicPartition) -> None:
        self.ctx = ctx
        self.tp = tp
        self.log_source = _log_source(ctx, tp)
        self.client_config = ctx.client_config(request) if self.log_source is None else {}
        self.watermarks: tuple[int, int] | None = None

    @property
    def exact(self) -> bool:
        """Reads the log itself (complete searches) rather than through a consumer."""
        return self.log_source is not None

    def offsets(self) -> tuple[int, int]:
        """``(log start offset, high watermark)``."""
        if self.log_source is not None:
            o = self.log_source.offsets()
            return o.log_start_offset, o.high_watermark
        if self.watermarks is not None:  # the page's read just asked for them
            return self.watermarks
        with _consumer(self.client_config) as consumer:
            low, high = consumer.get_watermark_offsets(ck_tp(self.tp), timeout=CONSUMER_SECONDS)
            return int(low), int(high)

    def read(
        self,
        mode: str,
        *,
        offset: int,
        timestamp: int | None,
        count: int,
        record_filter: RecordFilter | None,
        budget: Budget,
    ) -> tuple[list[Record], int, bool, str | None]:
        """``(records, next offset, complete, note)`` of a page."""
        if self.log_source is not None:
            src = self.log_source
            if mode == "newest" and record_filter is None:
                result = logview.newest_records(src, count, budget)
            elif mode == "newest":  # filtered: the last matches of the whole log
                result = logview.read_records(
                    src,
                    src.offsets().log_start_offset,
                    max_records=1 << 30,
                    record_filter=record_filter,
                    budget=budget,
                )
                result = dataclasses.replace(result, records=result.records[-count:])
            else:
                start = offset
                if mode == "timestamp" and timestamp is not None:
                    found = logview.offset_for_timestamp(src, timestamp)
                    start = found if found is not None else src.offsets().high_watermark
                result = logview.read_records(
                    src, start, max_records=count, record_filter=record_filter, budget=budget
                )
            return result.records, result.next_offset, result.complete, result.stopped
        watermarks: list[int] = []
        page = _consumer_read(
            self.client_config,
            self.tp,
            mode,
            offset,
            timestamp,
            count,
            record_filter,
            budget,
            watermarks,
        )
        self.watermarks = (watermarks[0], watermarks[1])
        return page


def _log_source(ctx: ConsoleContext, tp: TopicPartition) -> LogPartition | None:
    """The broker's own log of ``tp`` with its high watermark, if this broker has it."""
    partition = ctx.broker.replica(tp) if ctx.broker is not None else None
    if partition is None:
        return None
    return LogPartition(
        partition.log,
        lambda: partition.high_watermark,
        lambda: partition.last_stable_offset,
    )


def ck_tp(tp: TopicPartition, offset: int | None = None) -> Any:
    from confluent_kafka import TopicPartition as CkTopicPartition

    if offset is None:
        return CkTopicPartition(tp.topic, tp.partition)
    return CkTopicPartition(tp.topic, tp.partition, offset)


@contextlib.contextmanager
def _consumer(config: dict[str, str]) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **config,
            "group.id": f"__kafkacore_console-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": "false",
            "enable.partition.eof": "true",
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": "100",
        }
    )
    try:
        yield consumer
    finally:
        consumer.close()


def _consumer_read(
    config: dict[str, str],
    tp: TopicPartition,
    mode: str,
    offset: int,
    timestamp: int | None,
    count: int,
    record_filter: RecordFilter | None,
    budget: Budget,
    watermarks: list[int] | None = None,
) -> tuple[list[Record], int, bool, str | None]:
    """A page through a consumer: ``assign`` at the start offset, ``consume`` until the
    page is full, the end of the partition, or the budget (records, time). The
    partition's ``(low, high)`` watermarks are appended to ``watermarks``."""
    with _consumer(config) as consumer:
        low, high = consumer.get_watermark_offsets(ck_tp(tp), timeout=CONSUMER_SECONDS)
        if watermarks is not None:
            watermarks += [int(low), int(high)]
        if mode == "timestamp" and timestamp is not None:
            found = consumer.offsets_for_times([ck_tp(tp, timestamp)], timeout=CONSUMER_SECONDS)
            start = found[0].offset if found and found[0].offset >= 0 else high
        elif mode == "newest" and record_filter is None:
            start = max(low, high - count)
        elif mode == "newest":
            start = low
        else:
            start = max(low, offset)
        if start >= high:
            return [], start, True, None
        consumer.assign([ck_tp(tp, start)])
        found_records: list[Record] = []
        scanned = 0
        next_offset = start
        note: str | None = None
        limit = count if mode != "newest" or record_filter is None else 1 << 30
        while next_offset < high and len(found_records) < limit:
            if scanned >= CONSUMER_SCAN_RECORDS:
                note = f"stopped after reading {scanned} records (the consumer's budget)"
                break
            try:
                budget.spend()
            except ScanCancelled as exc:
                note = str(exc)
                break
            messages = consumer.consume(500, timeout=0.5)
            for m in messages:
                if m.error() is not None:
                    if m.error().code() == -191:  # _PARTITION_EOF
                        next_offset = high
                    continue
                scanned += 1
                next_offset = m.offset() + 1
                ts = m.timestamp()[1]
                r = Record(m.offset(), ts, m.key(), m.value(), list(m.headers() or []))
                if record_filter is None or record_filter.matches(r):
                    found_records.append(r)
                    if len(found_records) >= limit:
                        break
        if mode == "newest":
            found_records = found_records[-count:]
        return found_records, next_offset, next_offset >= high and note is None, note


async def run_scan(
    ctx: ConsoleContext,
    request: Request,
    budget: Budget,
    fn: Callable[..., _T],
    *args: Any,
) -> _T:
    """``fn(*args)`` on the console's pool; the browser going away cancels ``budget``."""

    async def watch() -> None:
        while not budget.cancel.is_set():
            if await request.is_disconnected():
                budget.cancel.set()
                return
            await asyncio.sleep(0.25)

    watcher = asyncio.create_task(watch())
    try:
        return await ctx.run_io(fn, *args)
    finally:
        watcher.cancel()


def require_topic_access(
    ctx: ConsoleContext, request: Request, topic: str, operation: str = "READ"
) -> None:
    """In the broker with a login, the files are read directly, so the cluster's ACLs
    are applied here: the logged-in user needs ``operation`` (READ to see records,
    DESCRIBE for the Storage facts) on ``topic`` from the broker's authorizer (403
    otherwise). Outside the broker the cluster checks every request itself; without a
    login or an authorizer there is nothing to check."""
    broker = ctx.broker
    if broker is None or ctx.login is None:
        return
    authorizer = broker.authorizer
    if authorizer is None:
        return
    from kafkacore.security.acl import AclOperation, AuthorizationResult, ResourceType

    user = ctx.user(request)
    host = request.client.host if request.client is not None else "*"
    decision = authorizer.authorize(
        f"User:{user}", host, AclOperation[operation], ResourceType.TOPIC, topic
    )
    if decision is not AuthorizationResult.ALLOWED:
        raise HTTPException(
            403, f"User {user} is not authorized to {operation} topic {topic} (the cluster's ACLs)."
        )


@dataclass
class SearchOutcome:
    rows: list[Row]
    total: int
    complete: bool
    indexed_bytes: int
    total_bytes: int
    elapsed_ms: float
    note: str | None


def search_key(
    ctx: ConsoleContext,
    config: dict[str, str],
    topic: str,
    partitions: list[int],
    key: bytes,
    decode: logview.DecodeMode,
    budget: Budget,
) -> SearchOutcome:
    began = time.monotonic()
    rows: list[Row] = []
    total = indexed = size = 0
    complete = True
    notes: list[str] = []
    for p in partitions:
        tp = TopicPartition(topic, p)
        src = _log_source(ctx, tp)
        if src is not None:
            result = KeyIndex.of(src).search(src, key, limit=PAGE_MAX, budget=budget)
            rows += [row_of(p, r, decode) for r in result.records]
            total += result.total
            indexed += result.indexed_bytes
            size += result.total_bytes
            complete = complete and result.complete
            if result.stopped:
                notes.append(f"partition {p}: {result.stopped}")
            continue
        records, _next, done, note = _consumer_read(
            config,
            tp,
            "offset",
            0,
            None,
            PAGE_MAX,
            RecordFilter(key=key.decode(errors="replace"), key_mode="equals"),
            budget,
        )
        rows += [row_of(p, r, decode) for r in records]
        total += len(records)
        complete = False
        notes.append(
            f"partition {p}: read through a consumer, "
            + ("to its end" if done else (note or "not to its end"))
            + " - a search outside the broker is not complete"
        )
    rows.sort(key=lambda r: (r.timestamp, r.partition, r.offset))
    return SearchOutcome(
        rows,
        total,
        complete,
        indexed,
        size,
        (time.monotonic() - began) * 1000,
        "; ".join(notes) or None,
    )
