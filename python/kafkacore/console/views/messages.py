"""The Messages view (``/messages``): browse a partition's records, search them, watch
new ones arrive, produce one, export a page.

* ``GET /messages`` - the topics; ``GET /messages/{topic}`` - a page of one partition's
  records: the newest N (default), from an offset, or from a timestamp (the first record
  at or after it), with filters on key, value and headers (contains / equals) and the
  keys and values rendered as JSON, text or hex (cut on the server past a few KiB, so a
  large record never reaches the browser whole). ``?format=json`` / ``?format=csv``: the
  same page as a download.
* ``?search=KEY`` - every record with that key, in every partition of the topic. In the
  broker this is complete: :class:`~kafkacore.console.logview.KeyIndex` reads each
  segment once (off the event loop, bounded, cancelled when the browser goes away, in the
  scan worker process) and then answers from its per-segment hash arrays; the page says
  how much was indexed when a budget cut it short, and asking again resumes.
* ``GET /messages/{topic}/tail?partition=P&after=O`` - Server-Sent Events
  (``text/event-stream``): one ``record`` event per new record below the high watermark
  (its table row), checked every 200 ms; the stream ends when the client goes away.
* ``POST /messages/{topic}/produce`` - one record (partition, key, value, headers as
  ``name=value`` lines) through a confluent-kafka ``Producer`` as the logged-in user;
  checked by :meth:`~kafkacore.console.context.ConsoleContext.require_write` and the CSRF
  token, written to the audit topic.

In the broker, reads go through the partition's own :class:`~kafkacore.log.Log` (the
offset and time indexes) up to its high watermark. In ``kafkacore console`` (no broker)
they go through a consumer (``assign`` + ``seek``, bounded by records and time); there,
key search and filters scan a bounded number of records and the page says the answer may
be incomplete.

Thread-safety: handlers run on the event loop; every read runs on the console's pool
(``ctx.run_io``), every scan under a :class:`~kafkacore.console.logview.Budget`.
"""

from __future__ import annotations

import asyncio
import csv
import datetime
import functools
import io
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from kafkacore.console import logview
from kafkacore.console.context import console_of
from kafkacore.console.logview import (
    Budget,
    RecordFilter,
)
from kafkacore.console.message_reads import (
    CONSUMER_SECONDS,
    PAGE_MAX,
    Row,
    SearchOutcome,
    Source,
    ck_tp,
    require_topic_access,
    row_of,
    run_scan,
    search_key,
)
from kafkacore.log.files import TopicPartition
from kafkacore.record import Record

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = ["NAV", "routes"]

NAV: tuple[str, str] | None = ("Messages", "/messages")

PAGE_DEFAULT = 50
TAIL_INTERVAL_S = 0.2
SEARCH_SECONDS = 60.0


def _topic_partitions(ctx: ConsoleContext, request: Request, topic: str) -> list[int]:
    metadata = ctx.admin(request).list_topics(topic=topic, timeout=CONSUMER_SECONDS)
    found = metadata.topics.get(topic)
    if found is None or found.error is not None:
        raise HTTPException(404, f"Topic {topic} does not exist.")
    return sorted(found.partitions)


def _topics(ctx: ConsoleContext, request: Request) -> list[tuple[str, int]]:
    metadata = ctx.admin(request).list_topics(timeout=CONSUMER_SECONDS)
    return sorted((name, len(t.partitions)) for name, t in metadata.topics.items())


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        raise HTTPException(400, f"Not a number: {value}") from None


