"""Serving the console: uvicorn on the caller's event loop.

* Beside a broker (:func:`start_beside`, called by the broker's assembly, ``kafkacore
  server-start``, once the broker's listeners are bound, when ``console.listeners`` is
  set): a :class:`ConsoleServer` task on the broker's own loop (uvicorn's
  ``Server.serve()`` without its signal handlers, which are the process's, and without
  lifespan or logging set-up), seeing the broker through a
  :class:`~kafkacore.console.broker_view.BrokerView`. The console's clients talk to the
  broker through its own listener: a SASL_PLAINTEXT one when there is one (users then log
  in with the broker's SASL credentials), else a PLAINTEXT one.
* As a separate process (:func:`run_standalone`, ``kafkacore console``): the same server
  on a fresh loop until SIGINT/SIGTERM.

Sockets are bound here before uvicorn starts, so a port in use fails the start at once
and port 0 works (:attr:`ConsoleServer.urls` has the bound ports).

Thread-safety: event loop thread only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from kafkacore.config.broker_defs import parse_console_listener

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from kafkacore.console.broker_view import BrokerView
    from kafkacore.console.context import ConsoleContext

__all__ = ["ConsoleServer", "broker_context", "run_standalone", "start_beside"]

logger = logging.getLogger("kafkacore.console")

_MECHANISM_PREFERENCE = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.setblocking(False)
    return sock


class ConsoleServer:
    """The console's HTTP server on ``listeners`` (``http://host:port`` entries)."""

    def __init__(
        self,
        app: Starlette,
        listeners: Sequence[str],
        name: str = "console.listeners",
        ctx: ConsoleContext | None = None,
    ) -> None:
        self.app = app
        #: the app's context, closed by :meth:`stop`
        self.ctx = ctx
        self._addresses = [parse_console_listener(name, entry) for entry in listeners]
        self._sockets: list[socket.socket] = []
        self._task: asyncio.Task[None] | None = None
        self._server: object | None = None
        self.urls: list[str] = []

    async def start(self) -> None:
        import uvicorn

        class _EmbeddedServer(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the host's signals stay its own
                yield

        for host, port in self._addresses:
            sock = _bind(host, port)
            self._sockets.append(sock)
            bound_host, bound_port = sock.getsockname()[:2]
            shown = f"[{bound_host}]" if ":" in bound_host else bound_host
            self.urls.append(f"http://{shown}:{bound_port}/")
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
            http="h11",
            ws="none",
        )
        server = _EmbeddedServer(config)
        self._server = server
        self._task = asyncio.get_running_loop().create_task(
            server.serve(sockets=self._sockets), name="console-http"
        )
        while not server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the console's HTTP server stopped while starting")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        import uvicorn

        server, task = self._server, self._task
        if isinstance(server, uvicorn.Server) and task is not None:
            server.should_exit = True
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except asyncio.TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for sock in self._sockets:
            sock.close()
        if self.ctx is not None:
            self.ctx.close()


def broker_context(broker: BrokerView) -> ConsoleContext:
    """The context of a console beside ``broker``: its clients use one of the broker's
    own listeners (SASL_PLAINTEXT with a login, else PLAINTEXT)."""
    from kafkacore.console.context import ConsoleContext, Login
    from kafkacore.server.sasl import sasl_listener_settings

    config = broker.config
    bound = broker.bound_ports
    endpoints = config.listener_endpoints()
    chosen = None
    for protocol in ("SASL_PLAINTEXT", "PLAINTEXT"):
        chosen = next((e for e in endpoints if e.security_protocol == protocol), None)
        if chosen is not None:
            break
    if chosen is None:
        raise RuntimeError(
            "the console needs a PLAINTEXT or SASL_PLAINTEXT listener to reach the broker "
            f"(listeners: {', '.join(e.connection_string for e in endpoints)})"
        )
    host = chosen.host if chosen.host not in (None, "", "0.0.0.0", "::") else "127.0.0.1"
    port = bound.get(chosen.listener_name, chosen.port)
    login = None
    if chosen.security_protocol == "SASL_PLAINTEXT":
        mechanisms = sasl_listener_settings(config, chosen.listener_name).mechanisms
        mechanism = next(m for m in (*_MECHANISM_PREFERENCE, *mechanisms) if m in mechanisms)
        login = Login(mechanism, "SASL_PLAINTEXT")
    return ConsoleContext(
        bootstrap=f"{host}:{port}",
        login=login,
        audit_config=_broker_identity(broker),
        broker=broker,
        read_only=config.console_read_only,
        audit_topic=config.console_audit_topic,
        cluster_label=f"kafkacore broker {broker.node_id}",
    )


def _broker_identity(broker: BrokerView) -> dict[str, str] | None:
    """librdkafka settings of a client acting as the broker itself: its inter-broker
    listener and credentials (the audit trail's writer). None when that listener uses TLS
    (the console's clients then write as each user)."""
    from kafkacore.net import inter_broker_security

    config = broker.config
    listener, protocol = config.inter_broker_listener()
    if protocol not in ("PLAINTEXT", "SASL_PLAINTEXT"):
        return None
    endpoint = next(e for e in config.listener_endpoints() if e.listener_name == listener)
    host = endpoint.host if endpoint.host not in (None, "", "0.0.0.0", "::") else "127.0.0.1"
    port = broker.bound_ports.get(listener, endpoint.port)
    out = {"bootstrap.servers": f"{host}:{port}", "security.protocol": protocol}
    security = inter_broker_security(config)
    if security is not None and security.sasl_mechanism is not None:
        out |= {
            "sasl.mechanism": security.sasl_mechanism,
            "sasl.username": security.username,
            "sasl.password": security.password,
        }
    return out


async def start_beside(broker: BrokerView) -> ConsoleServer:
    """Start the console beside ``broker`` on its ``console.listeners`` (on this loop, the
    broker's); :meth:`ConsoleServer.stop` stops it."""
    try:
        from kafkacore.console.app import create_app
    except ImportError as exc:
        raise RuntimeError(
            f"console.listeners is set but the console's dependencies are missing ({exc}): "
            "pip install 'kafkacore[console]'"
        ) from exc
    ctx = broker_context(broker)
    server = ConsoleServer(create_app(ctx), broker.config.console_listeners or [], ctx=ctx)
    try:
        await server.start()
    except BaseException:
        await server.stop()
        raise
    return server


def run_standalone(ctx: ConsoleContext, listeners: Sequence[str]) -> int:
    """Serve the console for ``ctx`` on ``listeners`` until SIGINT/SIGTERM."""
    from kafkacore.console.app import create_app

    async def main() -> int:
        server = ConsoleServer(create_app(ctx), listeners, name="--listen", ctx=ctx)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await server.start()
        mode = " (read-only)" if ctx.read_only else ""
        logger.info("Console for %s at %s%s", ctx.bootstrap, " ".join(server.urls), mode)
        try:
            await stop.wait()
        finally:
            await server.stop()
        return 0

    return asyncio.run(main())
