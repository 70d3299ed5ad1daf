"""The Balancer view (``/balancer``): the controller's partition balancer (kafkacore's
extension) - its settings and state, the moves in flight with their progress (refreshed
every 2 s while partitions move), the skew now and after the plan, the planned moves; and
pause / resume and the decommission list (POST, CSRF-checked, refused when read-only,
audited as ``balancer.pause``, ``balancer.resume``, ``balancer.decommission``).

Everything is read and changed through :mod:`kafkacore.admin.balancer`, the functions
``kafkacore balancer`` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kafkacore.admin import balancer as ops
from kafkacore.console.context import console_of

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = ["NAV", "routes"]

NAV: tuple[str, str] | None = ("Balancer", "/balancer")

_SKEW_ROWS = (
    ("replicas", "replicas"),
    ("leaders", "preferred leaders"),
    ("disk_bytes", "bytes per broker"),
    ("log_dir_bytes", "bytes per log dir"),
)


async def page(
    request: Request, *, result: str = "", error: str = "", status: int = 200
) -> Response:
    ctx = console_of(request)
    found: ops.BalancerStatus | None = None
    try:
        found = await ctx.run_io(ops.balancer_status, ctx.cluster_admin(request))
    except Exception as exc:
        unavailable = f"The balancer's state could not be read: {exc}"
        error = f"{error}\n{unavailable}" if error else unavailable
    return ctx.render(
        request,
        "balancer.html",
        status_code=status,
        status=found,
        skew_rows=_SKEW_ROWS,
        result=result,
        error=error,
    )


async def balancer(request: Request) -> Response:
    return await page(request)


async def moves(request: Request) -> Response:
    ctx = console_of(request)
    found = await ctx.run_io(ops.balancer_status, ctx.cluster_admin(request))
    # 286: htmx swaps the answer and stops polling (nothing moves any more)
    return ctx.render(
        request,
        "balancer_moves.html",
        status_code=200 if found.in_flight else 286,
        status=found,
    )


async def pause(request: Request) -> Response:
    return await _set_paused(request, True)


async def resume(request: Request) -> Response:
    return await _set_paused(request, False)


async def _set_paused(request: Request, paused: bool) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    await ctx.form(request)
    action = "balancer.pause" if paused else "balancer.resume"
    try:
        await ctx.run_io(ops.set_paused, ctx.cluster_admin(request), paused)
    except Exception as exc:
        await ctx.audit(request, action, {}, result=str(exc))
        return await page(request, error=str(exc), status=400)
    await ctx.audit(request, action, {})
    return await page(request, result=f"The balancer is {'paused' if paused else 'resumed'}.")


async def decommission(request: Request) -> Response:
    ctx = console_of(request)
    ctx.require_write(request)
    form = await ctx.form(request)
    text = form.get("brokers", "")
    try:
        brokers = sorted({int(b) for b in text.replace(" ", "").split(",") if b})
    except ValueError:
        return await page(request, error=f"Not a list of broker ids: {text!r}", status=400)
    try:
        await ctx.run_io(ops.set_decommissioned, ctx.cluster_admin(request), brokers)
    except Exception as exc:
        await ctx.audit(request, "balancer.decommission", {"brokers": brokers}, result=str(exc))
        return await page(request, error=str(exc), status=400)
    await ctx.audit(request, "balancer.decommission", {"brokers": brokers})
    listed = ", ".join(map(str, brokers)) or "none"
    return await page(request, result=f"Decommissioned brokers: {listed}.")


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/balancer", balancer),
        Route("/balancer/moves", moves),
        Route("/balancer/pause", pause, methods=["POST"]),
        Route("/balancer/resume", resume, methods=["POST"]),
        Route("/balancer/decommission", decommission, methods=["POST"]),
    ]
