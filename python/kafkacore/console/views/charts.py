"""The Charts view (``/charts``) and ``/metrics``: the broker's own counters
(:class:`~kafkacore.server.metrics.BrokerMetrics`), no Prometheus needed.

* ``/charts``: uPlot charts of the broker's bytes in/out (replication apart), records
  in and requests per second (1 s points), a topic's rates (10 s points) and the request
  latency percentiles p50/p99/p99.9 (10 s slots, all APIs or one), over the last 5, 15
  or 60 minutes; updated live by server-sent events (``/charts/stream``, one event
  every :data:`STREAM_INTERVAL_S`, the whole window as JSON: a few hundred points per
  series). ``/charts/data`` is the same JSON once.
* ``/metrics``: the counters in Prometheus's text exposition format (the name mapping
  is in :meth:`BrokerMetrics.prometheus_text`). With a console login it needs a session
  like every page.

Both need the broker's counters: in ``kafkacore console`` (a separate process) the page
says so and ``/metrics`` answers 404.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from kafkacore.console.context import console_of

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = ["NAV", "STREAM_INTERVAL_S", "chart_data", "routes"]

NAV: tuple[str, str] | None = ("Charts", "/charts")

STREAM_INTERVAL_S = 2.0
WINDOWS = (300, 900, 3600)
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _window(request: Request) -> int:
    try:
        value = int(request.query_params.get("window", "900"))
    except ValueError:
        value = 900
    return value if value in WINDOWS else 900


def chart_data(metrics: Any, window: int, topic: str | None, api: str | None) -> dict[str, Any]:
    """The charts' series over the last ``window`` seconds: ``broker`` (1 s points),
    ``topic`` (10 s points, or None) and ``latency`` (10 s slots, ms)."""
    broker = metrics.broker_series(window)
    first = broker["time"][0] if broker["time"] else 0

    def clip(series: dict[str, list[Any]]) -> dict[str, list[Any]]:
        keep = [i for i, t in enumerate(series["time"]) if t >= first]
        return {k: [v[i] for i in keep] for k, v in series.items()}

    topic_series = clip(metrics.topic_series(topic)) if topic else None
    latency = clip(metrics.latency_series(api=api or None))
    return {"broker": broker, "topic": topic_series, "latency": latency, "window": window}


async def charts(request: Request) -> Response:
    ctx = console_of(request)
    metrics = ctx.metrics
    return ctx.render(
        request,
        "charts.html",
        available=metrics is not None,
        topics=metrics.topic_names() if metrics is not None else [],
        apis=metrics.api_names() if metrics is not None else [],
        topic=request.query_params.get("topic", ""),
        api=request.query_params.get("api", ""),
        window=_window(request),
        windows=WINDOWS,
    )


def require_metrics(request: Request) -> Any:
    metrics = console_of(request).metrics
    if metrics is None:
        raise HTTPException(404, "The broker's counters exist only inside the broker.")
    return metrics


async def data(request: Request) -> Response:
    metrics = require_metrics(request)
    q = request.query_params
    return JSONResponse(chart_data(metrics, _window(request), q.get("topic"), q.get("api")))


async def stream(request: Request) -> Response:
    metrics = require_metrics(request)
    q = request.query_params
    window, topic, api = _window(request), q.get("topic"), q.get("api")

    async def events() -> AsyncIterator[str]:
        while not await request.is_disconnected():
            payload = json.dumps(chart_data(metrics, window, topic, api))
            yield f"event: charts\ndata: {payload}\n\n"
            await asyncio.sleep(STREAM_INTERVAL_S)

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def prometheus(request: Request) -> Response:
    metrics = console_of(request).metrics
    if metrics is None:
        return PlainTextResponse(
            "# The broker's counters exist only inside the broker (console.listeners).\n",
            status_code=404,
        )
    return Response(metrics.prometheus_text(), media_type=PROMETHEUS_CONTENT_TYPE)


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    return [
        Route("/charts", charts),
        Route("/charts/data", data),
        Route("/charts/stream", stream),
        Route("/metrics", prometheus),
    ]
