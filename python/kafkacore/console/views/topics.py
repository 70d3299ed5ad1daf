"""The Topics view: the topic list (``/topics``: filtered, sorted and paginated on the
server, so 10,000 topics cost one Metadata answer and one page of HTML), the topic detail
(``/topics/{name}``) and the topic actions (create, alter configs, add partitions, delete).

The list comes from one Metadata request (as the logged-in user, so it holds the topics the
user may describe); each user's is kept and served at once, and fetched again in the
background once it is :data:`LIST_TTL_S` old (a page may show a list up to one refresh
old; after a change made in the console the next page waits for a fresh one).

The detail shows each partition's leader, replicas, ISR, log start offset and
high watermark (ListOffsets earliest/latest), its size on disk (DescribeLogDirs v4, every
replica) and the topic's configs with their source (DescribeConfigs). Inside the broker it
also shows, for the partitions whose log is on this broker, the log end offset, the exact
record counts from the batch headers and the bytes on disk by file kind
(:mod:`kafkacore.console.logview`: correct for compacted and transactional topics, where
``high watermark - log start`` overcounts).

Changes are POST forms with the CSRF token; each is refused when the console is read-only,
done with the user's admin client (IncrementalAlterConfigs, CreatePartitions, CreateTopics,
DeleteTopics: the cluster's ACLs apply) and written to the audit topic with its result.

Thread-safety: blocking client calls run on the console's pool; the list cache is only
touched on the event loop.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from kafkacore.console.context import Kept, console_of, kafka_admin

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = [
    "LIST_TTL_S",
    "NAV",
    "TopicRow",
    "exact_partition_stats",
    "page_of",
    "parse_configs",
    "routes",
    "topic_rows",
]

NAV: tuple[str, str] | None = ("Topics", "/topics")

LIST_TTL_S = 3.0
"""How long a user's topic list is reused for paging and filtering."""
PAGE_SIZES = (25, 50, 100, 250)
DEFAULT_PAGE_SIZE = 50
EXACT_STATS_SECONDS = 5.0
"""Time budget of the exact counts of one topic detail page."""

_DONE = {
    "created": "Topic created.",
    "config": "Config changed.",
    "partitions": "Partitions added.",
    "deleted": "Topic deleted.",
}


@dataclass(frozen=True)
class TopicRow:
    name: str
    partitions: int
    replication_factor: int
    under_replicated: int
    offline: int
    internal: bool
    error: str | None = None


def topic_rows(metadata: Any) -> list[TopicRow]:
    """One row per topic of a confluent-kafka ``ClusterMetadata``, sorted by name (one pass
    over each topic's partitions: 10,000 topics are a few hundred milliseconds of Python)."""
    rows = []
    for name, topic in metadata.topics.items():
        rf = urp = offline = 0
        partitions = topic.partitions
        for p in partitions.values():
            replicas = len(p.replicas)
            if replicas > rf:
                rf = replicas
            if len(p.isrs) < replicas:
                urp += 1
            if p.leader < 0:
                offline += 1
        error = None if topic.error is None else str(topic.error)
        internal = name.startswith("__")
        rows.append(TopicRow(name, len(partitions), rf, urp, offline, internal, error))
    rows.sort(key=lambda r: r.name)
    return rows


def page_of(
    rows: list[TopicRow], query: str, internal: bool, page: int, size: int
) -> tuple[list[TopicRow], int, int]:
    """The ``page`` (1-based, clamped) of the rows whose name contains ``query`` (case
    insensitive), internal topics only with ``internal``; with the match count and the
    number of pages."""
    needle = query.strip().lower()
    matching = [
        r for r in rows if (internal or not r.internal) and (not needle or needle in r.name.lower())
    ]
    pages = max(1, math.ceil(len(matching) / size))
    page = min(max(1, page), pages)
    return matching[(page - 1) * size : page * size], len(matching), pages


