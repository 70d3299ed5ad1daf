"""The Consumer groups view (``/groups``): every group with its state, members and total
lag; a group's page (``/groups/{group}``) with its members (client id, host,
assignment) and per partition the committed offset, high watermark, log end offset and
the lag in records and in time (:mod:`kafkacore.console.grouplag`); resetting offsets
(earliest, latest, a date-time, an offset) and deleting the group, each with a dry run
whose text is ``kafka-consumer-groups``' own.

The lag in time comes from the broker's logs when the console runs inside the broker
(for the partitions it leads), else from one consumer fetching the committed offsets.

Mutations (POST, CSRF-checked, refused when read-only) are audited: ``group.reset``,
``group.delete`` (dry runs change nothing and are not audited).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from kafkacore.console.context import console_of
from kafkacore.console.grouplag import (
    GroupState,
    ResetSpec,
    delete_group,
    describe_group,
    list_groups,
    reset_offsets,
)

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = ["NAV", "age_text", "parse_reset_form", "routes"]

NAV: tuple[str, str] | None = ("Consumer groups", "/groups")

RESET_KINDS = ("to-earliest", "to-latest", "to-datetime", "to-offset")


def age_text(ms: int | None) -> str:
    """A lag in time for people: ``0 s``, ``42 s``, ``3 min 5 s``, ``2 h 10 min``,
    ``3 d 4 h``; ``-`` when unknown."""
    if ms is None:
        return "-"
    s = ms // 1000
    if s < 60:
        return f"{ms / 1000:.1f} s" if ms < 10_000 else f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def parse_reset_form(form: dict[str, str]) -> tuple[list[str] | None, ResetSpec, bool]:
    """``(topics or None for all, spec, execute)`` from the reset form; ``ValueError``
    with a message for the page."""
    kind = form.get("spec", "")
    if kind not in RESET_KINDS:
        raise ValueError(f"Unknown reset specification {kind!r}")
    value = form.get("value", "").strip()
    spec = ResetSpec(kind)
    if kind == "to-offset":
        try:
            spec = ResetSpec(kind, int(value))
        except ValueError:
            raise ValueError(f"Not an offset: {value!r}") from None
    elif kind == "to-datetime":
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"Not a date-time: {value!r} (yyyy-MM-ddTHH:mm:SS[.sss], UTC unless an "
                "offset is given)"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        spec = ResetSpec(kind, int(when.timestamp() * 1000))
    topic = form.get("topic", "").strip()
    topics = None if topic in ("", "*") else [topic]
    return topics, spec, form.get("action") == "execute"


async def group_list(request: Request) -> Response:
    ctx = console_of(request)
    groups = await ctx.run_io(list_groups, ctx.cluster_admin(request))
    return ctx.render(request, "groups.html", groups=groups)


async def load(request: Request, group: str) -> GroupState:
    ctx = console_of(request)
    state = await ctx.run_io(
        describe_group,
        ctx.cluster_admin(request),
        group,
        broker=ctx.broker,
        consumer_config=ctx.client_config(request),
    )
    if not state.exists:
        raise HTTPException(404, f"Consumer group '{group}' does not exist.")
    return state


async def group_detail(
    request: Request, *, result: str = "", error: str = "", status: int = 200
) -> Response:
    ctx = console_of(request)
    group = request.path_params["group"]
    state = await load(request, group)
    topics = sorted({p.topic for p in state.partitions})
    return ctx.render(
        request,
        "group_detail.html",
        status_code=status,
        g=state,
        topics=topics,
        age=age_text,
        now_iso=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
        result=result,
        error=error,
        done=request.query_params.get("done", ""),
        measured_at=time.strftime("%H:%M:%S", time.gmtime()),
    )


async def group_page(request: Request) -> Response:
    return await group_detail(request)


async def group_reset(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    group = request.path_params["group"]
    try:
        topics, spec, execute = parse_reset_form(form)
    except ValueError as exc:
        return await group_detail(request, error=str(exc), status=400)
    detail = {
        "group": group,
        "topics": topics or "all",
        "spec": spec.kind,
        "value": spec.value,
        "execute": execute,
    }
    try:
        text = await ctx.run_io(
            reset_offsets, ctx.cluster_admin(request), group, topics, spec, execute=execute
        )
    except Exception as exc:
        if execute:
            await ctx.audit(request, "group.reset", detail, result=str(exc))
        return await group_detail(request, error=f"Reset failed: {exc}", status=400)
    if execute:
        audited = await ctx.audit(request, "group.reset", detail)
        if not audited:
            text += "\n(the audit record could not be written)"
    return await group_detail(request, result=text)


async def group_delete(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    group = request.path_params["group"]
    execute = form.get("action") == "execute"
    ok, message = await ctx.run_io(delete_group, ctx.cluster_admin(request), group, execute=execute)
    if execute:
        audited = await ctx.audit(
            request, "group.delete", {"group": group}, result="ok" if ok else message
        )
        if ok:
            flag = "" if audited else "&audit=failed"
            return RedirectResponse(f"/groups?deleted={group}{flag}", status_code=303)
    if not ok:
        return await group_detail(request, error=message, status=400)
    return await group_detail(request, result=message)


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/groups", group_list),
        Route("/groups/{group}", group_page),
        Route("/groups/{group}/reset", group_reset, methods=["POST"]),
        Route("/groups/{group}/delete", group_delete, methods=["POST"]),
    ]
