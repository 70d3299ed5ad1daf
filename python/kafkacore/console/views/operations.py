"""The Operations view (``/operations``): partition reassignment (a plan over chosen
brokers or a broker's decommission plan, executed with a replication throttle, its
progress per replica refreshed every 2 s while partitions move, cancel, clear the
throttles), and preferred
leader election now or at a given time (:mod:`kafkacore.console.operations_plan`).

Every change (POST, CSRF-checked, refused when read-only) is audited:
``reassign.execute``, ``reassign.cancel``, ``reassign.clear-throttles``,
``election.preferred``, ``election.schedule``, ``election.cancel``.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kafkacore.admin import TP, Admin, cluster
from kafkacore.admin.reassign import (
    format_reassignment_json,
    generate_assignment,
    list_reassignments,
    parse_reassignment_json,
)
from kafkacore.console import operations_plan as ops
from kafkacore.console.context import console_of
from kafkacore.console.views.cluster import describe_log_dirs

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = ["NAV", "routes"]

NAV: tuple[str, str] | None = ("Operations", "/operations")


def _cluster(admin: Admin) -> tuple[list[Any], list[str]]:
    brokers = sorted(cluster.nodes(admin), key=lambda n: n.id)
    topics = sorted(t for t in cluster.metadata(admin).topics if not t.startswith("__"))
    return brokers, topics


def _parse_plan(text: str) -> dict[TP, list[int]]:
    try:
        return dict(parse_reassignment_json(text))
    except Exception as exc:
        raise ValueError(f"Not a reassignment JSON: {exc}") from None


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


async def progress_rows(request: Request) -> list[ops.ReplicaProgress]:
    ctx = console_of(request)
    admin = ctx.cluster_admin(request)
    ongoing = await ctx.run_io(list_reassignments, admin)
    if not ongoing:
        return []
    nodes, _ = await ctx.run_io(_cluster, admin)
    log_dirs = await describe_log_dirs(ctx, request, nodes)
    return await ctx.run_io(ops.progress, admin, log_dirs, ctx.broker)


async def page(
    request: Request,
    *,
    plan: str = "",
    current: str = "",
    result: str = "",
    error: str = "",
    status: int = 200,
    chosen: list[int] | None = None,
) -> Response:
    ctx = console_of(request)
    admin = ctx.cluster_admin(request)
    # a broker down or a controller moving must not take the page (and its forms) away
    nodes: list[Any] = []
    topics: list[str] = []
    rows: list[ops.ReplicaProgress] = []
    try:
        nodes, topics = await ctx.run_io(_cluster, admin)
        rows = await progress_rows(request)
    except Exception as exc:
        unavailable = f"The cluster's state could not be read: {exc}"
        error = f"{error}\n{unavailable}" if error else unavailable
    return ctx.render(
        request,
        "operations.html",
        status_code=status,
        nodes=nodes,
        topics=topics,
        rows=rows,
        plan=plan,
        current=current,
        result=result,
        error=error,
        chosen=chosen if chosen is not None else [n.id for n in nodes],
        elections=ctx.view_state(ops.ElectionScheduler).list(),
        utc=_utc,
        now_iso=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
    )


async def operations(request: Request) -> Response:
    return await page(request)


async def progress(request: Request) -> Response:
    ctx = console_of(request)
    rows = await progress_rows(request)
    # 286: htmx swaps the answer and stops polling (nothing moves any more)
    return ctx.render(
        request, "operations_progress.html", status_code=200 if rows else 286, rows=rows
    )


async def plan(request: Request) -> Response:
    ctx = console_of(request)
    form = await ctx.form(request)
    multi = await request.form()
    topics = [str(t) for t in multi.getlist("topic")]
    brokers = [int(str(b)) for b in multi.getlist("broker")]
    if not topics or not brokers:
        return await page(request, error="Choose topics and brokers.", status=400)
    try:
        current, proposed = await ctx.run_io(
            generate_assignment,
            ctx.cluster_admin(request),
            topics,
            brokers,
            form.get("rack_aware") == "1",
        )
    except Exception as exc:
        return await page(request, error=f"Plan failed: {exc}", status=400, chosen=brokers)
    return await page(
        request,
        plan=format_reassignment_json(proposed),
        current=format_reassignment_json(current),
        chosen=brokers,
    )


async def decommission(request: Request) -> Response:
    ctx = console_of(request)
    form = await ctx.form(request)
    try:
        broker_id = int(form.get("broker", ""))
        proposed = await ctx.run_io(ops.decommission_plan, ctx.cluster_admin(request), broker_id)
    except Exception as exc:
        return await page(request, error=f"Decommission plan failed: {exc}", status=400)
    if not proposed:
        return await page(request, result=f"Broker {broker_id} holds no replica.")
    current = await ctx.run_io(
        cluster.current_assignment,
        ctx.cluster_admin(request),
        dict.fromkeys(t for t, _ in proposed),
    )
    return await page(
        request,
        plan=format_reassignment_json(proposed),
        current=format_reassignment_json({tp: current[tp] for tp in proposed}),
    )


async def execute(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    text = form.get("plan", "")
    try:
        proposed = _parse_plan(text)
        throttle = int(form.get("throttle", "-1") or -1)
    except ValueError as exc:
        return await page(request, plan=text, error=str(exc), status=400)
    detail = {"plan": json.loads(text), "throttle": throttle}
    try:
        lines = await ctx.run_io(ops.execute, ctx.cluster_admin(request), proposed, throttle)
    except Exception as exc:
        await ctx.audit(request, "reassign.execute", detail, result=str(exc))
        return await page(request, plan=text, error=str(exc), status=400)
    audited = await ctx.audit(request, "reassign.execute", detail)
    if not audited:
        lines.append("(the audit record could not be written)")
    return await page(request, plan=text, result="\n".join(lines))


async def cancel(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    await ctx.form(request)
    try:
        lines = await ctx.run_io(ops.cancel, ctx.cluster_admin(request))
    except Exception as exc:
        await ctx.audit(request, "reassign.cancel", {}, result=str(exc))
        return await page(request, error=str(exc), status=400)
    await ctx.audit(request, "reassign.cancel", {"result": lines})
    return await page(request, result="\n".join(lines))


async def clear_throttles(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    text = form.get("plan", "")
    try:
        tps = list(_parse_plan(text)) if text.strip() else []
    except ValueError as exc:
        return await page(request, plan=text, error=str(exc), status=400)
    lines = await ctx.run_io(ops.clear_throttles, ctx.cluster_admin(request), tps)
    await ctx.audit(request, "reassign.clear-throttles", {"partitions": len(tps)})
    return await page(request, plan=text, result="\n".join(lines))


async def elect(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    try:
        partitions = ops.parse_partitions(form.get("partitions", ""))
    except ValueError as exc:
        return await page(request, error=str(exc), status=400)
    detail = {"partitions": partitions or "all"}
    when = form.get("at", "").strip()
    if when:
        try:
            at = datetime.fromisoformat(when)
        except ValueError:
            return await page(request, error=f"Not a date-time: {when!r}", status=400)
        if at.tzinfo is None:
            at = at.replace(tzinfo=timezone.utc)
        admin = ctx.cluster_admin(request)  # the scheduling user's client, kept for the run

        async def run() -> str:
            return await ctx.run_io(ops.elect_preferred, admin, partitions)

        election = ctx.view_state(ops.ElectionScheduler).schedule(
            at.timestamp(), partitions, ctx.user(request), run
        )
        await ctx.audit(request, "election.schedule", {**detail, "at": _utc(election.at)})
        return await page(
            request,
            result=f"Preferred leader election #{election.id} scheduled at {_utc(election.at)}.",
        )
    try:
        text = await ctx.run_io(ops.elect_preferred, ctx.cluster_admin(request), partitions)
    except Exception as exc:
        await ctx.audit(request, "election.preferred", detail, result=str(exc))
        return await page(request, error=str(exc), status=400)
    await ctx.audit(request, "election.preferred", detail)
    return await page(request, result=text)


async def cancel_election(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    await ctx.form(request)
    election_id = int(request.path_params["id"])
    if not ctx.view_state(ops.ElectionScheduler).cancel(election_id):
        raise HTTPException(404, f"No scheduled election #{election_id} to cancel.")
    await ctx.audit(request, "election.cancel", {"id": election_id})
    return await page(request, result=f"Scheduled election #{election_id} cancelled.")


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/operations", operations),
        Route("/operations/progress", progress),
        Route("/operations/plan", plan, methods=["POST"]),
        Route("/operations/decommission", decommission, methods=["POST"]),
        Route("/operations/execute", execute, methods=["POST"]),
        Route("/operations/cancel", cancel, methods=["POST"]),
        Route("/operations/clear-throttles", clear_throttles, methods=["POST"]),
        Route("/operations/elect", elect, methods=["POST"]),
        Route("/operations/elections/{id:int}/cancel", cancel_election, methods=["POST"]),
    ]