def parse_configs(text: str) -> dict[str, str]:
    """``key=value`` lines (blank lines and ``#`` comments ignored) as a dict; a line
    without ``=`` raises ValueError."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"not key=value: {line!r}")
        out[key.strip()] = value.strip()
    return out


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default


def _error_text(exc: BaseException) -> str:
    """The Kafka error name and message of a confluent-kafka failure."""
    arg = exc.args[0] if exc.args else None
    if arg is not None and hasattr(arg, "name") and hasattr(arg, "str"):
        return f"{arg.name()}: {arg.str()}"
    return str(exc) or type(exc).__name__


# -- blocking parts (console pool) ------------------------------------------------------


def _client_module() -> Any:
    import importlib

    return importlib.import_module("confluent_kafka")


def _describe(admin: Any, name: str) -> dict[str, Any]:
    ck = kafka_admin()
    metadata = admin.list_topics(topic=name, timeout=10)
    topic = metadata.topics.get(name)
    if topic is None or topic.error is not None:
        reason = topic.error.str() if topic is not None and topic.error is not None else ""
        raise HTTPException(404, f"Topic {name}: {reason or 'not found'}")
    partitions = sorted(topic.partitions.values(), key=lambda p: p.id)
    tps = [_client_module().TopicPartition(name, p.id) for p in partitions]
    offsets: dict[str, dict[int, int | None]] = {}
    for kind, spec in (("start", ck.OffsetSpec.earliest()), ("hw", ck.OffsetSpec.latest())):
        futures = admin.list_offsets({tp: spec for tp in tps}, request_timeout=10)
        found: dict[int, int | None] = {}
        for tp, future in futures.items():
            try:
                found[tp.partition] = future.result().offset
            except Exception:
                found[tp.partition] = None
        offsets[kind] = found
    resource = ck.ConfigResource(ck.ResourceType.TOPIC, name)
    entries = admin.describe_configs([resource], request_timeout=10)[resource].result()
    configs = sorted(
        (
            {
                "name": e.name,
                "value": e.value,
                "source": ck.ConfigSource(e.source).name if e.source is not None else "",
                "default": e.is_default,
                "read_only": e.is_read_only,
                "sensitive": e.is_sensitive,
            }
            for e in entries.values()
        ),
        key=lambda c: c["name"],
    )
    return {"partitions": partitions, "offsets": offsets, "configs": configs}


@dataclass(frozen=True)
class ExactStats:
    """From the broker's own log of one partition (console-data's logview)."""

    log_end_offset: int
    records: int | None
    control_records: int | None
    aborted_records: int | None
    disk_bytes: int | None
    log_bytes: int | None
    error: str | None = None


def exact_partition_stats(
    ctx: ConsoleContext, topic: str, partitions: list[int]
) -> dict[int, ExactStats]:
    """The exact facts of the partitions of ``topic`` that have a log on this broker
    (blocking: runs the header walk of :func:`kafkacore.console.logview.partition_counts`
    under a :data:`EXACT_STATS_SECONDS` budget); empty outside the broker."""
    broker = ctx.broker
    if broker is None:
        return {}
    from kafkacore.console import logview
    from kafkacore.log import TopicPartition

    budget = logview.Budget.of(seconds=EXACT_STATS_SECONDS)
    out: dict[int, ExactStats] = {}
    for p in partitions:
        replica = broker.replica(TopicPartition(topic, p))
        if replica is None:
            continue
        log, hw = replica.log, replica.high_watermark
        usage = logview.partition_disk_usage(log.dir)
        try:
            counts = logview.partition_counts(logview.LogPartition(log, hw), budget)
        except logview.ScanCancelled as exc:
            out[p] = ExactStats(
                log.log_end_offset,
                None,
                None,
                None,
                usage.allocated_bytes,
                usage.log_bytes,
                str(exc),
            )
            continue
        out[p] = ExactStats(
            counts.offsets.log_end_offset,
            counts.records,
            counts.control_records,
            counts.aborted_records,
            usage.allocated_bytes,
            usage.log_bytes,
        )
    return out


async def _replica_sizes(
    ctx: ConsoleContext, request: Request, admin: Any, topic: str, partitions: list[int]
) -> dict[int, dict[int, int]]:
    """``{partition: {broker: bytes}}`` from DescribeLogDirs v4 (only ``topic`` asked)."""
    from kafkacore.console.views.cluster import DESCRIBE_LOG_DIRS_VERSION
    from kafkacore.protocol import APIS_BY_NAME

    cluster = await ctx.run_io(lambda: admin.describe_cluster(request_timeout=10).result())
    cls: Any = APIS_BY_NAME["DescribeLogDirs"].request.cls
    sizes: dict[int, dict[int, int]] = {}

    async def one(node: Any) -> None:
        req = cls(topics=[cls.DescribableLogDirTopic(topic=topic, partitions=partitions)])
        try:
            answer = await ctx.raw_request(
                request, "DESCRIBE_LOG_DIRS", DESCRIBE_LOG_DIRS_VERSION, req,
                node=(node.host, node.port),
            )  # fmt: skip
        except Exception:
            return
        for result in answer.results:
            for t in result.topics:
                if t.name != topic:
                    continue
                for part in t.partitions:
                    if not part.is_future_key:
                        sizes.setdefault(part.partition_index, {})[node.id] = part.partition_size

    await asyncio.gather(*(one(n) for n in cluster.nodes))
    return sizes


# -- routes ------------------------------------------------------------------------------


async def rows_for(request: Request) -> list[TopicRow]:
    """The user's topic list (see :class:`~kafkacore.console.context.Kept`)."""
    ctx = console_of(request)
    admin = ctx.admin(request)

    async def fetch() -> list[TopicRow]:
        metadata = await ctx.run_io(admin.list_topics, timeout=15)
        return await ctx.run_io(topic_rows, metadata)

    rows, _when = await ctx.view_state(_topic_lists).get(ctx.user(request), fetch)
    return rows


