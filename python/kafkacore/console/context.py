"""``ConsoleContext``: what every view of the console is given (built once per app).

* ``render(request, template, **values)``: a Jinja2 page (``templates/``); requests made
  by htmx (``HX-Request`` header, not boosted) get the ``content`` block only.
* ``admin(request)``: a confluent-kafka ``AdminClient`` for the cluster, authenticated as
  the logged-in user when there is a login (one client per user, cached), so the
  cluster's ACLs decide what the console may do for that user. Its calls block: run them
  with ``await ctx.run_io(fn, *args)``, on the console's own small thread pool (never the
  broker's I/O threads, so that the console cannot starve the broker).
  ``cluster_admin(request)`` wraps it for the admin library (:mod:`kafkacore.admin`).
* ``client_config(request)``: librdkafka settings for a Producer/Consumer as that user;
  ``bootstrap``: the ``host:port`` the clients use.
* ``broker``: the :class:`~kafkacore.console.broker_view.BrokerView` of the broker the
  console was started beside, else ``None`` (views that need it show
  :data:`BROKER_ONLY_NOTICE`); ``metrics``: the broker's counters, else ``None``.
* ``console_of(request)``: the context of the app serving a request (views are
  module-level endpoints); ``view_state(factory)``: a view's own state (caches, timers).
* ``read_only`` and ``require_write(request)``: every mutating route calls it first (a
  403 page when the console is read-only); ``await form(request)`` parses a POST and
  checks its CSRF token; ``await audit(request, action, detail, result=...)`` writes the
  change to the audit topic (:mod:`kafkacore.console.audit`).

Thread-safety: ``render``, ``require_write``, ``form`` and ``audit`` run on the event
loop; ``admin`` and ``client_config`` may be called from any thread (the client cache is
locked).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import jinja2
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

    from kafkacore.admin import Admin
    from kafkacore.console.audit import AuditLog
    from kafkacore.console.auth import Sessions
    from kafkacore.console.broker_view import BrokerView
    from kafkacore.net import ClientSecurity
    from kafkacore.protocol import ApiKey

__all__ = ["BROKER_ONLY_NOTICE", "ConsoleContext", "Kept", "Login", "console_of", "kafka_admin"]

T = TypeVar("T")

BROKER_ONLY_NOTICE = (
    "This view reads the broker's own files and counters: it is there when the console "
    "runs inside a kafkacore broker (console.listeners), not in `kafkacore console`."
)

CONSOLE_IO_THREADS = 4
"""Threads of the console's own pool for blocking client calls and scans."""


K = TypeVar("K")