def _timestamp(value: str | None) -> int | None:
    """Milliseconds, or an ISO 8601 date-time (UTC unless it says otherwise)."""
    if not value:
        return None
    if value.lstrip("-").isdigit():
        return int(value)
    try:
        stamp = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise HTTPException(400, f"Not a timestamp: {value}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return int(stamp.timestamp() * 1000)


def _filter(params: Any) -> RecordFilter | None:
    mode = cast(Any, "equals" if params.get("exact") else "contains")
    f = RecordFilter(
        key=params.get("key") or None,
        key_mode=mode,
        value=params.get("value") or None,
        value_mode=mode,
        header_key=params.get("header_key") or None,
        header_value=params.get("header_value") or None,
        header_mode=mode,
    )
    return f if f.active else None


def _decode_mode(params: Any) -> logview.DecodeMode:
    mode = params.get("decode") or "auto"
    if mode not in ("auto", "json", "text", "hex"):
        raise HTTPException(400, f"Unknown decoding: {mode}")
    return cast(logview.DecodeMode, mode)


# -- routes ---------------------------------------------------------------------------------


async def index(request: Request) -> Response:
    ctx = console_of(request)
    topics = await ctx.run_io(_topics, ctx, request)
    return ctx.render(request, "messages_topics.html", topics=topics)


async def browse(request: Request) -> Response:
    ctx = console_of(request)
    topic = request.path_params["topic"]
    params = request.query_params
    require_topic_access(ctx, request, topic)
    partitions = await ctx.run_io(_topic_partitions, ctx, request, topic)
    partition = _int(params.get("partition"), partitions[0])
    if partition not in partitions:
        raise HTTPException(404, f"Topic {topic} has no partition {partition}.")
    decode = _decode_mode(params)
    record_filter = _filter(params)
    count = min(max(_int(params.get("count"), PAGE_DEFAULT), 1), PAGE_MAX)
    mode = params.get("mode") or "newest"
    if mode not in ("newest", "offset", "timestamp"):
        raise HTTPException(400, f"Unknown mode: {mode}")
    tp = TopicPartition(topic, partition)
    source = await ctx.run_io(Source, ctx, request, tp)
    search = params.get("search")
    outcome: SearchOutcome | None = None
    next_offset = 0
    complete = True
    note: str | None = None
    budget = Budget.of(seconds=SEARCH_SECONDS if search else CONSUMER_SECONDS * 3)
    if search is not None and search != "":
        outcome = await run_scan(
            ctx,
            request,
            budget,
            search_key,
            ctx,
            ctx.client_config(request),  # partitions this broker lacks: a consumer
            topic,
            partitions,
            search.encode(),
            decode,
            budget,
        )
        rows = outcome.rows
    else:
        records, next_offset, complete, note = await run_scan(
            ctx,
            request,
            budget,
            functools.partial(
                source.read,
                mode,
                offset=_int(params.get("offset"), 0),
                timestamp=_timestamp(params.get("timestamp")),
                count=count,
                record_filter=record_filter,
                budget=budget,
            ),
        )
        rows = [row_of(partition, r, decode) for r in records]
    low, high = await ctx.run_io(source.offsets)
    fmt = params.get("format")
    if fmt == "json":
        body = json.dumps([r.as_json() for r in rows], indent=1, ensure_ascii=False)
        return Response(
            body,
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="{topic}-{partition}.json"'},
        )
    if fmt == "csv":
        return Response(
            _csv(rows),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{topic}-{partition}.csv"'},
        )
    if fmt not in (None, "", "html"):
        raise HTTPException(400, f"Unknown format: {fmt}")
    return ctx.render(
        request,
        "messages.html",
        topic=topic,
        partitions=partitions,
        partition=partition,
        rows=rows,
        mode=mode,
        params=params,
        count=count,
        decode=decode,
        exact=source.exact,
        log_start=low,
        high_watermark=high,
        next_offset=next_offset,
        complete=complete,
        note=note,
        search=search,
        outcome=outcome,
        filtered=record_filter is not None,
        export_query=_export_query(params),
        tail_after=high,
    )


async def tail(request: Request) -> Response:
    ctx = console_of(request)
    topic = request.path_params["topic"]
    params = request.query_params
    partition = _int(params.get("partition"), 0)
    decode = _decode_mode(params)
    after = _int(params.get("after"), -1)
    require_topic_access(ctx, request, topic)
    tp = TopicPartition(topic, partition)
    source = await ctx.run_io(Source, ctx, request, tp)
    return StreamingResponse(
        _tail_events(ctx, request, source, partition, after, decode),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def produce(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    topic = request.path_params["topic"]
    partition = _int(form.get("partition"), -1)
    key = form.get("key") or None
    value = form.get("value", "")
    headers = _parse_headers(form.get("headers", ""))
    config = ctx.client_config(request)
    detail = {
        "topic": topic,
        "partition": partition,
        "key": key,
        "value_bytes": len(value.encode()),
        "headers": [h[0] for h in headers],
    }
    try:
        where = await ctx.run_io(_produce, config, topic, partition, key, value, headers)
    except Exception as exc:
        await ctx.audit(request, "produce", detail, result=f"error: {exc}")
        raise HTTPException(400, f"Produce failed: {exc}") from exc
    detail.update(partition=where[0], offset=where[1])
    await ctx.audit(request, "produce", detail)
    return RedirectResponse(
        f"/messages/{topic}?partition={where[0]}&mode=newest&produced={where[1]}",
        status_code=303,
    )


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/messages", index),
        Route("/messages/{topic:str}", browse),
        Route("/messages/{topic:str}/tail", tail),
        Route("/messages/{topic:str}/produce", produce, methods=["POST"]),
    ]


def _export_query(params: Any) -> str:
    from urllib.parse import urlencode

    return urlencode([(k, v) for k, v in params.multi_items() if k != "format"])


def _csv(rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["partition", "offset", "timestamp", "key", "value", "headers"])
    for r in rows:
        writer.writerow(
            [r.partition, r.offset, r.timestamp, r.key, r.value, json.dumps(dict(r.headers))]
        )
    return out.getvalue()


def _parse_headers(text: str) -> list[tuple[str, str | bytes | None]]:
    found: list[tuple[str, str | bytes | None]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise HTTPException(400, f"A header is name=value, one per line: {line!r}")
        found.append((name.strip(), value.encode()))
    return found


def _produce(
    config: dict[str, str],
    topic: str,
    partition: int,
    key: str | None,
    value: str,
    headers: list[tuple[str, str | bytes | None]],
) -> tuple[int, int]:
    """Produce one record and wait for its acknowledgement: ``(partition, offset)``."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer({**config, "acks": "all", "linger.ms": "0"})
    delivered: list[Any] = []

    def on_delivery(err: Any, msg: Any) -> None:
        delivered.append(err if err is not None else msg)

    extra: dict[str, Any] = {"partition": partition} if partition >= 0 else {}
    producer.produce(
        topic,
        value=value.encode(),
        key=key.encode() if key is not None else None,
        headers=headers or None,
        on_delivery=on_delivery,
        **extra,
    )
    remaining = producer.flush(CONSUMER_SECONDS)
    if remaining or not delivered:
        raise KafkaException("the record was not acknowledged in time")
    result = delivered[0]
    if not hasattr(result, "offset"):
        raise KafkaException(result)
    return int(result.partition()), int(result.offset())


async def _tail_events(
    ctx: ConsoleContext,
    request: Request,
    source: Source,
    partition: int,
    after: int,
    decode: logview.DecodeMode,
) -> AsyncIterator[str]:
    """SSE: ``record`` events (a table row each) for the records from ``after`` (default:
    the high watermark when the stream opened), then every new one, until the client
    leaves. A comment every 15 s keeps proxies from closing an idle stream."""
    template = ctx.templates.get_template("messages_row.html")
    if after < 0:
        after = (await ctx.run_io(source.offsets))[1]
    yield f"event: ready\ndata: {after}\n\n"
    next_offset = after
    last_beat = time.monotonic()
    consumer = None
    try:
        if not source.exact:
            consumer = await ctx.run_io(_tail_consumer, source, next_offset)
        while not await request.is_disconnected():
            budget = Budget.of(seconds=5)
            if consumer is not None:
                records = await ctx.run_io(_poll_consumer, consumer)
            else:
                records, next_offset, _done, _note = await ctx.run_io(
                    source.read,
                    "offset",
                    offset=next_offset,
                    timestamp=None,
                    count=PAGE_MAX,
                    record_filter=None,
                    budget=budget,
                )
            for r in records:
                html = template.render(row=row_of(partition, r, decode), fresh=True)
                data = "".join(f"data: {line}\n" for line in html.splitlines() or [""])
                yield f"event: record\nid: {r.offset}\n{data}\n"
                next_offset = max(next_offset, r.offset + 1)
            if time.monotonic() - last_beat > 15:
                last_beat = time.monotonic()
                yield ": keep-alive\n\n"
            if not records:
                await asyncio.sleep(TAIL_INTERVAL_S)
    finally:
        if consumer is not None:
            await ctx.run_io(consumer.close)


def _tail_consumer(source: Source, start: int) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **source.client_config,
            "group.id": f"__kafkacore_console-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": "false",
        }
    )
    consumer.assign([ck_tp(source.tp, start)])
    return consumer


def _poll_consumer(consumer: Any) -> list[Record]:
    found = []
    for m in consumer.consume(500, timeout=TAIL_INTERVAL_S):
        if m.error() is None:
            found.append(
                Record(m.offset(), m.timestamp()[1], m.key(), m.value(), list(m.headers() or []))
            )
    return found
