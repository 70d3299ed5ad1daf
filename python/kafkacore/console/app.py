"""The console's Starlette application: :data:`VIEWS` and :func:`create_app`.

Each module named in :data:`VIEWS` exposes ``NAV: tuple[str, str] | None`` (its title and
path in the nav bar, in the order of ``VIEWS``) and ``routes(ctx) -> list[BaseRoute]``: its
module-level endpoints, which find the context with
:func:`~kafkacore.console.context.console_of`. A
view module that fails to import is an error (the console does not start), never skipped.

Around the views: ``/static`` (CSS, and the vendored htmx and uPlot when
``scripts/console-assets.sh`` has fetched them), ``/login`` and ``/logout``
(:mod:`kafkacore.console.auth`), ``/`` (redirects to the first view), and error pages for
HTTP errors (403 read-only or CSRF, 404) and for errors the cluster answered.
"""

from __future__ import annotations

import importlib
import logging
from importlib import resources

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kafkacore.console import auth
from kafkacore.console.context import ConsoleContext

__all__ = ["VIEWS", "create_app"]

logger = logging.getLogger("kafkacore.console")

VIEWS: tuple[str, ...] = (
    "kafkacore.console.views.cluster",
    "kafkacore.console.views.topics",
    "kafkacore.console.views.messages",
    "kafkacore.console.views.storage",
    "kafkacore.console.views.security",
    "kafkacore.console.views.groups",
    "kafkacore.console.views.operations",
    "kafkacore.console.views.balancer",
    "kafkacore.console.views.charts",
)
"""The view modules, in nav-bar order."""


def create_app(ctx: ConsoleContext) -> Starlette:
    routes: list[BaseRoute] = []
    nav: list[tuple[str, str]] = []
    for name in VIEWS:
        module = importlib.import_module(name)
        if module.NAV is not None:
            nav.append(module.NAV)
        routes.extend(module.routes(ctx))
    ctx.nav = nav
    first = nav[0][1] if nav else "/login"

    async def index(_request: Request) -> Response:
        return RedirectResponse(first, status_code=303)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code in (204, 304):
            return Response(status_code=exc.status_code)
        return ctx.render(
            request,
            "error.html",
            status_code=exc.status_code,
            status=exc.status_code,
            message=exc.detail,
        )

    async def server_error(request: Request, exc: Exception) -> Response:
        logger.exception("console request %s failed", request.url.path, exc_info=exc)
        return ctx.render(request, "error.html", status_code=500, status=500, message=f"{exc}")

    static = resources.files("kafkacore.console").joinpath("static")
    app = Starlette(
        routes=[
            Route("/", index),
            Mount("/static", StaticFiles(directory=str(static)), name="static"),
            *auth.routes(ctx),
            *routes,
        ],
        middleware=[
            Middleware(auth.SessionMiddleware, sessions=ctx.sessions),
            Middleware(auth.AuthMiddleware, ctx=ctx),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.state.console = ctx  # the views' endpoints find it with console_of(request)
    return app