class Kept(Generic[K, T]):
    """Values kept per key (a user, say) and served at once: the first :meth:`get` of a
    key waits for ``fetch()``; once a value is ``ttl_s`` old, the next :meth:`get` still
    returns it and starts one fetch in the background. :meth:`invalidate` (after a change)
    drops the value and any fetch already under way, so the next :meth:`get` waits for a
    fresh one. Event loop only."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._values: dict[K, tuple[float, T]] = {}
        self._tasks: dict[K, asyncio.Task[T]] = {}
        self._generation: dict[K, int] = {}

    async def get(self, key: K, fetch: Callable[[], Awaitable[T]]) -> tuple[T, float]:
        """The value and when it was fetched (``time.time()``)."""
        kept = self._values.get(key)
        task = self._tasks.get(key)
        if task is None and (kept is None or time.time() - kept[0] >= self.ttl_s):
            task = asyncio.get_running_loop().create_task(self._fetch(key, fetch))
            # a background fetch that fails is retried at the next get; mark it seen
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._tasks[key] = task
        if kept is not None:
            return kept[1], kept[0]
        assert task is not None
        value = await asyncio.shield(task)
        return value, self._values.get(key, (time.time(), value))[0]

    async def _fetch(self, key: K, fetch: Callable[[], Awaitable[T]]) -> T:
        started = self._generation.get(key, 0)
        try:
            value = await fetch()
            if self._generation.get(key, 0) == started:  # not asked before a change
                self._values[key] = (time.time(), value)
            return value
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                self._tasks.pop(key, None)

    def invalidate(self, key: K) -> None:
        self._values.pop(key, None)
        self._tasks.pop(key, None)
        self._generation[key] = self._generation.get(key, 0) + 1


@dataclass(frozen=True)
class Login:
    """How users log in: SASL ``mechanism`` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) over
    ``security_protocol`` (SASL_PLAINTEXT or SASL_SSL)."""

    mechanism: str
    security_protocol: str


class ConsoleContext:
    """The console's shared state; see the module docstring.

    ``base_config``: librdkafka settings every client gets (``bootstrap.servers`` and the
    ``--command-config`` security settings); ``login``: set when users must log in with
    the cluster's SASL credentials; ``cluster_label``: shown in the header."""

    def __init__(
        self,
        *,
        bootstrap: str,
        base_config: Mapping[str, str] | None = None,
        login: Login | None = None,
        broker: BrokerView | None = None,
        read_only: bool = False,
        audit_topic: str = "__console_audit",
        cluster_label: str = "",
        io_threads: int = CONSOLE_IO_THREADS,
        secret: bytes | None = None,
        command_security: ClientSecurity | None = None,
        audit_config: Mapping[str, str] | None = None,
    ) -> None:
        from kafkacore.console.audit import AuditLog
        from kafkacore.console.auth import Sessions

        self.bootstrap = bootstrap
        self.base_config: dict[str, str] = {"bootstrap.servers": bootstrap, **(base_config or {})}
        self.base_config["bootstrap.servers"] = bootstrap
        self.login = login
        #: the ``--command-config`` security (TLS, SASL) of raw-protocol connections
        self.command_security = command_security
        self.broker = broker
        self.read_only = read_only
        self.audit_topic = audit_topic
        self.cluster_label = cluster_label or bootstrap
        self.sessions: Sessions = Sessions(secret or os.urandom(32))
        self.audit_log: AuditLog = AuditLog(
            self, audit_topic, dict(audit_config) if audit_config is not None else None
        )
        #: (title, path) of each view in the nav bar, set by :func:`create_app`
        self.nav: list[tuple[str, str]] = []
        self.vendor_present = _vendor_present()
        self._executor = ThreadPoolExecutor(io_threads, thread_name_prefix="console-io")
        self._admins: dict[str | None, AdminClient] = {}
        self._lock = threading.Lock()
        self._view_states: dict[Callable[[], Any], Any] = {}
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("kafkacore.console", "templates"),
            autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.globals.update(_FILTERS_AND_GLOBALS)
        self.templates.filters.update(_FILTERS_AND_GLOBALS)

    # -- where things run ------------------------------------------------------------------

    @property
    def metrics(self) -> Any:
        """The broker's counters (``server.metrics.BrokerMetrics``) in the broker, else None."""
        return self.broker.metrics if self.broker is not None else None

    def view_state(self, factory: Callable[[], T]) -> T:
        """A view's state in this console (caches, scheduled work): ``factory()``, made on
        first use and kept (one per factory). Event loop only."""
        state = self._view_states.get(factory)
        if state is None:
            state = self._view_states[factory] = factory()
        return cast(T, state)

    @property
    def in_broker(self) -> bool:
        return self.broker is not None

    async def run_io(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the console's thread pool (blocking client calls,
        file scans); the request's task waits without blocking the loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        """Stop the thread pool (running calls finish) and drop the clients."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._admins.clear()
        self.audit_log.close()

    # -- clients ---------------------------------------------------------------------------

    def user(self, request: Request) -> str | None:
        """The logged-in user's name (None without a login)."""
        session = self.sessions.login_of(request)
        return session.user if session is not None else None

    def client_config(self, request: Request | None) -> dict[str, str]:
        """librdkafka settings for a client acting as the request's user."""
        config = dict(self.base_config)
        if self.login is not None:
            session = self.sessions.login_of(request) if request is not None else None
            if session is None:
                raise HTTPException(401, "Log in first.")
            config.update(self.credentials_config(session.user, session.password))
        return config

    def credentials_config(self, user: str, password: str) -> dict[str, str]:
        assert self.login is not None
        return {
            "security.protocol": self.login.security_protocol,
            "sasl.mechanism": self.login.mechanism,
            "sasl.username": user,
            "sasl.password": password,
        }

    def raw_security(self, request: Request | None) -> ClientSecurity | None:
        """The security of a raw-protocol connection (``NodeClient``) as the request's
        user: for the requests the admin client does not make (DescribeLogDirs)."""
        from kafkacore.net import ClientSecurity

        security = self.command_security
        if self.login is None:
            return security
        config = self.client_config(request)
        context = security.ssl_context if security is not None else None
        return ClientSecurity(
            context, config["sasl.mechanism"], config["sasl.username"], config["sasl.password"]
        )

    async def raw_request(
        self,
        request: Request | None,
        api: str,
        version: int,
        body: Any,
        *,
        node: tuple[str, int] | None = None,
        timeout_s: float = 10,
    ) -> Any:
        """One request the admin client does not make (DescribeLogDirs, DescribeClientQuotas,
        DescribeConfigs with ``configuration_keys``), on a connection of its own to ``node``
        (default: the first bootstrap server), secured as the request's user; the response."""
        from kafkacore.protocol import ApiKey

        if node is None:
            host, _, port = self.bootstrap.split(",")[0].strip().rpartition(":")
            node = (host.strip("[]"), int(port))
        return await _send_raw(
            node, ApiKey[api], version, body, self.raw_security(request), timeout_s
        )

    def cluster_admin(self, request: Request | None) -> Admin:
        """The admin library's client (:class:`kafkacore.admin.Admin`) for the request's
        user: its admin client, and the raw requests (the controller's reassignment and
        election APIs) sent by the broker's async client on this event loop, logged in
        as the user. Call it on the loop; use it on the console's threads (``run_io``)."""
        from kafkacore.admin import Admin
        from kafkacore.protocol import APIS_BY_NAME

        loop = asyncio.get_running_loop()
        security = self.raw_security(request)

        def send(host: str, port: int, api: str, version: int, body: Any) -> Any:
            with contextlib.suppress(RuntimeError):
                if asyncio.get_running_loop() is loop:  # waiting here would block it for good
                    raise RuntimeError("admin operations run on the console's threads (run_io)")
            key = APIS_BY_NAME[api].key
            call = _send_raw((host, port), key, version, body, security, 30)
            return asyncio.run_coroutine_threadsafe(call, loop).result()

        return Admin(self.admin(request), send)

    def admin(self, request: Request | None) -> AdminClient:
        """The cluster's admin client for the request's user (cached per user)."""
        from confluent_kafka.admin import AdminClient

        user = self.user(request) if request is not None and self.login is not None else None
        with self._lock:
            client = self._admins.get(user)
            if client is None:
                client = AdminClient(dict(self.client_config(request)))
                self._admins[user] = client
            return client

    def forget_user(self, user: str) -> None:
        """Drop ``user``'s cached admin client (at logout)."""
        with self._lock:
            self._admins.pop(user, None)

    # -- pages -----------------------------------------------------------------------------

    def render(
        self, request: Request, template: str, status_code: int = 200, **values: Any
    ) -> HTMLResponse:
        """``template`` rendered with ``values`` plus the page's common values (user,
        nav, CSRF token, read-only flag); an htmx request gets the ``content`` block only."""
        partial = bool(request.headers.get("HX-Request")) and not request.headers.get("HX-Boosted")
        context: dict[str, Any] = {
            "request": request,
            "ctx": self,
            "nav": self.nav,
            "user": self.user(request) if self.login is not None else None,
            "csrf_token": self._csrf_token(request),
            "read_only": self.read_only,
            "in_broker": self.in_broker,
            "vendor_present": self.vendor_present,
            "broker_only_notice": BROKER_ONLY_NOTICE,
            "partial": partial,
            "path": request.url.path,
        }
        context.update(values)
        html = self.templates.get_template(template).render(context)
        return HTMLResponse(html, status_code=status_code)

    def _csrf_token(self, request: Request) -> str:
        try:
            return self.sessions.csrf_token(request)
        except AssertionError:  # an error page before the session middleware ran
            return ""

    def require_write(self, request: Request) -> None:
        """Refuse (403) a change when the console is read-only."""
        if self.read_only:
            raise HTTPException(403, "The console is read-only (console.read.only=true).")

    async def form(self, request: Request) -> dict[str, str]:
        """A POSTed form whose CSRF token (hidden field ``csrf_token`` or header
        ``X-CSRF-Token``) matches the session's; 403 otherwise. Repeated fields keep
        their last value; use ``request.form()`` after this for lists."""
        form = await request.form()
        token = form.get("csrf_token") or request.headers.get("X-CSRF-Token")
        if not isinstance(token, str) or not self.sessions.check_csrf(request, token):
            raise HTTPException(403, "Missing or wrong CSRF token: reload the page.")
        return {k: v for k, v in form.items() if isinstance(v, str)}

    async def audit(
        self, request: Request, action: str, detail: Mapping[str, Any], result: str = "ok"
    ) -> bool:
        """Write ``{"time", "user", "action", "detail", "result"}`` to the audit topic;
        False (logged as an error) when the record could not be written."""
        return await self.audit_log.write(request, action, dict(detail), result)


