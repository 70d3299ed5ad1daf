"""The Storage view (``/storage``, in the broker only): what is on this broker's disks, per
partition, and why it is still there.

* ``GET /storage`` - every partition this broker holds: its log directory, segments,
  bytes of the ``.log`` files and of every file (:func:`~kafkacore.console.logview.
  partition_disk_usage`), log start offset and log end offset, filtered by topic.
* ``GET /storage/{topic}/{partition}`` - its segments (base and next offset, bytes,
  batches, records, time range, index and ``.txnindex`` entries: :func:`~kafkacore.console.
  logview.segment_infos`), the exact record counts (data records, transaction markers,
  aborted records, against ``high watermark - log start offset``), and why data has not
  been deleted or compacted yet (:func:`~kafkacore.console.logview.retention_report`,
  :func:`~kafkacore.console.logview.compaction_report`, with the cleaner's checkpoint).
* ``GET /storage/{topic}/{partition}/dump?segment=BASE&file=log|index|timeindex|txnindex``
  - ``kafkacore dump-log`` of one file of a segment (Kafka's ``DumpLogSegments`` output;
  ``deep=1`` for the records, ``data=1`` with their keys and values), at most
  ``max_bytes`` of batches.

Separate-process mode (``kafkacore console``) has no files to read: the pages say so.

Thread-safety: handlers run on the event loop; the scans on the console's pool, under a
:class:`~kafkacore.console.logview.Budget` cancelled when the browser goes away.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kafkacore.console import logview
from kafkacore.console.context import console_of
from kafkacore.console.logview import Budget, LogPartition
from kafkacore.console.message_reads import require_topic_access, run_scan
from kafkacore.log.files import (
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
    TopicPartition,
)

if TYPE_CHECKING:
    from kafkacore.console.broker_view import BrokerView
    from kafkacore.console.context import ConsoleContext
    from kafkacore.log import Log, LogManager

__all__ = ["NAV", "PartitionRow", "routes"]

NAV: tuple[str, str] | None = ("Storage", "/storage")

SCAN_SECONDS = 30.0
DUMP_MAX_BYTES = 1 << 20
LIST_MAX = 2000
_SUFFIXES = {
    "log": LOG_FILE_SUFFIX,
    "index": INDEX_FILE_SUFFIX,
    "timeindex": TIME_INDEX_FILE_SUFFIX,
    "txnindex": TXN_INDEX_FILE_SUFFIX,
}


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    log_dir: str
    segments: int
    log_bytes: int
    disk: logview.DiskUsage
    log_start_offset: int
    log_end_offset: int
    high_watermark: int | None


def _broker(ctx: ConsoleContext) -> BrokerView | None:
    return ctx.broker


def _row_of(log: Log, high_watermark: int | None) -> PartitionRow:
    tp = log.topic_partition
    return PartitionRow(
        tp.topic,
        tp.partition,
        os.path.dirname(log.dir),
        log.number_of_segments,
        log.size,
        logview.partition_disk_usage(log.dir),
        log.log_start_offset,
        log.log_end_offset,
        high_watermark,
    )


def _logs(broker: BrokerView) -> LogManager:
    if broker.logs is None:
        raise HTTPException(503, "The broker is still starting.")
    return broker.logs


def _partition_rows(broker: BrokerView, topic_filter: str) -> list[PartitionRow]:
    rows = []
    for log in _logs(broker).all_logs():
        tp = log.topic_partition
        if topic_filter and topic_filter not in tp.topic:
            continue
        replica = broker.replica(tp)
        hw = replica.high_watermark if replica is not None else None
        rows.append(_row_of(log, hw))
    rows.sort(key=lambda r: (r.topic, r.partition))
    return rows


@dataclass(frozen=True)
class PartitionDetail:
    row: PartitionRow
    counts: logview.PartitionCounts | None
    segments: list[logview.SegmentInfo]
    retention: logview.RetentionReport
    compaction: logview.CompactionReport | None
    last_stable_offset: int
    stopped: str | None
    elapsed_ms: float


def _detail(broker: BrokerView, tp: TopicPartition, budget: Budget) -> PartitionDetail:
    began = time.monotonic()
    log = _logs(broker).get_log(tp)
    if log is None:
        raise HTTPException(404, f"This broker has no replica of {tp}.")
    partition = broker.replica(tp)
    hw = partition.high_watermark if partition is not None else None
    lso = partition.last_stable_offset if partition is not None else None
    source = LogPartition(log, hw, lso)
    stopped: str | None = None
    counts: logview.PartitionCounts | None = None
    segments: list[logview.SegmentInfo] = []
    try:
        segments = logview.segment_infos(source, budget)
        counts = logview.partition_counts(source, budget)
    except logview.ScanCancelled as exc:
        stopped = str(exc)
    interval = broker.config.log_retention_check_interval_ms
    retention = logview.retention_report(
        log, high_watermark=hw, retention_check_interval_ms=interval
    )
    compaction = None
    if log.config.compact:
        checkpoint = _logs(broker).read_cleaner_checkpoints().get(tp)
        compaction = logview.compaction_report(
            log,
            checkpoint=checkpoint,
            high_watermark=hw,
            cleaner=broker.cleaner,
        )
    offsets = source.offsets()
    row = _row_of(log, offsets.high_watermark)
    return PartitionDetail(
        row,
        counts,
        segments,
        retention,
        compaction,
        offsets.last_stable_offset,
        stopped,
        (time.monotonic() - began) * 1000,
    )


def _dump(
    broker: BrokerView, tp: TopicPartition, base: int, kind: str, deep: bool, data: bool
) -> tuple[str, str, str]:
    log = _logs(broker).get_log(tp)
    if log is None:
        raise HTTPException(404, f"This broker has no replica of {tp}.")
    if base not in {s.base_offset for s in log.segments}:
        raise HTTPException(404, f"{tp} has no segment at offset {base}.")
    ref = logview.SegmentRef(log.dir, base, None)
    path = ref.path(_SUFFIXES[kind])
    if not os.path.exists(path):
        raise HTTPException(404, f"{os.path.basename(path)} does not exist.")
    out, err = logview.dump_segment(path, deep=deep, print_data=data, max_bytes=DUMP_MAX_BYTES)
    return path, out, err


def _ms_iso(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def broker_or_notice(request: Request) -> BrokerView | Response:
    ctx = console_of(request)
    broker = _broker(ctx)
    if broker is None:
        return ctx.render(request, "storage_disabled.html", status_code=200)
    return broker


async def index(request: Request) -> Response:
    ctx = console_of(request)
    broker = broker_or_notice(request)
    if isinstance(broker, Response):
        return broker
    topic = request.query_params.get("topic", "")
    rows = await ctx.run_io(_partition_rows, broker, topic)
    rows = [r for r in rows if _described(ctx, request, r.topic)]
    return ctx.render(
        request,
        "storage.html",
        rows=rows[:LIST_MAX],
        total=len(rows),
        topic=topic,
        log_bytes=sum(r.log_bytes for r in rows),
        disk_bytes=sum(r.disk.total_bytes for r in rows),
    )


async def detail(request: Request) -> Response:
    ctx = console_of(request)
    broker = broker_or_notice(request)
    if isinstance(broker, Response):
        return broker
    tp = _tp(request)
    require_topic_access(ctx, request, tp.topic, "DESCRIBE")
    budget = Budget.of(seconds=SCAN_SECONDS)
    found = await run_scan(ctx, request, budget, _detail, broker, tp, budget)
    return ctx.render(request, "storage_partition.html", d=found, tp=tp)


async def dump(request: Request) -> Response:
    ctx = console_of(request)
    broker = broker_or_notice(request)
    if isinstance(broker, Response):
        return broker
    tp = _tp(request)
    params = request.query_params
    kind = params.get("file", "log")
    if kind not in _SUFFIXES:
        raise HTTPException(400, f"Unknown file kind: {kind}")
    try:
        base = int(params.get("segment", ""))
    except ValueError:
        raise HTTPException(400, "segment= is a base offset") from None
    deep = bool(params.get("deep"))
    data = bool(params.get("data"))
    require_topic_access(ctx, request, tp.topic, "READ" if deep or data else "DESCRIBE")
    path, out, err = await ctx.run_io(_dump, broker, tp, base, kind, deep, data)
    return ctx.render(
        request,
        "storage_dump.html",
        tp=tp,
        path=path,
        out=out,
        err=err,
        base=base,
        kind=kind,
        deep=deep,
        data=data,
        max_bytes=DUMP_MAX_BYTES,
    )


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    ctx.templates.filters["ms_iso"] = _ms_iso
    return [
        Route("/storage", index),
        Route("/storage/{topic:str}/{partition:int}", detail),
        Route("/storage/{topic:str}/{partition:int}/dump", dump),
    ]


def _described(ctx: ConsoleContext, request: Request, topic: str) -> bool:
    try:
        require_topic_access(ctx, request, topic, "DESCRIBE")
    except HTTPException:
        return False
    return True


def _tp(request: Request) -> TopicPartition:
    params: Any = request.path_params
    return TopicPartition(params["topic"], int(params["partition"]))
