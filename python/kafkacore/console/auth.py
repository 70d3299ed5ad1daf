"""Sessions, login and CSRF for the console.

Every browser gets a session cookie (``kafkacore_console``): a random session id and CSRF
token, signed with HMAC-SHA256 under a key made at start-up (a restart logs everyone out).
The password of a logged-in user never goes into the cookie: it stays in the process
(:class:`Sessions`), keyed by the session id, for the user's admin client.

Login (when :attr:`ConsoleContext.login` is set: the cluster's listener asks for SASL) takes
the cluster's own credentials: they are checked by authenticating an admin client with
them (SASL PLAIN or SCRAM), and that client then acts for the user, so the cluster's ACLs
decide what the console may do. A new session id is issued at login (no fixation); logout
forgets the session and the user's client.

Every mutating form carries the session's CSRF token (``{{ csrf_field() }}``; htmx sends it
as ``X-CSRF-Token``, set on ``<body hx-headers>`` by base.html); :meth:`ConsoleContext.form`
checks it with a constant-time comparison.

Thread-safety: :class:`Sessions` is locked; the middleware and routes run on the loop.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext

__all__ = [
    "COOKIE",
    "AuthMiddleware",
    "LoginSession",
    "SessionMiddleware",
    "Sessions",
    "check_credentials",
    "routes",
]

logger = logging.getLogger("kafkacore.console")

COOKIE = "kafkacore_console"
SESSION_MAX_AGE_S = 12 * 3600
_SCOPE_KEY = "kafkacore.console.session"
_OPEN_PATHS = ("/login", "/static/")


@dataclass(frozen=True)
class SessionData:
    sid: str
    csrf: str


@dataclass(frozen=True)
class LoginSession:
    user: str
    password: str
    since: float


class Sessions:
    """Signed session cookies and the logged-in sessions (server side)."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._logins: dict[str, LoginSession] = {}
        self._lock = threading.Lock()

    # -- the cookie ------------------------------------------------------------------------

    def new(self) -> SessionData:
        return SessionData(secrets.token_urlsafe(24), secrets.token_urlsafe(24))

    def encode(self, data: SessionData) -> str:
        body = base64.urlsafe_b64encode(
            json.dumps({"sid": data.sid, "csrf": data.csrf, "t": int(time.time())}).encode()
        ).decode()
        return f"{body}.{self._sign(body)}"

    def decode(self, cookie: str | None) -> SessionData | None:
        if not cookie or "." not in cookie:
            return None
        body, _, signature = cookie.rpartition(".")
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            value = json.loads(base64.urlsafe_b64decode(body.encode()))
            sid, csrf, issued = str(value["sid"]), str(value["csrf"]), int(value["t"])
        except (ValueError, KeyError, TypeError):
            return None
        if time.time() - issued > SESSION_MAX_AGE_S:
            return None
        return SessionData(sid, csrf)

    def _sign(self, body: str) -> str:
        return hmac.new(self._secret, body.encode(), hashlib.sha256).hexdigest()

    def set_cookie(self, response: Response, data: SessionData, secure: bool) -> None:
        response.set_cookie(
            COOKIE,
            self.encode(data),
            max_age=SESSION_MAX_AGE_S,
            httponly=True,
            samesite="strict",
            secure=secure,
            path="/",
        )

    # -- per request -----------------------------------------------------------------------

    @staticmethod
    def data(conn: HTTPConnection) -> SessionData:
        data = conn.scope.get(_SCOPE_KEY)
        assert isinstance(data, SessionData), "SessionMiddleware is not installed"
        return data

    def csrf_token(self, conn: HTTPConnection) -> str:
        return self.data(conn).csrf

    def check_csrf(self, conn: HTTPConnection, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self.data(conn).csrf.encode())

    def login_of(self, conn: HTTPConnection) -> LoginSession | None:
        sid = self.data(conn).sid
        with self._lock:
            return self._logins.get(sid)

    def log_in(self, data: SessionData, user: str, password: str) -> None:
        with self._lock:
            self._logins[data.sid] = LoginSession(user, password, time.time())

    def log_out(self, conn: HTTPConnection) -> LoginSession | None:
        with self._lock:
            return self._logins.pop(self.data(conn).sid, None)

    def users(self) -> set[str]:
        with self._lock:
            return {s.user for s in self._logins.values()}