async def _send_raw(
    node: tuple[str, int],
    api: ApiKey,
    version: int,
    body: Any,
    security: ClientSecurity | None,
    timeout_s: float,
) -> Any:
    """``body`` as ``api`` v``version`` to ``node`` on a connection of its own."""
    from kafkacore.net import NodeClient

    client = NodeClient(
        node[0], node[1], client_id="kafkacore-console", request_timeout_s=timeout_s,
        security=security,
    )  # fmt: skip
    try:
        return await client.send(api, version, body)
    finally:
        await client.close()


def console_of(request: Request) -> ConsoleContext:
    """The :class:`ConsoleContext` of the console app serving ``request`` (the views are
    module-level endpoints; :func:`kafkacore.console.app.create_app` keeps the context in
    the app's state)."""
    ctx: ConsoleContext = request.app.state.console
    return ctx


def kafka_admin() -> Any:
    """``confluent_kafka.admin`` (partly typed, names re-exported untyped) as ``Any``:
    ``kafka_admin().NewTopic``, ``.ConfigResource``, ``.AclBinding`` ..."""
    return importlib.import_module("confluent_kafka.admin")


def _vendor_present() -> bool:
    static = resources.files("kafkacore.console").joinpath("static")
    return static.joinpath("vendor").joinpath("htmx.min.js").is_file()


def _human_bytes(n: int | float | None) -> str:
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def _thousands(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


_FILTERS_AND_GLOBALS: dict[str, Any] = {"human_bytes": _human_bytes, "thousands": _thousands}