def invalidate(request: Request) -> None:
    """After a change: the next list is fetched, not the one kept."""
    ctx = console_of(request)
    ctx.view_state(_topic_lists).invalidate(ctx.user(request))


async def topic_list(request: Request) -> Response:
    ctx = console_of(request)
    params = request.query_params
    query = params.get("q", "")
    internal = params.get("internal") == "1"
    size = _int(params.get("size"), DEFAULT_PAGE_SIZE)
    size = size if size in PAGE_SIZES else DEFAULT_PAGE_SIZE
    rows = await rows_for(request)
    shown, matching, pages = page_of(rows, query, internal, _int(params.get("page"), 1), size)
    page = min(max(1, _int(params.get("page"), 1)), pages)
    base = {"q": query, "size": size} | ({"internal": 1} if internal else {})
    return ctx.render(
        request,
        "topics.html",
        rows=shown,
        total=len(rows),
        matching=matching,
        page=page,
        pages=pages,
        size=size,
        sizes=PAGE_SIZES,
        query=query,
        internal=internal,
        pager_base="/topics?" + urlencode(base) + "&",
        done=_DONE.get(params.get("done", "")),
        error=None,
        form={},
    )


async def topic_create(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    name = form.get("name", "").strip()
    ck = kafka_admin()
    detail: dict[str, Any] = {
        "topic": name,
        "partitions": _int(form.get("partitions"), -1),
        "replication_factor": _int(form.get("replication_factor"), -1),
    }
    try:
        configs = parse_configs(form.get("configs", ""))
        detail["configs"] = configs
        if not name:
            raise ValueError("Give the topic a name.")
        new = ck.NewTopic(
            name, num_partitions=detail["partitions"],
            replication_factor=detail["replication_factor"], config=configs,
        )  # fmt: skip
        admin = ctx.admin(request)
        future = admin.create_topics([new], request_timeout=15)[name]
        await ctx.run_io(future.result, 20)
    except Exception as exc:
        error = _error_text(exc)
        await ctx.audit(request, "topic.create", detail, result=error)
        rows = await rows_for(request)
        shown, matching, pages = page_of(rows, "", False, 1, DEFAULT_PAGE_SIZE)
        return ctx.render(
            request, "topics.html", status_code=400, rows=shown, total=len(rows),
            matching=matching, page=1, pages=pages, size=DEFAULT_PAGE_SIZE,
            sizes=PAGE_SIZES, query="", internal=False, pager_base="/topics?",
            done=None, error=f"Create {name or 'topic'}: {error}", form=form,
        )  # fmt: skip
    audited = await ctx.audit(request, "topic.create", detail)
    invalidate(request)
    flag = "" if audited else "&audit=failed"
    return RedirectResponse(f"/topics/{quote(name)}?done=created{flag}", status_code=303)


async def topic_detail(request: Request, error: str | None = None, status: int = 200) -> Response:
    ctx = console_of(request)
    name = request.path_params["name"]
    admin = ctx.admin(request)
    described = await ctx.run_io(_describe, admin, name)
    numbers = [p.id for p in described["partitions"]]
    sizes, exact = await asyncio.gather(
        _replica_sizes(ctx, request, admin, name, numbers),
        ctx.run_io(exact_partition_stats, ctx, name, numbers),
    )
    partitions = []
    for p in described["partitions"]:
        start = described["offsets"]["start"].get(p.id)
        hw = described["offsets"]["hw"].get(p.id)
        partitions.append(
            {
                "id": p.id,
                "leader": p.leader,
                "replicas": list(p.replicas),
                "isr": list(p.isrs),
                "start": start,
                "hw": hw,
                "span": hw - start if start is not None and hw is not None else None,
                "sizes": sizes.get(p.id, {}),
                "exact": exact.get(p.id),
            }
        )
    configs = described["configs"]
    return ctx.render(
        request,
        "topic_detail.html",
        status_code=status,
        name=name,
        partitions=partitions,
        configs=configs,
        overridden=[c for c in configs if c["source"] == "DYNAMIC_TOPIC_CONFIG"],
        leader_size=sum(pt["sizes"].get(pt["leader"], 0) for pt in partitions),
        all_replicas_size=sum(sum(pt["sizes"].values()) for pt in partitions),
        exact_total=(
            sum(e.records for e in exact.values() if e.records is not None)
            if exact
            and len(exact) == len(partitions)
            and all(e.records is not None for e in exact.values())
            else None
        ),
        done=_DONE.get(request.query_params.get("done", "")),
        error=error,
    )


async def topic_page(request: Request) -> Response:
    return await topic_detail(request)


async def act(
    request: Request, action: str, detail: dict[str, Any], call: Any, done: str
) -> Response:
    """Run the admin future-returning ``call``; audit; redirect or re-render."""
    ctx = console_of(request)
    name = request.path_params["name"]
    try:
        future = call()
        await ctx.run_io(future.result, 20)
    except Exception as exc:
        error = _error_text(exc)
        await ctx.audit(request, action, detail, result=error)
        return await topic_detail(request, error=f"{action}: {error}", status=400)
    audited = await ctx.audit(request, action, detail)
    invalidate(request)
    target = "/topics?done=deleted" if done == "deleted" else f"/topics/{quote(name)}?done={done}"
    return RedirectResponse(target + ("" if audited else "&audit=failed"), status_code=303)


async def topic_config(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    name = request.path_params["name"]
    key = form.get("config", "").strip()
    op = form.get("op", "set")
    value = form.get("value", "")
    ck = kafka_admin()
    kind = ck.AlterConfigOpType.DELETE if op == "delete" else ck.AlterConfigOpType.SET
    entry = ck.ConfigEntry(key, None if op == "delete" else value, incremental_operation=kind)
    resource = ck.ConfigResource(ck.ResourceType.TOPIC, name, incremental_configs=[entry])
    admin = ctx.admin(request)
    detail = {"topic": name, "config": key, "op": op.upper()} | (
        {} if op == "delete" else {"value": value}
    )
    return await act(
        request, "topic.alter_config", detail,
        lambda: admin.incremental_alter_configs([resource], request_timeout=15)[resource],
        "config",
    )  # fmt: skip


async def topic_partitions(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    name = request.path_params["name"]
    count = _int(form.get("count"), -1)
    ck = kafka_admin()
    admin = ctx.admin(request)
    return await act(
        request, "topic.add_partitions", {"topic": name, "total": count},
        lambda: admin.create_partitions(
            [ck.NewPartitions(name, count)], request_timeout=15
        )[name],
        "partitions",
    )  # fmt: skip


async def topic_delete(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    name = request.path_params["name"]
    if form.get("confirm", "") != name:
        return await topic_detail(request, error="Type the topic's name to delete it.", status=400)
    admin = ctx.admin(request)
    return await act(
        request, "topic.delete", {"topic": name},
        lambda: admin.delete_topics([name], request_timeout=15)[name],
        "deleted",
    )  # fmt: skip


def _topic_lists() -> Kept[str | None, list[TopicRow]]:
    """Each user's topic list, served for :data:`LIST_TTL_S` (a view state of the console)."""
    return Kept(LIST_TTL_S)


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/topics", topic_list, methods=["GET"]),
        Route("/topics/create", topic_create, methods=["POST"]),
        Route("/topics/{name}", topic_page, methods=["GET"]),
        Route("/topics/{name}/config", topic_config, methods=["POST"]),
        Route("/topics/{name}/partitions", topic_partitions, methods=["POST"]),
        Route("/topics/{name}/delete", topic_delete, methods=["POST"]),
    ]