class SessionMiddleware:
    """Puts the request's :class:`SessionData` in its scope; a browser without a valid
    cookie gets a new session (and its cookie on the response)."""

    def __init__(self, app: ASGIApp, sessions: Sessions) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        data = self.sessions.decode(conn.cookies.get(COOKIE))
        fresh = data is None
        if data is None:
            data = self.sessions.new()
        scope[_SCOPE_KEY] = data
        if not fresh:
            await self.app(scope, receive, send)
            return
        secure = conn.url.scheme == "https"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"set-cookie" for k, _ in headers):
                    carrier = Response()
                    self.sessions.set_cookie(carrier, data, secure)
                    headers += [
                        (k, v) for k, v in carrier.raw_headers if k.lower() == b"set-cookie"
                    ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


class AuthMiddleware:
    """With a login: every page but ``/login`` and ``/static/`` needs a logged-in session
    (a redirect to the login page, ``HX-Redirect`` for htmx requests)."""

    def __init__(self, app: ASGIApp, ctx: ConsoleContext) -> None:
        self.app = app
        self.ctx = ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.ctx.login is None:
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        conn = HTTPConnection(scope)
        if path.startswith(_OPEN_PATHS) or self.ctx.sessions.login_of(conn) is not None:
            await self.app(scope, receive, send)
            return
        target = "/login?next=" + quote(path + ("?" + conn.url.query if conn.url.query else ""))
        response: Response
        if conn.headers.get("HX-Request"):
            response = Response(status_code=401, headers={"HX-Redirect": target})
        else:
            response = RedirectResponse(target, status_code=303)
        await response(scope, receive, send)


class LoginFailed(Exception):
    pass


def check_credentials(ctx: ConsoleContext, user: str, password: str, timeout_s: float = 10) -> None:
    """Authenticate an admin client to the cluster as ``user`` (blocking); raises
    :class:`LoginFailed` with the cluster's reason when SASL fails."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    failure: list[str] = []
    done = threading.Event()

    def on_error(err: Any) -> None:
        if err.code() == KafkaError._AUTHENTICATION:
            failure.append(str(err.str()))
            done.set()

    config: dict[str, Any] = {**ctx.base_config, **ctx.credentials_config(user, password)}
    config["error_cb"] = on_error
    client = AdminClient(config)
    future = client.describe_cluster(request_timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while not future.done() and not done.is_set() and time.monotonic() < deadline:
        client.poll(0.05)
    if failure:
        raise LoginFailed(failure[0])
    try:
        future.result(timeout=max(0.0, deadline - time.monotonic()))
    except KafkaException as exc:
        raise LoginFailed(str(exc.args[0].str() if exc.args else exc)) from None
    except Exception as exc:
        raise LoginFailed(f"no answer from the cluster: {exc}") from None


def _safe_next(target: str | None) -> str:
    """Only local paths (no scheme, no host) are followed after login."""
    if not target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


def routes(ctx: ConsoleContext) -> list[BaseRoute]:
    async def login_page(request: Request) -> Response:
        if ctx.login is None:
            return RedirectResponse("/", status_code=303)
        return ctx.render(
            request, "login.html", error=None, next=_safe_next(request.query_params.get("next"))
        )

    async def login_post(request: Request) -> Response:
        if ctx.login is None:
            return RedirectResponse("/", status_code=303)
        form = await ctx.form(request)
        user = form.get("username", "").strip()
        password = form.get("password", "")
        target = _safe_next(form.get("next"))
        try:
            if not user:
                raise LoginFailed("Give a user name.")
            await ctx.run_io(check_credentials, ctx, user, password)
        except LoginFailed as exc:
            logger.info("console login of %r refused: %s", user, exc)
            return ctx.render(request, "login.html", status_code=401, error=str(exc), next=target)
        data = ctx.sessions.new()
        ctx.sessions.log_in(data, user, password)
        response = RedirectResponse(target, status_code=303)
        ctx.sessions.set_cookie(response, data, request.url.scheme == "https")
        logger.info("console login of %r", user)
        return response

    async def logout(request: Request) -> Response:
        await ctx.form(request)
        ended = ctx.sessions.log_out(request)
        if ended is not None and ended.user not in ctx.sessions.users():
            ctx.forget_user(ended.user)
        response = RedirectResponse("/login" if ctx.login is not None else "/", status_code=303)
        ctx.sessions.set_cookie(response, ctx.sessions.new(), request.url.scheme == "https")
        return response

    return [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login_post, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]
